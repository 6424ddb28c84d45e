"""`tablectl serve`: owns the boards' ports, records every event in the ledger, acknowledges
an event only after its row is committed, and carries the technician's commands to the boards.

One thread per port; a Unix control socket (<db>.sock) for the CLI while it runs. Survives board
reboots, pulled cables (reopens the port) and its own restarts (the ledger knows the last
sequence per board; the boards resend everything unacknowledged).
"""
import json
import os
import socket
import threading
import time

from . import protocol as proto
from .ledger import Ledger
from .link import BoardLink, open_port

HEARTBEAT_S = 1.0


def control_path(db_path):
    return os.path.abspath(db_path) + ".sock"


class _LockedLedger:
    """One SQLite connection shared by the link thread and the control-socket threads: each call
    holds a lock, or two threads' BEGIN/COMMIT interleave ("cannot start a transaction within a
    transaction") and a command or an event batch fails."""

    def __init__(self, ledger):
        self._ledger = ledger
        self._lock = threading.RLock()

    def __getattr__(self, name):
        attr = getattr(self._ledger, name)
        if not callable(attr):
            return attr

        def locked(*args, **kwargs):
            with self._lock:
                return attr(*args, **kwargs)
        return locked


class LedgerWriter(threading.Thread):
    """Group commit: every table's session hands its batch of events here and waits; the writer
    commits all batches that are waiting in one transaction (one fsync), then lets each session
    acknowledge its board. With many tables the fsync is shared instead of paid per table."""

    def __init__(self, db_path):
        threading.Thread.__init__(self, daemon=True)
        self.ledger = Ledger(db_path)
        self.cond = threading.Condition()
        self.queue = []  # [board, events, done Event, result or exception]
        self.commits = 0

    def submit(self, board, events):
        item = [board, events, threading.Event(), None]
        with self.cond:
            self.queue.append(item)
            self.cond.notify()
        item[2].wait()
        if isinstance(item[3], BaseException):
            raise item[3]
        return item[3]

    def run(self):
        while True:
            with self.cond:
                while not self.queue:
                    self.cond.wait()
                batch, self.queue = self.queue, []
            try:
                results = self.ledger.record_batches([(item[0], item[1]) for item in batch])
            except Exception as exc:  # noqa: every waiting session hears of it, none acks
                results = [exc] * len(batch)
            self.commits += 1
            for item, result in zip(batch, results):
                item[3] = result
                item[2].set()


class TableSession(threading.Thread):
    def __init__(self, port, db_path, log, stop, writer=None):
        threading.Thread.__init__(self, daemon=True)
        self.port = port
        self.writer = writer
        self.ledger = _LockedLedger(Ledger(db_path))
        self.log = log
        self.stop_event = stop
        self.link = None
        self.board_id = None
        self.lock = threading.Lock()
        self.pending = {}  # command id -> [event, reply]
        self.outbox = []   # (message, key) for the link thread to send
        self.events_recorded = 0
        self.committed = []  # (seq, wall time of the commit that made it durable), newest last
        self.connected = False
        self.last_status = {}

    def run(self):
        while not self.stop_event.is_set():
            try:
                ser = open_port(self.port)
            except Exception:  # noqa: port absent (cable pulled): try again
                self.connected = False
                time.sleep(0.5)
                continue
            try:
                self._serve(ser)
            except Exception as exc:  # noqa: the port went away mid-read: reopen
                self.log("%s: link lost (%s); reopening" % (self.port, exc))
            finally:
                self.connected = False
                try:
                    ser.close()
                except Exception:
                    pass
            time.sleep(0.2)

    def _serve(self, ser):
        self.link = BoardLink(ser)
        self.link.send(proto.hello())
        self.connected = True
        last_hb = 0.0
        while not self.stop_event.is_set():
            messages = self.link.read()
            events = []
            for msg in messages:
                t = msg.get("t")
                if t == proto.EVENT:
                    events.append(msg)
                elif t == proto.HELLO:
                    if msg.get("b") and msg.get("b") != self.board_id:
                        self.board_id = msg["b"]
                        self.ledger.board(self.board_id)
                        self.log("%s: board %s (fw %s)" % (self.port, self.board_id, msg.get("fw")))
                elif t == proto.REPLY:
                    with self.lock:
                        waiter = self.pending.get(msg.get("id"))
                    if waiter is not None:
                        waiter[1] = msg
                        waiter[0].set()
                elif t == proto.HEARTBEAT:
                    if self.board_id is None:
                        self.link.send(proto.hello())
            if events:
                self._record(events)
            with self.lock:
                outgoing, self.outbox = self.outbox, []
            for message, key in outgoing:
                self.link.send(message, key)
            now = time.monotonic()
            if now - last_hb >= HEARTBEAT_S:
                last_hb = now
                self.link.send(proto.heartbeat())

    def _record(self, events):
        by_board = {}
        for ev in events:
            by_board.setdefault(ev.get("b") or self.board_id, []).append(ev)
        for board, evs in by_board.items():
            if self.board_id is None:
                self.board_id = board
            if self.writer is not None:
                last, new, dup, gap = self.writer.submit(board, evs)
            else:
                last, new, dup, gap = self.ledger.record_events(board, evs)
            self.events_recorded += new
            # When each event's row was committed (wall clock): the latency benchmark reads it.
            committed_at = time.time()
            for ev in evs:
                self.committed.append((ev.get("q"), committed_at))
            del self.committed[:-5000]
            # Only now, with the rows committed, may the board forget them.
            self.link.send(proto.ack(last, gap))

    def command(self, name, args, sign=False, timeout_s=5.0):
        """Send a command through the link thread; record it and its reply in the ledger."""
        if not self.connected or self.link is None:
            raise RuntimeError("board on %s is not connected" % self.port)
        key = None
        counter = None
        if sign:
            info = self.ledger.board(self.board_id)
            if not info["table_key"]:
                raise RuntimeError("no table key for board %s: run `tablectl provision`" % self.board_id)
            key = bytes.fromhex(info["table_key"])
            counter = self.ledger.next_counter(self.board_id, args.pop("_min_counter", 0))
        cid = self.link.new_id()
        msg = proto.command(cid, name, args, counter)
        waiter = [threading.Event(), None]
        with self.lock:
            self.pending[cid] = waiter
        deadline = time.monotonic() + timeout_s
        try:
            while time.monotonic() < deadline:
                with self.lock:
                    self.outbox.append((msg, key))
                if waiter[0].wait(0.7):
                    break
        finally:
            with self.lock:
                self.pending.pop(cid, None)
        reply = waiter[1]
        logged = dict(args)
        if "key" in logged:
            logged["key"] = "(withheld)"
        self.ledger.note(self.board_id or "?", "cmd", {"cmd": name, "args": logged, "id": cid,
                                                       "counter": counter, "reply": reply})
        if reply is None:
            raise RuntimeError("board %s did not answer %s" % (self.board_id, name))
        return reply


