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


mptest.run(globals())
