"""The interface board at the Pico's pins (hardware/pinmap_pico.json): the acceptors' optocoupler
outputs, the 74HC595 output chain, the 74HC165 input chain, and the MAX7219 display whose bytes are
decoded back into the digits a player sees."""
import os

from tablectl import FIRMWARE_DIR
from tabledev.pico_sim.timing import NS_PER_MS


# --- the display font, read from the firmware itself -----------------------------------------------
def _font():
    """glyph -> character, from firmware/drivers/seg7.py (the table the driver encodes with)."""
    src = open(os.path.join(FIRMWARE_DIR, "drivers", "seg7.py")).read()
    src = src.replace("from micropython import const", "const = int")  # the only MicroPython name it uses
    ns = {}
    exec(compile(src, "seg7.py", "exec"), ns)
    digits, letters = {}, {}
    for ch in "0123456789-_= ":
        digits.setdefault(ns["glyph"](ch), ch)
    for ch in "ABCDEFGHIJKLMNOPQRSTUVWXYZ":
        letters.setdefault(ns["glyph"](ch), ch)
    return digits, letters


_DIGITS, _LETTERS = _font()


def decode_segments(segs):
    """Segment bytes (common order, leftmost first) back to text. Some glyphs are shared by a digit
    and a letter (0/O, 5/S, 2/Z): a word with any letter-only glyph reads as letters, else digits."""
    chars = []
    for s in segs:
        g = s & 0x7F
        chars.append((_DIGITS.get(g), _LETTERS.get(g), bool(s & 0x80)))
    text = []
    i = 0
    while i < len(chars):
        j = i
        while j < len(chars) and chars[j][0] != " ":
            j += 1
        word = chars[i:j]
        lettery = any(d is None and l is not None for d, l, _ in word)
        for d, l, dp in word:
            ch = (l or d) if lettery else (d if d is not None else l)
            text.append(ch if ch is not None else "?")
            if dp:
                text.append(".")
        if j < len(chars):
            text.append(" ")
        i = j + 1
    return "".join(text)


def meter_from_display(text):
    """The meter in cents when the display shows it ('  123.45'), else None."""
    t = text.strip()
    if t.count(".") == 1:
        whole, cents = t.split(".")
        if whole.isdigit() and cents.isdigit() and len(cents) == 2:
            return int(whole) * 100 + int(cents)
    return None


def _from_max(m):
    # The MAX7219's no-decode order (D7 dp, D6 a .. D0 g) back to the common order (bit0 a .. bit6 g).
    return ((m & 0x80) | ((m >> 6) & 1) | (((m >> 5) & 1) << 1) | (((m >> 4) & 1) << 2) | (((m >> 3) & 1) << 3)
            | (((m >> 2) & 1) << 4) | (((m >> 1) & 1) << 5) | ((m & 1) << 6))


