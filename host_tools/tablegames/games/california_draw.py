"""California Draw Poker (rulebook 003): four-card hands against a house hand set from the up card.

Round file (integer cents):

    {"dealer": {"down": "4 cards", "up": "1 card"},
     "seats": [{"seat": 1, "ante": 500, "action": 100, "upcard": 100,
                "down": "3 cards", "up": "1 card",
                "decision": "call", "call": 500, "discard": "1 card", "draw": "1 card"}]}

The player's hand is the three down cards and the up card; a player who calls may discard one of
the four and draw one. The house hand is the dealer's up card plus the best three of the four down
cards. Rulebook 003 names no payment order; lines are given seat by seat.
"""
from ..poker import Four, cards_str, category, hands, rank4
from .base import (LOSE, PUSH, WIN, RoundError, Settlement, cards, cents, discard_draw, disjoint,
                   load_paytable, odds_text, pay, seats_of)

GAME = "california-draw"
DEFAULT_PAYTABLE = "california-draw-75"
SEED = "rulebook 003"


def house_hand(down4, up):
    """The house hand: the up card and the best three of the four down cards -> (value, cards)."""
    best = None
    for skip in range(4):
        three = tuple(c for i, c in enumerate(down4) if i != skip)
        v = rank4((up,) + three)
        if best is None or v > best[0]:
            best = (v, (up,) + three)
    return best


def upcard_key(player_up, dealer_up):
    if player_up >> 2 == 12 and dealer_up >> 2 == 12:
        return "both_aces"
    if player_up >> 2 == dealer_up >> 2:
        return "same_rank"
    if player_up & 3 == dealer_up & 3:
        return "same_suit"
    return None


_UPCARD_TEXT = {"both_aces": "pays 10 to 1 when the dealer's up card and player's up card are both an ace",
                "same_rank": "pays 3 to 1 when the player's up card and dealer's up card are the same number",
                "same_suit": "pays 2 to 1 when both up cards are the same suit"}


def settle(rnd, paytable=None):
    pt = load_paytable(paytable or rnd.get("paytable") or DEFAULT_PAYTABLE)
    if pt.get("game") != GAME:
        raise RoundError("pay table %s is for %s, not %s" % (pt["name"], pt.get("game"), GAME))
    st = Settlement(GAME, pt["name"])
    dealer = rnd.get("dealer") or {}
    ddown = cards(dealer, "down", "dealer", count=4)
    dup = cards(dealer, "up", "dealer", count=1)[0]
    used = [("the dealer", ddown + (dup,))]
    players = []
    for s in seats_of(rnd):
        n, what = s["seat"], "seat %d" % s["seat"]
        ante, call = cents(s, "ante", what), cents(s, "call", what)
        action, upw = cents(s, "action", what), cents(s, "upcard", what)
        if ante <= 0:
            raise RoundError("%s: no ante; %s: players place the required Ante wager" % (what, SEED))
        down = cards(s, "down", what)
        if len(down) != 3:
            raise RoundError("%s: %d down cards; %s: each player receives three cards face down and a fourth "
                             "face up" % (what, len(down), SEED))
        up = cards(s, "up", what, count=1)[0]
        hand = down + (up,)
        used.append((what, hand))
        decision = s.get("decision")
        if decision not in ("call", "fold"):
            raise RoundError("%s: decision must be \"call\" or \"fold\" (%s), got %r" % (what, SEED, decision))
        final = hand
        if decision == "call":
            if call != pt["call_multiple"] * ante:
                raise RoundError("%s: call of %d cents on an ante of %d; %s: a call bet equal to the ante wager"
                                 % (what, call, ante, SEED))
            final, _, draws = discard_draw(s, what, hand, pt["max_discards"],
                                           "%s: the player may draw a card, discarding one of his original four cards" % SEED)
            used.append((what + " draw", draws))
        else:
            if call or s.get("discard") or s.get("draw"):
                raise RoundError("%s: folds but calls or draws; %s: a player who folds forfeits the ante" % (what, SEED))
        players.append(dict(seat=n, ante=ante, call=call, action=action, upw=upw, up=up, final=final,
                            decision=decision))
    disjoint(used)
    hv, hcards = house_hand(ddown, dup)
    st.dealer = {"down": cards_str(ddown), "up": cards_str((dup,)), "house_hand": cards_str(hcards),
                 "hand": hands.name(hv, 4),
                 "rule": "%s: the house hand consists of the face up card and the three cards that make up the best "
                         "four card poker hand" % SEED}
    for p in players:
        n = p["seat"]
        if p["decision"] == "fold":
            st.add(n, "ante", p["ante"], LOSE, p["ante"], "%s: the player folds, forfeiting the ante wager" % SEED)
            if p["action"]:
                st.add(n, "action", p["action"], LOSE, p["action"],
                       "%s: the Action Bet is forfeited in the event the player decides to fold" % SEED)
        else:
            pv = rank4(p["final"])
            pname = hands.name(pv, 4)
            if pv > hv:
                rule = "%s: the player's four card hand beats the house hand (%s), even money on the Ante and Call" % (SEED, hands.name(hv, 4))
                st.add(n, "ante", p["ante"], WIN, pay(p["ante"], pt["ante_odds"]), rule, pname)
                st.add(n, "call", p["call"], WIN, pay(p["call"], pt["call_odds"]), rule, pname)
            elif pv == hv:
                rule = "%s: in the event of a dealer/player tie, both wagers push" % SEED
                st.add(n, "ante", p["ante"], PUSH, 0, rule, pname)
                st.add(n, "call", p["call"], PUSH, 0, rule, pname)
            else:
                rule = "%s: the player's hand loses to the house hand (%s), the player loses both wagers" % (SEED, hands.name(hv, 4))
                st.add(n, "ante", p["ante"], LOSE, p["ante"], rule, pname)
                st.add(n, "call", p["call"], LOSE, p["call"], rule, pname)
            cat = category(pv, 4)
            bkey = {Four.STRAIGHT_FLUSH: "straight_flush", Four.FOUR_OF_A_KIND: "four_of_a_kind"}.get(cat)
            if bkey:
                odds = pt["ante_bonus_odds"][bkey]
                st.add(n, "ante_bonus", p["ante"], WIN, pay(p["ante"], odds),
                       "%s: Ante Bonus, the ante wager is paid %s for a %s, regardless of the dealer's hand"
                       % (SEED, odds_text(odds), bkey.replace("_", " ")), pname)
            if p["action"]:
                akey = cat.name.lower()
                if akey in pt["action_odds"]:
                    odds = pt["action_odds"][akey]
                    st.add(n, "action", p["action"], WIN, pay(p["action"], odds),
                           "%s: Action Bet (%s), %s pays %s regardless of the dealer's hand"
                           % (SEED, pt["name"], akey.replace("_", " "), odds_text(odds)), pname)
                else:
                    st.add(n, "action", p["action"], LOSE, p["action"],
                           "%s: Action Bet, the hand is below two pair (not on the Action Bet table)" % SEED, pname)
        if p["upw"]:
            key = upcard_key(p["up"], dup)
            ups = "%s and %s" % (cards_str((p["up"],)), cards_str((dup,)))
            if key:
                odds = pt["upcard_odds"][key]
                st.add(n, "upcard", p["upw"], WIN, pay(p["upw"], odds), "%s: the Up Card Wager %s (%s)" % (SEED, _UPCARD_TEXT[key], ups))
            else:
                st.add(n, "upcard", p["upw"], LOSE, p["upw"],
                       "%s: Up Card Wager, the up cards (%s) are neither both aces, the same number nor the same suit" % (SEED, ups))
    return st
