"""`make coverage`: branch coverage of the money paths; writes its record, benchmarks/results/coverage.json.

    .venv/bin/python benchmarks/coverage_money.py [--no-write]

Host: the host's money modules (ledger, reconcile, service, link, awards, progressive awards) under
coverage.py with branch coverage, while their tests run, the services and CLIs those tests start
as subprocesses included (coverage's subprocess patch).
Pool: the linked pool's modules (host_tools/tablectl/pool/) while tests/pool runs, on the real
PostgreSQL those tests start, the pool service and the table services they start included.
Firmware: firmware/table/ under coverage.py while the MicroPython test modules
(tests/firmware/mp_test_*.py) run on CPython: MicroPython's unix build has no sys.settrace, and
the tests use only the subset both interpreters run, so the same tests drive the same code.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

from _common import ROOT, machine_note, table, write_section

OUT = os.path.join(ROOT, "build", "coverage")
HOST_FILES = (["host_tools/tablectl/%s.py" % m for m in ("ledger", "reconcile", "service", "link", "awards")]
              + ["host_tools/tablegames/progressive.py",
                 # the host's half of the vocabulary: it lives in firmware/table/ but the board never
                 # imports it (docs/ARCHITECTURE.md), so the host's tests are the ones that run it
                 "firmware/table/schema.py"])
HOST_TESTS = ["tests/host/test_books.py", "tests/host/test_unit_awards.py", "tests/host/test_progressive_awards.py", "tests/host/test_report.py",
              "tests/host/test_unit_ledger.py", "tests/host/test_ledger_api.py", "tests/host/test_unit_service.py", "tests/host/test_unit_link.py",
              "tests/host/test_unit_reconcile.py", "tests/host/test_unit_client.py",
              "tests/protocol/test_link_versions.py", "tests/protocol/test_link_host.py", "tests/e2e/test_two_tables.py",
              "tests/e2e/test_service_kill.py", "tests/e2e/test_progressive_options.py", "tests/e2e/test_cli_e2e.py", "tests/protocol/test_schema.py",
              # a linked table's award path (awards.pay_linked_jackpot) against a real pool's books
              "tests/pool/test_linked_awards.py"]
# The linked pool: its rules, its books on PostgreSQL (the tests start their own server), its
# service and the table's side of it (tests/pool/test_floor_e2e.py: three virtual tables).
# adminkey: the Ed25519 key that signs the pool's parameter changes (tests/pool/test_admin_keys.py).
POOL_FILES = ["host_tools/tablectl/pool/%s.py" % m for m in ("engine", "store", "server", "client", "adminkey")]
POOL_TESTS = ["tests/pool/test_unit_engine.py", "tests/pool/test_store.py", "tests/pool/test_store_refusals.py",
              "tests/pool/test_store_edges.py", "tests/pool/test_books_bite.py", "tests/pool/test_books_signed.py",
              "tests/pool/test_two_writers.py", "tests/pool/test_transfer.py", "tests/pool/test_admin_keys.py",
              "tests/pool/test_cli.py", "tests/pool/test_floor_e2e.py", "tests/pool/test_store_schema.py",
              "tests/pool/test_linked_awards.py", "tests/pool/test_health.py", "tests/pool/test_web.py", "tests/pool/test_pool_link.py",
              # the documented failover on three servers (a primary, a standby, the monitor)
              "tests/pool/test_failover.py"]
FW_GLOB = "firmware/table/*.py"
FW_OMIT = ["firmware/table/schema.py"]  # measured with the host (above)

# Lines and branches no test can reach, each with its reason: (file, text of the line, reason).
# The line is found by its text (so the list survives edits above it); a branch is named by the
# line it leaves from. Everything not run and not listed here is in the "left" column: to be
# tested or explained. A listed line that is run after all is reported, so the list cannot go stale.
REASONS = [
    ("firmware/table/app.py", "except (ImportError, AttributeError, OSError):",
     "os.urandom is there on every interpreter the firmware runs on (unix MicroPython, CPython, the rp2 and "
     "esp32 builds); the fallback is for a port without it"),
    ("firmware/table/app.py", 'if "storage" not in self.faults:',
     "a flash write fails only on a journal that is not frozen, and a storage fault always comes with a "
     "frozen journal (or none), so the fault is never there yet; the check keeps it listed once if that changes"),
    ("firmware/table/commands.py", 'if "storage" in app.faults:',
     "a frozen journal always has its storage fault (set with it at boot or by record()), and clear never "
     "clears it: the repair always finds it"),
    ("firmware/table/rawlog.py", "if end is None:",
     "_all_ff's one caller (_slot_erased) always names the end"),
    ("firmware/table/rawjournal.py", "if self._group is None:",
     "the app opens a group only at depth 1 and end_group always closes it (its finally), so none is open "
     "when begin_group is called"),
    ("firmware/table/rawjournal.py", "self._write_checkpoint()\n\n    def checkpoint(self, state):",
     "RawJournal.wants_compaction() is always False (the raw log needs no compaction), so app.step never "
     "calls compact()"),
    ("firmware/table/protocol.py", "except Exception as exc:  # noqa: anything odd in a frame",
     "no input found that makes decode_frame raise anything but FrameError (mp_test_protocol_fuzz feeds "
     "random, cut and bit-flipped frames); the guard keeps an odd frame from stopping the board's loop"),
    ("host_tools/tablectl/ledger.py", "if step_from >= version:",
     "one upgrade step exists (schema 1 to 2) and an upgrade always starts at 1: no step is ever skipped "
     "until schema 3"),
    ("host_tools/tablectl/service.py", "except Exception:\n                    pass\n            time.sleep(0.2)",
     "pyserial's close does not raise for a port whose device is gone (the lost-port test pulls it); the guard "
     "keeps the reopen loop going if some driver's close does"),
    ("host_tools/tablectl/service.py", 'return {"ok": True, "board": s.board_id, "hit": hits[0], "hits": hits',
     "a hit the pool accepts needs the pool service and its PostgreSQL: tests/pool/test_floor_e2e.py runs it, "
     "outside this measurement (every refusal before the pool is asked is tested here)"),
    ("host_tools/tablectl/awards.py", "if field in award:",
     "every award event that names its round carries amount, meter_cents, reset and hand, and paid_in_ledger "
     "finds only rows that name the round"),
    ("host_tools/tablectl/ledger.py", "if not board:",
     "its one caller passes the board its events are filed under, named by the board's hello (never empty); "
     "`tablectl audit resync` refuses an empty --board before it is called"),
    ("host_tools/tablectl/service.py", 'return {"ok": True, "board": board, "result": linked}',
     "a linked round the pool declares needs the pool service and its PostgreSQL: tests/pool/test_linked_awards.py "
     "runs the award path against one, outside this measurement"),
    ('host_tools/tablectl/pool/client.py', 'except OSError:\n                pass\n        self.sock = None',
     'closing a socket or a TLS socket does not raise in practice; the guard keeps close() quiet if one does'),
    ('host_tools/tablectl/pool/client.py', 'except OSError:\n                    pass\n            try:\n                self.report_health(s, closing=True)',
     'PoolClient keeps sock only while it is open (close() sets it to None), and settimeout on an open socket does not fail'),
    ('host_tools/tablectl/pool/client.py', 'if reply.get("ok"):\n                    st["lost"] = True',
     "the firmware's cmd_linked takes lost: true in every state; only older firmware, or a command the board cannot check, would refuse it, and the table service seals every command with the key it holds"),
    ('host_tools/tablectl/pool/store.py', 'elif kind.startswith("admin_"):',
     'the query above selects only admin_key, pool_created, transfer_out and admin_* rows, so the else after it is never reached'),
    ('host_tools/tablectl/pool/server.py', 'if pool is None:\n            raise TablectlError("board %s is not a member of any pool" % board)',
     'hello runs _active first, which refuses a board that is no member, and members are never deleted'),
    ('host_tools/tablectl/pool/server.py', 'if family == socket.AF_UNIX and not same_user(conn):',
     "the socket is bound 0600: another user's connect fails on the file mode before accept; only root reaches the check, and the tests run as root"),
    ("host_tools/tablectl/pool/store.py", "except Exception:  # noqa: a connection already broken by a server that "
     "went away", "psycopg's close does not raise, on a connection the server has dropped either "
     "(test_store_refusals terminates the store's backend, then closes it twice); the guard keeps close() quiet "
     "if a driver's does"),
]



def _rc(path, include, data, omit=()):
    with open(path, "w") as f:
        f.write("[run]\nbranch = True\nparallel = True\npatch = subprocess\ndata_file = %s\nrelative_files = True\n"
                "include =\n%s\n" % (data, "\n".join("    " + os.path.join(ROOT, i) for i in include)))
        if omit:
            f.write("omit =\n%s\n" % "\n".join("    " + os.path.join(ROOT, o) for o in omit))


def _coverage(*args, rc, cwd=ROOT, env=None, check=True):
    cmd = [sys.executable, "-m", "coverage"] + list(args) + ["--rcfile", rc]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SystemExit("coverage %s failed:\n%s\n%s" % (args[0], proc.stdout[-3000:], proc.stderr[-3000:]))
    return proc


def measure(name, include, runs, omit=()):
    """runs: [(argv after `coverage run`, cwd, extra env)]. Returns coverage's JSON report."""
    os.makedirs(OUT, exist_ok=True)
    data = os.path.join(OUT, name + ".data")
    for old in glob.glob(data + "*"):
        os.remove(old)
    rc = os.path.join(OUT, name + ".rc")
    _rc(rc, include, data, omit)
    failures = []
    skipped = []
    for argv, cwd, extra in runs:
        env = dict(os.environ, **extra)
        proc = subprocess.run([sys.executable, "-m", "coverage", "run", "--rcfile", rc] + argv, cwd=cwd, env=env,
                              capture_output=True, text=True)
        # the firmware runner prints "SKIP name: reason" for a test whose subject is MicroPython's own
        skipped += ["%s: %s" % (argv[0], l[5:]) for l in proc.stdout.splitlines() if l.startswith("SKIP ")]
        if proc.returncode != 0:
            # the firmware runner prints "FAIL name ..." per failed test; pytest "FAILED ..."
            failed = [l.split()[1] if l.startswith("FAIL ") else l for l in proc.stdout.splitlines()
                      if l.startswith(("FAIL ", "FAILED "))]
            failures.append("%s: %s" % (" ".join(argv), ", ".join(failed) or "exit %d" % proc.returncode))
    _coverage("combine", rc=rc)
    js = os.path.join(OUT, name + ".json")
    _coverage("json", "-o", js, rc=rc)
    with open(js) as f:
        return json.load(f), failures, skipped


