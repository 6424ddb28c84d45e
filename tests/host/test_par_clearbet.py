"""Rulebook 004 (clear and dark bets, a sixth card for sale) PAR sheet. No published figures:
- the kernel's per-situation values (bet without buying, buy) equal a direct loop over every
  sixth card and dealer hand (clearbet_brute);
- a fixed-seed Monte Carlo of a documented strategy (bet, buy the sixth card, keep the best
  five) agrees with the enumeration within its confidence interval.
Both restricted to one dealer up-card rank (the full enumeration, about 2-3 minutes, runs in
benchmarks/bench_par.py).
"""
import random
from fractions import Fraction
from math import comb

import pytest

from tablegames.par import cards as C

from montecarlo import sample_agrees
from tablegames.par import clearbet, kernel, stud

UP_RANK = 7  # the dealer shows a nine
PAYS = tuple(clearbet.PAYS[c] for c in range(10))


@pytest.fixture(scope="module")
def result():
    return clearbet.enumerate_clear(progress=False, up_rank=UP_RANK)


@pytest.mark.parametrize("pass_after_buy", [False, True])
@pytest.mark.parametrize("hand", ["Ah Kh Qh Jh 3c", "7c 7d Kh 4s 2c", "Ac Kd 9h 6s 2c"])
def test_sweep_matches_brute_force(hand, pass_after_buy):
    k = kernel.kernel()
    p = sorted(C.cards(hand))
    u = UP_RANK * 4
    pix = sum(comb(x, i + 1) for i, x in enumerate(p))
    swept = k.clearbet(PAYS, stud.qualify_rank(), pass_after_buy, UP_RANK, pix, u)["probe"]
    assert swept == k.clearbet_brute(PAYS, stud.qualify_rank(), pass_after_buy, tuple(p), u)


def test_every_deal_counted_once(result):
    for s in result["strategies"]:
        n = s["fold"] + s["noq"] + sum(s["win"]) + s["lose"] + s["buy_fold"] + s["buy_noq"] \
            + sum(s["buy_win"]) + s["buy_lose"]
        assert n == clearbet.TOTAL // 13


def test_monte_carlo_always_buy_agrees(result):
    k = kernel.kernel()
    q = stud.qualify_rank()
    ev = clearbet.expected(result["strategies"][4], clearbet.TOTAL // 13)
    rng = random.Random(4)
    n = 20000
    xs = []
    for _ in range(n):
        u = UP_RANK * 4 + rng.randrange(4)
        deal = rng.sample([c for c in range(52) if c != u], 10)
        six, hole = deal[:6], deal[6:]
        best = max(k.rank5(*[c for c in six if c != x]) for x in six)
        rd = k.rank5(u, *hole)[0]
        if rd < q:
            x = 0
        elif best[0] >= rd:
            x = 2 * clearbet.PAYS[best[1]]
        else:
            x = -4
        xs.append(x)
    sample_agrees(xs, ev, within=0.07, rounds_at_least=20000)


def test_buying_never_hurts_the_optimal_player(result):
    opt, nobuy = result["strategies"][0], result["strategies"][3]
    total = clearbet.TOTAL // 13
    assert clearbet.expected(opt, total) >= clearbet.expected(nobuy, total)
