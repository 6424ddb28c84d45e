"""Caribbean Draw Poker (rulebook 000) PAR enumeration: each step of the method checked against a
direct count, and the whole against the settlement engine.

The full enumeration takes minutes (benchmarks/bench_par.py times it); these tests take its parts:
 - the dealer's drawing rule in the kernel is the settlement engine's (rule 12), card for card;
 - for a removed card set R, "blind dealer by rank patterns + flush corrections" equals
   every dealer path counted one by one (brute force);
 - the subset-count sweep gives the same corrections as counting the paths directly;
 - one hand's options priced directly agree with brute force where brute force is possible;
 - the settlement engine, playing the stored optimal strategy and the dealer-rule strategy,
   agrees with the exact returns within its confidence interval (fixed seed).
"""
import itertools
import os
import random
from fractions import Fraction
from math import comb

import pytest

from tablegames.par import cards as C
from tablegames.par import cdraw, kernel

from montecarlo import agrees, sample_agrees

games = pytest.importorskip("tablegames.games")
poker = pytest.importorskip("tablegames.poker")

STRATEGY = os.path.join(os.path.dirname(__file__), "..", "data", "caribbean_draw_seed000.strategy.gz")
ANTE = 100


@pytest.fixture(scope="module")
def k():
    return kernel.kernel()


@pytest.fixture(scope="module")
def q():
    return cdraw.qualify_rank()


def _rank(k, cs):
    return k.rank5(*cs)[0]


def test_dealer_rule_is_the_settlement_engines(k):
    # rulebook 000 rule 12 as tablegames.games.caribbean_draw.dealer_draw reads it, on random hands
    # and on the hands where the rule's words matter most
    from tablegames.games.caribbean_draw import dealer_draw

    rng = random.Random(5)
    hands = [rng.sample(range(52), 5) for _ in range(20000)]
    hands += [C.cards(t) for t in [
        "3s 5h 6d 7c 9s",   # two inside straights: 3-5-6-7 and 5-6-7-9
        "2s 3h 4d 5c 9s",   # open-ended 2-3-4-5 (A or 6 completes it)
        "As 2h 3d 4c 9s",   # A-2-3-4 is one-ended
        "Js Qh Kd Ac 3s",   # J-Q-K-A is one-ended
        "2h 7h 9h Kh 8c",   # four to a flush over four to a straight (7-8-9-K? no: 7-8-9 + K)
        "5h 6h 7h 9h 8c",   # a straight: stands
        "5h 6h 7h 8s Kh",   # four to a flush and a different four to a straight: the flush
    ]]
    for h in hands:
        kept, _, _ = dealer_draw(tuple(h))
        mask = k.cdraw_dealer_keep(*h)
        assert {h[i] for i in range(5) if mask >> i & 1} == set(kept), h


@pytest.mark.parametrize("removed,final", [
    ("2c 7d 9h Jd Js 4c Kh", "2c 7d 9h Jd Js"),     # seven removed, the player holds a pair of jacks
    ("As Ks Qs Js 9s 2h 3d", "As Ks Qs Js 9s"),     # a flush: the blind dealer has no flushes at all
    ("8h 8d 8c 2s 3s 4s", "8h 8d 8c 2s 3s"),        # six removed: one card drawn
    ("Ts Js Qh Kd Ac", "Ts Js Qh Kd Ac"),           # five removed: the player stands on a straight
    ("4h 5h 6h 7h 8h 9c Tc", "4h 5h 6h 7h 8h"),     # a straight flush
])
def test_blind_dealer_plus_corrections_is_every_dealer_path(k, q, removed, final):
    # (dealer does not qualify, dealer below the player, dealer equal), weighed per path
    R = C.cards(removed)
    x = _rank(k, C.cards(final))
    blind, corr = k.cdraw_dealer_split(R, x, q, -1)
    assert tuple(b + c for b, c in zip(blind, corr)) == k.cdraw_dealer_brute(R, x, q)


def _representatives(n, below=18):
    # the first n hand classes in the kernel's order: representatives by ascending colex index
    def colex(cs):
        return sum(comb(c, i + 1) for i, c in enumerate(sorted(cs)))

    subs = sorted(itertools.combinations(range(below), 5), key=colex)
    return [f for f in subs if cdraw.canonical(f)[0] == colex(f)][:n]


@pytest.mark.parametrize("direct_eq", [0, 1 << 40])
def test_subset_count_sweep_equals_direct_count(k, q, direct_eq):
    # the sweep restricted to the first 400,000 dealer hands and 300 final-hand classes, so
    # that it runs in seconds; the corrections it finds for (final five, discards) are the
    # ones counted path by path over the same dealer hands (both ways of finding the dealer
    # hands equal to the player's: reading the counts again, or summing that rank's paths)
    hmax, fmax = 400000, 300
    reps = _representatives(fmax)
    rng = random.Random(9)
    debug = []
    for _ in range(12):
        f = list(rng.choice(reps))
        nd = rng.choice([0, 1, 2, 2])
        d = sorted(rng.sample([c for c in range(52) if c not in f], nd)) + [0, 0]
        debug.append((tuple(f), nd, (d[0], d[1])))
    res = cdraw.enumerate_draw(progress=False, hmax=hmax, fmax=fmax, debug=debug, direct_eq=direct_eq)
    assert res["paths"] > 1000000
    for (f, nd, d), got in zip(debug, res["debug"]):
        found, nq, below, eq = got
        assert found
        _, corr = k.cdraw_dealer_split(list(f) + list(d[:nd]), _rank(k, f), q, hmax)
        assert (nq, below, eq) == corr, (f, nd, d)


