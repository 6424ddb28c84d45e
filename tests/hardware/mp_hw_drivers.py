"""Drivers and boards on the MicroPython interpreter, over the fakes in tests/hardware/mpfakes
(machine, rp2: the PIO program runs on a cycle emulator). Run by test_drivers_mp.py."""
import json
import os

import machine
import mptest
from machine import Pin

from drivers import seg7
from drivers.chain import ShiftIn, ShiftOut
from drivers.edges import EdgeRing, EdgeToPulse, RingPulseSource
from drivers.max7219 import MAX7219
from drivers.pio_pulse import PioPulseSource
from drivers.tm1637 import TM1637

HARDWARE = os.getenv("HW_DIR") or "../../hardware"


# --- 7-segment font ----------------------------------------------------------------------------
def test_font_digits_and_words():
    buf = bytearray(8)
    seg7.encode("123456.78", buf)
    assert buf == bytearray(b"\x06\x5b\x4f\x66\x6d\xfd\x07\x7f"), buf  # '6.' has its dp
    for word in ("LOCKED", "PROG OFF", "FAULT 01", "PAY", "JAM 3", "JACKPOT", "SERVICE"):
        seg7.encode(word, buf)
        for i, ch in enumerate(word):
            if ch != " ":
                assert buf[i] != 0, (word, ch)
    seg7.encode("-", buf)
    assert buf == bytearray(b"\x40" + bytes(7))


def test_font_points_and_overflow():
    buf = bytearray(4)
    seg7.encode(".5..", buf)
    assert buf == bytearray(b"\x80\xed\x80\x00"), buf
    seg7.encode("123456", buf)
    assert buf == bytearray(b"\x06\x5b\x4f\x66")
    seg7.encode("8.8.8.8.", buf)
    assert buf == bytearray(b"\xff\xff\xff\xff")
    assert seg7.glyph("~") == 0  # unknown: blank, never a digit look-alike


# --- edges to pulses ---------------------------------------------------------------------------
def test_edges_to_pulses():
    e = EdgeToPulse(active=0)
    out = []
    e.feed(100, 0, out)
    assert e.held_ms(130) == 30
    e.feed(150, 1, out)
    assert out == [(150, 50)] and e.held_ms(160) == 0
    e.feed(200, 1, out)  # a spike too short for the handler to see low: zero-width pulse
    assert out[-1] == (200, 0) and e.merged == 1
    e.feed(300, 0, out)
    e.feed(310, 0, out)  # missed release: the pulse is measured from the first start
    e.feed(380, 1, out)
    assert out[-1] == (380, 80)


def test_ring_overflow_counts_and_keeps_order():
    r = EdgeRing(4)
    for i in range(6):
        r.push(i, i & 1)
    assert len(r) == 3 and r.lost == 3
    assert [r.times[(r.tail + k) % 4] for k in range(3)] == [0, 1, 2]


def test_ring_source_with_fake_irq_and_wrapping_ticks():
    ticks = [(1 << 30) - 30]  # about to wrap: the conversion must not care

    def ticks_ms():
        return ticks[0]

    def ticks_diff(a, b):
        return ((a - b + (1 << 29)) & ((1 << 30) - 1)) - (1 << 29)

    pin = Pin(40, Pin.IN, Pin.PULL_UP)
    src = RingPulseSource(pin, 0, ticks_ms, ticks_diff)
    src.attach(Pin.IRQ_RISING | Pin.IRQ_FALLING)
    assert pin.hard
    t = ticks[0]
    for start, width in ((0, 50), (100, 20), (160, 3)):
        ticks[0] = (t + start) & ((1 << 30) - 1)
        pin.drive(0)
        ticks[0] = (t + start + width) & ((1 << 30) - 1)
        pin.drive(1)
    ticks[0] = (t + 200) & ((1 << 30) - 1)
    out = []
    assert src.poll(5000, out) == 3
    assert out == [(4850, 50), (4920, 20), (4963, 3)], out
    assert src.edges_lost() == 0


# --- PIO pulse timer on the emulator -------------------------------------------------------------
def _pio(sm_id=0):
    pin = Pin(2 + sm_id, Pin.IN, Pin.PULL_UP)
    pin.drive(1)
    src = PioPulseSource(sm_id, pin, 10000, 0)
    return pin, src, src.sm


def _play(pin, sm, train):
    """train: (gap_ms, width_ms) pairs at 10 kHz (10 cycles per ms)."""
    for gap, width in train:
        sm.run(gap * 10)
        pin.drive(0)
        sm.run(width * 10)
        pin.drive(1)


