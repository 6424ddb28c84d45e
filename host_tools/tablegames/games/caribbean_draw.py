"""Caribbean Draw Poker (rulebook 000, Colorado rules).

Round file (all money in integer cents; seat 1 is the seat at the dealer's left, the first to
receive cards, rule 5):

    {"meter_cents": 2500000,            # progressive meter as displayed before the payouts
     "meter_reset_cents": 1000000,      # the meter's seed amount (needed if a royal flush hits)
     "table": {"straight_flush_award": "percent" | "fixed",     # rule 9.3, licensee's option
               "fixed_awards_from_meter": false,
               "token_cents": 100},     # the table's options; as the board is configured
                                        # (`settle --from-board` reads them from it)
     "dealer": {"cards": "5 cards", "draw": "replacement cards, in the order dealt"},
     "seats": [{"seat": 1, "ante": 200, "progressive": 100, "cards": "5 cards",
                "decision": "call", "bet": 400, "discard": "2c 7d", "draw": "Ah Kh"},
               {"seat": 2, "ante": 100, "cards": "...", "decision": "fold"}]}

A seat may say "misdeal": true (rule 6, dead hand for that player); the dealer may say
"misdeal": true (rule 6, the table plays for the progressive only).

Settlement order: progressive awards left to right (rule 9) - seat 1 first, that is from the
dealer's left, the order the cards are dealt - then folded antes (rule 7.1), then every called hand
from the dealer's right counterclockwise (rule 14.3), that is highest seat number first.
"""
import json

from ..poker import Five, cards_str, category, category_name, hands, rank5
from ..poker.cards import RANKS
from .base import (LOSE, PUSH, WIN, RoundError, Settlement, cards, cents, discard_draw, disjoint,
                   load_paytable, odds_text, pay, seats_of)

GAME = "caribbean-draw"
DEFAULT_PAYTABLE = "caribbean-draw-co"
SEED = "rulebook 000"


def pay_key(value):
    """Pay-table key of a five-card value: 'royal_flush', 'full_house', ..."""
    if value == 7462:
        return "royal_flush"
    return category(value).name.lower()


def _pretty(key):
    return key.replace("_", " ")


# ------------------------------------------------------------------ dealer draw (rule 12)

def _straight_draws(cards5):
    """Four-card subsets of a no-pair hand that are four to a straight.

    Returns (cards4, open_ended, best_top) per subset. Ranks are 0..12 (deuce..ace); the ace may
    also play low as -1 (A-2-3-4-5 is the lowest straight).
    """
    out = []
    for drop in range(5):
        four = tuple(c for i, c in enumerate(cards5) if i != drop)
        ranks = sorted(c >> 2 for c in four)
        best_top = None
        for lo in range(-1, 9):              # windows lo..lo+4; lo = -1 is A-2-3-4-5
            window = set(range(lo, lo + 5))
            rs = [(-1 if (r == 12 and lo == -1) else r) for r in ranks]
            if set(rs) <= window and len(set(rs)) == 4:
                best_top = lo + 4
        if best_top is None:
            continue
        low = min(ranks)
        open_ended = ranks == list(range(low, low + 4)) and low >= 0 and low + 3 <= 11
        # four consecutive from deuce to king: both ends complete it (A-2-3-4 and J-Q-K-A do not)
        out.append((four, open_ended, best_top))
    return out


