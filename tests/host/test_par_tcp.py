"""Three Card Poker PAR sheet against published figures (the calibration game of docs/PAR.md).

Source: Wizard of Odds, "Three Card Poker" (wizardofodds.com/games/three-card-poker/):
Ante & Play with the 1-4-5 ante bonus and the Q-6-4 strategy, house edge 3.37 %, element of
risk 2.01 %; Pair Plus 1-4-6-30-40 house edge 2.32 %, 1-3-6-30-40 house edge 7.28 %.
Three-card hand counts (of 22,100): straight flush 48, three of a kind 52, straight 720,
flush 1,096, pair 3,744 (same source, Pair Plus return table).
"""
from fractions import Fraction

import pytest

from tablegames.par import tcp


@pytest.fixture(scope="module")
def counts():
    return tcp._counts(progress=False)


def test_ante_play_matches_published(counts):
    s = tcp.ante_play("three-card-poker-1-4-6-30-40", counts=counts)
    assert s.total == 22100 * 18424 == 407170400
    assert round(100 * float(s.house_edge), 2) == 3.37
    assert round(100 * float(s.element_of_risk), 2) == 2.01
    # the published optimal strategy: play Q-6-4 or better
    assert s.strategy[0].startswith("play Q-6-4 or better")
    assert "Q-6-3" in s.strategy[1]
    # the dealer-mimicking strategy costs more than the optimal one
    assert -s.simple["expected"] > s.house_edge


def test_pair_plus_matches_published(counts):
    s = tcp.pair_plus("three-card-poker-1-4-6-30-40", counts=counts)
    by = {r.outcome: r.combinations for r in s.rows}
    assert by == {"straight flush": 48, "three of a kind": 52, "straight": 720, "flush": 1096,
                  "pair": 3744, "high card": 16440}
    assert s.house_edge == Fraction(512, 22100)
    assert round(100 * float(s.house_edge), 2) == 2.32
    s2 = tcp.pair_plus("three-card-poker-1-3-6-30-40", counts=counts)
    assert round(100 * float(s2.house_edge), 2) == 7.28


def test_every_deal_counted_once(counts):
    # per player hand, the dealer outcomes cover the 18,424 hands from the other 49 cards
    assert (counts[:, 2:].sum(axis=1) == 18424).all()
    assert counts.shape == (22100, 6)
