"""`tablectl par GAME`: the PAR sheet of a game and pay table, by complete enumeration."""
import json
import os
import sys
from fractions import Fraction

from ..errors import TablectlError

HELP = "PAR sheet of a game and pay table: exact return of every outcome, house edge, optimal play"
EXAMPLE = "tablectl par caribbean-stud --paytable seed002-european --plot stud.png   (one hand: --hand 'Ah Kd 7c 4s 2h' --up 9s)"


def add_arguments(parser):
    from ..par.games import GAMES

    lines = ["games and pay tables (first is the default):"]
    for name, spec in GAMES.items():
        tables = [spec["default"]] + [p for p in spec["paytables"] if p != spec["default"]]
        lines.append("  %-18s %s" % (name, ", ".join(tables)))
    parser.epilog = (parser.epilog or "") + "\n\n" + "\n".join(lines)
    parser.add_argument("game", metavar="GAME", help="game name (listed below)")
    parser.add_argument("--paytable", metavar="NAME", help="pay table or version (default: the game's first)")
    parser.add_argument("--json", action="store_true", help="machine-readable output with exact fractions")
    parser.add_argument("--plot", metavar="FILE.png", help="draw each outcome's contribution to the return")
    parser.add_argument("--meter", metavar="DOLLARS", help="progressive only: the meter to price the sheet at "
                        "(default: the break-even meter)")
    parser.add_argument("--hand", metavar="CARDS", help="price one situation instead: every decision open to "
                        "the player with this hand, with its exact expected value")
    parser.add_argument("--up", metavar="CARD", help="with --hand: the dealer's up card (Caribbean Stud, "
                        "clear bet, California Draw)")
    parser.add_argument("--strategy", metavar="FILE", help="caribbean-draw only: also write the optimal play of "
                        "every hand class (gzip; read it with tablectl.par.cdraw.read_strategy)")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def run(args):
    from ..par import games, progressive, sheet as sheet_mod

    if args.game not in games.GAMES:
        raise TablectlError("unknown game %r: choose one of %s" % (args.game, ", ".join(games.GAMES)))
    spec = games.GAMES[args.game]
    if args.paytable is not None and args.paytable not in spec["paytables"]:
        raise TablectlError("%s has no pay table %r: choose one of %s" % (
            args.game, args.paytable, ", ".join(spec["paytables"])))
    options = {}
    if args.meter is not None:
        if args.game != "progressive":
            raise TablectlError("--meter applies to the progressive game only")
        try:
            options["meter_cents"] = Fraction(args.meter.replace(",", "").lstrip("$")) * 100
        except (ValueError, ZeroDivisionError):
            raise TablectlError("--meter %r is not an amount in dollars, e.g. --meter 250000" % args.meter)
        if options["meter_cents"] < 0:
            raise TablectlError("--meter must not be negative")
    progress = False if args.no_progress else None
    if args.strategy is not None and args.game != "caribbean-draw":
        raise TablectlError("--strategy applies to caribbean-draw only (the other sheets list their decisions)")
    if args.hand is not None or args.up is not None:
        return _situation(args, spec)
    if args.strategy is not None:
        folder = os.path.dirname(os.path.abspath(args.strategy))
        if not os.path.isdir(folder):
            raise TablectlError("cannot write --strategy %s: no folder %s" % (args.strategy, folder))
    sheets = games.build(args.game, args.paytable, progress=progress, options=options)
    if args.strategy is not None:
        from ..par import cdraw

        tmp = args.strategy + ".tmp"
        try:
            cdraw.write_strategy(tmp, sheets[0].result, sheets[0])
            os.replace(tmp, args.strategy)
        except OSError as exc:
            raise TablectlError("cannot write --strategy %s: %s" % (args.strategy, exc))
    if args.plot:
        try:
            if args.game == "progressive":
                progressive.plot(list(progressive.SCHEDULES), args.plot)
            else:
                sheet_mod.plot(sheets, args.plot)
        except OSError as exc:
            raise TablectlError("cannot write the plot %s: %s" % (args.plot, exc))
    if args.json:
        json.dump({"game": args.game, "sheets": [s.to_dict() for s in sheets]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print("\n\n".join(s.render() for s in sheets))
    return 0


def _situation(args, spec):
    from ..par import situation

    if args.hand is None:
        raise TablectlError("--up goes with --hand: give the player's cards, e.g. --hand 'As Kd 7c 4h 2s' --up 9s")
    paytable = args.paytable or spec["default"]
    text, opts = situation.render(args.game, paytable, args.hand, args.up)
    if args.json:
        json.dump({"game": args.game, "paytable": paytable, "hand": args.hand, "up": args.up,
                   "decisions": [{"decision": label, "expected": {"exact": "%d/%d" % (ev.numerator, ev.denominator),
                                                                "value": float(ev)}} for label, ev in opts]},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(text)
    return 0
