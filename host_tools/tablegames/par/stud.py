"""Caribbean Stud (five cards each, one dealer card face up; fold or raise twice the ante).

Complete enumeration: every player hand (2,598,960) x every dealer up card (47) x every set of
four dealer hole cards (163,185) = 19,933,230,517,200 deals. The player decides with his five
cards and the up card in view; the optimal decision is the one with the larger exact expected
value (a tie between the two goes to folding). The kernel does this in seconds: see _kernel.c.
"""
from fractions import Fraction

from . import cards as C
from . import kernel as kmod
from . import paytables as ptab
from .sheet import ParSheet, Row

TOTAL = 2598960 * 47 * 163185

GAME = "caribbean-stud"
DEFAULT = "caribbean-stud-us"


def load_table(name):
    """{"title", "pays": {category: x to 1}, "tie", "source"} of a caribbean-stud pay table
    (tablegames/paytables/NAME.json, the one the settlement engine pays by)."""
    pt = ptab.load(name, GAME)
    # rulebook 002 section 3: equal hands call the bets off (a push); the player's high card that wins
    # against a qualified dealer is ace-king, so it pays the "ace_king" line
    return {"title": pt["title"], "pays": ptab.pays(pt["bet_odds"], ptab.FIVE, name), "tie": "push",
            "source": pt["source"]}


PAYTABLES = {name: load_table(name) for name in ptab.names(GAME)}


def qualify_rank():
    """Dense rank of the weakest qualifying dealer hand: ace-king (A K 4 3 2 offsuit)."""
    return kmod.kernel().rank5(*C.cards("As Kh 4s 3s 2h"))[0]


def enumerate_stud(pays, tie_wins, simple_min_cat=C.PAIR, progress=None, label="Caribbean Stud"):
    k = kmod.kernel()
    table = tuple(pays[c] for c in range(10))
    return kmod.run(label, k.stud, table, 1 if tie_wins else 0, qualify_rank(), simple_min_cat, progress=progress)


def rows_from(strategy, pays, tie_wins):
    s = strategy
    rows = [Row("fold", s["fold"], Fraction(-1), Fraction(1)),
            Row("raise, dealer does not qualify", s["noq"], Fraction(1), Fraction(3))]
    for cat in range(9, -1, -1):
        if s["win"][cat]:
            rows.append(Row("raise, player wins with %s" % C.CATEGORIES[cat], s["win"][cat],
                            Fraction(1 + 2 * pays[cat]), Fraction(3)))
    ties = sum(s["tie"])
    if tie_wins:
        for cat in range(9, -1, -1):
            if s["tie"][cat]:
                rows.append(Row("raise, tie (settled for the player) with %s" % C.CATEGORIES[cat], s["tie"][cat],
                                Fraction(1 + 2 * pays[cat]), Fraction(3)))
    else:
        rows.append(Row("raise, tie (push)", ties, Fraction(0), Fraction(3)))
    rows.append(Row("raise, dealer wins", s["lose"], Fraction(-3), Fraction(3)))
    return rows


def expected(rows, total):
    return sum(Fraction(r.combinations) * r.pay for r in rows) / total


def strategy_lines(result):
    opt = result["strategies"][0]
    lines = ["decision per (five cards, dealer up card): raise when the exact expected value of raising "
             "beats folding's -1 ante"]
    for cat in range(10):
        r, f = opt["raise_situations"][cat], opt["fold_situations"][cat]
        if r + f:
            lines.append("%-16s raise in %5.1f %% of (hand, up card) situations (%s of %s)" % (
                C.CATEGORIES[cat], 100.0 * r / (r + f), "{:,}".format(r), "{:,}".format(r + f)))
    lines.append("situations where raising and folding are worth exactly the same: %d" % result["indifferent"])
    table = high_card_table(result)
    always = [t for t in table if t[2] == t[3]]
    some = [t for t in table if t[2] < t[3]]
    below_ak = [t for t in table if not ("A" in t[0] and "K" in t[0])]
    lines.append("no-pair hands raised: %d (ranks, up card) combinations always, %d depending on the suits; "
                 "%s below ace-king" % (len(always), len(some), "none" if not below_ak else "%d" % len(below_ak)))
    if table:
        weakest = min(table, key=lambda t: _pattern_key(t[0]))
        lines.append("weakest no-pair hand ever raised: %s (dealer shows %s)" % (weakest[0], weakest[1]))
    lines.append("every (ranks, up card) raise of a no-pair hand, with the share of suit layouts raised, is in "
                 "the JSON output, key extra.high_card_raises")
    return lines


def _pattern_key(text):
    return [C.RANKS.index(r if r != "10" else "T") for r in text.split("-")]


def high_card_table(result):
    """[(ranks 'A-K-Q-J-8', up card rank, situations raised, situations)] for no-pair hands."""
    from itertools import combinations

    pats = {}
    for combo in combinations(range(13), 5):
        pats[sum(_comb(r, i + 1) for i, r in enumerate(combo))] = combo
    out = []
    for pat, ur, raised, total in result.get("high_card_raises", []):
        ranks = "-".join(C.rank_name(r) for r in sorted(pats[pat], reverse=True))
        out.append((ranks, C.rank_name(ur), raised, total))
    return out


def _comb(n, k):
    from math import comb

    return comb(n, k)


def dealer_qualifies():
    """The share of deals in which the dealer qualifies (ace-king or better), exact: over all
    deals the dealer's five cards are any five of the deck, so it is the share of five-card hands
    at or above A-K-4-3-2."""
    from math import comb

    from ..poker import histogram, parse_cards, rank5

    return Fraction(int(histogram(5)[rank5(parse_cards("As Kh 4s 3s 2h")):].sum()), comb(52, 5))


def dealer_figures(optimal):
    raises = TOTAL - optimal["fold"]
    return [("dealer qualifies", dealer_qualifies(), "of all deals: ace-king or better"),
            ("... against a raise", 1 - Fraction(optimal["noq"], raises),
             "of the deals the optimal strategy raises")]


def sheet(paytable=DEFAULT, progress=None):
    pt = PAYTABLES.get(paytable) or load_table(paytable)
    tie_wins = pt["tie"] == "player"
    result = enumerate_stud(pt["pays"], tie_wins, progress=progress, label=pt["title"])
    rows = rows_from(result["strategies"][0], pt["pays"], tie_wins)
    simple_rows = rows_from(result["strategies"][1], pt["pays"], tie_wins)
    s = ParSheet(
        game=GAME, paytable=paytable, title=pt["title"], total=TOTAL, rows=rows,
        strategy=strategy_lines(result),
        simple={"description": "raise with a pair or better, fold the rest", "expected": expected(simple_rows, TOTAL)},
        notes=["raise = twice the ante; dealer qualifies with ace-king or better; dealer not qualifying pays the "
               "ante 1 to 1 and returns the raise; " + pt["source"]],
        extra={"high_card_raises": ["%s, dealer shows %s: raise in %d of %d situations" % t
                                    for t in high_card_table(result)]},
        figures=dealer_figures(result["strategies"][0]),
    )
    return s.check()
