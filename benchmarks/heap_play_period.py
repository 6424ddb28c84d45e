# Peak heap of the whole firmware: a TableApp on a SimBoard (7 seats, every task of step()),
# a 10-minute play period in accelerated time: tokens on every seat each round, lock/unlock keys, bet
# spots, host acks and heartbeats, status commands. Run under micropython -X heapsize=128K.
# The host's side is kept out of this heap on purpose: it does not decode the board's frames
# (that is the host's memory, not the board's); it acknowledges through real ack frames on the
# link, up to the newest sequence the board has written, as a host that had read them would.
# The board is provisioned (the trust rule on): every frame it sends carries a MAC, and the host's
# acks and commands come sealed with the board's session and a counter, as in production.
# argv: play_period_s. Prints one JSON line.
import gc
import json
import sys

from boards.sim import SimBoard
from table import protocol as proto
from table.app import TableApp

play_period_ms = int(sys.argv[1]) * 1000
verbose = "-v" in sys.argv
gc.collect()
base_alloc = gc.mem_alloc()

root = "/tmp/fw-heap-play-period"
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

KEY = bytes(range(32))
board = SimBoard(root, "sim-heap", 8, 8, "pio")
board.nv.write("key.bin", KEY + proto.crc32(KEY).to_bytes(4, "little"))
board.warp_ms = 1000
# The line carries each frame away as it is written (a UART or USB endpoint does not pile frames up
# in the board's heap); the host side of the line is not the board's memory.
board.link_write = lambda data: None
app = TableApp(board, board.now_ms())
host_key = proto.MacKey(KEY)
host_counter = [0]
session = app.link.session  # what the board's hello announces
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


def send(message):
    host_counter[0] += 1
    board.rx.extend(proto.sealed_frame(message, host_key, session, host_counter[0]))


def ack():
    send(proto.ack(app.journal.next_seq - 1))


def press(bit):
    board.keys |= 1 << bit
    run_ms(60)
    board.keys &= ~(1 << bit)
    run_ms(60)


rounds = 0
command_id = 1
start = board.now_ms()
min_free = gc.mem_free()
while board.now_ms() - start < play_period_ms:
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
    send(proto.command(command_id, "status", {}))
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
       "play_period_s": (board.now_ms() - start) // 1000,
       "alloc_after_gc": gc.mem_alloc(), "heap_total": gc.mem_alloc() + gc.mem_free(), "min_free_seen": min_free,
       "base_alloc": base_alloc, "meter": app.state["meter"], "unacked": app.journal.unacked_count(),
       "faults": app.faults, "refused": app.link.frames_refused}
print(json.dumps(out))
