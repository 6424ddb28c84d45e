"""How a CLI command reaches a board: through the running service (its control socket next to
the ledger), or, with no service running, straight to the board's port (bench use)."""
import json
import os
import socket

from table import vocab
from .errors import TablectlError
from .keys import KeyStore
from .link import BoardLink, new_key_hex, open_port
from .service import control_path


def add_target_arguments(p):
    p.add_argument("--port", default=os.environ.get("TABLECTL_PORT"),
                   help="board port or pyserial URL (default: $TABLECTL_PORT)")
    p.add_argument("--db", default=os.environ.get("TABLECTL_DB", "tablectl.db"),
                   help="ledger file (default: $TABLECTL_DB or ./tablectl.db)")
    p.add_argument("--board", help="board id, when the service runs several tables")


class Target:
    def __init__(self, args):
        self.args = args
        self.sock = None
        self.link = None
        self.ser = None
        self.port_lock = None
        path = control_path(args.db) if args.db else None
        if path and os.path.exists(path):
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(15)
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
                self.keys = KeyStore.for_ledger(args.db)
                self.link = BoardLink(self.ser, self.keys)
                self.link.hello()
            except BaseException:
                self.close()  # the port and its lock go back, so a retry in this process may take them
                raise

    def close(self):
        if self.sock is not None:
            self.sock.close()
        if self.ser is not None:
            self.ser.close()
        if self.port_lock is not None:
            from . import owner
            owner.release(self.port_lock)
            self.port_lock = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def _request(self, req):
        self.sock.sendall(json.dumps(req).encode() + b"\n")
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise TablectlError("the service closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        reply = json.loads(line)
        if not reply.get("ok"):
            raise TablectlError(reply.get("error", "the service refused"))
        return reply

    def command(self, name, args=None, command_id=None):
        """Returns the board's reply; raises TablectlError on a refusal, with the board's reason.
        Every frame to a keyed board is signed (the trust rule, protocol.py)."""
        args = dict(args or {})
        if self.sock is not None:
            reply = self._request({"op": "command", "cmd": name, "args": args,
                                   "board": self.args.board, "port": None})["reply"]
        else:
            if self.link.key is None and name in vocab.GUARDED_COMMANDS:
                raise TablectlError("no table key for board %s in %s: run `tablectl provision`"
                                    % (self.link.board_id, self.keys.folder))
            reply = self._direct(name, args, command_id)
        if not reply.get("ok"):
            raise TablectlError("board refused %s: %s (%s)" % (name, reply.get("msg"), reply.get("err")))
        return reply

    def _direct(self, name, args, command_id):
        """Straight to the board (no service): a command that changes anything is recorded in the
        ledger as an intent before it is sent and with its reply after, as the service does."""
        if name in vocab.READ_COMMANDS:
            return self.link.command(name, args, command_id=command_id)
        from .ledger import Ledger
        cid = command_id if command_id is not None else self.link.new_id()
        logged = dict(args)
        if "key" in logged:
            logged["key"] = "(withheld)"
        ledger = Ledger(self.args.db)
        try:
            ledger.note(self.link.board_id, "intent", {"cmd": name, "args": logged, "id": cid})
            reply = None
            try:
                reply = self.link.command(name, args, command_id=cid)
            finally:
                ledger.note(self.link.board_id, "cmd", {"cmd": name, "args": logged, "id": cid, "reply": reply})
        finally:
            ledger.close()
        return reply

    def board_id(self):
        if self.link is not None:
            return self.link.board_id
        return self.command("status")["board"]

    def provision(self):
        """A new table key: made here (or in the service), stored in the key store, sent to the
        board (which takes it only with its service key switch on). Returns the board id."""
        if self.sock is not None:
            return self._request({"op": "provision", "board": self.args.board, "port": None})["board"]
        key_hex = new_key_hex()
        self.link.expect_key(bytes.fromhex(key_hex))
        self.command("provision", {"key": key_hex})
        self.keys.set_table_key(self.link.board_id, bytes.fromhex(key_hex))
        from table import protocol as proto
        self.link.key = proto.MacKey(bytes.fromhex(key_hex))
        return self.link.board_id

    def jackpot(self, hands, dry_run):
        """Pay a round's winners (awards.py): through the service, or straight to the board."""
        if self.sock is not None:
            return self._request({"op": "jackpot", "hands": [[seat, text] for seat, text in hands],
                                  "dry_run": dry_run, "board": self.args.board, "port": None})["result"]
        from .awards import parse_hands, pay_jackpot
        from .ledger import Ledger
        parsed = parse_hands([h[0] for h in hands], [h[1] for h in hands])
        ledger = Ledger(self.args.db, readonly=True) if os.path.exists(self.args.db) else None
        try:
            return pay_jackpot(lambda n, a, command_id=None: self.command(n, a, command_id=command_id),
                               self.link.board_id, parsed, ledger, dry_run)
        finally:
            if ledger is not None:
                ledger.close()

