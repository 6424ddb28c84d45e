"""RP2040 PIO pulse timer: one state machine per acceptor line, blind to nothing.

MicroPython's rp2 port erases and programs flash with interrupts off (a 4 KB sector erase takes
45 ms typical, 400 ms worst case on the Pico's W25Q16JV). A GPIO interrupt counter is blind for
that long. A PIO state machine is not: it runs from its own instruction memory, measures the idle
gap before each pulse and the pulse's width, and pushes both as one word into its RX FIFO, joined
to 8 entries. The CPU drains the FIFO when it gets round to it; 8 pulses outlast any flash write
at the fastest acceptor pulse rate (20 ms on, 20 ms off: 320 ms).

Word pushed per completed pulse (30 bits, so `sm.get()` returns a small int and never allocates):
    bits 29..15  gap counter   bits 14..0  width counter
Each counter counts down from 0x7FFF, one step per 2 state-machine cycles, and saturates at 0
(so a width or gap longer than 32767 steps reads as 32767: 6.5 s at 10 kHz, far beyond any
coin pulse; a line held that long is a jam, which held_ms reports from the pin itself).

If the FIFO ever fills, the RP2040 sets the state machine's RXSTALL flag in FDEBUG even for a
non-blocking push (RP2040 datasheet, 3.7 "FDEBUG"): the driver reads and clears it, so a loss is
counted in edges_lost() and never silent.
"""
from array import array

import machine
import rp2
from micropython import const
from drivers.heldpin import HeldFromPin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rp2.asm_pio import *  # noqa: F401,F403  the PIO assembler names, for mypy only

_MAX_COUNT = const(0x7FFF)
_FIFO_WORDS = const(8)  # RX FIFO joined with TX: 8 entries
_PIO0_BASE = const(0x50200000)
_PIO1_BASE = const(0x50300000)
_FDEBUG = const(0x008)


@rp2.asm_pio(in_shiftdir=rp2.PIO.SHIFT_LEFT, out_shiftdir=rp2.PIO.SHIFT_RIGHT, fifo_join=rp2.PIO.JOIN_RX)
def pulse_timer():  # type: ignore[no-untyped-def]
    # jmp_pin is the acceptor line, high while idle (the optocoupler output is released).
    # Once at start: OSR = 0x7FFF, the value every count starts from (no TX FIFO to load it from).
    mov(osr, invert(null))
    out(null, 17)
    wrap_target()
    mov(x, osr)  # an idle gap begins
    label("idle")
    jmp(pin, "idle_more")
    jmp("began")
    label("idle_more")
    jmp(x_dec, "idle")  # 2 cycles per step while idle
    mov(x, null)  # gap saturated: hold the count at its end
    label("idle_sat")
    jmp(pin, "idle_sat")
    label("began")
    mov(y, x)  # keep the gap count while the width is measured
    mov(x, osr)
    label("active")
    jmp(pin, "ended")
    jmp(x_dec, "active")  # 2 cycles per step while active
    mov(x, null)  # width saturated (a jam): stop counting, wait for the release
    label("active_sat")
    jmp(pin, "ended")
    jmp("active_sat")
    label("ended")
    in_(y, 15)
    in_(x, 15)
    push(noblock)  # a full FIFO drops the word and sets RXSTALL: see edges_lost
    wrap()


class PioPulseSource(HeldFromPin):
    """Contract PulseSource (boards/contract.py) on one rp2 state machine (sm_id 0-7).

    pin: machine.Pin, input, the opto output (pulled up on the interface board). freq_hz: the
    state-machine clock; one count is 2 cycles, so 10 kHz measures in 0.2 ms steps.
    """

    def __init__(self, sm_id, pin, freq_hz=10000, active=0):
        self.pin = pin
        self.active = active
        self.sm = rp2.StateMachine(sm_id, pulse_timer, freq=freq_hz, jmp_pin=pin, in_base=pin)
        self._fdebug = (_PIO1_BASE if sm_id >= 4 else _PIO0_BASE) + _FDEBUG
        self._stall_bit = 1 << (sm_id & 3)
        self._step_us = 2000000 // freq_hz  # microseconds per count
        self._words = array("i", [0] * _FIFO_WORDS)
        self._ends = array("i", [0] * _FIFO_WORDS)  # ms relative to now: fits in 32 bits
        self._last_end_ms = 0
        self._lost = 0
        machine.mem32[self._fdebug] = self._stall_bit  # write 1 to clear a stale flag
        self.sm.active(1)

    def _ms(self, steps):
        return (steps * self._step_us + 500) // 1000

    def poll(self, now_ms, out):
        if machine.mem32[self._fdebug] & self._stall_bit:
            machine.mem32[self._fdebug] = self._stall_bit
            self._lost += 1
        sm = self.sm
        n = sm.rx_fifo()
        if n == 0:
            return 0
        words = self._words
        ends = self._ends
        for i in range(n):
            words[i] = sm.get()
        # The newest pulse ended at most one poll period ago: pin it to now and place the older
        # ones before it by their measured widths and gaps, so a burst read after a flash write
        # keeps its true spacing (the decoder splits tokens on gaps).
        back = 0
        for i in range(n - 1, -1, -1):
            w = words[i]
            ends[i] = back
            back -= self._ms(_MAX_COUNT - (w & _MAX_COUNT)) + self._ms(_MAX_COUNT - ((w >> 15) & _MAX_COUNT))
        for i in range(n):
            end = now_ms + ends[i]
            if end < self._last_end_ms:
                end = self._last_end_ms  # never before a pulse already reported
            self._last_end_ms = end
            out.append((end, self._ms(_MAX_COUNT - (words[i] & _MAX_COUNT))))
        return n

    def edges_lost(self):
        return self._lost

    def deinit(self):
        self.sm.active(0)
