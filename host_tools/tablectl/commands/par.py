"""`tablectl par GAME`: the PAR sheet of a game and pay table, by complete enumeration."""
import json
import os
import sys
from fractions import Fraction

from ..errors import TablectlError

HELP = "PAR sheet of a game and pay table: exact return of every outcome, house edge, optimal play"
EXAMPLE = "tablectl par caribbean-stud --paytable caribbean-stud-eu --plot stud.png   (one hand: --hand 'Ah Kd 7c 4s 2h' --up 9s)"


def add_arguments(parser):
    from tablegames.par.games import GAMES

    lines = ["games and pay tables (first is the default; the names `tablectl settle` and "
             "tablegames/paytables/*.json use):"]
    for name, spec in GAMES.items():
        tables = [spec["default"]] + [p for p in spec["paytables"] if p != spec["default"]]
        lines.append("  %-21s %s" % (name, ", ".join(tables)))
    parser.epilog = (parser.epilog or "") + "\n\n" + "\n".join(lines)
    parser.add_argument("game", metavar="GAME", help="game name (listed below)")
    parser.add_argument("--paytable", metavar="NAME", help="pay table or version (default: the game's first); "
                        "progressive: also a caribbean-draw pay table by name or FILE.json in the format "
                        "`tablectl settle` uses (tablegames/paytables/caribbean-draw-co.json)")
    parser.add_argument("--json", action="store_true", help="machine-readable output with exact fractions")
    parser.add_argument("--plot", metavar="FILE.png", help="draw each outcome's contribution to the return")
    parser.add_argument("--meter", metavar="DOLLARS", help="progressive only: the meter to price the sheet at "
                        "(default: the break-even meter)")
    parser.add_argument("--token-cents", metavar="N", type=int, help="progressive only: the token's value in cents "
                        "(default: the pay table's, $1)")
    parser.add_argument("--from-board", action="store_true", help="progressive only: the table's options (straight "
                        "flush, token) as the board is configured (through the service, or --port)")
    parser.add_argument("--port", default=os.environ.get("TABLECTL_PORT"), help="with --from-board: board port")
    parser.add_argument("--db", default=os.environ.get("TABLECTL_DB", "tablectl.db"),
                        help="with --from-board: ledger whose service talks to the board")
    parser.add_argument("--board", help="with --from-board: board id, when the service runs several tables")
    parser.add_argument("--hand", metavar="CARDS", help="price one situation instead: every decision open to "
                        "the player with this hand, with its exact expected value")
    parser.add_argument("--up", metavar="CARD", help="with --hand: the dealer's up card (Caribbean Stud, "
                        "clear and dark bets, California Draw)")
    parser.add_argument("--strategy", metavar="FILE", help="caribbean-draw only: also write the optimal play of "
                        "every hand class (gzip; read it with tablegames.par.cdraw.read_strategy)")
    parser.add_argument("--checkpoint", metavar="FILE", help="caribbean-draw only: where the run keeps its progress "
                        "(default: ~/.cache/tablectl/par/); after Ctrl-C the same command resumes from it")
    parser.add_argument("--restart", action="store_true", help="caribbean-draw only: ignore a kept checkpoint and "
                        "start the enumeration over")
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")


