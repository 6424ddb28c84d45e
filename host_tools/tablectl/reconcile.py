"""Reconciliation of a table's progressive from the ledger alone, checked against the board:

    opening + seeds + contributions + corrections - awards from the meter  =  meter + overflow
    opening reserve + reserve contributions                                 =  reserve
    per seat:  opening tokens + coin events of the seat                     =  the board's count
    awards:    opening wins + every award's amount                          =  the board's wins
               opening hits + number of awards                              =  the board's hits
               every award answers an intent the host recorded before it sent it (same command id)

Every figure is integer cents, summed from recorded events (coin, award, correction); the
opening balance is the board's first meter snapshot in the ledger (signed by the board).
Cumulative meters roll over at 10^12 cents (table.meter.ROLLOVER_CENTS), so they compare modulo
that. The events are read by the board's own vocabulary (table.schema): a money event whose fields
are not the vocabulary's is named, not guessed at.
"""
from __future__ import annotations

from typing import TYPE_CHECKING, Any, Optional

from table import schema
from table.meter import ROLLOVER_CENTS

from .readable import dollars
from .seats import seat_label

# The fields of each money event that reconciliation reads (events of older firmware lack some
# fields added since; these they all have). Named by the vocabulary, or reconcile says so.
if TYPE_CHECKING:
    from .ledger import Ledger

READS = {schema.COIN: ("inc",), schema.AWARD: ("amount",), schema.CORRECTION: ("old", "new")}


def reconcile(ledger: Ledger, board: str,
              board_meters: Optional[dict[str, Any]]) -> tuple[bool, dict[str, Any], list[str]]:
    """Returns (ok, figures dict, lines). board_meters: the board's own `meters` reply or None."""
    opening: Optional[dict[str, Any]] = None
    contributions = awards = seeds = corrections = reserve = coins = 0
    seat_tokens: dict[int, int] = {}
    award_amounts = 0
    award_count = 0
    intents: set[Any] = set()
    unexplained: list[dict[str, Any]] = []
    malformed: list[tuple[dict[str, Any], str]] = []
    # Events kept as seq_conflict (a number the ledger held already: the board's journal went
    # back) are money all the same: counted after the filed ones, never parked.
    conflicted = [{"id": "seq_conflict #%s" % ev.get("q"), "kind": ev.get("k"), "body": ev}
                  for ev in ledger.conflict_events(board)]
    alarms = ledger.alarms(board)
    for e in list(ledger.events(board)) + conflicted:
        b = e["body"]
        k = e["kind"]
        if k == "intent" and isinstance(b, dict) and b.get("cmd") == "award":
            intents.add(b.get("id"))
        if opening is None:
            if k == schema.METERS:
                opening = b
            continue
        if k in READS and isinstance(b, dict):
            problem = schema.event_problem(dict(b, k=k), READS[k])
            if problem is not None:
                malformed.append((e, problem))
                continue
        if k == schema.COIN:
            contributions += b["inc"]
            reserve += b.get("reserve", 0)
            coins += 1
            if "seat" in b:
                seat_tokens[b["seat"]] = seat_tokens.get(b["seat"], 0) + 1
        elif k == schema.AWARD:
            awards += b.get("meter_cents", b["amount"] if b.get("from_meter") else 0)
            seeds += b.get("seed_added", 0)
            award_amounts += b["amount"]
            award_count += 1
            if "round" in b and b.get("id") not in intents:
                # (awards of firmware before the trust rule name no round and predate intents)
                unexplained.append(e)
        elif k == schema.CORRECTION:
            corrections += b["new"] - b["old"]
    if opening is None:
        return False, {}, ["no meter snapshot for board %s in the ledger yet" % board]
    start = opening["meter"] + opening["over"]
    expected = start + seeds + contributions + corrections - awards
    expected_reserve = opening["res"] + reserve
    figures: dict[str, Any] = {"board": board, "tokens": coins, "opening": start, "seeds": seeds,
               "contributions": contributions, "corrections": corrections, "awards": awards,
               "expected": expected, "expected_reserve": expected_reserve, "award_count": award_count,
               "award_amounts": award_amounts, "awards_without_intent": [e["id"] for e in unexplained]}
    lines = ["board %s: %d tokens recorded" % (board, coins),
             "  opening meter + overflow   %18s" % dollars(start),
             "+ seeds after resets         %18s" % dollars(seeds),
             "+ contributions              %18s" % dollars(contributions),
             "+ corrections                %18s" % dollars(corrections),
             "- awards from the meter      %18s" % dollars(awards),
             "= expected meter + overflow  %18s" % dollars(expected)]
    ok = not alarms
    if conflicted:
        figures["conflicted_events"] = len(conflicted)
    figures["alarms"] = alarms
    for line in alarms:
        lines.append("  ALARM: " + line)
    for e, problem in malformed:
        lines.append("  ledger row %s: %s: the board and this host disagree on the vocabulary "
                     "(firmware and tablectl versions?)" % (e["id"], problem))
        ok = False
    for e in unexplained:
        lines.append("  award in ledger row %s (seat %d, %s) answers no intent this host recorded: "
                     "paid from another host or tool?" % (e["id"], e["body"].get("seat", -1) + 1,
                                                          dollars(e["body"]["amount"])))
        ok = False
    if board_meters is not None:
        actual = board_meters["meter"] + board_meters["over"]
        figures["actual"] = actual
        figures["actual_reserve"] = board_meters["res"]
        lines.append("  board's meter + overflow   %18s  %s" % (dollars(actual), "OK" if actual == expected else "MISMATCH"))
        lines.append("  reserve: ledger %s, board %s  %s" % (dollars(expected_reserve), dollars(board_meters["res"]),
                                                           "OK" if expected_reserve == board_meters["res"] else "MISMATCH"))
        ok = ok and actual == expected and expected_reserve == board_meters["res"]
        seats_bad: list[str] = []
        if "seat_coins" not in board_meters:
            board_meters = dict(board_meters, seat_coins=[])
        opening_coins = opening.get("seat_coins") or []
        for seat, count in enumerate(board_meters.get("seat_coins") or []):
            before = opening_coins[seat] if seat < len(opening_coins) else 0
            if (before + seat_tokens.get(seat, 0)) % ROLLOVER_CENTS != count:
                seats_bad.append("seat %d: ledger %d tokens, board %d" % (seat_label(seat), before + seat_tokens.get(seat, 0), count))
        lines.append("  tokens per seat            %s" % ("OK" if not seats_bad else "MISMATCH: " + "; ".join(seats_bad)))
        wins_ok = "wins" not in board_meters or \
            (opening.get("wins", 0) + award_amounts) % ROLLOVER_CENTS == board_meters["wins"]
        hits_ok = "hits" not in board_meters or opening.get("hits", 0) + award_count == board_meters["hits"]
        lines.append("  awards: %d in the ledger, %s; board %d hits, %s  %s" % (
            award_count, dollars(award_amounts), board_meters.get("hits", 0) - opening.get("hits", 0),
            dollars(board_meters.get("wins", 0) - opening.get("wins", 0)), "OK" if wins_ok and hits_ok else "MISMATCH"))
        figures["seats_ok"] = not seats_bad
        figures["awards_ok"] = wins_ok and hits_ok
        ok = ok and not seats_bad and wins_ok and hits_ok
    figures["ok"] = ok
    return ok, figures, lines
