"""`tablectl report meters|coin-in|jackpots`: the books, read back from the ledger.

Every figure is summed in integer cents and only formatted as dollars at the end; the chart
converts cents to dollars for its axis only.

  meters    the progressive meter after every event that moved it (the "meter" value of the
            event's patch: coins, awards, corrections)
  coin-in   tokens and money in per seat (seats shown 1-based) and per hour; money in is
            tokens x the token value in force (config events change it), contributions are the
            meter increments the board booked
  jackpots  every award: seat, hand, amount, whether paid from the meter and reset, the meter
            before and after
"""
import csv
import datetime
import json
import os

from ..errors import TablectlError
from ..seats import seat_label

HELP = "meter history, coin-in per seat and per hour, jackpot history (table, CSV, PNG chart)"
EXAMPLE = "tablectl report coin-in --db casino.db --from 2024-06-01 --to 2024-06-02 --csv coin.csv --plot coin.png"

DEFAULT_TOKEN_CENTS = 100  # firmware/table/config.py's default, until a config event says otherwise


def add_arguments(p):
    p.add_argument("what", choices=("meters", "coin-in", "jackpots"), help="which report")
    p.add_argument("--db", default=os.environ.get("TABLECTL_DB", "tablectl.db"),
                   help="ledger file (default: $TABLECTL_DB or ./tablectl.db)")
    p.add_argument("--board", help="only this board (table)")
    p.add_argument("--from", dest="start", metavar="WHEN",
                   help="from this local time: 2024-06-01, '2024-06-01 18:00', 18:00 (today), or -2h / -30m / -1d")
    p.add_argument("--to", dest="end", metavar="WHEN", help="up to (not including) this time, same forms")
    p.add_argument("--csv", metavar="FILE", help="also write the rows as CSV")
    p.add_argument("--plot", metavar="FILE.png", help="also draw a chart (PNG)")
    p.add_argument("--json", action="store_true", help="print the report as JSON")


