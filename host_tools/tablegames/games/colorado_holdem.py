"""Colorado Hold'em Poker (rulebook 001, Section 38), both versions.

Round file (integer cents; seat 1 is the player farthest to the dealer's left, dealt first):

    {"community": "3 cards",
     "table": {"payout_cap_cents": 5000000},      # (m)(3)/(n)(3): $50,000 or more per hand
     "irregularity": "o3",                         # optional: voids every hand (see VOIDS)
     "seats": [{"seat": 1, "ante": 500, "bonus": 100, "cards": "3 cards",
                "decision": "play", "bet": 500, "discard": "1 card"},
               {"seat": 2, "ante": 500, "cards": "...", "decision": "instant"},
               {"seat": 3, "ante": 500, "cards": "...", "decision": "fold"}]}   # required version only

decision: "play" (discard one card, keep two; the hand is exactly those two plus the three
community cards), "fold" (required version, (k)(2)), "instant" (declare an instant winner).
The pay table picks the version: colorado-holdem-required (default) or colorado-holdem-permissible.

Order of the lines: instant winners (paid before the community cards are exposed, (l)(2)(ii)(A)),
then losing wagers, then pushes, then winning wagers from the player farthest to the dealer's right
counterclockwise ((k)(4)(i), (l)(7)(i)), i.e. highest seat number first.
"""
from ..poker import Five, Three, cards_str, category, hands, rank3, rank5
from ..poker.cards import RANKS
from .base import (LOSE, PUSH, WIN, RoundError, Settlement, cards, cents, disjoint, load_paytable,
                   odds_text, pay, seats_of)

GAME = "colorado-holdem"
DEFAULT_PAYTABLE = "colorado-holdem-required"
SEED = "rulebook 001"

VOIDS = {
    "o1": "(o)(1): more than one card found face up in the shoe or the deck, all hands are void",
    "o3": "(o)(3): a player or the community area was dealt an incorrect number of cards, all hands are void",
    "o5": "(o)(5): the automated shuffler jammed or failed to complete a shuffle, the cards are reshuffled",
    "o6": "(o)(6): the automated dealing shoe jammed or failed to deal all cards, the round is void",
    "h5": "(h)(5)(ii): the stub count shows a misdeal, all hands are void",
}


def _threshold(spec):
    return hands.lowest_value(5, Five[spec["category"].upper()], RANKS.index(spec["rank"]))


def pay_key(value):
    return "royal_flush" if value == 7462 else category(value).name.lower()


def instant_key(cards3):
    """'straight_flush' / 'three_of_a_kind' for a three-card instant winner ((c)(3)), else None."""
    cat = category(rank3(cards3), 3)
    if cat == Three.STRAIGHT_FLUSH:
        return "straight_flush"
    if cat == Three.THREE_OF_A_KIND:
        return "three_of_a_kind"
    return None


_INSTANT_NAMES = {"straight_flush": "three card straight flush (instant winner)",
                  "three_of_a_kind": "three-of-a-kind (instant winner)"}


