"""Bench jig: the line protocol and the pulse-train player, without `machine`.

The jig is a second Pico standing in for the table's acceptors: its outputs pull the controller's
COIN lines low the way an acceptor's open collector does, and it reads the controller's INHIBIT
lines back. A real acceptor refuses a token while inhibited, so the jig does the same: before
each token it checks that seat's inhibit line, and a seat found inhibited gets no pulses for that
token (counted as refused). hardware/BENCH.md documents the protocol; in short, one line per
command, one line per reply:

    PING                                  -> OK JIG 1 SEATS 8
    INH                                   -> OK INH <mask>        bit i: seat i+1 inhibited
    COIN <seat> <count> <width_ms> <gap_ms> [<glitches> [<pulses> [<coin_gap_ms> [FORCE]]]]
                                          -> OK COIN <sent> <refused>
    HOLD <seat> <ms>                      -> OK HOLD <ms>         line held active: a jam
    anything else                         -> ERR <reason>

<seat> is 1-8 or * (every seat at once). <count> tokens, each <pulses> pulses (default 1) of
<width_ms>, <gap_ms> apart; tokens <coin_gap_ms> apart (default: 4 x gap_ms, at least 200 ms,
so the decoder's idle gap ends each token). <glitches> spikes of GLITCH_MS are put in the middle
of the first gaps. FORCE sends even to inhibited seats (a late coin the controller must refuse).
"""

GLITCH_MS = 2
MAX_COUNT = 10000
MAX_MS = 60000
SEATS = 8


class BadCommand(Exception):
    """A command line the jig refuses: its text is the reason sent back after ERR (the host's
    tabledev.jig turns that answer into a JigError)."""


def _int(text, name, lo, hi):
    try:
        v = int(text)
    except ValueError:
        raise BadCommand("%s is not a number: %s" % (name, text))
    if v < lo or v > hi:
        raise BadCommand("%s out of range %d-%d: %d" % (name, lo, hi, v))
    return v


def parse_seat(text, seats=SEATS):
    """Seat text to a bit mask of seats (bit 0 = seat 1)."""
    if text == "*":
        return (1 << seats) - 1
    return 1 << (_int(text, "seat", 1, seats) - 1)


def parse(line, seats=SEATS):
    """One command line to (name, args). Raises BadCommand with the reason."""
    words = line.strip().split()
    if not words:
        raise BadCommand("empty command")
    name = words[0].upper()
    args = words[1:]
    if name in ("PING", "INH"):
        if args:
            raise BadCommand("%s takes no arguments" % name)
        return name, ()
    if name == "HOLD":
        if len(args) != 2:
            raise BadCommand("usage: HOLD <seat> <ms>")
        return name, (parse_seat(args[0], seats), _int(args[1], "ms", 1, MAX_MS))
    if name == "COIN":
        force = False
        if args and args[-1].upper() == "FORCE":
            force = True
            args = args[:-1]
        if not 4 <= len(args) <= 7:
            raise BadCommand("usage: COIN <seat> <count> <width_ms> <gap_ms> [glitches [pulses [coin_gap_ms]]] [FORCE]")
        mask = parse_seat(args[0], seats)
        count = _int(args[1], "count", 1, MAX_COUNT)
        width = _int(args[2], "width_ms", 1, 5000)
        gap = _int(args[3], "gap_ms", 1, 5000)
        glitches = _int(args[4], "glitches", 0, MAX_COUNT) if len(args) > 4 else 0
        pulses = _int(args[5], "pulses", 1, 50) if len(args) > 5 else 1
        coin_gap = _int(args[6], "coin_gap_ms", 1, MAX_MS) if len(args) > 6 else max(4 * gap, 200)
        if glitches and gap < GLITCH_MS + 4:
            raise BadCommand("gap_ms too short to hold a glitch: %d" % gap)
        return name, (mask, count, width, gap, glitches, pulses, coin_gap, force)
    raise BadCommand("unknown command: %s" % words[0])


def token_edges(width, gap, pulses, glitch_slots):
    """Edges (t_ms, active) of one token from its start, and the time its last pulse ends.

    glitch_slots: how many of this token's gaps (between its pulses, then the one after it)
    carry a glitch in their middle."""
    edges = []
    t = 0
    for p in range(pulses):
        edges.append((t, 1))
        t += width
        edges.append((t, 0))
        if p < pulses - 1:
            if glitch_slots > 0:
                mid = t + (gap - GLITCH_MS) // 2
                edges.append((mid, 1))
                edges.append((mid + GLITCH_MS, 0))
                glitch_slots -= 1
            t += gap
    return edges, t, glitch_slots


class JigServer:
    """outs: pulse output pins (value(1) pulls the COIN line low through the ULN2803);
    inhs: inhibit sense pins (1 = inhibited); clock: object with now_ms() and wait_until(t_ms)."""

    def __init__(self, outs, inhs, clock, led=None, inhibit_level=1):
        self.outs = outs
        self.inhs = inhs
        self.clock = clock
        self.led = led
        self.inhibit_level = inhibit_level
        self.seats = len(outs)
        for p in outs:
            p.value(0)

    def inhibited_mask(self):
        mask = 0
        for i in range(self.seats):
            if self.inhs[i].value() == self.inhibit_level:
                mask |= 1 << i
        return mask

    def _drive(self, mask, level):
        for i in range(self.seats):
            if mask >> i & 1:
                self.outs[i].value(level)

    def handle(self, line):
        """One command line in, one reply line out (no newline)."""
        try:
            name, args = parse(line, self.seats)
        except BadCommand as exc:
            return "ERR " + str(exc)
        if name == "PING":
            return "OK JIG 1 SEATS %d" % self.seats
        if name == "INH":
            return "OK INH %d" % self.inhibited_mask()
        if self.led is not None:
            self.led.value(1)
        try:
            if name == "HOLD":
                mask, ms = args
                t0 = self.clock.now_ms()
                self._drive(mask, 1)
                self.clock.wait_until(t0 + ms)
                self._drive(mask, 0)
                return "OK HOLD %d" % ms
            return self._coin(*args)
        finally:
            self._drive((1 << self.seats) - 1, 0)
            if self.led is not None:
                self.led.value(0)

    def _coin(self, mask, count, width, gap, glitches, pulses, coin_gap, force):
        sent = 0
        refused = 0
        t = self.clock.now_ms()
        for _ in range(count):
            live = mask if force else mask & ~self.inhibited_mask()
            n_live = 0
            for i in range(self.seats):
                if mask >> i & 1:
                    if live >> i & 1:
                        n_live += 1
                    else:
                        refused += 1
            sent += n_live
            # Glitches fill this token's inner gaps first, then the gap after it.
            edges, length, glitches = token_edges(width, gap, pulses, glitches)
            for at, level in edges:
                self.clock.wait_until(t + at)
                self._drive(live, level)
            t += length
            if glitches > 0:
                mid = t + (coin_gap - GLITCH_MS) // 2
                self.clock.wait_until(mid)
                self._drive(live, 1)
                self.clock.wait_until(mid + GLITCH_MS)
                self._drive(live, 0)
                glitches -= 1
            t += coin_gap
            self.clock.wait_until(t)
        return "OK COIN %d %d" % (sent, refused)
