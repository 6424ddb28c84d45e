"""The coin-in progressive side bet of rulebook 000 (Caribbean Draw Poker), as a function of the meter.

Rulebook 000, rule 9: the award is decided on the player's initial five cards. Schedule (rule 9.3):
royal flush 100 % of the meter, straight flush 10 % of the meter or a fixed $5,000 (the licensee
chooses), four of a kind $500, full house $100, flush $50. The return is linear in the meter
M: return(M) = (fixed part + M * share) / token; the break-even meter solves return(M) = 1.

Any schedule in the settlement pay-table format prices here (`tablectl par progressive --paytable
FILE.json --token-cents N`): the same JSON that `tablectl settle` and `tablectl jackpot` pay by,
read and checked by the same code (tablegames.games.caribbean_draw), with the table's options.

Per seat. Every award is paid in full on the displayed meter (docs/GAMES.md, short meter), so a
neighbour's award never lowers a seat's; only royals in the same round divide the meter, which
only lowers the figures here, the single-seat values the regulator's sheet quotes. One token a
seat a round (rule 3); the token is spent, win or lose.
"""
from fractions import Fraction

from ..errors import GameError
from . import cards as C
from . import kernel as kmod
from .sheet import ParSheet, Row

TOTAL = 2598960  # C(52, 5)

# pay-table keys of tablegames.games.caribbean_draw -> the kernel's hand categories
_CATEGORY = {"royal_flush": C.ROYAL, "straight_flush": C.STRAIGHT_FLUSH, "four_of_a_kind": C.QUADS,
             "full_house": C.FULL_HOUSE, "flush": C.FLUSH}
SEED_PAYTABLE = "caribbean-draw-co"
FIXED_SF = SEED_PAYTABLE + "-fixed-sf"
# the named sheets: rulebook 000's pay table with each straight-flush option (the licensee's choice,
# rule 9.3): as the table's defaults say (10 % of the meter), and the fixed $5,000
NAMED = {SEED_PAYTABLE: "percent", FIXED_SF: "fixed"}
DEFAULT_WAGER_CENTS = 100  # one $1 token


def schedule_from_paytable(paytable=SEED_PAYTABLE, options=None):
    """{"title", "paytable", "token_cents", "options", "awards": {category: ("meter", Fraction) |
    ("fixed", cents)}} from a pay table (name or FILE.json) and the table's options (the pay
    table's defaults, overridden by `options`: e.g. tablegames.progressive.board_options)."""
    from ..games.base import load_paytable
    from ..games.caribbean_draw import _progressive_schedule, table_options

    pt = load_paytable(paytable)
    if pt.get("game") != "caribbean-draw":
        from ..games.base import RoundError
        raise RoundError("pay table %s is for %s: the coin-in progressive is rulebook 000's, a caribbean-draw "
                         "pay table" % (pt.get("name"), pt.get("game")))
    opts = table_options(pt, options)
    awards = {}
    for key, spec in _progressive_schedule(pt, opts).items():
        if "percent_of_meter" in spec:
            awards[_CATEGORY[key]] = ("meter", Fraction(spec["percent_of_meter"], 100))
        else:
            awards[_CATEGORY[key]] = ("fixed", spec["cents"])
    sf_kind, sf_amount = awards[C.STRAIGHT_FLUSH]
    sf = ("%s %% of the meter" % _pct(sf_amount) if sf_kind == "meter" else "a fixed $%s" % _dollars(Fraction(sf_amount)))
    return {"title": "%s, straight flush %s" % (pt.get("title", pt["name"]), sf), "paytable": pt["name"],
            "token_cents": opts["token_cents"], "options": opts, "awards": awards}


def _pct(fraction):
    v = fraction * 100
    return str(v.numerator) if v.denominator == 1 else "%.4g" % float(v)


def resolve(schedule):
    """A schedule: a dict from schedule_from_paytable, or one of the NAMED rulebook 000 sheets."""
    if isinstance(schedule, dict):
        return schedule
    if schedule not in NAMED:
        raise GameError("no progressive sheet %r: the named ones are %s, or give a pay table FILE.json"
                        % (schedule, ", ".join(NAMED)))
    return schedule_from_paytable(SEED_PAYTABLE, {"straight_flush_award": NAMED[schedule]})


def category_counts():
    return kmod.kernel().category_counts5()


def linear_return(schedule, wager_cents=DEFAULT_WAGER_CENTS, counts=None):
    """(fixed, slope): expected award per token = fixed + slope * meter, in tokens (meter in cents)."""
    counts = category_counts() if counts is None else counts
    fixed = Fraction(0)
    slope = Fraction(0)
    for cat, (kind, amount) in resolve(schedule)["awards"].items():
        p = Fraction(counts[cat], TOTAL)
        if kind == "meter":
            slope += p * amount / wager_cents
        else:
            fixed += p * Fraction(amount, wager_cents)
    return fixed, slope


