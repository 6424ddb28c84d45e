"""California Draw Poker (rulebook 003): four-card hands, one-card draw, the dealer's up card.

The player holds four cards and sees the dealer's up card; he folds (loses the ante) or
calls (= ante) and then stands or discards one card and draws one. The house hand is the up
card plus the best three of the dealer's four hole cards. The higher four-card hand wins the
ante and the call 1 to 1, a tie pushes; the ante bonus pays the ante 25 to 1 for a straight
flush and 50 to 1 for four of a kind whatever the dealer holds.

Complete enumeration: four player cards (270,725) x up card (48) x four hole cards (178,365)
x the next card of the stub (43) = 99,666,152,586,000 deals (a player who stands leaves the
next card undealt; it is still counted so that every decision is weighed on one total).

Four-card hands rank, strongest first: four of a kind, straight flush, three of a kind,
straight, flush, two pair, pair, high card (the order of rulebook 003's Action Bet table; a
straight is rarer than a flush in four cards). A-2-3-4 is the lowest straight.

The Action Bet is lost when the player folds, otherwise paid on his final four cards; its
sheet uses the main game's optimal decisions. The Up Card wager compares the two up cards.
"""
from fractions import Fraction

from ..errors import GameError
from . import cards as C
from . import kernel as kmod
from . import paytables as ptab
from .sheet import ParSheet, Row

CATS4 = ["high card", "pair", "two pair", "flush", "straight", "three of a kind", "straight flush",
         "four of a kind"]
HIGH, PAIR, TWO_PAIR, FLUSH, STRAIGHT, TRIPS, SF, QUADS = range(8)
TOTAL = 270725 * 48 * 178365 * 43
GAME = "california-draw"
DEFAULT = "california-draw-75"
# pay-table keys -> four-card categories
FOUR = {"four_of_a_kind": QUADS, "straight_flush": SF, "three_of_a_kind": TRIPS, "straight": STRAIGHT,
        "flush": FLUSH, "two_pair": TWO_PAIR, "pair": PAIR, "high_card": HIGH}
UP_CARD = {"both_aces": 0, "same_rank": 1, "same_suit": 2}


def load_table(name):
    """A California Draw pay table (tablegames/paytables/NAME.json, the settlement engine's):
    the ante bonus and Action Bet pays by four-card category, the Up Card wager's pays."""
    pt = ptab.load(name, GAME)
    for key in ("ante_odds", "call_odds"):
        if ptab.whole(pt[key], "%s %s" % (name, key)) != 1 or pt.get("call_multiple", 1) != 1:
            raise GameError("%s: the PAR sheet prices a call equal to the ante, ante and call paid 1 to 1" % name)
    return {"title": pt["title"], "ante_bonus": ptab.pays(pt["ante_bonus_odds"], FOUR, name + " ante bonus"),
            "action": ptab.pays(pt["action_odds"], FOUR, name + " action"),
            "up_card": ptab.pays(pt["upcard_odds"], UP_CARD, name + " up card")}


PAYTABLES = ptab.Tables(GAME, {name: load_table(name) for name in ptab.names(GAME)})
# the ante bonus of the default table (every rulebook 003 table has the same one)
ANTE_BONUS = PAYTABLES[DEFAULT]["ante_bonus"]

_cache = {}


def enumerate_main(progress=None, probe=None, up_rank=None, ante_bonus=None):
    """The kernel's counts; probe=(four cards, up card) also returns that situation's expected
    values (stand, then discarding each of the four cards in ascending order), up_rank (0..12)
    restricts the dealer up card to that rank (tests)."""
    bonus = tuple((ANTE_BONUS if ante_bonus is None else ante_bonus).get(c, 0) for c in range(8))
    key = (probe, up_rank, bonus)
    if key not in _cache:
        k = kmod.kernel()
        args = [bonus, HIGH, TWO_PAIR]
        order = None
        if probe is not None or up_rank is not None:
            from math import comb

            hand, u = probe if probe is not None else ((0, 1, 2, 3), -1)
            hand = sorted(hand)
            if u >= 0:
                # The kernel sweeps up cards of suit 0 (the other suits are the same by symmetry):
                # it is asked about the same situation with the up card's suit and suit 0 swapped.
                swapped = C.relabel_suits(hand, u & 3)
                u, hand = u & ~3, sorted(swapped)
                order = [hand.index(c) for c in swapped]   # given card i -> its place there
            args += [sum(comb(x, i + 1) for i, x in enumerate(hand)), u, -1 if up_rank is None else up_rank]
        r = kmod.run("California Draw Poker", k.california, *args, progress=progress)
        if order is not None:
            r["probe"] = (r["probe"][0],) + tuple(r["probe"][1 + i] for i in order)
        _cache[key] = r
    return _cache[key]