class Service:
    def __init__(self, ports, db_path, log=print):
        self.db_path = db_path
        self.log = log
        self.stop_event = threading.Event()
        Ledger(db_path).close()  # create the schema once, before the threads
        self.writer = LedgerWriter(db_path)
        self.sessions = [TableSession(p, db_path, log, self.stop_event, self.writer) for p in ports]
        self.control = None

    def start(self):
        self.writer.start()
        for s in self.sessions:
            s.start()
        path = control_path(self.db_path)
        if os.path.exists(path):
            os.unlink(path)
        self.control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.control.bind(path)
        self.control.listen(16)
        threading.Thread(target=self._accept, daemon=True).start()

    def stop(self):
        self.stop_event.set()
        try:
            self.control.close()
            os.unlink(control_path(self.db_path))
        except Exception:
            pass

    def session_for(self, board=None, port=None):
        for s in self.sessions:
            if (board is None or s.board_id == board) and (port is None or s.port == port):
                return s
        raise RuntimeError("no board %s on this service" % (board or port))

    def _accept(self):
        while not self.stop_event.is_set():
            try:
                conn, _ = self.control.accept()
            except OSError:
                return
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def _client(self, conn):
        buf = b""
        with conn:
            while True:
                chunk = conn.recv(65536)
                if not chunk:
                    return
                buf += chunk
                while b"\n" in buf:
                    line, buf = buf.split(b"\n", 1)
                    try:
                        req = json.loads(line)
                        reply = self._handle(req)
                    except Exception as exc:  # noqa: every failure goes back to the CLI as text
                        reply = {"ok": False, "error": str(exc)}
                    conn.sendall(json.dumps(reply).encode() + b"\n")

    def _handle(self, req):
        op = req.get("op")
        if op == "sessions":
            return {"ok": True, "sessions": [{"port": s.port, "board": s.board_id, "connected": s.connected,
                                              "events_recorded": s.events_recorded} for s in self.sessions]}
        if op == "command":
            s = self.session_for(req.get("board"), req.get("port"))
            reply = s.command(req["cmd"], req.get("args") or {}, bool(req.get("sign")))
            return {"ok": True, "board": s.board_id, "reply": reply}
        if op == "commit_times":
            s = self.session_for(req.get("board"), req.get("port"))
            return {"ok": True, "board": s.board_id, "committed": s.committed}
        if op == "set_key":
            s = self.session_for(req.get("board"), req.get("port"))
            s.ledger.set_key(s.board_id, req["key"])
            return {"ok": True}
        raise ValueError("unknown request %r" % op)

    def serve_forever(self):
        self.start()
        try:
            while True:
                time.sleep(0.5)
        finally:
            self.stop()
