"""RP2040 PIO pulse timer: one state machine per acceptor line, blind to nothing.

MicroPython's rp2 port erases and programs flash with interrupts off (a 4 KB sector erase takes
45 ms typical, 400 ms worst case on the Pico's W25Q16JV), and one littlefs flush can erase more
than one sector back to back. A GPIO interrupt counter is blind for that long. A PIO state
machine is not: it runs from its own instruction memory, measures the idle gap before each pulse
and the pulse's width, and pushes both as ONE word per pulse into its RX FIFO, joined to 8
entries (FJOIN_RX). The board moves them into a RAM ring after every flash write (drain()), and
the main loop's poll() takes them from there. docs/FIRMWARE.md ("How long the CPU may stall") has
the arithmetic: 8 words outlast 640 ms of stall at the fastest pulse train the decoder accepts,
one write stops the CPU for about 200 ms at most (typical erase times), and 64 words in RAM
outlast the main loop's longest turn at the acceptors' maximum rate.

Word pushed per completed pulse (30 bits, so `sm.get()` returns a small int and never allocates):
    bits 29..16  gap counter   bits 15..2  width counter   bits 1..0  pulse number (mod 4)
Gap and width count down from 0x3FFF, one step per 2 state-machine cycles, and saturate at 0
(at 10 kHz a step is 0.2 ms, so either reads at most 3.28 s: far beyond any coin pulse; a line
held that long is a jam, which held_ms reports from the pin itself). The pulse number counts
down by one per push, kept in the OSR (no TX FIFO with FJOIN_RX, so the OSR is free).

A word that does not fit (in the FIFO or the ring) is lost, and never silently: the next word's
pulse number jumps, and for the FIFO the RP2040 sets the machine's RXSTALL flag in FDEBUG even
for a non-blocking push (RP2040 datasheet, 3.7 "FDEBUG"). poll() turns either into a marker
(end_ms, -n) in its output: n pulses lost there (exact up to 4 in one overflow), which the
CoinDecoder reports as LOST (table/pulse.py), and edges_lost() counts them.
"""
import time
from array import array

import machine
import rp2
from micropython import const
from drivers.heldpin import HeldFromPin

TYPE_CHECKING = False
if TYPE_CHECKING:
    from rp2.asm_pio import *  # noqa: F401,F403  the PIO assembler names, for mypy only

_MAX_COUNT = const(0x3FFF)
_RING_WORDS = const(64)  # words held in RAM between polls (a power of two): docs/FIRMWARE.md
_RING_MASK = const(63)
_PIO0_BASE = const(0x50200000)
_PIO1_BASE = const(0x50300000)
_FDEBUG = const(0x008)
# Cycles of each interval the counting loops do not see (the instructions between the pin's
# change and the loop that counts it), added back so widths and gaps are not short by them.
_WIDTH_EXTRA_CYCLES = const(7)
_GAP_EXTRA_CYCLES = const(12)


@rp2.asm_pio(in_shiftdir=rp2.PIO.SHIFT_LEFT, out_shiftdir=rp2.PIO.SHIFT_RIGHT, fifo_join=rp2.PIO.JOIN_RX)
def pulse_timer():  # type: ignore[no-untyped-def]
    # jmp_pin is the acceptor line, high while idle (the optocoupler output is released).
    # OSR holds the pulse number (no TX FIFO to use it for); ISR is empty between words.
    mov(osr, null)
    mov(isr, null)
    wrap_target()
    mov(x, invert(null))  # an idle gap begins: X = 0x3FFF, built in the empty ISR
    in_(x, 14)
    mov(x, isr)
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
    mov(x, invert(null))
    mov(isr, null)
    in_(x, 14)
    mov(x, isr)
    mov(isr, null)
    label("active")
    jmp(pin, "ended")
    jmp(x_dec, "active")  # 2 cycles per step while active
    mov(x, null)  # width saturated (a jam): stop counting, wait for the release
    label("active_sat")
    jmp(pin, "ended")
    jmp("active_sat")
    label("ended")
    in_(y, 14)
    in_(x, 14)
    mov(y, osr)  # the pulse number, one lower per word
    jmp(y_dec, "counted")
    label("counted")
    mov(osr, y)
    in_(y, 2)
    push(noblock)  # a full FIFO drops the word and sets RXSTALL: see drain
    wrap()


