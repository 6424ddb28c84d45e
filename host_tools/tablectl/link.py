"""The host end of one board's serial link. The serial object is handed in (any pyserial URL or
device: /dev/ttyACM0, a pty path, socket://, loop://), never opened deep inside."""
from __future__ import annotations

import os
import time
from typing import TYPE_CHECKING, Any, Callable, Optional

import serial

from table import protocol as proto
from table import vocab
from .errors import TablectlError

if TYPE_CHECKING:
    from .keys import KeyStore

Message = dict[str, Any]

# How long the host waits for a board's answer. The defaults suit a real board; an emulated Pico
# (`tablectl sim --board pico`) runs 15-50 times slower, so its users raise this for every process
# that talks to it (serve and the CLI alike) rather than the defaults being raised for everyone.
LINK_TIMEOUT_ENV = "TABLECTL_LINK_TIMEOUT_S"


def link_timeout_s(default_s: float) -> float:
    """default_s, unless TABLECTL_LINK_TIMEOUT_S gives the seconds to wait instead."""
    raw = os.environ.get(LINK_TIMEOUT_ENV, "").strip()
    if not raw:
        return default_s
    try:
        value = float(raw)
    except ValueError:
        value = float("nan")
    if not 0 < value <= 86400:
        raise TablectlError("%s=%r: give the seconds to wait for the board, a number above 0 and at most 86400"
                            % (LINK_TIMEOUT_ENV, raw))
    return value


def resend_interval_s(timeout_s: float, default_s: float) -> float:
    """How often a command (or hello) is repeated while waiting: default_s for the default timeouts,
    a tenth of a longer one, so a slow board is not sent a queue of copies it must answer one by one."""
    return max(default_s, timeout_s / 10.0)


def open_port(port: Optional[str], timeout: float = 0.02) -> serial.SerialBase:
    """Open a port by path or pyserial URL, with a message a technician can act on."""
    if not port:
        raise TablectlError("say which board: --port PORT (or set TABLECTL_PORT)")
    try:
        return serial.serial_for_url(port, baudrate=115200, timeout=timeout, write_timeout=2)
    except (serial.SerialException, ValueError, OSError) as exc:
        raise TablectlError("cannot open %s: %s" % (port, exc))


