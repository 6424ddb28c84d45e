"""`tablectl settle GAME ROUND.json`: every wager of a round, its result and the rule applied."""
import json

from ..errors import TablectlError
from tablegames.games import GAMES, paytable_names, settle
from tablegames.games.base import is_paytable_file

HELP = "settle a round of a table game: each wager's result, amount and the rule that decided it"
EXAMPLE = ("tablectl settle caribbean-draw round.json --json\n"
           "  tablectl settle caribbean-draw --format     (the round file's fields, with an example)")


def add_arguments(p):
    p.add_argument("game", choices=sorted(GAMES), help="the game the round was played at")
    p.add_argument("round", nargs="?", help="the round as JSON (seats, wagers in cents, cards, decisions); "
                                            "'-' reads standard input; `--format` shows the game's round file")
    p.add_argument("--format", action="store_true",
                   help="print the game's round-file format (every field, with an example) and its "
                        "settlement order, then exit")
    p.add_argument("--paytable", help="pay table name (default: the round's \"paytable\", else the "
                                      "game's default; tablectl/paytables/*.json), or FILE.json in "
                                      "that format (a house's own schedule)")
    p.add_argument("--from-board", action="store_true",
                   help="caribbean-draw: take the table's progressive options (straight flush, fixed "
                        "awards from the meter, token value, seed) from the board's configuration "
                        "(through the service, or --port); a round that says otherwise is refused")
    from ..client import add_target_arguments
    add_target_arguments(p)
    p.add_argument("--json", action="store_true", help="machine-readable output")


def _money(c):
    sign = "-" if c < 0 else ""
    return "%s$%s" % (sign, "{:,.2f}".format(abs(c) / 100))


def _dealer_cards(d):
    """The dealer's cards in each game's shape: five cards (and the draw), California Draw's
    down cards and up card (rulebook 003), Colorado Hold'em's community cards (rulebook 001)."""
    if d.get("cards"):
        text = d["cards"]
        if d.get("draw"):
            text += " (draws %s: %s)" % (d["draw"], d["final"]) if d.get("final") else " (draws %s)" % d["draw"]
        return text
    if d.get("down") or d.get("up"):
        text = "down %s, up %s" % (d.get("down", ""), d.get("up", ""))
        if d.get("house_hand"):
            text += ", house hand %s" % d["house_hand"]
        return text
    if d.get("community"):
        return "community %s" % d["community"]
    return ""


def _with_board_options(args, rnd):
    """The round with the table's options as the board holds them (rulebook 000 rule 9.3: chosen when
    the game is put into play, so a setting of the table, not of a round file)."""
    from ..client import Target
    from tablegames.progressive import board_options
    if args.game != "caribbean-draw":
        raise TablectlError("--from-board reads the progressive options: only caribbean-draw has the "
                            "progressive (rulebook 000)")
    if not isinstance(rnd, dict):
        raise TablectlError("a round is a JSON object with seats, wagers, cards and decisions")
    with Target(args) as t:
        cfg = t.command("config_get")["config"]
    opts = board_options(cfg)
    given = rnd.get("table") or {}
    if not isinstance(given, dict):
        raise TablectlError("round: 'table' must be an object")
    for key, value in sorted(given.items()):
        if key in opts and value != opts[key]:
            raise TablectlError("the round says table %s = %s but the board is configured %s: the "
                                "option is the table's (rulebook 000 rule 9.3); drop it from the round or "
                                "change the board in SERVICE" % (key, json.dumps(value), json.dumps(opts[key])))
    rnd = dict(rnd, table=dict(given, **opts))
    rnd.setdefault("meter_reset_cents", cfg["seed_cents"])
    return rnd


def run(args):
    import sys

    if args.format:
        # The format lives once, in the game module's docstring; this prints it as it stands.
        from tablegames.games import game_module
        print((game_module(args.game).__doc__ or "").strip())
        return 0
    if args.round is None:
        raise TablectlError("settle %s needs a round file (or '-' for standard input); "
                            "`tablectl settle %s --format` shows its format" % (args.game, args.game))
    from tablegames.poker import require_core
    require_core("settle (hand evaluation)")
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
    if args.paytable and not is_paytable_file(args.paytable) and args.paytable not in paytable_names(args.game):
        raise TablectlError("pay table %r is not one of %s's: %s"
                            % (args.paytable, args.game, ", ".join(paytable_names(args.game))))
    if args.from_board:
        rnd = _with_board_options(args, rnd)
    result = settle(args.game, rnd, args.paytable)
    if args.json:
        print(json.dumps(result.as_dict(), indent=2))
        return 0
    print("%s, pay table %s" % (result.game, result.paytable))
    d = result.dealer
    if d.get("hand") or d.get("community"):
        print("dealer: %s%s%s" % (_dealer_cards(d), " -> " + d["hand"] if d.get("hand") else "",
                                  "" if d.get("qualifies", True) else " (does not qualify)"))
    elif d.get("misdeal"):
        print("dealer: misdeal (the table plays for the progressive only)")
    if result.meter:
        print("meter: %s -> %s" % (_money(result.meter["before_cents"]), _money(result.meter["after_cents"])))
    for i, ln in enumerate(result.lines, 1):
        box = " box %d" % ln.box if ln.box else ""
        amt = {"win": "+" + _money(ln.amount), "lose": "-" + _money(ln.amount), "push": "  push"}[ln.result]
        spent = " (the token is spent: net %s)" % _money(ln.net()) if ln.result == "win" and not ln.stake_returned else ""
        print("%3d. seat %d%s %-11s %9s  %-4s %12s  %s%s%s" % (
            i, ln.seat, box, ln.wager, _money(ln.stake), ln.result, amt, ln.rule, spent,
            " [%s]" % ln.hand if ln.hand else ""))
    for n in result.notes:
        print("note: %s" % n)
    seats = sorted({ln.seat for ln in result.lines})
    print("net: " + ", ".join("seat %d %s" % (s, _money(result.net(s))) for s in seats))
    return 0