def test_one_hand_standing_is_brute_force(k, q):
    # a pair of nines, standing: every dealer path against it, one by one
    hand = C.cards("9s 9h 5d 3c 2h")
    opts = {r[0]: r for r in k.cdraw_hand(q, tuple(hand))}
    _, nq, tie, lose, win, den = opts[0]
    bnq, below, eq = k.cdraw_dealer_brute(sorted(hand), _rank(k, hand), q)
    total = comb(47, 5) * 1722
    assert den == total
    assert (nq, sum(win), tie, lose) == (bnq, below - bnq, eq, total - below - eq)
    assert win[C.PAIR] == below - bnq


def test_one_hand_draws_add_up(k, q):
    # every option's outcomes weigh exactly all its deals: C(47, k) draws x C(47 - k, 5)
    # dealer hands x the dealer's draws
    for _, nq, tie, lose, win, den in k.cdraw_hand(q, tuple(C.cards("Ah Kh Qh Jh 3c"))):
        assert nq + tie + lose + sum(win) == den


def _strategy():
    if not os.path.exists(STRATEGY):
        pytest.skip("no stored strategy (tablectl par caribbean-draw --strategy %s)" % STRATEGY)
    return cdraw.read_strategy(STRATEGY)


def test_stored_strategy_covers_every_hand():
    header, table = _strategy()
    assert header["classes"] == len(table) == 134459
    assert sum(v[0] for v in table.values()) == comb(52, 5)
    assert header["total"] == cdraw.TOTAL


def _settle(hand, dealer, stub, decision, discards, dealer_draw):
    seat = {"seat": 1, "ante": ANTE, "cards": poker.cards_str(hand), "decision": decision}
    if decision == "call":
        seat.update(bet=2 * ANTE, discard=poker.cards_str(discards), draw=poker.cards_str(stub[:len(discards)]))
        stub = stub[len(discards):]
    _, ddisc, _ = dealer_draw(tuple(dealer))
    rnd = {"seats": [seat], "dealer": {"cards": poker.cards_str(dealer), "draw": poker.cards_str(stub[:len(ddisc)])}}
    return games.settle("caribbean-draw", rnd).net(1) / ANTE


def test_settlement_engine_agrees_with_the_exact_returns():
    # Monte Carlo of tablegames.games (the settlement engine) on the same deals, played two ways: the stored
    # optimal strategy and the dealer's own rule; each mean, and their difference, must fall
    # within three standard errors of the enumeration's exact values (fixed seed), which are at most
    # 0.06 antes (0.025 for the difference) at 30,000 rounds (tests/host/montecarlo.py)
    from tablegames.games.caribbean_draw import dealer_draw

    header, table = _strategy()
    exact_opt, exact_simple = Fraction(header["expected"]), Fraction(header["simple_expected"])
    rng = random.Random(17)
    opt, simple = [], []
    for _ in range(30000):
        deck = rng.sample(range(52), 14)
        hand, dealer, stub = deck[:5], deck[5:10], deck[10:]
        (decision, discards), rule = cdraw.play(table, hand)
        opt.append(_settle(hand, dealer, stub, decision, discards, dealer_draw))
        simple.append(opt[-1] if (decision, sorted(discards)) == ("call", sorted(rule))
                      else _settle(hand, dealer, stub, "call", rule, dealer_draw))
    sample_agrees(opt, exact_opt, within=0.06, rounds_at_least=30000)
    sample_agrees(simple, exact_simple, within=0.06, rounds_at_least=30000)
    sample_agrees([a - b for a, b in zip(opt, simple)], exact_opt - exact_simple, within=0.025,
                  rounds_at_least=30000)


def test_dealer_qualifying_frequency():
    # 13 "the dealer must hold at least a pair of eights to qualify", after drawing by rule 12.
    from tablegames.games.caribbean_draw import dealer_draw

    qualify = poker.hands.lowest_value(5, poker.Five.PAIR, 6)
    # a pair of deuces to sevens: 280 of the 1,081 two-card draws qualify, whatever the suits
    rng = random.Random(5)
    seen = 0
    while seen < 40:
        hand = tuple(rng.sample(range(52), 5))
        v = poker.rank5(hand)
        if not poker.category_start(poker.Five.PAIR) <= v < qualify:
            continue
        kept, discards, _ = dealer_draw(hand)
        rest = [c for c in range(52) if c not in hand]
        assert len(discards) == 2
        assert sum(poker.rank5(kept + d) >= qualify for d in itertools.combinations(rest, 2)) == 280
        seen += 1
    exact = cdraw.dealer_qualifies()
    # the kernel's count (one hand per suit class, every draw) and the count by rank sets agree
    assert exact == cdraw.dealer_qualifies_by_rank_sets()
    assert exact.denominator * 1081 * comb(52, 5) % exact.denominator == 0
    # the settlement engine's dealer on random deals (fixed seed) agrees within 3 standard errors (at
    # most 0.8 points of probability)
    n, hits = 40000, 0
    for _ in range(n):
        cards = rng.sample(range(52), 7)
        kept, discards, _ = dealer_draw(tuple(cards[:5]))
        hits += poker.rank5(kept + tuple(cards[5:5 + len(discards)])) >= qualify
    p = float(exact)
    agrees(n, hits / n, (p * (1 - p)) ** 0.5, p, within=0.008, rounds_at_least=40000)
    # docs/PAR.md: "the dealer fails to qualify 48.5 % of the time" (the kernel's count)
    assert round(100 * (1 - p), 1) == 48.5
    figures = cdraw.dealer_figures({"fold": 0, "noq": 0})
    assert figures[0][1] == exact and figures[1][1] == 1
