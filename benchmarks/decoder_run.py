# The decoder workload of benchmarks/bench_decoder.py; runs unchanged on MicroPython and CPython.
# argv: coins seed. Prints one JSON line.
import json
import sys
import time

from boards.sim import SimBoard
from fuzzkit import XorShift
from pulsegen import Train, decode_direct, decode_interleaved
from table.pulse import CoinDecoder

try:
    ticks_us = time.ticks_us
    diff = time.ticks_diff
except AttributeError:
    def ticks_us():
        return int(time.perf_counter() * 1000000)

    def diff(a, b):
        return a - b

SEATS = 7
coins_total = int(sys.argv[1])
seed = int(sys.argv[2])
rng = XorShift(seed)
per_seat = [coins_total // SEATS + (1 if s < coins_total % SEATS else 0) for s in range(SEATS)]
widths = (20, 50, 100)
CHUNK = 500  # tokens per seat per batch of edges (the whole run at once does not fit a small heap)
dec_direct = [CoinDecoder(1, 10, 150, 300, 2000) for _ in range(SEATS)]
dec_edge = [CoinDecoder(1, 10, 150, 300, 2000) for _ in range(SEATS)]
board = SimBoard("/tmp", "sim-bench", 8, 8, "pio")
direct = [0] * SEATS
inter = [0] * SEATS
left = list(per_seat)
edges = glitches = 0
us_direct = us_edge = 0
t_start = 0
while max(left) > 0:
    trains = []
    for s in range(SEATS):
        n = min(CHUNK, left[s])
        left[s] -= n
        trains.append(Train(rng, n, 1, widths[s % 3], 50, 500, glitch_every=3, bounce_every=2,
                            start_ms=t_start + rng.below(500)))
    edges += sum(len(t.edges) for t in trains)
    glitches += sum(t.glitches for t in trains)
    # 1. CoinDecoder fed completed pulses (what the PIO / PCNT back ends deliver)
    t0 = ticks_us()
    for s in range(SEATS):
        direct[s] += decode_direct(dec_direct[s], trains[s])[0]
    us_direct += diff(ticks_us(), t0)
    # 2. the SimPulseSource edge path, all seats at once (as TableApp polls them)
    t0 = ticks_us()
    got = decode_interleaved(board.pulse_sources[:SEATS], dec_edge, trains)
    us_edge += diff(ticks_us(), t0)
    for s in range(SEATS):
        inter[s] += got[s]
    t_start = max(t.end_ms for t in trains) + 20000
    trains = None

# 3. pulses_per_coin = 3 (a multi-pulse acceptor), direct, a tenth of the tokens
rng3 = XorShift(seed + 3)
trains3 = [Train(rng3, max(1, per_seat[s] // 10), 3, widths[s % 3], 50, 500) for s in range(SEATS)]
direct3 = [decode_direct(CoinDecoder(3, 10, 150, 300, 2000), tr)[0] for tr in trains3]

print(json.dumps({
    "coins_sent": sum(per_seat), "edges": edges, "glitches_and_bounces": glitches,
    "miscount_direct": sum(abs(direct[s] - per_seat[s]) for s in range(SEATS)),
    "miscount_edge_path": sum(abs(inter[s] - per_seat[s]) for s in range(SEATS)),
    "coins_sent_ppc3": sum(t.coins for t in trains3),
    "miscount_ppc3": sum(abs(direct3[s] - trains3[s].coins) for s in range(SEATS)),
    "us_per_edge_direct": us_direct / edges, "us_per_edge_edge_path": us_edge / edges,
}))
