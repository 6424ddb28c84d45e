"""California Draw Poker PAR sheet (rulebook 003). No published figures exist for this game, so:
- the kernel's inclusion-exclusion sweep is checked situation by situation against a direct
  loop over every dealer hand and next card (california_brute);
- a fixed-seed Monte Carlo of the documented simple strategy agrees with the enumeration
  within its confidence interval (restricted to one dealer up-card rank to stay fast);
- the Up Card wager is checked by hand counting.
The full enumeration (about 20 s) runs in benchmarks/bench_par.py.
"""
import random
from fractions import Fraction

import pytest

from tablegames.par import california as cd
from tablegames.par import cards as C
from tablegames.par import kernel

from montecarlo import sample_agrees

BONUS = tuple(cd.ANTE_BONUS.get(c, 0) for c in range(8))


def test_four_card_category_counts():
    # of C(52,4) = 270,725: 13 four of a kind, 44 straight flushes (11 runs x 4 suits, A-2-3-4
    # to J-Q-K-A), 2,496 three of a kind, 2,772 straights, 2,816 flushes, 2,808 two pair,
    # 82,368 pairs
    assert kernel.kernel().category_counts4() == [177408, 82368, 2808, 2816, 2772, 2496, 44, 13]


# the kernel sweeps up cards of suit 0 (clubs); other up cards are the same situation with two
# suits swapped (california.enumerate_main), so each suit of up card is asked once here
@pytest.mark.parametrize("hand,up", [("Kh Kd 7s 2c", "9s"), ("Ah 2h 3d 4c", "9c"), ("5c 5d 5h Jc", "9h"),
                                     ("Qs Jd 8d 3c", "9d")])
def test_sweep_matches_brute_force(hand, up):
    k = kernel.kernel()
    cards, u = C.cards(hand), C.card(up)
    r = cd.enumerate_main(progress=False, probe=(tuple(cards), u), up_rank=u >> 2)
    assert r["probe"] == k.california_brute(BONUS, tuple(cards), u)


def _simple_choice(p):
    """always call; stand on two pair or better; else discard the lowest unpaired card"""
    k = kernel.kernel()
    cat = k.rank4(*p)[1]
    if cat >= cd.TWO_PAIR:
        return None
    ranks = [c >> 2 for c in p]
    for c in sorted(p):
        if ranks.count(c >> 2) == 1:
            return c
    return None


def test_monte_carlo_of_the_simple_strategy_agrees():
    k = kernel.kernel()
    up_rank = 7  # the dealer shows a nine
    r = cd.enumerate_main(progress=False, up_rank=up_rank)
    s = r["strategies"][1]
    total = cd.TOTAL // 13
    ev = Fraction(2 * sum(s["win"]) - 2 * sum(s["lose"])
                  + sum(cd.ANTE_BONUS.get(c, 0) * (s["win"][c] + s["tie"][c] + s["lose"][c]) for c in range(8))
                  - s["fold"], total)
    rng = random.Random(2024)
    n = 30000
    xs = []
    for _ in range(n):
        u = up_rank * 4 + rng.randrange(4)
        deck = [c for c in range(52) if c != u]
        deal = rng.sample(deck, 9)
        p, hole, nxt = deal[:4], deal[4:8], deal[8]
        drop = _simple_choice(p)
        final = p if drop is None else [c for c in p if c != drop] + [nxt]
        pr, pc = k.rank4(*final)
        dv = max(k.rank4(*([h for h in hole if h != x] + [u]))[0] for x in hole)
        x = (2 if pr > dv else -2 if pr < dv else 0) + cd.ANTE_BONUS.get(pc, 0)
        xs.append(x)
    sample_agrees(xs, ev, within=0.04, rounds_at_least=30000)


def test_up_card_wager():
    s = cd.up_card_sheet()
    # 12 ace pairs, 144 other same-rank pairs, 624 same-suit pairs of 2,652 ordered pairs
    assert s.expected == Fraction(12 * 10 + 144 * 3 + 624 * 2 - 1872, 2652)
