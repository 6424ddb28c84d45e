"""Property tests on MicroPython: random pulse trains (widths jittered +-20 %, glitches, contact
bounce, all seats at once) decode to exactly the tokens sent."""
import mptest
from boards.sim import SimBoard
from fuzzkit import XorShift
from pulsegen import Train, decode_direct, decode_interleaved
from table.pulse import CoinDecoder
from simkit import Rig

SEATS = 7


def _decoder(ppc):
    return CoinDecoder(ppc, 10, 150, 300, 2000)


def test_random_trains_direct_decode_exactly():
    for seed in range(40):
        rng = XorShift(seed)
        ppc = (1, 2, 3, 5)[rng.below(4)]
        width = (20, 50, 100)[rng.below(3)]
        tr = Train(rng, 1 + rng.below(30), ppc, width, 50, 500)
        got, out = decode_direct(_decoder(ppc), tr)
        assert got == tr.coins, (seed, ppc, width, got, tr.coins)
        assert len([k for k, _ in out if k == "glitch"]) == tr.glitches > 0, seed


def test_all_seats_at_once_through_the_edge_path():
    for seed in range(12):
        rng = XorShift(1000 + seed)
        ppc = (1, 3)[seed % 2]
        board = SimBoard("/tmp", "sim-prop", 8, 8, "pio")
        trains = [Train(rng, 5 + rng.below(25), ppc, (20, 50, 100)[rng.below(3)], 50, 500,
                        start_ms=rng.below(400)) for _ in range(SEATS)]
        got = decode_interleaved(board.pulse_sources[:SEATS], [_decoder(ppc) for _ in range(SEATS)], trains)
        assert got == [t.coins for t in trains], (seed, got, [t.coins for t in trains])


def test_firmware_credits_one_token_per_seat_all_seats_at_once():
    """Through TableApp: every seat drops one jittered, bouncing token at the same moment."""
    rig = Rig("decprop")
    rng = XorShift(77)
    edges = []
    for seat in range(SEATS):
        tr = Train(rng, 1, 1, (20, 50, 100)[seat % 3], 50, 500, glitch_every=1, bounce_every=1,
                   start_ms=rng.below(30))
        edges += [(seat, lv, t) for t, lv in tr.edges]
    start = rig.app.state["meter"]
    rig.board.feed_edges(edges)
    rig.run_ms(1200)
    coins = rig.kinds("coin")
    assert sorted(e["seat"] for e in coins) == list(range(SEATS)), coins
    assert rig.app.state["meter"] == start + 70 * SEATS


def test_a_burst_short_of_a_whole_token_is_a_bad_count_never_a_coin():
    # table/pulse.py: "BAD_COUNT a burst whose pulse count is not a multiple of pulses_per_coin:
    # not credited". Closed by the idle gap (poll), or by the next burst's first pulse when that
    # pulse is the first the decoder hears of the gap.
    d = _decoder(2)
    out = []
    d.pulse(100, 50, out)
    d.poll(399, 0, out)  # 299 ms idle: the burst may still go on
    assert out == []
    d.poll(400, 0, out)
    assert out == [("bad_count", 1)] and d.coins == 0
    out = []
    d.pulse(1000, 50, out)
    d.pulse(2000, 50, out)  # its start (1950) is 950 ms after the last pulse: a new burst
    assert out == [("bad_count", 1)] and d.pending_pulses == 1 and d.coins == 0
    d.pulse(2100, 50, out)
    assert out[-1] == ("coin", 2100) and d.coins == 1


def test_a_counter_that_gives_no_width_counts_pulses_without_the_width_checks():
    # The ESP32's PCNT back end reports (end_ms, None): it counts edges and cannot time a pulse, so
    # no pulse is a glitch or out of spec by width; the count per burst still decides.
    d = _decoder(3)
    out = []
    for t in (100, 150, 200):
        d.pulse(t, None, out)
    assert out == [("coin", 200)] and d.glitches == 0
    d.pulse(1000, None, out)
    d.poll(1300, 0, out)
    assert out[-1] == ("bad_count", 1) and d.coins == 1


def test_a_short_burst_on_the_table_is_journaled_as_bad_count_and_credits_nothing():
    rig = Rig("decbadcount", config={"pulses_per_coin": 2})
    start = rig.app.state["meter"]
    rig.coin(3, pulses=1)
    rig.run_ms(600)
    assert [(e["seat"], e["pulses"]) for e in rig.kinds("bad_count")] == [(3, 1)]
    assert rig.app.state["meter"] == start and not rig.kinds("coin")
    rig.coin(3, pulses=2)
    rig.run_ms(600)
    assert rig.app.state["meter"] == start + 70 and len(rig.kinds("coin")) == 1


class _LosingSource:
    """A counter that overflowed: its next poll marks one lost pulse (end_ms, -1), as
    drivers/pio_pulse.py does when its RX FIFO was full, before the pulses it still holds."""

    def __init__(self, inner):
        self.inner = inner
        self.owed = True

    def poll(self, now_ms, out):
        n = self.inner.poll(now_ms, out)
        if n and self.owed:
            self.owed = False
            out.insert(len(out) - n, (out[len(out) - n][0], -1))
        return n

    def held_ms(self, now_ms):
        return self.inner.held_ms(now_ms)

    def edges_lost(self):
        return 0 if self.owed else 1

    def __getattr__(self, name):  # the simulated line's edges and clock: the board's own source
        return getattr(self.inner, name)


def test_lost_pulses_are_journaled_and_the_uncertain_token_not_credited():
    rig = Rig("declost", config={"pulses_per_coin": 2})
    rig.board.pulse_sources[2] = _LosingSource(rig.board.pulse_sources[2])
    start = rig.app.state["meter"]
    rig.coin(2, pulses=1)  # the token's first pulse was the one lost
    rig.run_ms(600)
    assert [(e["seat"], e["pulses"]) for e in rig.kinds("pulses_lost")] == [(2, 1)]
    # the pulse that did arrive is half a token: a bad count, never a coin
    assert [(e["seat"], e["pulses"]) for e in rig.kinds("bad_count")] == [(2, 1)]
    assert rig.app.state["meter"] == start and not rig.kinds("coin")
    assert not rig.app.jammed[2]  # a loss is not a jam, nor its release
    rig.coin(2, pulses=2)
    rig.run_ms(600)
    assert rig.app.state["meter"] == start + 70 and len(rig.kinds("coin")) == 1


def test_pulses_a_back_end_lost_are_reported_and_never_guessed_into_a_coin():
    # table/pulse.py: "LOST the back end's buffer overflowed ... The burst in progress is dropped
    # (its count is unknown); never guessed into a coin." A back end marks it (end_ms, -n).
    d = _decoder(3)
    out = []
    d.pulse(1000, 50, out)
    d.pulse(1100, 50, out)  # two of a token's three pulses, then the third is lost
    d.pulse(1150, -1, out)
    assert out == [("lost", 1)], out
    del out[:]
    d.poll(2000, 0, out)  # the gap closes nothing: the lost burst is not also a bad count
    assert out == [] and d.coins == 0, out
    for end in (3000, 3100, 3200):  # the next whole token counts as usual
        d.pulse(end, 50, out)
    assert out == [("coin", 3200)] and d.coins == 1, out


mptest.run(globals())
