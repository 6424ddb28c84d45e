"""The coin-in progressive side bet of seed 000 (Caribbean Draw Poker), as a function of the meter.

Seed 000, rule 9: the award is decided on the player's initial five cards. Schedule: royal
flush 100 % of the meter, straight flush 10 % of the meter or a fixed $5,000 (the licensee
chooses), four of a kind $500, full house $100, flush $50. The return is linear in the meter
M: return(M) = (fixed part + M * share) / wager; the break-even meter solves return(M) = 1.

Per seat, one royal in the round. Several royals in one round split the meter, and a second
award taken after a first one sees a smaller meter: both only lower the figures here, which
are the single-seat values the regulator's sheet quotes.
"""
from fractions import Fraction

from . import cards as C
from . import kernel as kmod
from .sheet import ParSheet, Row

TOTAL = 2598960  # C(52, 5)

# award per category: ("meter", fraction of the meter) or ("fixed", cents)
SCHEDULES = {
    "seed000-10pct": {
        "title": "seed 000 schedule, straight flush 10 % of the meter",
        "awards": {C.ROYAL: ("meter", Fraction(1)), C.STRAIGHT_FLUSH: ("meter", Fraction(1, 10)),
                   C.QUADS: ("fixed", 50000), C.FULL_HOUSE: ("fixed", 10000), C.FLUSH: ("fixed", 5000)},
    },
    "seed000-fixed5000": {
        "title": "seed 000 schedule, straight flush a fixed $5,000",
        "awards": {C.ROYAL: ("meter", Fraction(1)), C.STRAIGHT_FLUSH: ("fixed", 500000),
                   C.QUADS: ("fixed", 50000), C.FULL_HOUSE: ("fixed", 10000), C.FLUSH: ("fixed", 5000)},
    },
}
DEFAULT_WAGER_CENTS = 100  # one $1 token


def category_counts():
    return kmod.kernel().category_counts5()


def linear_return(schedule, wager_cents=DEFAULT_WAGER_CENTS, counts=None):
    """(fixed, slope): expected award per token = fixed + slope * meter, in tokens (meter in cents)."""
    counts = category_counts() if counts is None else counts
    fixed = Fraction(0)
    slope = Fraction(0)
    for cat, (kind, amount) in SCHEDULES[schedule]["awards"].items():
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
    """The meter (cents, exact Fraction) at which the side bet returns exactly its wager."""
    fixed, slope = linear_return(schedule, wager_cents)
    return (1 - fixed) / slope


def sheet(schedule="seed000-10pct", meter_cents=None, wager_cents=DEFAULT_WAGER_CENTS):
    if schedule not in SCHEDULES:
        raise KeyError(schedule)
    counts = category_counts()
    be = break_even_meter(schedule, wager_cents)
    meter = be if meter_cents is None else Fraction(meter_cents)
    rows = []
    for cat in (C.ROYAL, C.STRAIGHT_FLUSH, C.QUADS, C.FULL_HOUSE, C.FLUSH):
        kind, amount = SCHEDULES[schedule]["awards"][cat]
        award = meter * amount if kind == "meter" else Fraction(amount)
        rows.append(Row(C.CATEGORIES[cat], counts[cat], award / wager_cents - 1))
    rest = TOTAL - sum(counts[c] for c in (C.ROYAL, C.STRAIGHT_FLUSH, C.QUADS, C.FULL_HOUSE, C.FLUSH))
    rows.append(Row("anything else", rest, Fraction(-1)))
    fixed, slope = linear_return(schedule, wager_cents, counts)
    strategy = [
        "no decisions: the award is settled on the initial five cards",
        "return per token = %.10f + meter x %.6e per cent of meter" % (float(fixed), float(slope)),
        "break-even meter: $%s" % _dollars(be),
    ]
    for m in (2000000, 5000000, 10000000, 20000000, 30000000, 40000000):
        strategy.append("meter $%s: return %.4f %%" % (_dollars(Fraction(m)), 100 * float(fixed + slope * m)))
    s = ParSheet(
        game="progressive", paytable=schedule,
        title="Progressive side bet (%s), $%s token, meter $%s" % (SCHEDULES[schedule]["title"],
                                                                   _dollars(Fraction(wager_cents)), _dollars(meter)),
        total=TOTAL, rows=rows, unit="token", strategy=strategy,
        notes=["one seat: several royals in one round split the meter, which only lowers the return",
               "whether fixed awards come out of the meter does not change a seat's return"],
        extra={"break_even_meter_cents": {"exact": "%d/%d" % (be.numerator, be.denominator), "value": float(be)},
               "return_fixed_part": float(fixed), "return_per_meter_cent": float(slope)},
    )
    return s.check()


def _dollars(cents):
    return "{:,.2f}".format(float(cents) / 100)


def plot(schedules, path, wager_cents=DEFAULT_WAGER_CENTS):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 5))
    top = max(float(break_even_meter(s, wager_cents)) for s in schedules) * 1.5
    for s in schedules:
        fixed, slope = linear_return(s, wager_cents)
        xs = [0, top]
        ax.plot([x / 100 for x in xs], [100 * float(fixed + slope * int(x)) for x in xs], label=SCHEDULES[s]["title"])
        be = float(break_even_meter(s, wager_cents))
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