class InterfaceBoard:
    """The interface board around the Pico, at its pins: the acceptors' opto outputs, the 595/165
    chains and the MAX7219. Everything here runs on the emulator's thread."""

    def __init__(self, rig, pinmap):
        self.rig = rig
        self.pinmap = pinmap
        g = lambda name: pinmap["pins"][name]["gpio"]  # noqa: E731
        self.coin_gpio = [g(n) for n in pinmap["pulse"]["pins"]]
        self.coin_active = 0 if pinmap["pulse"]["active_low"] else 1
        out, inp = pinmap["outputs"], pinmap["inputs"]
        self.out_chips = out["chips"]
        self.in_chips = inp["chips"]
        self.latch_gpio = g(out["latch"])
        self.oe_gpio = g(out["enable_n"])
        self.load_gpio = g(inp["load_n"])
        self.inhibit_bits = out["inhibit_bits"]
        self.lamp_bits = out["lamp_bits"]
        self.accept_level = out["accept_level"]
        self.io_spi = pinmap["io_bus"]["spi_id"]
        d = pinmap["display"]
        self.display_kind = d["type"]
        self.digits = d["digits"] if self.display_kind == "max7219" else d["tm1637"]["digits"]
        self.dsp_spi = d.get("spi_id", 0)
        self.cs_gpio = g(d["cs"]) if self.display_kind == "max7219" else None
        self.keys = 0  # bit i: key i held (lock, unlock, jackpot, service)
        self.spots = 0  # bit seat*3 + k
        self.switch = False
        self.power_off()

    def power_off(self):
        """Everything on the interface board loses its state with the power."""
        self.shift595 = bytearray(self.out_chips)  # chip 0 first
        self.latched = bytearray(self.out_chips)
        self.shift165 = bytearray(self.in_chips)
        self.in_pos = 0
        self.dsp_bytes = bytearray()
        self.max_regs = [0] * 16
        self.frames = []  # (emulated ns, text) of every display frame latched, newest last
        self.blank_ns = -1
        self.lit_ns = -1
        self.latches = 0
        self.loads = 0  # /PL pulses: input-chain samples (a main-loop turn takes a fixed number)

    def attach(self, mcu):
        for gp in self.coin_gpio:
            mcu.gpio[gp].set_input_value(self.coin_active == 0)  # idle: the opto is released
        mcu.spi[self.io_spi].on_transmit = self._io_byte
        mcu.gpio[self.latch_gpio].add_listener(self._latch_changed)
        mcu.gpio[self.load_gpio].add_listener(self._load_changed)
        if self.cs_gpio is not None:
            mcu.spi[self.dsp_spi].on_transmit = self._dsp_byte
            mcu.gpio[self.cs_gpio].add_listener(self._cs_changed)
        self.mcu = mcu

    # --- acceptors ------------------------------------------------------------------------------
    def coin_level(self, seat, active):
        level = self.coin_active if active else 1 - self.coin_active
        self.mcu.gpio[self.coin_gpio[seat]].set_input_value(bool(level))

    # --- the I/O chains ------------------------------------------------------------------------
    def _inputs_word(self):
        inp = self.pinmap["inputs"]
        bits = 0
        for i, b in enumerate(inp["spot_bits"]):
            on = (self.spots >> i) & 1
            bits |= (on ^ (1 if inp["spots_active_low"] else 0)) << b
        for i, b in enumerate(inp["key_bits"]):
            on = (self.keys >> i) & 1
            bits |= (on ^ (1 if inp["keys_active_low"] else 0)) << b
        sw = 1 if self.switch else 0
        bits |= (sw ^ (1 if inp["service_switch_active_low"] else 0)) << inp["service_switch_bit"]
        return bits

    def _load_changed(self, value, old):
        if value == 0:  # /PL low (GPIOPinState.LOW) copies the parallel inputs into the chain
            self.loads += 1
            word = self._inputs_word()
            for c in range(self.in_chips):
                self.shift165[c] = (word >> (8 * c)) & 0xFF
            self.in_pos = 0

    def _io_byte(self, value):
        if self.rig.io_hang_until_ns > self.rig.clock.nanos:
            self.rig.held_transfer = value  # a hung bus: the byte never completes (see hang_io)
            return
        # MOSI into the 595s: the first byte clocked in ends in the farthest chip.
        self.shift595[1:] = self.shift595[:-1]
        self.shift595[0] = value & 0xFF
        # MISO from the 165s: chip 0's byte (the one wired to the MCU) comes out first.
        rx = self.shift165[self.in_pos] if self.in_pos < self.in_chips else 0xFF
        self.in_pos += 1
        self.mcu.spi[self.io_spi].complete_transmit(rx)

    def _latch_changed(self, value, old):
        if value == 1 and old == 0:  # RCLK rising (GPIOPinState HIGH after LOW): shift register -> outputs
            self.latched[:] = self.shift595
            self.latches += 1

    def _oe_low(self):
        # /OE has a pull-up on the interface board: only a pin driven low enables the 595s.
        pin = self.mcu.gpio[self.oe_gpio]
        return pin.output_enable and not pin.output_value

    def output_bit(self, bit):
        if not self._oe_low():
            return 0
        return (self.latched[bit >> 3] >> (bit & 7)) & 1

    def inhibits(self):
        return [self.output_bit(b) != self.accept_level for b in self.inhibit_bits]

    def lamps(self):
        return [bool(self.output_bit(b)) for b in self.lamp_bits]

    # --- the MAX7219 --------------------------------------------------------------------------
    def _dsp_byte(self, value):
        self.dsp_bytes.append(value & 0xFF)
        self.mcu.spi[self.dsp_spi].complete_transmit(0)

    def _cs_changed(self, value, old):
        if value == 0:
            self.dsp_bytes = bytearray()
            return
        if value != 1 or old != 0 or len(self.dsp_bytes) < 2:
            return
        reg, data = self.dsp_bytes[-2] & 0x0F, self.dsp_bytes[-1]  # LOAD latches the last 16 bits
        self.max_regs[reg] = data
        if 1 <= reg <= 8 and reg == 1:
            self._frame()  # the driver writes digits leftmost (register n) first: 1 ends a frame

    def segments(self):
        r = self.max_regs
        if r[0x0F] & 1:
            return [0xFF] * self.digits
        if not r[0x0C] & 1:
            return [0] * self.digits
        n = self.digits
        return [_from_max(r[n - i]) for i in range(n)]

    def _frame(self):
        segs = self.segments()
        now = self.rig.clock.nanos
        text = decode_segments(segs)
        if any(segs):
            self.lit_ns = now
            self.lit_text = text
        else:
            self.blank_ns = now
        if not self.frames or self.frames[-1][1] != text:
            self.frames.append((now, text))
            del self.frames[:-2000]

    def display(self):
        """(text, blinking): a blinking display shows its lit frame."""
        now = self.rig.clock.nanos
        text = decode_segments(self.segments())
        blink = self.blank_ns >= 0 and self.lit_ns >= 0 and now - self.blank_ns < 1200 * NS_PER_MS \
            and now - self.lit_ns < 1200 * NS_PER_MS
        if blink:
            text = self.lit_text
        return text, blink
