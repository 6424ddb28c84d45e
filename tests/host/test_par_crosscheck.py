"""The PAR kernel's own rank tables against the settlement engine's evaluator (the two were built
apart, so agreement here checks both), and the PAR sheets' pay tables: the settlement engine's
files, read as the published tables say."""
from math import comb

import numpy as np
import pytest

from tablegames.games import GAMES as SETTLE_GAMES
from tablegames.games import paytable_names
from tablegames.par import california, cards, cdraw, clearbet, colorado, kernel, stud, tcp
from tablegames.par import games as par_games
poker = pytest.importorskip("tablegames.poker")


def _colex(rows):
    rows = np.sort(rows.astype(np.int64), axis=1)
    binom = np.array([[comb(n, k) for k in range(8)] for n in range(53)], dtype=np.int64)
    return sum(binom[rows[:, i], i + 1] for i in range(rows.shape[1]))


@pytest.mark.parametrize("n", [5, 4])
def test_every_hand_ranks_the_same(n):
    k = kernel.kernel()
    mine = np.frombuffer(k.rank_table(n), dtype=np.uint16).astype(np.int64)
    hands = poker.combinations(n)
    theirs = poker.rank_all(n, kind=n).astype(np.int64)
    ours = mine[_colex(hands)]
    # both dense, weakest first: the same order means the same numbers up to an offset
    assert len(np.unique(ours)) == len(np.unique(theirs))
    assert np.array_equal(ours - ours.min(), theirs - theirs.min())


# ---------------------------------------------------------------- one pay-table source
# The PAR sheets read the settlement engine's pay tables (tablegames/paytables/*.json): every file
# of a game has its sheet, and the sheet pays what the file says. The figures below are the
# published tables (rulebook 000 rule 14.2, rulebook 001 Section 38 (m)/(n), rulebook 002 section 2, rulebook 003,
# the common US table), written out here so that a wrong reading of the files fails.

def test_every_pay_table_file_of_a_game_has_its_sheet():
    for game in ("caribbean-stud", "colorado-holdem", "california-draw", "three-card-poker"):
        assert list(par_games.GAMES[game]["paytables"]) == paytable_names(game), game
    assert cdraw.PAYTABLE in paytable_names("caribbean-draw")
    assert clearbet.PAYTABLE in paytable_names("caribbean-clear-dark")
    # one name per game: the PAR games that settle are the settlement engine's games
    assert set(par_games.GAMES) - {"three-card-poker", "progressive"} == set(SETTLE_GAMES)


def test_stud_sheets_pay_the_files():
    C = cards
    common = {C.ROYAL: 100, C.QUADS: 20, C.FULL_HOUSE: 7, C.FLUSH: 5, C.STRAIGHT: 4, C.TRIPS: 3,
              C.TWO_PAIR: 2, C.PAIR: 1, C.HIGH: 1}
    assert stud.PAYTABLES["caribbean-stud-us"]["pays"] == {**common, C.STRAIGHT_FLUSH: 50}
    assert stud.PAYTABLES["caribbean-stud-eu"]["pays"] == {**common, C.STRAIGHT_FLUSH: 25}
    assert clearbet.PAYS == stud.PAYTABLES["caribbean-stud-eu"]["pays"]   # rulebook 004 uses rulebook 002's
    assert cdraw.PAYS == {C.ROYAL: 100, C.STRAIGHT_FLUSH: 50, C.QUADS: 20, C.FULL_HOUSE: 7, C.FLUSH: 5,
                          C.STRAIGHT: 3, C.TRIPS: 2, C.TWO_PAIR: 1, C.PAIR: 1, C.HIGH: 1}


