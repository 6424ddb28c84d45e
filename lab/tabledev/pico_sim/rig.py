"""The rig: one emulated Pico (rp2040py) on its interface board, with its flash, power cuts and USB
serial, driven from other threads through call()/submit()."""
import json
import os
import random
import sys
import threading
import time

from tablectl import FIRMWARE_DIR
from tabledev.pico_sim.image import UF2_VERSION, image_path
from tabledev.pico_sim.timing import (
    BLOCK_ERASE_NS, CPU_HZ, EDGE_LEAD_MS, NS_PER_MS, PACE_STEP_NS, PAGE_PROGRAM_NS, SECTOR_ERASE_NS)
from tabledev.pico_sim.fsimage import PINMAP, build_fs_image, deploy_files, read_fs_files
from tabledev.pico_sim.interface import InterfaceBoard, meter_from_display
from tabledev.pico_sim.tuning import (
    _PioRegisters, _advance_pio, _join_rx_fifos, _pio_step_ns, gil_switch_interval_s)


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
        # advance() once per CPU instruction, a Python-level call that is a large share of the
        # emulator's wall time with the coin counters' 8 state machines running
        # (lab/tabledev/EMULATOR.md, "The PIO stepped in batches"). They run at 10 kHz
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
