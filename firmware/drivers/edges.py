"""Acceptor pulses from edge timestamps: the hard-IRQ counter back end, and its pure core.

EdgeToPulse turns a stream of (time_ms, level) edges into completed pulses (end_ms, width_ms).
It imports no `machine` and takes every time as an argument, so the simulator and the tests
drive it with made-up timestamps.

EdgeRing is what the hard interrupt handler writes to: two preallocated arrays and two indices.
The handler stores a small int into each array and bumps an index; it allocates nothing, so it is
legal in a hard IRQ (no heap there) and needs no micropython.schedule.

RingPulseSource joins them into a contract PulseSource (boards/contract.py) for one seat.
"""
from array import array

from micropython import const

_RING_EDGES = const(64)  # 32 pulses between polls: the main loop polls every few ms


class EdgeToPulse:
    """Edges in, completed pulses out. `active` is the line level while the acceptor pulses."""

    def __init__(self, active=0):
        self.active = active
        self.level = 1 - active  # assume idle at start: a line held active shows up as held_ms
        self.start_ms = 0  # when the current active period began
        self.merged = 0  # edges that repeated the level we already had (an edge was missed)

    def feed(self, t_ms, level, out):
        """One edge at t_ms that left the line at `level`. Appends (end_ms, width_ms) when a
        pulse completes; returns the number appended (0 or 1)."""
        if level == self.level:
            if level == self.active:
                # Two "went active" in a row: the release in between was missed. Keep the first
                # start, so the pulse is measured long (a jam shows) rather than lost.
                self.merged += 1
                return 0
            # Two "went idle" in a row: a pulse came and went faster than the handler ran
            # (a spike). Report it as a zero-width pulse so the logic logs a glitch.
            self.merged += 1
            out.append((t_ms, 0))
            return 1
        self.level = level
        if level == self.active:
            self.start_ms = t_ms
            return 0
        out.append((t_ms, t_ms - self.start_ms))
        return 1

    def held_ms(self, now_ms):
        if self.level != self.active:
            return 0
        return now_ms - self.start_ms


class EdgeRing:
    """Single-producer (the IRQ), single-consumer (the main loop) ring of edge timestamps.

    Only the producer writes `head`, only the consumer writes `tail`, so no lock is needed.
    A full ring drops the new edge and counts it in `lost`: the newest edge is the one that
    can be spared, because the pulse it belongs to is then measured as one long pulse or a merge.
    """

    def __init__(self, size=_RING_EDGES):
        self.size = size
        self.times = array("i", [0] * size)  # ticks_ms values fit in 30 bits: small ints
        self.levels = bytearray(size)
        self.head = 0
        self.tail = 0
        self.lost = 0

    def push(self, t, level):
        """Called from the hard IRQ: no allocation, no exceptions."""
        h = self.head
        n = h + 1
        if n == self.size:
            n = 0
        if n == self.tail:
            self.lost += 1
            return
        self.times[h] = t
        self.levels[h] = level
        self.head = n

    def __len__(self):
        return (self.head - self.tail) % self.size


class RingPulseSource:
    """Contract PulseSource over a hard-IRQ edge ring.

    ticks_ms/ticks_diff are passed in (time.ticks_ms, time.ticks_diff on a board; fakes in tests)
    so that ring timestamps, taken in the IRQ from the wrapping tick counter, can be turned into
    the board's non-wrapping now_ms at poll time: an edge's board time is
    now_ms - ticks_diff(ticks_now, edge_ticks), valid while edges are younger than half the tick
    period (about 6 days for ticks_ms).
    """

    def __init__(self, pin, active, ticks_ms, ticks_diff, size=_RING_EDGES):
        self.pin = pin
        self.ring = EdgeRing(size)
        self.edges = EdgeToPulse(active)
        self._ticks_ms = ticks_ms
        self._ticks_diff = ticks_diff
        # Bound method made once: creating it in the IRQ would allocate.
        self._isr_ref = self._isr

    def attach(self, trigger):
        """Start recording: trigger is Pin.IRQ_RISING | Pin.IRQ_FALLING on the board."""
        # A line already active at start (a jam through the reset) counts as held from 0.
        self.edges.level = self.pin.value()
        self.pin.irq(handler=self._isr_ref, trigger=trigger, hard=True)

    def detach(self):
        self.pin.irq(handler=None)

    def _isr(self, pin):
        # Read the level here, not the trigger cause: on both ports the cause is not passed in,
        # and a level read right after the edge tells which way the line went.
        self.ring.push(self._ticks_ms(), pin.value())

    def poll(self, now_ms, out):
        ring = self.ring
        ticks_now = self._ticks_ms()
        n = 0
        t = ring.tail
        head = ring.head  # edges after ticks_now wait for the next poll
        while t != head:
            edge_ms = now_ms - self._ticks_diff(ticks_now, ring.times[t])
            n += self.edges.feed(edge_ms, ring.levels[t], out)
            t += 1
            if t == ring.size:
                t = 0
            ring.tail = t
        return n

    def held_ms(self, now_ms):
        return self.edges.held_ms(now_ms)

    def edges_lost(self):
        return self.ring.lost + self.edges.merged
