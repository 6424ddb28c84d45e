"""What the Pico and the ESP32 boards share: both plug into the same interface board.

The pin map (hardware/pinmap_<board>.json) is copied by deployment to /pinmap.json on the
board's filesystem, next to main.py; HwBoard reads it at boot, so the drawing, the harness and
the code share one source. pico.py and esp32.py add the pulse counter back end, the host link
and the chip's unique id.

Main-loop budget: every method here is a few SPI bytes or pin reads. Outputs go out only when
they change; the display blinks from feed_watchdog(), which the app calls once per loop turn.
"""
import json
import sys
import time

import gc

import machine
import micropython
from machine import SPI, Pin

from boards.contract import Board
from drivers.chain import ShiftIn, ShiftOut
from drivers.nvfile import NvFiles
from drivers.seg7 import encode

TYPE_CHECKING = False
if TYPE_CHECKING:  # for mypy only: the board imports the driver of the display it has
    from drivers.max7219 import MAX7219
    from drivers.tm1637 import TM1637

_BLINK_MS = micropython.const(500)
_DISPLAY_REFRESH_MS = micropython.const(5000)
_LINK_CHUNK = micropython.const(256)


def load_pinmap(path="/pinmap.json"):
    with open(path) as f:
        return json.load(f)


class HwBoard(Board):
    firmware_root = "/"

    def __init__(self, pinmap, data_root="/data"):
        # The pin map is not kept: parsed, its notes and dicts would hold kilobytes of a Pico's heap
        # for good (`bench_pico.py heapmap`). The board keeps each pin's GPIO number, all that
        # is looked up after the parts are built.
        self._gpio = {}
        pins = pinmap["pins"]
        for name in pins:
            self._gpio[name] = pins[name]["gpio"]
        self.mcu = pinmap["mcu"]
        self.max_seats = pinmap["seats"]
        self._ms = 0
        self._last_ticks = time.ticks_ms()
        self._outputs_ready = False

        # Outputs first: the inhibit chain is put in its all-inhibited state and only then
        # enabled, before anything else can fail half way through the constructor.
        io = pinmap["io_bus"]
        self.io_spi = SPI(io["spi_id"], baudrate=io["baud_hz"], polarity=0, phase=0,
                          sck=self.pin(io["sck"]), mosi=self.pin(io["mosi"]), miso=self.pin(io["miso"]))
        out = pinmap["outputs"]
        self.outputs = ShiftOut(self.io_spi, self.out_pin(out["latch"], 0),
                                self.out_pin(out["enable_n"], 1), out["chips"])
        self.outputs.start()
        self._outputs_ready = True
        self._inhibit_bits = bytes(out["inhibit_bits"])
        self._lamp_bits = bytes(out["lamp_bits"])
        self._accept = out["accept_level"]

        inp = pinmap["inputs"]
        self.inputs = ShiftIn(self.io_spi, self.out_pin(inp["load_n"], 1), inp["chips"])
        self._spot_bits = bytes(inp["spot_bits"])
        self._spot_flip = 1 if inp["spots_active_low"] else 0
        self._key_bits = bytes(inp["key_bits"])
        self._key_flip = 1 if inp["keys_active_low"] else 0
        self._switch_bit = inp["service_switch_bit"]
        self._switch_flip = 1 if inp["service_switch_active_low"] else 0

        self._build_display(pinmap["display"])
        self._frame = bytearray(self.display_digits)
        self._blank = bytearray(self.display_digits)
        self._blink = False
        self._blank_now = False
        self._refresh_at = 0

        self._build_link(pinmap["host_link"])
        nv = NvFiles(data_root)
        self.nv = nv  # type: ignore[assignment]  # the contract's default is None
        self.pulse_sources = self._build_pulse_sources(pinmap["pulse"])
        # Back ends with a small hardware buffer (PIO) are emptied after every flash write.
        self._drains = []  # type: list
        for i in range(len(self.pulse_sources)):
            drain = getattr(self.pulse_sources[i], "drain", None)
            if drain is not None:
                self._drains.append(drain)
        if self._drains:
            nv.after_write = self.drain_pulses  # type: ignore[assignment]
        led = pinmap.get("status_led")
        self.led = self.out_pin(led, 0) if led else None
        self._wdt = None
        self._wdt_ms = pinmap.get("watchdog_ms", 4000)

    def drain_pulses(self):
        for drain in self._drains:
            drain()

    # --- pins -------------------------------------------------------------------------------
    def gpio(self, name):
        return self._gpio[name]

    def pin(self, name):
        return Pin(self.gpio(name))

    def out_pin(self, name, value):
        # value= sets the output latch before the pin turns into an output: no glitch.
        return Pin(self.gpio(name), Pin.OUT, value=value)

    # --- clock ------------------------------------------------------------------------------
    def now_ms(self):
        # ticks_ms wraps (2**30 ms on both ports); the difference of two readings less than half
        # a period apart is exact, so adding differences gives a clock that never wraps.
        # The main loop calls this every few ms, far inside the 6-day limit.
        t = time.ticks_ms()
        self._ms += time.ticks_diff(t, self._last_ticks)
        self._last_ticks = t
        return self._ms

    # --- outputs ----------------------------------------------------------------------------
    def set_inhibit(self, seat, inhibited):
        level = (1 - self._accept) if inhibited else self._accept
        if self.outputs.set(self._inhibit_bits[seat], level):
            self.outputs.flush()

    def set_lamp(self, seat, lit):
        if self.outputs.set(self._lamp_bits[seat], 1 if lit else 0):
            self.outputs.flush()

    def inhibit_all(self):
        """Hardware kill: every 595 output Hi-Z (used on the way into a reset)."""
        self.outputs.off()

    def _build_display(self, d):
        # The driver of the display fitted, imported here: the other one's code would take heap.
        self.display = None  # type: MAX7219 | TM1637 | None
        kind = d["type"]
        if kind == "tm1637":
            from drivers.tm1637 import TM1637
            t = d["tm1637"]
            self.display_digits = t["digits"]
            self.display = TM1637(self.out_pin(t["clk"], 1),
                                  Pin(self.gpio(t["dio"]), Pin.OPEN_DRAIN, value=1),
                                  t["digits"], t["order"], d.get("brightness", 7))
        else:
            from drivers.max7219 import MAX7219
            self.display_digits = d["digits"]
            spi = SPI(d["spi_id"], baudrate=d["baud_hz"], polarity=0, phase=0,
                      sck=self.pin(d["sck"]), mosi=self.pin(d["mosi"]))
            self.display = MAX7219(spi, self.out_pin(d["cs"], 1), d["digits"], d["intensity"])

    def show(self, text, blink=False):
        encode(text, self._frame)
        self._blink = blink
        self._blank_now = False
        if self.display is not None:
            self.display.segments(self._frame)

    def _service_display(self, now_ms):
        if self.display is None:
            return
        if self._blink:
            blank = (now_ms // _BLINK_MS) & 1 == 1
            if blank != self._blank_now:
                self._blank_now = blank
                self.display.segments(self._blank if blank else self._frame)
        if now_ms >= self._refresh_at:
            self._refresh_at = now_ms + _DISPLAY_REFRESH_MS
            self.display.refresh()

    # --- raw inputs -------------------------------------------------------------------------
    def read_keys(self):
        ins = self.inputs
        ins.read()
        mask = 0
        bits = self._key_bits
        for i in range(len(bits)):
            if ins.bit(bits[i]) ^ self._key_flip:
                mask |= 1 << i
        return mask

    def read_spots(self):
        ins = self.inputs
        ins.read()
        mask = 0
        bits = self._spot_bits
        for i in range(3 * self.max_seats):
            if ins.bit(bits[i]) ^ self._spot_flip:
                mask |= 1 << i
        return mask

    def service_switch(self):
        self.inputs.read()
        return bool(self.inputs.bit(self._switch_bit) ^ self._switch_flip)

    # --- host link --------------------------------------------------------------------------
    def _build_link(self, link):
        self._rx = bytearray(_LINK_CHUNK)
        self._one = bytearray(1)
        self.uart = None
        if link["kind"] == "uart":
            self.uart = machine.UART(link["uart_id"], baudrate=link["baud"],
                                     tx=self.pin(link["tx"]), rx=self.pin(link["rx"]),
                                     rxbuf=1024, timeout=0)
            return
        # USB CDC (Pico) or UART0 through the DevKitC's USB bridge: the REPL's own stream.
        import select

        self._stdin = sys.stdin.buffer
        self._stdout = sys.stdout.buffer
        self._poll = select.poll()
        self._poll.register(sys.stdin, select.POLLIN)

    def claim_console(self):
        """The REPL's stream becomes the protocol port: frames are binary, and a 0x03 in one
        must not raise KeyboardInterrupt. release_console() gives Ctrl-C back."""
        micropython.kbd_intr(-1)

    def release_console(self):
        micropython.kbd_intr(3)

    def link_read(self):
        if self.uart is not None:
            n = self.uart.readinto(self._rx)
            return bytes(self._rx[:n]) if n else b""
        n = 0
        while n < _LINK_CHUNK and self._poll.poll(0):
            if not self._stdin.readinto(self._one):
                break
            self._rx[n] = self._one[0]
            n += 1
        return bytes(self._rx[:n]) if n else b""

    def link_write(self, data):
        if self.uart is not None:
            self.uart.write(data)
        else:
            self._stdout.write(data)

    # --- supervision ------------------------------------------------------------------------
    def feed_watchdog(self):
        if self._wdt is None:
            # Started on the first feed, not at construction: the app's boot (self-check, journal
            # replay) may take longer than one period, and until the first loop turn the
            # inhibits are in their safe state anyway. Once started it cannot be stopped.
            self._wdt = machine.WDT(timeout=self._wdt_ms)
        self._wdt.feed()
        now = self.now_ms()
        self._service_display(now)
        if self.led is not None:
            self.led.value((now >> 9) & 1)  # a 1 Hz heartbeat: the loop is turning

    def reset(self):
        self.inhibit_all()
        machine.reset()

    def _build_pulse_sources(self, pulse):
        raise NotImplementedError

    def pulse_pin(self, name):
        # The optocoupler output has its 4.7 k pull-up on the interface board; the internal
        # pull-up is added as well so an unplugged cable reads idle, not floating.
        if self.gpio(name) >= 34 and self.mcu == "esp32":
            return Pin(self.gpio(name), Pin.IN)  # GPIO34-39 have no internal pulls
        return Pin(self.gpio(name), Pin.IN, Pin.PULL_UP)


def ring_pulse_source(pin, active):
    """The hard-IRQ timestamp ring back end, on either chip (no PIO / not enough PCNT units)."""
    from drivers.edges import RingPulseSource  # only a board that uses it pays its heap
    src = RingPulseSource(pin, active, time.ticks_ms, time.ticks_diff)
    src.attach(machine.Pin.IRQ_RISING | machine.Pin.IRQ_FALLING)
    return src


_running = None  # the board main.py started, for hard_reset()


def run_with(board_class):
    """main.py's entry for a chip: build its board from /pinmap.json and run the controller."""
    global _running
    _running = board_class()
    return run_board(_running)


def hard_reset():
    # Kill the outputs first: the 595 latches outlive an MCU reset, /OE high makes them Hi-Z.
    if _running is not None:
        _running.inhibit_all()
    machine.reset()


HEAP_WATCH_TURNS = 500  # some seconds of the Pico's main loop (its turn: docs/BENCHMARKS.md, `bench_pico.py boot`)


def run_board(board):
    """The controller's main loop on a real board (main.py -> boards.<x>.run()).

    Service sequence: key switch on and the service key held at power-up -> return False before
    the watchdog starts and before the console is claimed, so main.py falls into the REPL and
    mpremote can reach the board. Otherwise the loop runs for good."""
    from boards.selfcheck import manifest_checker
    from table.app import TableApp

    if board.service_switch() and board.read_keys() & 0x8:
        return False
    board.claim_console()
    app = TableApp(board, board.now_ms(), manifest_checker(board.firmware_root))
    turns = 0
    while True:
        app.step(board.now_ms())
        turns += 1
        if turns >= HEAP_WATCH_TURNS:
            # A collection now and then, at a turn's end: the pause comes where the loop can
            # afford it, not at an allocation deep in a flash write, and what is free after it is
            # the live heap, whose lowest value diag reports (the >= 100 KB budget, watched).
            turns = 0
            gc.collect()
            board.note_heap(gc.mem_free())
        machine.idle()  # sleep to the next interrupt (1 ms tick at most): same work, less heat
