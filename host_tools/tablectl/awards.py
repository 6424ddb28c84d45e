"""Paying a round's progressive winners: the one path, used by `tablectl serve` (the control
socket's `jackpot` request) and by `tablectl jackpot --port` with no service running.

What the host checks before it signs anything, and the board checks again on its own
(firmware/table/app.py: cmd_award), so that neither side alone can be talked into paying:
  - the dealer's jackpot key has put the table in JACKPOT_PENDING (physical presence);
  - the award names the round, and the seat had a token when that round locked;
  - the seat has not been paid in that round (the host from its ledger, the board from its state);
  - the amount is the schedule's, computed here from the verified hand and the board's meter.
A payment's command id is derived from (board, round, seat): a retried jackpot command sends the
same id, and the board answers a repeated id with the first payment's reply instead of paying.
"""
from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any, Callable, Optional, Sequence

from table import meter as table_meter

from .errors import TablectlError
from .seats import seat_index, seat_label

if TYPE_CHECKING:
    from .ledger import Ledger

# command(name, args, command_id=None) -> the board's reply (raises on a refusal)
Command = Callable[..., dict[str, Any]]


def award_command_id(board: str, round_no: int, seat_index: int) -> int:
    """The same award always has the same id, so a retry is recognised as a repeat."""
    digest = hashlib.sha256(("award:%s:%d:%d" % (board, round_no, seat_index)).encode()).digest()
    return int.from_bytes(digest[:4], "big") & 0x7FFFFFFF


def paid_in_ledger(ledger: Ledger, board: str, round_no: int, seat_index: int) -> Optional[dict[str, Any]]:
    """The ledger row of an award already paid to this seat in this round, or None."""
    for e in ledger.events(board, kinds=("award",)):
        b = e["body"]
        if b.get("round") == round_no and b.get("seat") == seat_index:
            return e
    return None


def parse_hands(seats: Sequence[Any], cards_texts: Sequence[Any]) -> dict[int, Sequence[int]]:
    """[(seat 1-based, cards)] from the CLI's repeated --seat/--cards, with errors that name what."""
    from tablegames.poker import cards_str
    from tablegames.progressive import parse_hand
    if len(seats) != len(cards_texts):
        raise TablectlError("give one --cards for every --seat")
    hands: dict[int, Sequence[int]] = {}
    for seat, text in zip(seats, cards_texts):
        if not isinstance(seat, int) or isinstance(seat, bool):
            raise TablectlError("seat %r is not a seat number" % (seat,))
        if seat in hands:
            raise TablectlError("seat %d named twice" % seat)
        if not isinstance(text, str):
            raise TablectlError("seat %d's cards must be text like \"As Ks Qs Js Ts\"" % seat)
        hands[seat] = parse_hand(text)
    seen: dict[int, int] = {}
    for seat, cards in hands.items():
        for c in cards:
            if c in seen:
                raise TablectlError("card %s is in the hands of seats %d and %d" % (cards_str([c]), seen[c], seat))
            seen[c] = seat
    return hands


