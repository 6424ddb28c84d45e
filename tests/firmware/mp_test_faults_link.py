"""The board end of the line-noise campaign (campaign 2 of docs/RELIABILITY.md): the real TableApp on
MicroPython, its link bytes on a Unix socket that tabledev.faults corrupts on the way to the
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
from table import protocol as proto
from table.app import TableApp

FAST = {"coin_gap_ms": 60, "pulse_min_ms": 10, "pulse_max_ms": 40,
        "jam_ms": 500, "outbox_limit": 2000}


class SocketLink:
    """The campaign's link: a Unix socket to tabledev.faults (CPython), which corrupts the bytes
    both ways and records the events in the real Ledger."""

    def __init__(self, sock_path):
        import socket
        self.sock = _unix_connect(socket, sock_path)
        self.poller = select.poll()
        self.poller.register(self.sock, select.POLLIN)

    def send(self, data):
        _send_all(self.sock, data)

    def recv(self, wait_ms):
        """Bytes from the host (b"" if none came within wait_ms), or None once it has hung up."""
        for _obj, _ev in self.poller.poll(wait_ms):
            chunk = self.sock.recv(65536)
            return chunk if chunk else None
        return b""

    def close(self):
        _send_all(self.sock, b"")
        self.sock.close()


def pump(link, target, pull_at, pull_ms, seed=1, max_board_ms=None):
    """Returns the board's figures, or None if the host hung up. max_board_ms bounds the run in
    board time: past it the pump stops and reports what is still unacknowledged (a host that
    never acknowledges everything is a failure to report, not a reason to loop forever)."""
    rng = Rng(seed)
    board = VirtualClockBoard(fresh_dir("noise%d" % seed), "sim-noise", 8, 8, "pio")
    board.warp_ms = 1000
    app = TableApp(board, board.now_ms())
    cfg = dict(app.cfg)
    cfg.update(FAST)
    app.record(board.now_ms(), "config", {"old": {}, "new": FAST}, {"cfg": cfg})
    app.cfg = cfg
    app.build_inputs(board.now_ms())
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
                link.send(bytes(board.tx))
            board.tx = bytearray()
        chunk = link.recv(1 if (waiting or not producing) else 0)
        if chunk is None:
            return None
        if chunk and not pulled:
            board.rx.extend(chunk)
        if not producing and j.unacked_count() == 0 and not pulled:
            break
        if max_board_ms is not None and board.now_ms() > max_board_ms:
            break
    s = app.state
    result = {"events": app.journal.next_seq - 1, "meter": s["meter"], "contrib": s["contrib"],
              "coins": sum(s["c%d" % i] for i in range(7)), "board_ms": board.now_ms(),
              "bytes_dropped_while_pulled": dropped_pull, "turns_with_host_fault": host_faults,
              "frames_bad": app.link.reader.frames_bad, "unacked": app.journal.unacked_count()}
    link.close()
    return result


# ---- the pump against a host in this process --------------------------------------------------
class LedgerHost:
    """A host in the same interpreter, speaking the real protocol (table.protocol, the one copy
    both sides run): it keeps every event whose seq is the next one it expects (like the Ledger),
    acknowledges the last one it holds after each read, says hello first and sends a heartbeat
    every `heartbeat_every` reads. `corrupt` (a set of send numbers) flips one bit in those
    sends from the board, as the noisy line does."""

    def __init__(self, corrupt=(), heartbeat_every=200):
        self.reader = proto.FrameReader()
        self.events = []
        self.out = bytearray(proto.encode_frame(proto.hello()))
        self.sends = 0
        self.reads = 0
        self.corrupt = set(corrupt)
        self.heartbeat_every = heartbeat_every
        self.closed = False

    def send(self, data):
        self.sends += 1
        if self.sends in self.corrupt:
            data = bytearray(data)
            data[len(data) // 2] ^= 0x10
        got = False
        for f in self.reader.feed(data):
            m = f.message
            if m.get("t") == proto.EVENT:
                got = True
                if m["q"] == len(self.events) + 1:
                    self.events.append(m)
        if got:
            self.out.extend(proto.encode_frame(proto.ack(len(self.events))))

    def recv(self, wait_ms):
        self.reads += 1
        if self.reads % self.heartbeat_every == 0:
            self.out.extend(proto.encode_frame(proto.heartbeat()))
        data = bytes(self.out)
        self.out = bytearray()
        return data

    def close(self):
        self.closed = True


SEED_CENTS = 10000000
BOUND_MS = 10 * 60 * 1000  # board time; 300 events take under a minute of it


def _delivered_exactly(host, r):
    """Every durable event reached the host once, in order, and its books match the board's."""
    assert r is not None, "the host hung up"
    assert r["unacked"] == 0 and host.closed
    assert [e["q"] for e in host.events] == list(range(1, r["events"] + 1))
    coins = [e for e in host.events if e["k"] == "coin"]
    assert len(coins) == r["coins"] and r["coins"] > 0
    assert SEED_CENTS + sum(e["to_meter"] for e in coins) == r["meter"]


def test_pump_delivers_every_event_once_in_order():
    host = LedgerHost()
    r = pump(host, 300, 0, 0, max_board_ms=BOUND_MS)
    assert r["events"] >= 300
    _delivered_exactly(host, r)
    assert r["bytes_dropped_while_pulled"] == 0 and r["turns_with_host_fault"] == 0
    assert r["frames_bad"] == 0 and host.reader.frames_bad == 0


def test_corrupted_frames_are_dropped_and_resent():
    host = LedgerHost(corrupt=range(5, 400, 9))
    r = pump(host, 300, 0, 0, max_board_ms=BOUND_MS)
    assert host.reader.frames_bad > 0
    _delivered_exactly(host, r)


def test_pulled_cable_raises_the_host_fault_and_the_link_recovers():
    # FAST leaves host_timeout_ms at its default (10 s): a 20-s pull must trip it
    host = LedgerHost()
    r = pump(host, 300, 100, 20000, max_board_ms=BOUND_MS)
    assert r["bytes_dropped_while_pulled"] > 0
    assert r["turns_with_host_fault"] > 0
    faults = [e for e in host.events if e["k"] == "fault" and e.get("code") == "host"]
    assert faults, "no host-fault event reached the host"
    _delivered_exactly(host, r)


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "pump":
        r = pump(SocketLink(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]))
        print(json.dumps(r))
    else:
        mptest.run(globals())
