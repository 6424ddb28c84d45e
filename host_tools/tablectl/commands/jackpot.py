"""`tablectl jackpot`: verify progressive hits, compute the awards, send them authenticated."""
import json
import os

HELP = "verify progressive hands (initial five cards), compute the awards and pay them on the board"
EXAMPLE = 'tablectl jackpot --seat 3 --cards "As Ks Qs Js Ts" --seat 5 --cards "9h 9d 9s 9c 2h"'


def add_arguments(p):
    from ..client import add_target_arguments
    add_target_arguments(p)
    p.add_argument("--seat", type=int, action="append", required=True, help="seat 1-8 (repeat per winner)")
    p.add_argument("--cards", action="append", required=True, help="that seat's initial five cards")
    p.add_argument("--straight-flush", choices=("percent", "fixed"),
                   default=os.environ.get("TABLECTL_SF_PAY", "percent"),
                   help="the table's straight-flush option: 10%% of the meter or $5,000 (seed 000 rule 9.3)")
    p.add_argument("--fixed-from-meter", action="store_true",
                   help="fixed awards come out of the meter (table setting; default: they do not)")
    p.add_argument("--dry-run", action="store_true", help="compute and show, pay nothing")
    p.add_argument("--json", action="store_true")


def run(args):
    from ..client import Target
    from .board import dollars
    if len(args.seat) != len(args.cards):
        from ..errors import TablectlError
        raise TablectlError("give one --cards for every --seat")
    with Target(args) as t:
        result = t.jackpot(list(zip(args.seat, args.cards)), args.straight_flush, args.fixed_from_meter,
                           args.dry_run)
    base = result["meter_before"]
    results = result["payments"]
    if args.json:
        print(json.dumps({"round": result["round"], "meter_at_lockout": base, "payments": results}))
    else:
        print("round %d, meter %s; paid left to right:" % (result["round"], dollars(base)))
        for r in results:
            print("  seat %d  %-15s %12s  %s  meter after %s%s" % (
                r["seat"], r["hand"], dollars(r["amount_cents"]),
                "from meter" if r["meter_cents"] else "fixed     ",
                dollars(r.get("board_meter_after", r["meter_after"])),
                "  (paid before: the board repeated its first reply)" if r.get("repeat") else ""))
            print("          %s" % r["rule"])
        if args.dry_run:
            print("(dry run: nothing paid)")
    return 0