def pay_jackpot(command: Command, board: str, hands: dict[int, Sequence[int]], ledger: Optional[Ledger] = None,
                dry_run: bool = False) -> dict[str, Any]:
    """command(name, args, command_id=None) -> the board's reply (raises on a refusal).
    hands: {seat 1-based: cards}. Returns {"round", "meter_before", "payments": [...]}."""
    from tablegames.poker import cards_str
    from tablegames.progressive import board_awards, board_options, hand_name, qualifies
    status = command("status", {})
    if dry_run and status["base"] in ("LOCKED", "JACKPOT_PENDING"):
        pass  # computing what would be paid needs no jackpot key: nothing is sent
    elif status["base"] != "JACKPOT_PENDING":
        raise TablectlError("the table is %s: a jackpot is paid only after the dealer turns the jackpot key "
                            "(table locked, then JACKPOT_PENDING)" % status["base"])
    meters = command("meters", {})
    config = command("config_get", {})["config"]
    round_no = meters["round"]
    eligible = status.get("eligible", 0)
    paid = status.get("paid", 0)
    winners: list[tuple[int, Any]] = []
    for seat, cards in sorted(hands.items()):
        if not 1 <= seat <= status["seats"]:
            raise TablectlError("seat %d does not exist on this table (1-%d)" % (seat, status["seats"]))
        if not eligible & (1 << seat_index(seat)):
            raise TablectlError("seat %d had no progressive token when round %d locked: no award" % (seat, round_no))
        if ledger is not None:
            row = paid_in_ledger(ledger, board, round_no, seat_index(seat))
            if row is not None and row["body"].get("id") != award_command_id(board, round_no, seat_index(seat)):
                raise TablectlError("seat %d was paid in round %d already (ledger row %d)" % (seat, round_no, row["id"]))
        value = qualifies(cards)
        if value is None:
            raise TablectlError("seat %d's hand %s (%s) is not a progressive hand (flush or better)"
                                % (seat, cards_str(cards), hand_name(cards)))
        winners.append((seat, value))
    # The awards are percentages of the meter as it stands (rulebook 000 rule 9.3), read from the
    # board now: the table is locked, so no token has moved it since lockout.
    base = meters["meter"]
    options = board_options(config)
    payments = board_awards(winners, base, config["seed_cents"], options)
    results: list[dict[str, Any]] = []
    # What the meter reads after each payment, computed as the board computes it (table.meter:
    # the seed after a reset, then overflow taken back up to the ceiling), so a dry run shows the
    # figure the board will show.
    meter_after, over_after = meters["meter"], meters["over"]
    for pay in payments:
        line = dict(pay)
        meter_after, over_after, _ = table_meter.after_award(meter_after, over_after, pay["meter_cents"],
                                                             pay["reset"], config)
        line["meter_after"] = meter_after
        index = seat_index(pay["seat"])
        if paid & (1 << index):
            # Paid before (this is a retry): the board answers the same id with the first reply,
            # and what was paid is the ledger's award row, not a figure computed again from a meter
            # that the payment reset.
            line["already_paid"] = True
            row = paid_in_ledger(ledger, board, round_no, index) if ledger is not None else None
            if row is not None:
                _as_paid(line, row["body"])
                line["ledger_row"] = row["id"]
        if not dry_run:
            reply = command("award", {"seat": index, "round": round_no, "amount_cents": line["amount_cents"],
                                      "meter_cents": line["meter_cents"], "reset": line["reset"],
                                      "hand": line["hand"]},
                            command_id=award_command_id(board, round_no, index))
            line["board_meter_after"] = reply["meter"]
            line["repeat"] = bool(reply.get("repeat")) or bool(line.get("already_paid"))
            if line["repeat"] and "ledger_row" not in line:
                # Paid before and not in the books yet: the board's first reply is the word on the
                # amount (in the same boot its reply cache repeats it without a "repeat" mark; the
                # seat's paid bit says it is one). The reply names no split, and one computed again
                # from the meter the payment reset would be wrong: the board's award event has it.
                amount = reply.get("amount")
                if not isinstance(amount, int) or isinstance(amount, bool):
                    raise TablectlError("the board's reply to seat %d's repeated award names no amount: see its "
                                        "award event in the books (tablectl audit)" % pay["seat"])
                line["amount_cents"] = amount
                line["meter_cents"] = line["house_cents"] = None
        elif line.get("already_paid") and "ledger_row" not in line:
            # A dry run for a seat paid before whose award the books do not hold: nothing here says
            # what was paid (the board's award event does), so no figure is shown for it.
            line["amount_cents"] = line["meter_cents"] = line["house_cents"] = None
        results.append(line)
    return {"round": round_no, "meter_before": base, "options": options, "payments": results}


def _as_paid(line: dict[str, Any], award: dict[str, Any]) -> None:
    """A payment line made to say what the ledger's award event records as paid."""
    for key, field in (("amount_cents", "amount"), ("meter_cents", "meter_cents"), ("reset", "reset"),
                       ("hand", "hand")):
        if field in award:
            line[key] = award[field]
    line["house_cents"] = line["amount_cents"] - line["meter_cents"]


def payments_json(result: dict[str, Any]) -> str:
    return json.dumps({"round": result["round"], "meter_cents": result["meter_before"],
                       "payments": result["payments"]})


