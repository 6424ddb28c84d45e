"""`tablectl sim --board pico`: the rig behind a pty (the board's USB CDC) and the bench's control
socket."""
import os
import pty
import random
import selectors
import socket
import sys
import time
import tty

from tablectl import FIRMWARE_DIR
from tablectl.errors import TablectlError
from tabledev.simulator import line_noise
from tabledev.control import ControlSocket
from tabledev.pico_sim.fsimage import PINMAP
from tabledev.pico_sim.interface import meter_from_display
from tabledev.pico_sim.rig import PicoRig


class PicoSupervisor:
    """`tablectl sim --board pico`: the rig behind a pty (the board's USB CDC) and the bench's
    control socket (the same requests as the unix-port virtual board's, so `tablectl bench`
    drives either)."""

    def __init__(self, state_dir, image=None, realtime=True, log=None, mpy=True, source=FIRMWARE_DIR,
                 pinmap_path=PINMAP, host_provisions=True):
        self.state_dir = os.path.abspath(state_dir)
        self.rig = PicoRig(state_dir, image, pinmap_path=pinmap_path, realtime=realtime, log=log, mpy=mpy,
                           source=source, host_provisions=host_provisions)
        self.sel = selectors.DefaultSelector()
        self.pins = {"keys": 0, "spots": 0, "switch": False}
        self.edges_sent = 0
        self.noise_bytes = 0
        self.noise_rng = random.Random(1)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    def start(self):
        self.master, self.slave = pty.openpty()
        tty.setraw(self.slave)
        tty.setraw(self.master)
        os.set_blocking(self.master, False)
        self.port = os.ttyname(self.slave)
        self.sel.register(self.master, selectors.EVENT_READ, self._from_host)
        self.sel.register(self._wake_r, selectors.EVENT_READ, self._to_host)
        path = os.path.join(self.state_dir, "control.sock")
        os.makedirs(self.state_dir, exist_ok=True)
        if os.path.exists(path):
            os.unlink(path)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(8)
        self.listener.setblocking(False)
        self.control = ControlSocket(self.sel, self.listener, self._control)
        self.rig.on_cdc = self._wake
        self.rig.start()
        with open(os.path.join(self.state_dir, "port"), "w") as f:
            f.write(self.port + "\n")
        from tabledev.simulator import note_virtual_board, stable_tty
        stable_tty(self.state_dir, self.port)
        self.note = note_virtual_board(self.state_dir, self.port, "emulated Pico")
        return self.port

    def _wake(self):
        try:
            os.write(self._wake_w, b"x")
        except BlockingIOError:
            pass

    def _to_host(self, fd):
        try:
            os.read(fd, 4096)
        except BlockingIOError:
            pass
        data = self.rig.take_output()
        if data and self.noise_bytes:
            data, self.noise_bytes = line_noise(data, self.noise_bytes, self.noise_rng)
        if data:
            try:
                os.write(self.master, data)
            except OSError:
                pass  # nobody reads the port: a CDC with no host drops what it sends

    def _from_host(self, fd):
        try:
            data = os.read(self.master, 65536)
        except (BlockingIOError, OSError):
            return
        if data:
            self.rig.send_to_board(data)

    def _control(self, _conn, req):
        op = req["op"]
        rig = self.rig
        if op == "edges":
            mode = rig.outputs()["mode"]
            if mode == "repl":
                return {"ok": False, "error": "the board is at its REPL (service sequence): cut its power "
                                             "(`tablectl bench power-cut`) to start the controller"}
            if mode != "app" or not rig.counting():
                # Pulses now would be lost (the bench drops a token, the board never counts it):
                # the bench asks again until the controller counts (Bench.edges).
                return {"ok": False, "booting": True,
                        "error": "the board is booting (the firmware has not started its counters yet); try again"}
            rig.feed_edges(req["edges"])
            self.edges_sent += len(req["edges"])
            return {"ok": True, "edges": len(req["edges"]), "edges_sent": self.edges_sent}
        if op in ("keys", "spots", "switch"):
            self.pins[op] = req["value"]
            rig.set_inputs(**{op: req["value"]})
            return {"ok": True, op: req["value"]}
        if op == "press":
            rig.press_key(int(req["bit"]), float(req.get("hold_ms", 80)))
            return {"ok": True}
        if op == "outputs":
            out = rig.outputs()
            return {"ok": True, "outputs": out, "mode": out["mode"], "boots": out["boots"], "pins": self.pins,
                    "port": self.port, "edges_sent": self.edges_sent, "board": "pico"}
        if op == "power_cut":
            rig.power_cut(float(req.get("after_ms", 0)))
            rig.call_sync(lambda: None)
            return {"ok": True, "boots": rig.boots}
        if op == "hang_io":
            rig.hang_io(float(req["ms"]))
            return {"ok": True}
        if op == "noise":
            self.noise_bytes += int(req.get("count", 16))
            return {"ok": True, "pending": self.noise_bytes}
        if op == "garbage":
            data = bytes(self.noise_rng.randrange(256) for _ in range(int(req.get("count", 64))))
            os.write(self.master, data)
            return {"ok": True}
        if op == "display_history":
            frames = rig.call_sync(lambda: list(rig.iface.frames))
            return {"ok": True, "history": [(t / 1e9, text, meter_from_display(text)) for t, text in frames]}
        if op == "advance":
            raise ValueError("the emulated Pico keeps its own time: it cannot be advanced")
        raise KeyError("unknown bench operation %r" % op)

    def serve_forever(self):
        import signal
        signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
        try:
            self.serve()
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def _watch_boot(self):
        """While the emulated Pico boots (minutes on a loaded machine), say so: a line every 10 s
        into a log, rewritten every 2 s on a terminal; then one line when the controller runs."""
        from tablectl.progress import Ticker
        now = time.monotonic()
        if now < getattr(self, "_boot_check_at", 0):
            return
        self._boot_check_at = now + 2.0
        out = self.rig.outputs()
        booting = out["mode"] == "boot"
        ticker = getattr(self, "_boot_ticker", None)
        if booting and ticker is None:
            self._boot_ticker = Ticker("the emulated Pico is booting", pipe_every_s=10)
        elif booting:
            ticker.tick("emulated %.1f s" % (out["now_ms"] / 1000.0))
        elif ticker is not None:
            ticker.done()
            self._boot_ticker = None
            print("the emulated Pico's %s after %.0f s" % ("REPL is up" if out["mode"] == "repl" else "controller runs",
                                                           now - ticker.start), file=sys.stderr, flush=True)

    def serve(self, until=lambda: False):
        """Relay the port and answer the bench until until() is true (a thread in benchmarks)."""
        while not until():
            for key, _ in self.sel.select(0.1):
                key.data(key.fileobj)
            self._watch_boot()
            if self.rig.device is None:
                return
            if self.rig.device.simulator.engine_room_error is not None:
                raise TablectlError("the emulator stopped: %s" % self.rig.device.simulator.engine_room_error)

    def stop(self):
        from tabledev.simulator import forget_virtual_board
        forget_virtual_board(getattr(self, "note", None))
        self.rig.stop()
        for name in ("control.sock", "port"):
            try:
                os.unlink(os.path.join(self.state_dir, name))
            except OSError:
                pass


def run_pico_sim(state_dir, image=None, realtime=True, out=sys.stdout, mpy=True):
    sup = PicoSupervisor(state_dir, image, realtime=realtime, mpy=mpy,
                         log=lambda text: print(text, file=sys.stderr, flush=True))
    port = sup.start()
    print("port %s" % port, file=out, flush=True)
    sup.serve_forever()