def test_pio_measures_widths_and_spacing():
    pin, src, sm = _pio()
    _play(pin, sm, [(100, 50), (50, 20), (30, 100)])
    sm.run(20)
    out = []
    assert src.poll(1000, out) == 3
    widths = [w for _, w in out]
    for got, want in zip(widths, (50, 20, 100)):
        assert abs(got - want) <= 1, widths
    # spacing between ends = gap + width of the later pulse, within a ms
    assert abs((out[1][0] - out[0][0]) - 70) <= 1 and abs((out[2][0] - out[1][0]) - 130) <= 1, out
    assert src.edges_lost() == 0


def test_pio_buffers_eight_pulses_then_flags_the_loss():
    pin, src, sm = _pio(5)  # PIO1: the stall flag is in the other block
    _play(pin, sm, [(20, 20)] * 8)  # a flash write long enough for 8 pulses: nothing lost
    sm.run(10)
    out = []
    assert src.poll(2000, out) == 8 and src.edges_lost() == 0
    _play(pin, sm, [(20, 20)] * 9)  # a ninth before anyone reads: dropped, and known
    sm.run(10)
    out = []
    assert src.poll(4000, out) == 8
    assert src.edges_lost() == 1
    assert out[-1][1] == -1 and out[-1][0] >= out[-2][0], out  # the loss marked after the 8 read
    assert machine.mem32[0x50300008] == 0  # flag cleared for the next one
    _play(pin, sm, [(20, 20)])  # the next word's pulse number agrees: exactly one was lost
    sm.run(10)
    out = []
    assert src.poll(5000, out) == 1 and [w for _, w in out] == [20] and src.edges_lost() == 1, out


def test_pio_counts_every_lost_pulse_by_the_pulse_number():
    # drivers/pio_pulse.py: each word carries the pulse number mod 4; a jump after a full FIFO
    # says how many more than the one the flag announced were lost.
    pin, src, sm = _pio(2)
    _play(pin, sm, [(20, 20)] * 11)  # 3 dropped
    sm.run(10)
    out = []
    assert src.poll(3000, out) == 8 and src.edges_lost() == 1
    _play(pin, sm, [(20, 20)])
    sm.run(10)
    out = []
    assert src.poll(4000, out) == 1
    assert [w for _, w in out] == [-2, 20] and src.edges_lost() == 3, out
    # a drop the flag did not report (cleared by someone else) is still seen in the numbers
    _play(pin, sm, [(20, 20)] * 10)
    sm.run(10)
    machine.mem32[0x50200008] = 1 << 2
    out = []
    assert src.poll(5000, out) == 8 and src.edges_lost() == 3
    _play(pin, sm, [(20, 20)])
    sm.run(10)
    out = []
    assert src.poll(6000, out) == 1 and [w for _, w in out] == [-2, 20] and src.edges_lost() == 5, out


def test_pio_words_drained_after_each_write_wait_in_ram_beyond_the_fifo():
    # drivers/pio_pulse.py: the board calls drain() after every flash write, so the 8-word FIFO
    # has to outlast one write only; the RAM ring holds 64 for the main loop's poll.
    pin, src, sm = _pio(3)
    for _ in range(3):
        _play(pin, sm, [(20, 20)] * 8)  # as many pulses as one write's stall may see
        sm.run(10)
        src.drain()  # the write returned
    out = []
    assert src.poll(5000, out) == 24 and src.edges_lost() == 0, out
    assert all(abs(w - 20) <= 1 for _, w in out), out
    assert all(abs((out[i + 1][0] - out[i][0]) - 40) <= 1 for i in range(23)), out  # spacing kept
    for _ in range(8):
        _play(pin, sm, [(20, 20)] * 8)
        sm.run(10)
        src.drain()
    _play(pin, sm, [(20, 20)] * 3)  # the ring is full: these three are dropped in RAM
    sm.run(10)
    src.drain()
    out = []
    assert src.poll(19000, out) == 64 and src.edges_lost() == 0
    _play(pin, sm, [(20, 20)])
    sm.run(10)
    out = []
    assert src.poll(19500, out) == 1 and [w for _, w in out] == [-3, 20] and src.edges_lost() == 3, out


def test_pio_saturates_long_widths_and_reports_held():
    pin, src, sm = _pio(1)
    sm.run(100)
    pin.drive(0)
    assert src.held_ms(100) == 0
    sm.run(70000)  # 7 s: longer than 0x3fff steps of 0.2 ms
    assert src.held_ms(7100) == 7000
    pin.drive(1)
    sm.run(10)
    out = []
    assert src.poll(7200, out) == 1
    assert out[0][1] == 3277, out  # 16383 steps x 0.2 ms, plus the 0.7 ms the loop does not see
    assert src.held_ms(7300) == 0


