"""`tablectl serve`: owns the boards' ports, records every event in the ledger, acknowledges
an event only after its row is committed, and carries the technician's commands to the boards.

One thread per port; a Unix control socket (<db>.sock) for the CLI while it runs. Survives board
reboots, pulled cables (reopens the port) and its own restarts (the ledger knows the last
sequence per board; the boards resend everything unacknowledged).
"""
from __future__ import annotations

import json
import os
import socket
import threading
import time
from typing import Any, Callable, Optional, Sequence, cast

from table import protocol as proto
from table import schema, vocab
from .errors import TablectlError, WrongTarget
from .keys import KeyStore
from .ledger import Batch, Event, Ledger, RecordResult
from .owner import same_user
from .link import BoardLink, key_gone_text, link_timeout_s, open_port, resend_interval_s

HEARTBEAT_S = 1.0
NO_BOARD_S = 5.0  # an open port silent this long: said once in the log
TAKE_BACK_PATIENCE_S = 30.0  # a port's borrower holding its lock this long: said in the log (and again as long)


# Commands a control-socket caller may not send as such: each comes from its own path, which
# computes or checks what it sends (an award from verified hands, a key from the key store, a
# linked amount from the pool itself).
OWN_REQUEST = {"award": "tablectl jackpot", "provision": "tablectl provision",
               "key_change": "tablectl provision", "linked": "tablectl serve --pool"}


def _check_args(name: Any, args: Any) -> None:
    """The vocabulary's argument rules (table.vocab), before anything is recorded or signed."""
    if name in OWN_REQUEST:
        raise TablectlError("the service does not send %r as a command: it comes from `%s`"
                            % (name, OWN_REQUEST[name]))
    problem = schema.arg_problem(name, args)
    if problem is not None:
        raise TablectlError(problem)


def control_path(db_path: str) -> str:
    return os.path.abspath(db_path) + ".sock"


class _LockedLedger:
    """One SQLite connection shared by the link thread and the control-socket threads: each call
    holds a lock, or two threads' BEGIN/COMMIT interleave ("cannot start a transaction within a
    transaction") and a command or an event batch fails."""

    def __init__(self, ledger: Ledger) -> None:
        self._ledger = ledger
        self._lock = threading.RLock()

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._ledger, name)  # the port loops use its methods only

        def locked(*args: Any, **kwargs: Any) -> Any:
            with self._lock:
                return attr(*args, **kwargs)
        return locked


class LedgerWriter(threading.Thread):
    """Group commit: every port loop hands its batch of events here and waits; the writer
    commits all batches that are waiting in one transaction (one fsync), then lets each port loop
    acknowledge its board. With many tables the fsync is shared instead of paid per table."""

    def __init__(self, db_path: str) -> None:
        threading.Thread.__init__(self, daemon=True)
        self.ledger = Ledger(db_path)
        self.cond = threading.Condition()
        self.queue: list[list[Any]] = []  # [(board, events, acked), done Event, result or exception]
        self.commits = 0

    def submit(self, board: str, events: Sequence[Event], board_acked: Optional[int] = None) -> RecordResult:
        item: list[Any] = [(board, events, board_acked), threading.Event(), None]
        with self.cond:
            self.queue.append(item)
            self.cond.notify()
        item[1].wait()
        if isinstance(item[2], BaseException):
            raise item[2]
        return cast(RecordResult, item[2])

    def run(self) -> None:
        while True:
            with self.cond:
                while not self.queue:
                    self.cond.wait()
                batch, self.queue = self.queue, []
            try:
                batches: list[Batch] = [item[0] for item in batch]
                results: Sequence[Any] = self.ledger.record_batches(batches)
            except Exception as exc:  # noqa: every waiting port loop hears of it, none acks
                results = [exc] * len(batch)
            self.commits += 1
            for item, result in zip(batch, results):
                item[2] = result
                item[1].set()