class PioPulseSource(HeldFromPin):
    """Contract PulseSource (boards/contract.py) on one rp2 state machine (sm_id 0-7).

    pin: machine.Pin, input, the opto output (pulled up on the interface board). freq_hz: the
    state-machine clock; one count is 2 cycles, so 10 kHz measures in 0.2 ms steps.

    Words go from the FIFO to a RAM ring of 64 in drain(), which the board calls after every
    flash write (boards/hwboard.py), so the FIFO only has to outlast ONE write's stall, and
    the ring the main loop's longest turn (however many writes it makes); poll() drains too.
    """

    def __init__(self, sm_id, pin, freq_hz=10000, active=0):
        self.pin = pin
        self.active = active
        self.sm = rp2.StateMachine(sm_id, pulse_timer, freq=freq_hz, jmp_pin=pin, in_base=pin)
        self._fdebug = (_PIO1_BASE if sm_id >= 4 else _PIO0_BASE) + _FDEBUG
        self._stall_bit = 1 << (sm_id & 3)
        self._cycle_ns = 1000000000 // freq_hz
        # The ring: words as the machine pushed them (-1: the RXSTALL flag was seen there), and
        # the ticks_ms when each reached RAM (its pulse had ended by then; poll() turns it into
        # the pulse's end, in place).
        self._ring = array("i", [0] * _RING_WORDS)
        self._seen = array("i", [0] * _RING_WORDS)
        self._head = 0
        self._count = 0
        self._last_end_ms = 0
        self._lost = 0
        self._number = 0  # pulse number of the last word read (the machine starts from 0)
        self._owed = False  # RXSTALL seen: one loss counted, the next word tells how many more
        machine.mem32[self._fdebug] = self._stall_bit  # write 1 to clear a stale flag
        self.sm.active(1)

    def _ms(self, steps, extra_cycles):
        return ((steps * 2 + extra_cycles) * self._cycle_ns + 500000) // 1000000

    def drain(self):
        """Move the words waiting in the FIFO into the ring. Never allocates; a word that finds
        the ring full is dropped, and the next word's pulse number says so."""
        sm = self.sm
        n = sm.rx_fifo()
        t = time.ticks_ms()
        ring = self._ring
        for _ in range(n):
            w = sm.get()
            if self._count < _RING_WORDS:
                i = (self._head + self._count) & _RING_MASK
                ring[i] = w
                self._seen[i] = t  # type: ignore[call-overload]  # ticks are small ints
                self._count += 1
        # Read the flag after the words: a drop it reports is newer than every word just read.
        if machine.mem32[self._fdebug] & self._stall_bit:
            machine.mem32[self._fdebug] = self._stall_bit  # write 1 to clear
            if self._count < _RING_WORDS:
                i = (self._head + self._count) & _RING_MASK
                ring[i] = -1
                self._seen[i] = t  # type: ignore[call-overload]  # ticks are small ints
                self._count += 1

    def poll(self, now_ms, out):
        self.drain()
        n = self._count
        if n == 0:
            return 0
        ring = self._ring
        seen = self._seen
        ends = seen  # each slot's time is read before its end is written
        head = self._head
        t = time.ticks_ms()
        # Place each pulse's end (ms relative to now) from the newest back: no later than when
        # its word reached RAM, and before the next one by that one's measured gap and width,
        # so a burst read after a flash write keeps its true spacing (the decoder splits tokens
        # on gaps).
        back = 0
        for j in range(n - 1, -1, -1):
            i = (head + j) & _RING_MASK
            cap = -time.ticks_diff(t, seen[i])
            if j == n - 1 or cap < back:
                back = cap
            ends[i] = back
            w = ring[i]
            if w >= 0:
                back -= self._ms(_MAX_COUNT - ((w >> 2) & _MAX_COUNT), _WIDTH_EXTRA_CYCLES) + self._ms(
                    _MAX_COUNT - ((w >> 16) & _MAX_COUNT), _GAP_EXTRA_CYCLES)
        pulses = 0
        for j in range(n):
            i = (head + j) & _RING_MASK
            w = ring[i]
            end = now_ms + ends[i]
            if end < self._last_end_ms:
                end = self._last_end_ms  # never before a pulse already reported
            self._last_end_ms = end
            if w < 0:
                # At least one word was dropped here; its successor's pulse number will say
                # whether more were.
                self._lost += 1
                self._owed = True
                out.append((end, -1))
                continue
            missing = (self._number - 1 - w) & 3  # words the machine pushed that never arrived
            self._number = w & 3
            if self._owed:  # one of them was counted when the flag was seen
                self._owed = False
                missing = missing - 1 if missing else 3
            if missing:
                self._lost += missing
                out.append((end, -missing))
            out.append((end, self._ms(_MAX_COUNT - ((w >> 2) & _MAX_COUNT), _WIDTH_EXTRA_CYCLES)))
            pulses += 1
        self._head = (head + n) & _RING_MASK
        self._count = 0
        return pulses

    def edges_lost(self):
        """Pulses (or glitches: a dropped word is not known to be either) lost to a full FIFO."""
        return self._lost

    def deinit(self):
        self.sm.active(0)
