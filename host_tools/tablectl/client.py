"""How a CLI command reaches a board: through the running service (its control socket next to
the ledger), or, with no service running, straight to the board's port (bench use)."""
from __future__ import annotations

import argparse
import json
import os
import socket
import time
from typing import Any, Callable, Optional, Sequence

from table import vocab
from .errors import TablectlError, WrongTarget
from .keys import KeyStore
from .link import BoardLink, key_gone_text, link_timeout_s, open_port, provision
from .service import control_path


class _Named(argparse.Action):
    """Stores a flag's value and remembers it was on the command line: a refusal and `tablectl
    where` say where each value came from (source())."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: Any,
                 option_string: Optional[str] = None) -> None:
        setattr(namespace, self.dest, values)
        namespace.named_flags = set(getattr(namespace, "named_flags", None) or ()) | {self.dest}


def add_target_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", default=os.environ.get("TABLECTL_PORT"), action=_Named,
                   help="board port or pyserial URL (default: $TABLECTL_PORT); with a running service, "
                        "one of the ports it holds")
    p.add_argument("--db", default=os.environ.get("TABLECTL_DB", "tablectl.db"), action=_Named,
                   help="ledger file (default: $TABLECTL_DB or ./tablectl.db)")
    p.add_argument("--board", default=os.environ.get("TABLECTL_BOARD"), action=_Named,
                   help="board id, when the service runs several tables (default: $TABLECTL_BOARD)")


def _ledger_knows_keyed(db: Optional[str]) -> Optional[Callable[[str], bool]]:
    """The ledger's word on whether a board is keyed (read at each hello), when there is one."""
    if not db or not os.path.exists(db):
        return None

    def knows(board: str) -> bool:
        from .ledger import Ledger
        ledger = Ledger(db, readonly=True)
        try:
            return ledger.knows_keyed(board)
        finally:
            ledger.close()
    return knows


def source(args: Any, name: str) -> str:
    """Where args.<name> (db, port or board) came from, as a person says it: the flag, the
    environment, the config file or the default. One rule: a flag wins over TABLECTL_*, which
    wins over the config file (userconfig)."""
    from . import userconfig
    if name in (getattr(args, "named_flags", None) or ()):
        return "--%s" % name
    var = userconfig.SETTINGS[name]
    if var in userconfig.FILLED:
        return "config file %s" % userconfig.FILLED[var]
    if os.environ.get(var):
        return "$%s" % var
    return "default"


def same_port(a: Optional[str], b: Optional[str]) -> bool:
    """Two names of one port (/dev/serial/by-id/... and its /dev/ttyACMn; a URL as written)."""
    if not a or not b:
        return False
    if "://" in a or "://" in b:
        return a == b
    return os.path.realpath(a) == os.path.realpath(b)


def connect_service(db: Optional[str]) -> Optional[socket.socket]:
    """The control socket of the service that owns ledger `db`, or None when none runs."""
    path = control_path(db) if db else None
    if not path or not os.path.exists(path):
        return None
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(max(15.0, link_timeout_s(5.0) + 10.0))  # the service waits for the board first
    try:
        s.connect(path)
    except OSError:
        s.close()
        return None
    return s


def port_server(port: str) -> Optional[tuple[str, str]]:
    """(pid, ledger) of the `tablectl serve` holding `port`, from its lock file; ledger is "" when
    the holder is another program (a monitor, a flash)."""
    from . import owner
    held = owner.holder(owner.port_lock_path(port))
    if held is None:
        return None
    pid, note = held
    return pid, note[:-len(".sock")] if note.endswith(".sock") else ""


def refuse_unserved_port(args: Any, served: Sequence[str]) -> None:
    """A --port that the ledger's service does not hold: one line naming both and the way on."""
    port, db = args.port, args.db
    holder = port_server(port) if "://" not in port else None
    if holder and holder[1]:
        way = "%s is served by pid %s with the ledger %s: give --db %s" % (port, holder[0], holder[1], holder[1])
    elif holder:
        way = "pid %s holds %s (`tablectl ports` says what it is)" % (holder[0], port)
    else:
        way = "to reach %s directly, give its own ledger with --db (not %s)" % (port, db)
    raise WrongTarget("port %s (%s) is not a board of the ledger %s (%s), whose service holds %s: %s"
                        % (port, source(args, "port"), db, source(args, "db"), ", ".join(served) or "no port", way))


