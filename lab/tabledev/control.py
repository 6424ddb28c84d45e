"""The bench's control socket (control.sock) of both virtual boards: newline-separated JSON
requests, each answered by one JSON line. The supervisors differ in what they do with a request,
not in how it travels, so the travelling is here once."""
import json
import selectors


class ControlSocket:
    """Accepts bench clients on a listening socket registered with `sel` and hands each request
    to handle(conn, request), which returns the reply (None: no reply). A request that is not
    JSON, or that handle() refuses with ValueError, KeyError or TypeError, is answered with
    {"ok": false, "error": ...} and the connection stays up."""

    def __init__(self, sel, listener, handle):
        self.sel = sel
        self.handle = handle
        self.bufs = {}
        sel.register(listener, selectors.EVENT_READ, self._accept)

    def _accept(self, listener):
        conn, _ = listener.accept()
        conn.setblocking(False)
        self.bufs[conn.fileno()] = b""
        self.sel.register(conn, selectors.EVENT_READ, self._readable)

    def _readable(self, conn):
        try:
            data = conn.recv(1 << 20)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            data = b""
        if not data:
            self.bufs.pop(conn.fileno(), None)
            try:
                self.sel.unregister(conn)
            except (KeyError, ValueError):
                pass
            conn.close()
            return
        buf = self.bufs.get(conn.fileno(), b"") + data
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            try:
                reply = self.handle(conn, json.loads(line))
            except (ValueError, KeyError, TypeError) as exc:
                reply = {"ok": False, "error": "bad bench request: %s" % exc}
            if reply is not None:
                send(conn, json.dumps(reply).encode() + b"\n")
        self.bufs[conn.fileno()] = buf


def send(conn, data):
    """All of data to a non-blocking socket; a client that went away is not the board's problem."""
    try:
        conn.setblocking(True)
        conn.sendall(data)
        conn.setblocking(False)
    except OSError:
        pass
