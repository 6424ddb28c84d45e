"""How a CLI command reaches a board: through the running service (its control socket next to
the ledger), or, with no service running, straight to the board's port (bench use)."""
import json
import os
import socket

from .errors import TablectlError
from .ledger import Ledger
from .link import BoardLink, open_port
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
            self.ser = open_port(args.port)
            self.link = BoardLink(self.ser)
            self.link.hello()

    def close(self):
        if self.sock is not None:
            self.sock.close()
        if self.ser is not None:
            self.ser.close()

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

    def command(self, name, args=None, sign=False):
        """Returns the board's reply; raises TablectlError on a refusal, with the board's reason."""
        args = dict(args or {})
        if self.sock is not None:
            reply = self._request({"op": "command", "cmd": name, "args": args, "sign": sign,
                                   "board": self.args.board, "port": None})["reply"]
        else:
            key = counter = None
            if sign:
                ledger = Ledger(self.args.db)
                info = ledger.board(self.link.board_id)
                if not info["table_key"]:
                    raise TablectlError("no table key for board %s in %s: run `tablectl provision`"
                                        % (self.link.board_id, self.args.db))
                key = bytes.fromhex(info["table_key"])
                counter = ledger.next_counter(self.link.board_id, args.pop("_min_counter", 0))
                ledger.close()
            reply = self.link.command(name, args, key, counter)
        if not reply.get("ok"):
            raise TablectlError("board refused %s: %s (%s)" % (name, reply.get("msg"), reply.get("err")))
        return reply

    def board_id(self):
        if self.link is not None:
            return self.link.board_id
        return self.command("status")["board"]

    def set_key(self, key_hex):
        if self.sock is not None:
            self._request({"op": "set_key", "key": key_hex, "board": self.args.board, "port": None})
        else:
            ledger = Ledger(self.args.db)
            ledger.set_key(self.link.board_id, key_hex)
            ledger.close()