def _rows(s, ante_bonus=None):
    ante_bonus = ANTE_BONUS if ante_bonus is None else ante_bonus
    rows = [Row("fold", s["fold"], Fraction(-1), Fraction(1))]
    for cat in range(7, -1, -1):
        b = ante_bonus.get(cat, 0)
        for res, key, pay in (("player wins", "win", 2), ("tie (push)", "tie", 0), ("dealer wins", "lose", -2)):
            if s[key][cat]:
                rows.append(Row("call, %s, %s" % (CATS4[cat], res), s[key][cat], Fraction(pay + b), Fraction(2)))
    return rows


def _expected(rows):
    return sum(Fraction(r.combinations) * r.pay for r in rows) / TOTAL


def main_sheet(progress=None, paytable=DEFAULT):
    bonus = PAYTABLES[paytable]["ante_bonus"]
    r = enumerate_main(progress, ante_bonus=bonus)
    opt, simple = r["strategies"]
    strategy = ["decision per (four cards, dealer up card): fold, stand or discard the card whose draw "
                "has the largest exact expected value"]
    for cat in range(8):
        f, st, d = opt["fold_situations"][cat], opt["stand_situations"][cat], opt["draw_situations"][cat]
        n = f + st + d
        if n:
            strategy.append("%-16s fold %5.1f %%, call and stand %5.1f %%, call and draw one %5.1f %% "
                            "(of %s situations)" % (CATS4[cat], 100.0 * f / n, 100.0 * st / n, 100.0 * d / n,
                                                    "{:,}".format(n)))
    s = ParSheet(
        game=GAME, paytable=paytable + " main game", title="California Draw Poker, ante and call with ante bonus",
        total=TOTAL, rows=_rows(opt, bonus), strategy=strategy,
        simple={"description": "always call; stand on two pair or better; else discard the lowest card "
                               "that is not paired",
                "expected": _expected(_rows(simple, bonus))},
        notes=["call = ante; ante bonus %s on the final hand; four-card ranking: four of a kind, straight "
               "flush, three of a kind, straight, flush, two pair, pair"
               % ", ".join("%d to 1 (%s)" % (x, CATS4[c]) for c, x in sorted(bonus.items(), key=lambda i: i[1]))],
    )
    return s.check()


def action_sheet(paytable=DEFAULT, progress=None):
    pt = PAYTABLES[paytable]
    pays = pt["action"]
    opt = enumerate_main(progress, ante_bonus=pt["ante_bonus"])["strategies"][0]
    rows = [Row("player folds (Action Bet lost)", opt["fold"], Fraction(-1))]
    for cat in range(7, -1, -1):
        n = opt["win"][cat] + opt["tie"][cat] + opt["lose"][cat]
        if n:
            rows.append(Row("final hand " + CATS4[cat], n, Fraction(pays.get(cat, -1))))
    s = ParSheet(game=GAME, paytable=paytable + " action bet",
                 title="California Draw Poker, Action Bet (straight flush %d to 1)" % pays[SF], total=TOTAL,
                 rows=rows, unit="Action Bet",
                 strategy=["the main game's optimal decisions (fold, stand, draw) decide the final hand"],
                 notes=["rulebook 003 Action Bet table; forfeited when the player folds"])
    return s.check()


def up_card_sheet(paytable=DEFAULT):
    pays = PAYTABLES[paytable]["up_card"]
    # ordered pairs (player up card, dealer up card) of distinct cards: 52 x 51
    both_aces = 4 * 3
    same_rank = 12 * 4 * 3
    same_suit = 52 * 12
    rest = 52 * 51 - both_aces - same_rank - same_suit
    rows = [Row("both up cards aces", both_aces, Fraction(pays[UP_CARD["both_aces"]])),
            Row("same rank (not aces)", same_rank, Fraction(pays[UP_CARD["same_rank"]])),
            Row("same suit", same_suit, Fraction(pays[UP_CARD["same_suit"]])),
            Row("anything else", rest, Fraction(-1))]
    s = ParSheet(game=GAME, paytable=paytable + " up card", title="California Draw Poker, Up Card wager",
                 total=52 * 51, rows=rows, unit="Up Card wager",
                 strategy=["no decisions: the two up cards settle the wager"],
                 notes=["rulebook 003: %d to 1 both aces, %d to 1 same number, %d to 1 same suit" % (
                     pays[UP_CARD["both_aces"]], pays[UP_CARD["same_rank"]], pays[UP_CARD["same_suit"]])])
    return s.check()
