"""How the emulator is run on the host: the PIO state machines stepped in batches, their RX FIFOs
joined as the RP2040 does, and the GIL hand-over interval the pty and bench threads need."""
import os


# The emulator's thread lets go of the GIL only between its instruction batches (its asyncio loop's
# select, every 5 ms of wall time) and takes it straight back. CPython's waiting thread forces a hand-over
# only when its own switch interval passed with no hand-over at all; at the default 5 ms, the
# length of a batch, the pty relay and the bench's control socket wait for a lucky race, and on a
# quiet machine (the other core idle, as in CI) they lose it for seconds (a loaded machine hides
# it). The figures at both intervals: docs/BENCHMARKS.md, `bench_pico.py hostturn`;
# lab/tabledev/EMULATOR.md. The emulator loses nothing while no other thread waits.
GIL_SWITCH_INTERVAL_S = 0.0005


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