def dealer_draw(cards5):
    """The dealer's cards to keep under rule 12: (kept, discards, rule text)."""
    v = rank5(cards5)
    cat = category(v)
    by_rank = {}
    for c in cards5:
        by_rank.setdefault(c >> 2, []).append(c)

    def keep(kept, rule):
        kept = tuple(c for c in cards5 if c in kept)
        return kept, tuple(c for c in cards5 if c not in kept), rule

    if cat in (Five.STRAIGHT_FLUSH, Five.FLUSH, Five.STRAIGHT, Five.FOUR_OF_A_KIND, Five.FULL_HOUSE):
        return keep(cards5, "12.1: the dealer stands with a straight, flush, full house, four of a "
                            "kind or straight flush")
    if cat == Five.THREE_OF_A_KIND:
        trips = next(cs for cs in by_rank.values() if len(cs) == 3)
        return keep(trips, "12.3: three of a kind, the dealer discards and draws two cards")
    if cat == Five.TWO_PAIR:
        pairs = [c for cs in by_rank.values() if len(cs) == 2 for c in cs]
        return keep(pairs, "12.2: two pairs, the dealer keeps the pairs and discards the fifth card")
    if cat == Five.PAIR:
        pair = next(cs for cs in by_rank.values() if len(cs) == 2)
        others = sorted((c for c in cards5 if c not in pair), key=lambda c: c >> 2)
        return keep(tuple(pair) + (others[-1],),
                    "12.3: one pair, the dealer keeps the pair and the highest of the other three "
                    "cards (also when the hand holds four to a flush or a straight)")
    # no pair
    by_suit = {}
    for c in cards5:
        by_suit.setdefault(c & 3, []).append(c)
    flush4 = next((cs for cs in by_suit.values() if len(cs) == 4), None)
    draws = _straight_draws(cards5)
    if flush4 is not None:
        also = " (four to a flush is played over four to a straight)" if any(
            set(d[0]) != set(flush4) for d in draws) else ""
        return keep(flush4, "12.2: less than a pair with four cards to a flush, the dealer keeps "
                            "the four and draws one" + also)
    if draws:
        opens = [d for d in draws if d[1]]
        pool = opens or draws
        # Rulebook 000 is silent between two draws of the same kind; the dealer keeps the one whose
        # straight would be higher, then the higher cards ("the best possible poker hand", 12).
        pool.sort(key=lambda d: (d[2], sorted((c >> 2 for c in d[0]), reverse=True)), reverse=True)
        four = pool[0][0]
        why = "12.2: less than a pair with four cards to a straight, the dealer keeps the four and draws one"
        if len(draws) > 1 and opens:
            why += " (the open-ended straight is played over the other straight option)"
        return keep(four, why)
    top3 = sorted(cards5, key=lambda c: c >> 2)[2:]
    return keep(top3, "12.3: no pair, the dealer discards the lowest two cards and draws two")


# ------------------------------------------------------------------ settlement

PROGRESSIVE_HANDS = ("royal_flush", "straight_flush", "four_of_a_kind", "full_house", "flush")


def check_progressive_paytable(pt):
    """A pay table's progressive schedule (rule 9.3's shape: a royal at a percentage of the meter;
    every other hand a fixed sum in cents or a percentage; the straight flush as named options)
    is checked before it prices or pays anything; the error names the entry."""
    name = pt.get("name", "?")
    prog = pt.get("progressive")
    if not isinstance(prog, dict):
        raise RoundError("pay table %s: no \"progressive\" schedule (%s rule 9.3)" % (name, SEED))
    missing = [k for k in PROGRESSIVE_HANDS if k not in prog]
    if missing:
        raise RoundError("pay table %s: the progressive schedule has no %s (%s rule 9.3 pays %s)"
                         % (name, ", ".join(missing), SEED, ", ".join(PROGRESSIVE_HANDS)))

    def spec_ok(key, spec):
        whole = lambda v: isinstance(v, int) and not isinstance(v, bool)
        if isinstance(spec, dict) and len(spec) == 1:
            if "percent_of_meter" in spec and whole(spec["percent_of_meter"]) and 0 < spec["percent_of_meter"] <= 100:
                return
            if "cents" in spec and whole(spec["cents"]) and spec["cents"] >= 0 and key != "royal_flush":
                return
        raise RoundError("pay table %s: progressive %s must be %s, got %s" % (
            name, key.replace("_", " "), "{\"percent_of_meter\": 1..100} (rule 9.3: the royal is the "
            "displayed jackpot)" if key == "royal_flush" else
            "{\"cents\": N} or {\"percent_of_meter\": 1..100}, whole numbers", json.dumps(spec)))

    for key in PROGRESSIVE_HANDS:
        if key == "straight_flush":
            sf = prog[key]
            if not isinstance(sf, dict) or not sf:
                raise RoundError("pay table %s: progressive straight flush must name its options, e.g. "
                                 "{\"percent\": {\"percent_of_meter\": 10}, \"fixed\": {\"cents\": 500000}}" % name)
            for option, spec in sf.items():
                spec_ok(key + " (" + option + ")", spec)
        else:
            spec_ok(key, prog[key])


