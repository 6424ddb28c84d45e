"""Colorado Hold'em PAR sheets (rulebook 001). No published figures exist for these pay tables,
so the enumeration is checked hand by hand against a direct count, and against a fixed-seed
Monte Carlo of the same decisions (an agreement within the Monte Carlo's confidence interval).
"""
import itertools
import random
from fractions import Fraction

import pytest

from tablegames.par import colorado, kernel
from tablegames.par import cards as C

from montecarlo import agrees


@pytest.fixture(scope="module")
def counts():
    return colorado.counts(progress=False)


def _fine(k, five):
    rank, cat = k.rank5(*five)
    if cat == C.PAIR:
        return 10 + ((k.key_of_rank5(rank) >> 16) & 15)
    return cat


@pytest.mark.parametrize("hand", ["As Ah Ad", "2s 3s 4s", "Kd 7c 2h", "Th Jh 9c", "5c 5d Qs", "Ac 2c 3c"])
def test_counts_match_a_direct_count(counts, hand):
    k = kernel.kernel()
    cards = sorted(C.cards(hand))
    h = colorado._colex(cards)
    row = counts[h]
    rest = [c for c in range(52) if c not in cards]
    for d in range(3):
        kept = [cards[i] for i in range(3) if i != d]
        got = [0] * colorado.NFINE
        for t in itertools.combinations(rest, 3):
            got[_fine(k, kept + list(t))] += 1
        assert list(row[4 + d * colorado.NFINE: 4 + (d + 1) * colorado.NFINE]) == got
    kind = 1 if cards[0] >> 2 == cards[2] >> 2 else 0
    assert row[0] in (kind, 2)


def test_instant_winners_are_the_three_card_counts(counts):
    import numpy as np

    # 52 three of a kind, 48 three-card straight flushes (12 runs incl. A-2-3 and Q-K-A, x 4 suits)
    assert list(np.bincount(counts[:, 0])) == [22000, 52, 48]


@pytest.mark.parametrize("version", ["colorado-holdem-required", "colorado-holdem-permissible"])
def test_monte_carlo_agrees(counts, version):
    s = colorado.sheet(version, progress=False)
    assert s.total == 407170400
    hands = colorado._hand_cards()
    k = kernel.kernel()
    rng = random.Random(7)
    n = 40000
    total = 0
    total_sq = 0
    values = colorado.VERSIONS[version]["main"]
    for _ in range(n):
        deck = rng.sample(range(52), 6)
        three, board = sorted(deck[:3]), deck[3:]
        row = counts[colorado._colex(three)].tolist()
        choice, _ = colorado.decide_main(row, version)
        if choice[0] == "fold":
            x = -1
        elif choice[0] == "instant":
            x = 5
        else:
            _, d, bet = choice
            kept = [three[i] for i in range(3) if i != d]
            x = (2 if bet else 1) * values[_fine(k, kept + board)]
        total += x
        total_sq += x * x
    mean = total / n
    sd = ((total_sq - n * mean * mean) / (n - 1)) ** 0.5
    agrees(n, mean, sd, s.expected, within=0.05, rounds_at_least=40000)


def test_permissible_never_folds_and_bonus_tables(counts):
    s = colorado.sheet("colorado-holdem-permissible", progress=False)
    assert not any(r.outcome == "fold" for r in s.rows)
    b = colorado.bonus_sheet("colorado-holdem-permissible", progress=False)
    assert b.total == 407170400
    assert 0 < b.house_edge < Fraction(1, 2)
