# Peak heap of the whole firmware: a TableApp on a SimBoard (7 seats, every task of step()),
# a 10-minute session in accelerated time: tokens on every seat each round, lock/unlock keys, bet
# spots, host acks and heartbeats, status commands. Run under micropython -X heapsize=128K.
# The host's side is kept out of this heap on purpose: it does not decode the board's frames
# (that is the host's memory, not the board's); it acknowledges through real ack frames on the
# link, up to the newest sequence the board has written, as a host that had read them would.
# argv: session_s. Prints one JSON line.
import gc
import json
import sys

from boards.sim import SimBoard
from table import protocol as proto
from table.app import TableApp

session_ms = int(sys.argv[1]) * 1000
verbose = "-v" in sys.argv
gc.collect()
base_alloc = gc.mem_alloc()

root = "/tmp/fw-heap-session"
try:
    import os
    for sub in ("/data", ""):
        try:
            for name in os.listdir(root + sub):
                try:
                    os.remove(root + sub + "/" + name)
                except OSError:
                    pass
        except OSError:
            pass
    os.mkdir(root)
except OSError:
    pass

board = SimBoard(root, "sim-heap", 8, 8, "pio")
board.warp_ms = 1000
app = TableApp(board, board.now_ms())
SEATS = 7
WIDTHS = (20, 50, 100)
state = 12345


def rand(n):
    global state
    state = (state * 1103515245 + 12345) & 0x7FFFFFFF
    return state % n


def run_ms(ms):
    end = board.now_ms() + ms
    while board.now_ms() < end:
        board.warp_ms += 4
        app.step(board.now_ms())
        board.tx = bytearray()  # the line carries them away to the host


def ack():
    board.rx.extend(proto.encode_frame(proto.ack(app.journal.next_seq - 1)))


def press(bit):
    board.keys |= 1 << bit
    run_ms(60)
    board.keys &= ~(1 << bit)
    run_ms(60)


rounds = 0
command_id = 1
start = board.now_ms()
min_free = gc.mem_free()
while board.now_ms() - start < session_ms:
    edges = []
    for seat in range(SEATS):
        t = rand(200)
        edges.append((seat, 1, t))
        edges.append((seat, 0, t + WIDTHS[seat % 3]))
        board.spots |= 1 << (seat * 3 + rand(3))
    board.feed_edges(edges)
    edges = None
    run_ms(800)
    ack()
    press(0)
    board.spots = 0
    run_ms(200)
    board.rx.extend(proto.encode_frame(proto.command(command_id, "status", {})))
    command_id += 1
    press(1)
    ack()
    run_ms(100)
    rounds += 1
    f = gc.mem_free()
    if f < min_free:
        min_free = f
    if verbose:
        gc.collect()
        print("round", rounds, gc.mem_alloc(), gc.mem_free())
gc.collect()
out = {"firmware_alloc_after_gc": gc.mem_alloc() - base_alloc, "rounds": rounds,
       "coins_fed": rounds * SEATS, "seat_tokens": [app.state["c%d" % i] for i in range(SEATS)],
       "session_s": (board.now_ms() - start) // 1000,
       "alloc_after_gc": gc.mem_alloc(), "heap_total": gc.mem_alloc() + gc.mem_free(), "min_free_seen": min_free,
       "base_alloc": base_alloc, "meter": app.state["meter"], "unacked": app.journal.unacked_count(),
       "faults": app.faults}
print(json.dumps(out))
