# Peak heap of the whole firmware: a TableApp on a SimBoard (7 seats, every task of step()),
# a 10-minute session in accelerated time: tokens on every seat each round, lock/unlock keys, bet
# spots, host acks and heartbeats, status commands. Run under micropython -X heapsize=128K.
# argv: session_s. Prints one JSON line.
import gc
import json
import sys

import micropython
from fuzzkit import XorShift
from pulsegen import Train
from simkit import Rig
from table import protocol as proto

session_ms = int(sys.argv[1]) * 1000
gc.collect()
base_alloc = gc.mem_alloc()
rig = Rig("heap")
rng = XorShift(5)
SEATS = 7
LOCK, UNLOCK = 0, 1
rounds = 0
coins = 0
start = rig.board.now_ms()
min_free = gc.mem_free()
while rig.board.now_ms() - start < session_ms:
    edges = []
    for seat in range(SEATS):
        tr = Train(rng, 1, 1, (20, 50, 100)[seat % 3], 50, 500, start_ms=rng.below(200))
        edges += [(seat, lv, t) for t, lv in tr.edges]
    rig.board.feed_edges(edges)
    for seat in range(SEATS):
        rig.board.spots |= 1 << (seat * 3 + rng.below(3))
    rig.run_ms(800, 4)
    rig.ack_all()
    rig.press(LOCK)
    rig.board.spots = 0
    rig.run_ms(200, 4)
    rig.command("status")
    rig.press(UNLOCK)
    rig.ack_all()
    rig.run_ms(100, 4)
    rounds += 1
    if "-v" in sys.argv:
        gc.collect()
        print("round", rounds, gc.mem_alloc(), gc.mem_free())
    coins += SEATS
    f = gc.mem_free()
    if f < min_free:
        min_free = f
    # the host's list of received events is the test rig's, not the firmware's: keep it short
    # (the rig's host bookkeeping shares this heap: keep only what the next ack needs)
    if rig.events:
        last = rig.events[-1]
        rig.events = [last]
        rig.seen = {last["q"]: True}
    rig.replies = {}
gc.collect()
out = {"firmware_alloc_after_gc": gc.mem_alloc() - base_alloc, "rounds": rounds, "coins_fed": coins, "seat_tokens": [rig.app.state["c%d" % i] for i in range(SEATS)],
       "session_s": (rig.board.now_ms() - start) // 1000, "peak_bytes": micropython.mem_peak() if hasattr(micropython, "mem_peak") else None,
       "alloc_after_gc": gc.mem_alloc(), "heap_total": gc.mem_alloc() + gc.mem_free(), "min_free_seen": min_free,
       "base_alloc": base_alloc, "meter": rig.app.state["meter"], "unacked": rig.app.journal.unacked_count(),
       "faults": rig.app.faults}
print(json.dumps(out))