def return_at(schedule, meter_cents, wager_cents=DEFAULT_WAGER_CENTS):
    """Expected award per token paid (1 = break-even), exact."""
    fixed, slope = linear_return(schedule, wager_cents)
    return fixed + slope * meter_cents


def break_even_meter(schedule, wager_cents=DEFAULT_WAGER_CENTS):
    """The meter (cents, exact Fraction) at which the side bet returns exactly its wager. A schedule
    whose fixed awards alone return the token or more breaks even at any meter: 0."""
    fixed, slope = linear_return(schedule, wager_cents)
    if fixed >= 1:
        return Fraction(0)
    return (1 - fixed) / slope


def sheet(schedule=SEED_PAYTABLE, meter_cents=None, wager_cents=None):
    """The sheet of a schedule (NAMED, or schedule_from_paytable's dict) for a token of
    wager_cents (default: the table's token_cents), at meter_cents (default: break-even)."""
    sch = resolve(schedule)
    wager_cents = sch["token_cents"] if wager_cents is None else wager_cents
    counts = category_counts()
    be = break_even_meter(sch, wager_cents)
    meter = be if meter_cents is None else Fraction(meter_cents)
    rows = []
    for cat in (C.ROYAL, C.STRAIGHT_FLUSH, C.QUADS, C.FULL_HOUSE, C.FLUSH):
        kind, amount = sch["awards"][cat]
        award = meter * amount if kind == "meter" else Fraction(amount)
        rows.append(Row(C.CATEGORIES[cat], counts[cat], award / wager_cents - 1))
    rest = TOTAL - sum(counts[c] for c in (C.ROYAL, C.STRAIGHT_FLUSH, C.QUADS, C.FULL_HOUSE, C.FLUSH))
    rows.append(Row("anything else", rest, Fraction(-1)))
    fixed, slope = linear_return(sch, wager_cents, counts)
    strategy = [
        "no decisions: the award is settled on the initial five cards",
        "return per token = %.10f + meter x %.6e per cent of meter" % (float(fixed), float(slope)),
        "break-even meter: $%s" % _dollars(be) + (" (the fixed awards alone return the token)" if fixed >= 1 else ""),
    ]
    if meter_cents is not None:
        strategy.append("return at the meter $%s: %.4f %%" % (_dollars(meter), 100 * float(fixed + slope * meter)))
    for m in (2000000, 5000000, 10000000, 20000000, 30000000, 40000000):
        strategy.append("meter $%s: return %.4f %%" % (_dollars(Fraction(m)), 100 * float(fixed + slope * m)))
    name = schedule if isinstance(schedule, str) else sch["paytable"]
    s = ParSheet(
        game="progressive", paytable=name,
        title="Progressive side bet (%s), $%s token, meter $%s" % (sch["title"], _dollars(Fraction(wager_cents)),
                                                                   _dollars(meter)),
        total=TOTAL, rows=rows, unit="token", strategy=strategy,
        notes=["one seat, one token a round (rulebook 000 rule 3), spent win or lose: each pay is the award "
               "less the token",
               "every award is paid in full on the displayed meter (docs/GAMES.md); several royals in one "
               "round divide the meter, which only lowers the return",
               "whether fixed awards come out of the meter does not change a seat's return"],
        extra={"break_even_meter_cents": {"exact": "%d/%d" % (be.numerator, be.denominator), "value": float(be)},
               "return_fixed_part": float(fixed), "return_per_meter_cent": float(slope),
               "token_cents": wager_cents, "options": sch["options"],
               "return_at_meter": {"meter_cents": float(meter), "value": float(fixed + slope * meter)}},
    )
    return s.check()


def _dollars(cents):
    return "{:,.2f}".format(float(cents) / 100)


def plot(schedules, path, wager_cents=None):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    schedules = [resolve(s) for s in schedules]
    fig, ax = plt.subplots(figsize=(8, 5))
    top = max(float(break_even_meter(s, wager_cents or s["token_cents"])) for s in schedules) * 1.5 or 1.0
    for s in schedules:
        token = wager_cents or s["token_cents"]
        fixed, slope = linear_return(s, token)
        xs = [0, top]
        ax.plot([x / 100 for x in xs], [100 * float(fixed + slope * int(x)) for x in xs], label=s["title"])
        be = float(break_even_meter(s, token))
        ax.axvline(be / 100, linestyle=":", color="grey")
        ax.annotate("break-even $%s" % _dollars(Fraction(be)), (be / 100, 100), fontsize=8)
    ax.axhline(100, color="black", linewidth=0.5)
    ax.set_xlabel("meter ($)")
    ax.set_ylabel("return per token (%)")
    ax.legend(fontsize=8)
    ax.set_title("Progressive side bet return against the meter")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
