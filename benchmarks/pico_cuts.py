"""Power cuts on the emulated Pico with the real service recording (bench_pico.py section `cuts`).

The real firmware on MicroPython v1.24.1's Pico build in rp2040py, its littlefs on the emulated
QSPI flash, `tablectl serve` (a subprocess) on the board's USB CDC pty with its SQLite ledger. Each
cut is a power cut at a random emulated instant (nanosecond resolution: any instruction) inside a
window where the board is working on money:

  - coin-in: a token on each of the seven seats (widths and starts spread); the cut falls
    0..COIN_WINDOW_MS of emulated time after the first edge is due, i.e. while pulses are decoded,
    coins journaled (raw log records or littlefs appends: page programs, sector erases) or
    checkpoints written;
  - an award: the table locked, the jackpot key turned, `tablectl jackpot` through the service;
    the cut falls 0..AWARD_WINDOW_MS after the award command's frame reaches the board's USB.

The rig's torn_flash is on: a cut while the flash is busy leaves that erase or page program half
done (bits changed at random), as a real chip would, not whole as the emulator applies it. A cut at
a random instant finds the flash busy about once in a hundred coin-in cuts (17 page programs of
0.4 ms in the window), so every aim_every-th coin-in cut (3 by default) is aimed instead: inside the busy time of
one of the batch's first seven page programs (a coin record is one), at a random point of it.

After every boot, through the service and from the ledger (checks, each a violation if broken):
  - the board reports no storage fault;
  - the meter is never lower than before the cut (coin-in) and per-seat token counters never
    lower than before, never above the tokens fed to that seat;
  - every coin the board counted is in the ledger exactly once (coin rows per seat = the board's
    counters), the ledger's sequence numbers are 1..n with no gap and none used twice;
  - an award is paid wholly once or not at all: one award row for the round and seat after the
    service's own resend of the same command id, the board's paid bit set, and a second
    `jackpot` (the same command id again) pays nothing (the board answers with the first reply);
  - the books reconcile with the board's meters (opening + contributions - awards = meter).
At the end the hash chain of the ledger is verified too.

Every cut is appended, as it is checked, to a record (benchmarks/records/pico_cuts.jsonl, one JSON
line a cut, flushed and synced): the emulated Pico takes minutes a cut here, so 200 cuts take
several runs, and a run cut off (a session's end, a machine's restart) keeps the cuts it checked.
Each line carries the digest of the code under test (the firmware and the service): the report
counts cuts on the current code and lists the others apart, never adding them up.
"""
import hashlib
import json
import os
import random
import sys
import threading
import time

COIN_WINDOW_MS = 700.0   # first edge due .. a little past the seventh token's journal record
AWARD_WINDOW_MS = 120.0  # award frame at the USB .. a little past the award's reply
ROYAL = "As Ks Qs Js Ts"
BOARD_HEARTBEAT_MS = 200
KEY_HOLD_MS = 200   # a dealer's press; the debouncer needs 30 ms of it seen across main-loop turns
KEY_WAIT_MS = 600   # of the board's time for the pins to show the key acted on
SERVICE_HEARTBEAT_S = 30.0


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RECORD = os.path.join(ROOT, "benchmarks", "records", "pico_cuts.jsonl")
UNDER_TEST = ("firmware", os.path.join("host_tools", "tablectl"))


def code_digest(root=ROOT):
    """sha256 over the code a cut tests, the firmware and the service, path and bytes of each
    source file in a fixed order (caches and compiled files left out): a cut recorded under
    another digest was run on other code."""
    h = hashlib.sha256()
    for top in UNDER_TEST:
        found = []
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = [x for x in dirs if x != "__pycache__" and not x.startswith(".")]
            found += [os.path.join(d, f) for f in files if not f.endswith((".pyc", ".mpy"))]
        for path in sorted(found):
            rel = os.path.relpath(path, root).replace(os.sep, "/")
            with open(path, "rb") as f:
                body = f.read()
            h.update(b"%s\0%d\0" % (rel.encode(), len(body)))
            h.update(body)
    return h.hexdigest()[:16]


def append_record(path, line):
    """One JSON line, flushed and synced before the next cut starts: a record a power failure
    of this machine cannot leave half a cut of (a torn last line is skipped by read_record)."""
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "a") as f:
        f.write(json.dumps(line, sort_keys=True) + "\n")
        f.flush()
        os.fsync(f.fileno())


