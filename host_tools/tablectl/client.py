"""How a CLI command reaches a board: through the running service (its control socket next to
the ledger), or, with no service running, straight to the board's port (bench use)."""
from __future__ import annotations

import argparse
import json
import os
import socket
from typing import Any, Callable, Optional, Sequence

from table import vocab
from .errors import TablectlError
from .keys import KeyStore
from .link import BoardLink, key_gone_text, link_timeout_s, open_port, provision
from .service import control_path


def add_target_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--port", default=os.environ.get("TABLECTL_PORT"),
                   help="board port or pyserial URL (default: $TABLECTL_PORT)")
    p.add_argument("--db", default=os.environ.get("TABLECTL_DB", "tablectl.db"),
                   help="ledger file (default: $TABLECTL_DB or ./tablectl.db)")
    p.add_argument("--board", default=os.environ.get("TABLECTL_BOARD"),
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


class Target:
    def __init__(self, args: argparse.Namespace) -> None:
        self.args = args
        self.sock: Optional[socket.socket] = None
        self.link: Optional[BoardLink] = None
        self.ser: Any = None
        self.port_lock: Optional[int] = None
        self.buf = b""
        self.keys = KeyStore.for_ledger(args.db)
        path = control_path(args.db) if args.db else None
        if path and os.path.exists(path):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(max(15.0, link_timeout_s(5.0) + 10.0))  # the service waits for the board first
            try:
                s.connect(path)
                self.sock = s
                self.buf = b""
            except OSError:
                s.close()
        if self.sock is None:
            if not args.port:
                raise TablectlError("no service runs for %s and no --port was given: start `tablectl serve` "
                                    "or say which board with --port" % args.db)
            from . import owner
            owner.check_port(args.port)
            # The port is the service's while it runs: refuse rather than disturb its link.
            self.port_lock = owner.take_port(
                args.port, " (if it is `tablectl serve`, give its --db to go through it)")
            try:
                self.ser = open_port(args.port)
                self.link = BoardLink(self.ser, self.keys, _ledger_knows_keyed(args.db))
                self.link.hello()
            except BaseException:
                self.close()  # the port and its lock go back, so a retry in this process may take them
                raise

    def close(self) -> None:
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
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise TablectlError("the service closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        reply: dict[str, Any] = json.loads(line)
        if not reply.get("ok"):
            raise TablectlError(reply.get("error", "the service refused"))
        return reply

    def _link(self) -> BoardLink:
        if self.link is None:
            raise TablectlError("no board link: this command went through the service")
        return self.link

    def _board(self) -> str:
        board = self._link().board_id
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
                                   "board": self.args.board, "port": None})["reply"]
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
            return str(self._request({"op": "provision", "board": self.args.board, "port": None})["board"])
        return provision(self._link(), lambda name, args: self._direct(name, args, None))

    def jackpot(self, hands: Sequence[tuple[Any, Any]], dry_run: bool) -> dict[str, Any]:
        """Pay a round's winners (awards.py): through the service, or straight to the board."""
        if self.sock is not None:
            result: dict[str, Any] = self._request({"op": "jackpot", "hands": [[seat, text] for seat, text in hands],
                                                    "dry_run": dry_run, "board": self.args.board, "port": None})["result"]
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