class Target:
    """One board, reached by one rule (docs: `tablectl where` prints it): the service of --db when
    it runs, which must hold --port when one is named; else --port straight, whose board must be
    one the ledger knows (or the ledger new) and --board when one is named. Any mismatch is a
    one-line refusal before anything is sent."""

    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.sock: Optional[socket.socket] = None
        self.link: Optional[BoardLink] = None
        self.ser: Any = None
        self.port_lock: Optional[int] = None
        self.buf = b""
        from . import owner
        if args.port:
            owner.check_port(args.port)  # a port that cannot be a board, whoever would reach it
        self.keys = KeyStore.for_ledger(args.db)
        self.sock = connect_service(args.db)
        if self.sock is not None:
            if args.port:
                try:
                    sessions = self._request({"op": "sessions"})["sessions"]
                    if not any(same_port(args.port, s["port"]) for s in sessions):
                        refuse_unserved_port(args, [s["port"] for s in sessions])
                except BaseException:
                    self.close()
                    raise
            return
        if not args.port:
            raise TablectlError("no service runs for %s (%s) and no --port was given: start `tablectl serve` "
                                "or say which board with --port" % (args.db, source(args, "db")))
        # The port is the service's while it runs: refuse rather than disturb its link.
        holder = port_server(args.port) if "://" not in args.port else None
        if holder and holder[1]:
            raise WrongTarget("port %s is served by pid %s with the ledger %s: give --db %s (the ledger "
                                "given, %s, has no service)" % (args.port, holder[0], holder[1], holder[1], args.db))
        self.port_lock = owner.take_port(
            args.port, " (if it is `tablectl serve`, give its --db to go through it)")
        try:
            self.ser = open_port(args.port)
            self.link = BoardLink(self.ser, self.keys, _ledger_knows_keyed(args.db))
            self.link.on_wait = self._ticker("waiting for the board on %s to answer" % args.port).tick
            self.link.hello()
            self._check_board(self._board())
        except BaseException:
            self.close()  # the port and its lock go back, so a retry in this process may take them
            raise

    def _check_board(self, board: str) -> None:
        """The board on the port is the one named (--board) and one of the ledger's."""
        args = self.args
        if args.board and board != args.board:
            raise WrongTarget("the board on %s is %s, not %s (%s): nothing was sent"
                                % (args.port, board, args.board, source(args, "board")))
        if not os.path.exists(args.db):
            return
        from .ledger import Ledger
        ledger = Ledger(args.db, readonly=True)
        try:
            known = ledger.boards()
        finally:
            ledger.close()
        if known and board not in known:
            raise WrongTarget("the board on %s is %s, but the ledger %s (%s) keeps the books of %s: give "
                                "the ledger of %s's table with --db (or a new file for a new table); nothing was sent"
                                % (args.port, board, args.db, source(args, "db"), ", ".join(known), board))

    def _ticker(self, what: str) -> Any:
        """A progress line on a terminal while a board is slow (an emulated Pico takes minutes)."""
        from .progress import Ticker
        # A full-screen monitor says it on its own screen (quiet_waits): a line would scribble on it.
        self.ticker = Ticker(what, every_s=0 if getattr(self.args, "quiet_waits", False) else 2.0)
        return self.ticker

    def close(self) -> None:
        if getattr(self, "ticker", None) is not None:
            self.ticker.done()
        if self.sock is not None:
            self.sock.close()
        if self.ser is not None:
            self.ser.close()
        if self.port_lock is not None:
            from . import owner
            owner.release(self.port_lock)
            self.port_lock = None

    def __enter__(self) -> "Target":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _request(self, req: dict[str, Any]) -> dict[str, Any]:
        if self.sock is None:
            raise TablectlError("no service connection")
        self.sock.sendall(json.dumps(req).encode() + b"\n")
        patience_s = self.sock.gettimeout() or 15.0
        deadline = time.monotonic() + patience_s
        ticker = self._ticker("waiting for the service of %s (it waits for the board)" % self.args.db)
        self.sock.settimeout(0.5)
        try:
            while b"\n" not in self.buf:
                try:
                    chunk = self.sock.recv(65536)
                except socket.timeout:
                    if time.monotonic() > deadline:
                        raise TablectlError("the service of %s did not answer within %.0f s" % (self.args.db, patience_s))
                    ticker.tick()
                    continue
                if not chunk:
                    raise TablectlError("the service closed the connection")
                self.buf += chunk
        finally:
            self.sock.settimeout(patience_s)
            ticker.done()
        line, self.buf = self.buf.split(b"\n", 1)
        reply: dict[str, Any] = json.loads(line)
        if not reply.get("ok"):
            if reply.get("wrong_target"):
                raise WrongTarget(reply.get("error", "the service holds no such board"))
            raise TablectlError(reply.get("error", "the service refused"))
        return reply

    def _link(self) -> BoardLink:
        if self.link is None:
            raise TablectlError("no board link: this command went through the service")
        return self.link

    def _board(self) -> str:
        link = self._link()
        board = link.board_id or link.lost_key_board  # one that lost its key is named, for its provision
        if board is None:
            raise TablectlError("the board on %s has not said who it is" % self.args.port)
        return board

    def command(self, name: str, args: Optional[dict[str, Any]] = None,
                command_id: Optional[int] = None) -> dict[str, Any]:
        """Returns the board's reply; raises TablectlError on a refusal, with the board's reason.
        Every frame to a keyed board is signed (the trust rule, protocol.py)."""
        args = dict(args or {})
        reply: dict[str, Any]
        if self.sock is not None:
            reply = self._request({"op": "command", "cmd": name, "args": args,
                                   "board": self.args.board, "port": self.args.port})["reply"]
            if not isinstance(reply, dict):
                raise TablectlError("the service sent no reply for %s" % name)
        else:
            link = self._link()
            if (link.key_missing or link.lost_key_board) and name != vocab.PROVISION:
                raise TablectlError(key_gone_text(link, link.board_id or link.lost_key_board, self.keys.folder))
            if link.key is None and name in vocab.GUARDED_COMMANDS:
                raise TablectlError("no table key for board %s in %s: run `tablectl provision`"
                                    % (link.board_id, self.keys.folder))
            reply = self._direct(name, args, command_id)
        if not reply.get("ok"):
            raise TablectlError("board refused %s: %s (%s)" % (name, reply.get("msg"), reply.get("err")))
        return reply

    def _direct(self, name: str, args: dict[str, Any], command_id: Optional[int]) -> dict[str, Any]:
        """Straight to the board (no service): a command that changes anything is recorded in the
        ledger as an intent before it is sent and with its reply after, as the service does."""
        link = self._link()
        board = link.board_id or link.lost_key_board or self._board()
        if name in vocab.READ_COMMANDS:
            return link.command(name, args, command_id=command_id)
        from .ledger import Ledger
        cid = command_id if command_id is not None else link.new_id()
        logged = dict(args)
        if "key" in logged:
            logged["key"] = "(withheld)"
        ledger = Ledger(self.args.db)
        try:
            ledger.note(board, "intent", {"cmd": name, "args": logged, "id": cid})
            reply = None
            try:
                reply = link.command(name, args, command_id=cid)
            finally:
                ledger.note(board, "cmd", {"cmd": name, "args": logged, "id": cid, "reply": reply})
        finally:
            ledger.close()
        return reply

    def board_id(self) -> str:
        if self.link is not None:
            return self._board()
        return str(self.command("status")["board"])

    def provision(self) -> str:
        """A new table key: made here (or in the service), stored in the key store, sent to the
        board (which takes it only with its service key switch on). Returns the board id."""
        if self.sock is not None:
            return str(self._request({"op": "provision", "board": self.args.board, "port": self.args.port})["board"])
        return provision(self._link(), lambda name, args: self._direct(name, args, None))

    def jackpot(self, hands: Sequence[tuple[Any, Any]], dry_run: bool) -> dict[str, Any]:
        """Pay a round's winners (awards.py): through the service, or straight to the board."""
        if self.sock is not None:
            result: dict[str, Any] = self._request({"op": "jackpot", "hands": [[seat, text] for seat, text in hands],
                                                    "dry_run": dry_run, "board": self.args.board, "port": self.args.port})["result"]
            return result
        from .awards import parse_hands, pay_jackpot
        from .ledger import Ledger
        parsed = parse_hands([h[0] for h in hands], [h[1] for h in hands])
        ledger = Ledger(self.args.db, readonly=True) if os.path.exists(self.args.db) else None
        try:
            return pay_jackpot(lambda n, a, command_id=None: self.command(n, a, command_id=command_id),
                               self._board(), parsed, ledger, dry_run)
        finally:
            if ledger is not None:
                ledger.close()