def reason_lines():
    """{file: {line: reason}} from REASONS, each line found by its text; raises if a text is not found."""
    out = {}
    for rel, text, reason in REASONS:
        with open(os.path.join(ROOT, rel)) as f:
            source = f.read()
        at = source.find(text)
        if at < 0:
            raise SystemExit("coverage_money.py REASONS: %s has no line %r (edited? update the list)" % (rel, text))
        while at >= 0:
            out.setdefault(rel, {})[source.count("\n", 0, at) + 1] = reason
            at = source.find(text, at + 1)
    return out


def _rel(path):
    return os.path.relpath(path if os.path.isabs(path) else os.path.join(ROOT, path), ROOT)


def not_run(f):
    """(lines, {from line: [to, ...]}) not run: the missing lines, and the branches not taken from
    lines that did run (a line never run takes none of its branches; it is listed once, as a line)."""
    missing = set(f["missing_lines"])
    arcs = {}
    for a, b in f.get("missing_branches", []):
        if a not in missing:
            arcs.setdefault(a, []).append(b)
    return missing, arcs


def _items(lines, arcs, keep):
    """Text listing the lines (as ranges) and branches ("a->b", "a->exit") for which keep(line)."""
    text = _ranges([n for n in lines if keep(n)])
    branches = ", ".join("%d->%s" % (a, "exit" if b < 0 else b) for a in sorted(arcs) if keep(a) for b in sorted(arcs[a]))
    return ", ".join(t for t in (text, branches) if t) or "-"


