"""`make faults-pool`: the linked pool's fault runs, on a real floor: three virtual
boards (`tablectl sim`, two Caribbean Draw, one Caribbean Stud) with their `tablectl serve --pool`,
link-level tables that feed the pool as those services do, `tablectl pool serve`, and PostgreSQL
as three servers, a primary and two standbys under the quorum `ANY 1 (a, b, c)`, made by the
commands of docs/POOL.md ("The database: three servers") run word for word (tabledev/pgfailover),
all started here in a temporary folder.

Faults, one after the other on the same floor:
  1. the pool service killed (SIGKILL) mid-burst, restarted;
  2. PostgreSQL restarted mid-burst (immediate shutdown: a crash, then recovery);
  3. the primary killed (SIGKILL) mid-burst and, OPERATOR_S later, docs/POOL.md's failover
     commands run: every token the pool had acknowledged before the kill is on the promoted
     standby (checked before anything is resent); the boards' seconds of POOL OFF are measured;
     then the dead server comes back as a standby, as the doc says;
  4. one table cut off from the pool for 10 minutes of its board's time (the simulator's clock
     driven forward): it inhibits coin-in and shows POOL OFF; on return its journal is replayed.
After each: nothing lost (every token in every table's books is in the pool's), nothing counted
twice, the pool's books verify and reconcile. The figures are a record (benchmarks/results/pool_faults.json),
rendered into docs/RELIABILITY.md (POOL FAULTS).

    .venv/bin/python -m tabledev.pool_faults [--no-doc]
"""
import argparse
import os
import shutil
import signal
import sys
import tempfile
import threading
import time

from tablectl.errors import TablectlError
from tablectl.pool.client import PoolClient, PoolError

from .bench import Bench
from .floor import Floor, signed_token
from .pgfailover import Trio

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FEEDERS = 10
ROUNDS = 4
# Seconds between the primary's death and the failover commands: a person's reaction, shortened;
# longer than the tables' --pool-lost-s (3 s here) so the POOL OFF it costs is seen and timed.
OPERATOR_S = 8.0


class Feeder(threading.Thread):
    """A table at the link level: its board counts tokens whether or not the pool is there (the
    journal), and its service sends them from the pool's newest one, in order, as PoolLink does.
    Like a provisioned board it signs each token with its table key (given to the pool's
    --table-keys folder), and it speaks to the pool with its own table credential."""

    def __init__(self, board, sock, key, credentials, period_s=0.02):
        threading.Thread.__init__(self, daemon=True)
        self.board = board
        self.url = "unix:" + sock
        self.key = key
        self.credentials = credentials
        self.period_s = period_s
        self.generated = 0
        self.acked = 0
        self.generating = threading.Event()
        self.paused = threading.Event()
        self.stop_event = threading.Event()
        self.errors = 0

    @classmethod
    def on(cls, floor, board, **kw):
        """A link-level member of `floor` (started), keyed and credentialed as a real table is."""
        creds, key = floor.link_member(board)
        return cls(board, floor.sock, key, creds, **kw)

    def token(self, seq):
        return signed_token(self.key, self.board, seq, seat=seq % 7, round_no=seq)

    def run(self):
        client = PoolClient(self.url, self.credentials, timeout_s=5)
        hw = None
        while not self.stop_event.is_set():
            if self.generating.is_set():
                self.generated += 1
            if self.paused.is_set():
                time.sleep(self.period_s)
                continue
            try:
                if hw is None:
                    hw = client.request("hello", board=self.board)["last_seq"]
                if hw < self.generated:
                    reply = client.request("tokens", board=self.board,
                                           tokens=[self.token(q) for q in range(hw + 1, min(self.generated, hw + 50) + 1)])
                    hw = max(hw, reply["last_seq"])
                    self.acked = max(self.acked, hw)
            except (ConnectionError, PoolError):
                hw = None
                self.errors += 1
                time.sleep(0.2)
            time.sleep(self.period_s)


