"""A table's side of the linked pool (`tablectl serve --pool URL`).

The board counts and journals every token itself, and the table's ledger holds each one (by
board and sequence number) before the board is acknowledged. PoolLink forwards the ledger's
token events (`coin`) to the pool from the newest one the pool says it holds, so a pool that was
away gets, when it is back, the table's journal replayed from where it stopped: nothing is lost,
and the pool counts each (board, seq) once, so nothing is counted twice.

It shows the pool's amount on the board (the `linked` command), and when the pool has not been
heard for `lost_after_s` it tells the board the pool is lost: the board inhibits its acceptors
and shows POOL OFF (the New York rule for linked table progressives: "tables become unplayable while communication is lost") until an
amount comes again.
"""
import json
import socket
import sqlite3
import threading
import time

from ..errors import TablectlError
from .server import parse_url

BATCH_TOKENS = 500


class PoolError(TablectlError):
    """The pool answered, and refused (not a lost link)."""


class PoolClient:
    """One connection to the pool: a request, then its reply. Reconnects on the next request
    after a failure; a failure of the link raises ConnectionError."""

    def __init__(self, url, timeout_s=10.0):
        self.family, self.addr = parse_url(url)
        self.timeout_s = timeout_s
        self.sock = None
        self.buf = b""
        self.lock = threading.Lock()

    def close(self):
        if self.sock is not None:
            try:
                self.sock.close()
            except OSError:
                pass
        self.sock = None
        self.buf = b""

    def request(self, op, **fields):
        with self.lock:
            try:
                if self.sock is None:
                    s = socket.socket(self.family, socket.SOCK_STREAM)
                    s.settimeout(self.timeout_s)
                    s.connect(self.addr)
                    if self.family == socket.AF_INET:
                        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    self.sock = s
                fields["op"] = op
                self.sock.sendall(json.dumps(fields).encode() + b"\n")
                while b"\n" not in self.buf:
                    chunk = self.sock.recv(65536)
                    if not chunk:
                        raise ConnectionError("the pool closed the connection")
                    self.buf += chunk
                line, self.buf = self.buf.split(b"\n", 1)
            except (OSError, ConnectionError) as exc:
                self.close()
                raise ConnectionError("pool unreachable: %s" % exc)
        reply = json.loads(line)
        if not reply.get("ok"):
            raise PoolError(reply.get("error", "the pool refused %s" % op))
        return reply


class PoolLink(threading.Thread):
    def __init__(self, url, db_path, sessions, log, lost_after_s=10.0, poll_s=0.2):
        threading.Thread.__init__(self, daemon=True)
        self.url = url
        self.db_path = db_path
        self.sessions = sessions
        self.log = log
        self.lost_after_s = lost_after_s
        self.poll_s = poll_s
        self.client = PoolClient(url)
        self.hit_client = PoolClient(url)
        self.wake_event = threading.Event()
        self.stop_event = threading.Event()
        self.boards = {}  # board -> state of its link to the pool
        self.started = time.monotonic()
        self.forwarded = 0
        self.db = None
        self.lock = threading.Lock()  # one board's forwarding at a time (the loop, or a hit)

    def wake(self):
        self.wake_event.set()

    def _pending(self, board, after_seq):
        if self.db is None:
            self.db = sqlite3.connect("file:%s?mode=ro" % self.db_path, uri=True, timeout=5,
                                      isolation_level=None, check_same_thread=False)
        rows = self.db.execute("SELECT seq, body, board_mac FROM ledger WHERE board=? AND kind='coin' AND seq>? "
                               "ORDER BY seq LIMIT ?", (board, after_seq, BATCH_TOKENS)).fetchall()
        out = []
        for seq, body, mac in rows:
            try:
                ev = json.loads(body)
            except ValueError:
                ev = {}
            out.append({"q": seq, "seat": ev.get("seat"), "round": ev.get("round"), "ms": ev.get("ms"),
                        "raw": body, "mac": mac})
        return out

    def run(self):
        while not self.stop_event.is_set():
            self.wake_event.wait(self.poll_s)
            self.wake_event.clear()
            for s in list(self.sessions):
                if s.board_id is None or not s.connected:
                    continue
                try:
                    with self.lock:
                        self._serve_board(s)
                except Exception as exc:  # noqa: one table's trouble never stops the others'
                    self.log("pool link: %s: %s" % (s.board_id, exc))

    def _serve_board(self, s):
        board = s.board_id
        st = self.boards.setdefault(board, {"last_seq": None, "shown": None, "lost": False,
                                            "last_ok": self.started, "session": None, "error": None})
        session = s.link.session if s.link is not None else None
        if session != st["session"]:
            st["session"] = session  # the board rebooted: what it shows is its own meter again
            st["shown"] = None
            if st["lost"]:
                st["lost"] = False  # say it again below
        meter = None
        try:
            if st["last_seq"] is None:
                info = self.client.request("hello", board=board)
                st["last_seq"] = info["last_seq"]
                meter = info.get("meter_cents")
            while True:
                pending = self._pending(board, st["last_seq"])
                if not pending:
                    break
                reply = self.client.request("tokens", board=board, tokens=pending)
                st["last_seq"] = max(st["last_seq"], reply["last_seq"])
                self.forwarded += reply["new"]
                meter = reply["meter_cents"]
            if meter is None:
                meter = self.client.request("amount", board=board).get("meter_cents")
            st["last_ok"] = time.monotonic()
            st["error"] = None
        except (ConnectionError, PoolError) as exc:
            # Away (or refusing this table): the tokens stay in the ledger and go on return.
            st["last_seq"] = None
            if st["error"] != str(exc):
                st["error"] = str(exc)
                self.log("pool link: %s: %s" % (board, exc))
            if not st["lost"] and time.monotonic() - st["last_ok"] > self.lost_after_s:
                reply = s.command("linked", {"lost": True})
                if reply.get("ok"):
                    st["lost"] = True
                    st["shown"] = None
                    self.log("pool link: %s: pool lost for %.0f s: progressive coin-in inhibited"
                             % (board, time.monotonic() - st["last_ok"]))
            return
        if meter is not None and (meter != st["shown"] or st["lost"]):
            # Display updates are not ledger rows (they would fill the books); the board journals
            # the fault's clearing itself.
            reply = s.command("linked", {"meter_cents": meter}, record=False)
            if reply.get("ok"):
                if st["lost"]:
                    self.log("pool link: %s: pool back; journal replayed to #%d" % (board, st["last_seq"]))
                st["shown"] = meter
                st["lost"] = False

    def hit(self, session, hands, note=None):
        """A progressive hand at this table: the dealer's jackpot key has been turned (the board is
        in JACKPOT_PENDING: physical presence); the pool locks the amount for this round."""
        status = session.command("status", {})
        if not status.get("ok"):
            raise TablectlError("board %s did not answer status" % session.board_id)
        if status.get("base") != "JACKPOT_PENDING":
            raise TablectlError("table %s is %s: turn the dealer's jackpot key first (JACKPOT_PENDING)"
                                % (session.board_id, status.get("base")))
        # The round's tokens reach the pool first: the pool pays only a seat whose token it holds.
        with self.lock:
            self._serve_board(session)
        return self.hit_client.request("hit", board=session.board_id, round=status["round"],
                                       hands=[[seat, cards] for seat, cards in hands], note=note)

    def status(self):
        return {b: {"last_seq": st["last_seq"], "shown": st["shown"], "lost": st["lost"], "error": st["error"]}
                for b, st in self.boards.items()}
