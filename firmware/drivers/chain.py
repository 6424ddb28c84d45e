"""74HC595 output chain and 74HC165 input chain on one SPI bus (the interface board's I/O bus).

The two chains share SCK: the 595s' SER hangs on MOSI, the 165s' QH on MISO. Clocking one chain
also clocks the other's shift register, which is harmless because each side always moves its
whole chain: the 595 outputs change only on a latch pulse after a full write, and the 165 is
reloaded from its inputs before every read.

Chain bit numbering (what the pin map's *_bits mean): bit 8*c + k is pin k (A=0 .. H=7) of chip
c, chip 0 being the one wired to the MCU (first 595 after MOSI, last 165 before MISO).
"""


class ShiftOut:
    """74HC595 chain. latch: Pin to RCLK. enable_n: Pin to /OE, pulled up on the interface board.

    Power-on safety: /OE is pulled high by a 4.7 k resistor, so while the MCU is in reset, booting,
    or has not yet run this code, every 595 output is Hi-Z; the ULN2803 inputs then sit low (its
    internal base resistors plus the pull-down network) and every channel is off: every acceptor
    inhibited, every lamp dark. The 595 latches keep whatever they held across an MCU reset, so
    start() writes the all-off pattern and latches it before it drives /OE low.
    """

    def __init__(self, spi, latch, enable_n, chips):
        self.spi = spi
        self.latch = latch
        self.enable_n = enable_n
        self.chips = chips
        self.bits = bytearray(chips)  # chip 0 first
        self._wire = bytearray(chips)  # the order they go out: farthest chip first
        self.writes = 0
        enable_n.value(1)
        latch.value(0)

    def start(self):
        for i in range(self.chips):
            self.bits[i] = 0
        self.flush()
        self.enable_n.value(0)

    def set(self, bit, value):
        """Change one output in memory; returns True when it changed (then call flush)."""
        c = bit >> 3
        m = 1 << (bit & 7)
        old = self.bits[c]
        new = (old | m) if value else (old & ~m)
        if new == old:
            return False
        self.bits[c] = new
        return True

    def get(self, bit):
        return (self.bits[bit >> 3] >> (bit & 7)) & 1

    def flush(self):
        n = self.chips
        for i in range(n):
            self._wire[i] = self.bits[n - 1 - i]
        # MSB first: bit 7 of a byte ends on QH, bit 0 on QA.
        self.spi.write(self._wire)
        self.latch.value(1)  # rising edge on RCLK copies the shift register to the outputs
        self.latch.value(0)
        self.writes += 1

    def off(self):
        """Every output Hi-Z at once: acceptors inhibited, lamps dark, whatever the latches hold."""
        self.enable_n.value(1)


class ShiftIn:
    """74HC165 chain. load_n: Pin to /PL (all chips' CLK INH tied low)."""

    def __init__(self, spi, load_n, chips):
        self.spi = spi
        self.load_n = load_n
        self.chips = chips
        self.buf = bytearray(chips)
        load_n.value(1)

    def read(self):
        """Sample every input now; then bit(i) answers from this sample."""
        self.load_n.value(0)  # parallel load: the inputs are copied while /PL is low
        self.load_n.value(1)
        # The first bit is on QH before any clock: SPI mode 0 samples it on the first edge.
        self.spi.readinto(self.buf, 0)
        return self.buf

    def bit(self, i):
        # Bytes arrive chip 0 first, MSB (pin H) first within each byte.
        return (self.buf[i >> 3] >> (i & 7)) & 1
