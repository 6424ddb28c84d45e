"""The bench jig's command parser and pulse-train player on the MicroPython interpreter, with
fake pins and a clock that jumps instead of waiting. Run by test_jig.py."""
import mptest
from machine import Pin

from jig.proto import GLITCH_MS, BadCommand, JigServer, parse


class JumpClock:
    def __init__(self):
        self.t = 0

    def now_ms(self):
        return self.t

    def wait_until(self, t_ms):
        assert t_ms >= self.t, "the train went back in time"
        self.t = t_ms


class Recorder:
    """An output pin that logs (t_ms, level) changes against the clock."""

    def __init__(self, clock):
        self.clock = clock
        self.level = 0
        self.log = []

    def value(self, v=None):
        if v is None:
            return self.level
        if v != self.level:
            self.level = v
            self.log.append((self.clock.t, v))


def jig():
    clock = JumpClock()
    outs = [Recorder(clock) for _ in range(8)]
    inhs = [Pin(100 + i, Pin.IN) for i in range(8)]
    led = Recorder(clock)
    return JigServer(outs, inhs, clock, led), outs, inhs, clock


def widths(log):
    out = []
    for i in range(0, len(log) - 1, 2):
        assert log[i][1] == 1 and log[i + 1][1] == 0, log
        out.append(log[i + 1][0] - log[i][0])
    return out


def test_parse_good_and_bad():
    assert parse("ping") == ("PING", ())
    assert parse("COIN 3 2 50 50") == ("COIN", (4, 2, 50, 50, 0, 1, 200, False))
    assert parse("COIN * 1 20 30 2 3 500 force") == ("COIN", (255, 1, 20, 30, 2, 3, 500, True))
    assert parse("HOLD 8 3000") == ("HOLD", (128, 3000))
    for bad, why in (("", "empty"), ("COIN 9 1 50 50", "seat out of range"), ("COIN 1 x 50 50", "not a number"),
                     ("COIN 1 1 50", "usage"), ("FOO", "unknown"), ("PING 1", "no arguments"),
                     ("COIN 1 1 50 3 1", "too short")):
        exc = mptest.raises(BadCommand, parse, bad)
        assert why in str(exc), (bad, str(exc))


def test_one_token_train():
    j, outs, inhs, clock = jig()
    assert j.handle("PING") == "OK JIG 1 SEATS 8"
    assert j.handle("COIN 3 2 50 50") == "OK COIN 2 0"
    assert outs[2].log == [(0, 1), (50, 0), (250, 1), (300, 0)], outs[2].log
    assert all(not o.log for i, o in enumerate(outs) if i != 2)
    assert clock.t == 500  # ends after the last token's idle gap


def test_multi_pulse_tokens_with_glitches():
    j, outs, inhs, clock = jig()
    assert j.handle("COIN 1 2 20 30 3 3 400") == "OK COIN 2 0"
    w = widths(outs[0].log)
    # token 1: pulse, glitch, pulse, glitch, pulse, then a glitch in the gap after it; token 2 clean
    assert w == [20, GLITCH_MS, 20, GLITCH_MS, 20, GLITCH_MS, 20, 20, 20], w
    assert sum(1 for x in w if x >= 20) == 6


def test_inhibited_seats_refuse_tokens_unless_forced():
    j, outs, inhs, clock = jig()
    inhs[1].drive(1)
    assert j.handle("INH") == "OK INH 2"
    assert j.handle("COIN 2 1 50 50") == "OK COIN 0 1" and not outs[1].log
    assert j.handle("COIN 2 1 50 50 FORCE") == "OK COIN 1 0" and len(outs[1].log) == 2
    assert j.handle("COIN * 1 50 50") == "OK COIN 7 1"
    assert len(outs[0].log) == 2 and len(outs[1].log) == 2 and len(outs[7].log) == 2


def test_hold_and_errors_leave_lines_released():
    j, outs, inhs, clock = jig()
    assert j.handle("HOLD 4 2500") == "OK HOLD 2500"
    assert outs[3].log == [(0, 1), (2500, 0)]
    assert j.handle("COIN 0 1 1 1").startswith("ERR seat out of range")
    assert all(o.level == 0 for o in outs)


mptest.run(globals())