def read_record(path=RECORD):
    """The record's lines; a line that is not whole JSON (torn by a crash) is reported, not used."""
    lines, torn = [], 0
    if os.path.exists(path):
        with open(path) as f:
            for text in f:
                try:
                    line = json.loads(text)
                except ValueError:
                    torn += 1
                    continue
                if isinstance(line, dict) and "run" in line:
                    lines.append(line)
                else:
                    torn += 1
    return lines, torn


def summarize_record(path=RECORD, digest=None):
    """Every recorded cut on the code of `digest` (the current code when None), and what the
    record holds for other code: the figures of the cuts section."""
    digest = digest or code_digest()
    lines, torn = read_record(path)
    mine = [x for x in lines if x.get("code") == digest]
    cuts = [x for x in mine if "kind" in x]
    ends = [x for x in mine if x.get("end")]
    runs = []
    for x in cuts + ends:
        if x["run"] not in runs:
            runs.append(x["run"])
    other = {}
    for x in lines:
        if x.get("code") != digest:
            o = other.setdefault(x.get("code"), {"cuts": 0, "violations": 0, "runs": set()})
            o["cuts"] += 1 if "kind" in x else 0
            o["violations"] += len(x.get("violations") or [])
            o["runs"].add(x["run"])
    violations = [v for x in mine for v in (x.get("violations") or [])]
    figures = tally(cuts)
    figures.update({"digest": digest, "violations": violations, "runs": runs,
                    "runs_ended": [x["run"] for x in ends if not x.get("broken")],
                    "runs_broken": [x["run"] for x in ends if x.get("broken")],
                    "other": {k: {"cuts": v["cuts"], "violations": v["violations"], "runs": len(v["runs"])}
                              for k, v in other.items()},
                    "torn_lines": torn})
    return figures


def cut_line(c):
    """A cut as the record keeps it: the campaign's dict with where the cut landed flattened
    into flags (the rig's full `where` and the per-phase times stay in the run's log)."""
    where = c.get("where") or {}
    line = {"flash_busy": bool(where.get("flash_busy")), "busy_op": where.get("busy_op"),
            "torn": bool(where.get("torn_bytes")), "mid_command": bool(where.get("mid_flash_command"))}
    line.update({k: v for k, v in c.items() if k not in ("where", "phase_s")})
    return line


def tally(cuts):
    """The figures a table of cuts shows, from cuts as the record keeps them (cut_line): the
    same counting for one run and for the whole record."""
    coin = [x for x in cuts if x["kind"] == "coin"]
    award = [x for x in cuts if x["kind"] == "award"]
    hist = {}
    for x in coin:
        hist[x["credited"]] = hist.get(x["credited"], 0) + 1
    return {"cuts": len(cuts), "coin_cuts": len(coin), "award_cuts": len(award),
            "credited_hist": dict(sorted(hist.items())),
            "award_recorded_before_cut": sum(1 for x in award if x.get("recorded_before_cut")),
            "flash_busy": sum(1 for x in cuts if x.get("flash_busy")),
            "busy_erase": sum(1 for x in cuts if x.get("busy_op") == "erase"),
            "busy_program": sum(1 for x in cuts if x.get("busy_op") == "program"),
            "torn": sum(1 for x in cuts if x.get("torn")),
            "mid_command": sum(1 for x in cuts if x.get("mid_command")),
            "aimed": sum(1 for x in cuts if x.get("aimed")),
            "aimed_busy": sum(1 for x in cuts if x.get("aimed") and x.get("flash_busy")),
            "wall_per_cut_s": sum(x.get("wall_s", 0) for x in cuts) / max(1, len(cuts))}


class Args:
    """What tablectl.client.Target reads from a command line."""
    port = None
    board = None

    def __init__(self, db):
        self.db = db


