"""TM1637 4/6-digit 7-segment display, bit-banged (Titan Micro TM1637 datasheet).

The TM1637's two-wire bus looks like I2C but is not (no address, LSB first), so it is driven by
hand. DIO is open drain (Pin.OPEN_DRAIN: writing 1 releases it) because the chip pulls it low to
acknowledge each byte; the module's own 10 k pull-ups to its 3.3 V supply give the high level.
The module is powered from 3.3 V on the interface board (J22), so no level shifter is needed.
Missing acknowledgements are counted: a board with a nonzero `nacks` has no display attached.
"""
import time

from micropython import const

_CMD_DATA_AUTO = const(0x40)  # write display data, auto-increment address
_CMD_ADDRESS = const(0xC0)  # + grid address
_CMD_DISPLAY_ON = const(0x88)  # + brightness 0-7
_BIT_US = const(5)  # half a clock period: 100 kHz, well under the chip's 250 kHz limit


class TM1637:
    """clk: Pin output; dio: Pin in OPEN_DRAIN mode. order[i] is the grid address of the i-th
    digit from the left (6-digit modules are wired 2,1,0,5,4,3)."""

    def __init__(self, clk, dio, digits=4, order=None, brightness=7):
        self.clk = clk
        self.dio = dio
        self.digits = digits
        self.order = bytes(order) if order else bytes(range(digits))
        self.brightness = brightness
        self.on = True
        self.nacks = 0
        self._segs = bytearray(digits)
        self._grid = bytearray(6)  # the chip's six grid registers
        clk.value(1)
        dio.value(1)
        self.refresh()

    def _start(self):
        self.dio.value(0)  # DIO falls while CLK is high
        time.sleep_us(_BIT_US)
        self.clk.value(0)
        time.sleep_us(_BIT_US)

    def _stop(self):
        self.dio.value(0)
        time.sleep_us(_BIT_US)
        self.clk.value(1)
        time.sleep_us(_BIT_US)
        self.dio.value(1)  # DIO rises while CLK is high
        time.sleep_us(_BIT_US)

    def _byte(self, b):
        for _ in range(8):
            self.dio.value(b & 1)  # least significant bit first
            b >>= 1
            time.sleep_us(_BIT_US)
            self.clk.value(1)
            time.sleep_us(_BIT_US)
            self.clk.value(0)
        self.dio.value(1)  # release DIO: the chip pulls it low on the 9th clock
        time.sleep_us(_BIT_US)
        self.clk.value(1)
        time.sleep_us(_BIT_US)
        if self.dio.value():
            self.nacks += 1
        self.clk.value(0)
        time.sleep_us(_BIT_US)

    def segments(self, segs):
        """Show segment bytes (common order: bit0 = a .. bit7 = dp), leftmost digit first."""
        self._segs[:] = segs
        self.refresh()

    def refresh(self):
        for i in range(self.digits):
            self._grid[self.order[i]] = self._segs[i]
        self._start()
        self._byte(_CMD_DATA_AUTO)
        self._stop()
        self._start()
        self._byte(_CMD_ADDRESS)
        for i in range(6):
            self._byte(self._grid[i])
        self._stop()
        self._start()
        self._byte((_CMD_DISPLAY_ON | (self.brightness & 7)) if self.on else 0x80)
        self._stop()

    def power(self, on):
        self.on = on
        self.refresh()