def table_options(pt, table=None):
    """The table's progressive options: the pay table's defaults, overridden by `table` (a round's
    "table" block, or the options read from the board: tablegames.progressive.board_options).
    Checked here, so settle, jackpot and par refuse the same things."""
    check_progressive_paytable(pt)
    sf_options = list(pt["progressive"]["straight_flush"])
    opts = {"straight_flush_award": "percent" if "percent" in sf_options else sf_options[0],
            "fixed_awards_from_meter": False, "token_cents": 100}
    for key, value in (pt.get("table_defaults") or {}).items():
        if key in opts:
            opts[key] = value
    if table is not None and not isinstance(table, dict):
        raise RoundError("round: 'table' must be an object (straight_flush_award, "
                         "fixed_awards_from_meter, token_cents)")
    for key, value in (table or {}).items():
        if key not in opts:
            raise RoundError("table: unknown option %r; the options are %s" % (key, ", ".join(sorted(opts))))
        opts[key] = value
    sf = pt["progressive"]["straight_flush"]
    if opts["straight_flush_award"] not in sf:
        raise RoundError("table straight_flush_award must be one of %s (%s rule 9.3: 10%% of the "
                         "meter or $5,000, chosen when the game is put into play), got %r"
                         % (", ".join(sorted(sf)), SEED, opts["straight_flush_award"]))
    if not isinstance(opts["fixed_awards_from_meter"], bool):
        raise RoundError("table fixed_awards_from_meter must be true or false, got %r"
                         % (opts["fixed_awards_from_meter"],))
    t = opts["token_cents"]
    if not isinstance(t, int) or isinstance(t, bool) or t <= 0:
        raise RoundError("table token_cents must be the token's value in whole cents (> 0), got %r" % (t,))
    return opts


def _progressive_schedule(pt, table):
    option = table["straight_flush_award"]
    sf = pt["progressive"]["straight_flush"]
    if option not in sf:
        raise RoundError("table straight_flush_award must be one of %s (%s rule 9.3: 10%% of the "
                         "meter or $5,000, chosen when the game is put into play), got %r"
                         % (", ".join(sorted(sf)), SEED, option))
    return {
        "royal_flush": pt["progressive"]["royal_flush"],
        "straight_flush": sf[option],
        "four_of_a_kind": pt["progressive"]["four_of_a_kind"],
        "full_house": pt["progressive"]["full_house"],
        "flush": pt["progressive"]["flush"],
    }


def _award_text(key, spec):
    if "percent_of_meter" in spec:
        return "%s pays %d%% of the displayed progressive jackpot" % (_pretty(key), spec["percent_of_meter"])
    return "%s pays $%s" % (_pretty(key), "{:,.2f}".format(spec["cents"] / 100).replace(".00", ""))


