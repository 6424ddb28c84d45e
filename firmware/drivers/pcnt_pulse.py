"""ESP32 hardware pulse counter (PCNT) as a contract PulseSource.

The classic ESP32 has 8 PCNT units, one per seat. They count in hardware, so pulses that arrive
while the flash is written (the cache is off then and non-IRAM interrupts wait) are still counted.
The unit counts the edge that ends a pulse (the line going back to idle), so a poll sees only
completed pulses. PCNT cannot measure widths: poll reports width None, and glitch rejection is the
hardware's: the H11L1 optocoupler's Schmitt output plus the PCNT filter (at most 1023 APB cycles,
12.7 us at 80 MHz). Where widths are wanted instead, the pin map selects the "irq" back end
(drivers/edges.py).
"""
from machine import Counter
from drivers.heldpin import HeldFromPin


class PcntPulseSource(HeldFromPin):
    """counter: a machine.Counter the board built; pin: the same input Pin, read for held_ms."""

    def __init__(self, unit, pin, active=0, filter_ns=12000):
        self.pin = pin
        self.active = active
        # Count the release edge: rising for an active-low line.
        edge = Counter.RISING if active == 0 else Counter.FALLING
        self.counter = Counter(unit, pin, edge=edge, filter_ns=filter_ns)
        self.counter.value(0)

    def poll(self, now_ms, out):
        # value(0) reads and zeroes in one call: counts since the last poll, always a small int.
        n = self.counter.value(0)
        for _ in range(n):
            out.append((now_ms, None))
        return n

    def edges_lost(self):
        return 0

    def deinit(self):
        self.counter.deinit()