# --- helpers -------------------------------------------------------------------------------------
def dollars(cents):
    sign = "-" if cents < 0 else ""
    cents = abs(int(cents))
    return "%s$%s.%02d" % (sign, "{:,}".format(cents // 100), cents % 100)


def plain_dollars(cents):
    """For CSV: 1234.50 style, still exact (built from the integer, never a float)."""
    sign = "-" if cents < 0 else ""
    cents = abs(int(cents))
    return "%s%d.%02d" % (sign, cents // 100, cents % 100)


def parse_when(text, now=None):
    """A time the technician types -> epoch seconds (local time)."""
    now = now or datetime.datetime.now()
    t = text.strip()
    try:
        if t and t[0] == "-" and t[-1] in "smhd" and t[1:-1].isdigit():
            unit = {"s": "seconds", "m": "minutes", "h": "hours", "d": "days"}[t[-1]]
            return (now - datetime.timedelta(**{unit: int(t[1:-1])})).timestamp()
        if t == "today":
            return now.replace(hour=0, minute=0, second=0, microsecond=0).timestamp()
        if len(t) in (4, 5, 7, 8) and ":" in t and "-" not in t:
            parts = [int(x) for x in t.split(":")]
            parts += [0] * (3 - len(parts))
            return now.replace(hour=parts[0], minute=parts[1], second=parts[2], microsecond=0).timestamp()
        return datetime.datetime.fromisoformat(t).timestamp()
    except (ValueError, KeyError):
        raise TablectlError("cannot read the time %r: use 2024-06-01, '2024-06-01 18:00', 18:00, today, "
                            "or -2h / -30m / -1d" % text)


def stamp(epoch):
    return datetime.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:%M:%S")


def hour_of(epoch):
    return datetime.datetime.fromtimestamp(epoch).strftime("%Y-%m-%d %H:00")


def _in_range(e, start, end):
    t = e["recorded_at"]
    return (start is None or t >= start) and (end is None or t < end)


def load_events(ledger, board, kinds, start, end):
    return [e for e in ledger.events(board, kinds) if _in_range(e, start, end)]


# --- the three reports (pure: a list of ledger events in, a dict out) ---------------------------
def meter_history(events):
    rows = []
    for e in events:
        patch = e["body"].get("p") or {}
        if "meter" not in patch:
            continue
        rows.append({"time": e["recorded_at"], "board": e["board"], "seq": e["seq"], "kind": e["kind"],
                     "meter_cents": int(patch["meter"])})
    summary = {}
    for r in rows:
        s = summary.setdefault(r["board"], {"first_cents": r["meter_cents"], "low_cents": r["meter_cents"],
                                            "high_cents": r["meter_cents"], "changes": 0})
        s["last_cents"] = r["meter_cents"]
        s["low_cents"] = min(s["low_cents"], r["meter_cents"])
        s["high_cents"] = max(s["high_cents"], r["meter_cents"])
        s["changes"] += 1
    return {"rows": rows, "boards": summary}


def coin_in(events):
    token_cents = {}  # board -> token value in force
    seats = {}  # (board, seat) -> {tokens, cents, contrib_cents}
    hours = {}  # (board, hour) -> {tokens, cents, contrib_cents, seats: {seat: tokens}}
    total = {"tokens": 0, "cents": 0, "contrib_cents": 0}
    for e in events:
        body = e["body"]
        board = e["board"]
        if e["kind"] == "config":
            cfg = (body.get("p") or {}).get("cfg") or {}
            if "token_cents" in cfg:
                token_cents[board] = int(cfg["token_cents"])
            continue
        if e["kind"] != "coin":
            continue
        seat = seat_label(int(body["seat"]))
        value = token_cents.get(board, DEFAULT_TOKEN_CENTS)
        inc = int(body.get("inc", 0))
        for bucket in (seats.setdefault((board, seat), {"tokens": 0, "cents": 0, "contrib_cents": 0}),
                       hours.setdefault((board, hour_of(e["recorded_at"])),
                                        {"tokens": 0, "cents": 0, "contrib_cents": 0, "seats": {}}),
                       total):
            bucket["tokens"] += 1
            bucket["cents"] += value
            bucket["contrib_cents"] += inc
        h = hours[(board, hour_of(e["recorded_at"]))]["seats"]
        h[seat] = h.get(seat, 0) + 1
    return {
        "seats": [dict(board=b, seat=s, **v) for (b, s), v in sorted(seats.items())],
        "hours": [dict(board=b, hour=h, **v) for (b, h), v in sorted(hours.items())],
        "total": total,
    }


def jackpot_history(events):
    rows = []
    for e in events:
        if e["kind"] != "award":
            continue
        b = e["body"]
        patch = b.get("p") or {}
        before = int(b.get("meter_before", 0))
        rows.append({"time": e["recorded_at"], "board": e["board"], "seq": e["seq"],
                     "seat": seat_label(int(b["seat"])), "hand": b.get("hand", ""), "amount_cents": int(b["amount"]),
                     "from_meter": bool(b.get("from_meter")), "reset": bool(b.get("reset")),
                     "meter_before_cents": before, "meter_after_cents": int(patch.get("meter", before))})
    total = sum(r["amount_cents"] for r in rows)
    from_meter = sum(r["amount_cents"] for r in rows if r["from_meter"])
    return {"rows": rows, "total_cents": total, "from_meter_cents": from_meter, "hits": len(rows)}


REPORTS = {
    "meters": (None, meter_history),
    "coin-in": (["coin", "config"], coin_in),
    "jackpots": (["award"], jackpot_history),
}


# --- text ----------------------------------------------------------------------------------------
def text_meters(rep):
    lines = []
    if not rep["rows"]:
        return ["no meter changes in the ledger for this period"]
    lines.append("%-19s  %-10s %7s  %-10s %16s" % ("time", "board", "seq", "event", "meter"))
    for r in rep["rows"]:
        lines.append("%-19s  %-10s %7s  %-10s %16s" % (stamp(r["time"]), r["board"], r["seq"], r["kind"],
                                                      dollars(r["meter_cents"])))
    lines.append("")
    for board, s in sorted(rep["boards"].items()):
        lines.append("%s: %d changes, from %s to %s (change %s), low %s, high %s" % (
            board, s["changes"], dollars(s["first_cents"]), dollars(s["last_cents"]),
            dollars(s["last_cents"] - s["first_cents"]), dollars(s["low_cents"]), dollars(s["high_cents"])))
    return lines


def text_coin_in(rep):
    if not rep["seats"]:
        return ["no tokens in the ledger for this period"]
    lines = ["coin-in per seat", "  %-10s %4s %7s %14s %14s" % ("board", "seat", "tokens", "coin-in", "to meter")]
    for r in rep["seats"]:
        lines.append("  %-10s %4d %7d %14s %14s" % (r["board"], r["seat"], r["tokens"], dollars(r["cents"]),
                                                    dollars(r["contrib_cents"])))
    lines += ["", "coin-in per hour",
              "  %-10s %-16s %7s %14s %14s  %s" % ("board", "hour", "tokens", "coin-in", "to meter", "tokens by seat")]
    for r in rep["hours"]:
        by_seat = " ".join("%d:%d" % (s, n) for s, n in sorted(r["seats"].items()))
        lines.append("  %-10s %-16s %7d %14s %14s  %s" % (r["board"], r["hour"], r["tokens"], dollars(r["cents"]),
                                                          dollars(r["contrib_cents"]), by_seat))
    t = rep["total"]
    lines += ["", "total: %d tokens, coin-in %s, to the meter %s" % (t["tokens"], dollars(t["cents"]),
                                                                   dollars(t["contrib_cents"]))]
    return lines


def text_jackpots(rep):
    if not rep["rows"]:
        return ["no jackpots in the ledger for this period"]
    # the hand column as wide as its longest name: "four of a kind, kings, 2 kicker" is not cut
    hand_w = max([4] + [len(r["hand"] or "-") for r in rep["rows"]])
    row = "%-19s  %-10s %4s  %-" + str(hand_w) + "s %14s  %-6s %-5s %16s %16s"
    lines = [row % ("time", "board", "seat", "hand", "amount", "meter", "reset", "meter before", "meter after")]
    for r in rep["rows"]:
        lines.append(row % (
            stamp(r["time"]), r["board"], r["seat"], r["hand"] or "-", dollars(r["amount_cents"]),
            "yes" if r["from_meter"] else "no", "yes" if r["reset"] else "no",
            dollars(r["meter_before_cents"]), dollars(r["meter_after_cents"])))
    lines += ["", "%d jackpots, %s paid, of which %s from the progressive meter" % (
        rep["hits"], dollars(rep["total_cents"]), dollars(rep["from_meter_cents"]))]
    return lines


TEXT = {"meters": text_meters, "coin-in": text_coin_in, "jackpots": text_jackpots}


# --- CSV -----------------------------------------------------------------------------------------
def write_csv(what, rep, path):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        if what == "meters":
            w.writerow(["time", "board", "seq", "event", "meter_cents", "meter_dollars"])
            for r in rep["rows"]:
                w.writerow([stamp(r["time"]), r["board"], r["seq"], r["kind"], r["meter_cents"],
                            plain_dollars(r["meter_cents"])])
        elif what == "coin-in":
            w.writerow(["section", "board", "seat_or_hour", "tokens", "coin_in_cents", "coin_in_dollars",
                        "to_meter_cents"])
            for r in rep["seats"]:
                w.writerow(["seat", r["board"], r["seat"], r["tokens"], r["cents"], plain_dollars(r["cents"]),
                            r["contrib_cents"]])
            for r in rep["hours"]:
                w.writerow(["hour", r["board"], r["hour"], r["tokens"], r["cents"], plain_dollars(r["cents"]),
                            r["contrib_cents"]])
        else:
            w.writerow(["time", "board", "seq", "seat", "hand", "amount_cents", "amount_dollars", "from_meter",
                        "reset", "meter_before_cents", "meter_after_cents"])
            for r in rep["rows"]:
                w.writerow([stamp(r["time"]), r["board"], r["seq"], r["seat"], r["hand"], r["amount_cents"],
                            plain_dollars(r["amount_cents"]), int(r["from_meter"]), int(r["reset"]),
                            r["meter_before_cents"], r["meter_after_cents"]])


# --- charts --------------------------------------------------------------------------------------
def _pyplot():
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    return plt


def _money_axis(ax):
    from matplotlib.ticker import FuncFormatter
    def fmt(v, _):
        low, high = ax.get_ylim()
        cents = abs(v) < 1000 or high - low < 50  # small steps on a big meter still show cents
        return ("${:,.2f}" if cents else "${:,.0f}").format(v)
    ax.yaxis.set_major_formatter(FuncFormatter(fmt))


def _times(epochs):
    return [datetime.datetime.fromtimestamp(t) for t in epochs]


def _time_axis(fig, ax):
    import matplotlib.dates as mdates
    locator = mdates.AutoDateLocator()
    ax.xaxis.set_major_locator(locator)
    ax.xaxis.set_major_formatter(mdates.ConciseDateFormatter(locator))
    ax.set_xlabel("time (local)")


def plot_meters(rep, ax, fig):
    boards = sorted({r["board"] for r in rep["rows"]})
    for board in boards:
        rows = [r for r in rep["rows"] if r["board"] == board]
        xs = _times([r["time"] for r in rows])
        ys = [r["meter_cents"] / 100 for r in rows]  # axis only
        ax.step(xs, ys, where="post", label="meter %s" % board, linewidth=1.6)
        hits = [(x, y) for x, y, r in zip(xs, ys, rows) if r["kind"] == "award"]
        if hits:
            ax.scatter([h[0] for h in hits], [h[1] for h in hits], marker="v", color="crimson", zorder=3,
                       label="jackpot paid (%s)" % board)
        fixes = [(x, y) for x, y, r in zip(xs, ys, rows) if r["kind"] == "correction"]
        if fixes:
            ax.scatter([h[0] for h in fixes], [h[1] for h in fixes], marker="x", color="darkorange", zorder=3,
                       label="correction (%s)" % board)
    ax.set_title("Progressive meter")
    ax.set_ylabel("meter")
    _money_axis(ax)
    _time_axis(fig, ax)
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")


def plot_coin_in(rep, fig):
    ax1, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1, 2]})
    seats = {}
    for r in rep["seats"]:
        seats[r["seat"]] = seats.get(r["seat"], 0) + r["cents"]
    labels = ["seat %d" % s for s in sorted(seats)]
    values = [seats[s] / 100 for s in sorted(seats)]
    bars = ax1.bar(labels, values, color="tab:blue")
    for bar, s in zip(bars, sorted(seats)):
        ax1.annotate(dollars(seats[s]), (bar.get_x() + bar.get_width() / 2, bar.get_height()),
                     ha="center", va="bottom", fontsize=8)
    ax1.set_title("Coin-in per seat")
    ax1.set_ylabel("coin-in")
    _money_axis(ax1)
    ax1.tick_params(axis="x", labelrotation=45)
    ax1.grid(True, axis="y", alpha=0.3)
    hours = sorted({r["hour"] for r in rep["hours"]})
    all_seats = sorted({s for r in rep["hours"] for s in r["seats"]})
    bottom = [0] * len(hours)
    # tokens per hour stacked by seat (a token's value is in the per-seat chart)
    for seat in all_seats:
        heights = []
        for h in hours:
            heights.append(sum(r["seats"].get(seat, 0) for r in rep["hours"] if r["hour"] == h))
        ax2.bar([h[5:] for h in hours], heights, bottom=bottom, label="seat %d" % seat)
        bottom = [b + v for b, v in zip(bottom, heights)]
    ax2.set_title("Tokens per hour, by seat")
    ax2.set_ylabel("tokens")
    ax2.set_xlabel("hour (local)")
    ax2.tick_params(axis="x", labelrotation=45)
    ax2.grid(True, axis="y", alpha=0.3)
    ax2.legend(fontsize="small", ncol=2)


