"""The virtual board's rule: "Pulse trains can be sent in real time or in accelerated time (timestamps supplied
with the edges) so a test can push 100,000 coins quickly." Here they go through the whole
virtual board: bench -> supervisor -> the firmware's counter back end on MicroPython -> decoder,
with glitches and +-20 % jitter on all seven seats, and every token is counted exactly once."""
import os

from tabledev import procs
from tabledev.bench import Bench
from tablectl.link import BoardLink, open_port



def test_one_hundred_thousand_tokens_in_accelerated_time(tmp_path):
    state = str(tmp_path / "board")
    sim, _, port = procs.start_sim(state, str(tmp_path / "sim.log"))
    try:
        bench = Bench(state, timeout_s=120)
        counts = {seat: 100000 // 7 + (1 if seat < 100000 % 7 else 0) for seat in range(7)}
        try:
            bench.coins(counts, width_ms=50, gap_ms=50, coin_gap_ms=100, glitches=350, jitter=0.2, accelerated=True)
        except Exception:
            print("board outputs at failure:", bench.request("outputs"))
            raise
        assert bench.request("outputs")["boots"] == 1  # the board never rebooted under the load
        bench.close()
        ser = open_port(port)
        try:
            link = BoardLink(ser)
            link.hello()
            diag = link.command("diag")
        finally:
            ser.close()
        assert diag["coins"] == [counts[s] for s in range(7)], diag["coins"]
        assert sum(diag["coins"]) == 100000
        assert all(g > 0 for g in diag["glitches"])  # glitches were sent, seen, and never counted
    finally:
        procs.stop(sim)
        console = os.path.join(state, "console.log")
        if os.path.exists(console):
            print(open(console).read()[-3000:])