def pay_progressive(winners, meter_cents, reset_cents, schedule, fixed_from_meter):
    """Progressive awards in payment order (rule 9): winners is [(seat, value)] left to right.

    The short-meter policy (docs/GAMES.md, "The progressive when the meter is short"):

    - Every award is the schedule's amount on the meter as displayed when the coin-in was locked
      (meter_cents): a royal 100 % of it (rule 9.3), several royals dividing it equally, pool // n
      each (rule 9.2), a percentage straight flush its percentage of it, a fixed award its sum.
      No hand's award depends on its neighbours' hands or on the order of payment.
    - Where the money comes from: the meter funds what it holds, first the royals, then the
      percentage straight flushes, then (only if fixed_from_meter) the fixed awards, left to right
      within each; the house pays the rest of every award (house_cents). So a royal is always paid
      in full from the meter, and no winning hand is paid less than the schedule promises.
    - Payment order is left to right (rule 9). The last royal paid resets the meter to its seed
      (reset_cents) plus what the round left on it (the undivided cents of a split).

    Returns (awards, meter_after); each award a dict with seat, hand, award_cents, meter_cents
    (taken from the meter), house_cents, reset, rule, meter before and after (payment order).
    """
    meter = meter_cents
    n_royals = sum(1 for _, v in winners if v == 7462)
    if n_royals and reset_cents is None:
        raise RoundError("a royal flush hit: the round needs meter_reset_cents, the "
                         "meter's seed amount it resets to after the jackpot is paid")
    plan = []
    for seat, v in winners:
        key = pay_key(v)
        spec = schedule[key]
        if key == "royal_flush":
            amount = meter_cents * spec["percent_of_meter"] // 100 // n_royals
            claim = 0
            rule = "%s rule 9.3: royal flush pays 100%% of the displayed progressive jackpot" % SEED
            if n_royals > 1:
                rule += "; rule 9.2: %d royal flushes divide it equally" % n_royals
        elif "percent_of_meter" in spec:
            amount = meter_cents * spec["percent_of_meter"] // 100
            claim = 1
            rule = "%s rule 9.3: %s" % (SEED, _award_text(key, spec))
        else:
            amount = spec["cents"]
            claim = 2 if fixed_from_meter else None
            rule = "%s rule 9.3: %s%s" % (SEED, _award_text(key, spec),
                                          " (taken from the meter)" if fixed_from_meter else "")
        plan.append({"seat": seat, "key": key, "value": v, "amount": amount, "claim": claim, "rule": rule})
    # the meter's funds, in order of claim; stable sort keeps left to right within a claim
    left = meter_cents
    for p in sorted((p for p in plan if p["claim"] is not None), key=lambda p: p["claim"]):
        p["from_meter"] = min(p["amount"], left)
        left -= p["from_meter"]
    last_royal = max((i for i, p in enumerate(plan) if p["key"] == "royal_flush"), default=None)
    awards = []
    for i, p in enumerate(plan):
        from_meter = p.get("from_meter", 0)
        house = p["amount"] - from_meter
        rule = p["rule"]
        if p["claim"] is not None and house:
            rule += ("; the meter holds $%s of it after the awards before it in claim (royals, "
                     "then percentages, then fixed), the house pays $%s"
                     % (_money(from_meter), _money(house)))
        before = meter
        meter -= from_meter
        reset = i == last_royal
        if reset:
            meter += reset_cents
        awards.append({"seat": p["seat"], "hand": hands.name(p["value"]), "award_cents": p["amount"],
                       "meter_cents": from_meter, "house_cents": house, "reset": reset, "rule": rule,
                       "meter_before_cents": before, "meter_after_cents": meter})
    return awards, meter


def _money(cents):
    return "{:,.2f}".format(cents / 100)