def rows_of(report, reasons):
    rows = []
    used = set()
    for path, f in sorted(report["files"].items()):
        s = f["summary"]
        rel = _rel(path)
        branches, partial = s["num_branches"], s["num_partial_branches"]
        covered_b = s["covered_branches"]
        lines, arcs = not_run(f)
        given = reasons.get(rel, {})
        used.update((rel, n) for n in list(lines) + list(arcs) if n in given)
        mine = set(given)
        for start in given:
            # A reason for a line covers the block it starts when not run, or, when it ran, the
            # blocks its branches not taken lead to (the lines after each not run either).
            for n in [start] + [b for b in arcs.get(start, []) if b > 0 and start not in lines]:
                if n not in lines:
                    continue
                mine.add(n)
                while n + 1 in lines and n + 1 not in given:
                    n += 1
                    mine.add(n)
        rows.append((rel, s["num_statements"], s["missing_lines"], branches, covered_b, partial,
                     "%.1f %%" % (100.0 * covered_b / branches) if branches else "-",
                     "%.1f %%" % s["percent_covered"],
                     _items(lines, arcs, lambda n: n not in mine), _items(lines, arcs, lambda n: n in mine)))
    return rows, used


def _ranges(lines):
    out = []
    for n in sorted(lines):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    text = ", ".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in out)
    return text if len(text) < 160 else text[:157] + "..."


def totals(report):
    t = report["totals"]
    return t["covered_branches"], t["num_branches"]


