"""Caribbean Poker, European house rules (rulebook 002); also the common US pay table.

Round file (integer cents; seats in any order):

    {"dealer": {"cards": "5 cards"},
     "seats": [{"seat": 1, "ante": 500, "cards": "5 cards", "decision": "raise", "bet": 1000},
               {"seat": 2, "ante": 500, "cards": "...", "decision": "fold"}]}

Rulebook 002 names no payment order; lines are given seat by seat, seat 1 first.
"""
from ..poker import Five, cards_str, category, hands, rank5
from ..poker.cards import RANKS
from .base import (LOSE, PUSH, WIN, RoundError, Settlement, cards, cents, disjoint, load_paytable,
                   odds_text, pay, seats_of)

GAME = "caribbean-stud"
DEFAULT_PAYTABLE = "caribbean-stud-eu"
SEED = "rulebook 002"


def pay_key(value):
    """Pay-table key of a five-card value, with 'ace_king' for an ace-king high hand."""
    if value == 7462:
        return "royal_flush"
    cat = category(value)
    if cat == Five.HIGH_CARD:
        return "ace_king" if value >= ace_king() else "high_card"
    return cat.name.lower()


def ace_king():
    """The weakest ace-king hand (A-K-4-3-2): the dealer's qualifier."""
    return hands.lowest_value(5, Five.HIGH_CARD, 12, 11)


def qualifier_value(pt):
    q = pt["dealer_qualifier"]
    return hands.lowest_value(5, Five[q["category"].upper()], *(RANKS.index(r) for r in q["ranks"]))


def load(paytable, rnd, game):
    pt = load_paytable(paytable or rnd.get("paytable") or DEFAULT_PAYTABLE_FOR[game])
    if pt.get("game") != game:
        raise RoundError("pay table %s is for %s, not %s" % (pt["name"], pt.get("game"), game))
    return pt


DEFAULT_PAYTABLE_FOR = {"caribbean-stud": "caribbean-stud-eu",
                        "caribbean-clear-dark": "caribbean-clear-dark"}


def compare_and_pay(st, seat, ante, bet, pv, dv, pt, seed, tie_to_player=False, box=0):
    """Ante 1 to 1 and the bet at the pay table when the player wins against a qualified dealer."""
    pname = hands.name(pv)
    if pv > dv or (pv == dv and tie_to_player):
        key = pay_key(pv)
        odds = pt["bet_odds"][key]
        why = ("the hands are equal and %s settles ties for the player" % seed if pv == dv
               else "the player's hand beats the dealer's (%s)" % hands.name(dv))
        st.add(seat, "ante", ante, WIN, pay(ante, pt["ante_odds"]), "%s: %s, the ante pays 1 to 1" % (seed, why), pname, box=box)
        st.add(seat, "bet", bet, WIN, pay(bet, odds), "%s: %s pays %s on the bet" % (
            seed, key.replace("_", " ").replace("ace king", "ace-king"), odds_text(odds)), pname, box=box)
    elif pv == dv:
        rule = "%s section 3: all cards the same value, a tie is declared and all bets are called off" % seed
        st.add(seat, "ante", ante, PUSH, 0, rule, pname, box=box)
        st.add(seat, "bet", bet, PUSH, 0, rule, pname, box=box)
    else:
        rule = "%s: the dealer's hand (%s) is higher" % (seed, hands.name(dv))
        st.add(seat, "ante", ante, LOSE, ante, rule, pname, box=box)
        st.add(seat, "bet", bet, LOSE, bet, rule, pname, box=box)


def settle(rnd, paytable=None):
    pt = load(paytable, rnd, GAME)
    st = Settlement(GAME, pt["name"])
    dealer = rnd.get("dealer") or {}
    dcards = cards(dealer, "cards", "dealer", count=5)
    used = [("the dealer", dcards)]
    players = []
    for s in seats_of(rnd, pt=pt):
        n, what = s["seat"], "seat %d" % s["seat"]
        ante, bet = cents(s, "ante", what), cents(s, "bet", what)
        if ante <= 0:
            raise RoundError("%s: no ante; %s: players must place their first bet before the deal" % (what, SEED))
        hand = cards(s, "cards", what)
        if len(hand) != 5:
            raise RoundError("%s: %d cards; %s section 1: the dealer deals 5 cards to each hand" % (what, len(hand), SEED))
        used.append((what, hand))
        decision = s.get("decision")
        if decision not in ("raise", "fold"):
            raise RoundError("%s: decision must be \"raise\" or \"fold\" (%s section 1), got %r" % (what, SEED, decision))
        if decision == "raise" and bet != pt["raise_multiple"] * ante:
            raise RoundError("%s: raises %d cents on an ante of %d; %s section 1: those who raise must "
                             "place exactly double the amount of their first bet (%d)"
                             % (what, bet, ante, SEED, pt["raise_multiple"] * ante))
        if decision == "fold" and bet:
            raise RoundError("%s: folds with a bet on the table; a fold places no second bet" % what)
        players.append((n, ante, bet, hand, decision))
    disjoint(used)
    dv = rank5(dcards)
    qualifies = dv >= qualifier_value(pt)
    st.dealer = {"cards": cards_str(dcards), "hand": hands.name(dv), "qualifies": qualifies,
                 "qualifier": "%s rule %s" % (SEED, pt["dealer_qualifier"]["rule"])}
    for n, ante, bet, hand, decision in players:
        pv = rank5(hand)
        if decision == "fold":
            st.add(n, "ante", ante, LOSE, ante, "%s section 1: those who decide to fold forfeit their first bet" % SEED,
                   hands.name(pv))
        elif not qualifies:
            st.add(n, "ante", ante, WIN, pay(ante, pt["ante_odds"]),
                   "%s section 1: the dealer does not qualify (%s), players left in the game are paid even "
                   "money on their first bet" % (SEED, hands.name(dv)), hands.name(pv))
            st.add(n, "bet", bet, PUSH, 0, "%s section 1: the dealer does not qualify; the second bet is returned" % SEED,
                   hands.name(pv))
        else:
            compare_and_pay(st, n, ante, bet, pv, dv, pt, SEED)
    return st