def settle(rnd, paytable=None):
    pt = load_paytable(paytable or rnd.get("paytable") or DEFAULT_PAYTABLE)
    if pt.get("game") != GAME:
        raise RoundError("pay table %s is for %s, not %s" % (pt["name"], pt.get("game"), GAME))
    R = pt["rules"]
    table = dict(pt["table_defaults"])
    table.update(rnd.get("table") or {})
    cap = table["payout_cap_cents"]
    if not isinstance(cap, int) or cap < pt["payout_cap_min_cents"]:
        raise RoundError("table payout_cap_cents %r: %s %s: a casino may establish a maximum amount of "
                         "$50,000 or such greater amount payable on a single hand" % (cap, SEED, R["cap"]))
    st = Settlement(GAME, pt["name"])
    seats = seats_of(rnd)
    void = rnd.get("irregularity")
    if void is not None and void not in VOIDS:
        raise RoundError("irregularity must be one of %s (%s (o)), got %r" % (", ".join(VOIDS), SEED, void))

    players = []
    used = []
    community = cards(rnd, "community", "community", default=())
    for s in seats:
        n, what = s["seat"], "seat %d" % s["seat"]
        ante, bet, bonus = cents(s, "ante", what), cents(s, "bet", what), cents(s, "bonus", what)
        if ante <= 0:
            raise RoundError("%s: no ante; %s (f)(4): each player shall be required to place an initial wager" % (what, SEED))
        if bonus and bonus != pt["bonus_stake_cents"]:
            raise RoundError("%s: bonus wager of %d cents; %s (g)(2): the bonus wager is made by placing a $1.00 "
                             "gaming chip" % (what, bonus, SEED))
        hand = cards(s, "cards", what, default=())
        players.append(dict(seat=n, ante=ante, bet=bet, bonus=bonus, hand=hand, s=s))
        used.append((what, hand))
    if void:
        used.append(("the community", community))
        disjoint(used)
        for p in players:
            for wager in ("ante", "bet", "bonus"):
                if p[wager]:
                    st.add(p["seat"], wager, p[wager], PUSH, 0, "%s %s" % (SEED, VOIDS[void]))
        return st

    if len(community) != 3:
        raise RoundError("community: %d cards; %s (h)(3): three community cards are dealt (if that is what was "
                         "dealt, record \"irregularity\": \"o3\")" % (len(community), SEED))
    used.append(("the community", community))
    for p in players:
        if len(p["hand"]) != 3:
            raise RoundError("seat %d: %d cards; %s (h)(3): three cards to each player (if that is what was dealt, "
                             "record \"irregularity\": \"o3\": all hands are void)" % (p["seat"], len(p["hand"]), SEED))
    disjoint(used)

    instants, losses, pushes, wins = [], [], [], []
    for p in players:
        n, s, what, ante, bet = p["seat"], p["s"], "seat %d" % p["seat"], p["ante"], p["bet"]
        decision = s.get("decision")
        allowed = ("play", "fold", "instant") if pt["fold_allowed"] else ("play", "instant")
        if decision not in allowed:
            raise RoundError("%s: decision %r; %s %s: a player may %s" % (
                what, decision, SEED, "(k)(2)" if pt["fold_allowed"] else "(l)(2)",
                "play, fold or declare an instant winner" if pt["fold_allowed"]
                else "play or declare an instant winner (this version has no fold)"))
        if decision in ("fold", "instant") and bet:
            raise RoundError("%s: %s with a bet wager; %s (l)(2)(ii)(A): a player declaring an instant winner may not "
                             "make any additional wager" % (what, decision, SEED) if decision == "instant" else
                             "%s: folds with a bet wager on the table" % what)
        if decision == "fold":
            losses.append((n, "ante", ante, LOSE, ante, "%s (k)(2): the player folds, the ante is lost" % SEED, ""))
            if p["bonus"]:
                losses.append((n, "bonus", p["bonus"], LOSE, p["bonus"],
                               "%s (g): a folded hand forms no poker hand for the bonus wager" % SEED, ""))
            continue
        if decision == "instant":
            key = instant_key(p["hand"])
            if key is None:
                rule = "%s (o)(4): the player erroneously declared an instant winner; the hand is void and the initial wager is lost" % SEED
                losses.append((n, "ante", ante, LOSE, ante, rule, hands.name(rank3(p["hand"]), 3)))
                if p["bonus"]:
                    losses.append((n, "bonus", p["bonus"], LOSE, p["bonus"], rule, ""))
                continue
            odds = pt["instant_odds"][key]
            hname = hands.name(rank3(p["hand"]), 3)
            instants.append((n, "ante", ante, WIN, min(pay(ante, odds), cap),
                             "%s %s: %s pays %s on the initial wager" % (SEED, R["odds"], _INSTANT_NAMES[key], odds_text(odds)), hname))
            if p["bonus"]:
                bodds = pt["bonus_instant_odds"][key]
                instants.append((n, "bonus", p["bonus"], WIN, pay(p["bonus"], bodds),
                                 "%s %s: %s pays %s" % (SEED, R["bonus"], _INSTANT_NAMES[key], odds_text(bodds)), hname))
            continue
        # play
        if pt["bet_required"] and bet != ante:
            raise RoundError("%s: bet %d cents on an ante of %d; %s (a)(1)(ii): the bet wager is an additional wager in an "
                             "amount equal to the ante wager, required to continue in this version" % (what, bet, ante, SEED))
        if not pt["bet_required"] and bet not in (0, ante):
            raise RoundError("%s: bet %d cents on an ante of %d; %s (l)(2)(i): the bet wager is exactly equal to the "
                             "initial wager (or none)" % (what, bet, ante, SEED))
        disc = cards(s, "discard", what, count=1)
        if disc[0] not in p["hand"]:
            raise RoundError("%s: discards %s, which is not one of its three cards %s" % (what, cards_str(disc), cards_str(p["hand"])))
        kept = tuple(c for c in p["hand"] if c != disc[0])
        v = rank5(kept + community)      # (a)(1)(v): exactly the two retained cards and the three community cards
        hname = hands.name(v)
        stakes = [("ante", ante)] + ([("bet", bet)] if bet else [])
        if v < _threshold(pt["lose_below"]):
            for w, amt in stakes:
                losses.append((n, w, amt, LOSE, amt, "%s %s: %s" % (SEED, R["lose"], pt["lose_below"]["text"]), hname))
        elif v < _threshold(pt["pay_from"]):
            for w, amt in stakes:
                pushes.append((n, w, amt, PUSH, 0, "%s %s: %s" % (SEED, R.get("push", R["lose"]), pt["pay_from"]["text"]), hname))
        else:
            key = pay_key(v)
            odds = pt["odds"][key]
            room = cap
            for w, amt in stakes:
                won = pay(amt, odds)
                rule = "%s %s: %s pays %s" % (SEED, R["odds"], key.replace("_", " "), odds_text(odds))
                if won > room:
                    won = room
                    rule += "; %s %s: payout limit of %s per hand" % (SEED, R["cap"], "${:,.2f}".format(cap / 100))
                room -= won
                wins.append((n, w, amt, WIN, won, rule, hname))
        if p["bonus"]:
            if v >= _threshold(pt["bonus_push_from"]) and key_or_none(pt, v) is None:
                pushes.append((n, "bonus", p["bonus"], PUSH, 0, "%s %s: pair of jacks or better, push" % (SEED, R["bonus"]), hname))
            elif key_or_none(pt, v) is not None:
                bkey = key_or_none(pt, v)
                bodds = pt["bonus_odds"][bkey]
                wins.append((n, "bonus", p["bonus"], WIN, pay(p["bonus"], bodds),
                             "%s %s: %s pays %s%s" % (SEED, R["bonus"], bkey.replace("_", " "), odds_text(bodds),
                                                      "; " + pt["bonus_rule_notes"][bkey] if bkey in pt.get("bonus_rule_notes", {}) else ""),
                             hname))
            else:
                losses.append((n, "bonus", p["bonus"], LOSE, p["bonus"],
                               "%s (g)(1): the bonus wager is that the hand is a pair of jacks or better" % SEED, hname))

    for group in (instants, losses, pushes):
        for ln in group:
            st.add(*ln)
    for ln in sorted(wins, key=lambda ln: -ln[0]):
        st.add(*ln)
    st.dealer = {"community": cards_str(community)}
    return st


def key_or_none(pt, v):
    """The bonus table entry a five-card hand wins, or None (pairs push or lose)."""
    key = pay_key(v)
    return key if key in pt["bonus_odds"] else None