class BoardLink:
    """One board on one port, under the trust rule (firmware/table/protocol.py, docs/SECURITY.md).

    With a key store, a board whose table key the host holds is spoken to only in signed frames,
    and heard only in signed ones: its hello (which names its session), its events (fresh by
    their sequence number) and its replies and heartbeats (this session, a rising counter).
    Anything else from the port is counted in `frames_refused` and never returned.

    A board is keyed for the host when the key store holds its key, when the ledger has heard it
    keyed (known_keyed: a key event, a signed event), or when it signs its hello: the host then
    files nothing of it that its key does not verify. Without that key (`key_missing`: the key
    store lost), every frame but its hello is refused until the key is back or a new one is
    provisioned. A board whose key the host holds and whose hello comes unsigned has lost its key
    (`lost_key_board`: the board's key fault); its frames are refused the same way.
    A key on its way to the board (expect_key) is stored before it is sent and becomes the key
    once a frame the board signed with it is heard (docs/SECURITY.md "Keys")."""

    def __init__(self, ser: Any, keys: Optional[KeyStore] = None,
                 known_keyed: Optional[Callable[[str], bool]] = None) -> None:
        self.ser = ser
        self.keys = keys
        self.known_keyed = known_keyed
        self.key_missing = False
        self.lost_key_board: Optional[str] = None
        self.reader = proto.FrameReader()
        self.frames_wrong_version = 0
        self.frames_refused = 0
        self.last_refusal: Optional[str] = None
        self.board_id: Optional[str] = None
        self.key: Optional[proto.MacKey] = None  # MacKey of the board on the port, once its hello is verified
        self.session: Any = None  # that board's session (from its hello)
        self.sent_counter = -1    # the last counter this host used in that session
        self.board_counter = -1   # the last counter taken from the board in that session
        self.stale_session_seen = False
        self.pending_key: Optional[proto.MacKey] = None
        self.board_acked: Optional[int] = None   # the newest event the board holds acknowledged (its hello)
        self.next_id = int(time.time() * 1000) % 1000000000  # unique across host restarts
        self.replies: dict[int, Message] = {}
        # Called while hello() or command() waits (the CLI's progress line: tablectl.progress).
        self.on_wait: Optional[Callable[[], None]] = None

    def expect_key(self, raw_key: bytes, board: Optional[str] = None) -> None:
        """A provision command carrying this key is about to be sent: stored durably first (the
        key store's .new), then the board's first frame signed with it makes it the board's key."""
        board = board or self.board_id
        if self.keys is not None and board:
            self.keys.set_pending_table_key(board, raw_key)
        self.pending_key = proto.MacKey(raw_key)

    def drop_pending(self, board: Optional[str]) -> None:
        """The board refused the key (a reply signed with its old one): it never held it."""
        self.pending_key = None
        if self.keys is not None and board:
            self.keys.drop_pending(board)

    def _pending_for(self, board: str) -> Optional[proto.MacKey]:
        if self.keys is None:
            return self.pending_key
        raw = self.keys.pending_table_key(board)
        return proto.MacKey(raw) if raw is not None else None

    def _take_pending(self, frame: proto.Frame, board: Optional[str]) -> bool:
        """True when the board signed this frame with the key on its way to it: that key is
        the board's now, in the key store first (the old one kept for old MACs)."""
        pending = self.pending_key
        if pending is None or frame.mac is None or not board or not frame.mac_ok(pending):
            return False
        if self.keys is not None:
            self.keys.promote_pending(board, pending.raw)
        self.key = pending
        self.pending_key = None
        self.key_missing = False
        self.lost_key_board = None
        return True

    def _refused(self, why: str) -> None:
        self.frames_refused += 1
        self.last_refusal = why

    def send(self, message: Message) -> None:
        """Send a message; once the board is keyed, sealed with this session's next counter.
        (A provision goes unsigned: the board takes it only with its switch on, signed or not,
        and a board that lost its key could check no MAC; a hello names no session yet.)"""
        if message.get("t") == proto.HELLO or self.key is None or message.get("c") == vocab.PROVISION:
            self.ser.write(proto.encode_frame(message))
            return
        if self.session is None:
            raise TablectlError("board %s: no session yet (its hello was not heard)" % self.board_id)
        self.sent_counter += 1
        self.ser.write(proto.sealed_frame(dict(message), self.key, self.session, self.sent_counter))

    def _key_for(self, board: Optional[str]) -> Optional[proto.MacKey]:
        if self.keys is None or not board:
            return None
        key = self.keys.table_key(board)
        return proto.MacKey(key) if key is not None else None

    def _board_hello(self, frame: proto.Frame) -> Optional[Message]:
        msg: Message = frame.message
        board = msg.get("b")
        if not isinstance(board, str):
            self._refused("board hello without a board id")
            return None
        key = self._key_for(board)
        self.pending_key = self._pending_for(board)
        if (key is None or not frame.mac_ok(key)) and self._take_pending(frame, board):
            key = self.key  # the board holds the key sent to it (the host stopped before it heard so)
        elif key is not None and not frame.mac_ok(key):
            if frame.mac is None:
                # The board has lost its key (its key fault: a damaged slot): nothing of it is
                # taken, but it is named, so a technician can provision it again.
                self.lost_key_board = board
                self._refused("unsigned hello of keyed board %s: the board has lost its key (provision it "
                              "again, service key switch on)" % board)
            else:
                self._refused("hello of keyed board %s without a valid MAC" % board)
            return None
        elif key is None and (frame.mac is not None or (self.known_keyed is not None and self.known_keyed(board))):
            # Keyed (it signs, or the ledger has heard it keyed) and this host holds no key for
            # it: it is named, and nothing else of it is taken until its key is back.
            if not self.key_missing or board != self.board_id:
                self._refused("board %s is keyed but this host holds no key for it in %s: restore the key store, "
                              "or provision it again (docs/SECURITY.md)" % (board, self.keys.folder if self.keys else "-"))
            self.key_missing = True
        elif self.key is not None and board != self.board_id:
            # A keyed board is on this port: an unsigned hello naming another board is not a swap.
            self._refused("unsigned hello naming %s on %s's port" % (board, self.board_id))
            return None
        session = msg.get(proto.SESSION)
        if session != self.session or board != self.board_id:
            self.sent_counter = -1
        hn = msg.get("hn")
        if isinstance(hn, int) and not isinstance(hn, bool):
            self.sent_counter = max(self.sent_counter, hn)
        n = msg.get(proto.COUNTER)
        self.board_counter = n if isinstance(n, int) else -1
        acked = msg.get("a")
        self.board_acked = acked if isinstance(acked, int) and not isinstance(acked, bool) else None
        if key is not None:
            self.key_missing = False
        self.lost_key_board = None
        self.board_id = board
        self.key = key
        self.session = session
        self.stale_session_seen = False
        return msg

    def _accept(self, frame: proto.Frame) -> Optional[Message]:
        """The trust rule, incoming: returns the message to act on, or None."""
        msg: Message = frame.message
        t = msg.get("t")
        if frame.version != proto.VERSION and t != proto.HELLO:
            # only hello may come in another version's frame; an event not taken is
            # not acknowledged, so the board sends it again
            self.frames_wrong_version += 1
            return None
        if t == proto.HELLO:
            if msg.get("role") == "board":
                return self._board_hello(frame)
            return None
        if frame.mac is not None and (self.key is None or not frame.mac_ok(self.key)):
            # Signed, and not with the key the link holds: the board may answer with the key this
            # host has just sent it (provision), the board on the port or the one that lost its key.
            board = self.board_id or self.lost_key_board
            if self._take_pending(frame, board):
                # Made by the board since it took a key this host made moments ago, so what the
                # frame says of the board's session is the board's own now. A board whose hello
                # was refused (it had lost its key) has no other session this host could trust.
                self.board_id = board
                session = msg.get(proto.SESSION)
                if session is not None and session != self.session:
                    self.session = session
                    self.board_counter = -1
                    self.sent_counter = -1
                    self.stale_session_seen = False
        if self.key is None and frame.mac is not None and self.board_id:
            # A signed frame from a board we held no key for, not with the key this host sent it:
            # another host of ours provisioned it (the key store).
            key = self._key_for(self.board_id)
            if key is None or not frame.mac_ok(key):
                self._refused("signed frame of board %s, whose key this host does not hold" % self.board_id)
                return None
            self.key = key
            self.key_missing = False
        if self.key_missing or self.lost_key_board is not None:
            self._refused("frame of board %s, which is keyed: its key is not on both sides"
                          % (self.board_id or self.lost_key_board))
            return None
        if self.key is None:
            if frame.mac is not None:
                # signed with a key this host does not hold, by a board not yet named (its hello
                # missed): nothing is taken that this host cannot verify
                self._refused("signed frame of board %s, whose key this host does not hold" % msg.get("b"))
                return None
            if t == proto.EVENT and self.board_id is None and isinstance(msg.get("b"), str):
                # an unkeyed bench board whose hello was missed: learn it (and ask for its key)
                key = self._key_for(msg["b"])
                if key is not None or (self.known_keyed is not None and self.known_keyed(msg["b"])):
                    self._refused("event of keyed board %s before its hello" % msg["b"])
                    return None
                self.board_id = msg["b"]
            if t == proto.EVENT and msg.get("b") != self.board_id:
                self._refused("event of board %r on %s's port" % (msg.get("b"), self.board_id))
                return None
            return msg
        if t == proto.EVENT:
            if not frame.mac_ok(self.key):
                self._refused("event without a valid MAC")
                return None
            if msg.get("b") != self.board_id:
                self._refused("signed event naming board %r on %s's port" % (msg.get("b"), self.board_id))
                return None
            # The exact bytes the board signed, kept in the ledger so an audit can check them.
            msg["_raw"] = frame.payload.decode()
            msg["_mac"] = frame.mac.hex()
            return msg
        code, detail = proto.check_sealed(frame, self.key, self.session, self.board_counter)
        if code is not None:
            if code == proto.E_REPLAY and frame.mac_ok(self.key) and msg.get(proto.SESSION) != self.session:
                self.stale_session_seen = True  # the board rebooted: a hello learns its new session
            self._refused("%s: %s" % (code, detail))
            return None
        self.board_counter = detail
        return msg

    def read(self) -> list[Message]:
        """Messages that arrived since the last call and passed the trust rule (waits up to the
        port's timeout)."""
        n = self.ser.in_waiting if hasattr(self.ser, "in_waiting") else 0
        data = self.ser.read(max(n, 1))
        if not data:
            return []
        if self.ser.in_waiting:
            data += self.ser.read(self.ser.in_waiting)
        out: list[Message] = []
        for frame in self.reader.feed(data):
            msg = self._accept(frame)
            if msg is not None:
                out.append(msg)
        return out

    def new_id(self) -> int:
        self.next_id += 1
        return self.next_id

    def hello(self, timeout_s: Optional[float] = None) -> Message:
        """Say hello until the board answers (3 s, or TABLECTL_LINK_TIMEOUT_S); returns its hello."""
        if timeout_s is None:
            timeout_s = link_timeout_s(3.0)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.send(proto.hello())
            end = time.monotonic() + resend_interval_s(timeout_s, 0.3)
            while time.monotonic() < end:
                for msg in self.read():
                    if msg.get("t") == proto.HELLO and msg.get("role") == "board":
                        return msg
                if self.on_wait is not None:
                    self.on_wait()
                if self.lost_key_board is not None:
                    # named, not taken: only a provision goes to it (key_gone_text says so)
                    return {"t": proto.HELLO, "role": "board", "b": self.lost_key_board}
        if self.frames_refused:
            raise TablectlError("the board on the port did not pass the host's checks (%s): is this the board "
                                "whose key this host holds?" % self.last_refusal)
        raise TablectlError("no board answered on the port within %g s: is it powered, flashed and running the "
                            "controller?" % timeout_s)

    def command(self, name: str, args: Optional[dict[str, Any]] = None, timeout_s: Optional[float] = None,
                on_message: Optional[Callable[[Message], None]] = None,
                command_id: Optional[int] = None) -> Message:
        """Send a command and wait for its reply (3 s, or TABLECTL_LINK_TIMEOUT_S), repeating the
        same id: replies are idempotent; each repeat is sealed afresh, with a new counter."""
        if timeout_s is None:
            timeout_s = link_timeout_s(3.0)
        cid = command_id if command_id is not None else self.new_id()
        msg = proto.command(cid, name, args or {})
        deadline = time.monotonic() + timeout_s
        resend_at = 0.0
        while time.monotonic() < deadline:
            if time.monotonic() >= resend_at:
                if self.stale_session_seen:
                    self.hello(max(0.5, deadline - time.monotonic()))
                self.send(msg)
                resend_at = time.monotonic() + resend_interval_s(timeout_s, 0.5)
            for m in self.read():
                if m.get("t") == proto.REPLY and m.get("id") == cid:
                    return m
                if on_message:
                    on_message(m)
            if self.on_wait is not None:
                self.on_wait()
        raise TablectlError("the board did not answer %r within %.0f s" % (name, timeout_s))


