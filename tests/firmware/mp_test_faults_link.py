"""The board end of the line-noise campaign (issue 8, campaign 2): the real TableApp on
MicroPython, its link bytes on a Unix socket that tablectl.faults corrupts on the way to the
real Ledger (CPython) and back.

`micropython mp_test_faults_link.py pump SOCKET TARGET_EVENTS PULL_AT PULL_MS`
Runs coin-in on 7 seats with lock/unlock rounds until the journal holds TARGET_EVENTS events,
then keeps the link up until the host has acknowledged all of them and prints one JSON line (the
board's own figures) on stdout. When the journal passes PULL_AT events the cable is pulled for
PULL_MS of board time: nothing goes either way (coin-in goes on; the host watch disables it).
Board time is the virtual clock only (2 ms a turn); while the board waits for acks each turn
also waits up to 1 ms for the host, so a slow host does not look silent.
"""
import json
import select
import sys

import mptest
from boards.sim import _unix_connect, _send_all
from mp_test_faults_power import Rng, VirtualClockBoard
from simkit import coin_edges, fresh_dir
from table.app import TableApp

FAST = {"coin_gap_ms": 60, "pulse_min_ms": 10, "pulse_max_ms": 40,
        "jam_ms": 500, "outbox_limit": 2000}


def pump(sock_path, target, pull_at, pull_ms, seed=1):
    import socket
    rng = Rng(seed)
    board = VirtualClockBoard(fresh_dir("noise%d" % seed), "sim-noise", 8, 8, "pio")
    board.warp_ms = 1000
    app = TableApp(board, board.now_ms())
    cfg = dict(app.cfg)
    cfg.update(FAST)
    app._record(board.now_ms(), "config", {"old": {}, "new": FAST}, {"cfg": cfg})
    app.cfg = cfg
    app._build_inputs(board.now_ms())
    sock = _unix_connect(socket, sock_path)
    poller = select.poll()
    poller.register(sock, select.POLLIN)
    pulled_until = None
    pulled_done = False
    dropped_pull = 0
    turn = 0
    host_faults = 0
    while True:
        j = app.journal
        made = j.next_seq - 1
        if not pulled_done and pull_at and made >= pull_at:
            pulled_until = board.now_ms() + pull_ms
            pulled_done = True
        pulled = pulled_until is not None and board.now_ms() < pulled_until
        producing = made < target
        if producing and board.pending_edges() == 0:
            for seat in range(7):
                edges = []
                t = rng.below(30)
                for _ in range(2):
                    e, t = coin_edges(seat, 1, 20, 20, t)
                    edges.extend(e)
                    t += 80 + rng.below(30)
                board.feed_edges(edges)
        waiting = j.unacked_count() >= 256 and not pulled
        # The clock always moves (a lost ack is only repaired by the resend timer), but while
        # waiting for the host each turn also waits up to 1 ms of real time for its bytes.
        board.warp_ms += 2
        turn += 1
        if not waiting:
            if producing and turn % 150 == 0:
                key = "lock" if app.state["base"] == "OPEN" else "unlock"
                app.key_pressed(board.now_ms(), key)
        app.step(board.now_ms())
        if "host" in app.faults:
            host_faults += 1
        if board.tx:
            if pulled:
                dropped_pull += len(board.tx)
            else:
                _send_all(sock, board.tx)
            board.tx = bytearray()
        for _obj, _ev in poller.poll(1 if (waiting or not producing) else 0):
            chunk = sock.recv(65536)
            if not chunk:
                return None
            if not pulled:
                board.rx.extend(chunk)
        if not producing and j.unacked_count() == 0 and not pulled:
            break
    s = app.state
    result = {"events": app.journal.next_seq - 1, "meter": s["meter"], "contrib": s["contrib"],
              "coins": sum(s["c%d" % i] for i in range(7)), "board_ms": board.now_ms(),
              "bytes_dropped_while_pulled": dropped_pull, "turns_with_host_fault": host_faults,
              "frames_bad": app.reader.frames_bad}
    _send_all(sock, b"")
    sock.close()
    return result


def test_pump_module_loads():
    assert callable(pump)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "pump":
        r = pump(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        print(json.dumps(r))
    else:
        mptest.run(globals())
