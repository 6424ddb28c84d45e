"""Fault-injection campaigns (docs/RELIABILITY.md): `python -m tabledev.faults [--full] [--rng-seed N]`.

Runs every campaign with a fixed seed, prints a summary table and keeps it as a record
(benchmarks/results/faults.json), from which docs/RELIABILITY.md's FIGURES block is rendered. Exit status 1 if any campaign found a violation.

  power      >= 1,000 power cuts torn mid-write, in-process on MicroPython (mp_test_faults_power)
  noise      the real TableApp (MicroPython) <- bit flips, dropped bytes, garbage bursts, a pulled
             cable -> the real protocol and Ledger (CPython), >= 100,000 events in --full
  host_loss, blackout, bad_input, tamper   MicroPython (mp_test_faults_misc)
  ledger     an edited, a deleted row in the hash-chained ledger: verify() names them
"""
import argparse
import json
import os
import random
import select
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time

from table import protocol as proto
from tablectl.ledger import Ledger
from tabledev.interpreter import micropython_path

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MP_TESTS = os.path.join(ROOT, "tests", "firmware")
BEGIN = "<!-- FIGURES BEGIN (written by `make faults`) -->"
END = "<!-- FIGURES END -->"

SHORT = {"cuts": 120, "noise_events": 2000, "pull_ms": 20000, "misc_scale": 0, "real_cuts": 8}
FULL = {"cuts": 1000, "noise_events": 100000, "pull_ms": 60000, "misc_scale": 1, "real_cuts": 200}


