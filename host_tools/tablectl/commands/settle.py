"""`tablectl settle GAME ROUND.json`: every wager of a round, its result and the rule applied."""
import json

from ..errors import TablectlError
from ..games import GAMES, paytable_names, settle

HELP = "settle a round of a table game: each wager's result, amount and the rule that decided it"
EXAMPLE = "tablectl settle caribbean-draw round.json --json"


def add_arguments(p):
    p.add_argument("game", choices=sorted(GAMES), help="the game the round was played at")
    p.add_argument("round", help="the round as JSON (seats, wagers in cents, cards, decisions); "
                                 "'-' reads standard input. docs/GAMES.md has the format per game")
    p.add_argument("--paytable", help="pay table name (default: the round's \"paytable\", else the "
                                      "game's default); tablectl/paytables/*.json")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _money(c):
    sign = "-" if c < 0 else ""
    return "%s$%s" % (sign, "{:,.2f}".format(abs(c) / 100))


def run(args):
    import sys
    try:
        if args.round == "-":
            rnd = json.load(sys.stdin)
        else:
            with open(args.round) as f:
                rnd = json.load(f)
    except OSError as exc:
        raise TablectlError("cannot read %s: %s" % (args.round, exc.strerror)) from None
    except ValueError as exc:
        raise TablectlError("%s is not valid JSON: %s" % (args.round, exc)) from None
    if args.paytable and args.paytable not in paytable_names(args.game):
        raise TablectlError("pay table %r is not one of %s's: %s"
                            % (args.paytable, args.game, ", ".join(paytable_names(args.game))))
    result = settle(args.game, rnd, args.paytable)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
        return 0
    print("%s, pay table %s" % (result.game, result.paytable))
    d = result.dealer
    if d.get("hand"):
        print("dealer: %s -> %s%s" % (d.get("cards", ""), d["hand"],
                                      "" if d.get("qualifies", True) else " (does not qualify)"))
    if result.meter:
        print("meter: %s -> %s" % (_money(result.meter["before_cents"]), _money(result.meter["after_cents"])))
    for i, ln in enumerate(result.lines, 1):
        box = " box %d" % ln.box if ln.box else ""
        amt = {"win": "+" + _money(ln.amount), "lose": "-" + _money(ln.amount), "push": "  push"}[ln.result]
        print("%3d. seat %d%s %-11s %9s  %-4s %12s  %s%s" % (
            i, ln.seat, box, ln.wager, _money(ln.stake), ln.result, amt, ln.rule,
            " [%s]" % ln.hand if ln.hand else ""))
    for n in result.notes:
        print("note: %s" % n)
    seats = sorted({ln.seat for ln in result.lines})
    print("net: " + ", ".join("seat %d %s" % (s, _money(result.net(s))) for s in seats))
    return 0
