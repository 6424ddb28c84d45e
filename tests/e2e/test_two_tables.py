"""One service, two tables (`tablectl serve --port PORT --port PORT2`): each board's
events go to the ledger under its own board id, in its own sequence, and a technician picks the
table with --board."""
import json
import subprocess
import time

from tabledev import procs
from tabledev.bench import Bench
from tablectl.ledger import Ledger


def test_one_service_keeps_the_books_of_two_tables(tmp_path):
    db = str(tmp_path / "casino.db")
    sims = []
    serve = None
    try:
        ports = []
        for name in ("a", "b"):
            sim, _, port = procs.start_sim(str(tmp_path / name), str(tmp_path / (name + ".log")),
                                           extra=["--board-id", "table-" + name])
            sims.append(sim)
            ports.append(port)
        serve, _ = procs.start(["serve", "--port", ports[0], "--port", ports[1], "--db", db],
                               str(tmp_path / "serve.log"))
        assert serve.stdout.readline().startswith("serving")
        time.sleep(0.5)
        Bench(str(tmp_path / "a")).coin(0)
        bench_b = Bench(str(tmp_path / "b"))
        bench_b.coin(2)
        bench_b.coin(3)
        time.sleep(1.0)
        meters = {}
        for board in ("table-a", "table-b"):
            out = subprocess.run(procs.TABLECTL + ["meters", "--db", db, "--board", board, "--json"],
                                 capture_output=True, text=True, timeout=30)
            assert out.returncode == 0, out.stderr
            meters[board] = json.loads(out.stdout)
        assert meters["table-a"]["tokens_per_seat"][:4] == [1, 0, 0, 0]
        assert meters["table-b"]["tokens_per_seat"][:4] == [0, 0, 1, 1]
        ledger = Ledger(db, readonly=True)
        for board, coins in (("table-a", 1), ("table-b", 2)):
            seqs = [e["seq"] for e in ledger.events(board) if e["seq"] is not None]
            assert seqs == list(range(1, len(seqs) + 1))
            assert len(list(ledger.events(board, ["coin"]))) == coins
    finally:
        procs.stop(serve)
        for sim in sims:
            procs.stop(sim)