class PortLoop(threading.Thread):
    """The service's thread for one serial port: the link to the board on it, the events it
    records and the commands sent to it (a board's per-boot `session` is the link's, not this)."""

    def __init__(self, port: str, db_path: str, log: Callable[[str], Any], stop: threading.Event,
                 writer: LedgerWriter) -> None:
        threading.Thread.__init__(self, daemon=True)
        self.port = port
        self.db_path = db_path
        # The device the port names now: a link such as a sim's <state>/tty may point elsewhere
        # after a restart, and the port's lock (owner.py) must follow it (see _follow_link).
        self.port_real = os.path.realpath(port) if "://" not in port else port
        self.writer = writer
        self.keys = KeyStore.for_ledger(db_path)
        # A Ledger, each call under one lock (see _LockedLedger).
        self.ledger = cast(Ledger, _LockedLedger(Ledger(db_path)))
        self.log = log
        self.stop_event = stop
        self.link: Optional[BoardLink] = None
        self.board_id: Optional[str] = None
        self.lock = threading.Lock()
        self.pending: dict[Any, list[Any]] = {}  # command id -> [event, reply, message]
        self.outbox: list[dict[str, Any]] = []   # messages for the link thread to send
        self.events_recorded = 0
        self.refused_before = 0  # frames refused by this port's earlier links (BoardLink.frames_refused)
        self.committed: list[tuple[Optional[int], float]] = []  # (seq, wall time of the commit that made it durable), newest last
        self.connected = False
        self.last_status: dict[str, Any] = {}
        self.on_recorded: Optional[Callable[[], None]] = None  # called after each committed batch (the linked pool's forwarder)
        # The port lent to `tablectl flash` (hand_over): the link closes the port, says so, and waits.
        self.handed_over = threading.Event()
        self.port_closed = threading.Event()
        # A hello is repeated as a command is (link.resend_interval_s): every 0.5 s, or a tenth of
        # a raised TABLECTL_LINK_TIMEOUT_S (read here: a bad value stops `serve` at its start). A
        # board that answers a hello restarts its delivery from its oldest unacknowledged event,
        # so hellos queued faster than a slow board (an emulated Pico) reads them had it resend
        # everything once a hello, for minutes after each reboot.
        self.hello_every_s = resend_interval_s(link_timeout_s(5.0), 0.5)

    def run(self) -> None:
        absent_said = False
        while not self.stop_event.is_set():
            if self.handed_over.is_set():
                self.port_closed.set()
                time.sleep(0.1)
                continue
            try:
                ser = open_port(self.port)
            except Exception as exc:  # noqa: port absent (cable pulled): try again
                self.connected = False
                if not absent_said:
                    # Said once: a port gone for good (a restarted `tablectl sim` has a new pty;
                    # its <state>/tty follows it) must not look like a board that is quiet.
                    absent_said = True
                    self.log("%s: cannot open the port (%s); trying again every 0.5 s" % (self.port, exc))
                time.sleep(0.5)
                continue
            if absent_said:
                absent_said = False
                self.log("%s: the port is back" % self.port)
            self._follow_link()
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

    def _follow_link(self) -> None:
        """The port is a link that now names another device (a restarted `tablectl sim`): hold
        that device's lock instead, so a command given it is sent through this service."""
        if "://" in self.port:
            return
        real = os.path.realpath(self.port)
        if real == self.port_real:
            return
        from . import owner
        self.port_real = real
        owner.release_port(self.port)
        try:
            owner.take_port(self.port, note=control_path(self.db_path))
            self.log("%s: now %s" % (self.port, real))
        except TablectlError as exc:
            self.log("%s: now %s, which another process holds (%s)" % (self.port, real, exc))

    @property
    def frames_refused(self) -> int:
        """Frames from the port the link refused since the service started (link.py): the pool's
        health report carries it (pool/health.py)."""
        link = self.link
        return self.refused_before + (link.frames_refused if link is not None else 0)

    def _serve(self, ser: Any) -> None:
        if self.link is not None:
            self.refused_before += self.link.frames_refused
        link = self.link = BoardLink(ser, self.keys, self.ledger.knows_keyed)
        link.send(proto.hello())
        self.connected = True
        last_hb = 0.0
        last_hello = opened = time.monotonic()
        asking = True  # a hello is out and not yet answered by the hello it asks for
        hello_every_s = self.hello_every_s
        silent_said = False
        while not self.stop_event.is_set() and not self.handed_over.is_set():
            session_before = link.session
            messages = link.read()
            events = []
            for msg in messages:
                t = msg.get("t")
                if t == proto.EVENT:
                    events.append(msg)
                elif t == proto.HELLO:
                    if link.board_id is not None and link.board_id != self.board_id:
                        self.board_id = link.board_id
                        self.ledger.board(link.board_id)
                        self.log("%s: board %s (fw %s)%s" % (self.port, self.board_id, msg.get("fw"),
                                                             "" if link.key else "; no table key held"))
                    if link.key_missing:
                        self._say_once(key_gone_text(link, link.board_id, self.keys.folder))
                    elif link.key is not None and link.board_id is not None:
                        self._check_boot_count(link.board_id, msg.get("boot"))
                elif t == proto.REPLY:
                    with self.lock:
                        waiter = self.pending.get(msg.get("id"))
                    if waiter is not None:
                        waiter[1] = msg
                        waiter[0].set()
            if link.lost_key_board is not None:
                self._say_once(key_gone_text(link, link.lost_key_board, self.keys.folder))
            now = time.monotonic()
            if link.board_id is None and not silent_said and now - opened >= NO_BOARD_S:
                # Said once, not a line per hello: the port is open, nothing on it speaks.
                silent_said = True
                self.log("%s: no board answers (no hello in %.0f s): is it powered and cabled, and running "
                         "the controller (not at its REPL)? still asking" % (self.port, NO_BOARD_S))
            no_session = link.key is not None and link.session is None
            # (and while the key is not on both sides: a key store put back, a board provisioned
            # again, is heard at the next hello)
            wanted = link.board_id is None or link.stale_session_seen or no_session or link.key_missing \
                or link.lost_key_board is not None
            if wanted and (not asking or now - last_hello >= hello_every_s):
                # No board heard yet, or it rebooted (a frame of another session), or its key came
                # before its session (nothing can be sealed, not even an ack): ask who is there,
                # at once the first time, then again at the repeat interval.
                asking = True
                last_hello = now
                link.send(proto.hello())
            elif not wanted:
                asking = False
            if events:
                self._record(events)
            with self.lock:
                if link.session is not None and link.session != session_before:
                    # A board that rebooted refused what was sent in its old session: every command
                    # still waiting goes again now, sealed in the new one, rather than at its next
                    # resend (a tenth of a raised TABLECTL_LINK_TIMEOUT_S is half a minute). Only
                    # the timing of a resend changes: it carries the same id as every resend does
                    # (an award the board paid before the reboot is answered from its journal as a
                    # repeat).
                    self.outbox.extend(w[2] for w in self.pending.values())
                outgoing, self.outbox = self.outbox, []
            for message in outgoing:
                self._send(message)
            if now - last_hb >= HEARTBEAT_S:
                last_hb = now
                self._send(proto.heartbeat())

    def _check_boot_count(self, board: str, boots: Any) -> None:
        """A signed hello whose boot count is below the ledger's newest: the board's flash went
        back (an old copy of its journal). An alarm row (Ledger.alarms), once per boot count."""
        if not isinstance(boots, int) or isinstance(boots, bool) or boots == getattr(self, "_boots_checked", None):
            return
        self._boots_checked = boots
        filed = self.ledger.last_boot(board)
        if filed is not None and boots < filed:
            self.ledger.note(board, "rollback", {"boots": boots, "ledger_boots": filed})
            self.log("%s: ALARM board %s came back as boot %d, the ledger holds boot %d: its flash went back"
                     % (self.port, board, boots, filed))

    def _say_once(self, line: str) -> None:
        if line != getattr(self, "_said", None):
            self._said = line
            self.log("%s: %s" % (self.port, line))

    def _send(self, message: dict[str, Any]) -> None:
        link = self.link
        if link is None or (link.key is not None and (link.session is None or link.stale_session_seen)
                            and message.get("c") != vocab.PROVISION):
            # A keyed board whose session is not known yet, or known to be over (it restarted):
            # nothing can be signed for it until its hello (a provision goes unsigned). An ack
            # dropped here is not lost: the hello restarts the board's delivery from its oldest
            # unacknowledged event.
            return
        link.send(message)

    @staticmethod
    def _restarted(link: BoardLink, events: list[Event]) -> bool:
        """A boot event of a later boot than the session the host holds: the board restarted, and
        every frame sealed in the old session would be refused (docs/PROTOCOL.md)."""
        if link.key is None or not isinstance(link.session, str):
            return False
        held = link.session.split(".")[0]
        if not held.isdigit():
            return False
        return any(ev.get("k") == "boot" and isinstance(ev.get("boots"), int) and ev["boots"] > int(held)
                   for ev in events)

    def _record(self, events: list[Event]) -> None:
        link = self.link
        board = link.board_id if link is not None else None
        if link is None or board is None:
            return  # events of a board whose hello was not verified are not filed (it resends)
        if self.board_id is None:
            self.board_id = board
        if self._restarted(link, events):
            link.stale_session_seen = True  # the loop says hello at once; acks wait for the new session
        last, new, dup, gap = self.writer.submit(board, events, link.board_acked)  # group commit
        acked = link.board_acked
        if gap and isinstance(acked, int) and acked > last:
            # The ledger is behind the board (an old copy put back?): nothing past the gap is
            # filed until a technician signs off what it covers (Ledger._explained_gap).
            self._say_once("ALARM the ledger ends at event #%d of board %s, which holds events up to #%d acknowledged: "
                           "if this ledger was put back from a copy, sign it off: tablectl audit resync --board %s "
                           "--from %d --to N --reason TEXT (N: the last number the copy lost; `tablectl audit verify` "
                           "names them)" % (last, board, acked, board, last + 1))
        self.events_recorded += new
        # When each event's row was committed (wall clock): the latency benchmark reads it.
        committed_at = time.time()
        for ev in events:
            self.committed.append((ev.get("q"), committed_at))
        del self.committed[:-5000]
        # Only now, with the rows committed, may the board forget them.
        self._send(proto.ack(last, gap))
        if self.on_recorded is not None:
            self.on_recorded()

    def connected_link(self) -> tuple[BoardLink, str]:
        """The link and the id of the board on it, or a one-line error when none is there."""
        link, board = self.link, self.board_id
        if link is not None and board is None:
            board = link.lost_key_board  # named by its unsigned hello: only a provision goes to it
        if not self.connected or link is None or board is None:
            raise TablectlError("board on %s is not connected" % self.port)
        return link, board

    def command(self, name: str, args: dict[str, Any], command_id: Optional[int] = None,
                timeout_s: Optional[float] = None, record: bool = True) -> dict[str, Any]:
        """Send a command through the link thread. A command that changes anything is recorded
        as an intent before it is sent (if that fails, nothing is sent) and with its reply after:
        a failure on either side can neither act unrecorded nor act twice (a retry reuses the id).
        Reads are not recorded: they would fill the books with polls."""
        link, board = self.connected_link()
        if (link.key_missing or link.lost_key_board) and name != vocab.PROVISION:
            raise TablectlError(key_gone_text(link, board, self.keys.folder))
        if link.key is None and name in vocab.GUARDED_COMMANDS:
            raise TablectlError("no table key for board %s in %s: run `tablectl provision`"
                                % (board, self.keys.folder))
        cid = command_id if command_id is not None else link.new_id()
        logged = dict(args)
        if "key" in logged:
            logged["key"] = "(withheld)"
        recorded = record and name not in vocab.READ_COMMANDS
        if recorded:
            self.ledger.note(board, "intent", {"cmd": name, "args": logged, "id": cid})
        msg = proto.command(cid, name, args)
        waiter: list[Any] = [threading.Event(), None, msg]
        with self.lock:
            self.pending[cid] = waiter
        if timeout_s is None:
            timeout_s = link_timeout_s(5.0)  # 5 s, or TABLECTL_LINK_TIMEOUT_S for a slow (emulated) board
        deadline = time.monotonic() + timeout_s
        try:
            while time.monotonic() < deadline:
                with self.lock:
                    self.outbox.append(msg)
                if waiter[0].wait(resend_interval_s(timeout_s, 0.7)):
                    break
        finally:
            with self.lock:
                self.pending.pop(cid, None)
        reply = waiter[1]
        if recorded:
            self.ledger.note(board, "cmd", {"cmd": name, "args": logged, "id": cid, "reply": reply})
        if reply is None:
            raise TablectlError("board %s did not answer %s" % (board, name))
        return cast(dict[str, Any], reply)


