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
It reports each board's health to the pool (pool/health.py) every `lost_after_s` / 3 over the
same connection, and once more, `closing`, when the service stops cleanly: the floor manager's
page tells a table whose link is lost from one that was closed, and shows POOL OFF, a storage
fault and refused frames, which only the table knows. The board's faults come from its status,
asked by a thread of their own (a slow board never delays a report).
"""
import json
import re
import socket
import sqlite3
import threading
import time

from ..errors import TablectlError
from .server import parse_url

BATCH_TOKENS = 500


def default_credentials(db_path):
    """Where a table service keeps its pool credential: beside its table keys (0700)."""
    from ..keys import keys_dir_for
    import os
    return os.path.join(keys_dir_for(db_path), "pool")


class PoolError(TablectlError):
    """The pool answered, and refused (not a lost link)."""


class PoolClient:
    """One connection to the pool: a request, then its reply. Reconnects on the next request
    after a failure; a failure of the link raises ConnectionError."""

    def __init__(self, url, credentials, timeout_s=10.0):
        from . import tls
        self.family, self.addr = parse_url(url)
        self.timeout_s = timeout_s
        self.tls = tls.client_context(credentials)
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
                    from . import tls
                    s = socket.socket(self.family, socket.SOCK_STREAM)
                    # Every wait is bounded (connect, handshake, reply): a pool that hangs is as
                    # lost as one that refuses, within the table's --pool-lost-s.
                    s.settimeout(self.timeout_s)
                    s.connect(self.addr)
                    if self.family == socket.AF_INET:
                        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    s = self.tls.wrap_socket(s)
                    tls.check_server(s)
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
    def __init__(self, url, db_path, loops, log, lost_after_s=10.0, poll_s=0.2, credentials=None):
        threading.Thread.__init__(self, daemon=True)
        self.url = url
        self.db_path = db_path
        self.loops = loops
        self.log = log
        self.lost_after_s = lost_after_s
        self.poll_s = poll_s
        self.credentials = credentials or default_credentials(db_path)
        # A request's every wait is a fraction of the time after which the table stops taking
        # tokens, so a pool that hangs (stopped, a dead route) is noticed as soon as one that refuses.
        timeout_s = max(0.2, min(10.0, lost_after_s / 3.0))
        self.client = PoolClient(url, self.credentials, timeout_s)
        # A hit waits its turn behind the pool's other writes: longer, but bounded too.
        self.hit_client = PoolClient(url, self.credentials, max(timeout_s, 30.0))
        self.pools = {}  # board -> the pool it feeds (from the pool's hello)
        self.confirmed = {}  # board -> award sequence numbers whose pool lock the pool has as paid
        self.refused = {}  # board -> award sequence numbers the pool refused (said once, not sent again)
        self.wake_event = threading.Event()
        self.stop_event = threading.Event()
        self.boards = {}  # board -> state of its link to the pool
        self.started = time.monotonic()
        self.forwarded = 0
        self.db = None
        self.lock = threading.Lock()  # one board's forwarding at a time (the loop, or a hit)
        self.health_every_s = max(0.2, lost_after_s / 3.0)
        self.facts = {}  # board -> {"state": ..., "faults": [...]}, from its newest status
        self.reported = {}  # board -> the newest health report the pool took
        self.health_lock = threading.Lock()  # a report at a time; none after the closing one
        self.closed = False

    def wake(self):
        self.wake_event.set()

    def _ledger(self):
        if self.db is None:
            self.db = sqlite3.connect("file:%s?mode=ro" % self.db_path, uri=True, timeout=5,
                                      isolation_level=None, check_same_thread=False)
        return self.db

    def _pool_awards(self, board):
        """The board's signed awards of pool locks the pool has not yet confirmed as paid."""
        done = self.confirmed.setdefault(board, set()) | self.refused.setdefault(board, set())
        rows = self._ledger().execute("SELECT seq, body, board_mac FROM ledger WHERE board=? AND kind='award' "
                                      "AND body LIKE '%\"lock\"%' ORDER BY seq", (board,)).fetchall()
        return [{"q": seq, "raw": body, "mac": mac} for seq, body, mac in rows if seq not in done]

    def _forward_awards(self, board):
        for award in self._pool_awards(board):
            try:
                self.client.request("paid", board=board, award=award)
            except PoolError as exc:
                # Refused (not lost): said once and not sent again; the lock stays unpaid (or
                # voided) at the pool, in view, and confirm() does not count it as taken.
                self.log("pool link: %s: award #%d not taken by the pool: %s" % (board, award["q"], exc))
                self.refused[board].add(award["q"])
                continue
            self.confirmed[board].add(award["q"])

    def statement(self, board, round_no):
        """The board's signed statement for this round: the state event its jackpot key made."""
        rows = self._ledger().execute("SELECT seq, body, board_mac FROM ledger WHERE board=? AND kind='state' "
                                      "ORDER BY seq DESC LIMIT 50", (board,)).fetchall()
        for seq, body, mac in rows:
            try:
                ev = json.loads(body)
            except ValueError:
                continue
            if ev.get("to") == "JACKPOT_PENDING" and ev.get("reason") == "jackpot key":
                if ev.get("round") != round_no:
                    break
                return {"q": seq, "raw": body, "mac": mac}
        raise TablectlError("board %s's jackpot statement for round %d is not in the ledger yet (the dealer's "
                            "jackpot key event): try again in a moment" % (board, round_no))

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
        threading.Thread(target=self._health_loop, daemon=True, name="pool-health").start()
        threading.Thread(target=self._probe_loop, daemon=True, name="pool-health-probe").start()
        while not self.stop_event.is_set():
            self.wake_event.wait(self.poll_s)
            self.wake_event.clear()
            for s in list(self.loops):
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
                self.pools[board] = info.get("pool")
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
            self._forward_awards(board)
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
            # The pool's name goes with every amount: the board joins it (journaled) the first
            # time, and from then on its own meter pays nothing (docs/POOL.md).
            reply = s.command("linked", {"meter_cents": meter, "pool": self.pools[board]}, record=False)
            if reply.get("ok"):
                if st["lost"]:
                    self.log("pool link: %s: pool back; journal replayed to #%d" % (board, st["last_seq"]))
                st["shown"] = meter
                st["lost"] = False

    def declare(self, session, round_no, hands, note=None):
        """The round's winning hands at this table, [(seat 0-based, cards)], declared to the pool
        with the board's signed jackpot statement; returns the pool's reply (its locks)."""
        with self.lock:
            statement = self.statement(session.board_id, round_no)
            # The round's tokens reach the pool first: the pool pays only a seat whose token it holds.
            self._serve_board(session)
        return self.hit_client.request("hit", board=session.board_id, round=round_no, statement=statement,
                                       hands=[[seat, cards] for seat, cards in hands], note=note)

    def confirm(self, session, lock_nos, timeout_s=10.0):
        """Send the board's awards of these pool locks to the pool as soon as they reach the
        ledger (else the loop's next turns do); returns the locks the pool took as paid."""
        board = session.board_id
        deadline = time.monotonic() + timeout_s
        while True:
            with self.lock:
                self._forward_awards(board)
                done = set()
                for seq, body in self._ledger().execute(
                        "SELECT seq, body FROM ledger WHERE board=? AND kind='award' AND body LIKE '%\"lock\"%'",
                        (board,)).fetchall():
                    lock_no = json.loads(body).get("lock")
                    if lock_no in lock_nos and seq in self.confirmed.get(board, ()):
                        done.add(lock_no)
            if done >= set(lock_nos) or time.monotonic() > deadline:
                return done
            time.sleep(0.1)

    # ------------------------------------------------------------------ health (pool/health.py)
    def _probe_loop(self):
        """Each board's status, one board after another: its state and faults for the reports."""
        while not self.stop_event.wait(max(1.0, self.health_every_s)):
            for s in list(self.loops):
                board = s.board_id
                if board is None or not s.connected:
                    continue
                try:
                    reply = s.command("status", {}, record=False)
                    faults = reply.get("faults")
                    self.facts[board] = {"state": reply.get("state"),
                                         "faults": list(faults) if isinstance(faults, list) else []}
                except Exception:  # noqa: a board that does not answer its status is said so
                    self.facts[board] = {"state": "board_silent", "faults": self.facts.get(board, {}).get("faults", [])}

    def health_of(self, s):
        """What the pool is told of this session's board (pool/health.py)."""
        board = s.board_id
        facts = self.facts.get(board) or {}
        faults = facts.get("faults") or []
        state = facts.get("state") if s.connected else "no_board"
        state = re.sub(r"[^A-Za-z0-9_]", "_", str(state or "unknown"))[:32]
        lost = self.boards.get(board, {}).get("lost", False)
        return {"state": state, "pool_off": bool(lost or "pool" in faults), "storage_fault": "storage" in faults,
                "refused_frames": min(s.frames_refused, 2 ** 31 - 1)}

    def report_health(self, s, closing=False):
        with self.health_lock:
            if self.closed:
                return None
            report = dict(self.health_of(s), closing=closing)
            reply = self.client.request("health", board=s.board_id, **report)
            self.reported[s.board_id] = dict(report, heard_at=reply.get("heard_at"))
            return reply

    def _health_loop(self):
        said = {}
        while not self.stop_event.wait(self.health_every_s):
            for s in list(self.loops):
                if s.board_id is None:
                    continue
                try:
                    self.report_health(s)
                    said.pop(s.board_id, None)
                except PoolError as exc:  # refused (not lost): said once
                    if said.get(s.board_id) != str(exc):
                        said[s.board_id] = str(exc)
                        self.log("pool link: %s: health report refused: %s" % (s.board_id, exc))
                except Exception:  # noqa: the pool is away: the forwarding loop says so
                    pass

    def close(self, timeout_s=3.0):
        """The service stops on purpose: each board's last report says so (`closing`), then no
        report goes after it. Bounded: a pool away does not hold the stop up."""
        deadline = time.monotonic() + timeout_s
        for s in list(self.loops):
            if s.board_id is None or time.monotonic() > deadline:
                continue
            self.client.timeout_s = max(0.2, min(self.client.timeout_s, deadline - time.monotonic()))
            sock = self.client.sock
            if sock is not None:
                try:
                    sock.settimeout(self.client.timeout_s)
                except OSError:
                    pass
            try:
                self.report_health(s, closing=True)
            except Exception as exc:  # noqa: the pool will see the table as lost, not closed
                self.log("pool link: %s: could not tell the pool this table closes: %s" % (s.board_id, exc))
        with self.health_lock:
            self.closed = True
        self.stop_event.set()

    def status(self):
        return {b: {"last_seq": st["last_seq"], "shown": st["shown"], "lost": st["lost"], "error": st["error"],
                    "health": self.reported.get(b)}
                for b, st in self.boards.items()}
