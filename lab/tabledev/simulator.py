"""`tablectl sim`: the supervisor that makes the MicroPython unix port behave as a board.

It owns a pseudo-terminal whose other end is the board's serial port (pyserial and mpremote
open its path like /dev/ttyACM0), starts the firmware (firmware/main.py on the `micropython`
interpreter, in the state directory's fs/ as the board's filesystem), and:
  - relays the port to the firmware's link socket while the controller runs, or to the
    interpreter's REPL (its own pty) after the service sequence, for mpremote;
  - restarts the interpreter when it exits, as a board reboots: a power cut, a watchdog reset,
    or mpremote's soft reset (printing the soft-reboot banner mpremote waits for);
  - serves the bench (control.sock): pin levels and pulse trains in, outputs out, power cuts
    and line noise on demand.
"""
import json
import os
import pty
import random
import selectors
import shutil
import signal
import socket
import subprocess
import sys
import time
import tty

from tablectl import FIRMWARE_DIR
from tablectl.deploy import board_files
from tablectl.errors import TablectlError
from tabledev.control import ControlSocket, send
from tabledev.interpreter import micropython_path

EXIT_TO_REPL = 42
# Edges the virtual board is given at once: it keeps unplayed edges in its own heap.
MAX_EDGES_PER_REQUEST = 20000
EDGES_PER_MESSAGE = 100
# --baud: a UART's FIFO, the most bytes that may go out back to back. Bytes the firmware writes
# faster than the line rate wait in the relay (a transmit buffer), never dropped.
LINE_BURST_BYTES = 128
# An interpreter that stops this soon after it started, this many times in a row, is not a board
# being reset but firmware that cannot start (a heap too small, a broken file): the supervisor stops
# and says why instead of restarting it many times a second forever.
QUICK_STOP_S = 2.0
QUICK_STOPS_IN_A_ROW = 5