class Run:
    def __init__(self, folder, log=print):
        self.folder = folder
        self.log = log
        self.trio = Trio(os.path.join(folder, "pg"), port=5432, log=log)
        self.floor = None
        self.feeders = []
        self.results = []

    # ------------------------------------------------------------------ set-up
    def start(self):
        self.trio.start()
        self.trio.server("a").create_database()
        members = [("lf-%02d" % i, "caribbean_draw") for i in range(FEEDERS)]
        self.floor = Floor(os.path.join(self.folder, "floor"), pg=self.trio.server("a"), url=self.trio.url(), lost_s=3.0,
                           relayed=("cd-2",), members=members)
        self.floor.start()
        for board, _ in members:
            f = Feeder.on(self.floor, board)
            f.start()
            self.feeders.append(f)
        self.log("floor up: 3 virtual boards, %d link-level tables, pool on a primary and two standbys (ANY 1)"
                 % FEEDERS)

    def stop(self):
        for f in self.feeders:
            f.stop_event.set()
        if self.floor is not None:
            self.floor.stop()
        self.trio.stop()

    # ------------------------------------------------------------------ bursts and checks
    def burst(self, rounds=ROUNDS, tables=None):
        """Every seat of every board takes a token, the dealer locks and unlocks: `rounds` times,
        one thread per table. Meanwhile the link-level tables count a token every 20 ms."""
        tables = tables or [b for b, _ in self.floor.tables]
        for f in self.feeders:
            f.generating.set()

        def table(board):
            bench = self.floor.bench(board)
            try:
                for _ in range(rounds):
                    bench.coins({seat: 1 for seat in range(self.floor.seats)})
                    bench.key("lock")
                    bench.key("unlock")
            finally:
                bench.close()
        threads = [threading.Thread(target=table, args=(b,), daemon=True) for b in tables]
        for t in threads:
            t.start()
        return threads

    def end_burst(self, threads):
        for t in threads:
            t.join(120)
        for f in self.feeders:
            f.generating.clear()

    def converge(self, timeout_s=120.0):
        """Wait until every table's tokens are in the pool; returns seconds waited."""
        t0 = time.monotonic()
        while True:
            rec = self.floor.reconcile()
            store = self.floor.store()
            try:
                feeders_ok = all(store.token_seqs(f.board) == list(range(1, f.generated + 1)) for f in self.feeders)
            finally:
                store.close()
            if rec["ok"] and feeders_ok:
                return time.monotonic() - t0, rec
            if time.monotonic() - t0 > timeout_s:
                return None, rec
            time.sleep(0.5)

    def check(self, name, fault_end, extra=None):
        waited, rec = self.converge()
        store = self.floor.store()
        try:
            rows, problems = store.verify()
            st = store.status(self.floor.pool)
            doubled = 0
            for board in [b for b, _ in self.floor.tables] + [f.board for f in self.feeders]:
                seqs = store.token_seqs(board)
                doubled += len(seqs) - len(set(seqs))
        finally:
            store.close()
        table_tokens = sum(t["tokens"] for t in rec["pools"].get(self.floor.pool, {}).get("tables", []))
        result = {"fault": name, "tokens": st["tokens"], "table_tokens": table_tokens,
                  "recovered_s": None if waited is None else round(time.monotonic() - fault_end, 1),
                  "lost": 0 if waited is not None else "see problems", "doubled": doubled,
                  "reconcile": "OK" if rec["ok"] else "; ".join(rec["problems"])[:200],
                  "verify": "OK (%d rows)" % rows if not problems else "; ".join(problems)[:200]}
        result.update(extra or {})
        self.results.append(result)
        self.log("%s: %s" % (name, result))
        return result

    # ------------------------------------------------------------------ the faults
    def pool_killed(self):
        threads = self.burst()
        time.sleep(1.5)
        self.floor.stop_pool(signal.SIGKILL)
        time.sleep(2.0)
        self.floor.start_pool()
        fault_end = time.monotonic()
        self.end_burst(threads)
        return self.check("pool service killed (SIGKILL) mid-burst, restarted after 2 s", fault_end)

    def pg_restarted(self):
        threads = self.burst()
        time.sleep(1.5)
        primary = self.trio.server(self.trio.primary())
        primary.stop("immediate")
        time.sleep(1.0)
        primary.start()
        fault_end = time.monotonic()
        self.end_burst(threads)
        return self.check("PostgreSQL (primary) stopped immediate mid-burst, restarted", fault_end)

    def failover(self):
        threads = self.burst()
        watch = PoolOffWatch(self.floor)
        watch.start()
        time.sleep(1.5)
        dead = self.trio.primary()
        for f in self.feeders:
            f.paused.set()  # nothing is resent until the promoted server's contents are checked
        killed = time.monotonic()
        self.trio.server(dead).kill()
        time.sleep(0.5)
        # What the pool acknowledged was committed by the dead primary (no other could commit).
        acked = {f.board: f.acked for f in self.feeders}
        time.sleep(max(0.0, OPERATOR_S - (time.monotonic() - killed)))
        t_fo = time.monotonic()
        new, out = self.trio.failover(dead)
        promoted = time.monotonic()
        if new is None:
            raise RuntimeError("docs/POOL.md's failover did not promote: %s" % out)
        missing = missing_acked(self.floor.db_url, self.floor.keys, acked)
        for f in self.feeders:
            f.paused.clear()
        fault_end = time.monotonic()
        self.end_burst(threads)
        result = self.check("primary killed (SIGKILL) mid-burst; %.0f s later docs/POOL.md's failover promoted %s"
                            % (OPERATOR_S, new), fault_end,
                            {"acked_checked": sum(acked.values()), "acked_lost": missing,
                             "failover_s": round(promoted - t_fo, 1)})
        off = watch.stop()
        result.update(pool_off_s=round(max(off.values()), 1),
                      off_after_kill_s=round(watch.first_off - killed, 1) if watch.first_off else None,
                      back_after_promotion_s=round(max(0.0, watch.last_back - promoted), 1) if watch.last_back else 0.0)
        # The dead server returns as a standby of the new primary (docs/POOL.md), back to three.
        self.trio.rejoin(dead, new)
        self.trio.wait_streaming(new, 2)
        self.log("failover: %s" % result)
        return result

    def cut_off(self, board="cd-2", board_minutes=10):
        bench = self.floor.bench(board)
        relay = self.floor.relays[board]
        relay.cut()
        # Tokens in the first seconds, before the table gives the pool up: journaled, sent later.
        bench.coins({0: 1, 1: 1, 2: 1})
        bench.wait_for(lambda out, _: out["display"].strip() == "POOL OFF", 30, "%s showing POOL OFF" % board)
        inhibited = all(bench.inhibit())
        # The table is unplayable: a token now is refused by the inhibited acceptor.
        bench.coins({3: 1})
        # Ten minutes of the board's time, in steps the service's heartbeat keeps up with.
        step_ms = 2000
        for _ in range(board_minutes * 60000 // step_ms):
            bench.advance(step_ms)
            time.sleep(0.25)
        relay.restore()
        fault_end = time.monotonic()
        bench.wait_for(lambda out, _: out["display"].strip() not in ("POOL OFF", ""), 60, "%s back" % board)
        # A seat that took no token this round (seats 0-2 have theirs: one token per seat per round).
        playable = not bench.inhibit()[self.floor.seats - 1]
        bench.close()
        return self.check("table %s cut off from the pool for %d minutes of board time" % (board, board_minutes),
                          fault_end, {"inhibited_while_cut": inhibited, "playable_after": playable})


def missing_acked(url, keys, acked):
    """How many of the tokens acknowledged to each board (board -> highest seq) the pool's
    database does not hold."""
    from tablectl.pool.store import PoolStore
    store = PoolStore(url, keys, anchor=False, migrate=False)
    try:
        missing = 0
        for board, hw in acked.items():
            held = set(store.token_seqs(board))
            missing += sum(1 for q in range(1, hw + 1) if q not in held)
        return missing
    finally:
        store.close()


class PoolOffWatch(threading.Thread):
    """Polls every virtual board's display; per board, the seconds it showed POOL OFF."""

    def __init__(self, floor, period_s=0.1):
        threading.Thread.__init__(self, daemon=True)
        self.floor = floor
        self.period_s = period_s
        self.off = {b: 0.0 for b, _ in floor.tables}
        self.first_off = None  # when a display first showed POOL OFF
        self.last_back = None  # when a display last left POOL OFF
        self.stop_event = threading.Event()

    def run(self):
        benches = {b: Bench(os.path.join(self.floor.folder, b)) for b in self.off}
        since = {}
        try:
            while not self.stop_event.is_set():
                now = time.monotonic()
                for b, bench in benches.items():
                    try:
                        shown = bench.display().strip()
                    except (OSError, TablectlError):  # a board that went away is not counted on
                        continue
                    if shown == "POOL OFF":
                        since.setdefault(b, now)
                        if self.first_off is None:
                            self.first_off = now
                    elif b in since:
                        self.off[b] += now - since.pop(b)
                        self.last_back = now
                time.sleep(self.period_s)
            now = time.monotonic()
            for b, t in since.items():  # still off when the watch ended
                self.off[b] += now - t
        finally:
            for bench in benches.values():
                bench.close()

    def stop(self):
        self.stop_event.set()
        self.join(30)
        return self.off


def commit():
    """The commit measured (with `+changes` when the tree differs from it)."""
    import subprocess
    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return (head or "unknown") + (" +changes" if dirty else "")


def write_doc(results, elapsed_s):
    """The run's record (benchmarks/results/pool_faults.json) and the POOL FAULTS block of
    docs/RELIABILITY.md rendered from it (tabledev/records.py)."""
    lines = ["## Linked pool faults", "",
             "`make faults-pool` (tabledev/pool_faults.py), commit %s, %s UTC, %.0f s: a floor of 3 provisioned "
             "virtual boards (2 Caribbean Draw, 1 Caribbean Stud) with their `tablectl serve --pool`, %d link-level "
             "tables signing their tokens, `tablectl pool serve --table-keys`, PostgreSQL 15 as three servers (a "
             "primary and two streaming standbys under `ANY 1 (a, b, c)`, made and failed over by the commands of "
             "docs/POOL.md, run word for word). Each row: the fault "
             "during a burst (every seat a token, lock, unlock, %d rounds per board; a token every 20 ms per "
             "link-level table), then: every token in every table's books is in the pool's exactly once "
             "(floor reconcile), the pool's books verify and reconcile." % (
                 commit(), time.strftime("%Y-%m-%d %H:%M", time.gmtime()), elapsed_s, FEEDERS, ROUNDS), "",
             "| fault | pool tokens after | lost | counted twice | recovered (s after the fault ended) | reconcile | verify | notes |",
             "|---|---|---|---|---|---|---|---|"]
    for r in results:
        notes = []
        if "acked_checked" in r:
            notes.append("%d acknowledged tokens checked on the promoted standby before any resend: %d missing"
                         % (r["acked_checked"], r["acked_lost"]))
            notes.append("POOL OFF on the boards at most %.1f s (from %s s after the kill, tables' --pool-lost-s 3; "
                         "the failover commands took %.1f s, displays back %.1f s after the promotion); the dead "
                         "server back as a standby" % (r["pool_off_s"], r["off_after_kill_s"], r["failover_s"],
                                                      r["back_after_promotion_s"]))
        if "inhibited_while_cut" in r:
            notes.append("inhibited and POOL OFF while cut: %s; playable after: %s"
                         % (r["inhibited_while_cut"], r["playable_after"]))
        lines.append("| %s | %s | %s | %s | %s | %s | %s | %s |" % (
            r["fault"], r["tokens"], r["lost"], r["doubled"], r["recovered_s"], r["reconcile"], r["verify"],
            "; ".join(notes) or "-"))
    for r in results:
        if "pool_off_s" in r:
            lines += ["", "**The primary dies** (the row above): acknowledged tokens lost %d of %d (goal 0); the "
                      "boards showed POOL OFF for %.1f s at most, from %s s after the kill (tables' `--pool-lost-s` "
                      "3) until %.1f s after the promotion. The failover commands were run %.0f s after the kill "
                      "(scripted, for a person's reaction) and took %.1f s: run by a person, POOL OFF lasts until "
                      "the person has run them, and those seconds after." % (
                          r["acked_lost"], r["acked_checked"], r["pool_off_s"], r["off_after_kill_s"],
                          r["back_after_promotion_s"], OPERATOR_S, r["failover_s"])]
    from tabledev.records import HOST_BOOKS, POOL, save_campaign
    lost = sum(r["lost"] if isinstance(r["lost"], int) else 1 for r in results) + \
        sum(r.get("acked_lost", 0) for r in results)
    doubled = sum(r["doubled"] for r in results)
    books = all(r["reconcile"] == "OK" and str(r["verify"]).startswith("OK") for r in results)
    save_campaign("pool_faults", "The linked pool's faults (pool killed, PostgreSQL restarted, the primary killed and "
                  "failed over, a table cut off)", "make faults-pool",
                  [("faults", len(results)), ("tokens lost", lost), ("tokens counted twice", doubled),
                   ("books verify and reconcile after each", "yes" if books else "NO")],
                  "no token lost or counted twice; the books verify and reconcile after each fault",
                  lost == 0 and doubled == 0 and books and all(r["recovered_s"] is not None for r in results),
                  POOL + HOST_BOOKS + ["host_tools/tablectl/pool/health.py", "lab/tabledev/pool_faults.py",
                                       "lab/tabledev/floor.py", "lab/tabledev/pgfailover.py"],
                  "\n".join(lines))


def main(argv=None):
    ap = argparse.ArgumentParser(description="the linked pool's fault runs")
    ap.add_argument("--no-doc", action="store_true")
    ap.add_argument("--only", choices=("killed", "restart", "failover", "cut"), action="append")
    ap.add_argument("--keep", action="store_true", help="leave the temporary folder (logs) for a look")
    args = ap.parse_args(argv)
    folder = tempfile.mkdtemp(prefix="pool-faults-")
    os.chmod(folder, 0o755)
    run = Run(folder, log=lambda t: print(t, flush=True))
    t0 = time.monotonic()
    ok = True
    try:
        run.start()
        steps = [("killed", run.pool_killed), ("restart", run.pg_restarted), ("failover", run.failover),
                 ("cut", run.cut_off)]
        for name, step in steps:
            if args.only and name not in args.only:
                continue
            r = step()
            ok = ok and r["reconcile"] == "OK" and r["verify"].startswith("OK") and r["doubled"] == 0 \
                and r.get("acked_lost", 0) == 0 and r["recovered_s"] is not None
    finally:
        run.stop()
        if args.keep:
            print("kept %s" % folder)
        else:
            shutil.rmtree(folder, ignore_errors=True)
    if not args.no_doc and not args.only:
        write_doc(run.results, time.monotonic() - t0)
    print("pool faults: %s" % ("all OK" if ok else "PROBLEMS (see above)"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
