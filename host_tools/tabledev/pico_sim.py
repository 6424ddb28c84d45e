"""`tablectl sim --board pico`: the real firmware on the real MicroPython Pico build, on an
emulated RP2040 (rp2040py, PyPI) wired to a model of the interface board.

What is real here: the MicroPython v1.24.1 image a technician drags onto a Pico (its UF2, from
$PICO_UF2), the RP2040's cores, PIO state machines, timers, watchdog, USB CDC and QSPI flash as
rp2040py emulates them, littlefs on that flash, and the firmware deployed as `tablectl flash`
would deploy it (the same files, the same pin map, the same manifest.json).

What is modelled, at the Pico's pins (hardware/pinmap_pico.json says which):
  - the H11L1 optocoupler outputs on the acceptor pins (driven at times on the emulator's own
    clock, never with wall-clock sleeps: a pulse is as long as the bench says, whatever the host);
  - the 74HC595 output chain (inhibits, lamps) and the 74HC165 input chain (bet spots, keys,
    service key switch) on the I/O SPI bus, with their latch, load and /OE lines;
  - the MAX7219 on the display SPI bus: the bytes the driver clocks out are decoded back into the
    digits a player sees;
  - the flash chip's unique id (the emulator answers all FF, so every board would have the same
    board id): each state directory gets its own, kept in DIR/board_uid.

A power cut stops the chip wherever it is (between two instructions, at a random emulated time if
asked) and boots it cold; flash keeps what was programmed, RAM and the 595 latches do not.
"""
import hashlib
import json
import os
import pty
import random
import selectors
import socket
import sys
import threading
import time
import tty

from tablectl import FIRMWARE_DIR, HARDWARE_DIR, REPO_ROOT
from tablectl.deploy import MICROPYTHON
from tablectl.errors import TablectlError
from tabledev.control import ControlSocket

# The MicroPython release the boards run (tablectl/deploy.py, which compiles the .mpy for it), as
# its Pico build: the sha256 is that file's, so a new release changes both.
UF2_VERSION = MICROPYTHON
UF2_NAME = "RPI_PICO-20241129-v%s.uf2" % UF2_VERSION
UF2_SHA256 = "a41b7dbadfe4f399a10bd344002b365427ad033de993cf372c29c884b33a4cdf"
PINMAP = os.path.join(HARDWARE_DIR, "pinmap_pico.json")
HOW_TO_GET_IMAGE = ("no MicroPython Pico image: run `make pico-image` (downloads %s and checks its sha256) "
                    "or set PICO_UF2 to its path" % UF2_NAME)
NS_PER_MS = 1000000
CPU_HZ = 125000000
# Edges start this long after they reach the supervisor, so the first one is never in the past.
EDGE_LEAD_MS = 20
# With --realtime the emulator may run at most this far ahead of the wall clock (it waits), so
# the board's timeouts mean what they say to a host on the other end of the pty.
PACE_STEP_NS = 1 * NS_PER_MS
# The Pico's W25Q16JV is busy (status register bit 0) this long after a command, typical figures
# from Winbond's datasheet: the SDK polls that bit with interrupts off, so the CPU really stops
# for a sector erase while the PIO state machines keep counting (what the board's PIO coin counting is designed for).
SECTOR_ERASE_NS = 45 * NS_PER_MS
BLOCK_ERASE_NS = 150 * NS_PER_MS
PAGE_PROGRAM_NS = 400000
# The emulator's thread lets go of the GIL only between its instruction batches (its asyncio loop's
# select, every 5 ms of wall time) and takes it straight back. CPython's waiting thread forces a hand-over
# only when its own switch interval passed with no hand-over at all; at the default 5 ms, the
# length of a batch, the pty relay and the bench's control socket wait for a lucky race, and on a
# quiet machine (the other core idle, as in CI) they lose it for seconds: a bench request took 4 s,
# an mpremote `fs cp` of 5 KB 371 s (medians), and `make flash` in tests/pico ran past its 5
# minutes. At 0.5 ms: 16 ms and 3.6 s (docs/BENCHMARKS.md, "Emulated Pico: the host's turn"; a
# loaded machine hides it, which is how it reached CI). The emulator loses nothing while no other
# thread waits.
GIL_SWITCH_INTERVAL_S = 0.0005


UF2_URL = "https://micropython.org/resources/firmware/" + UF2_NAME
FETCHED = os.path.join(REPO_ROOT, "build", "pico", UF2_NAME)  # where `make pico-image` puts it


def image_path(required=True):
    """The UF2 from $PICO_UF2 (what .ci/run sets), else the one `make pico-image` fetched; None
    (or an error saying how to get it) when there is none."""
    path = os.environ.get("PICO_UF2") or (FETCHED if os.path.exists(FETCHED) else None)
    if not path or not os.path.exists(path):
        if required:
            raise TablectlError(HOW_TO_GET_IMAGE)
        return None
    return path


def sha256_of(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 16), b""):
            h.update(chunk)
    return h.hexdigest()


def fetch_image(dest=FETCHED, url=UF2_URL):
    """`make pico-image`: download the MicroPython Pico build and keep it only if its sha256 is the
    one this project was tested with."""
    import urllib.request
    if os.path.exists(dest) and sha256_of(dest) == UF2_SHA256:
        print("%s is already here (sha256 matches)" % dest)
        return dest
    os.makedirs(os.path.dirname(dest), exist_ok=True)
    tmp = dest + ".part"
    try:
        with urllib.request.urlopen(url, timeout=60) as r, open(tmp, "wb") as f:
            f.write(r.read())
    except OSError as exc:
        raise TablectlError("could not download %s (%s): copy the file from a machine that can and set "
                            "PICO_UF2 to its path" % (url, exc))
    got = sha256_of(tmp)
    if got != UF2_SHA256:
        os.unlink(tmp)
        raise TablectlError("%s has sha256 %s, not %s: not the build this project was tested with"
                            % (url, got, UF2_SHA256))
    os.replace(tmp, dest)
    print("fetched %s (sha256 ok); the Pico tests find it there, or set PICO_UF2=%s" % (dest, dest))
    return dest