def git_rev():
    """The commit measured, +changes when the working tree had uncommitted edits."""
    rev = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return rev.stdout.strip() + ("+changes" if dirty else "")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    t0 = time.monotonic()
    rev = git_rev()
    load_before = os.getloadavg()[0]
    # test_monitor_live_leaves_on_ctrl_c sends SIGINT 1.5 s after start: under coverage on a busy
    # machine the monitor may not have started by then. It covers no money module.
    host, host_fail, host_skip = measure("host", HOST_FILES, [(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-k",
                                                      "not test_monitor_live_leaves_on_ctrl_c"] + HOST_TESTS,
                                                     ROOT, {})])
    pool, pool_fail, pool_skip = measure("pool", POOL_FILES, [(["-m", "pytest", "-q", "-p", "no:cacheprovider"]
                                                               + POOL_TESTS, ROOT, {})])
    fw_dir = os.path.join(ROOT, "tests", "firmware")
    fw_env = {"PYTHONPATH": os.path.join(ROOT, "firmware") + os.pathsep + fw_dir}
    fw_runs = [([os.path.basename(p)], fw_dir, fw_env) for p in sorted(glob.glob(os.path.join(fw_dir, "mp_test_*.py")))]
    fw, fw_fail, fw_skip = measure("firmware", [FW_GLOB], fw_runs, FW_OMIT)
    skipped = host_skip + pool_skip + fw_skip
    headers = ("file", "statements", "missed", "branches", "branches taken", "partial", "branch coverage",
               "line+branch", "not run: left to test or explain", "not run: reason below")
    hb, hn = totals(host)
    pb, pn = totals(pool)
    fb, fn = totals(fw)
    reasons = reason_lines()
    host_rows, used = rows_of(host, reasons)
    pool_rows, used_pool = rows_of(pool, reasons)
    fw_rows, used_fw = rows_of(fw, reasons)
    used |= used_pool | used_fw
    text = table(host_rows, headers)
    text_pool = table(pool_rows, headers)
    text2 = table(fw_rows, headers)
    print(text)
    print(text_pool)
    print(text2)
    fails = host_fail + pool_fail + fw_fail
    reason_text = "\n".join("- `%s` line %d: %s%s" % (rel, n, why, "" if (rel, n) in used else
                                                       " (**this line is run now: remove its reason**)")
                            for rel in sorted(reasons) for n, why in sorted(reasons[rel].items()))
    body = ("Command: `make coverage` (`.venv/bin/python benchmarks/coverage_money.py`, coverage.py 7.17.3 with branch "
            "coverage), commit %s, ended %s; %s; load average %.1f at the start, %.1f at the end; %.0f s.\n\n"
            % (rev, time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), machine_note(), load_before,
               os.getloadavg()[0], time.monotonic() - t0)
            + "Host money modules, while %s run (the services and CLIs they start included):\n\n" % ", ".join(
                "`%s`" % os.path.basename(t) for t in HOST_TESTS)
            + text + "\n\nBranches taken, host: %d of %d (%.1f %%).\n\n" % (hb, hn, 100.0 * hb / hn if hn else 0)
            + "The linked pool (host_tools/tablectl/pool/), while %s run (each run starts its own PostgreSQL; the "
              "`tablectl pool serve`, `tablectl serve --pool` and virtual boards they start included):\n\n" % ", ".join(
                "`%s`" % os.path.basename(t) for t in POOL_TESTS)
            + text_pool + "\n\nBranches taken, pool: %d of %d (%.1f %%).\n\n" % (pb, pn, 100.0 * pb / pn if pn else 0)
            + "firmware/table/ (but schema.py, measured above: the board never imports it), while every "
              "tests/firmware/mp_test_*.py runs on CPython (MicroPython's unix build has no sys.settrace; the tests "
              "are written in the subset both interpreters run and pass on both):\n\n"
            + text2 + "\n\nBranches taken, firmware/table/: %d of %d (%.1f %%). Goal: 100 %% of the branches on the "
              "money paths, or a reason per line. 'not run' lists lines (ranges) and branches not taken (a->b: "
              "from line a to line b, or out of the function); a branch is listed only when its line ran.\n\n"
              % (fb, fn, 100.0 * fb / fn if fn else 0)
            + "Lines and branches no test can reach, with the reason (benchmarks/coverage_money.py, REASONS; a "
              "branch by the line it leaves from):\n\n" + reason_text + "\n")
    if skipped:
        body += ("\nSkipped on CPython (their subject is MicroPython's own; they run and pass on MicroPython in "
                 "tests/firmware/test_on_micropython.py):\n\n" + "\n".join("- " + x for x in skipped) + "\n")
    if fails:
        body += ("\nTests that failed during the measurement (what they would have run is missing from the "
                 "figures above):\n\n"
                 + "\n".join("- " + f for f in fails) + "\n")
        print("\n".join(fails), file=sys.stderr)
    if not a.no_write:
        write_section("coverage", "Branch coverage of the money paths", body)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
