"""MAX7219 8-digit 7-segment display over SPI (Maxim MAX7219 datasheet, tables 2-8).

The chip runs at 5 V and wants VIH >= 3.5 V, so on the interface board DIN, CLK and LOAD pass
through a 74AHCT125 powered from 5 V (TTL-level inputs, happy with 3.3 V). Nothing is read back.

Each frame rewrites the control registers as well as the digits: a MAX7219 hit by an ESD spark
from a chip tray can drop into shutdown or test mode or lose its scan limit, and the next frame
then heals it without anyone noticing. refresh() does the same on a timer.
"""
from micropython import const

_REG_DECODE = const(0x09)
_REG_INTENSITY = const(0x0A)
_REG_SCAN_LIMIT = const(0x0B)
_REG_SHUTDOWN = const(0x0C)
_REG_TEST = const(0x0F)


def _to_max(s):
    # Common segment order (bit0 = a .. bit6 = g, bit7 = dp) to the MAX7219's no-decode order
    # (D7 = dp, D6 = a, D5 = b, D4 = c, D3 = d, D2 = e, D1 = f, D0 = g).
    return ((s & 0x80) | ((s & 0x01) << 6) | ((s & 0x02) << 4) | ((s & 0x04) << 2) | (s & 0x08)
            | ((s & 0x10) >> 2) | ((s & 0x20) >> 4) | ((s & 0x40) >> 6))


class MAX7219:
    """spi: machine.SPI (mode 0, <= 10 MHz); cs: machine.Pin output for LOAD, idle high."""

    def __init__(self, spi, cs, digits=8, intensity=8):
        self.spi = spi
        self.cs = cs
        self.digits = digits
        self.intensity = intensity
        self.on = True
        self._cmd = bytearray(2)
        self._segs = bytearray(digits)
        cs.value(1)
        self.refresh()

    def _write(self, reg, value):
        self._cmd[0] = reg
        self._cmd[1] = value
        self.cs.value(0)
        self.spi.write(self._cmd)
        self.cs.value(1)  # LOAD's rising edge latches the 16 bits

    def _config(self):
        self._write(_REG_TEST, 0)
        self._write(_REG_DECODE, 0)  # raw segments: the font is ours (letters too)
        self._write(_REG_SCAN_LIMIT, self.digits - 1)
        self._write(_REG_INTENSITY, self.intensity & 0x0F)
        self._write(_REG_SHUTDOWN, 1 if self.on else 0)

    def segments(self, segs):
        """Show segment bytes (common order), leftmost digit first."""
        self._segs[:] = segs
        self.refresh()

    def refresh(self):
        self._config()
        n = self.digits
        for i in range(n):
            # Register 1 drives DIG0, the rightmost digit on the usual 8-digit modules.
            self._write(n - i, _to_max(self._segs[i]))

    def power(self, on):
        self.on = on
        self._write(_REG_SHUTDOWN, 1 if on else 0)