def board_uid(state_dir):
    """8 bytes, made once per state directory and kept there: the flash chip's unique id."""
    path = os.path.join(state_dir, "board_uid")
    try:
        with open(path) as f:
            uid = bytes.fromhex(f.read().strip())
        if len(uid) == 8:
            return uid
    except (OSError, ValueError):
        pass
    uid = os.urandom(8)
    os.makedirs(state_dir, exist_ok=True)
    with open(path, "w") as f:
        f.write(uid.hex() + "\n")
    return uid


# --- the filesystem image, built on the host -----------------------------------------------------
def deploy_files(source=FIRMWARE_DIR, pinmap=PINMAP, mpy=True, work_dir=None):
    """The file set `tablectl flash --source` copies to a Pico (main.py, the packages, the pin map
    as pinmap.json), and its manifest (name -> sha256). mpy: the packages compiled to .mpy."""
    from tablectl.commands.flash import build_manifest, firmware_files
    from tablectl.deploy import compile_tree
    if mpy:
        source = compile_tree("pico", source, work_dir, micropython=UF2_VERSION)
    files = firmware_files(source, pinmap, "pico")
    return files, build_manifest(files)


def build_fs_image(layout, files, manifest, reserve_sectors=None):
    """A littlefs image of the board's filesystem region holding the deployed firmware: what
    `tablectl flash` leaves on a Pico, built here because copying through the emulated USB takes
    minutes. Same parameters as MicroPython's rp2 port (4 KiB blocks, 256-byte programs)."""
    from littlefs import LittleFS, UserContext
    ctx = UserContext(buffsize=layout.fs_blocksize * layout.fs_blockcount)
    lfs = LittleFS(context=ctx, block_size=layout.fs_blocksize, block_count=layout.fs_blockcount,
                   prog_size=256, disk_version=0x00020000)
    made = set()
    for name, path in files:
        parts = name.split("/")
        for i in range(1, len(parts)):
            d = "/".join(parts[:i])
            if d not in made:
                lfs.mkdir(d)
                made.add(d)
        with open(path, "rb") as src, lfs.open(name, "wb") as dst:
            dst.write(src.read())
    with lfs.open("manifest.json", "wb") as dst:
        dst.write(json.dumps(manifest, sort_keys=True, indent=0).encode())
    if reserve_sectors:
        _provision_reserve(lfs, ctx, layout, reserve_sectors)
    lfs.unmount()
    return bytes(ctx.buffer)


def _rawflash_module():
    """The board's drivers/rawflash.py (its tag format), loaded from the firmware's file set."""
    import importlib.util
    spec = importlib.util.spec_from_file_location("board_rawflash", os.path.join(FIRMWARE_DIR, "drivers", "rawflash.py"))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _provision_reserve(lfs, ctx, layout, count):
    """What the board's first boot does for a pin map with raw_log_sectors (drivers/rawflash.py
    provision), done on the host image: the emulated core takes minutes of wall time to write
    768 KiB through littlefs. The same files (one 4 KiB block each, the tag in its last slot),
    found by the same tag search, and the same map.json written last."""
    rf = _rawflash_module()
    root = rf.ROOT.lstrip("/")
    for d in (root[:root.rfind("/")], root):
        try:
            lfs.mkdir(d)
        except Exception:  # noqa: littlefs-python raises its own error for an existing folder
            pass
    body = bytearray(b"\xff" * rf.SECTOR_BYTES)
    for i in range(count):
        body[rf.SECTOR_BYTES - rf.SLOT_BYTES:] = rf._tag(i, count)
        with lfs.open("%s/r%03d" % (root, i), "wb") as f:
            f.write(bytes(body))
    buf = bytes(ctx.buffer)
    bs = layout.fs_blocksize
    blocks = [-1] * count
    for blk in range(layout.fs_blockcount):
        tail = buf[blk * bs + bs - rf.SLOT_BYTES:(blk + 1) * bs]
        if tail[:8] == rf.TAG:
            i = tail[8] | (tail[9] << 8)
            if i < count and tail == rf._tag(i, count):
                blocks[i] = blk
    if -1 in blocks:
        raise TablectlError("the raw log reserve's blocks were not all found in the host-built image")
    with lfs.open(root + "/map.json", "w") as f:
        f.write(json.dumps({"blocks": blocks}))


def write_fs_files(layout, image, changes):
    """The littlefs image with files written (name -> bytes) and manifest.json's sha256 of each
    brought up to date: what `tablectl flash` of those files leaves on a board (tests change a
    kept board's pin map with it)."""
    import hashlib
    from littlefs import LittleFS, UserContext
    ctx = UserContext(buffsize=len(image))
    ctx.buffer[:] = image
    lfs = LittleFS(context=ctx, block_size=layout.fs_blocksize, block_count=layout.fs_blockcount,
                   prog_size=256, mount=True)
    with lfs.open("manifest.json", "rb") as f:
        manifest = json.loads(f.read())
    for name, data in changes.items():
        with lfs.open(name, "wb") as f:
            f.write(data)
        manifest[name] = hashlib.sha256(data).hexdigest()
    with lfs.open("manifest.json", "wb") as f:
        f.write(json.dumps(manifest, sort_keys=True, indent=0).encode())
    lfs.unmount()
    return bytes(ctx.buffer)


def read_fs_files(layout, image):
    """{name: bytes} of every file in a littlefs image (tests read the board's flash with it)."""
    from littlefs import LittleFS, UserContext
    ctx = UserContext(buffsize=len(image))
    ctx.buffer[:] = image
    lfs = LittleFS(context=ctx, block_size=layout.fs_blocksize, block_count=layout.fs_blockcount,
                   prog_size=256, mount=True)
    out = {}
    for root, _dirs, names in lfs.walk("/"):
        for n in names:
            path = (root.rstrip("/") + "/" + n).lstrip("/")
            with lfs.open(path, "rb") as f:
                out[path] = f.read()
    lfs.unmount()
    return out


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


FJOIN_RX = 1 << 31  # SHIFTCTRL: RX FIFO takes the TX FIFO's storage (RP2040 datasheet 3.7)