def pay_linked_jackpot(command: Command, board: str, hands: dict[int, Sequence[int]],
                       declare: Callable[[int, list[tuple[int, str]]], dict[str, Any]],
                       confirm: Callable[[list[int]], set[int]]) -> dict[str, Any]:
    """A linked table's round (docs/POOL.md): the pool is its only progressive. The round's
    winning hands go to the pool together with the board's signed jackpot statement
    (declare(round, [(seat 0-based, cards)]) -> the pool's locks); each pool hand is paid by the
    board's own award command naming its lock (eligibility, pay-once and the journal stay the
    board's), and the pool takes the lock as paid from the board's signed award event
    (confirm(lock numbers) -> those it took). The other hands are the table's fixed awards, paid by
    its house. hands: {seat 1-based: cards}."""
    from tablegames.poker import cards_str
    from tablegames.progressive import board_awards, board_options, hand_name, qualifies
    status = command("status", {})
    if status["base"] != "JACKPOT_PENDING":
        raise TablectlError("the table is %s: a jackpot is paid only after the dealer turns the jackpot key "
                            "(table locked, then JACKPOT_PENDING)" % status["base"])
    round_no = status["round"]
    eligible = status.get("eligible", 0)
    values: dict[int, int] = {}
    for seat, cards in sorted(hands.items()):
        if not 1 <= seat <= status["seats"]:
            raise TablectlError("seat %d does not exist on this table (1-%d)" % (seat, status["seats"]))
        if not eligible & (1 << seat_index(seat)):
            raise TablectlError("seat %d had no progressive token when round %d locked: no award" % (seat, round_no))
        value = qualifies(cards)
        if value is None:
            raise TablectlError("seat %d's hand %s (%s) is not a progressive hand (flush or better)"
                                % (seat, cards_str(cards), hand_name(cards)))
        values[seat] = value
    reply = declare(round_no, [(seat_index(seat), cards_str(cards)) for seat, cards in sorted(hands.items())])
    locks = sorted((h for h in reply["hits"] if h.get("lock_no")), key=lambda h: h["lock_no"])
    # The hands the pool did not take are the table's fixed awards, paid by its house: priced
    # before the board pays anything, so a round the table cannot pay whole is refused whole (the
    # pool keeps its locks for the round until it is paid again with the same hands).
    pool_seats = {seat_label(h["seat"]) for h in locks}
    others = [(seat, values[seat]) for seat in sorted(values) if seat not in pool_seats]
    house: list[dict[str, Any]] = []
    if others:
        config = command("config_get", {})["config"]
        house = board_awards(others, 0, config["seed_cents"], board_options(config))
        for pay in house:
            if pay["reset"] or pay["amount_cents"] <= 0 or pay["meter_cents"]:
                kept = ("the pool keeps lock %s for round %d until `tablectl jackpot` is run again with the same "
                        "hands" % (", ".join("#%d" % h["lock_no"] for h in locks), round_no)) if locks else \
                    "the pool holds no lock of this round"
                raise TablectlError("seat %d's %s is not a pool hand at this pool, and the table's options pay it "
                                    "from a meter: set the table's straight-flush option as the pool's "
                                    "(tablectl config); nothing was paid: %s" % (pay["seat"], pay["hand"], kept))
    results: list[dict[str, Any]] = []
    for h in locks:
        index = h["seat"]
        answer = command("award", {"seat": index, "round": round_no, "amount_cents": h["amount_cents"],
                                   "pool_cents": h["amount_cents"], "lock": h["lock_no"], "hand": h["hand"]},
                         command_id=award_command_id(board, round_no, index))
        results.append({"seat": seat_label(index), "hand": h["hand"], "amount_cents": h["amount_cents"],
                        "pool_cents": h["amount_cents"], "house_cents": 0, "meter_cents": 0, "lock_no": h["lock_no"],
                        "pool": h["pool"], "meter_before": h["meter_before"], "meter_after": h["meter_after"],
                        "repeat": bool(answer.get("repeat")) or bool(h.get("repeat")),
                        "rule": "rulebook 000 rule 9.3: from the linked pool %s (lock #%d)" % (h["pool"], h["lock_no"])})
    for pay in house:
        answer = command("award", {"seat": seat_index(pay["seat"]), "round": round_no, "amount_cents": pay["amount_cents"],
                                   "meter_cents": 0, "reset": False, "hand": pay["hand"]},
                         command_id=award_command_id(board, round_no, seat_index(pay["seat"])))
        results.append(dict(pay, house_cents=pay["amount_cents"], repeat=bool(answer.get("repeat"))))
    confirmed = confirm([h["lock_no"] for h in locks]) if locks else set()
    for r in results:
        if r.get("lock_no"):
            r["pool_confirmed"] = r["lock_no"] in confirmed
    return {"round": round_no, "linked": True, "pool": status.get("pool"), "hits": reply["hits"],
            "payments": results}
