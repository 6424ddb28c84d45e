"""`tablectl jackpot`: verify progressive hits, compute the awards, send them authenticated."""
import json

HELP = "verify progressive hands (initial five cards), compute the awards and pay them on the board"
EXAMPLE = 'tablectl jackpot --seat 3 --cards "As Ks Qs Js Ts" --seat 5 --cards "9h 9d 9s 9c 2h"'


def add_arguments(p):
    from ..client import add_target_arguments
    add_target_arguments(p)
    p.add_argument("--seat", type=int, action="append", required=True, help="seat 1-8 (repeat per winner)")
    p.add_argument("--cards", action="append", required=True, help="that seat's initial five cards")
    p.add_argument("--dry-run", action="store_true", help="compute and show, pay nothing")
    p.add_argument("--json", action="store_true")


def run(args):
    from ..client import Target
    from ..errors import TablectlError
    from ..poker import cards_str
    from ..progressive import board_awards, board_options, hand_name, options_text, parse_hand, qualifies
    from .board import dollars
    if len(args.seat) != len(args.cards):
        raise TablectlError("give one --cards for every --seat")
    hands = {}
    for seat, text in zip(args.seat, args.cards):
        if seat in hands:
            raise TablectlError("seat %d named twice" % seat)
        hands[seat] = parse_hand(text)
    seen = {}
    for seat, cards in hands.items():
        for c in cards:
            if c in seen:
                raise TablectlError("card %s is in the hands of seats %d and %d" % (cards_str([c]), seen[c], seat))
            seen[c] = seat
    with Target(args) as t:
        status = t.command("status")
        if status["base"] not in ("LOCKED", "JACKPOT_PENDING"):
            raise TablectlError("the table is %s: lock it (dealer's lock key) before paying a jackpot" % status["base"])
        meters = t.command("meters")
        config = t.command("config_get")["config"]
        winners = []
        for seat, cards in sorted(hands.items()):
            if not 1 <= seat <= status["seats"]:
                raise TablectlError("seat %d does not exist on this table (1-%d)" % (seat, status["seats"]))
            if meters["seat_tokens"][seat - 1] < 1:
                raise TablectlError("seat %d had no progressive token in round %d: no award" % (seat, meters["round"]))
            value = qualifies(cards)
            if value is None:
                raise TablectlError("seat %d's hand %s (%s) is not a progressive hand (flush or better)"
                                    % (seat, cards_str(cards), hand_name(cards)))
            winners.append((seat, value))
        # Awards are computed from the meter frozen at lockout (no coin can move it while locked).
        base = meters["frozen"] if meters["frozen"] == meters["meter"] else meters["meter"]
        # The straight-flush and fixed-from-meter options are the table's, set on the board in
        # SERVICE (seed 000 rule 9.3: "chosen when the game is put into play"), never per run.
        options = board_options(config)
        payments = board_awards(winners, base, config["seed_cents"], options)
        results = []
        for pay in payments:
            line = dict(pay)
            if not args.dry_run:
                reply = t.command("award", {"seat": pay["seat"] - 1, "amount_cents": pay["amount_cents"],
                                            "meter_cents": pay["meter_cents"], "reset": pay["reset"],
                                            "hand": pay["hand"]}, sign=True)
                line["board_meter_after"] = reply["meter"]
            results.append(line)
    if args.json:
        print(json.dumps({"meter_at_lockout": base, "options": options, "payments": results}))
    else:
        print("meter at lockout %s; %s; paid left to right:" % (dollars(base), options_text(options)))
        for r in results:
            print("  seat %d  %-15s %12s  (meter %s, house %s)  meter after %s" % (
                r["seat"], r["hand"], dollars(r["amount_cents"]), dollars(r["meter_cents"]),
                dollars(r["house_cents"]), dollars(r.get("board_meter_after", r["meter_after"]))))
            print("          %s" % r["rule"])
        if args.dry_run:
            print("(dry run: nothing paid)")
    return 0