def _join_rx_fifos(pios):
    """rp2040py gives every state machine a 4-entry RX FIFO whatever SHIFTCTRL says; on the
    RP2040, FJOIN_RX makes it 8 deep (and the TX FIFO 0). The coin counter relies on the 8, so the
    rig gives each machine an RX FIFO that is 8 deep while that machine's FJOIN_RX bit is set."""
    from rp2040py.utils.fifo import FIFO

    class JoinableRxFifo(FIFO):
        def __init__(self, sm):
            super().__init__(8)
            self.sm = sm

        @property
        def full(self):
            return self._used >= (8 if self.sm.shift_ctrl & FJOIN_RX else 4)

        def push(self, value):
            if not self.full:
                super().push(value)

    for pio in pios:
        for sm in pio.machines:
            sm.rx_fifo = JoinableRxFifo(sm)


class _PioRegisters:
    """A PIO block's register window on the bus: the block's own reads and writes, and after a
    write, started(block) (the write may have started a machine: PicoRig._pio_started)."""

    def __init__(self, block, started):
        self.block = block
        self.started = started

    def read_uint32(self, offset):
        return self.block.read_uint32(offset)

    def write_uint32_atomic(self, offset, value, atomic_type):
        self.block.write_uint32_atomic(offset, value, atomic_type)
        self.started(self.block)

    def __getattr__(self, name):
        return getattr(self.block, name)


def _advance_pio(pios, cycles, hidden=False):
    """Run the PIO blocks through `cycles` system clocks with no CPU instruction in between.
    rp2040py's RPPIO.advance() runs at most one instruction per state machine per call (it is
    made to be called once per CPU instruction) and writes off a larger backlog, so a long
    stretch is handed over one due time at a time. hidden: blocks the rig steps itself (stopped
    set by PicoRig._pio_catch_up, their machines running)."""
    for pio in pios:
        remaining = cycles
        while remaining > 0 and (hidden or not pio.stopped):
            due = (pio.next_due_fp - pio.cycle_fp + 255) >> 8  # clocks until a machine is due
            step = min(remaining, max(1, due))
            pio.advance(step)
            remaining -= step


def gil_switch_interval_s():
    """The GIL switch interval the rig sets: GIL_SWITCH_INTERVAL_S, or TABLE_PICO_GIL_SWITCH_US
    (the bench's peer: `bench_pico.py hostturn` runs a board at CPython's own 5,000 us beside it)."""
    raw = os.environ.get("TABLE_PICO_GIL_SWITCH_US")
    if not raw:
        return GIL_SWITCH_INTERVAL_S
    try:
        value = float(raw) / 1e6
    except ValueError:
        value = 0.0
    if not value > 0:
        raise SystemExit("TABLE_PICO_GIL_SWITCH_US must be a positive number of microseconds, not %r" % raw)
    return value


def _pio_step_ns():
    """TABLE_PICO_PIO_STEP_US=n: advance the PIO blocks every n emulated us, not every CPU
    instruction (see PicoRig._pio_tick). Unset or 0: every instruction, as rp2040py does."""
    try:
        return int(float(os.environ.get("TABLE_PICO_PIO_STEP_US") or 0) * 1000)
    except ValueError:
        raise SystemExit("TABLE_PICO_PIO_STEP_US must be a number of microseconds")