def plot_jackpots(rep, ax, fig):
    """One bar per jackpot, in the order paid, its time under it: several hits in one minute
    stand side by side instead of on top of each other (on a time axis they would share a
    pixel column), and each label has its own column. The gaps between hits are in the ticks'
    times and in the table."""
    rows = rep["rows"]
    n = len(rows)
    xs = list(range(n))
    amounts = [r["amount_cents"] / 100 for r in rows]  # axis only
    colors = ["crimson" if r["from_meter"] else "tab:gray" for r in rows]
    ax.bar(xs, amounts, color=colors, width=0.6)
    # Labels: full above each bar while they fit; with many hits, the amount only, turned upright.
    top = max(amounts + [1])
    upright = n > 10
    for x, y, r in zip(xs, amounts, rows):
        if n <= 10:
            text = "seat %d\n%s\n%s" % (r["seat"], _wrap(r["hand"] or "-", 18), dollars(r["amount_cents"]))
        elif n <= 60:
            text = "seat %d %s" % (r["seat"], dollars(r["amount_cents"]))
        else:
            continue  # the table has them; the bars still show the amounts
        ax.annotate(text, (x, y), textcoords="offset points", xytext=(0, 4), ha="center", va="bottom",
                    fontsize=8 if n <= 20 else 7, rotation=90 if upright else 0)
    # Ticks: the time of each hit, the date where it changes (and on the first).
    labels = []
    last_day = None
    for r in rows:
        t = datetime.datetime.fromtimestamp(r["time"])
        day = t.strftime("%Y-%m-%d")
        labels.append(t.strftime("%H:%M:%S") + ("\n" + day if day != last_day else ""))
        last_day = day
    step = max(1, n // 24)  # at most about 24 tick labels
    ax.set_xticks(xs[::step])
    ax.set_xticklabels(labels[::step], fontsize=8, rotation=0 if n <= 8 else 45,
                       ha="center" if n <= 8 else "right")
    ax.set_xlim(-0.75, n - 0.25)
    ax.set_xlabel("jackpots in the order paid (local time of each)")
    ax.set_title("Jackpots paid (red: from the progressive meter, grey: a fixed sum)")
    ax.set_ylabel("amount")
    ax.set_ylim(bottom=0, top=top * (1.45 if n <= 10 else 1.35 if n <= 60 else 1.1))
    _money_axis(ax)
    ax.grid(True, axis="y", alpha=0.3)


def _wrap(text, width):
    """A hand name on lines of at most `width` characters, broken at its commas or spaces."""
    import textwrap
    return "\n".join(textwrap.wrap(text, width)) or text


def write_plot(what, rep, path, subtitle=""):
    plt = _pyplot()
    fig = plt.figure(figsize=(11, 5.5), dpi=100)
    try:
        if what == "coin-in":
            plot_coin_in(rep, fig)
        else:
            ax = fig.add_subplot(1, 1, 1)
            (plot_meters if what == "meters" else plot_jackpots)(rep, ax, fig)
        if subtitle:
            fig.suptitle(subtitle, fontsize=9, color="dimgray", y=0.995)
        fig.tight_layout()
        fig.savefig(path)
    finally:
        plt.close(fig)


def _empty(what, rep):
    return not (rep["rows"] if what != "coin-in" else rep["seats"])


PLOT_FORMATS = (".png", ".svg", ".pdf")


def _check_output(label, path):
    """Before any work: a file we cannot write is refused naming it (not the board's fault)."""
    if not path:
        return
    if label == "--plot" and os.path.splitext(path)[1].lower() not in PLOT_FORMATS:
        raise TablectlError("--plot %s: the chart is written as %s; give a file name ending so"
                            % (path, ", ".join(PLOT_FORMATS)))
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise TablectlError("%s %s: folder %s does not exist" % (label, path, folder))
    if os.path.isdir(path):
        raise TablectlError("%s %s is a folder; give a file name" % (label, path))


def run(args):
    from ..ledger import Ledger
    if not os.path.exists(args.db):
        raise TablectlError("no ledger at %s: give --db FILE (the one `tablectl serve --db` writes)" % args.db)
    start = parse_when(args.start) if args.start else None
    end = parse_when(args.end) if args.end else None
    if start is not None and end is not None and end <= start:
        raise TablectlError("--to must be after --from")
    for label, path in (("--csv", args.csv), ("--plot", args.plot)):
        _check_output(label, path)
    ledger = Ledger(args.db, readonly=True)
    try:
        kinds, build = REPORTS[args.what]
        rep = build(load_events(ledger, args.board, kinds, start, end))
    finally:
        ledger.close()
    rep["period"] = {"from": stamp(start) if start else None, "to": stamp(end) if end else None,
                     "board": args.board}
    if args.csv:
        write_csv(args.what, rep, args.csv)
    if args.plot:
        if _empty(args.what, rep):
            raise TablectlError("nothing to plot: the ledger has no %s for this period" % args.what)
        sub = "ledger %s%s%s%s" % (os.path.basename(args.db), ", board %s" % args.board if args.board else "",
                                   ", from %s" % stamp(start) if start else "", ", to %s" % stamp(end) if end else "")
        write_plot(args.what, rep, args.plot, sub)
    if args.json:
        print(json.dumps(rep, indent=1, sort_keys=True))
    else:
        for line in TEXT[args.what](rep):
            print(line)
        for label, path in (("CSV", args.csv), ("chart", args.plot)):
            if path:
                print("%s written to %s" % (label, path))
    return 0
