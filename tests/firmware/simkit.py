"""Drive the virtual board in-process (MicroPython): a fresh state dir, pulse trains, a host
that speaks the real protocol over the board's link buffers."""
import os

from boards.sim import SimBoard
from table import protocol as proto
from table.app import TableApp


class VirtualClockBoard(SimBoard):
    """The board clock is the warp alone (no wall clock): time passes only when a test moves it
    (Rig.run_ms, board.advance), so a test sees the same board time on a busy machine as on a
    quiet one, and a seed replays the same campaign. (SimBoard's own clock is wall time plus the
    warp: on a loaded machine wall time passing between turns was time the test never asked for,
    fewer loop turns in a stretch, more wear-budget refills in a minute.)"""

    def _real_ms(self):
        return 0


def fresh_dir(name):
    """A new directory of this run's own: two runs at once (CI beside a benchmark, two
    developers) must never share a board's flash, or each sees the other's files vanish."""
    suffix = "".join("%02x" % b for b in os.urandom(4))
    path = "/tmp/fwtest-" + name + "-" + suffix
    _rmtree(path)
    os.mkdir(path)
    return path


def _rmtree(path):
    try:
        entries = os.listdir(path)
    except OSError:
        return
    for e in entries:
        full = path + "/" + e
        if os.stat(full)[0] & 0x4000:
            _rmtree(full)
        else:
            os.remove(full)
    os.rmdir(path)


def coin_edges(seat, pulses=1, width_ms=50, gap_ms=50, start_ms=0):
    """Edges of one token: `pulses` active pulses of width_ms separated by gap_ms."""
    edges = []
    t = start_ms
    for _ in range(pulses):
        edges.append((seat, 1, t))
        edges.append((seat, 0, t + width_ms))
        t += width_ms + gap_ms
    return edges, t


class FullNv:
    """Wraps the board's files: every append fails as a full littlefs does (ENOSPC)."""

    def __init__(self, nv):
        self.nv = nv

    def __getattr__(self, name):
        return getattr(self.nv, name)

    def append(self, name, data):
        raise OSError(28)


class Rig:
    """A board, its app and a host end, with a virtual clock stepped explicitly (the board's
    clock moves only by run_ms and advance: VirtualClockBoard)."""

    def __init__(self, name, config=None, key=None):
        self.dir = fresh_dir(name)
        self.boot(config)
        self.host = proto.FrameReader()
        self.events = []
        self.seen = {}
        self.received = 0
        self.replies = {}
        self.next_id = 1
        self.key = key
        self.session = None   # the board's session, from its hello (the trust rule)
        self.counter = -1     # the last counter this host put on a frame in that session
        self.unsigned_events = 0

    def boot(self, config=None):
        self.session = None  # a reboot starts a new session: say hello again before signing
        self.board = VirtualClockBoard(self.dir, "sim-test", 8, 8, "pio")
        self.board.warp_ms = getattr(self, "now", 0) + 1000
        self.app = TableApp(self.board, self.board.now_ms())
        if config:
            self.app.cfg.update(config)
            # Journaled, as the config command does: the raw log's coin records are recomputed
            # from the configuration in the journal.
            self.set_state(cfg=self.app.cfg)
            self.app.build_inputs(self.board.now_ms())

    def set_state(self, **values):
        """Set state keys as a journaled event (a test's shortcut to a state; a coin record on
        the raw log is recomputed from the journaled state, so a change it does not know of
        would make its rebuilt event disagree)."""
        self.app.record(self.board.now_ms(), "test_state", None, values)

    def run_ms(self, ms, step_ms=2):
        end = self.board.now_ms() + ms
        while True:
            now = self.board.now_ms()
            if now >= end:
                break
            self.board.warp_ms += step_ms
            self.app.step(self.board.now_ms())
            self._host_read()

    def _host_read(self):
        if self.board.tx:
            for frame in self.host.feed(bytes(self.board.tx)):
                msg = frame.message
                if msg["t"] == proto.EVENT:
                    self.received += 1
                    if self.key is not None and not frame.mac_ok(self.key):
                        self.unsigned_events += 1
                    if msg["q"] not in self.seen:  # the host keeps one of each (board, seq)
                        self.seen[msg["q"]] = True
                        self.events.append(msg)
                elif msg["t"] == proto.REPLY:
                    self.replies[msg["id"]] = msg
                elif msg["t"] == proto.HELLO:
                    self.session = msg.get(proto.SESSION)
                    self.counter = max(self.counter, msg.get("hn", -1))
            self.board.tx = bytearray()

    def send(self, message, key=None):
        """Unsigned with no key; with one, sealed as the trust rule says (session and counter)."""
        if key is None:
            self.board.rx.extend(proto.encode_frame(message))
            return
        if self.session is None:
            self.hello()
        self.counter += 1
        self.board.rx.extend(proto.sealed_frame(message, key, self.session, self.counter))

    def hello(self):
        self.board.rx.extend(proto.encode_frame(proto.hello()))
        self.run_ms(10)

    def ack_all(self):
        if self.events:
            self.send(proto.ack(max(e["q"] for e in self.events)), self.key)

    def command(self, name, args=None, signed=None, run_ms=20):
        """signed: None = as a host holding the key would (signed when the rig has a key)."""
        cid = self.next_id
        self.next_id += 1
        if signed is None:
            signed = self.key is not None
        self.send(proto.command(cid, name, args or {}), self.key if signed else None)
        self.run_ms(run_ms)
        return self.replies.get(cid)

    def coin(self, seat, pulses=1, width_ms=50, gap_ms=50):
        edges, _ = coin_edges(seat, pulses, width_ms, gap_ms)
        self.board.feed_edges(edges)

    def kinds(self, kind):
        return [e for e in self.events if e["k"] == kind]

    def press(self, key_bit):
        self.board.keys |= 1 << key_bit
        self.run_ms(60)
        self.board.keys &= ~(1 << key_bit)
        self.run_ms(60)
