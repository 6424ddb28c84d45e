"""Progressive jackpot awards for Caribbean Draw Poker, as seed 000 schedules them.

Seed 000 (Colorado rules, Caribbean Draw Poker), 9.1 and 9.3: "Progressive jackpot payouts are
based on the initial five cards of each player", and "Royal flush pays 100% of the displayed
progressive jackpot; Straight flush pays either 10% of the displayed progressive jackpot or pays
$5,000 ...; Four of a kind pays $500; Full house pays $100; Flush pays $50". 9: "the dealer pays
any and all progressive jackpot winners from left to right". 3.2: royal flushes in the same hand
"may be divided equally between or among the qualified players".

Everything is integer cents. A percentage award is rounded down to the cent; the fraction stays
in the meter (it is never lost). Split royals share the meter equally; the cents that do not
divide go one each to the leftmost royal winners, so the shares add up to the meter exactly.
"""
from .errors import TablectlError

RANKS = "23456789TJQKA"
SUITS = "shdc"
SUIT_SYMBOLS = {"\u2660": "s", "\u2665": "h", "\u2666": "d", "\u2663": "c"}

ROYAL = "royal flush"
STRAIGHT_FLUSH = "straight flush"
FOUR = "four of a kind"
FULL_HOUSE = "full house"
FLUSH = "flush"

# Fixed awards in cents (seed 000, 9.3).
FIXED_CENTS = {FOUR: 50000, FULL_HOUSE: 10000, FLUSH: 5000}
STRAIGHT_FLUSH_FIXED_CENTS = 500000


def parse_card(token):
    t = token.strip()
    if t[:2] == "10":
        t = "T" + t[2:]
    if len(t) != 2:
        raise TablectlError("bad card %r: write rank then suit, e.g. As, 10h, Td, 9\u2663" % token)
    rank = t[0].upper()
    suit = SUIT_SYMBOLS.get(t[1], t[1].lower())
    if rank not in RANKS or suit not in SUITS:
        raise TablectlError("bad card %r: rank is one of 2-9 T J Q K A (or 10), suit one of s h d c" % token)
    return rank + suit


def parse_hand(text, count=5):
    cards = [parse_card(tok) for tok in text.replace(",", " ").split()]
    if len(cards) != count:
        raise TablectlError("a progressive hand is the initial %d cards; got %d in %r" % (count, len(cards), text))
    if len(set(cards)) != len(cards):
        dup = [c for c in cards if cards.count(c) > 1][0]
        raise TablectlError("card %s appears twice in %r" % (dup, text))
    return cards


def progressive_category(cards):
    """The hand's category if it qualifies for the progressive (flush or better), else None."""
    ranks = sorted((RANKS.index(c[0]) for c in cards), reverse=True)
    flush = len(set(c[1] for c in cards)) == 1
    distinct = sorted(set(ranks), reverse=True)
    straight = len(distinct) == 5 and (distinct[0] - distinct[4] == 4 or distinct == [12, 3, 2, 1, 0])
    counts = sorted((ranks.count(r) for r in distinct), reverse=True)
    if straight and flush:
        return ROYAL if distinct[0] == 12 and distinct[4] == 8 else STRAIGHT_FLUSH
    if counts[0] == 4:
        return FOUR
    if counts[:2] == [3, 2]:
        return FULL_HOUSE
    if flush:
        return FLUSH
    return None


def compute_awards(hits, meter_cents, seed_cents, straight_flush="10pct", fixed_from_meter=False):
    """hits: [(seat, category)] for qualifying seats. Returns the ordered payment list:
    [{"seat", "hand", "amount_cents", "from_meter", "reset", "meter_after"}], left to right."""
    if straight_flush not in ("10pct", "fixed"):
        raise TablectlError("straight flush pay is 10pct or fixed, not %r" % straight_flush)
    ordered = sorted(hits, key=lambda h: h[0])
    royals = [seat for seat, cat in ordered if cat == ROYAL]
    meter = meter_cents
    payments = []
    royal_shares = {}
    royal_pool = None
    for seat, category in ordered:
        if category == ROYAL:
            if royal_pool is None:
                # All royals of the hand share the meter as it stands at the first of them.
                royal_pool = meter
                share, extra = divmod(royal_pool, len(royals))
                for i, s in enumerate(royals):
                    royal_shares[s] = share + (1 if i < extra else 0)
            amount = royal_shares[seat]
            meter -= amount
            last = seat == royals[-1]
            if last:
                meter += seed_cents  # the meter restarts from its seed after the royal(s)
            payments.append({"seat": seat, "hand": ROYAL, "amount_cents": amount, "from_meter": True,
                             "reset": last, "meter_after": meter})
        elif category == STRAIGHT_FLUSH:
            if straight_flush == "10pct":
                amount = meter // 10
                meter -= amount
                payments.append({"seat": seat, "hand": category, "amount_cents": amount, "from_meter": True,
                                 "reset": False, "meter_after": meter})
            else:
                payments.append(_fixed(seat, category, STRAIGHT_FLUSH_FIXED_CENTS, fixed_from_meter, meter))
                meter = payments[-1]["meter_after"]
        elif category in FIXED_CENTS:
            payments.append(_fixed(seat, category, FIXED_CENTS[category], fixed_from_meter, meter))
            meter = payments[-1]["meter_after"]
    return payments


def _fixed(seat, category, amount, from_meter, meter):
    if from_meter:
        amount_from_meter = min(amount, meter)
        return {"seat": seat, "hand": category, "amount_cents": amount_from_meter, "from_meter": True,
                "reset": False, "meter_after": meter - amount_from_meter}
    return {"seat": seat, "hand": category, "amount_cents": amount, "from_meter": False, "reset": False,
            "meter_after": meter}
