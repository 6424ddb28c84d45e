"""`tablectl jackpot`: verify progressive hits, compute the awards, send them authenticated."""
from ..argtypes import ranged
import json

HELP = "verify progressive hands (initial five cards), compute the awards and pay them on the board"
EXAMPLE = 'tablectl jackpot --seat 3 --cards "As Ks Qs Js Ts" --seat 5 --cards "9h 9d 9s 9c 2h"'


def add_arguments(p):
    from ..client import add_target_arguments
    add_target_arguments(p)
    p.add_argument("--seat", type=ranged(1, 8), action="append", required=True, help="seat 1-8 (repeat per winner)")
    p.add_argument("--cards", action="append", required=True, help="that seat's initial five cards")
    p.add_argument("--dry-run", action="store_true", help="compute and show, pay nothing")
    p.add_argument("--json", action="store_true")


def run(args):
    import os

    from tablegames.poker import require_core
    from ..client import Target, control_path
    if not (args.db and os.path.exists(control_path(args.db))):
        # Straight to the board: the hands are verified here, with the C core; say so before the
        # board is reached. (Through the service, the service verifies them with its own.)
        require_core("jackpot (verifying the hands)")
    from tablegames.progressive import options_text
    from .board import dollars
    if len(args.seat) != len(args.cards):
        from ..errors import TablectlError
        raise TablectlError("give one --cards for every --seat")
    with Target(args) as t:
        # The straight-flush and fixed-from-meter options are the table's, set on the board in
        # SERVICE (rulebook 000 rule 9.3: "chosen when the game is put into play"), never per run:
        # the awards are computed from the board's own configuration (awards.pay_jackpot).
        result = t.jackpot(list(zip(args.seat, args.cards)), args.dry_run)
    if result.get("linked"):
        return _print_linked(result, args.json)
    base = result["meter_before"]
    results = result["payments"]
    if args.json:
        print(json.dumps({"round": result["round"], "meter_cents": base, "options": result["options"],
                          "payments": results}))
    else:
        print("round %d, meter %s; %s; paid left to right:" % (result["round"], dollars(base),
                                                               options_text(result["options"])))
        for r in results:
            if r["amount_cents"] is None:
                # Paid before, and the books do not hold its award yet (a dry run sends nothing).
                print("  seat %d  %-15s  paid before: what was paid is in the board's award event "
                      "(tablectl audit, once the service has filed it)" % (r["seat"], r["hand"]))
            elif r["meter_cents"] is None:
                print("  seat %d  %-15s %12s  (paid before: the board repeated its first reply; the meter and "
                      "house parts are in its award event)  meter after %s" % (
                          r["seat"], r["hand"], dollars(r["amount_cents"]),
                          dollars(r.get("board_meter_after", r["meter_after"]))))
            else:
                print("  seat %d  %-15s %12s  (meter %s, house %s)  meter after %s%s" % (
                    r["seat"], r["hand"], dollars(r["amount_cents"]), dollars(r["meter_cents"]),
                    dollars(r["house_cents"]), dollars(r.get("board_meter_after", r["meter_after"])),
                    "  (paid before: the board repeated its first reply)" if r.get("repeat") else ""))
            print("          %s" % r["rule"])
        if args.dry_run:
            print("(dry run: nothing paid)")
    return 0


def _print_linked(result, as_json):
    """A linked table's round: the pool's locks paid on the board, the house's fixed awards."""
    from .board import dollars
    if as_json:
        print(json.dumps({"round": result["round"], "pool": result["pool"], "payments": result["payments"]}))
        return 0
    print("round %d, linked to pool %s; paid left to right:" % (result["round"], result["pool"]))
    for r in result["payments"]:
        if r.get("lock_no"):
            print("  seat %d  %-15s %12s  from pool %s, lock #%d (pool meter %s -> %s)%s%s" % (
                r["seat"], r["hand"], dollars(r["amount_cents"]), r["pool"], r["lock_no"], dollars(r["meter_before"]),
                dollars(r["meter_after"]), "" if r.get("pool_confirmed") else
                "  (the pool has not yet taken the board's award: it stays listed as unpaid until it does)",
                "  (paid before: the board repeated its first reply)" if r.get("repeat") else ""))
        else:
            print("  seat %d  %-15s %12s  (house)%s" % (r["seat"], r["hand"], dollars(r["amount_cents"]),
                                                        "  (paid before)" if r.get("repeat") else ""))
        print("          %s" % r["rule"])
    return 0
