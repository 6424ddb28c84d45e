"""Fixed-seed Monte Carlo runs of the settlement engine (tablegames.games) against the
PAR enumeration: for each game without published figures, random rounds are settled by the
engine with a strategy the enumeration also priced, and the mean result must fall within
three standard errors of the exact expected value. This checks that the PAR sheets and the
table's settlement read the seeds the same way.

Each game runs enough rounds that three standard errors are smaller than the exact value itself:
a sample that passes then has the sign of the exact value, so a house edge cannot come out as a
player edge (or the reverse) and pass. The rounds needed follow from each game's spread per round
(about 2 to 3.2 antes): n > (3 sd / |EV|)^2.
"""
import functools
import random
from fractions import Fraction

import pytest

from tablegames.par import california as cd
from tablegames.par import clearbet, colorado, kernel, stud
from tablegames.par import cards as C

games = pytest.importorskip("tablegames.games")
poker = pytest.importorskip("tablegames.poker")
ANTE = 100


def _text(cs):
    return poker.cards_str(list(cs))


def _agree(xs, exact):
    n = len(xs)
    mean = sum(xs) / n
    sd = (sum((x - mean) ** 2 for x in xs) / (n - 1)) ** 0.5
    bound = 3 * sd / n ** 0.5
    # the run can tell the sign: 3 standard errors are inside |EV| (else: more rounds)
    assert bound < abs(float(exact)), ("too few rounds to tell the sign", n, bound, float(exact))
    assert abs(mean - float(exact)) < bound, (mean, float(exact), bound)


@pytest.fixture
def fast_thresholds(monkeypatch):
    """hands.lowest_value is a pure function scanned linearly on every call (about 4 ms); the
    engines call it per seat. Remembering its answers changes no result and makes the tens of
    thousands of rounds below take seconds, not minutes."""
    from tablegames.poker import hands
    monkeypatch.setattr(hands, "lowest_value", functools.lru_cache(maxsize=None)(hands.lowest_value))


@pytest.mark.parametrize("version,rounds", [("colorado-holdem-required", 50000), ("colorado-holdem-permissible", 70000)])
def test_colorado_optimal_strategy(version, rounds, fast_thresholds):
    a = colorado.counts(progress=False)
    s = colorado.sheet(version, progress=False)
    rng = random.Random(11)
    xs = []
    for _ in range(rounds):
        deal = rng.sample(range(52), 6)
        three, board = sorted(deal[:3]), deal[3:]
        choice, _ = colorado.decide_main(a[colorado._colex(three)].tolist(), version)
        seat = {"seat": 1, "ante": ANTE, "cards": _text(three)}
        if choice[0] in ("fold", "instant"):
            seat["decision"] = choice[0]
        else:
            seat.update(decision="play", discard=_text([three[choice[1]]]))
            if choice[2]:
                seat["bet"] = ANTE
        st = games.settle("colorado-holdem", {"community": _text(board), "seats": [seat]},
                          paytable=version)
        xs.append(st.net(1) / ANTE)
    _agree(xs, s.expected)


@pytest.mark.parametrize("paytable,engine", [("caribbean-stud-us", "caribbean-stud-us")])
def test_caribbean_stud_simple_strategy(paytable, engine, fast_thresholds):
    # the simple strategy's exact value comes from the same enumeration as the optimal one
    sheet = stud.sheet(paytable, progress=False)
    k = kernel.kernel()
    rng = random.Random(5)
    xs = []
    for _ in range(25000):
        deal = rng.sample(range(52), 10)
        p, d = deal[:5], deal[5:]
        raise_ = k.rank5(*p)[1] >= C.PAIR
        seat = {"seat": 1, "ante": ANTE, "cards": _text(p), "decision": "raise" if raise_ else "fold"}
        if raise_:
            seat["bet"] = 2 * ANTE
        st = games.settle("caribbean-stud", {"dealer": {"cards": _text(d)}, "seats": [seat]}, paytable=engine)
        xs.append(st.net(1) / ANTE)
    _agree(xs, sheet.simple["expected"])


def test_california_simple_strategy():
    up_rank = 7
    r = cd.enumerate_main(progress=False, up_rank=up_rank)
    s = r["strategies"][1]
    ev = Fraction(2 * sum(s["win"]) - 2 * sum(s["lose"])
                  + sum(cd.ANTE_BONUS.get(c, 0) * (s["win"][c] + s["tie"][c] + s["lose"][c]) for c in range(8))
                  - s["fold"], cd.TOTAL // 13)
    k = kernel.kernel()
    rng = random.Random(3)
    xs = []
    for _ in range(6000):
        u = up_rank * 4 + rng.randrange(4)
        deal = rng.sample([c for c in range(52) if c != u], 9)
        p, hole, nxt = deal[:4], deal[4:8], deal[8]
        seat = {"seat": 1, "ante": ANTE, "down": _text(p[:3]), "up": _text(p[3:]), "decision": "call", "call": ANTE}
        if k.rank4(*p)[1] < cd.TWO_PAIR:
            ranks = [c >> 2 for c in p]
            drop = [c for c in sorted(p) if ranks.count(c >> 2) == 1][0]
            seat.update(discard=_text([drop]), draw=_text([nxt]))
        rnd = {"dealer": {"down": _text(hole), "up": _text([u])}, "seats": [seat]}
        st = games.settle("california-draw", rnd)
        xs.append(st.net(1) / ANTE)
    _agree(xs, ev)


def test_clear_bet_always_buy_and_bet():
    up_rank = 7
    res = clearbet.enumerate_clear(progress=False, up_rank=up_rank)
    ev = clearbet.expected(res["strategies"][4], clearbet.TOTAL // 13)
    k = kernel.kernel()
    rng = random.Random(9)
    xs = []
    for _ in range(6000):
        u = up_rank * 4 + rng.randrange(4)
        deal = rng.sample([c for c in range(52) if c != u], 10)
        p, sixth, hole = deal[:5], deal[5], deal[6:]
        six = p + [sixth]
        best = max((k.rank5(*[c for c in six if c != x]), x) for x in six)
        drop = best[1]
        seat = {"seat": 1, "player": "A", "bet_type": "clear", "ante": ANTE, "cards": _text(p),
                "buy": {"card": _text([sixth]), "discard": _text([drop])}, "decision": "bet", "bet": 2 * ANTE}
        rnd = {"dealer": {"cards": _text([u] + hole)}, "seats": [seat]}
        st = games.settle("caribbean-clear-dark", rnd)
        xs.append(st.net(1) / ANTE)
    _agree(xs, ev)