def run_mp(script, *args, timeout=1800):
    env = dict(os.environ)
    env["MICROPYPATH"] = os.path.join(ROOT, "firmware") + ":" + MP_TESTS + ":.frozen"
    proc = subprocess.run([micropython_path(), "-X", "heapsize=64M", script] + [str(a) for a in args],
                          cwd=MP_TESTS, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError("%s failed:\n%s\n%s" % (script, proc.stdout[-3000:], proc.stderr[-3000:]))
    return json.loads(proc.stdout.strip().splitlines()[-1])


# ------------------------------------------------------------------ campaign 1
def campaign_power(seed, cuts):
    return run_mp("mp_test_faults_power.py", "campaign", seed, cuts)


# ------------------------------------------------------------------ campaign 2
class Noise:
    """A noisy line: bit flips at 1 in `flip_every` bytes, dropped bytes, garbage bursts."""

    def __init__(self, rng, flip_every=1000, drop_every=5000, burst_every=200000):
        self.rng = rng
        self.flip_every, self.drop_every, self.burst_every = flip_every, drop_every, burst_every
        self.next_flip = self._gap(flip_every)
        self.next_drop = self._gap(drop_every)
        self.next_burst = self._gap(burst_every)
        self.flips = self.drops = self.bursts = self.bytes = 0

    def _gap(self, mean):
        return max(1, int(self.rng.expovariate(1.0 / mean)))

    def __call__(self, data):
        out = bytearray(data)
        n = len(out)
        self.bytes += n
        i = self.next_flip - 1
        while i < n:
            out[i] ^= 1 << self.rng.randrange(8)
            self.flips += 1
            i += self._gap(self.flip_every)
        self.next_flip = i - n + 1
        drops = []
        i = self.next_drop - 1
        while i < n:
            drops.append(i)
            self.drops += 1
            i += self._gap(self.drop_every)
        self.next_drop = i - n + 1
        for i in reversed(drops):
            del out[i]
        self.next_burst -= n
        if self.next_burst <= 0:
            self.bursts += 1
            at = self.rng.randrange(len(out) + 1)
            out[at:at] = bytes(self.rng.randrange(256) for _ in range(self.rng.randrange(16, 128)))
            self.next_burst = self._gap(self.burst_every)
        return bytes(out)


def noise_deadline_s(events):
    """Wall-clock bound of the line-noise campaign: a minute to start plus 10 ms an event (the
    board pump delivers a few thousand a second here). Past it the campaign stops and reports a
    violation: an ack that never catches up must fail the run, not hang it."""
    return 60 + events * 0.01


def campaign_noise(seed, events, pull_ms, workdir, deadline_s=None):
    rng = random.Random(seed)
    deadline_s = noise_deadline_s(events) if deadline_s is None else deadline_s
    up, down = Noise(rng), Noise(rng)
    path = os.path.join(workdir, "noise.sock")
    db = os.path.join(workdir, "noise.db")
    srv = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    srv.bind(path)
    srv.listen(1)
    env = dict(os.environ)
    env["MICROPYPATH"] = os.path.join(ROOT, "firmware") + ":" + MP_TESTS + ":.frozen"
    proc = subprocess.Popen([micropython_path(), "-X", "heapsize=64M", "mp_test_faults_link.py", "pump", path,
                             str(events), str(events // 2), str(pull_ms)],
                            cwd=MP_TESTS, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ledger = Ledger(db)
    reader = proto.FrameReader()
    t0 = time.monotonic()
    timed_out = False
    out = err = ""
    try:
        srv.settimeout(30)
        conn, _ = srv.accept()
        conn.sendall(down(proto.encode_frame(proto.hello())))
        last_hb = 0.0
        acks = 0
        while True:
            ready, _, _ = select.select([conn], [], [], 0.5)
            now = time.monotonic()
            if now - t0 > deadline_s:
                timed_out = True
                break
            if now - last_hb > 1.0:
                last_hb = now
                conn.sendall(down(proto.encode_frame(proto.heartbeat())))
            if not ready:
                if proc.poll() is not None:
                    break
                continue
            data = conn.recv(1 << 16)
            if not data:
                break
            evs = [f.message for f in reader.feed(up(data)) if f.message.get("t") == proto.EVENT]
            if evs:
                last, _new, _dup, gap = ledger.record_events(evs[0].get("b") or "sim-noise", evs)
                conn.sendall(down(proto.encode_frame(proto.ack(last, gap))))
                acks += 1
        if not timed_out:
            out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        srv.close()
    board = json.loads(out.strip().splitlines()[-1]) if out.strip() else None
    v = []
    if timed_out:
        ledger.close()
        v.append("not finished after %.0f s (deadline): %d acks sent, %d events in the ledger, the board "
                 "still waiting for acks" % (deadline_s, acks, ledger_rows(db)))
        return {"violations": v}
    if board is None:
        ledger.close()
        v.append("the board pump died: %s" % err[-2000:])
        return {"violations": v}
    rows = list(ledger.events(board="sim-noise"))
    seqs = [r["seq"] for r in rows]
    if seqs != list(range(1, board["events"] + 1)):
        v.append("ledger seqs are not 1..%d in order (%d rows)" % (board["events"], len(seqs)))
    coins = [r for r in rows if r["kind"] == "coin"]
    if len(coins) != board["coins"]:
        v.append("ledger coins %d, board coins %d" % (len(coins), board["coins"]))
    to_meter = sum(r["body"]["to_meter"] for r in coins)
    seed_cents = 10000000
    if seed_cents + to_meter != board["meter"]:
        v.append("ledger increments %d, board meter %d" % (to_meter, board["meter"]))
    checked, problems = ledger.verify()
    if problems:
        v.append("ledger chain: %s" % problems[:3])
    info = ledger.board("sim-noise")
    refused = len([r for r in rows if r["kind"] == "refused_coin"])
    host_faults = len([r for r in rows if r["kind"] == "fault" and r["body"].get("code") == "host"])
    ledger.close()
    return {"events": board["events"], "ledger_rows": len(rows), "coins": len(coins),
            "bytes": up.bytes + down.bytes, "bit_flips": up.flips + down.flips,
            "bytes_dropped": up.drops + down.drops, "garbage_bursts": up.bursts + down.bursts,
            "frames_bad_board": board["frames_bad"], "frames_bad_host": reader.frames_bad,
            "duplicates_dropped": info["duplicates"], "gaps_acked": info["gaps"],
            "cable_pull_ms": pull_ms, "bytes_lost_in_pull": board["bytes_dropped_while_pulled"],
            "host_fault_events": host_faults, "coins_refused_while_host_lost": refused,
            "seconds": round(time.monotonic() - t0, 1), "violations": v, "_db": db}


def ledger_rows(db):
    con = sqlite3.connect(db)
    try:
        return con.execute("SELECT COUNT(*) FROM ledger").fetchone()[0]
    finally:
        con.close()


# ------------------------------------------------------------------ campaign 6b: the ledger
def campaign_ledger(db):
    v = []
    con = sqlite3.connect(db)
    n = con.execute("SELECT COUNT(*) FROM ledger").fetchone()[0]
    coin_id = con.execute("SELECT id FROM ledger WHERE kind='coin' ORDER BY id LIMIT 1 OFFSET 5").fetchone()[0]
    con.execute("UPDATE ledger SET body=replace(body, '\"to_meter\":70', '\"to_meter\":7000') WHERE id=?",
                (coin_id,))
    con.commit()
    led = Ledger(db)
    _, problems = led.verify()
    edited = any(("row %d was edited" % coin_id) in p for p in problems)
    if not edited:
        v.append("an edited coin row (%d) was not detected" % coin_id)
    led.close()
    victim = n // 2
    con.execute("DELETE FROM ledger WHERE id=?", (victim,))
    con.commit()
    con.close()
    led = Ledger(db)
    _, problems2 = led.verify()
    led.close()
    deleted = any(("row %d missing" % victim) in p for p in problems2)
    if not deleted:
        v.append("a deleted row (%d) was not detected" % victim)
    return {"rows": n, "edited_row_detected": edited, "deleted_row_detected": deleted,
            "violations": v}


# ------------------------------------------------------------------ real power cuts
def campaign_real_cuts(seed, cuts, workdir):
    """Power cuts as a board gets them: the virtual board's interpreter is SIGKILLed by its
    supervisor at random instants while all seven seats drop tokens and the real service records
    them over the pty. Afterwards: every boot in the ledger, sequence 1..n without gap or repeat,
    and the ledger reconciles to the board's own meters."""
    from . import procs
    from .bench import Bench
    from tablectl.client import Target
    from tablectl.reconcile import reconcile

    rng = random.Random(seed)
    state = os.path.join(workdir, "realcuts")
    db = os.path.join(workdir, "realcuts.db")
    v = []
    sim, _, port = procs.start_sim(state, os.path.join(workdir, "realcuts-sim.log"))
    serve = None
    fed = 0
    try:
        serve, _ = procs.start_serve(port, db, os.path.join(workdir, "realcuts-serve.log"))
        bench = Bench(state)
        for cut in range(cuts):
            edges = []
            for seat in range(7):
                t = rng.randrange(0, 60)
                edges += [[seat, 1, t], [seat, 0, t + 50]]
            bench.edges(edges)
            fed += 7
            time.sleep(rng.uniform(0.0, 0.25))  # the cut falls before, during or after the credits
            bench.power_cut()
            deadline = time.monotonic() + 15
            while bench.request("outputs")["mode"] != "app" or bench.outputs().get("state") is None:
                if time.monotonic() > deadline:
                    v.append("cut %d: the board did not come back" % cut)
                    break
                time.sleep(0.02)
            if bench.outputs().get("state") == "LOCKED":
                bench.key("unlock")
            else:
                bench.key("lock")
                bench.key("unlock")
        bench.close()

        class Args:
            port = None
            board = None
        Args.db = db
        deadline = time.monotonic() + 60
        status = meters = None
        while time.monotonic() < deadline:
            try:
                with Target(Args) as t:
                    status = t.command("status")
                    meters = t.command("meters")
                if status["unacked"] == 0:
                    break
            except Exception:  # noqa: the board may still be booting
                pass
            time.sleep(0.3)
        if status is None or status["unacked"] != 0:
            v.append("events still unacknowledged at the end: %r" % (status and status["unacked"]))
        ledger = Ledger(db, readonly=True)
        seqs = [e["seq"] for e in ledger.events() if e["seq"] is not None]
        if status and seqs != list(range(1, status["next_seq"])):
            v.append("ledger sequence is not 1..%d without gap or repeat" % (status["next_seq"] - 1))
        boot_events = len(list(ledger.events(kinds=["boot"])))
        if boot_events != cuts + 1:
            v.append("%d boot events in the ledger for %d cuts" % (boot_events, cuts))
        credited = len(list(ledger.events(kinds=["coin"])))
        ok, figures, _ = reconcile(ledger, status["board"], meters) if status else (False, {}, [])
        if not ok:
            v.append("reconciliation does not balance: %r" % figures)
        count, problems = ledger.verify()
        if problems:
            v.append("hash chain: %s" % problems[:3])
        return {"cuts": cuts, "fed": fed, "credited": credited, "boots": boot_events, "rows": count,
                "meter": meters["meter"] if meters else None, "reconciled": ok, "violations": v}
    finally:
        procs.stop(serve)
        procs.stop(sim)


# ------------------------------------------------------------------ the run
def run(full=False, seed=20240601, write_doc=True, out=sys.stdout):
    p = FULL if full else SHORT
    results = {}
    t_all = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="tablectl-faults-") as work:
        t = time.monotonic()
        results["power"] = campaign_power(seed, p["cuts"])
        results["power"]["seconds"] = round(time.monotonic() - t, 1)
        results["real_cuts"] = campaign_real_cuts(seed, p["real_cuts"], work)
        results["noise"] = campaign_noise(seed, p["noise_events"], p["pull_ms"], work)
        db = results["noise"].pop("_db", None)
        results["ledger"] = campaign_ledger(db) if db else {"violations": ["no ledger"]}
        t = time.monotonic()
        misc = run_mp("mp_test_faults_misc.py", "campaign", seed, p["misc_scale"])
        secs = round(time.monotonic() - t, 1)
        for k in ("host_loss", "blackout", "bad_input", "tamper"):
            results[k] = misc[k]
        results["host_loss"]["seconds"] = secs
    results["_meta"] = {"mode": "full" if full else "short", "seed": seed,
                        "seconds": round(time.monotonic() - t_all, 1),
                        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())}
    table = summary(results)
    print(table, file=out)
    if write_doc:
        write_record(table, results, full, seed)
    return results


def _line(name, r, figures):
    status = "PASS" if not r.get("violations") else "FAIL (%d)" % len(r["violations"])
    return "| %s | %s | %s |" % (name, figures, status)


def summary(r):
    pw, nz, hl, bk, bi, tp, lg = (r["power"], r["noise"], r["host_loss"], r["blackout"], r["bad_input"],
                                  r["tamper"], r["ledger"])
    m = r["_meta"]
    rows = ["Campaign run: %s, %s mode, seed %d, %.0f s" % (m["date"], m["mode"], m["seed"], m["seconds"]), "",
            "| campaign | figures | result |", "|---|---|---|"]
    where = ", ".join("%s %d" % (k, v) for k, v in sorted(pw.get("where", {}).items()))
    rows.append(_line("1 power cuts (in-process, torn writes)", pw,
                      "%d cuts (%s); %d restarts checked; %d durable events, %d coins credited of %d fed, "
                      "meter %s; %d violations" % (pw["cuts"], where, pw["restarts"], pw["events"],
                                                   pw["credited"], pw["fed"], pw["meter"], pw["violation_count"])))
    rc = r["real_cuts"]
    rows.append(_line("1b power cuts (real: the interpreter SIGKILLed)", rc,
                      "%d cuts during coin-in on 7 seats with the service recording; %d boots in the ledger; "
                      "%d tokens fed, %d credited; %d ledger rows in sequence; reconciled with the board: %s"
                      % (rc["cuts"], rc["boots"], rc["fed"], rc["credited"], rc["rows"], rc["reconciled"])))
    if "events" in nz:
        rows.append(_line("2 line noise", nz,
                          "%d events, %d coins, %d ledger rows in order 1..n; %d bytes, %d bit flips, %d bytes "
                          "dropped, %d garbage bursts; cable pulled %d s (board time): %d host-fault events, "
                          "%d coins refused; bad frames board/host %d/%d; duplicates dropped %d, gap acks %d"
                          % (nz["events"], nz["coins"], nz["ledger_rows"], nz["bytes"], nz["bit_flips"],
                             nz["bytes_dropped"], nz["garbage_bursts"], nz["cable_pull_ms"] // 1000,
                             nz["host_fault_events"], nz["coins_refused_while_host_lost"],
                             nz["frames_bad_board"], nz["frames_bad_host"], nz["duplicates_dropped"],
                             nz["gaps_acked"])))
    else:
        rows.append(_line("2 line noise", nz, "did not run"))
    rows.append(_line("3 host loss", hl,
                      "host down %d min (board time), outbox limit %d: fault at %s, max %d unacked; %d coins "
                      "credited while down, all %d events delivered once in order after; %d non-money events "
                      "counted not stored" % (hl["minutes"], hl["outbox_limit"], hl["outbox_fault_at"],
                                              hl["max_unacked"], hl["credited_while_down"],
                                              hl["events_delivered_after"], hl["suppressed_non_money"])))
    rows.append(_line("4 flash-write blackout", bk,
                      "pio: %d of %d tokens, %d edges lost; irq: %d of %d tokens, %d edges lost (%d flash writes)"
                      % (bk["pio"]["decoded"], bk["pio"]["fed"], bk["pio"]["edges_lost"], bk["irq"]["decoded"],
                         bk["irq"]["fed"], bk["irq"]["edges_lost"], bk["irq"]["flash_writes"])))
    rows.append(_line("5 bad input", bi,
                      "%d fuzzed frames/key+spot mashes: %d crashes, %d bad frames dropped, %d refused; "
                      "%d/%d bad configs refused; stuck spot -> %d event; jam -> fault %s; meter unchanged %s"
                      % (bi["frames"], bi["crashes"], bi["frames_bad"], bi["refused"], bi["bad_configs_refused"],
                         bi["bad_configs"], bi["stuck_spot_events"], bi["jam_fault"], bi["meter_unchanged"])))
    rows.append(_line("6 tampering (board)", tp,
                      "refused/tried: bad MAC %d/%d, no MAC %d/%d, replay %d/%d, wrong state %d/%d; %d logged"
                      % (tp["refused"]["bad_mac"], tp["tried"]["bad_mac"], tp["refused"]["no_mac"],
                         tp["tried"]["no_mac"], tp["refused"]["replay"], tp["tried"]["replay"],
                         tp["refused"]["wrong_state"], tp["tried"]["wrong_state"], tp["logged"])))
    rows.append(_line("6 tampering (ledger)", lg,
                      "%s rows: edited row detected %s, deleted row detected %s"
                      % (lg.get("rows"), lg.get("edited_row_detected"), lg.get("deleted_row_detected"))))
    bad = [(k, r[k]["violations"]) for k in r if not k.startswith("_") and r[k].get("violations")]
    for k, vs in bad:
        rows.append("")
        rows.append("%s violations: %s" % (k, "; ".join(str(x) for x in vs[:5])))
    return "\n".join(rows)


def write_record(table, results, full, seed):
    """The campaign's record (benchmarks/results/faults.json) and the FIGURES block of
    docs/RELIABILITY.md rendered from it (tabledev/records.py)."""
    from tabledev.records import FIRMWARE_TABLE, HOST_BOOKS, save_campaign
    names = [k for k in results if not k.startswith("_")]
    bad = sum(len(results[k].get("violations") or ()) for k in names)
    passed = sum(1 for k in names if not results[k].get("violations"))
    command = "make faults" if full and seed == 20240601 else "python -m tabledev.faults%s --rng-seed %d" % (
        " --full" if full else "", seed)
    save_campaign("faults", "Fault-injection campaigns (power cuts, line noise, host loss, flash-write blackout, "
                  "bad input, tampering)", command, [("campaigns passed", "%d of %d" % (passed, len(names))),
                                                     ("violations", bad)],
                  "no violation in any campaign", bad == 0,
                  FIRMWARE_TABLE + ["firmware/boards/sim.py", "firmware/boards/simflash.py"] + HOST_BOOKS
                  + ["lab/tabledev/faults.py", "tests/firmware/mp_test_faults_power.py",
                     "tests/firmware/mp_test_faults_misc.py"], table)


def failed(results):
    return any(results[k].get("violations") for k in results if not k.startswith("_"))


def main(argv=None):
    ap = argparse.ArgumentParser(prog="python -m tabledev.faults", description=__doc__.splitlines()[0])
    ap.add_argument("--full", action="store_true", help="the full campaign (1,000 cuts, 100,000 events)")
    ap.add_argument("--rng-seed", dest="seed", type=int, default=20240601)
    ap.add_argument("--no-doc", action="store_true", help="keep no record (docs/RELIABILITY.md is rendered from it)")
    args = ap.parse_args(argv)
    results = run(args.full, args.seed, not args.no_doc)
    return 1 if failed(results) else 0


if __name__ == "__main__":
    sys.exit(main())
