"""An emulated Pico in this process (benchmarks/bench_pico.py, benchmarks/pico_cuts.py, tests/pico):
the supervisor of `tablectl sim --board pico` on a thread, the bench client on its control socket,
a host link on its USB pty, and the board's REPL reached through its service sequence."""
import threading
import time

from tabledev.bench import Bench, KEY_BITS
from tabledev.pico_sim import NS_PER_MS, PicoSupervisor
from tablectl.link import BoardLink, open_port


class EmulatedPico:
    """An emulated Pico in this process: supervisor thread, bench client, link on its pty."""

    def __init__(self, state_dir, image, source=None, pinmap_path=None, host_provisions=True):
        extra = {"source": source} if source else {}
        extra["host_provisions"] = host_provisions
        if pinmap_path:
            extra["pinmap_path"] = pinmap_path
        self.sup = PicoSupervisor(state_dir, image, realtime=False, log=lambda t: print("  " + t, flush=True), **extra)
        self.port = self.sup.start()
        self.stop_flag = False
        self.thread = threading.Thread(target=self.sup.serve, args=(lambda: self.stop_flag,), daemon=True)
        self.thread.start()
        self.rig = self.sup.rig
        self.bench = Bench(state_dir, timeout_s=300)
        self.link = None
        self.ser = None

    def ready(self, after_boots=1, timeout_s=900, without_host=False):
        """Until the controller shows its meter after boot number after_boots. without_host: or
        whatever the controller draws first instead with no service on the port (PROG OFF once
        its host has been silent too long, FAULT 04 when it boots with a full outbox)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            out = self.rig.outputs()
            if out["boots"] >= after_boots and out["mode"] == "app" and (
                    out["meter"] is not None or (without_host and out["display"].strip())):
                return out
            time.sleep(0.2)
        raise RuntimeError("the emulated Pico did not become ready")

    def connect(self, hello_timeout_s=120):
        if self.ser is not None:
            self.ser.close()
        self.ser = open_port(self.port)
        self.link = BoardLink(self.ser)
        self.link.hello(timeout_s=hello_timeout_s)

    def command(self, name, args=None):
        return self.link.command(name, args, timeout_s=900)

    def close(self):
        if self.ser is not None:
            self.ser.close()
        self.bench.close()
        self.stop_flag = True
        self.thread.join(5)
        self.sup.stop()

    def ready_ms(self, without_host=False):
        """Emulated ms from the last reset to the first frame showing the meter (without_host: the
        first frame the controller draws, see ready())."""
        boot_ns = self.rig.boot_ns
        frames = self.rig.call_sync(lambda: list(self.rig.iface.frames))
        for t, text in frames:
            shown = text.strip()
            if t >= boot_ns and shown and (shown.replace(".", "").isdigit() or without_host):
                return (t - boot_ns) / NS_PER_MS
        return None

    def repl(self, code, timeout_s=3600):
        """Boot with the service sequence (key switch on, service key held) and run code at the
        board's REPL; returns (stdout, emulated ms, busy cycles) of the run."""
        rig = self.rig
        if rig.outputs()["mode"] != "repl":
            rig.set_inputs(keys=1 << KEY_BITS["service"], switch=True)
            rig.power_cut()
            deadline = time.monotonic() + 600
            while rig.outputs()["mode"] != "repl":
                if time.monotonic() > deadline:
                    raise RuntimeError("no REPL after the service sequence")
                time.sleep(0.2)
            rig.set_inputs(keys=0, switch=False)
        rig.take_output()
        dev = rig.device
        before = rig.call_sync(lambda: (rig.clock.nanos, rig.mcu.core.cycles))
        fut = dev.simulator.submit(dev._aexec(code.encode(), timeout_s))
        try:
            out, err = fut.result(timeout_s + 60)
        finally:
            # rp2040py's REPL runner takes the USB CDC's output for itself and leaves it unwired:
            # without this, nothing the board says after the REPL reaches the port (a host's
            # hello went unanswered after every boot that followed).
            rig.call_sync(lambda: setattr(dev.cdc, "on_serial_data", rig._from_board))
        after = rig.call_sync(lambda: (rig.clock.nanos, rig.mcu.core.cycles))
        if err:
            raise RuntimeError("the board raised: %s" % err.decode(errors="replace")[-2000:])
        return out.decode(errors="replace"), (after[0] - before[0]) / NS_PER_MS, after[1] - before[1]


class EmulatedPicoProcess:
    """An emulated Pico in a process of its own (`tablectl sim --board pico --fast`): the emulator
    gets a core and an interpreter lock to itself, where EmulatedPico's supervisor thread shares this
    process's lock with the bench client and the link (benchmarks/bench_pico.py play-period). The same
    attributes as EmulatedPico for what the play-period bench uses: ready, connect, command, close, bench,
    link, rig.now_ms()."""

    class _Clock:
        def __init__(self, bench):
            self.bench = bench

        def now_ms(self):
            return self.bench.request("outputs")["outputs"]["now_ms"]

    def __init__(self, state_dir, image, log_path):
        import os
        from tabledev import procs
        os.environ["PICO_UF2"] = image
        self.proc, self.log = procs.start(["sim", "--board", "pico", "--fast", "--state", state_dir], log_path)
        line = self.proc.stdout.readline()
        if not line.startswith("port "):
            procs.stop(self.proc)
            raise RuntimeError("tablectl sim --board pico did not start: %r (see %s)" % (line, log_path))
        self.port = line.split()[1]
        self.bench = Bench(state_dir, timeout_s=300)
        self.rig = self._Clock(self.bench)
        self.link = None
        self.ser = None

    def ready(self, timeout_s=900):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            got = self.bench.request("outputs")
            out = got["outputs"]
            if got["boots"] >= 1 and got["mode"] == "app" and out["meter"] is not None:
                return out
            time.sleep(0.5)
        raise RuntimeError("the emulated Pico did not become ready")

    connect = EmulatedPico.connect
    command = EmulatedPico.command

    def close(self):
        from tabledev import procs
        if self.ser is not None:
            self.ser.close()
        self.bench.close()
        procs.stop(self.proc)
        self.log.close()