# --- chains and displays -----------------------------------------------------------------------
def test_shift_out_powers_up_dark_then_enables():
    spi = machine.SPI(7)
    latch = Pin(50, Pin.OUT, value=0)
    oe = Pin(51, Pin.OUT, value=1)
    out = ShiftOut(spi, latch, oe, 2)
    assert oe.history == [1, 1] and not spi.log  # /OE held high, nothing shifted yet
    out.start()
    assert spi.log == [b"\x00\x00"] and latch.history[-2:] == [1, 0] and oe.history[-1] == 0
    assert out.set(3, 1) and not out.set(3, 1)
    assert out.set(9, 1)
    out.flush()
    assert spi.log[-1] == b"\x02\x08", spi.log  # farthest chip (bits 8-15) goes out first
    out.off()
    assert oe.history[-1] == 1


def test_shift_in_bit_numbering():
    spi = machine.SPI(8)
    pl = Pin(52, Pin.OUT, value=1)
    sin = ShiftIn(spi, pl, 2)
    spi.miso = b"\x81\x02"
    sin.read()
    assert pl.history[-2:] == [0, 1]
    assert [i for i in range(16) if sin.bit(i)] == [0, 7, 9]


def test_max7219_registers():
    spi = machine.SPI(9)
    cs = Pin(53, Pin.OUT, value=1)
    d = MAX7219(spi, cs, 8, 5)
    buf = bytearray(8)
    spi.log.clear()
    d.segments(seg7.encode("1", buf))
    regs = dict((w[0], w[1]) for w in spi.log)
    assert regs[0x0F] == 0 and regs[0x09] == 0 and regs[0x0B] == 7 and regs[0x0A] == 5 and regs[0x0C] == 1
    assert regs[8] == 0x30, regs  # leftmost char in DIG7; '1' = segments b, c -> D5, D4
    assert all(regs[r] == 0 for r in range(1, 8))


def test_tm1637_writes_and_counts_acks():
    clk = Pin(54, Pin.OUT, value=1)
    dio = Pin(55, Pin.OPEN_DRAIN, value=1)
    dio.outside = 1  # pulled up, nobody acknowledges: no display fitted
    d = TM1637(clk, dio, 6, [2, 1, 0, 5, 4, 3])
    assert d.nacks == 9  # 3 commands + 6 grid bytes, each unanswered
    buf = bytearray(6)
    d.segments(seg7.encode("PAY", buf))
    assert d._grid[2] == seg7.glyph("P") and d._grid[1] == seg7.glyph("A") and d._grid[0] == seg7.glyph("Y")


# --- boards from the real pin maps -----------------------------------------------------------
def _pinmap(name, **changes):
    with open(HARDWARE + "/pinmap_%s.json" % name) as f:
        m = json.load(f)
    for k, v in changes.items():
        m[k].update(v)
    return m


def test_pico_board_from_pinmap():
    from boards.pico import PicoBoard

    m = _pinmap("pico", host_link={"kind": "uart"})
    b = PicoBoard(m, data_root="/tmp/hwtest-nv")
    assert b.board_id == "pico-e6613852834a2b2c" and b.max_seats == 8 and b.display_digits == 8
    io = machine.SPI.instances[1]
    oe = Pin.by_id[15]
    assert oe.history[0] == 1 and oe.history[-1] == 0 and io.log[0] == b"\x00\x00"
    # inhibit: seat 3 accepting sets bit 2 of chip 0 (the last byte on the wire)
    n = len(io.log)
    b.set_inhibit(2, False)
    assert io.log[-1] == b"\x00\x04" and len(io.log) == n + 1
    b.set_inhibit(2, False)
    assert len(io.log) == n + 1  # unchanged: nothing sent
    b.set_lamp(7, True)
    assert io.log[-1] == b"\x80\x04"
    # inputs, active low: everything idle reads 0xff
    io.miso = b"\xff\xff\xff\xff"
    assert b.read_keys() == 0 and b.read_spots() == 0 and not b.service_switch()
    io.miso = b"\xfe\xff\x7f\xea"  # seat 1 ante, seat 8 bonus, keys lock+jackpot, service switch
    assert b.read_spots() == (1 | 1 << 23), b.read_spots()
    assert b.read_keys() == 0b0101 and b.service_switch()
    # display
    disp = machine.SPI.instances[0]
    b.show("LOCKED")
    assert dict((w[0], w[1]) for w in disp.log[-8:])[8] == 0x0E  # L = d, e, f
    # clock never goes back, and the watchdog starts on the first feed
    t1 = b.now_ms()
    assert b.now_ms() >= t1
    b.feed_watchdog()
    assert machine.WDT.last.timeout == 4000 and machine.WDT.last.feeds == 1
    # link over the UART
    uart = machine.UART.instances[0]
    uart.rx += b"\x01\x02\x00"
    assert b.link_read() == b"\x01\x02\x00" and b.link_read() == b""
    b.link_write(b"abc")
    assert bytes(uart.tx) == b"abc"
    assert len(b.pulse_sources) == 8 and machine.mem32 is not None


