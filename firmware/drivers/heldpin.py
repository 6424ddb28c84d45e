"""held_ms() for pulse back ends that count without watching the level (PIO, PCNT): how long
the acceptor's line has been held active, read from the pin itself. A jam lasts seconds and the
main loop polls every few milliseconds, so reading the pin at each poll is exact enough."""


class HeldFromPin:
    """Mix-in: the class sets self.pin (a machine.Pin) and self.active (the active level)."""

    _held_since = -1

    def held_ms(self, now_ms):
        if self.pin.value() != self.active:
            self._held_since = -1
            return 0
        if self._held_since < 0:
            self._held_since = now_ms
        return now_ms - self._held_since
