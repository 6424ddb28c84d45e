"""The rulebook 000 progressive side bet as a function of the meter.

The return rests on the five-card hand frequencies, published in every probability text
(e.g. Wikipedia, "Poker probability", frequency of 5-card poker hands, of 2,598,960 hands:
royal flush 4, straight flush 36, four of a kind 624, full house 3,744, flush 5,108).
Schedule from rulebook 000, rule 9.c: royal 100 % of the meter, straight flush 10 % or $5,000,
four of a kind $500, full house $100, flush $50, on a $1 token.
"""
from fractions import Fraction

from tablegames.par import progressive


def test_five_card_frequencies_are_the_published_ones():
    counts = progressive.category_counts()
    assert counts == [1302540, 1098240, 123552, 54912, 10200, 5108, 3744, 624, 36, 4]
    assert sum(counts) == 2598960


def test_break_even_meter_ten_percent_straight_flush():
    # (4 M + 36 M / 10 + 624 * 50000 + 3744 * 10000 + 5108 * 5000) / 2598960 = 100 cents
    be = progressive.break_even_meter("caribbean-draw-co")
    assert be == Fraction(100 * 2598960 - 624 * 50000 - 3744 * 10000 - 5108 * 5000) / Fraction(76, 10)
    assert round(float(be) / 100, 2) == 218047.37
    assert progressive.return_at("caribbean-draw-co", be) == 1


def test_break_even_meter_fixed_straight_flush():
    be = progressive.break_even_meter("caribbean-draw-co-fixed-sf")
    assert be == Fraction(100 * 2598960 - 36 * 500000 - 624 * 50000 - 3744 * 10000 - 5108 * 5000, 4)
    assert be == 36929000  # $369,290.00


def test_return_is_linear_in_the_meter():
    r1 = progressive.return_at("caribbean-draw-co", 10000000)
    r2 = progressive.return_at("caribbean-draw-co", 20000000)
    r3 = progressive.return_at("caribbean-draw-co", 30000000)
    assert r3 - r2 == r2 - r1 > 0
    s = progressive.sheet("caribbean-draw-co", meter_cents=10000000)
    assert s.expected == r1 - 1
