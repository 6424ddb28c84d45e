"""From verified progressive hands to the award commands the board executes.

The schedule and its arithmetic live once, in the Caribbean Draw game module and its pay table
(tablegames.games.caribbean_draw.pay_progressive, paytables/caribbean-draw-co.json: rulebook 000 rule
9.3, paid left to right, split royals, percentages of the meter as it stands). This module only
adds what the board needs to move its meter (how much of each award comes out of the meter, and
which award resets the meter to its seed) and reads the table's options from the board's
configuration.
"""
from tablegames.errors import GameError
from .games.base import RoundError, load_paytable
from .games.caribbean_draw import DEFAULT_PAYTABLE, _progressive_schedule, pay_progressive, table_options
from .poker import CardError, Five, category_start, hands, parse_cards, rank5

ROYAL_VALUE = 7462  # the strongest five-card value: a royal flush


def parse_hand(text):
    """The initial five cards of a seat (rulebook 000 rule 9.1), with errors that name the card."""
    try:
        return parse_cards(text, 5, what="progressive hand")
    except CardError as exc:
        raise GameError("%s (a progressive hand is the initial five cards, e.g. \"As Ks Qs Js Ts\")" % exc)


def qualifies(cards):
    """The hand's value if it wins a progressive award (flush or better), else None."""
    value = rank5(cards)
    return value if value >= category_start(Five.FLUSH) else None


def hand_name(cards):
    return hands.name(rank5(cards))


# The board's configuration keys (firmware/table/config.py) that carry the table's progressive
# options, and the names the games and PAR code use for them.
def board_options(cfg):
    """The table's progressive options as the board is configured (config_get's "config").

    Rulebook 000 rule 9.3: the straight-flush option is "chosen when the game is put into play", so it
    is a setting of the table (changed only in SERVICE, signed, journaled), read from the board by
    every command that needs it: settle --from-board, jackpot, status, par --from-board."""
    missing = [k for k in ("sf_fixed", "fixed_from_meter", "token_cents", "tokens_per_round") if k not in cfg]
    if missing:
        raise GameError("the board's configuration has no %s: its firmware predates the progressive "
                            "options (rulebook 000 rule 9.3); update it (`tablectl flash`)" % ", ".join(missing))
    if cfg["tokens_per_round"] != 1:
        raise GameError("the board credits %d tokens a seat per round; rulebook 000 rule 3 (and this "
                            "schedule) is one token: set tokens_per_round 1 in SERVICE" % cfg["tokens_per_round"])
    return {"straight_flush_award": "fixed" if cfg["sf_fixed"] else "percent",
            "fixed_awards_from_meter": bool(cfg["fixed_from_meter"]),
            "token_cents": cfg["token_cents"]}


def options_text(opts):
    return "straight flush %s; fixed awards %s; token %s" % (
        "a fixed sum (rule 9.3 option)" if opts["straight_flush_award"] == "fixed" else "10% of the meter",
        "from the meter (house pays what it lacks)" if opts["fixed_awards_from_meter"] else "paid by the house",
        "$%d.%02d" % divmod(opts["token_cents"], 100))


def board_awards(winners, meter_cents, seed_cents, options=None, paytable=DEFAULT_PAYTABLE):
    """winners: [(seat, value)]; options: board_options() of the table (None: the pay table's
    defaults). Returns the payments in order, each with what the board's award command needs:
    amount_cents (paid to the player), meter_cents (taken from the meter; the rest, house_cents,
    the house pays), reset. The short-meter policy is pay_progressive's (docs/GAMES.md)."""
    pt = load_paytable(paytable)
    try:
        opts = table_options(pt, options)
        schedule = _progressive_schedule(pt, opts)
    except RoundError as exc:
        raise GameError(str(exc))
    ordered = sorted(winners, key=lambda w: w[0])
    awards, meter_after = pay_progressive(ordered, meter_cents, seed_cents, schedule,
                                          opts["fixed_awards_from_meter"])
    payments = []
    for award in awards:
        payments.append({"seat": award["seat"], "hand": award["hand"], "amount_cents": award["award_cents"],
                         "meter_cents": award["meter_cents"], "house_cents": award["house_cents"],
                         "reset": award["reset"], "rule": award["rule"],
                         "meter_after": award["meter_after_cents"]})
    return payments