def run(args):
    from tablegames.par import games, sheet as sheet_mod

    if args.game not in games.GAMES:
        raise TablectlError("unknown game %r: choose one of %s" % (args.game, ", ".join(games.GAMES)))
    spec = games.GAMES[args.game]
    if args.game != "progressive" and (args.token_cents is not None or args.from_board):
        raise TablectlError("--token-cents and --from-board apply to the progressive game only")
    if args.game == "progressive" and args.hand is None and args.up is None:
        return _progressive(args)
    if args.paytable is not None and args.paytable not in spec["paytables"]:
        raise TablectlError("%s has no pay table %r: choose one of %s" % (
            args.game, args.paytable, ", ".join(spec["paytables"])))
    if args.meter is not None:
        raise TablectlError("--meter applies to the progressive game only")
    progress = False if args.no_progress else None
    if args.strategy is not None and args.game != "caribbean-draw":
        raise TablectlError("--strategy applies to caribbean-draw only (the other sheets list their decisions)")
    if args.hand is not None or args.up is not None:
        return _situation(args, spec)
    if args.strategy is not None:
        folder = os.path.dirname(os.path.abspath(args.strategy))
        if not os.path.isdir(folder):
            raise TablectlError("cannot write --strategy %s: no folder %s" % (args.strategy, folder))
    if (args.checkpoint is not None or args.restart) and args.game != "caribbean-draw":
        raise TablectlError("--checkpoint and --restart apply to caribbean-draw only (the other sheets take seconds)")
    options, ckpt = {}, None
    if args.game == "caribbean-draw":
        from tablegames.par import cdraw

        if args.checkpoint is not None and os.path.isdir(args.checkpoint):
            raise TablectlError("--checkpoint %s is a folder: give a file name in it" % args.checkpoint)
        if args.checkpoint is not None and not os.path.isdir(os.path.dirname(os.path.abspath(args.checkpoint))):
            raise TablectlError("cannot keep --checkpoint %s: no folder %s"
                                % (args.checkpoint, os.path.dirname(os.path.abspath(args.checkpoint))))
        ckpt = options["checkpoint"] = cdraw.checkpoint(args.checkpoint, restart=args.restart)
    try:
        sheets = games.build(args.game, args.paytable, progress=progress, options=options)
    except KeyboardInterrupt:
        if ckpt is None:
            raise
        print("%stablectl: %s" % ("\n" if sys.stderr.isatty() else "", ckpt.where()), file=sys.stderr, flush=True)
        return 130
    if args.strategy is not None:
        from tablegames.par import cdraw

        tmp = args.strategy + ".tmp"
        try:
            cdraw.write_strategy(tmp, sheets[0].result, sheets[0])
            os.replace(tmp, args.strategy)
        except OSError as exc:
            raise TablectlError("cannot write --strategy %s: %s" % (args.strategy, exc))
    if args.plot:
        try:
            sheet_mod.plot(sheets, args.plot)
        except OSError as exc:
            raise TablectlError("cannot write the plot %s: %s" % (args.plot, exc))
    if args.json:
        json.dump({"game": args.game, "sheets": [s.to_dict() for s in sheets]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print("\n\n".join(s.render() for s in sheets))
    if ckpt is not None:
        ckpt.remove()  # the run is complete and printed: nothing left to resume
    return 0


def _progressive(args):
    """`par progressive`: any schedule in the settlement pay-table format, any token, the table's
    options from the board if asked; the break-even meter and the return at --meter."""
    from tablegames.games.base import RoundError
    from tablegames.par import progressive

    if args.strategy is not None:
        raise TablectlError("--strategy applies to caribbean-draw only (the other sheets list their decisions)")
    meter = None
    if args.meter is not None:
        try:
            meter = Fraction(args.meter.replace(",", "").lstrip("$")) * 100
        except (ValueError, ZeroDivisionError):
            raise TablectlError("--meter %r is not an amount in dollars, e.g. --meter 250000" % args.meter)
        if meter < 0:
            raise TablectlError("--meter must not be negative")
    if args.token_cents is not None and args.token_cents <= 0:
        raise TablectlError("--token-cents must be the token's value in whole cents, above 0 (e.g. 100 for $1)")
    options = None
    if args.from_board:
        from ..client import Target
        from tablegames.progressive import board_options

        with Target(args) as t:
            options = board_options(t.command("config_get")["config"])
        if args.token_cents is not None and args.token_cents != options["token_cents"]:
            raise TablectlError("--token-cents %d, but the board's token is %d cents: price the table as it "
                                "is configured, or drop --from-board" % (args.token_cents, options["token_cents"]))
    if options is not None and args.paytable == progressive.FIXED_SF:
        raise TablectlError("--from-board takes the straight-flush option from the board: give a pay table "
                            "(%s or FILE.json), not %s" % (progressive.SEED_PAYTABLE, args.paytable))
    named = options is None and (args.paytable is None or args.paytable in progressive.NAMED)
    try:
        if named:
            schedule = args.paytable or progressive.SEED_PAYTABLE
            names = list(progressive.NAMED)
        else:
            schedule = progressive.schedule_from_paytable(args.paytable or progressive.SEED_PAYTABLE, options)
            names = [schedule]
        sheet = progressive.sheet(schedule, meter_cents=meter, wager_cents=args.token_cents)
    except RoundError as exc:
        raise TablectlError(str(exc))
    if args.plot:
        try:
            progressive.plot(names, args.plot, wager_cents=args.token_cents)
        except OSError as exc:
            raise TablectlError("cannot write the plot %s: %s" % (args.plot, exc))
    if args.json:
        json.dump({"game": args.game, "sheets": [sheet.to_dict()]}, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        print(sheet.render())
    return 0


def _situation(args, spec):
    from tablegames.par import situation

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