def settle(rnd, paytable=None):
    pt = load_paytable(paytable or rnd.get("paytable") or DEFAULT_PAYTABLE)
    if pt.get("game") != GAME:
        raise RoundError("pay table %s is for %s, not %s" % (pt["name"], pt.get("game"), GAME))
    table = table_options(pt, rnd.get("table"))
    st = Settlement(GAME, pt["name"])
    seats = seats_of(rnd)
    dealer = rnd.get("dealer")
    if not isinstance(dealer, dict):
        raise RoundError("round: missing 'dealer' (the dealer's five cards and draw)")
    dealer_misdeal = bool(dealer.get("misdeal"))

    # ---- read and check every seat (rules 2, 5, 6, 7, 8)
    used = []
    parsed = []
    for s in seats:
        n = s["seat"]
        what = "seat %d" % n
        ante = cents(s, "ante", what)
        bet = cents(s, "bet", what)
        token = cents(s, "progressive", what)
        if token and token != table["token_cents"]:
            raise RoundError("%s: progressive wager of %d cents; %s rule 3: the optional wager is one "
                             "token in the coin-in slot, and this table's token is %d cents"
                             % (what, token, SEED, table["token_cents"]))
        if ante <= 0:
            raise RoundError("%s: no ante; %s rule 2: each player must make an ante wager" % (what, SEED))
        if ante > pt["ante_max_cents"]:
            raise RoundError("%s: ante %d cents; %s rule 2: the ante wager may not exceed $%.2f"
                             % (what, ante, SEED, pt["ante_max_cents"] / 100))
        if s.get("misdeal"):
            parsed.append(dict(seat=n, ante=ante, bet=bet, token=token, dead=True))
            continue
        hand = cards(s, "cards", what)
        if len(hand) != 5:
            raise RoundError("%s: %d cards (%s); %s rule 5: the dealer deals five cards to each player "
                             "(if that is what was dealt, mark the seat \"misdeal\": true: rule 6, dead hand)"
                             % (what, len(hand), cards_str(hand), SEED))
        decision = s.get("decision")
        if decision not in ("call", "fold"):
            raise RoundError("%s: decision must be \"call\" or \"fold\" (%s rule 7), got %r" % (what, SEED, decision))
        used.append((what + " cards", hand))
        if decision == "fold":
            if bet:
                raise RoundError("%s: folds but has a bet of %d cents; %s rule 7.1: a player who folds "
                                 "makes no bet" % (what, bet, SEED))
            if s.get("discard") or s.get("draw"):
                raise RoundError("%s: folds but draws; %s rule 7.1: the dealer collects the cards of a "
                                 "player who folds" % (what, SEED))
            parsed.append(dict(seat=n, ante=ante, bet=0, token=token, hand=hand, fold=True))
            continue
        if bet != pt["call_multiple"] * ante:
            raise RoundError("%s: calls with a bet of %d cents on an ante of %d; %s rule 7.2: the bet "
                             "must be exactly twice the ante (%d cents)"
                             % (what, bet, ante, SEED, pt["call_multiple"] * ante))
        final, discards, draws = discard_draw(
            s, what, hand, pt["max_discards"],
            "%s rule 8: a player may discard and have replaced up to two cards" % SEED)
        used.append((what + " draw", draws))
        parsed.append(dict(seat=n, ante=ante, bet=bet, token=token, hand=hand, final=final,
                           discards=discards, fold=False))

    if dealer_misdeal:
        dcards = cards(dealer, "cards", "dealer", default=())
        used.append(("the dealer", dcards))
    else:
        dcards = cards(dealer, "cards", "dealer")
        if len(dcards) != 5:
            raise RoundError("dealer: %d cards (%s); %s rule 5: the dealer receives five cards (if "
                             "that is what was dealt, mark the dealer \"misdeal\": true: rule 6)"
                             % (len(dcards), cards_str(dcards), SEED))
        used.append(("the dealer", dcards))
    if not dealer_misdeal:
        kept, ddisc, drule = dealer_draw(dcards)
        ddraw = cards(dealer, "draw", "dealer", default=())
        if "discard" in dealer:
            said = cards(dealer, "discard", "dealer")
            if set(said) != set(ddisc):
                raise RoundError("dealer: discards %s, but %s rule %s: the dealer must discard %s"
                                 % (cards_str(said) or "nothing", SEED, drule, cards_str(ddisc) or "nothing"))
        if len(ddraw) != len(ddisc):
            raise RoundError("dealer: draws %d card(s); %s rule %s, so the dealer discards %s and "
                             "draws exactly %d" % (len(ddraw), SEED, drule, cards_str(ddisc) or "nothing",
                                                   len(ddisc)))
        used.append(("the dealer's draw", ddraw))
        dfinal = kept + ddraw
    disjoint(used)

    # ---- progressive (rule 9), on the initial five cards, left to right
    schedule = _progressive_schedule(pt, table)
    eligible = [p for p in parsed if p["token"] and not p.get("dead") and not p.get("fold")]
    winners = []
    for p in eligible:
        v = rank5(p["hand"])
        if v >= hands.category_start(Five.FLUSH):
            winners.append((p["seat"], v))
    meter = rnd.get("meter_cents")
    if eligible:
        if not isinstance(meter, int) or isinstance(meter, bool) or meter < 0:
            raise RoundError("round: progressive wagers were made, so it needs meter_cents (the "
                             "displayed progressive jackpot, whole cents)")
    reset = rnd.get("meter_reset_cents")
    awards, meter_after = pay_progressive(winners, meter, reset, schedule, table["fixed_awards_from_meter"])
    if eligible:
        st.meter = {"before_cents": meter, "after_cents": meter_after}
    st.progressive = awards
    by_seat = {a["seat"]: a for a in awards}
    for p in parsed:
        if not p["token"]:
            continue
        if p["seat"] in by_seat:
            a = by_seat[p["seat"]]
            # The token drops into the slot: it is spent, win or lose (the PAR sheet's +award - 1)
            st.add(p["seat"], "progressive", p["token"], WIN, a["award_cents"], a["rule"], a["hand"],
                   stake_returned=False)
        elif p.get("dead"):
            st.add(p["seat"], "progressive", p["token"], LOSE, p["token"],
                   "%s rule 6: dead hand (incorrect number of cards); only the ante and bet are retained" % SEED)
        elif p.get("fold"):
            st.add(p["seat"], "progressive", p["token"], LOSE, p["token"],
                   "%s rules 7.1 and 9: a folded hand is collected before progressive hands are shown" % SEED,
                   hands.name(rank5(p["hand"])))
        else:
            st.add(p["seat"], "progressive", p["token"], LOSE, p["token"],
                   "%s rule 9.1: the initial five cards are below a flush" % SEED, hands.name(rank5(p["hand"])))
    # progressive lines first, in left-to-right order already (parsed is by seat)

    # ---- dead hands and dealer misdeal (rule 6)
    for p in parsed:
        if p.get("dead"):
            st.add(p["seat"], "ante", p["ante"], PUSH, 0, "%s rule 6: dead hand, the player retains the ante" % SEED)
            if p["bet"]:
                st.add(p["seat"], "bet", p["bet"], PUSH, 0, "%s rule 6: dead hand, the player retains the bet" % SEED)
    live = [p for p in parsed if not p.get("dead")]
    if dealer_misdeal:
        for p in reversed(live):
            rule = "%s rule 6: misdeal to the dealer, hands play for the progressive only; antes and bets are retained" % SEED
            st.add(p["seat"], "ante", p["ante"], PUSH, 0, rule)
            if p["bet"]:
                st.add(p["seat"], "bet", p["bet"], PUSH, 0, rule)
        st.dealer = {"misdeal": True}
        return st

    # ---- folds (rule 7.1)
    for p in live:
        if p["fold"]:
            st.add(p["seat"], "ante", p["ante"], LOSE, p["ante"], "%s rule 7.1: the player folds, the ante wager is lost" % SEED)

    # ---- the dealer's hand (rules 12, 13)
    dv = rank5(dfinal)
    q = pt["dealer_qualifier"]
    qualifier = hands.lowest_value(5, Five[q["category"].upper()], RANKS.index(q["rank"]))
    qualifies = dv >= qualifier
    st.dealer = {"cards": cards_str(dcards), "kept": cards_str(kept), "discards": cards_str(ddisc),
                 "draw": cards_str(ddraw), "final": cards_str(dfinal), "hand": hands.name(dv),
                 "draw_rule": "%s rule %s" % (SEED, drule), "qualifies": qualifies,
                 "qualifier": "%s rule %s" % (SEED, q["rule"])}

    # ---- called hands, from the dealer's right counterclockwise (rule 14.3)
    for p in sorted((p for p in live if not p["fold"]), key=lambda p: -p["seat"]):
        n = p["seat"]
        pv = rank5(p["final"])
        pname = hands.name(pv)
        if not qualifies:
            st.add(n, "ante", p["ante"], WIN, pay(p["ante"], pt["ante_odds"]),
                   "%s rule 13: the dealer does not qualify (%s), antes are paid 1 to 1" % (SEED, hands.name(dv)), pname)
            st.add(n, "bet", p["bet"], PUSH, 0,
                   "%s rule 13: the dealer does not qualify; the bet is not in action" % SEED, pname)
        elif pv > dv:
            key = pay_key(pv)
            odds = pt["bet_odds"][key]
            st.add(n, "ante", p["ante"], WIN, pay(p["ante"], pt["ante_odds"]),
                   "%s rule 14.1: the player's hand beats the dealer's (%s), the ante pays 1 to 1" % (SEED, hands.name(dv)), pname)
            st.add(n, "bet", p["bet"], WIN, pay(p["bet"], odds),
                   "%s rule 14.2: %s pays %s" % (SEED, _pretty(key), odds_text(odds)), pname)
        elif pv == dv:
            rule = "%s rules 14 and 14.5: the hands are the same rank, a push" % SEED
            st.add(n, "ante", p["ante"], PUSH, 0, rule, pname)
            st.add(n, "bet", p["bet"], PUSH, 0, rule, pname)
        else:
            rule = "%s rule 14: the dealer's hand (%s) is higher" % (SEED, hands.name(dv))
            st.add(n, "ante", p["ante"], LOSE, p["ante"], rule, pname)
            st.add(n, "bet", p["bet"], LOSE, p["bet"], rule, pname)
    return st