def test_pico_blinks_from_the_loop():
    from boards.pico import PicoBoard

    b = PicoBoard(_pinmap("pico", host_link={"kind": "uart"}), data_root="/tmp/hwtest-nv")
    disp = machine.SPI.instances[0]
    b.show("PAY", True)
    frames = set()
    for phase in range(4):
        b._service_display(phase * 500 + 1)
        frames.add(dict((w[0], w[1]) for w in disp.log[-8:] if 1 <= w[0] <= 8)[8])
    assert frames == {0, 0x67}, frames  # 'P' and blank


def test_esp32_board_counts_with_pcnt():
    from boards.esp32 import Esp32Board

    Pin.world[36] = 1  # idle: the opto output is pulled up
    b = Esp32Board(_pinmap("esp32", host_link={"kind": "uart"}), data_root="/tmp/hwtest-nv")
    assert b.board_id.startswith("esp32-")
    pin = Pin.by_id[36]  # seat 1
    assert pin.pull == -1  # GPIO34-39 have no pulls: the interface board's resistor does it
    for _ in range(3):
        pin.drive(0)
        pin.drive(1)
    out = []
    assert b.pulse_sources[0].poll(100, out) == 3 and out == [(100, None)] * 3
    out = []
    assert b.pulse_sources[0].poll(101, out) == 0
    pin.drive(0)
    b.pulse_sources[0].held_ms(200)
    assert b.pulse_sources[0].held_ms(250) == 50


def test_irq_backend_from_pinmap():
    from boards.esp32 import Esp32Board

    m = _pinmap("esp32", host_link={"kind": "uart"}, pulse={"counter": "irq"})
    Pin.world[39] = 1  # idle: the opto output is pulled up
    b = Esp32Board(m, data_root="/tmp/hwtest-nv")
    pin = Pin.by_id[39]  # seat 2
    assert pin.hard and pin.trigger == Pin.IRQ_RISING | Pin.IRQ_FALLING
    pin.drive(1)
    pin.drive(0)
    pin.drive(1)
    out = []
    assert b.pulse_sources[1].poll(b.now_ms(), out) == 1


def test_table_app_runs_on_the_pico_board():
    """The real table logic on the Pico board class: a token timed by the PIO emulator is
    credited, and that seat's acceptor is inhibited and its lamp lit (one token per round)."""
    import time

    from boards.pico import PicoBoard
    from table.app import TableApp

    for g in range(2, 10):
        Pin.world[g] = 1  # idle acceptor lines
    try:
        for name in os.listdir("/tmp/hwtest-app"):
            os.remove("/tmp/hwtest-app/" + name)
    except OSError:
        pass
    b = PicoBoard(_pinmap("pico", host_link={"kind": "uart"}), data_root="/tmp/hwtest-app")
    io = machine.SPI.instances[1]
    io.miso = b"\xff\xff\xff\xff"  # no key, no spot, switch off
    app = TableApp(b, b.now_ms(), None)
    for _ in range(3):
        app.step(b.now_ms())
    assert app.table_state() == "OPEN" and io.log[-1] == b"\x00\x7f"  # 7 seats accept
    meter = app.state["meter"]
    src = b.pulse_sources[0]
    pin = Pin.by_id[2]
    src.sm.run(100)
    pin.drive(0)
    src.sm.run(500)  # a 50 ms pulse
    pin.drive(1)
    src.sm.run(10)
    t0 = time.ticks_ms()
    while time.ticks_diff(time.ticks_ms(), t0) < app.cfg["coin_gap_ms"] + 100:
        app.step(b.now_ms())
    assert app.state["meter"] > meter
    assert io.log[-1] == b"\x01\x7e", io.log[-1]  # seat 1: inhibited, lamp lit


mptest.run(globals())
