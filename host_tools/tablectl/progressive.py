"""From verified progressive hands to the award commands the board executes.

The schedule and its arithmetic live once, in the Caribbean Draw game module and its pay table
(tablectl.games.caribbean_draw.pay_progressive, paytables/caribbean-draw-co.json: seed 000 rule
9.3, paid left to right, split royals, percentages of the meter as it stands). This module only
adds what the board needs to move its meter: how much of each award comes out of the meter, and
which award resets the meter to its seed.
"""
from .errors import TablectlError
from .games.base import RoundError, load_paytable
from .games.caribbean_draw import DEFAULT_PAYTABLE, _progressive_schedule, pay_progressive
from .poker import CardError, Five, category_start, hands, parse_cards, rank5

ROYAL_VALUE = 7462  # the strongest five-card value: a royal flush


def parse_hand(text):
    """The initial five cards of a seat (seed 000 rule 9.1), with errors that name the card."""
    try:
        return parse_cards(text, 5, what="progressive hand")
    except CardError as exc:
        raise TablectlError("%s (a progressive hand is the initial five cards, e.g. \"As Ks Qs Js Ts\")" % exc)


def qualifies(cards):
    """The hand's value if it wins a progressive award (flush or better), else None."""
    value = rank5(cards)
    return value if value >= category_start(Five.FLUSH) else None


def hand_name(cards):
    return hands.name(rank5(cards))


def board_awards(winners, meter_cents, seed_cents, straight_flush="percent", fixed_from_meter=False,
                 paytable=DEFAULT_PAYTABLE):
    """winners: [(seat, value)]. Returns the payments in order, each with what the board's award
    command needs: amount_cents (paid to the player), meter_cents (taken from the meter), reset."""
    pt = load_paytable(paytable)
    try:
        schedule = _progressive_schedule(pt, {"straight_flush_award": straight_flush})
    except RoundError as exc:
        raise TablectlError(str(exc))
    ordered = sorted(winners, key=lambda w: w[0])
    awards, meter_after = pay_progressive(ordered, meter_cents, seed_cents, schedule, fixed_from_meter)
    last_royal = max((i for i, (s, v) in enumerate(ordered) if v == ROYAL_VALUE), default=None)
    payments = []
    meter = meter_cents
    for i, award in enumerate(awards):
        spec_key = award["hand"]
        amount = award["award_cents"]
        percent = ordered[i][1] == ROYAL_VALUE or (
            category_start(Five.STRAIGHT_FLUSH) <= ordered[i][1] < ROYAL_VALUE and straight_flush == "percent")
        if percent:
            meter_part = amount
        elif fixed_from_meter:
            meter_part = min(amount, meter)  # the meter never goes below zero; the house pays the rest
        else:
            meter_part = 0
        reset = i == last_royal
        meter = meter - meter_part + (seed_cents if reset else 0)
        payments.append({"seat": award["seat"], "hand": spec_key, "amount_cents": amount,
                         "meter_cents": meter_part, "reset": reset, "rule": award["rule"],
                         "meter_after": meter})
    if payments and meter != meter_after:
        raise TablectlError("internal: award arithmetic disagrees (%d vs %d)" % (meter, meter_after))
    return payments