class Campaign:
    def __init__(self, image, work, seed, log=print, pico_cls=None, record_path=None, aim_every=3):
        from tabledev import procs
        self.record_path = record_path
        # every aim_every-th coin-in cut is aimed inside a page program's busy time (0: none)
        self.aim_every = aim_every
        self.seed = seed
        self.digest = code_digest()
        self.run_id = "%s seed %d" % (time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime()), seed)
        self.procs = procs
        self.image = image
        self.work = work
        self.rng = random.Random(seed)
        self.log = log
        self.state = os.path.join(work, "cuts")
        self.db = os.path.join(work, "cuts.db")
        # The service waits this long for the emulated board (a real board's 5 s is far too short
        # for a core 50-150x slower than a Pico on a shared machine), resending every tenth of it:
        # often enough that a command sent just before the service learns the rebooted board's
        # session goes again soon, seldom enough not to bury the board in copies.
        os.environ.setdefault("TABLECTL_LINK_TIMEOUT_S", "300")
        self.pico = pico_cls(self.state, image)
        self.rig = self.pico.rig
        self.rig.fast_flash = True
        self.rig.torn_flash = True
        self.rig.torn_rng = random.Random(seed + 1)
        self.bench = self.pico.bench
        self.serve = None
        self.fed = [0] * 7
        self.violations = []
        self.cuts = []  # one dict per cut
        self.board = None
        self.last = None  # the board's meters after the last check (what the next cut starts from)
        self.phase_s = {}  # wall seconds per phase, summed over the run
        self.broken = False

    # ------------------------------------------------------------------ plumbing
    def target(self):
        from tablectl.client import Target
        return Target(Args(self.db))

    def ask(self, name, args=None, timeout_s=600):
        """A command through the service, retried while the board is booting or reconnecting."""
        return self.retried(name, lambda t: t.command(name, args or {}), timeout_s)

    def retried(self, what, call, timeout_s=600):
        """call(target) through the service, again while the board is booting or reconnecting (a
        jackpot sent again carries the same command id: the board answers a repeat, pays once)."""
        from tablectl.errors import TablectlError
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                with self.target() as t:
                    return call(t)
            except (TablectlError, OSError) as exc:
                if time.monotonic() > deadline:
                    raise RuntimeError("%s through the service: %s" % (what, exc))
                time.sleep(0.5)

    def start(self):
        self.pico.ready()
        self.serve = self.start_serve()
        status = self.ask("status")
        self.board = status["board"]
        self.journal = status.get("journal")
        # The service switch on: provision a table key (awards are signed), and in SERVICE a
        # board heartbeat every BOARD_HEARTBEAT_MS (its range allows 100 ms): after each cut the
        # service learns the rebooted board's session from its first heartbeat, 1 s of board
        # time (a minute of wall time here) sooner than with the default.
        self.bench.switch(True)
        with self.target() as t:
            t.provision()
        self.ask("service", {"enter": True})
        self.ask("config_set", {"changes": {"heartbeat_ms": BOARD_HEARTBEAT_MS}})
        self.ask("service", {"enter": False})
        self.bench.switch(False)
        self.accepting()
        self.settled()
        self.last = self.ask("meters")

    def start_serve(self):
        """`tablectl serve` on the board's pty, with its heartbeat every SERVICE_HEARTBEAT_S of wall
        time instead of 1 s: the emulated core runs some 50 times slower than a Pico, and one
        authenticated frame a wall second is one every 20 ms of the board's time, which it must
        read byte by byte and check (a fifth of its CPU, on top of a main loop that uses 73 %)."""
        import subprocess
        log = open(os.path.join(self.work, "cuts-serve.log"), "w")
        code = ("import sys; import tablectl.service as s; s.HEARTBEAT_S = float(sys.argv[1]); "
                "from tablectl.cli import main; sys.exit(main(sys.argv[2:]))")
        proc = subprocess.Popen([sys.executable, "-c", code, str(SERVICE_HEARTBEAT_S), "serve", "--port",
                                 self.pico.port, "--db", self.db], stdout=subprocess.PIPE, stderr=log,
                                text=True, start_new_session=True)
        line = proc.stdout.readline()
        if not line.startswith("serving"):
            self.procs.stop(proc)
            raise RuntimeError("tablectl serve did not start: %r" % line)
        return proc

    def close(self):
        self.procs.stop(self.serve, timeout_s=20)
        self.pico.close()

    def settled(self, timeout_s=900):
        """Until the service has every event the board journaled (nothing unacknowledged)."""
        deadline = time.monotonic() + timeout_s
        while True:
            status = self.ask("status")
            if status["unacked"] == 0:
                return status
            if time.monotonic() > deadline:
                raise RuntimeError("events still unacknowledged after %d s: %r" % (timeout_s, status["unacked"]))
            time.sleep(0.5)

    def wait_boot(self, boots, timeout_s=1800, label="boot"):
        """Until the controller draws its display after boot number `boots`: the meter, or what
        it shows first instead (an award cut shows PAY and the amount again for award_show_ms, 30 s
        of the board's time, 20 minutes of wall time here; a fault its code, which the checks then
        report). A controller that falls to its REPL instead (main.py gave up) is a violation,
        reported with what it printed; the power is cut again to see whether it comes back."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            out = self.rig.outputs()
            if out["boots"] >= boots and out["mode"] == "app" and (
                    out["meter"] is not None or (out["display"] or "").strip()):
                return out
            if out["boots"] >= boots and out["mode"] == "repl":
                text = "".join(ch if ch.isprintable() or ch == "\n" else "." for ch in out["console_tail"] or "")
                self.violations.append("%s: the controller fell to its REPL at boot %d; its console: %s"
                                       % (label, out["boots"], text[-600:].replace("\n", " | ")))
                self.log(self.violations[-1])
                boots = out["boots"] + 1
                self.rig.power_cut()
                continue
            time.sleep(0.2)
        raise RuntimeError("the emulated Pico did not show its meter within %d s of boot %d" % (timeout_s, boots))

    def board_seen(self):
        """What the board shows at its pins and console, and the service's last log lines: for a
        campaign that cannot go on."""
        try:
            out = self.rig.outputs()
            seen = {k: out.get(k) for k in ("mode", "boots", "meter", "now_ms", "inhibit")}
            seen["console"] = "".join(ch if ch.isprintable() else "." for ch in (out.get("console_tail") or ""))[-300:]
        except Exception as exc:  # noqa: the emulator itself may be what failed
            seen = {"rig": repr(exc)}
        try:
            with open(os.path.join(self.work, "cuts-serve.log")) as f:
                seen["serve_log"] = f.read()[-600:].replace("\n", " | ")
        except OSError:
            pass
        return json.dumps(seen)

    def ledger_rows(self):
        from tablectl.ledger import Ledger
        led = Ledger(self.db, readonly=True)
        try:
            return list(led.events(self.board))
        finally:
            led.close()

    # ------------------------------------------------------------------ the checks
    def check(self, label, before, fed, award=None):
        """After a boot: the board's own readings through the service against the ledger."""
        from tablectl.ledger import Ledger
        from tablectl.reconcile import reconcile
        v = []
        t = time.monotonic()
        status = self.settled()
        t = self.timed("checks: until every event is acknowledged", t)
        meters = self.ask("meters")
        t = self.timed("checks: meters", t)
        if "storage" in status["faults"]:
            v.append("storage fault: %s" % status.get("fault_detail"))
        if award is None and meters["meter"] < before["meter"]:
            v.append("meter %d lower than before the cut (%d)" % (meters["meter"], before["meter"]))
        for seat in range(7):
            got = meters["seat_coins"][seat]
            if got < before["seat_coins"][seat]:
                v.append("seat %d counter %d lower than before the cut (%d)" % (seat + 1, got, before["seat_coins"][seat]))
            if got > fed[seat]:
                v.append("seat %d counted %d tokens of %d fed" % (seat + 1, got, fed[seat]))
        rows = self.ledger_rows()
        seqs = [r["seq"] for r in rows if r["seq"] is not None]
        if seqs != list(range(1, status["next_seq"])):
            dup = len(seqs) - len(set(seqs))
            v.append("ledger sequence is not 1..%d once each (%d rows, %d repeated)" % (status["next_seq"] - 1, len(seqs), dup))
        ledger_coins = [0] * 7
        for r in rows:
            if r["kind"] == "coin":
                ledger_coins[r["body"]["seat"]] += 1
        if ledger_coins != meters["seat_coins"][:7]:
            v.append("coins in the ledger per seat %s, counted by the board %s" % (ledger_coins, meters["seat_coins"][:7]))
        awards = {}
        for r in rows:
            if r["kind"] == "award":
                key = (r["body"]["round"], r["body"]["seat"])
                awards[key] = awards.get(key, 0) + 1
        for key, n in awards.items():
            if n > 1:
                v.append("round %d seat %d paid %d times" % (key[0], key[1] + 1, n))
        if award is not None:
            n = awards.get((award["round"], award["seat"]), 0)
            if n != 1:
                v.append("the award of round %d seat %d is in the ledger %d times after the resend" % (
                    award["round"], award["seat"] + 1, n))
            if not status.get("paid", 0) & (1 << award["seat"]):
                v.append("the board's paid bit for seat %d is not set" % (award["seat"] + 1))
        led = Ledger(self.db, readonly=True)
        try:
            ok, figures, _ = reconcile(led, self.board, meters)
        finally:
            led.close()
        if not ok:
            v.append("reconciliation does not balance: %r" % figures)
        self.timed("checks: ledger and reconcile", t)
        for text in v:
            self.violations.append("%s: %s" % (label, text))
        return status, meters, rows

    # ------------------------------------------------------------------ one cut
    def timed(self, phase, t0):
        self.phase_s[phase] = self.phase_s.get(phase, 0.0) + time.monotonic() - t0
        return time.monotonic()

    def new_round(self):
        """Lock and unlock: every seat may take a token again (one token a seat per round)."""
        self.accepting(lock_first=True)

    def accepting(self, lock_first=False, tries=4):
        """Until the board has released every seat's inhibit line (read back at the 595 chain): a
        token fed before the unlock is acted on would be a late coin, refused. Keys are held
        KEY_HOLD_MS of the board's time and pressed again if the board did not act on them: a
        press while the core is stopped by a flash erase can be too short for the debouncer, as
        a dealer's hurried press can, and the dealer presses again. (Lock in LOCKED and unlock in
        OPEN are ignored by the board, so a press too many changes nothing.)"""
        for _ in range(tries):
            if not lock_first and not any(self.bench.outputs()["inhibit"][:7]):
                return
            if lock_first:
                self.bench.key("lock", hold_ms=KEY_HOLD_MS)
            self.bench.key("unlock", hold_ms=KEY_HOLD_MS)
            end = self.bench.outputs()["now_ms"] + KEY_WAIT_MS
            while True:
                out = self.bench.outputs()
                if not any(out["inhibit"][:7]):
                    return
                if out["now_ms"] >= end:
                    break
                time.sleep(0.2)
            lock_first = True
        raise RuntimeError("the seats stayed inhibited after %d presses of lock and unlock" % tries)

    def tokens(self):
        edges = []
        for seat in range(7):
            t = self.rng.randrange(0, 60)
            w = self.rng.randrange(40, 61)
            edges += [[seat, 1, t], [seat, 0, t + w]]
            self.fed[seat] += 1
        return edges

    def coin_cut(self, n):
        from tabledev.pico_sim import EDGE_LEAD_MS
        t = time.monotonic()
        before = self.last  # nothing moved the meters since the last check (a new round only)
        boots = self.rig.outputs()["boots"]
        after_ms = self.rng.randrange(int(COIN_WINDOW_MS * 1e6)) / 1e6
        self.coin_cuts_started = getattr(self, "coin_cuts_started", 0) + 1
        aimed = bool(self.aim_every) and self.coin_cuts_started % self.aim_every == 0
        if aimed:
            # inside the busy time of one of the batch's first page programs (a coin record is
            # one), at a random point of it; the window's end if the board starts fewer
            nth, fraction = self.rng.randrange(1, 8), self.rng.random()
        flash0 = dict(self.rig.outputs()["flash"])
        self.accepting()
        fed_at_ms = self.rig.outputs()["now_ms"]  # the emulator runs on: an aimed cut's after_ms is to ~1 ms
        self.rig.feed_edges(self.tokens())
        if aimed:
            self.rig.power_cut_in_flash_op("program", nth, fraction, after_ms=EDGE_LEAD_MS + COIN_WINDOW_MS)
        else:
            self.rig.power_cut(after_ms=EDGE_LEAD_MS + after_ms)
        self.wait_boot(boots + 1, label="cut %d (coin-in)" % n)
        t = self.timed("cut and boot", t)
        where = dict(self.rig.last_cut or {})
        status, meters, rows = self.check("cut %d (coin-in, %.3f ms)" % (n, after_ms), before, list(self.fed))
        self.last = meters
        t = self.timed("checks (service + ledger)", t)
        credited = sum(meters["seat_coins"][:7]) - sum(before["seat_coins"][:7])
        flash1 = self.rig.outputs()["flash"]
        if aimed:
            after_ms = round(where.get("now_ns", 0) / 1e6 - fed_at_ms - EDGE_LEAD_MS, 3)
        self.cuts.append({"kind": "coin", "after_ms": after_ms, "credited": credited, "where": where,
                          "aimed": "program" if aimed else None,
                          "programs": flash1["page_programs"] - flash0["page_programs"],
                          "erases": flash1["sector_erases"] - flash0["sector_erases"]})
        self.new_round()
        self.timed("new round (lock, unlock keys)", t)

    def award_cut(self, n):
        # a round: every seat a token (no cut), lock, the dealer's jackpot key
        self.accepting()
        self.rig.feed_edges(self.tokens())
        self.bench.wait_idle()
        self.settled()
        for _ in range(3):  # pressed again if the board did not act on a press (see accepting)
            self.bench.key("lock", hold_ms=KEY_HOLD_MS)
            self.bench.key("jackpot", hold_ms=KEY_HOLD_MS)
            status = self.ask("status")
            if status["base"] == "JACKPOT_PENDING":
                break
        if status["base"] != "JACKPOT_PENDING":
            self.violations.append("cut %d: no JACKPOT_PENDING after the jackpot key (%s)" % (n, status["base"]))
            self.new_round()
            return
        eligible = [s for s in range(7) if status.get("eligible", 0) & (1 << s)]
        if not eligible:
            rows = self.ledger_rows()
            self.violations.append("cut %d: none of the 7 tokens of the award's round was credited (board: %s; "
                                   "newest ledger rows: %s)" % (n, {k: status.get(k) for k in (
                                       "state", "faults", "inhibit", "jammed")},
                                       [(r["kind"], r["body"].get("seat")) for r in rows[-12:]]))
            self.log(self.violations[-1])
            self.new_round()
            return
        seat = self.rng.choice(eligible)
        before = self.ask("meters")
        boots = self.rig.outputs()["boots"]
        after_ms = self.rng.randrange(int(AWARD_WINDOW_MS * 1e6)) / 1e6
        self.rig.power_cut_on_command("award", after_ms)
        result = {}

        def pay():
            try:
                with self.target() as t:
                    result["first"] = t.jackpot([(seat + 1, ROYAL)], False)
            except Exception as exc:  # noqa: reported as a violation below
                result["error"] = str(exc)
        th = threading.Thread(target=pay, daemon=True)
        th.start()
        self.wait_boot(boots + 1, label="cut %d (award)" % n)
        where = dict(self.rig.last_cut or {})
        th.join(900)
        label = "cut %d (award, %.3f ms)" % (n, after_ms)
        if "first" not in result:
            # The cut fell before the service could resend within its time: the board rebooted
            # unpaid or paid; the retry below (the same command id) settles which, once. Retried
            # itself while the service has not yet met the rebooted board (a campaign stopped
            # here once, after a boot that fell to the REPL and was cut again).
            result["first"] = self.retried("jackpot", lambda t: t.jackpot([(seat + 1, ROYAL)], False))
            result["retried_after_timeout"] = True
        award = {"round": before["round"], "seat": seat}
        status, meters, rows = self.check(label, before, list(self.fed), award)
        # recorded before the cut or paid by the resend after it: the award row's seq against the
        # boot's that followed the cut
        boot_seqs = [r["seq"] for r in rows if r["kind"] == "boot"]
        award_rows = [r for r in rows if r["kind"] == "award" and r["body"]["round"] == award["round"]
                      and r["body"]["seat"] == seat]
        before_cut = bool(award_rows) and award_rows[0]["seq"] < boot_seqs[-1]
        # the same command id again (a retry by hand after the reboot): nothing paid twice
        again = self.retried("jackpot", lambda t: t.jackpot([(seat + 1, ROYAL)], False))
        pay2 = again["payments"][0]
        if not pay2.get("repeat"):
            self.violations.append("%s: the retry of the award's command id was not answered as a repeat: %r" % (label, pay2))
        rows2 = self.ledger_rows()
        n2 = sum(1 for r in rows2 if r["kind"] == "award" and r["body"]["round"] == award["round"]
                 and r["body"]["seat"] == seat)
        if n2 != 1:
            self.violations.append("%s: %d award rows after the retry" % (label, n2))
        meters2 = self.ask("meters")
        if meters2["meter"] != meters["meter"]:
            self.violations.append("%s: the retry moved the meter %d -> %d" % (label, meters["meter"], meters2["meter"]))
        self.cuts.append({"kind": "award", "after_ms": after_ms, "recorded_before_cut": before_cut,
                          "amount": award_rows[0]["body"]["amount"] if award_rows else None, "where": where})
        self.accepting()
        self.last = meters2

    # ------------------------------------------------------------------ the run
    def run(self, cuts, award_every=5, deadline=None):
        t0 = time.monotonic()
        if award_every:
            # An award cut's `tablectl jackpot` evaluates the hand with the C core: a campaign run
            # from a checkout where it is not built stopped at its first award cut, minutes in.
            from tablegames.poker.evaluator import require_core
            require_core("the award cuts' jackpot")
        self.start()
        for n in range(1, cuts + 1):
            if deadline is not None and time.time() > deadline:
                self.log("stopping at the deadline after %d cuts" % (n - 1))
                break
            t = time.monotonic()
            phases_before = dict(self.phase_s)
            cuts_before = len(self.cuts)
            try:
                if award_every and n % award_every == 0:
                    self.award_cut(n)
                else:
                    self.coin_cut(n)
            except Exception as exc:  # noqa: a board that does not come back, a service that stops answering
                self.violations.append("cut %d: the campaign could not go on: %s; %s" % (n, exc, self.board_seen()))
                self.log("cut %d: %s" % (n, exc))
                self.broken = True
                self.record_end()
                break
            if len(self.cuts) == cuts_before:
                # an award round that could not be set up (its violation says why): no cut made
                self.log("cut %d/%d: no cut made; violations so far %d" % (n, cuts, len(self.violations)))
                if self.record_path:
                    append_record(self.record_path, {"run": self.run_id, "seed": self.seed, "code": self.digest,
                                                     "n": n, "no_cut": True, "violations": self.new_violations()})
                continue
            c = self.cuts[-1]
            c["wall_s"] = round(time.monotonic() - t, 1)
            c["phase_s"] = {k: round(v - phases_before.get(k, 0.0), 1) for k, v in self.phase_s.items()
                            if v > phases_before.get(k, 0.0)}
            self.log("cut %d/%d %s %.0f s wall: %s; violations so far %d" % (
                n, cuts, c.get("kind"), time.monotonic() - t,
                json.dumps({k: c[k] for k in c if k != "where"}), len(self.violations)))
            self.record_cut(n, c)
        # the end: everything acknowledged, the books reconciled and verified
        from tablectl.ledger import Ledger
        if self.broken:
            return {"wall_s": time.monotonic() - t0, "status": {}, "rows": 0}
        status = self.settled()
        led = Ledger(self.db, readonly=True)
        try:
            count, problems = led.verify()
        finally:
            led.close()
        if problems:
            self.violations.append("end: ledger verify: %s" % problems[:3])
        self.record_end(rows=count)
        return {"wall_s": time.monotonic() - t0, "status": status, "rows": count}

    # ------------------------------------------------------------------ the record
    def new_violations(self):
        """The violations found since the last line recorded (each recorded once)."""
        start = getattr(self, "recorded_violations", 0)
        self.recorded_violations = len(self.violations)
        return self.violations[start:]

    def record_cut(self, n, c):
        if not self.record_path:
            return
        line = {"run": self.run_id, "seed": self.seed, "code": self.digest, "n": n,
                "violations": self.new_violations()}
        if getattr(getattr(self, "rig", None), "pio_step_ns", 0):
            line["pio_step_us"] = self.rig.pio_step_ns // 1000  # the PIO stepped in batches (tabledev/pico_sim/tuning.py)
        if getattr(self, "rig", None) is not None:
            from tabledev.rp2040py_build import installed_build
            line["emulator"] = installed_build()  # make pico-emulator: full API; PyPI's wheel: abi3
        line.update(cut_line(c))
        append_record(self.record_path, line)

    def record_end(self, rows=None):
        """The run's end: the ledger's audit (None for a run that could not go on) and any
        violation found after the last cut (a broken run's own, the end's verify)."""
        if not self.record_path:
            return
        append_record(self.record_path, {"run": self.run_id, "seed": self.seed, "code": self.digest, "end": True,
                                         "broken": self.broken, "ledger_rows_verified": rows,
                                         "cuts": len(self.cuts), "violations": self.new_violations()})


def summarize(c, res):
    """One run's figures: the record's counting (tally) of its cuts, and what only a live run has."""
    meters = c.ask("meters", timeout_s=60) if not c.broken else {"seat_coins": [0] * 7, "meter": None}
    figures = tally([cut_line(x) for x in c.cuts])
    figures.update({"fed": sum(c.fed), "credited": sum(meters["seat_coins"][:7]), "meter": meters["meter"],
                    "boots": res["status"].get("boots"), "rows": res["rows"], "violations": list(c.violations),
                    "wall_s": res["wall_s"], "phase_s": dict(c.phase_s), "journal": getattr(c, "journal", None)})
    return figures