def new_key_hex() -> str:
    return os.urandom(32).hex()


def key_gone_text(link: BoardLink, board: Optional[str], folder: str) -> str:
    """One line for a command to a board whose key is not on both sides."""
    if link.key_missing:
        return ("board %s is keyed, and this host holds no key for it in %s: nothing of it is filed or sent. "
                "Restore the key store from its backup, or provision a new key (service key switch on; "
                "docs/SECURITY.md \"A lost key store\")" % (board, folder))
    return ("board %s has lost its key (its key fault): nothing of it is filed or sent. Provision a new key "
            "(service key switch on): `tablectl provision`" % board)


def provision(link: BoardLink, command: Callable[[str, dict[str, Any]], Message]) -> str:
    """A new table key for the board on the link: stored (pending) before it is sent, the board's
    key once the board answers with it; a board that refuses it leaves the old key as it was.
    `command` sends and returns the reply (the service's recorded one, or the link's own).
    Returns the board id. Also the way back for a board that lost its key or whose key this host
    lost (docs/SECURITY.md "Keys"): both need the service key switch on at the board."""
    board = link.board_id or link.lost_key_board
    if board is None:
        raise TablectlError("the board on the port has not said who it is")
    raw = os.urandom(32)
    link.expect_key(raw, board)
    reply = command(vocab.PROVISION, {"key": raw.hex()})
    if not reply.get("ok"):
        link.drop_pending(board)
        raise TablectlError("board refused provision: %s (%s)" % (reply.get("msg"), reply.get("err")))
    if link.key is None or link.key.raw != raw:
        raise TablectlError("board %s took the key but its answer was not signed with it" % board)
    link.board_id = board
    return board