def test_colorado_sheets_pay_the_files():
    C = cards
    req, per = colorado.VERSIONS["colorado-holdem-required"], colorado.VERSIONS["colorado-holdem-permissible"]
    pair = colorado._pair
    # (m)(2): pairs of tens and up 1 to 1, sevens to nines push ((k)(3)), below lose
    assert [req["main"][pair(r)] for r in range(13)] == [-1] * 5 + [0] * 3 + [1] * 5
    assert [req["main"][c] for c in (C.ROYAL, C.STRAIGHT_FLUSH, C.QUADS, C.FULL_HOUSE, C.FLUSH, C.STRAIGHT,
                                     C.TRIPS, C.TWO_PAIR)] == [500, 100, 40, 11, 8, 5, 3, 2]
    # (n)(2): pairs of jacks and up 1 to 1, nines and tens push ((l)(6)), below lose
    assert [per["main"][pair(r)] for r in range(13)] == [-1] * 7 + [0] * 2 + [1] * 4
    assert [per["main"][c] for c in (C.ROYAL, C.STRAIGHT_FLUSH, C.QUADS, C.FULL_HOUSE, C.FLUSH, C.STRAIGHT,
                                     C.TRIPS, C.TWO_PAIR)] == [500, 100, 25, 10, 8, 5, 3, 2]
    # the bonus: no pair pays, jacks and up push
    for v in (req, per):
        assert [v["bonus"][pair(r)] for r in range(13)] == [-1] * 9 + [0] * 4
        assert v["instant"] == v["bonus_instant"] == {1: 5, 2: 5}
    assert [per["bonus"][c] for c in (C.ROYAL, C.STRAIGHT_FLUSH, C.QUADS, C.FULL_HOUSE, C.FLUSH,
                                      C.STRAIGHT, C.TRIPS, C.TWO_PAIR)] == [10000, 1000, 100, 50, 25, 15, 3, 1]
    assert (req["fold_allowed"], req["bet_required"], per["fold_allowed"], per["bet_required"]) == \
        (True, True, False, False)


def test_california_sheets_pay_the_files():
    cd = california
    for name, sf in (("california-draw-75", 75), ("california-draw-60", 60)):
        t = cd.PAYTABLES[name]
        assert t["ante_bonus"] == {cd.SF: 25, cd.QUADS: 50}
        assert t["action"] == {cd.QUADS: 300, cd.SF: sf, cd.TRIPS: 10, cd.STRAIGHT: 6, cd.FLUSH: 5, cd.TWO_PAIR: 4}
        assert t["up_card"] == {0: 10, 1: 3, 2: 2}


def test_three_card_poker_sheets_pay_the_files():
    for name, flush in (("three-card-poker-1-4-6-30-40", 4), ("three-card-poker-1-3-6-30-40", 3)):
        t = tcp.PAYTABLES[name]
        assert t["ante_bonus"] == {tcp.T_STRAIGHT: 1, tcp.T_TRIPS: 4, tcp.T_SF: 5}
        assert t["pair_plus"] == {tcp.T_PAIR: 1, tcp.T_FLUSH: flush, tcp.T_STRAIGHT: 6, tcp.T_TRIPS: 30, tcp.T_SF: 40}


def test_a_table_with_odds_the_kernel_cannot_take_is_refused():
    from tablegames.errors import GameError
    from tablegames.par import paytables

    with pytest.raises(GameError, match="pays 3 to 2: a PAR sheet needs whole x-to-1 odds"):
        paytables.whole([3, 2], "flush")


# ---------------------------------------------------------------- one card encoding

def test_a_card_number_is_the_same_card_in_par_and_in_the_evaluator():
    for c in range(52):
        text = poker.card_str(c)
        assert cards.card(text) == c and cards.name(c) == text
    assert cards.SUITS == poker.SUITS == "cdhs"
    # and the kernel reads the numbers as the evaluator does: a flush is a flush in both
    k = kernel.kernel()
    for hand in ("Ah Kh Qh Jh 9h", "Ac Kd Qh Js 9c", "2s 3s 4s 5s 6s"):
        ours = k.rank5(*cards.cards(hand))
        assert cards.CATEGORIES[ours[1]].replace("royal flush", "straight flush") == \
            poker.category_name(poker.evaluate(hand).category).replace("royal flush", "straight flush"), hand


# ---------------------------------------------------------------- the package's own errors

def test_the_game_math_imports_nothing_of_operations():
    # tablegames stands alone (docs/ARCHITECTURE.md): its errors are GameError and subclasses,
    # which the CLI prints; it never imports tablectl, tabledev or the board's table package
    import ast
    import os

    import tablegames

    root = os.path.dirname(tablegames.__file__)
    found = []
    for folder, _, files in os.walk(root):
        for fn in files:
            if not fn.endswith(".py"):
                continue
            path = os.path.join(folder, fn)
            with open(path) as f:
                tree = ast.parse(f.read(), path)
            for node in ast.walk(tree):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                    [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
                found += ["%s: %s" % (os.path.relpath(path, root), n) for n in names
                          if n.split(".")[0] in ("tablectl", "tabledev", "table")]
    assert found == []


def test_card_and_round_errors_are_game_errors():
    from tablegames.errors import CoreMissing, GameError
    from tablegames.games import RoundError

    assert issubclass(poker.CardError, GameError) and issubclass(RoundError, GameError)
    assert issubclass(CoreMissing, GameError) and issubclass(GameError, ValueError)
    with pytest.raises(GameError):
        poker.hands.category(0)
