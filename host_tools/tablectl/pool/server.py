"""`tablectl pool serve`: the pool's service. Tables (`tablectl serve --pool URL`) send it their
boards' token events and hits and read the pool's amount; it commits tokens in one transaction
per batch (group commit: every batch waiting when the last commit ended goes into the next) and
takes hits one at a time, in the order their requests arrived.

JSON lines over mutual TLS (pool/tls.py), on a unix socket (mode 0600, the caller's uid checked
as well) and, for tables on other machines, optionally TCP. Every connection presents a table's
credential, which names one board: its requests speak for that board only. Requests:
{"op": "hello"|"tokens"|"amount"|"hit"|"paid"|"health"|"status", "board": ..., ...}. A hit carries the
board's signed jackpot statement; a lock is paid when the board's signed award naming it comes
back ("paid"). A table's service reports its boards' health (pool/health.py: POOL OFF, storage
fault, refused frames, a clean close); the pool keeps the newest report per board with the time by
its own clock, outside the chained books, on a connection of its own (a report never waits behind
a token batch, nor a batch behind it).

When PostgreSQL goes away (restart, failover) the writer reconnects; requests that failed are
answered with an error, so the tables keep their tokens and send them again: nothing is
acknowledged that is not committed.
"""
import json
import os
import socket
import threading
import time

from ..errors import TablectlError
from ..owner import same_user
from .store import PoolStore


HEALTH_WAIT_S = 5.0  # the longest a health report waits for the database (pool/health.py)

# Requests that speak for one board: the connection's credential must name it.
BOARD_OPS = ("hello", "tokens", "amount", "hit", "paid", "health")


def parse_url(url):
    """unix:/path/pool.sock or tcp:HOST:PORT -> (family, address)."""
    if url.startswith("unix:"):
        return socket.AF_UNIX, url[5:]
    if url.startswith("tcp:"):
        host, _, port = url[4:].rpartition(":")
        if not host or not port.isdigit():
            raise TablectlError("pool address %r: say tcp:HOST:PORT" % url)
        return socket.AF_INET, (host, int(port))
    raise TablectlError("pool address %r: say unix:/path/to/pool.sock or tcp:HOST:PORT" % url)


class Writer(threading.Thread):
    """The one connection that writes: token batches grouped, hits one at a time, FIFO."""

    def __init__(self, db_url, keys, log, table_keys=None):
        threading.Thread.__init__(self, daemon=True)
        self.table_keys = table_keys
        self.db_url = db_url
        self.keys = keys
        self.log = log
        self.cond = threading.Condition()
        self.queue = []
        self.store = None
        self.commits = 0
        self.meters = {}  # pool -> (meter_cents, wall time of the commit that set it)
        self.stop_event = threading.Event()

    def submit(self, kind, payload, timeout_s=30.0):
        item = [kind, payload, threading.Event(), None]
        with self.cond:
            self.queue.append(item)
            self.cond.notify()
        if not item[2].wait(timeout_s):
            raise TablectlError("the pool's database did not answer within %.0f s" % timeout_s)
        if isinstance(item[3], BaseException):
            raise item[3]
        return item[3]

    def _store(self):
        if self.store is None:
            self.store = PoolStore(self.db_url, self.keys, table_keys=self.table_keys)
            self.log("pool: database connected")
        return self.store

    def run(self):
        while not self.stop_event.is_set():
            with self.cond:
                while not self.queue:
                    self.cond.wait(0.5)
                    if self.stop_event.is_set():
                        return
                # Tokens before the first hit go together; a hit is taken on its own, in order.
                take = 0
                while take < len(self.queue) and self.queue[take][0] == "tokens":
                    take += 1
                if take == 0:
                    take = 1
                batch, self.queue = self.queue[:take], self.queue[take:]
            try:
                store = self._store()
                if batch[0][0] == "tokens":
                    results = store.record_tokens([item[1] for item in batch])
                elif batch[0][0] == "paid":
                    h = batch[0][1]
                    results = [store.paid(h["board"], h["award"])]
                else:
                    h = batch[0][1]
                    results = [store.hit_hands(h["board"], h["round"], h["hands"], h["received_at"], h["note"],
                                               h["statement"])]
                self.commits += 1
                now = time.time()
                for r in results:
                    if isinstance(r, dict) and "meter_cents" in r:
                        self.meters[r["pool"]] = (r["meter_cents"], now)
                    elif isinstance(r, list):
                        new = [h for h in r if not h.get("repeat")]
                        if new:
                            last = max(new, key=lambda h: h["lock_no"])
                            self.meters[last["pool"]] = (last["meter_after"], now)
            except TablectlError as exc:
                results = [exc] * len(batch)
            except (KeyError, TypeError, ValueError) as exc:  # a request we could not apply: say why
                results = [TablectlError("pool refused the request: %r" % (exc,))] * len(batch)
            except Exception as exc:  # noqa: the database went away: reconnect on the next batch
                self.log("pool: database error (%s); reconnecting" % str(exc).strip().splitlines()[0][:200])
                if self.store is not None:
                    self.store.close()
                self.store = None
                results = [TablectlError("pool database unavailable")] * len(batch)
                time.sleep(0.2)
            for item, result in zip(batch, results):
                item[3] = TablectlError(result) if isinstance(result, str) else result
                item[2].set()


