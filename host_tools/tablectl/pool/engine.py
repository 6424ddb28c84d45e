"""The linked progressive's rules, pure: the meter arithmetic of one token and of one hit, and
the parameters a pool may have. Integer cents only; nothing here touches a database or a clock.

Rulebook 000, rule 3.1: "Multiple Caribbean Stud Poker games and/or Caribbean Draw Poker games may be
linked together with a common progressive jackpot." The arithmetic is the board's own
(firmware/table/app.py: _credit and cmd_award), applied to one meter that many tables feed:

- a token adds increment_cents to the meter up to ceiling_cents; what does not fit goes to the
  overflow; reserve_cents goes to the reserve;
- rulebook 000 rule 9.3: "Royal flush pays 100% of the displayed progressive jackpot; Straight flush
  pays either 10% of the displayed progressive jackpot or pays $5,000". A royal takes the whole
  meter, which restarts from its seed and takes back overflow up to the ceiling; a straight flush
  on the percent option takes 10 % of the meter (rounded down to the cent). The fixed awards
  (and the $5,000 straight-flush option) are paid by the table's house, not from the pool.
"""
from table import meter as table_meter

from ..errors import TablectlError

METER_LIMIT_CENTS = 9999999999  # the board's display limit (firmware/table/config.py)
GAMES = ("caribbean_draw", "caribbean_stud")

# name -> (minimum, maximum, what it is)
PARAMS = {
    "seed_cents": (0, METER_LIMIT_CENTS, "the meter's value after a royal (reset)"),
    "increment_cents": (0, 100000, "what one token adds to the meter"),
    "ceiling_cents": (1, METER_LIMIT_CENTS, "the meter's ceiling; above it increments go to the overflow"),
    "reserve_cents": (0, 100000, "what one token adds to the reserve"),
    "sf_percent": (0, 1, "1: a straight flush pays 10% of the meter; 0: the table's house pays it"),
    "bench": (0, 1, "1: a bench pool, which takes unkeyed boards' tokens and statements (never on a floor)"),
}
DEFAULTS = {"seed_cents": 10000000, "increment_cents": 70, "ceiling_cents": 50000000, "reserve_cents": 0,
            "sf_percent": 1, "bench": 0}

ROYAL = "royal"
STRAIGHT_FLUSH = "straight_flush"


def _whole(v):
    return isinstance(v, int) and not isinstance(v, bool)


def check_params(params):
    """A complete, valid parameter set, or TablectlError naming what is wrong."""
    if not isinstance(params, dict):
        raise TablectlError("pool parameters must be an object of name -> whole number")
    for name in params:
        if name not in PARAMS:
            raise TablectlError("no pool parameter %r (known: %s)" % (name, ", ".join(sorted(PARAMS))))
    out = dict(DEFAULTS)
    out.update(params)
    for name, (low, high, _what) in PARAMS.items():
        if not _whole(out[name]) or not low <= out[name] <= high:
            raise TablectlError("pool parameter %s=%r must be a whole number from %d to %d"
                                % (name, out[name], low, high))
    if out["seed_cents"] > out["ceiling_cents"]:
        raise TablectlError("seed_cents %d is above ceiling_cents %d" % (out["seed_cents"], out["ceiling_cents"]))
    return out


def credit(meter_cents, params):
    """One token: (to_meter, to_over, to_reserve)."""
    increment = params["increment_cents"]
    room = params["ceiling_cents"] - meter_cents
    to_meter = increment if increment <= room else max(room, 0)
    return to_meter, increment - to_meter, params["reserve_cents"]


def hand_kind(cards_text):
    """ROYAL, STRAIGHT_FLUSH or None (not a pool hand) from the initial five cards (rule 9.1)."""
    from tablegames.errors import GameError
    from tablegames.poker import Five, category_start, rank5
    from tablegames.progressive import ROYAL_VALUE, parse_hand
    try:
        value = rank5(parse_hand(cards_text))
    except GameError as exc:
        raise TablectlError(str(exc))
    if value == ROYAL_VALUE:
        return ROYAL
    if value >= category_start(Five.STRAIGHT_FLUSH):
        return STRAIGHT_FLUSH
    return None


def royals(meter_cents, over_cents, params, count):
    """`count` royals in one hand at one table (rulebook 000 rule 3.2: "the royal flush progressive
    jackpot may be divided equally between or among the qualified players"): each takes
    meter // count, in seat order; the last one resets the meter to its seed plus the cents that
    did not divide (none is lost), and the meter takes back overflow up to the ceiling."""
    share = meter_cents // count
    out = []
    meter = meter_cents
    for i in range(count):
        if i < count - 1:
            out.append({"amount_cents": share, "reset": False, "seed_added": 0, "meter_after": meter - share,
                        "over_after": over_cents, "split": count})
            meter -= share
            continue
        # the board's own arithmetic (table.meter): seed after the reset, overflow back to the ceiling
        meter_after, over_after, seed_added = table_meter.after_award(meter, over_cents, share, True, params)
        out.append({"amount_cents": share, "reset": True, "seed_added": seed_added,
                    "meter_after": meter_after, "over_after": over_after, "split": count})
    return out


def hit(meter_cents, over_cents, params, kind):
    """A hit taken from the meter as it stands. Returns a dict: amount_cents (from the meter),
    reset, seed_added, meter_after, over_after."""
    if kind == ROYAL:
        return royals(meter_cents, over_cents, params, 1)[0]
    if kind == STRAIGHT_FLUSH:
        if not params["sf_percent"]:
            raise TablectlError("this pool's straight flush is the fixed $5,000 option: the table's house pays it")
        amount = meter_cents // 10
        return {"amount_cents": amount, "reset": False, "seed_added": 0,
                "meter_after": meter_cents - amount, "over_after": over_cents}
    raise TablectlError("not a pool hand: only a royal flush or a straight flush is paid from the pool "
                        "(rulebook 000 rule 9.3; the fixed awards are the table's)")