def install_firmware(fs_dir, source=FIRMWARE_DIR):
    """Copy the firmware onto the virtual board's filesystem (what a factory image holds): the
    virtual board's files (tablectl/deploy.py, board "sim"), as `tablectl flash` deploys them; a folder of the list that is
    already there is replaced whole, so a file removed from the firmware goes from the board too."""
    os.makedirs(fs_dir, exist_ok=True)
    files = board_files("sim", source)
    for folder in sorted({name.split("/")[0] for name, _ in files if "/" in name}):
        if os.path.isdir(os.path.join(fs_dir, folder)):
            shutil.rmtree(os.path.join(fs_dir, folder))
    for name, path in files:
        dst = os.path.join(fs_dir, *name.split("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(path, dst)


def _listen(path):
    if os.path.exists(path):
        os.unlink(path)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.bind(path)
    s.listen(8)
    s.setblocking(False)
    return s


def stable_board_id(state_dir):
    """The virtual board's id, like a chip's unique id: made once, kept in its state folder, so a
    restarted simulator is the same board to the ledger (Python's hash() is salted per process)."""
    path = os.path.join(state_dir, "board-id")
    try:
        with open(path) as f:
            text = f.read().strip()
        if text:
            return text
    except FileNotFoundError:
        pass
    os.makedirs(state_dir, exist_ok=True)
    text = "sim-%s" % os.urandom(4).hex()
    with open(path, "w") as f:
        f.write(text + "\n")
    return text


def virtual_boards():
    """The virtual boards running on this computer: [{"port", "state", "kind", "pid"}], from the
    notes each `tablectl sim` leaves in the temp folder (a note whose sim died is skipped)."""
    import glob
    import tempfile
    boards = []
    for path in sorted(glob.glob(os.path.join(tempfile.gettempdir(), "tablectl-sim-*.json"))):
        try:
            with open(path) as f:
                note = json.load(f)
            os.kill(int(note["pid"]), 0)
        except (OSError, ValueError, KeyError, TypeError):
            continue
        boards.append(note)
    return boards


def note_virtual_board(state_dir, port, kind):
    """Leave the note virtual_boards() reads (`tablectl ports` lists ptys with it); returns its path."""
    import tempfile
    path = os.path.join(tempfile.gettempdir(), "tablectl-sim-%d.json" % os.getpid())
    try:
        with open(path, "w") as f:
            json.dump({"port": port, "state": os.path.abspath(state_dir), "kind": kind, "pid": os.getpid()}, f)
    except OSError:
        return None
    return path


def forget_virtual_board(path):
    if path:
        try:
            os.unlink(path)
        except OSError:
            pass


def stable_tty(state_dir, port):
    """<state>/tty, a link to the board's pty: each `tablectl sim` gets a new /dev/pts/N, and a
    `tablectl serve --port <state>/tty` reopens the link and finds the restarted board there."""
    link = os.path.join(state_dir, "tty")
    tmp = link + ".new"
    try:
        if os.path.lexists(tmp):
            os.unlink(tmp)
        os.symlink(port, tmp)
        os.replace(tmp, link)
    except OSError:
        pass  # a folder on a file system without links: the port path still works
    return link


def line_noise(data, budget, rng):
    """Line noise on a board's port: one bit flipped in each of the first `budget` bytes.
    Returns (the bytes as they arrive, the budget left)."""
    data = bytearray(data)
    n = min(len(data), max(budget, 0))
    for i in range(n):
        data[i] ^= 1 << rng.randrange(8)
    return bytes(data), budget - n

class Simulator:
    def __init__(self, state_dir, heap=None, seats=8, backend="pio", board_id=None, log=None, baud=None):
        self.state_dir = os.path.abspath(state_dir)
        self.fs_dir = os.path.join(self.state_dir, "fs")
        self.heap = heap
        self.seats = seats
        self.backend = backend
        self.board_id = board_id or stable_board_id(self.state_dir)
        self.log = log or (lambda text: None)
        self.sel = selectors.DefaultSelector()
        self.child = None
        self.child_tty = None  # our end of the interpreter's own pty (REPL / console)
        self.link_conn = None
        self.bench_conn = None
        self.bench_buf = b""
        self.pins = {"keys": 0, "spots": 0, "switch": False}
        self.outputs = {}
        self.mode = "boot"  # boot | app | repl
        self.raw_repl = False
        self.swallow_banner = False
        self.noise_bytes = 0
        self.noise_rng = random.Random(1)
        self.boots = 0
        self.stopping = False
        self.console = None
        # Line-rate limit (None: the relay runs as fast as the pty and sockets go). 8N1: 10 bits a byte.
        self.baud = baud
        self.line = {"to_host": 0, "to_board": 0}  # bytes relayed to the wire, per direction
        self.line_q = {"to_host": bytearray(), "to_board": bytearray()}
        self.line_tokens = {"to_host": 0.0, "to_board": 0.0}
        self.line_t = time.monotonic()
        self.edges_sent = 0  # edges handed to the board since its last boot
        self.display_history = []  # (wall time s, display text, meter cents), newest last

    # ------------------------------------------------------------------ lifecycle
    def start(self):
        os.makedirs(self.state_dir, exist_ok=True)
        if not os.path.exists(os.path.join(self.fs_dir, "main.py")):
            install_firmware(self.fs_dir)
        self.console = open(os.path.join(self.state_dir, "console.log"), "ab", buffering=0)
        self.master, self.slave = pty.openpty()
        tty.setraw(self.slave)
        tty.setraw(self.master)
        self.port = os.ttyname(self.slave)
        os.set_blocking(self.master, False)
        self.sel.register(self.master, selectors.EVENT_READ, self._from_host)
        self.bench_listener = _listen(os.path.join(self.state_dir, "bench.sock"))
        self.link_listener = _listen(os.path.join(self.state_dir, "link.sock"))
        self.control_listener = _listen(os.path.join(self.state_dir, "control.sock"))
        self.sel.register(self.bench_listener, selectors.EVENT_READ, self._accept_bench)
        self.sel.register(self.link_listener, selectors.EVENT_READ, self._accept_link)
        self.control = ControlSocket(self.sel, self.control_listener, self._control)
        with open(os.path.join(self.state_dir, "port"), "w") as f:
            f.write(self.port + "\n")
        stable_tty(self.state_dir, self.port)
        self.note = note_virtual_board(self.state_dir, self.port, "virtual board (unix port)")
        self._boot(repl_only=False)
        return self.port

    def _boot(self, repl_only):
        self.boots += 1
        self.edges_sent = 0
        self.mode = "repl" if repl_only else "boot"
        master, slave = pty.openpty()
        tty.setraw(master)
        cmd = [micropython_path()]
        if self.heap:
            cmd += ["-X", "heapsize=%s" % self.heap]
        if not repl_only:
            cmd.append("main.py")
        env = dict(os.environ)
        env.update({"MICROPYPATH": ".:.frozen", "TABLE_SIM_STATE": self.state_dir,
                    "TABLE_SIM_ID": self.board_id, "TABLE_SIM_SEATS": str(self.seats),
                    "TABLE_SIM_BACKEND": self.backend})
        self.child = subprocess.Popen(cmd, cwd=self.fs_dir, stdin=slave, stdout=slave, stderr=slave,
                                      env=env, start_new_session=True)
        self.child_started = time.monotonic()
        os.close(slave)
        os.set_blocking(master, False)
        self.child_tty = master
        self.sel.register(master, selectors.EVENT_READ, self._from_child_tty)
        # Interpreter starts, REPL-only ones included: not the board's own boot count (its journal
        # counts the controller's boots; `tablectl status` shows that one).
        self.log("power-up %d of this simulator (%s)" % (self.boots, "REPL" if repl_only else "controller"))

    def _child_gone(self):
        code = self.child.wait()
        if self.child_tty is not None:
            try:
                self.sel.unregister(self.child_tty)
            except (KeyError, ValueError):
                pass
            os.close(self.child_tty)
            self.child_tty = None
        for conn in (self.link_conn, self.bench_conn):
            if conn is not None:
                self._drop(conn)
        self.link_conn = None
        self.bench_conn = None
        self.child = None
        return code

    def power_cut(self):
        """Cut the power: the interpreter dies wherever it is (mid-write included), then boots."""
        if self.child is not None:
            try:
                os.killpg(self.child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self._child_gone()
        self.raw_repl = False
        self._boot(repl_only=False)

    def stop(self):
        self.stopping = True
        forget_virtual_board(getattr(self, "note", None))
        if self.child is not None:
            try:
                os.killpg(self.child.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.child.wait()
        for name in ("bench.sock", "link.sock", "control.sock", "port"):
            try:
                os.unlink(os.path.join(self.state_dir, name))
            except OSError:
                pass

    def serve_forever(self):
        signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
        try:
            while True:
                self.run_once(0.05)
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def run_once(self, timeout):
        if self.baud and (self.line_q["to_host"] or self.line_q["to_board"]):
            timeout = min(timeout, 16.0 * 10 / self.baud)  # back when 16 more bytes may go
        for key, _ in self.sel.select(timeout):
            key.data(key.fileobj)
        if self.baud:
            self._pump_line()
        if self.child is not None and self.child.poll() is not None:
            lived_s = time.monotonic() - self.child_started
            code = self._child_gone()
            if self.stopping:
                return
            self._count_quick_stop(code, lived_s)
            if code == EXIT_TO_REPL:
                self._boot(repl_only=True)
            elif self.mode == "repl" and self.raw_repl:
                # mpremote's soft reset in the raw REPL: a board reboots and stays in raw REPL.
                self._write_host(b"MPY: soft reboot\r\n")
                self.swallow_banner = True
                self._boot(repl_only=True)
            else:
                self._boot(repl_only=False)

    def _count_quick_stop(self, code, lived_s):
        """Raise a TablectlError, naming the firmware's last words, after QUICK_STOPS_IN_A_ROW
        interpreters that each stopped within QUICK_STOP_S of starting."""
        if code == EXIT_TO_REPL or code == 0 or lived_s >= QUICK_STOP_S:
            self.quick_stops = 0
            return
        self.quick_stops = getattr(self, "quick_stops", 0) + 1
        if self.quick_stops < QUICK_STOPS_IN_A_ROW:
            return
        path = os.path.join(self.state_dir, "console.log")
        why = "exit status %s" % code
        try:
            with open(path, "rb") as f:
                f.seek(max(0, os.path.getsize(path) - 4096))
                lines = [ln.strip() for ln in f.read().decode("utf-8", "replace").splitlines() if ln.strip()]
            if lines:
                why = lines[-1]
        except OSError:
            pass
        raise TablectlError("the firmware stopped within %.0f s of starting %d times in a row (%s; see %s): "
                            "fix that (a --heap too small for it?) and start the board again"
                            % (QUICK_STOP_S, self.quick_stops, why[:200], path))

    # ------------------------------------------------------------------ the port
    def _write_host(self, data):
        if self.noise_bytes:
            data = self._corrupt(data)
        if self.baud:
            self.line_q["to_host"] += data
            self._pump_line()
            return
        self.line["to_host"] += len(data)
        try:
            os.write(self.master, data)
        except BlockingIOError:
            # The host is not reading: a real UART would overrun here; drop like one.
            pass
        except OSError:
            pass

    def _pump_line(self):
        """--baud: move queued bytes onto the wire at the line rate (a token bucket per direction,
        at most LINE_BURST_BYTES back to back)."""
        now = time.monotonic()
        rate = self.baud / 10.0
        dt, self.line_t = now - self.line_t, now
        for way in ("to_host", "to_board"):
            q = self.line_q[way]
            tokens = min(LINE_BURST_BYTES, self.line_tokens[way] + dt * rate)
            n = min(len(q), int(tokens))
            if n and way == "to_board" and (self.mode != "app" or self.link_conn is None):
                del q[:]  # the board rebooted: bytes in flight to it are lost, as on a UART
                n = 0
            if n:
                if way == "to_host":
                    try:
                        n = os.write(self.master, bytes(q[:n]))
                    except BlockingIOError:
                        n = 0  # the host is not reading: the line waits (flow control)
                    except OSError:
                        pass  # no host on the pty: the bytes go nowhere, at line rate
                else:
                    self._send(self.link_conn, bytes(q[:n]))
                del q[:n]
                self.line[way] += n
                tokens -= n
            self.line_tokens[way] = tokens

    def _corrupt(self, data):
        data, self.noise_bytes = line_noise(data, self.noise_bytes, self.noise_rng)
        return data

    def _from_host(self, fd):
        try:
            data = os.read(self.master, 65536)
        except (BlockingIOError, OSError):
            return
        if not data:
            return
        if self.mode == "app" and self.link_conn is not None:
            if self.baud:
                self.line_q["to_board"] += data
                self._pump_line()
                return
            self.line["to_board"] += len(data)
            self._send(self.link_conn, data)
        elif self.mode == "repl" and self.child_tty is not None:
            for b in data:
                if b == 1:
                    self.raw_repl = True
                elif b == 2:
                    self.raw_repl = False
            try:
                os.write(self.child_tty, data)
            except OSError:
                pass
        # while booting, bytes from the host are lost, as on a board's UART before it is set up

    def _from_child_tty(self, fd):
        try:
            data = os.read(fd, 65536)
        except OSError:
            data = b""
        if not data:
            try:
                self.sel.unregister(fd)
            except (KeyError, ValueError):
                pass
            return
        if self.mode == "repl":
            if self.swallow_banner:
                # A fresh interpreter greets in the friendly REPL; the board would still be raw.
                if b">>> " in data:
                    self.swallow_banner = False
                    os.write(fd, b"\x01")
                return
            self._write_host(data)
        else:
            self.console.write(data)  # tracebacks and prints: the service console log

    # ------------------------------------------------------------------ firmware sockets
    def _accept_link(self, listener):
        conn, _ = listener.accept()
        conn.setblocking(False)
        self.link_conn = conn
        self.mode = "app"
        self.sel.register(conn, selectors.EVENT_READ, self._from_link)

    def _from_link(self, conn):
        data = self._recv(conn)
        if data:
            self._write_host(data)

    def _accept_bench(self, listener):
        conn, _ = listener.accept()
        conn.setblocking(False)
        self.bench_conn = conn
        self.bench_buf = b""
        self.sel.register(conn, selectors.EVENT_READ, self._from_bench)

    def _from_bench(self, conn):
        data = self._recv(conn)
        if not data:
            return
        self.bench_buf += data
        while b"\n" in self.bench_buf:
            line, self.bench_buf = self.bench_buf.split(b"\n", 1)
            msg = json.loads(line)
            if "hello" in msg:
                self._send(conn, json.dumps(self.pins).encode() + b"\n")
            if "out" in msg:
                if msg["out"].get("display") != self.outputs.get("display"):
                    # When each new display text reached us: the bench's display-latency record.
                    self.display_history.append((time.time(), msg["out"].get("display"), msg["out"].get("meter")))
                    del self.display_history[:-2000]
                self.outputs = msg["out"]

    def _recv(self, conn):
        try:
            data = conn.recv(65536)
        except (BlockingIOError, InterruptedError):
            return b""
        except OSError:
            data = b""
        if not data:
            self._drop(conn)
            if conn is self.link_conn:
                self.link_conn = None
            if conn is self.bench_conn:
                self.bench_conn = None
        return data

    def _drop(self, conn):
        try:
            self.sel.unregister(conn)
        except (KeyError, ValueError):
            pass
        conn.close()

    def _send(self, conn, data):
        send(conn, data)

    def _to_board(self, msg):
        if self.bench_conn is not None:
            self._send(self.bench_conn, json.dumps(msg).encode() + b"\n")

    # ------------------------------------------------------------------ the bench (control.sock)
    def _control(self, conn, req):
        op = req["op"]
        if op == "edges":
            if self.bench_conn is None:
                return {"ok": False, "booting": True,
                        "error": "the board is booting (the firmware has not taken its pins yet); try again"}
            if len(req["edges"]) > MAX_EDGES_PER_REQUEST:
                raise ValueError("%d edges in one request: send at most %d at a time (the board holds what "
                                 "it has not played in its own memory)" % (len(req["edges"]), MAX_EDGES_PER_REQUEST))
            # Small messages: the board parses each in its own heap, where a large one may not
            # find a contiguous block. Times stay relative to the first slice's arrival.
            edges = req["edges"]
            for i in range(0, len(edges), EDGES_PER_MESSAGE):
                self._to_board({"edges": edges[i:i + EDGES_PER_MESSAGE], "accelerated": bool(req.get("accelerated")),
                                "continue": i > 0})
            self.edges_sent += len(req["edges"])
            # edges_sent: what the board must have taken in (outputs edges_fed) before it is idle.
            return {"ok": True, "edges": len(req["edges"]), "edges_sent": self.edges_sent}
        if op in ("keys", "spots", "switch"):
            self.pins[op] = req["value"]
            self._to_board({op: req["value"]})
            return {"ok": True, op: req["value"]}
        if op == "advance":
            self._to_board({"advance_ms": int(req["ms"])})
            return {"ok": True}
        if op == "backend":
            self.backend = req["value"]
            self._to_board({"backend": req["value"]})
            return {"ok": True}
        if op == "outputs":
            return {"ok": True, "outputs": self.outputs, "mode": self.mode, "boots": self.boots,
                    "seats": self.seats,
                    "pins": self.pins, "port": self.port, "edges_sent": self.edges_sent,
                    "line": dict(self.line, baud=self.baud, queued_to_host=len(self.line_q["to_host"]),
                                 queued_to_board=len(self.line_q["to_board"]), t=time.monotonic())}
        if op == "display_history":
            return {"ok": True, "history": self.display_history}
        if op == "power_cut":
            self.power_cut()
            return {"ok": True, "boots": self.boots}
        if op == "noise":
            self.noise_bytes += int(req.get("count", 16))
            return {"ok": True, "pending": self.noise_bytes}
        if op == "garbage":
            self._write_host(bytes(self.noise_rng.randrange(256) for _ in range(int(req.get("count", 64)))))
            return {"ok": True}
        raise KeyError("unknown bench operation %r" % op)



def run_sim(state_dir, heap=None, seats=8, backend="pio", board_id=None, out=sys.stdout, baud=None):
    sim = Simulator(state_dir, heap, seats, backend, board_id,
                    log=lambda text: print(text, file=sys.stderr, flush=True), baud=baud)
    port = sim.start()
    print("port %s" % port, file=out, flush=True)
    print("(%s follows this board when tablectl sim restarts: give it to `tablectl serve --port`)"
          % os.path.join(sim.state_dir, "tty"), file=sys.stderr, flush=True)
    sim.serve_forever()