class PoolServer:
    def __init__(self, db_url, keys, listen, log=print, poll_s=0.1, table_keys=None):
        self.db_url = db_url
        self.keys = keys
        self.listen = listen if isinstance(listen, list) else [listen]
        self.log = log
        self.poll_s = poll_s
        self.stop_event = threading.Event()
        self.writer = Writer(db_url, keys, log, table_keys)
        self.sockets = []
        self.boards = {}  # board -> pool, from the members table (refreshed by the meter poll)
        self.requests = 0
        self.refused = 0  # connections refused at the handshake (no credential of this pool)
        self.tls = None
        self.health_lock = threading.Lock()
        self.health_store = None  # the connection that records health reports (PoolStore.record_health)

    # ------------------------------------------------------------------ lifecycle
    def start(self):
        PoolStore(self.db_url, self.keys).close()  # schema and keys, before anyone is served
        from . import tls
        self.tls = tls.server_context(self.keys)
        self.writer.start()
        threading.Thread(target=self._poll_meters, daemon=True).start()
        for url in self.listen:
            family, addr = parse_url(url)
            s = socket.socket(family, socket.SOCK_STREAM)
            if family == socket.AF_UNIX:
                if os.path.exists(addr):
                    os.unlink(addr)
                old = os.umask(0o177)
                try:
                    s.bind(addr)
                finally:
                    os.umask(old)
            else:
                s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
                s.bind(addr)
            s.listen(512)
            self.sockets.append((family, addr, s))
            threading.Thread(target=self._accept, args=(family, s), daemon=True).start()

    def stop(self):
        self.stop_event.set()
        self.writer.stop_event.set()
        if self.health_store is not None:
            self.health_store.close()
        for family, addr, s in self.sockets:
            try:
                s.close()
                if family == socket.AF_UNIX:
                    os.unlink(addr)
            except OSError:
                pass

    def serve_forever(self):
        self.start()
        try:
            while True:
                time.sleep(0.5)
        finally:
            self.stop()

    def _poll_meters(self):
        """The amounts every table shows: read from the database every poll_s, so a change made by
        any process (a hit, a parameter change) reaches the displays, not only our own commits."""
        store = None
        while not self.stop_event.is_set():
            try:
                if store is None:
                    store = PoolStore(self.db_url, self.keys, anchor=False, migrate=False)
                rows = store.db.execute("SELECT name, meter_cents FROM pools").fetchall()
                now = time.time()
                for name, meter in rows:
                    old = self.writer.meters.get(name)
                    if old is None or old[0] != meter:
                        self.writer.meters[name] = (meter, now)
                self.boards = dict(store.db.execute("SELECT board, pool FROM pool_boards WHERE active").fetchall())
            except Exception:  # noqa: the database is away; the writer says so in the log
                if store is not None:
                    store.close()
                store = None
                time.sleep(0.5)
            time.sleep(self.poll_s)

    # ------------------------------------------------------------------ requests
    def _accept(self, family, s):
        while not self.stop_event.is_set():
            try:
                conn, _ = s.accept()
            except OSError:
                return
            if family == socket.AF_UNIX and not same_user(conn):
                self.log("pool: refused a caller of another user")
                conn.close()
                continue
            if family == socket.AF_INET:
                conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def _handshake(self, conn):
        """The TLS connection and the board its credential names, or None (refused, logged)."""
        from . import tls
        conn.settimeout(10.0)  # a caller that never finishes its handshake holds nothing for long
        try:
            tconn = self.tls.wrap_socket(conn, server_side=True)
        except (OSError, ValueError) as exc:
            self.refused += 1
            self.log("pool: refused a connection without a credential of this pool (%s)" % str(exc)[:120])
            conn.close()
            return None, None
        board = tls.peer_board(tconn)
        if board is None or not tls.current_credential(self.keys, tconn, board):
            self.refused += 1
            self.log("pool: refused %s" % ("a certificate that names no table" if board is None else
                                           "a retired credential of board %s (a newer one was issued)" % board))
            tconn.close()
            return None, None
        tconn.settimeout(None)
        return tconn, board

    def _client(self, conn):
        conn, caller = self._handshake(conn)
        if conn is None:
            return
        buf = b""
        with conn:
            while not self.stop_event.is_set():
                try:
                    chunk = conn.recv(65536)
                except OSError:
                    return
                if not chunk:
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    received_at = time.time()
                    try:
                        req = json.loads(line)
                        if not isinstance(req, dict):
                            raise TablectlError("a request is a JSON object")
                        reply = self.handle(req, received_at, caller)
                    except TablectlError as exc:
                        reply = {"ok": False, "error": str(exc)}
                    except Exception as exc:  # noqa: every failure goes back as text
                        reply = {"ok": False, "error": "%s: %s" % (type(exc).__name__, exc)}
                    if isinstance(req, dict) and "rid" in req:
                        reply["rid"] = req["rid"]
                    try:
                        conn.sendall(json.dumps(reply).encode() + b"\n")
                    except OSError:
                        return

    def _amount(self, board):
        pool = self.boards.get(board)
        got = self.writer.meters.get(pool) if pool else None
        if got is None:
            return {"pool": pool, "meter_cents": None, "at": None}
        return {"pool": pool, "meter_cents": got[0], "at": got[1]}

    def handle(self, req, received_at, caller):
        """One request of the table whose credential names board `caller`."""
        self.requests += 1
        op = req.get("op")
        board = req.get("board")
        if op in BOARD_OPS and (not isinstance(board, str) or not board):
            raise TablectlError("%s needs a board id" % op)
        if op in BOARD_OPS and board != caller:
            self.log("pool: refused: the credential of board %s asked %s for board %s" % (caller, op, board))
            raise TablectlError("this connection speaks for board %s, not %s" % (caller, board))
        if op == "paid":
            award = req.get("award")
            if not isinstance(award, dict):
                raise TablectlError("paid needs the board's signed award event {q, raw, mac}")
            return dict(self.writer.submit("paid", {"board": board, "award": award}), ok=True)
        if op == "health":
            return self._health(board, req, received_at)
        if op == "hello":
            self._active(board)
            return dict(self._board_info(board), ok=True)
        if op == "tokens":
            tokens = req.get("tokens")
            if not isinstance(tokens, list) or not tokens or len(tokens) > 1000:
                raise TablectlError("tokens must be a list of 1 to 1000 token events")
            for t in tokens:
                if not isinstance(t, dict) or not isinstance(t.get("q"), int) or t["q"] < 1:
                    raise TablectlError("a token needs its board sequence number q (a whole number >= 1)")
            result = self.writer.submit("tokens", (board, tokens))
            return dict(result, ok=True, committed_at=time.time())
        if op == "amount":
            if board not in self.boards:  # not active (as of the last poll): ask the books
                self._active(board)
            return dict(self._amount(board), ok=True)
        if op == "hit":
            # One hand (seat, cards), or the round's hands at this table (hands: [[seat, cards], ...]).
            hands = req.get("hands")
            if hands is None:
                hands = [[req.get("seat"), req.get("cards")]]
            if not isinstance(hands, list) or not 1 <= len(hands) <= 8:
                raise TablectlError("hit needs 1 to 8 hands [seat, cards]")
            for h in hands:
                if not isinstance(h, list) or len(h) != 2 or not isinstance(h[0], int) or isinstance(h[0], bool) \
                        or not 0 <= h[0] <= 7 or not isinstance(h[1], str):
                    raise TablectlError("a hand is [seat 0..7, \"As Ks Qs Js Ts\"] (the initial five cards)")
            if not isinstance(req.get("round"), int) or isinstance(req.get("round"), bool) or req["round"] < 0:
                raise TablectlError("hit needs round (a whole number)")
            if not isinstance(req.get("statement"), dict):
                raise TablectlError("a hit needs the board's signed jackpot statement (the state event the dealer's "
                                    "jackpot key made)")
            hits = self.writer.submit("hit", {"board": board, "round": req["round"],
                                              "hands": [(h[0], h[1]) for h in hands], "received_at": received_at,
                                              "note": req.get("note"), "statement": req["statement"]})
            return dict(hits[0], hits=hits, ok=True)
        if op == "status":
            return {"ok": True, "meters": {k: v[0] for k, v in self.writer.meters.items()},
                    "commits": self.writer.commits, "requests": self.requests, "boards": len(self.boards),
                    "refused_connections": self.refused}
        raise TablectlError("unknown request %r" % (op,))

    def _health(self, board, req, received_at):
        """Record a board's health report (checked first: pool/health.py), heard at `received_at`
        by this server's clock."""
        from .health import check_report
        report = check_report(req)
        # Bounded: a database that hangs holds one thread here, not one per report.
        if not self.health_lock.acquire(timeout=HEALTH_WAIT_S):
            raise TablectlError("the pool's database is not answering: health report not recorded")
        try:
            try:
                if self.health_store is None:
                    self.health_store = PoolStore(self.db_url, self.keys, anchor=False, migrate=False)
                    # A report is no money: its commit waits neither for the disk nor for a
                    # synchronous standby (a standby lost stops the tokens, docs/POOL.md, not the
                    # reports); one lost in a crash is replaced by the next, a third of the lost
                    # window later. No statement waits long.
                    self.health_store.db.execute("SET synchronous_commit = off")
                    self.health_store.db.execute("SET statement_timeout = %d" % int(HEALTH_WAIT_S * 1000))
                row = self.health_store.record_health(board, report, received_at)
            except TablectlError:
                raise
            except Exception as exc:  # noqa: the database went away: reconnect at the next report
                first = str(exc).strip().splitlines()[0][:200] if str(exc).strip() else type(exc).__name__
                self.log("pool: database error recording health (%s)" % first)
                if self.health_store is not None:
                    self.health_store.close()
                self.health_store = None
                raise TablectlError("pool database unavailable")
        finally:
            self.health_lock.release()
        if report["closing"]:
            self.log("pool: table %s closed (its service stopped)" % board)
        return {"ok": True, "heard_at": row["last_heard"], "closed": row["closed"]}

    def _active(self, board):
        """A board the pool takes from now: an active member (a discontinued pool's tables are not),
        else refused at once, so its table stops taking tokens within --pool-lost-s."""
        store = PoolStore(self.db_url, self.keys, anchor=False, migrate=False)
        try:
            row = store.db.execute("SELECT active, pool FROM pool_boards WHERE board=%s", (board,)).fetchone()
            if row is None:
                raise TablectlError("board %s is not a member of any pool" % board)
            if not row[0]:
                raise TablectlError("board %s is not an active member of pool %s%s"
                                    % (board, row[1], store._closed_note(row[1])))
        finally:
            store.close()

    def _board_info(self, board):
        """The newest sequence number of this board's tokens the pool holds: where its table
        resumes (replaying its journal from there)."""
        store = PoolStore(self.db_url, self.keys, anchor=False, migrate=False)
        try:
            last, pool = store.board_last_seq(board)
        finally:
            store.close()
        if pool is None:
            raise TablectlError("board %s is not a member of any pool" % board)
        return dict(self._amount(board), last_seq=last, pool=pool)