class Service:
    def __init__(self, ports: Sequence[str], db_path: str, log: Callable[[str], Any] = print,
                 pool: Optional[str] = None, pool_lost_s: float = 10.0,
                 pool_credentials: Optional[str] = None) -> None:
        self.db_path = db_path
        self.log = log
        self.stop_event = threading.Event()
        Ledger(db_path).close()  # create the schema once, before the threads
        self.writer = LedgerWriter(db_path)
        self.loops = [PortLoop(p, db_path, log, self.stop_event, self.writer) for p in ports]
        self.control: Optional[socket.socket] = None
        self.pool_link: Any = None
        if pool:
            # The tables' tokens also feed a linked pool (docs/POOL.md).
            from .pool.client import PoolLink
            self.pool_link = PoolLink(pool, db_path, self.loops, log, pool_lost_s, credentials=pool_credentials)
            for s in self.loops:
                s.on_recorded = self.pool_link.wake

    def start(self) -> None:
        self.writer.start()
        if self.pool_link is not None:
            self.pool_link.start()
        for s in self.loops:
            s.start()
        path = control_path(self.db_path)
        if os.path.exists(path):
            os.unlink(path)
        self.control = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        old = os.umask(0o177)  # the socket is born 0600: no window in which others may connect
        try:
            self.control.bind(path)
        finally:
            os.umask(old)
        os.chmod(path, 0o600)
        self.control.listen(16)
        threading.Thread(target=self._accept, args=(self.control,), daemon=True).start()

    def stop(self) -> None:
        if self.pool_link is not None and self.pool_link.is_alive():
            # Said to the pool before the links close: this table is closed, not lost.
            self.pool_link.close()
        self.stop_event.set()
        control, self.control = self.control, None
        if control is not None:
            # shutdown wakes the accept() blocked in _accept (close alone does not, on Linux), so
            # that thread ends instead of waiting there for the life of the process
            control.shutdown(socket.SHUT_RDWR)
            control.close()
        try:
            os.unlink(control_path(self.db_path))
        except FileNotFoundError:
            pass  # never started, or stopped already

    def loop_for(self, board: Optional[str] = None, port: Optional[str] = None) -> PortLoop:
        from .client import same_port
        for s in self.loops:
            if (board is None or s.board_id == board) and (port is None or same_port(s.port, port)):
                return s
        held = ", ".join("%s on %s" % (s.board_id or "no board yet", s.port) for s in self.loops)
        if board is not None and port is not None:
            raise WrongTarget("this service has no board %s on %s (it has %s)" % (board, port, held))
        raise WrongTarget("this service has no %s %s (it has %s)" % ("board" if board else "port", board or port, held))

    def _accept(self, control: socket.socket) -> None:
        while True:
            try:
                conn, _ = control.accept()
            except OSError:
                return  # stop() shut the socket down
            threading.Thread(target=self._client, args=(conn,), daemon=True).start()

    def _client(self, conn: socket.socket) -> None:
        buf = b""
        # Only this service's own user (or root) may use the control socket: the file mode says
        # so, and the kernel's word on the caller is checked as well.
        if not same_user(conn):
            self.log("control socket: refused a caller of another user")
            conn.close()
            return
        lent: list[PortLoop] = []  # ports this caller holds: taken back when it goes, however it goes
        with conn:
            try:
                self._requests(conn, buf, lent)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the caller went away (a monitor stopped, a killed command): nothing to answer
            finally:
                for s in lent:
                    self._take_back(s)

    def _hand_over(self, req: dict[str, Any], lent: list[PortLoop]) -> dict[str, Any]:
        """Lend a port to the caller (`tablectl flash`): the link closes it and gives up its lock;
        the port comes back when the caller says take_back or its connection closes."""
        from . import owner
        wanted = os.path.realpath(str(req.get("port")))  # /dev/serial/by-id/... names /dev/ttyACMn too
        found = [x for x in self.loops if os.path.realpath(x.port) == wanted]
        if not found:
            raise TablectlError("this service does not hold %s" % req.get("port"))
        s = found[0]
        if s in lent:
            return {"ok": True, "port": s.port}
        s.port_closed.clear()
        s.handed_over.set()
        if not s.port_closed.wait(5.0):
            s.handed_over.clear()
            raise TablectlError("the service could not close %s within 5 s" % s.port)
        owner.release_port(s.port)
        lent.append(s)
        self.log("%s: port handed over to pid %s (tablectl flash); the link waits for it" % (s.port, req.get("pid")))
        return {"ok": True, "port": s.port}

    def _take_back(self, s: PortLoop) -> None:
        from . import owner
        deadline = time.monotonic() + TAKE_BACK_PATIENCE_S
        while True:
            try:
                owner.take_port(s.port, note=control_path(self.db_path))
                break
            except TablectlError as exc:  # the borrower's lock not yet gone: wait for it
                if time.monotonic() > deadline:
                    self.log("%s: cannot take the port back (%s); still trying" % (s.port, exc))
                    deadline = time.monotonic() + TAKE_BACK_PATIENCE_S
                time.sleep(0.2)
        s.handed_over.clear()
        self.log("%s: port taken back; reopening the link" % s.port)

    def _requests(self, conn: socket.socket, buf: bytes, lent: list[PortLoop]) -> None:
        while True:
            chunk = conn.recv(65536)
            if not chunk:
                return
            buf += chunk
            while b"\n" in buf:
                line, buf = buf.split(b"\n", 1)
                try:
                    req = json.loads(line)
                    if not isinstance(req, dict):
                        raise TablectlError("a request is a JSON object")
                    if req.get("op") == "hand_over":
                        reply = self._hand_over(req, lent)
                    elif req.get("op") == "take_back":
                        for s in list(lent):
                            lent.remove(s)
                            self._take_back(s)
                        reply = {"ok": True}
                    else:
                        reply = self._handle(req)
                except Exception as exc:  # noqa: every failure goes back to the CLI as text
                    reply = {"ok": False, "error": str(exc)}
                    if isinstance(exc, WrongTarget):
                        reply["wrong_target"] = True  # asking again cannot help: a monitor stops
                conn.sendall(json.dumps(reply).encode() + b"\n")

    def _handle(self, req: dict[str, Any]) -> dict[str, Any]:
        op = req.get("op")
        if op == "sessions":
            return {"ok": True, "sessions": [{"port": s.port, "board": s.board_id, "connected": s.connected,
                                              "events_recorded": s.events_recorded} for s in self.loops]}
        if op == "command":
            s = self.loop_for(req.get("board"), req.get("port"))
            name = req.get("cmd")
            args = req.get("args") or {}
            if not isinstance(name, str):
                raise TablectlError("say which command: \"cmd\" must be a command's name")
            _check_args(name, args)
            reply = s.command(name, args)
            return {"ok": True, "board": s.board_id, "reply": reply}
        if op == "jackpot":
            from .awards import parse_hands, pay_jackpot
            s = self.loop_for(req.get("board"), req.get("port"))
            hands_in = req.get("hands")
            if not isinstance(hands_in, list) or not 1 <= len(hands_in) <= 8:
                raise TablectlError("hands must be a list of [seat, cards] (1 to 8)")
            hands = parse_hands([h[0] for h in hands_in], [h[1] for h in hands_in])

            def command(name: str, args: dict[str, Any], command_id: Optional[int] = None) -> dict[str, Any]:
                reply = s.command(name, args, command_id)
                if not reply.get("ok"):
                    raise TablectlError("board refused %s: %s (%s)" % (name, reply.get("msg"), reply.get("err")))
                return reply
            _link, board = s.connected_link()
            if self.pool_link is not None:
                linked = self._pay_linked(s, command, hands, req)
                if linked is not None:
                    return {"ok": True, "board": board, "result": linked}
            result = pay_jackpot(command, board, hands, s.ledger, bool(req.get("dry_run")))
            return {"ok": True, "board": board, "result": result}
        if op == "pool_hit":
            if self.pool_link is None:
                raise TablectlError("this service feeds no pool (start it with --pool URL)")
            s = self.loop_for(req.get("board"), req.get("port"))
            from .awards import parse_hands
            hands_in = req.get("hands") if req.get("hands") is not None else [[req.get("seat"), req.get("cards")]]
            if not isinstance(hands_in, list) or not 1 <= len(hands_in) <= 8 or \
                    not all(isinstance(h, list) and len(h) == 2 for h in hands_in):
                raise TablectlError("hands must be a list of [seat, cards] (1 to 8)")
            hands = parse_hands([h[0] for h in hands_in], [h[1] for h in hands_in])
            for seat in hands:
                if not isinstance(seat, int) or not 1 <= seat <= 8:
                    raise TablectlError("seat %d is not a seat number 1..8" % seat)

            def board_command(name: str, args: dict[str, Any], command_id: Optional[int] = None) -> dict[str, Any]:
                reply = s.command(name, args, command_id)
                if not reply.get("ok"):
                    raise TablectlError("board refused %s: %s (%s)" % (name, reply.get("msg"), reply.get("err")))
                return reply
            linked = self._pay_linked(s, board_command, hands, req)
            if linked is None:
                raise TablectlError("board %s has not joined a pool yet (its service has not reached the pool): "
                                    "see `tablectl status` and the service's log" % s.board_id)
            hits = [h for h in linked["hits"] if h.get("lock_no")]
            if not hits:
                raise TablectlError("no pool hand in this round's declaration: only a royal flush (and a straight "
                                    "flush on the 10%% option) is paid from the pool (rulebook 000 rule 9.3)")
            return {"ok": True, "board": s.board_id, "hit": hits[0], "hits": hits, "result": linked}
        if op == "pool_link":
            return {"ok": True, "pool": self.pool_link.status() if self.pool_link else None}
        if op == "commit_times":
            s = self.loop_for(req.get("board"), req.get("port"))
            return {"ok": True, "board": s.board_id, "committed": s.committed}
        if op == "provision":
            # The key is made here and goes to the key store and the board; never to the caller.
            from .link import provision
            s = self.loop_for(req.get("board"), req.get("port"))
            link, board = s.connected_link()
            board = provision(link, lambda name, args: s.command(name, args))
            return {"ok": True, "board": board, "keys": s.keys.folder}
        raise ValueError("unknown request %r" % op)

    def _pay_linked(self, s: "PortLoop", command: Any, hands: Any, req: dict[str, Any]) -> Optional[dict[str, Any]]:
        """A linked board's round through its pool (awards.pay_linked_jackpot), or None when the
        board has joined no pool (its own meter is then its progressive)."""
        from .awards import pay_linked_jackpot
        status = command("status", {})
        if not status.get("pool"):
            return None
        if req.get("dry_run"):
            raise TablectlError("a linked table has no dry run: the pool locks its amounts when the round is declared")
        link = self.pool_link
        _link, board = s.connected_link()
        return pay_linked_jackpot(command, board, hands,
                                  lambda round_no, hands_0: link.declare(s, round_no, hands_0),
                                  lambda lock_nos: link.confirm(s, lock_nos))

    def serve_forever(self) -> None:
        self.start()
        try:
            while True:
                time.sleep(0.5)
        finally:
            self.stop()
