"""Caribbean poker with 'clear' and 'dark' bets (rulebook 004).

Every betting box is a seat entry (rulebook 004: a player may hold several boxes; "Each player can
have only one bet 'clear'", the dark ones are limited only by the free boxes):

    {"dealer": {"cards": "5 cards"},
     "seats": [{"seat": 1, "player": "A", "bet_type": "clear", "ante": 100, "cards": "5 cards",
                "decision": "bet", "bet": 200,
                "buy": {"card": "Qh", "discard": "2c"}},          # sixth card, at the ante's price
               {"seat": 2, "player": "A", "bet_type": "dark", "ante": 100, "bet": 200,
                "cards": "5 cards"},
               {"seat": 3, "player": "B", "bet_type": "clear", "ante": 100, "cards": "...",
                "decision": "bet", "bet": 200,
                "exchange": {"discard": "4d", "draw": "Jc"}}]}    # one card exchanged, same price

A clear box decides "bet" or "pass". A dark box has its ante and bet placed before the deal and
no decision. Purchases are settled first (the house keeps the price), then the boxes right to left
("The order of priority of cards' exchange by the players is counterclockwise (from right to
left)"; the same order is used for settling), highest seat number first.
"""
from ..poker import cards_str, hands, rank5
from .base import (LOSE, PUSH, WIN, RoundError, Settlement, cards, cents, disjoint, pay, seats_of)
from .caribbean_stud import compare_and_pay, load, qualifier_value

GAME = "caribbean-clear-dark"
DEFAULT_PAYTABLE = "caribbean-clear-dark"
SEED = "rulebook 004"


def _price(pt, key, ante):
    if pt.get(key) != "ante":
        raise RoundError("pay table %s: %s must be \"ante\" (rulebook 004: the price of the entrance bet)" % (pt["name"], key))
    return ante


def settle(rnd, paytable=None):
    pt = load(paytable, rnd, GAME)
    st = Settlement(GAME, pt["name"])
    dealer = rnd.get("dealer") or {}
    dcards = cards(dealer, "cards", "dealer", count=5)
    used = [("the dealer", dcards)]
    boxes = []
    clear_of = {}
    for s in seats_of(rnd, pt=pt):
        n, what = s["seat"], "box %d" % s["seat"]
        player = s.get("player", "seat %d" % n)
        kind = s.get("bet_type")
        if kind not in ("clear", "dark"):
            raise RoundError("%s: bet_type must be \"clear\" or \"dark\" (rulebook 004), got %r" % (what, kind))
        ante, bet = cents(s, "ante", what), cents(s, "bet", what)
        if ante <= 0:
            raise RoundError("%s: no ante; %s: every box starts with the bet 'ante'" % (what, SEED))
        hand = cards(s, "cards", what)
        if len(hand) != 5:
            raise RoundError("%s: %d cards; %s: the handing out is 5 cards on each bet" % (what, len(hand), SEED))
        used.append((what, hand))
        if kind == "clear":
            if player in clear_of:
                raise RoundError("%s: player %s already has a clear bet in box %d; %s: each player can have "
                                 "only one bet 'clear'" % (what, player, clear_of[player], SEED))
            clear_of[player] = n
            decision = s.get("decision")
            if decision not in ("bet", "pass"):
                raise RoundError("%s: a clear bet decides \"bet\" or \"pass\" (%s), got %r" % (what, SEED, decision))
        else:
            decision = "bet"
            if s.get("decision") == "pass":
                raise RoundError("%s: a pass on a dark bet; %s: the player doesn't look through the cards at dark "
                                 "bets, that is why it is not allowed to 'pass' at dark bets" % (what, SEED))
            if "buy" in s or "exchange" in s:
                raise RoundError("%s: a purchase on a dark bet; %s: the cards at dark bets are turned down and "
                                 "looked through only by the dealer" % (what, SEED))
        if decision == "bet" and bet != pt["raise_multiple"] * ante:
            raise RoundError("%s: bet %d cents on an ante of %d; %s: the bet 'bet' always refers to the bet "
                             "'ante' in cash equivalent as 2 to 1. Any other proportions are inadmissible"
                             % (what, bet, ante, SEED))
        if decision == "pass" and bet:
            raise RoundError("%s: passes with a bet of %d cents; a pass places no bet" % (what, bet))
        final, fees = hand, []
        if "buy" in s and "exchange" in s:
            raise RoundError("%s: both a sixth-card purchase and an exchange; one per box" % what)
        if ("buy" in s or "exchange" in s) and decision != "bet":
            raise RoundError("%s: buys a card but passes; %s: the purchase is for players who continue" % (what, SEED))
        if "buy" in s:
            b = s["buy"] if isinstance(s["buy"], dict) else {}
            sixth = cards(b, "card", what + " buy", count=1)
            disc = cards(b, "discard", what + " buy", count=1)
            six = hand + sixth
            if disc[0] not in six:
                raise RoundError("%s: discards %s, which is not among its six cards" % (what, cards_str(disc)))
            final = tuple(c for c in six if c != disc[0])
            used.append((what + " sixth card", sixth))
            fees.append(("purchase", _price(pt, "purchase_price", ante),
                         "%s: the player buys the sixth card from the dealer's pack, having paid extra the price "
                         "of the entrance bet, and discards one (%s)" % (SEED, cards_str(disc))))
        if "exchange" in s:
            e = s["exchange"] if isinstance(s["exchange"], dict) else {}
            disc = cards(e, "discard", what + " exchange", count=1)
            new = cards(e, "draw", what + " exchange", count=1)
            if disc[0] not in hand:
                raise RoundError("%s: exchanges %s, which is not in the hand" % (what, cards_str(disc)))
            final = tuple(c for c in hand if c != disc[0]) + new
            used.append((what + " exchanged card", new))
            fees.append(("exchange", _price(pt, "exchange_price", ante),
                         "%s: the player exchanges a card (%s), at the price of the entrance bet" % (SEED, cards_str(disc))))
        boxes.append(dict(seat=n, ante=ante, bet=bet, final=final, decision=decision, fees=fees, kind=kind))
    disjoint(used)

    for b in boxes:
        for wager, price, rule in b["fees"]:
            st.add(b["seat"], wager, price, LOSE, price, rule)
    dv = rank5(dcards)
    qualifies = dv >= qualifier_value(pt)
    st.dealer = {"cards": cards_str(dcards), "hand": hands.name(dv), "qualifies": qualifies,
                 "qualifier": "%s: %s" % (SEED, pt["dealer_qualifier"]["rule"])}
    for b in sorted(boxes, key=lambda b: -b["seat"]):
        n, ante, bet = b["seat"], b["ante"], b["bet"]
        pv = rank5(b["final"])
        if b["decision"] == "pass":
            st.add(n, "ante", ante, LOSE, ante, "%s: 'pass' on a clear bet, the bet 'ante' loses" % SEED, hands.name(pv))
        elif not qualifies:
            st.add(n, "ante", ante, WIN, pay(ante, pt["ante_odds"]),
                   "%s: the dealer has no game (%s), the pay off is 1 to 1 of the bets 'ante'" % (SEED, hands.name(dv)))
            st.add(n, "bet", bet, PUSH, 0, "%s: the dealer has no game; the bet 'bet' is returned" % SEED)
        else:
            compare_and_pay(st, n, ante, bet, pv, dv, pt, SEED, tie_to_player=True)
    for ln in st.lines:
        ln.rule = ln.rule + (" [%s box]" % next(b["kind"] for b in boxes if b["seat"] == ln.seat))
    return st