class PicoRig:
    """One emulated Pico on its interface board. The emulator runs on its own thread; every
    method here that touches it hands work over with call()/submit()."""

    def __init__(self, state_dir, image=None, pinmap_path=PINMAP, realtime=True, log=None,
                 source=FIRMWARE_DIR, mpy=True, host_provisions=True):
        from rp2040py.boards import BOARDS, resolve_firmware
        self.state_dir = os.path.abspath(state_dir)
        os.makedirs(self.state_dir, exist_ok=True)
        self.image = image or image_path()
        self.spec = resolve_firmware(BOARDS["pico"], "micropython", self.image)
        self.layout = self.spec.layout
        with open(pinmap_path) as f:
            self.pinmap = json.load(f)
        self.pinmap_path = pinmap_path
        self.source = source
        self.mpy = mpy
        self.realtime = realtime
        self.log = log or (lambda text: None)
        self.uid = board_uid(self.state_dir)
        self.fs_path = os.path.join(self.state_dir, "flash_fs.img")
        self.boots = 0
        self.resets = []  # (emulated ms, cause) of every reset after the first boot
        self.flash = {"page_programs": 0, "program_bytes": 0, "sector_erases": 0, "block_erases": 0,
                      "busy_cycles": 0, "busy_skipped_ns": 0}
        # fast_flash: while the flash is busy, the CPU only polls its status register (interrupts
        # off); emulating that loop instruction by instruction is where most of a flash-heavy
        # run's wall time went (a 45 ms erase is 5.6 M polling cycles). With fast_flash the poll
        # that finds the chip busy moves the emulated clock (and the PIO with it) on to the end
        # of the busy time, or to the next scheduled event (a pin edge, USB SOF) if that is
        # sooner, so everything outside the CPU sees the same times; the polling cycles are
        # not counted in the cycle counter.
        self.fast_flash = False
        # host_provisions: a fresh board's image already holds the raw log reserve its pin map asks
        # for (build_fs_image); off, the board makes it at its first boot, as a real Pico does.
        self.host_provisions = host_provisions
        # torn_flash: a power cut while the flash is busy leaves the erase or page program half
        # done, as on the chip (the emulator applies it whole at the command): an erase has set
        # some bits to 1, a program has cleared some of its 0 bits. Off by default; the power-cut
        # campaign (benchmarks/pico_cuts.py) turns it on.
        self.torn_flash = False
        self.torn_rng = random.Random(0)
        self._busy_op = None  # (flash offset, bytes before, bytes after, "erase"/"program") in progress
        self.last_cut = None  # where the last power cut landed (see _cut)
        self._cut_on = None  # (command name, after_ns): cut that long after the host sends it
        self._cut_in_op = None  # [kind, programs/erases still to come, fraction]: see power_cut_in_flash_op
        self._cut_alarms = []  # power cuts armed and not yet fired: one cut cancels the others
        self._host_frame = bytearray()
        self.io_hang_until_ns = -1
        self.held_transfer = None
        self.edges_fed = 0
        self.edges_played = 0
        self._edges = []  # [t_ns, seat, active] waiting to be played, sorted
        self.cdc_out = bytearray()  # bytes from the board not yet taken by the pty relay
        self._out_lock = threading.Lock()
        self.on_cdc = None  # set by the relay: called (emulator thread) when bytes arrive
        self.repl_seen = b""
        self.console = bytearray()
        self.mode = "boot"
        self.device = None

    # ------------------------------------------------------------------ lifecycle
    def fs_image(self):
        """The filesystem region this board boots with: the kept one, else a fresh deployment."""
        size = self.layout.fs_blocksize * self.layout.fs_blockcount
        if os.path.exists(self.fs_path) and os.path.getsize(self.fs_path) == size:
            with open(self.fs_path, "rb") as f:
                return f.read()
        import tempfile
        with tempfile.TemporaryDirectory(prefix="tablectl-pico-") as work:
            files, manifest = deploy_files(self.source, self.pinmap_path, self.mpy, os.path.join(work, "fw"))
            reserve = self.pinmap.get("raw_log_sectors") if self.host_provisions else None
            return build_fs_image(self.layout, files, manifest, reserve)

    def start(self, timeout_s=60.0):
        from rp2040py.device import MicroPythonDevice
        from rp2040py.device.base_device import ResetCause
        self._reset_cause = ResetCause
        fs = self.fs_image()
        sys.setswitchinterval(gil_switch_interval_s())
        dev = MicroPythonDevice(board=self.spec)
        self.device = dev
        mcu = self.mcu = dev.mcu
        self.clock = dev.simulator.clock
        start = self.layout.fs_start
        mcu.flash[start:start + len(fs)] = fs
        self._hook_flash(mcu.ssi)
        _join_rx_fifos(mcu.pio)
        self.iface = InterfaceBoard(self, self.pinmap)
        self.iface.attach(mcu)
        self._edge_alarm = self.clock.create_alarm(self._play_edges)
        # The PIO blocks stepped in batches (TABLE_PICO_PIO_STEP_US): rp2040py calls each block's
        # advance() once per CPU instruction, a Python-level call that took 37 % of the emulator's
        # wall time with the coin counters' 8 state machines running (a 1 s busy loop at the REPL:
        # 44 wall s with them, 28 with them stopped, same machine, same run). They run at 10 kHz
        # (drivers/pio_pulse.py), a step every 12,500 CPU cycles, so the rig hides them from that
        # loop and runs them to the emulated clock every n us instead, due step by due step (the
        # same steps at the same emulated times, pins as they are then), and before every coin
        # edge the rig plays. What the CPU reads from a FIFO can be up to n us late.
        self.pio_step_ns = _pio_step_ns()
        self._pio_sync = [None, None]  # per block: (clock ns, cycle_fp) when the rig took it over
        self._pio_blocks = list(mcu.pio)
        if self.pio_step_ns:
            self._pio_alarm = self.clock.create_alarm(self._pio_tick)
            self._pio_alarm.schedule(self.pio_step_ns)
            self._keep_stopped_blocks_out_of_the_batch_loop(dev.simulator, mcu)
        trigger = mcu.watchdog.on_watchdog_trigger

        def watchdog_fired():
            self._note_reset("watchdog")
            trigger()
        mcu.watchdog.on_watchdog_trigger = watchdog_fired
        dev.cdc.on_serial_data = self._from_board
        if self.realtime:
            self._pace_alarm = self.clock.create_alarm(self._pace)
            self._wall0 = None
        self.boots = 1
        self.boot_ns = 0
        fut = dev.start_async(timeout=timeout_s)
        if self.realtime:
            self.call(self._start_pacing)
        fut.result(timeout_s + 5)
        self.log("boot 1 (MicroPython %s on the emulated Pico, board uid %s)" % (UF2_VERSION, self.uid.hex()))

    def stop(self):
        """Stop the emulator and keep the flash filesystem in the state directory."""
        if self.device is None:
            return
        self.device.stop()
        time.sleep(0.05)
        self.save_flash()
        self.device = None

    def save_flash(self):
        start = self.layout.fs_start
        data = bytes(self.mcu.flash[start:start + self.layout.fs_blocksize * self.layout.fs_blockcount])
        tmp = self.fs_path + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, self.fs_path)

    def fs_files(self):
        start = self.layout.fs_start
        data = self.call_sync(lambda: bytes(self.mcu.flash[start:start + self.layout.fs_blocksize
                                                             * self.layout.fs_blockcount]))
        return read_fs_files(self.layout, data)

    # ------------------------------------------------------------------ threading
    def call_sync(self, fn, timeout_s=30.0):
        """Run fn() on the emulator's thread (between two instruction batches); returns its value."""
        async def run():
            return fn()
        return self.device.simulator.call(run(), timeout_s)

    def call(self, fn):
        self.device.simulator.schedule_threadsafe(fn)

    # ------------------------------------------------------------------ pacing
    def _start_pacing(self):
        self._wall0 = time.monotonic()
        self._emu0 = self.clock.nanos
        self._pace_alarm.schedule(PACE_STEP_NS)

    def _pace(self):
        # Called on the emulated clock every millisecond: wait for the wall clock to catch up.
        if self._wall0 is not None:
            ahead_s = (self.clock.nanos - self._emu0) / 1e9 - (time.monotonic() - self._wall0)
            if ahead_s > 0.002:
                time.sleep(ahead_s)
            elif ahead_s < -0.5:
                # The emulator fell behind (a busy stretch): forgive it rather than race to catch up.
                self._wall0 = time.monotonic()
                self._emu0 = self.clock.nanos
        self._pace_alarm.schedule(PACE_STEP_NS)

    # ------------------------------------------------------------------ flash
    def _hook_flash(self, ssi):
        """Give the flash chip a unique id (READ UNIQUE ID, 0x4B: 4 dummy bytes, then 8 id bytes, as
        on the Pico's W25Q16JV) and count what is programmed and erased (flash wear)."""
        shift, apply = ssi._shift_byte, ssi._apply_command
        uid = self.uid
        counts = self.flash

        busy = self._flash_busy = [0.0]
        clock = self.clock
        rig = self
        poll_from = [None]  # the cycle counter at the first poll that found the chip busy

        def shift_byte(byte_out):
            buf = ssi._tx_buffer
            if buf and buf[0] == 0x4B:
                buf.append(byte_out)
                pos = len(buf) - 1
                return uid[pos - 5] if 5 <= pos < 13 else 0
            value = shift(byte_out)
            if len(buf) > 1 and buf[0] == 0x05:
                core = rig.mcu.core
                if clock.nanos < busy[0]:
                    value |= 0x01  # BUSY: an erase or program is still in progress
                    if poll_from[0] is None:
                        poll_from[0] = core.cycles
                    if rig.fast_flash:
                        jump = busy[0] - clock.nanos
                        if clock.has_scheduled_alarm:
                            jump = min(jump, clock.nanos_to_next_alarm)
                        if jump > 0:
                            # The PIO runs through the interval first, with the pins as they were
                            # during it; then the clock reaches the next event (an edge changes a pin).
                            _advance_pio(rig.mcu.pio, int(jump * CPU_HZ / 1e9))
                            clock.tick(jump)
                            counts["busy_skipped_ns"] += int(jump)
                elif poll_from[0] is not None:
                    counts["busy_cycles"] += core.cycles - poll_from[0]
                    poll_from[0] = None
            return value

        def apply_command():
            buf = ssi._tx_buffer
            op = None
            if buf and ssi._write_enabled:
                if buf[0] == 0x02 and len(buf) > 4:
                    counts["page_programs"] += 1
                    counts["program_bytes"] += min(256, len(buf) - 4)
                    busy[0] = clock.nanos + PAGE_PROGRAM_NS
                    op = "program"
                elif buf[0] == 0x20 and len(buf) >= 4:
                    counts["sector_erases"] += 1
                    busy[0] = clock.nanos + SECTOR_ERASE_NS
                    op = "erase"
                elif buf[0] == 0xD8 and len(buf) >= 4:
                    counts["block_erases"] += 1
                    busy[0] = clock.nanos + BLOCK_ERASE_NS
                    op = "erase"
            if buf and buf[0] == 0x4B:
                ssi._tx_buffer = bytearray()
                return
            aim = rig._cut_in_op
            if op is not None and aim is not None and aim[0] == op:
                aim[1] -= 1
                if aim[1] <= 0:
                    # this operation's busy time has just begun: the cut lands inside it
                    rig._cut_in_op = None
                    rig._arm_cut(max(1, int((busy[0] - clock.nanos) * aim[2])))
            if op is not None and rig.torn_flash:
                # What the region held before, to leave it half done if the power goes while busy.
                addr = (buf[1] << 16) | (buf[2] << 8) | buf[3]
                if op == "program":
                    start, size = addr, min(256, len(buf) - 4)
                else:
                    size = 4096 if buf[0] == 0x20 else 65536
                    start = addr & ~(size - 1)
                before = bytes(rig.mcu.flash[start:start + size])
                apply()
                rig._busy_op = (start, before, bytes(rig.mcu.flash[start:start + size]), op)
                return
            apply()
        ssi._shift_byte = shift_byte
        ssi._apply_command = apply_command

    # ------------------------------------------------------------------ the USB CDC port
    def _from_board(self, data):
        with self._out_lock:
            self.cdc_out += data
        # What this boot printed (the newest 4 KB): a traceback the controller left on its console.
        self.console += data
        del self.console[:-4096]
        seen = (self.repl_seen + bytes(data))[-64:]
        self.repl_seen = seen
        if self.mode != "repl":
            if b">>> " in seen or b"raw REPL" in seen:
                self.mode = "repl"
        elif b'"k":"boot"' in seen:
            self.mode = "app"  # a soft reset at the REPL (mpremote, tablectl flash) started the controller
        if self.on_cdc is not None:
            self.on_cdc()

    def take_output(self):
        with self._out_lock:
            data = bytes(self.cdc_out)
            del self.cdc_out[:]
        return data

    def send_to_board(self, data):
        """Bytes from the host into the board's USB CDC (paced by its receive FIFO)."""
        def go():
            if not hasattr(self, "_tx_pending"):
                self._tx_pending = bytearray()
                self._tx_alarm = self.clock.create_alarm(self._pump_tx)
            self._tx_pending += data
            if self._cut_on is not None:
                self._watch_host_frames(data)
            self._pump_tx()
        self.call(go)

    def _pump_tx(self):
        cdc = self.device.cdc
        free = max(cdc.tx_fifo.size - cdc.tx_fifo.item_count, 0)
        n = min(free, len(self._tx_pending))
        for b in self._tx_pending[:n]:
            cdc.send_serial_byte(b)
        del self._tx_pending[:n]
        if self._tx_pending:
            self._tx_alarm.schedule(100000)  # 0.1 ms: a USB frame's worth of bytes at a time

    # ------------------------------------------------------------------ resets
    def _note_reset(self, cause):
        self.boots += 1
        self.resets.append((self.clock.nanos // NS_PER_MS, cause))
        self.boot_ns = self.clock.nanos
        self.mode = "boot"
        self.repl_seen = b""
        self.console = bytearray()
        self.log("boot %d (%s)" % (self.boots, cause))

    def _cut(self):
        """Power off and on again, from the emulator's thread: the core stops between two
        instructions; flash keeps what was programmed, nothing else survives."""
        busy = self.clock.nanos < self._flash_busy[0]
        op = self._busy_op if busy else None
        self.last_cut = {"now_ns": self.clock.nanos, "cycles": self.mcu.core.cycles, "flash_busy": busy,
                         "busy_op": op[3] if op else None,
                         # a program or erase command being clocked out (the SSI is mid some command
                         # nearly always: the core executes from flash through XIP reads)
                         "mid_flash_command": bool(self.mcu.ssi._tx_buffer) and self.mcu.ssi._tx_buffer[0] in (0x02, 0x20, 0xD8),
                         "torn_bytes": 0}
        if op is not None and self.torn_flash:
            start, before, after, kind = op
            rng = self.torn_rng
            torn = bytearray(after)
            changed = 0
            for i in range(len(torn)):
                if before[i] != after[i]:
                    # bits still to change when the power went: each one a coin toss
                    todo = before[i] ^ after[i]
                    done = todo & rng.getrandbits(8)
                    torn[i] = before[i] ^ done
                    changed += torn[i] != after[i]
            self.mcu.flash[start:start + len(torn)] = bytes(torn)
            self.last_cut["torn_bytes"] = changed
        self._busy_op = None
        self._flash_busy[0] = 0
        # one cut: the others armed for this one (an aimed cut's fallback) are off
        self._cut_in_op = None
        for alarm in self._cut_alarms:
            try:
                alarm.cancel()
            except Exception:  # noqa: an alarm that has just fired (this one) is not linked
                pass
        del self._cut_alarms[:]
        # Bytes the host had sent that the board had not taken yet are lost with it (the USB
        # device drops off the bus), not handed to the next boot as stale frames to chew through.
        if getattr(self, "_tx_pending", None):
            del self._tx_pending[:]
        self.iface.power_off()
        self._edges = []
        self._note_reset("power cut")
        # Power-on reset clears the watchdog (CTRL.ENABLE); rp2040py's reset leaves its timer
        # running, which would bite 4 s into the next boot as if the old firmware were still there.
        self.mcu.watchdog.write_uint32(0x000, 0)
        self.device.hard_reset(cause=self._reset_cause.POWER_ON)
        for gp in self.iface.coin_gpio:
            self.mcu.gpio[gp].set_input_value(self.iface.coin_active == 0)

    def power_cut(self, after_ms=0.0):
        """Cut the power now, or after_ms of emulated time from now (an alarm on the emulator's
        clock, so the cut lands wherever the firmware is by then)."""
        def arm():
            if after_ms <= 0:
                self._cut()
                return
            self._arm_cut(after_ms * NS_PER_MS)
        self.call(arm)

    def _arm_cut(self, after_ns):
        """On the emulator's thread: a power cut after_ns of emulated time from now (with
        fast_flash the clock's jump over a busy flash stops at it, so it lands inside)."""
        alarm = self.clock.create_alarm(self._cut)
        alarm.schedule(after_ns)
        self._cut_alarms.append(alarm)

    def power_cut_in_flash_op(self, kind, nth, fraction, after_ms):
        """Cut the power while the flash is busy: `fraction` (0..1) of the way through the busy
        time of the nth page program (kind "program") or erase ("erase") the board starts from
        now on; if it starts fewer within after_ms of emulated time, the cut falls then. A cut at
        a random instant lands in a busy flash about once in a hundred (17 page programs of
        0.4 ms in a coin-in window of 700 ms): this is how a campaign gets torn writes on the
        real firmware's flash driver often enough to count."""
        def arm():
            self._cut_in_op = [kind, max(1, int(nth)), min(max(float(fraction), 0.0), 1.0)]
            self._arm_cut(after_ms * NS_PER_MS)
        self.call(arm)

    def power_cut_on_command(self, name, after_ms):
        """Cut the power after_ms of emulated time after the host's frame carrying command `name`
        reaches the board's USB (once): a cut that lands inside that command's handling."""
        self.call(lambda: setattr(self, "_cut_on", (name, after_ms)))

    def _watch_host_frames(self, data):
        """On the emulator's thread: look for the command a power cut waits for (frames are
        COBS-coded with a 0x00 delimiter; the payload is JSON, readable without the key)."""
        from table import protocol as proto
        self._host_frame += data
        while b"\x00" in self._host_frame and self._cut_on is not None:
            raw, _, rest = bytes(self._host_frame).partition(b"\x00")
            self._host_frame = bytearray(rest)
            try:
                msg = proto.decode_frame(raw).message
            except Exception:  # noqa: not a frame (REPL traffic, noise)
                continue
            if msg.get("t") == proto.COMMAND and msg.get("c") == self._cut_on[0]:
                after_ms = self._cut_on[1]
                self._cut_on = None
                self._arm_cut(max(1, int(after_ms * NS_PER_MS)))
        if self._cut_on is None:
            del self._host_frame[:]

    def hang_io(self, ms):
        """The I/O bus stops answering for ms (a shorted chain): the main loop waits on SPI inside
        its turn and stops feeding the watchdog, which must reset the chip."""
        def go():
            self.io_hang_until_ns = self.clock.nanos + ms * NS_PER_MS
            alarm = self.clock.create_alarm(self._unhang)
            alarm.schedule(ms * NS_PER_MS)
            self._unhang_alarm = alarm
        self.call(go)

    def _unhang(self):
        self.io_hang_until_ns = -1
        if self.held_transfer is not None:
            v, self.held_transfer = self.held_transfer, None
            self.iface._io_byte(v)

    # ------------------------------------------------------------------ pins from the bench
    def set_inputs(self, keys=None, spots=None, switch=None):
        def go():
            if keys is not None:
                self.iface.keys = keys
            if spots is not None:
                self.iface.spots = spots
            if switch is not None:
                self.iface.switch = bool(switch)
        self.call(go)

    def press_key(self, bit, hold_ms):
        """Hold a keypad key for hold_ms of emulated time (the debouncer counts emulated ms)."""
        def release():
            self.iface.keys &= ~(1 << bit)

        def go():
            self.iface.keys |= 1 << bit
            alarm = self.clock.create_alarm(release)
            alarm.schedule(hold_ms * NS_PER_MS)
            self._release_alarm = alarm
        self.call(go)

    def feed_edges(self, edges, lead_ms=EDGE_LEAD_MS):
        """edges: [seat, level (1 = acceptor pulsing), t_ms] with t_ms relative to the batch. They
        are played on the emulator's clock from lead_ms after they arrive."""
        edges = [(float(t), int(seat), int(level)) for seat, level, t in edges]

        def go():
            base = self.clock.nanos + lead_ms * NS_PER_MS
            for t, seat, level in edges:
                self._edges.append((base + t * NS_PER_MS, seat, level))
            self._edges.sort(key=lambda e: e[0])
            self.edges_fed += len(edges)
            self._arm_edges()
        self.call(go)

    def counting(self):
        """Whether the firmware has started its pulse counters (PIO state machines): before
        that, during a boot, pulses at the acceptor pins are counted by nobody."""
        return self.call_sync(lambda: any(m.enabled for pio in self._pio_blocks for m in pio.machines))

    def _arm_edges(self):
        if self._edges:
            self._edge_alarm.schedule(max(0.0, self._edges[0][0] - self.clock.nanos))

    def _pio_catch_up(self):
        """Run the blocks the rig steps up to the emulated clock's now."""
        if not self.pio_step_ns:
            return
        now = self.clock.nanos
        for i, pio in enumerate(self._pio_blocks):
            sync = self._pio_sync[i]
            if not pio.stopped or sync is None or pio.cycle_fp < sync[1]:
                # The per-instruction loop has it (the firmware started a machine, a reset): take
                # it over from where that loop left it, if a machine runs.
                self._pio_sync[i] = None
                if not pio.stopped and any(m.enabled for m in pio.machines):
                    self._pio_sync[i] = (now, pio.cycle_fp)
                    pio.stopped = True
                    if pio in self._pio_loop:
                        self._pio_loop.remove(pio)
                continue
            if not any(m.enabled for m in pio.machines):
                continue
            target_fp = sync[1] + (int((now - sync[0]) * CPU_HZ // 1000000000) << 8)
            if target_fp > pio.cycle_fp:
                _advance_pio([pio], (target_fp - pio.cycle_fp) >> 8, hidden=True)

    def _keep_stopped_blocks_out_of_the_batch_loop(self, simulator, mcu):
        """With the blocks hidden, rp2040py's batch loop still asks each of them `stopped` after
        every CPU instruction: two attribute reads through CPython's generic lookup, a quarter of
        the CPU the full-API build spends on the controller's main loop (7.3 -> 5.5 CPU s per
        emulated s without them: BENCHMARKS "the emulator's build"). The loop takes `mcu.pio` once, when a batch starts, as the list it walks;
        everything else (GPIO pins in a PIO function, resets) reads `mcu.pio` when it needs it.
        So each batch starts with a copy of the list as `mcu.pio`; after the batch's first
        instruction an alarm due at once puts the real list back and empties the copy of the
        stopped blocks. A block the CPU starts again (a CTRL write clears `stopped`: the only
        way it is cleared) goes back into the copy at that write, through the register
        window below, so the loop steps it from the next instruction on, as before."""
        from rp2040py._clock_batch_gate import clock_tick_batch_size
        from rp2040py.execute_batch import execute_batch
        blocks = self._pio_blocks
        self._pio_loop = list(blocks)
        handover = self.clock.create_alarm(self._pio_handover)
        tick_batch = clock_tick_batch_size()

        def batch():
            self._pio_loop = list(blocks)
            mcu.pio = self._pio_loop  # what this batch's loop walks
            handover.schedule(0)
            execute_batch(simulator, tick_batch)
        simulator._execute_batch = batch
        for key, block in list(mcu.peripherals.items()):
            if block in blocks:
                mcu.peripherals[key] = _PioRegisters(block, self._pio_started)

    def _pio_handover(self):
        self.mcu.pio = self._pio_blocks
        self._pio_loop[:] = [pio for pio in self._pio_blocks if not pio.stopped]

    def _pio_started(self, pio):
        if not pio.stopped and pio not in self._pio_loop:
            self._pio_loop.append(pio)

    def _pio_tick(self):
        self._pio_catch_up()
        self._pio_alarm.schedule(self.pio_step_ns)

    def _play_edges(self):
        self._pio_catch_up()  # the PIO sees the pin as it was up to the edge
        now = self.clock.nanos
        n = 0
        while n < len(self._edges) and self._edges[n][0] <= now:
            _, seat, level = self._edges[n]
            if seat < len(self.iface.coin_gpio):
                self.iface.coin_level(seat, level)
            n += 1
        del self._edges[:n]
        self.edges_played += n
        self._arm_edges()

    # ------------------------------------------------------------------ readings
    def now_ms(self):
        return self.clock.nanos / NS_PER_MS

    def cycles(self):
        return self.mcu.core.cycles

    def outputs(self):
        def read():
            text, blink = self.iface.display()
            mode = self.mode
            if mode == "boot" and self.iface._oe_low():
                mode = "app"  # the controller has built its board (outputs enabled)
            self.mode = mode
            return {"display": text, "blink": blink, "meter": meter_from_display(text) if not blink else None,
                    "lamps": self.iface.lamps(), "inhibit": self.iface.inhibits(),
                    "pending_edges": len(self._edges), "edges_fed": self.edges_fed,
                    "now_ms": int(self.clock.nanos // NS_PER_MS), "cycles": self.mcu.core.cycles,
                    "flash": dict(self.flash), "mode": mode, "boots": self.boots,
                    "resets": list(self.resets[-20:]), "latches": self.iface.latches, "loads": self.iface.loads,
                    "console_tail": bytes(self.console[-800:]).decode("ascii", "replace") if mode == "repl" else None}
        return self.call_sync(read)


class PicoSupervisor:
    """`tablectl sim --board pico`: the rig behind a pty (the board's USB CDC) and the bench's
    control socket (the same requests as the unix-port virtual board's, so `tablectl bench`
    drives either)."""

    def __init__(self, state_dir, image=None, realtime=True, log=None, mpy=True, source=FIRMWARE_DIR,
                 pinmap_path=PINMAP, host_provisions=True):
        self.state_dir = os.path.abspath(state_dir)
        self.rig = PicoRig(state_dir, image, pinmap_path=pinmap_path, realtime=realtime, log=log, mpy=mpy,
                           source=source, host_provisions=host_provisions)
        self.sel = selectors.DefaultSelector()
        self.pins = {"keys": 0, "spots": 0, "switch": False}
        self.edges_sent = 0
        self.noise_bytes = 0
        self.noise_rng = random.Random(1)
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)

    def start(self):
        self.master, self.slave = pty.openpty()
        tty.setraw(self.slave)
        tty.setraw(self.master)
        os.set_blocking(self.master, False)
        self.port = os.ttyname(self.slave)
        self.sel.register(self.master, selectors.EVENT_READ, self._from_host)
        self.sel.register(self._wake_r, selectors.EVENT_READ, self._to_host)
        path = os.path.join(self.state_dir, "control.sock")
        os.makedirs(self.state_dir, exist_ok=True)
        if os.path.exists(path):
            os.unlink(path)
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(8)
        self.listener.setblocking(False)
        self.control = ControlSocket(self.sel, self.listener, self._control)
        self.rig.on_cdc = self._wake
        self.rig.start()
        with open(os.path.join(self.state_dir, "port"), "w") as f:
            f.write(self.port + "\n")
        from tabledev.simulator import note_virtual_board, stable_tty
        stable_tty(self.state_dir, self.port)
        self.note = note_virtual_board(self.state_dir, self.port, "emulated Pico")
        return self.port

    def _wake(self):
        try:
            os.write(self._wake_w, b"x")
        except BlockingIOError:
            pass

    def _to_host(self, fd):
        try:
            os.read(fd, 4096)
        except BlockingIOError:
            pass
        data = self.rig.take_output()
        if data and self.noise_bytes:
            data = bytearray(data)
            for i in range(len(data)):
                if self.noise_bytes <= 0:
                    break
                data[i] ^= 1 << self.noise_rng.randrange(8)
                self.noise_bytes -= 1
            data = bytes(data)
        if data:
            try:
                os.write(self.master, data)
            except OSError:
                pass  # nobody reads the port: a CDC with no host drops what it sends

    def _from_host(self, fd):
        try:
            data = os.read(self.master, 65536)
        except (BlockingIOError, OSError):
            return
        if data:
            self.rig.send_to_board(data)

    def _control(self, _conn, req):
        op = req["op"]
        rig = self.rig
        if op == "edges":
            mode = rig.outputs()["mode"]
            if mode == "repl":
                return {"ok": False, "error": "the board is at its REPL (service sequence): cut its power "
                                             "(`tablectl bench power-cut`) to start the controller"}
            if mode != "app" or not rig.counting():
                # Pulses now would be lost (the bench drops a token, the board never counts it):
                # the bench asks again until the controller counts (Bench.edges).
                return {"ok": False, "booting": True,
                        "error": "the board is booting (the firmware has not started its counters yet); try again"}
            rig.feed_edges(req["edges"])
            self.edges_sent += len(req["edges"])
            return {"ok": True, "edges": len(req["edges"]), "edges_sent": self.edges_sent}
        if op in ("keys", "spots", "switch"):
            self.pins[op] = req["value"]
            rig.set_inputs(**{op: req["value"]})
            return {"ok": True, op: req["value"]}
        if op == "press":
            rig.press_key(int(req["bit"]), float(req.get("hold_ms", 80)))
            return {"ok": True}
        if op == "outputs":
            out = rig.outputs()
            return {"ok": True, "outputs": out, "mode": out["mode"], "boots": out["boots"], "pins": self.pins,
                    "port": self.port, "edges_sent": self.edges_sent, "board": "pico"}
        if op == "power_cut":
            rig.power_cut(float(req.get("after_ms", 0)))
            rig.call_sync(lambda: None)
            return {"ok": True, "boots": rig.boots}
        if op == "hang_io":
            rig.hang_io(float(req["ms"]))
            return {"ok": True}
        if op == "noise":
            self.noise_bytes += int(req.get("count", 16))
            return {"ok": True, "pending": self.noise_bytes}
        if op == "garbage":
            data = bytes(self.noise_rng.randrange(256) for _ in range(int(req.get("count", 64))))
            os.write(self.master, data)
            return {"ok": True}
        if op == "display_history":
            frames = rig.call_sync(lambda: list(rig.iface.frames))
            return {"ok": True, "history": [(t / 1e9, text, meter_from_display(text)) for t, text in frames]}
        if op == "advance":
            raise ValueError("the emulated Pico keeps its own time: it cannot be advanced")
        raise KeyError("unknown bench operation %r" % op)

    def serve_forever(self):
        import signal
        signal.signal(signal.SIGTERM, lambda *a: (_ for _ in ()).throw(KeyboardInterrupt()))
        try:
            self.serve()
        except KeyboardInterrupt:
            pass
        finally:
            self.stop()

    def _watch_boot(self):
        """While the emulated Pico boots (minutes on a loaded machine), say so: a line every 10 s
        into a log, rewritten every 2 s on a terminal; then one line when the controller runs."""
        from tablectl.progress import Ticker
        now = time.monotonic()
        if now < getattr(self, "_boot_check_at", 0):
            return
        self._boot_check_at = now + 2.0
        out = self.rig.outputs()
        booting = out["mode"] == "boot"
        ticker = getattr(self, "_boot_ticker", None)
        if booting and ticker is None:
            self._boot_ticker = Ticker("the emulated Pico is booting", pipe_every_s=10)
        elif booting:
            ticker.tick("emulated %.1f s" % (out["now_ms"] / 1000.0))
        elif ticker is not None:
            ticker.done()
            self._boot_ticker = None
            print("the emulated Pico's %s after %.0f s" % ("REPL is up" if out["mode"] == "repl" else "controller runs",
                                                           now - ticker.start), file=sys.stderr, flush=True)

    def serve(self, until=lambda: False):
        """Relay the port and answer the bench until until() is true (a thread in benchmarks)."""
        while not until():
            for key, _ in self.sel.select(0.1):
                key.data(key.fileobj)
            self._watch_boot()
            if self.rig.device is None:
                return
            if self.rig.device.simulator.engine_room_error is not None:
                raise TablectlError("the emulator stopped: %s" % self.rig.device.simulator.engine_room_error)

    def stop(self):
        from tabledev.simulator import forget_virtual_board
        forget_virtual_board(getattr(self, "note", None))
        self.rig.stop()
        for name in ("control.sock", "port"):
            try:
                os.unlink(os.path.join(self.state_dir, name))
            except OSError:
                pass


def run_pico_sim(state_dir, image=None, realtime=True, out=sys.stdout, mpy=True):
    sup = PicoSupervisor(state_dir, image, realtime=realtime, mpy=mpy,
                         log=lambda text: print(text, file=sys.stderr, flush=True))
    port = sup.start()
    print("port %s" % port, file=out, flush=True)
    sup.serve_forever()
