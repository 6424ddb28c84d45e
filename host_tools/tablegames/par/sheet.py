"""A PAR sheet: every outcome of one wager with its exact combination count, and the figures
a regulator reads off it (house edge, element of risk, hit frequency).

Counts are integers, probabilities and pays exact Fractions; floats appear only in the
rendered text and beside the exact values in JSON.
"""
from dataclasses import dataclass, field
from fractions import Fraction


@dataclass
class Row:
    outcome: str
    combinations: int
    pay: Fraction          # net result of the outcome, in units of the base wager
    wagered: Fraction = Fraction(1)  # total staked in this outcome, in units of the base wager


@dataclass
class ParSheet:
    game: str
    paytable: str
    title: str
    total: int                     # every deal, each counted once
    rows: list
    unit: str = "ante"
    strategy: list = field(default_factory=list)    # lines: the player's optimal decisions
    simple: dict = None            # {"description", "expected"} of a documented simple strategy
    notes: list = field(default_factory=list)
    extra: dict = field(default_factory=dict)
    # further exact figures a regulator reads off the sheet: [(label, Fraction, explanation)],
    # e.g. how often the dealer qualifies
    figures: list = field(default_factory=list)

    def check(self):
        got = sum(r.combinations for r in self.rows)
        if got != self.total:
            raise AssertionError("%s: rows sum to %d combinations, expected %d" % (self.title, got, self.total))
        return self

    def probability(self, row):
        return Fraction(row.combinations, self.total)

    @property
    def expected(self):
        """Expected net result per base wager (negative: the house's advantage)."""
        return sum(Fraction(r.combinations) * r.pay for r in self.rows) / self.total

    @property
    def house_edge(self):
        return -self.expected

    @property
    def average_wager(self):
        return sum(Fraction(r.combinations) * r.wagered for r in self.rows) / self.total

    @property
    def element_of_risk(self):
        return -self.expected / self.average_wager

    @property
    def hit_frequency(self):
        return Fraction(sum(r.combinations for r in self.rows if r.pay > 0), self.total)

    def to_dict(self):
        def frac(x):
            return {"exact": "%d/%d" % (x.numerator, x.denominator), "value": float(x)}

        out = {
            "game": self.game,
            "paytable": self.paytable,
            "title": self.title,
            "unit": self.unit,
            "total_combinations": self.total,
            "rows": [
                {
                    "outcome": r.outcome,
                    "combinations": r.combinations,
                    "probability": frac(self.probability(r)),
                    "pay": frac(r.pay),
                    "contribution": frac(self.probability(r) * r.pay),
                }
                for r in self.rows
            ],
            "expected": frac(self.expected),
            "house_edge": frac(self.house_edge),
            "average_wager": frac(self.average_wager),
            "element_of_risk": frac(self.element_of_risk),
            "hit_frequency": frac(self.hit_frequency),
            "strategy": list(self.strategy),
            "notes": list(self.notes),
        }
        if self.simple is not None:
            out["simple_strategy"] = {
                "description": self.simple["description"],
                "expected": frac(self.simple["expected"]),
                "house_edge": frac(-self.simple["expected"]),
            }
        if self.figures:
            out["figures"] = [dict(name=label, explanation=why, **frac(value)) for label, value, why in self.figures]
        if self.extra:
            out["extra"] = self.extra
        return out

    def render(self):
        lines = ["%s  [paytable %s]" % (self.title, self.paytable)]
        lines.append("total deals enumerated: {:,}".format(self.total))
        w = max([len(r.outcome) for r in self.rows] + [8])
        # columns as wide as their widest figure: Caribbean Draw's total has 26 characters
        cw = max([len("{:,}".format(r.combinations)) for r in self.rows] + [len("{:,}".format(self.total)), 12])
        pw = max([len(_pay_text(r.pay)) for r in self.rows] + [4])
        lines.append("%-*s %*s %12s %*s %12s" % (w, "outcome", cw, "combinations", "probability", pw, "pays", "return"))
        for r in self.rows:
            p = self.probability(r)
            lines.append("%-*s %*s %12.8f %*s %12.8f" % (
                w, r.outcome, cw, "{:,}".format(r.combinations), float(p), pw, _pay_text(r.pay), float(p * r.pay)))
        lines.append("%-*s %*s %12.8f %*s %12.8f" % (w, "total", cw, "{:,}".format(self.total), 1.0, pw, "",
                                                     float(self.expected)))
        lines.append("house edge (per %s):   %.4f %%" % (self.unit, 100 * float(self.house_edge)))
        lines.append("element of risk:        %.4f %%  (average total wager %.6f %s)" % (
            100 * float(self.element_of_risk), float(self.average_wager), self.unit))
        lines.append("hit frequency:          %.4f %%" % (100 * float(self.hit_frequency)))
        for label, value, why in self.figures:
            lines.append("%-23s %.4f %%  (%s)" % (label + ":", 100 * float(value), why))
        if self.simple is not None:
            lines.append("simple strategy (%s): house edge %.4f %%" % (
                self.simple["description"], -100 * float(self.simple["expected"])))
        if self.strategy:
            lines.append("optimal strategy:")
            lines.extend("  " + s for s in self.strategy)
        for n in self.notes:
            lines.append("note: " + n)
        return "\n".join(lines)


def _pay_text(pay):
    if pay.denominator == 1:
        return "%+d" % pay.numerator
    return "%+.4f" % float(pay)


def plot(sheets, path):
    """Bar chart of each outcome's contribution to the return, one panel per sheet."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    n = len(sheets)
    fig, axes = plt.subplots(n, 1, figsize=(10, 1.5 + 0.28 * sum(len(s.rows) for s in sheets) + 0.6 * n))
    if n == 1:
        axes = [axes]
    for ax, s in zip(axes, sheets):
        labels = [r.outcome for r in s.rows]
        values = [float(s.probability(r) * r.pay) for r in s.rows]
        ax.barh(range(len(values)), values, color=["tab:green" if v > 0 else "tab:red" for v in values])
        ax.set_yticks(range(len(values)))
        ax.set_yticklabels(labels, fontsize=7)
        ax.invert_yaxis()
        ax.axvline(0, color="black", linewidth=0.5)
        ax.set_title("%s: house edge %.3f %%" % (s.title, 100 * float(s.house_edge)), fontsize=9)
        ax.set_xlabel("contribution to the return, %s" % s.unit, fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
