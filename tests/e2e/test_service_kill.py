"""Killing the service with SIGKILL during a burst of events loses no acknowledged event and
records none twice: the board resends what was never acknowledged, the ledger's
(board, seq) key refuses what it already holds, and the hash chain stays whole."""
import signal
import sqlite3
import subprocess
import time

from tabledev import procs
from tabledev.bench import Bench
from tablectl.ledger import Ledger

TABLECTL = procs.TABLECTL


TOKENS = 40


def test_sigkill_during_a_burst_loses_nothing_and_doubles_nothing(tmp_path):
    state = str(tmp_path / "board")
    db = str(tmp_path / "ledger.db")
    sim, _, port = procs.start_sim(state, str(tmp_path / "sim.log"))
    serve = None
    try:
        serve, _ = procs.start_serve(port, db, str(tmp_path / "serve1.log"))
        bench = Bench(state)
        # A burst: every seat's acceptor fires TOKENS tokens (1 credited, the rest logged as extra)
        # at speed, and the service is killed as soon as the burst is being recorded (a fixed
        # sleep let a quiet machine record the whole burst before the kill).
        for seat in range(7):
            bench.coin(seat, count=TOKENS, coin_gap_ms=120, accelerated=True, wait=False)
        deadline = time.time() + 30
        while time.time() < deadline:
            try:
                rows = sqlite3.connect(db).execute("SELECT count(*) FROM ledger").fetchone()[0]
            except sqlite3.OperationalError:
                rows = 0
            if rows >= 20:
                break
            time.sleep(0.02)
        procs.stop(serve, signal.SIGKILL)  # mid-burst, no goodbye
        recorded_at_kill = sqlite3.connect(db).execute("SELECT count(*) FROM ledger").fetchone()[0]
        bench.wait_idle(timeout_s=60)
        serve, _ = procs.start_serve(port, db, str(tmp_path / "serve2.log"))
        deadline = time.time() + 60
        status = None
        while time.time() < deadline:
            out = subprocess.run(TABLECTL + ["status", "--db", db, "--json"], capture_output=True, text=True)
            if out.returncode == 0:
                import json
                status = json.loads(out.stdout)
                if status["unacked_events"] == 0:
                    break
            time.sleep(0.3)
        assert status is not None and status["unacked_events"] == 0, status
        ledger = Ledger(db)
        seqs = [e["seq"] for e in ledger.events() if e["seq"] is not None]
        assert seqs == list(range(1, status["next_event_seq"])), "gaps or duplicates in the ledger"
        assert len([e for e in ledger.events(kinds=["coin"])]) == 7
        assert len([e for e in ledger.events(kinds=["extra_coin"])]) == 7 * (TOKENS - 1)
        count, problems = ledger.verify()
        assert problems == []
        assert recorded_at_kill < count  # the kill really fell inside the burst
        bench.close()
    finally:
        procs.stop(serve)
        procs.stop(sim)
