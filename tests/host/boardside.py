"""The board's end of a link, for the host's unit tests: frames made with the real protocol
(table.protocol: COBS, CRC, HMAC, the trust rule's session and counter), sent down a real
pseudo-terminal that the host opens with pyserial like any board's port.

It is not a model of the firmware (the firmware runs on MicroPython in tests/firmware and
tests/e2e); it is a peer whose every frame a test chooses, so a test can send exactly the frame
whose handling it specifies: a hello of a given session, an event signed with the wrong key, a
reply of an earlier boot, a counter used twice.
"""
import os
import select
import threading
import time
import tty

from table import protocol as proto
from table import vocab


def signed_event(key, seq, kind="coin", board="b1", **fields):
    """An event as BoardLink hands it to the ledger: the board's message plus the exact bytes it
    signed ("_raw") and its MAC ("_mac"), made by encoding a real frame and reading it back."""
    msg = {"t": proto.EVENT, "b": board, "k": kind, "q": seq}
    msg.update(fields)
    reader = proto.FrameReader()
    [frame] = reader.feed(proto.encode_frame(msg, key))
    event = dict(frame.message)
    if frame.mac is not None:
        event["_raw"] = frame.payload.decode()
        event["_mac"] = frame.mac.hex()
    return event


class PtyBoard:
    """A pseudo-terminal pair: the host opens `port` (the slave's path); this object speaks on
    the master side. Frames the host sends are collected by a reader thread and checked the way
    a board checks them (MAC, session, counter) when the board has a key."""

    def __init__(self, board_id="b1", key=None, session=1001):
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)  # no echo, no line editing: bytes pass as they are
        self.port = os.ttyname(self.slave)
        self.board_id = board_id
        self.key = proto.as_key(key)
        self.session = session
        self.counter = 0          # the last counter this board used in its session
        self.host_counter = -1    # the last counter it took from the host
        self.reader = proto.FrameReader()
        self.received = []        # messages from the host that passed the board's checks
        self.refused = []         # (reason, message) of those that did not
        self.on_command = None    # called with each accepted command message, from the reader thread
        self.on_message = None    # called with every accepted message first, from the reader thread
        self.answers_hello = False  # answer each host hello with this board's hello (as a board does)
        self._cond = threading.Condition()
        self._stop = False
        self._thread = threading.Thread(target=self._read_loop, daemon=True)
        self._thread.start()

    # ------------------------------------------------------------------ sending
    def write(self, data):
        os.write(self.master, data)

    def frame(self, message, key="board", session="board", counter=None):
        """Bytes of one frame from this board: sealed under the trust rule when it has a key
        (key=None sends it unsigned; session/counter may be given to forge an old one)."""
        key = self.key if key == "board" else proto.as_key(key)
        message = dict(message)
        if key is None:
            return proto.encode_frame(message)
        if message.get("t") in (proto.EVENT, proto.HELLO):
            return proto.encode_frame(message, key)  # fresh by their sequence number / a new session
        if counter is None:
            self.counter += 1
            counter = self.counter
        return proto.sealed_frame(message, key, self.session if session == "board" else session, counter)

    def send(self, message, **how):
        self.write(self.frame(message, **how))

    def hello(self, acked_seq=None, host_counter=None, **how):
        if host_counter is None and self.host_counter >= 0:
            host_counter = self.host_counter  # as a board does: the host goes on above it
        self.send(proto.hello(self.board_id, "test-fw", 1, role="board", session=self.session,
                              host_counter=host_counter, acked_seq=acked_seq), **how)

    def event(self, seq, kind="coin", board=None, **fields):
        """An event frame (signed with the board's key when it has one; key=... to forge)."""
        how = {k: fields.pop(k) for k in ("key",) if k in fields}
        msg = {"t": proto.EVENT, "b": board or self.board_id, "k": kind, "q": seq}
        msg.update(fields)
        self.send(msg, **how)

    def reply(self, command_id, ok=True, **fields):
        msg = proto.reply_ok(command_id, fields) if ok else proto.reply_error(
            command_id, fields.pop("err", proto.E_STATE), fields.pop("msg", "refused"))
        self.send(msg)

    # ------------------------------------------------------------------ receiving
    def _read_loop(self):
        while not self._stop:
            ready, _, _ = select.select([self.master], [], [], 0.05)
            if not ready:
                continue
            try:
                data = os.read(self.master, 4096)
            except OSError:
                return
            for frame in self.reader.feed(data):
                msg = frame.message
                why = self._check(frame)
                if why is None and self.on_message is not None:
                    self.on_message(msg)  # before a waiting test sees the message
                with self._cond:
                    if why is None:
                        self.received.append(msg)
                    else:
                        self.refused.append((why, msg))
                    self._cond.notify_all()
                if why is not None:
                    continue
                if msg.get("t") == proto.HELLO and self.answers_hello:
                    self.hello()
                if msg.get("t") == proto.COMMAND and self.on_command is not None:
                    self.on_command(msg)

    def _check(self, frame):
        """The board's half of the trust rule: with a key, every frame but a hello and a
        provision command is signed, of this session, with a counter above the last."""
        msg = frame.message
        if self.key is None or msg.get("t") == proto.HELLO or msg.get("c") == vocab.PROVISION:
            return None
        code, detail = proto.check_sealed(frame, self.key, self.session, self.host_counter)
        if code is not None:
            return "%s: %s" % (code, detail)
        self.host_counter = detail
        return None

    def wait_for(self, predicate, timeout_s=5.0, what="a frame from the host"):
        """The first received message that satisfies predicate (waits for it)."""
        deadline = time.monotonic() + timeout_s
        seen = 0
        with self._cond:
            while True:
                for msg in self.received[seen:]:
                    if predicate(msg):
                        return msg
                seen = len(self.received)
                left = deadline - time.monotonic()
                if left <= 0:
                    raise AssertionError("no %s within %.0f s; received %r, refused %r"
                                         % (what, timeout_s, self.received[-10:], self.refused[-5:]))
                self._cond.wait(left)

    def messages(self, t):
        with self._cond:
            return [m for m in self.received if m.get("t") == t]

    def close(self):
        self._stop = True
        self._thread.join(2)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass
