"""Caribbean Stud PAR sheets by complete enumeration (about 8 s each on 2 cores).

Source: Wizard of Odds, "Caribbean Stud Poker" (wizardofodds.com/games/caribbean-stud-poker/):
common US pay table (100-50-20-7-5-4-3-2-1), optimal strategy, house edge 5.224 % of the ante,
element of risk 2.56 %, 19,933,230,517,200 combinations (C(52,5) x 47 x C(46,4)).
"""
from fractions import Fraction

import pytest

from tablegames.par import stud


@pytest.fixture(scope="module")
def us():
    return stud.sheet("caribbean-stud-us", progress=False)


def test_us_common_table_matches_published(us):
    assert us.total == 19933230517200
    assert round(100 * float(us.house_edge), 3) == 5.224
    assert round(100 * float(us.element_of_risk), 2) == 2.56
    # raising with a pair or better (the simple strategy) costs a quarter point more
    assert 5.4 < -100 * float(us.simple["expected"]) < 5.5


def test_us_strategy_always_raises_pairs_and_sometimes_ace_king(us):
    lines = "\n".join(us.strategy)
    assert "pair             raise in 100.0 %" in lines
    assert "high card        raise in   4.7 %" in lines


def test_seed002_european_table_pays_less_for_a_straight_flush(us):
    eu = stud.sheet("caribbean-stud-eu", progress=False)
    # identical decisions and counts; only the straight flush pays 25 instead of 50 to 1
    sf_us = [r for r in us.rows if r.outcome.endswith("straight flush")][0]
    sf_eu = [r for r in eu.rows if r.outcome.endswith("straight flush")][0]
    assert sf_us.combinations == sf_eu.combinations
    assert eu.expected - us.expected == Fraction(sf_us.combinations * (51 - 101), eu.total)
    assert round(100 * float(eu.house_edge), 4) == 5.2637


def test_dealer_qualifying_frequency_is_on_the_sheet(us):
    # rulebook 002 section 1: "In order to qualify the dealer must have at least Ace-King or higher".
    # Over all deals the dealer holds any five cards: pairs or better (2,598,960 - 1,302,540 no-pair
    # hands) plus ace-king high without a straight or flush ((C(11,3) - 1 for A-K-Q-J-10) rank
    # sets x (4^5 - 4) suit layouts)
    assert stud.dealer_qualifies() == Fraction(2598960 - 1302540 + 164 * 1020, 2598960)
    figures = dict((label, value) for label, value, _ in us.figures)
    assert figures["dealer qualifies"] == Fraction(1463700, 2598960)
    noq = [r for r in us.rows if r.outcome == "raise, dealer does not qualify"][0].combinations
    fold = [r for r in us.rows if r.outcome == "fold"][0].combinations
    assert figures["... against a raise"] == 1 - Fraction(noq, us.total - fold)
    text = us.render()
    assert "dealer qualifies:       56.3187 %  (of all deals: ace-king or better)" in text
    assert [f["name"] for f in us.to_dict()["figures"]] == ["dealer qualifies", "... against a raise"]
