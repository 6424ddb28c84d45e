"""Caribbean poker with clear and dark bets (rulebook 004).

Rules as modelled: RULES below.

Complete enumeration: five player cards x up card x four hole cards x the next card of the
stub (the card a buyer receives) = 2,598,960 x 47 x 163,185 x 42 = 837,195,681,722,400 deals.
Given the six cards after a purchase, keeping the best five is optimal (the chance to win
and the pay only grow with the hand's rank, the dealer's cards being the same), so the
kernel evaluates one five-card hand per six-card set.
"""
from fractions import Fraction

from . import cards as C
from . import kernel as kmod
from . import paytables as ptab
from . import stud
from .sheet import ParSheet, Row

TOTAL = 2598960 * 47 * 163185 * 42
GAME = "caribbean-clear-dark"
PAYTABLE = "caribbean-clear-dark"          # tablegames/paytables/caribbean-clear-dark.json
BUY_THEN_PASS = PAYTABLE + "-buy-then-pass"  # the same table, the purchase's other reading
PAYS = ptab.pays(ptab.load(PAYTABLE, GAME)["bet_odds"], ptab.FIVE, PAYTABLE)
STRATEGIES = ["optimal (may buy a sixth card)", "bet a pair or better, never buy",
              "dark bet: always bet, unseen", "optimal without buying", "always buy and bet"]

RULES = [
    "ante 1, bet 2 (the 2-to-1 bet-to-ante rule); five cards each, one dealer card face up; the dealer "
    "has a game with ace-king or better; no game pays the ante 1 to 1 and returns the bet; a tie is "
    "settled for the player (paid as a win)",
    "the bet's pay table is not printed in rulebook 004 ('1 to 1 up to 1 to 100 depending on the "
    "combination'): the sheet uses the settlement engine's, paytables/caribbean-clear-dark.json: seed "
    "002's European table (pair and ace-king 1, two pair 2, three of a kind 3, straight 4, flush 5, full "
    "house 7, four of a kind 20, straight flush 25, royal 100)",
    "clear bet: the player sees his five cards and the up card and passes or bets; a player who bets "
    "may buy a sixth card for the price of the ante (a fee, not a wager) and keep the best five (the "
    "settlement engine's reading, games/clear_dark.py: 'the purchase is for players who continue'). "
    "The sheet caribbean-clear-dark-buy-then-pass prices the other reading: buy first, then bet or pass. "
    "Exchanging a card at the same price (discard first, draw after) is dominated by buying (the same "
    "card arrives, and the choice comes after seeing it): it never enters the optimal strategy and "
    "does not change the return",
    "dark bet: ante and bet placed blind; it cannot pass and cannot buy",
]

_cache = {}


def enumerate_clear(progress=None, up_rank=None, pass_after_buy=False):
    """The kernel's counts for the five STRATEGIES; up_rank (0..12) restricts the dealer's up
    card to that rank (tests); pass_after_buy: a buyer may still pass."""
    key = (up_rank, bool(pass_after_buy))
    if key not in _cache:
        k = kmod.kernel()
        pays = tuple(PAYS[c] for c in range(10))
        args = [pays, stud.qualify_rank(), bool(pass_after_buy)] + ([] if up_rank is None else [up_rank])
        _cache[key] = kmod.run("Clear bets (rulebook 004)", k.clearbet, *args, progress=progress)
    return _cache[key]


def rows_of(s):
    rows = [Row("pass", s["fold"], Fraction(-1), Fraction(1)),
            Row("bet, dealer has no game", s["noq"], Fraction(1), Fraction(3))]
    for cat in range(9, -1, -1):
        if s["win"][cat]:
            rows.append(Row("bet, player wins or ties with %s" % C.CATEGORIES[cat], s["win"][cat],
                            Fraction(1 + 2 * PAYS[cat]), Fraction(3)))
    rows.append(Row("bet, dealer wins", s["lose"], Fraction(-3), Fraction(3)))
    rows.append(Row("buy a sixth card, pass", s["buy_fold"], Fraction(-2), Fraction(2)))
    rows.append(Row("buy, bet, dealer has no game", s["buy_noq"], Fraction(0), Fraction(4)))
    for cat in range(9, -1, -1):
        if s["buy_win"][cat]:
            rows.append(Row("buy, bet, player wins or ties with %s" % C.CATEGORIES[cat], s["buy_win"][cat],
                            Fraction(2 * PAYS[cat]), Fraction(4)))
    rows.append(Row("buy, bet, dealer wins", s["buy_lose"], Fraction(-4), Fraction(4)))
    return [r for r in rows if r.combinations]


def expected(s, total=TOTAL):
    return sum(Fraction(r.combinations) * r.pay for r in rows_of(s)) / total


def strategy_lines(s):
    lines = ["decision per (five cards, up card): pass, bet, or bet and buy a sixth card (keeping the best "
             "five), whichever has the largest exact expected value"]
    for cat in range(10):
        f, r, b = s["fold_situations"][cat], s["raise_situations"][cat], s["buy_situations"][cat]
        n = f + r + b
        if n:
            lines.append("%-16s pass %5.1f %%, bet %5.1f %%, buy %5.1f %% (of %s situations)" % (
                C.CATEGORIES[cat], 100.0 * f / n, 100.0 * r / n, 100.0 * b / n, "{:,}".format(n)))
    return lines


def sheets(progress=None, pass_after_buy=False):
    res = enumerate_clear(progress, pass_after_buy=pass_after_buy)["strategies"]
    opt, simple, dark, nobuy = res[0], res[1], res[2], res[3]
    notes = RULES
    clear = ParSheet(
        game=GAME, paytable=BUY_THEN_PASS if pass_after_buy else PAYTABLE,
        title="Caribbean poker, clear bet (rulebook 004), sixth card for sale" + (
            ", bet or pass after buying" if pass_after_buy else ", bought after betting"),
        total=TOTAL, rows=rows_of(opt), strategy=strategy_lines(opt) + [
            "without the sixth card the optimal clear bet has house edge %.4f %%" % (-100 * float(expected(nobuy)))],
        simple={"description": STRATEGIES[1], "expected": expected(simple)},
        notes=notes[:3],
    )
    dark_sheet = ParSheet(
        game=GAME, paytable=PAYTABLE + " dark bet", title="Caribbean poker, dark bet (rulebook 004)",
        total=TOTAL, rows=rows_of(dark), strategy=["no decisions: a dark bet always plays, unseen"],
        notes=[notes[0], notes[1], notes[3]],
    )
    return [clear.check(), dark_sheet.check()]
