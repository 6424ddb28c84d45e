"""Host side of the bench jig (firmware/jig, hardware/BENCH.md): a second Pico that plays
acceptor pulse trains into the controller's COIN lines, commanded one line at a time.

    import serial
    from tabledev.jig import Jig
    with serial.Serial("/dev/ttyACM1", 115200, timeout=0.5) as port:
        jig = Jig(port)
        jig.ping()
        jig.coin(3, count=1, width_ms=50, gap_ms=50)          # one token into seat 3
        jig.coin("*", count=5, width_ms=30, gap_ms=30, glitches=2, pulses=3)

Seats are numbered 1-8 as on the harness labels, or "*" for all at once. The serial object is
handed in (pyserial: a device, a pty path, or loop:// in tests) and never opened here.
"""
from tablectl.errors import TablectlError

# The jig answers when the train has played; allow for the train plus the link.
_SLACK_S = 2.0


class JigError(TablectlError):
    pass


class Jig:
    def __init__(self, serial_obj, timeout_s=_SLACK_S):
        self.port = serial_obj
        self.timeout_s = timeout_s
        self.seats = 8

    def command(self, line, wait_s=0.0):
        """Send one command line; return the reply after OK, or raise JigError."""
        self.port.reset_input_buffer()
        self.port.write((line + "\n").encode("ascii"))
        self.port.flush()
        reply = self._readline(self.timeout_s + wait_s)
        if reply.startswith("OK"):
            return reply[2:].strip()
        if reply.startswith("ERR"):
            raise JigError("jig refused %r: %s" % (line, reply[3:].strip()))
        raise JigError("jig sent %r to %r" % (reply, line))

    def _readline(self, wait_s):
        import time

        deadline = time.monotonic() + wait_s
        buf = bytearray()
        while time.monotonic() < deadline:
            chunk = self.port.read(1)
            if not chunk:
                continue
            if chunk == b"\n":
                return buf.decode("ascii", "replace").strip()
            buf += chunk
        raise JigError("no answer from the jig within %.1f s (is it the jig's port?)" % wait_s)

    def ping(self):
        words = self.command("PING").split()  # JIG 1 SEATS 8
        if len(words) < 4 or words[0] != "JIG":
            raise JigError("not a jig: %s" % " ".join(words))
        self.seats = int(words[3])
        return {"version": int(words[1]), "seats": self.seats}

    def inhibits(self):
        """Which seats the controller inhibits now, as seen on the INHIBIT lines: list of bool."""
        mask = int(self.command("INH").split()[1])
        return [bool(mask >> i & 1) for i in range(self.seats)]

    def coin(self, seat, count=1, width_ms=50, gap_ms=50, glitches=0, pulses=1,
             coin_gap_ms=None, force=False):
        """Play `count` tokens into seat (1-8 or "*"). Returns {"sent": n, "refused": m}:
        tokens the jig pulsed, and tokens it held back because the seat was inhibited."""
        seat_text = "*" if seat in ("*", "all", None) else str(int(seat))
        if coin_gap_ms is None:
            coin_gap_ms = max(4 * gap_ms, 200)
        line = "COIN %s %d %d %d %d %d %d" % (seat_text, count, width_ms, gap_ms, glitches, pulses, coin_gap_ms)
        if force:
            line += " FORCE"
        duration_s = count * (pulses * width_ms + (pulses - 1) * gap_ms + coin_gap_ms) / 1000.0
        words = self.command(line, wait_s=duration_s).split()  # COIN sent refused
        return {"sent": int(words[1]), "refused": int(words[2])}

    def hold(self, seat, ms):
        """Hold seat's COIN line active for ms: a jammed acceptor."""
        seat_text = "*" if seat in ("*", "all", None) else str(int(seat))
        self.command("HOLD %s %d" % (seat_text, ms), wait_s=ms / 1000.0)
