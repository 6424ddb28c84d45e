"""Reconciliation of a table's progressive from the ledger alone, checked against the board:

    opening + seeds + contributions + corrections - awards from the meter  =  meter + overflow
    opening reserve + reserve contributions                                 =  reserve

Every figure is integer cents, summed from recorded events (coin, award, correction); the
opening balance is the board's first meter snapshot in the ledger.
"""


def reconcile(ledger, board, board_meters):
    """Returns (ok, figures dict, lines). board_meters: the board's own `meters` reply or None."""
    opening = None
    contributions = awards = seeds = corrections = reserve = coins = 0
    for e in ledger.events(board):
        b = e["body"]
        k = e["kind"]
        if opening is None:
            if k == "meters":
                opening = b
            continue
        if k == "coin":
            contributions += b["inc"]
            reserve += b.get("reserve", 0)
            coins += 1
        elif k == "award":
            awards += b.get("meter_cents", b["amount"] if b.get("from_meter") else 0)
            seeds += b.get("seed_added", 0)
        elif k == "correction":
            corrections += b["new"] - b["old"]
    if opening is None:
        return False, {}, ["no meter snapshot for board %s in the ledger yet" % board]
    start = opening["meter"] + opening["over"]
    expected = start + seeds + contributions + corrections - awards
    expected_reserve = opening["res"] + reserve
    figures = {"board": board, "tokens": coins, "opening": start, "seeds": seeds,
               "contributions": contributions, "corrections": corrections, "awards": awards,
               "expected": expected, "expected_reserve": expected_reserve}
    lines = ["board %s: %d tokens recorded" % (board, coins),
             "  opening meter + overflow   %14d cents" % start,
             "+ seeds after resets         %14d" % seeds,
             "+ contributions              %14d" % contributions,
             "+ corrections                %14d" % corrections,
             "- awards from the meter      %14d" % awards,
             "= expected meter + overflow  %14d" % expected]
    ok = True
    if board_meters is not None:
        actual = board_meters["meter"] + board_meters["over"]
        figures["actual"] = actual
        figures["actual_reserve"] = board_meters["res"]
        lines.append("  board's meter + overflow   %14d  %s" % (actual, "OK" if actual == expected else "MISMATCH"))
        lines.append("  reserve: ledger %d, board %d  %s" % (expected_reserve, board_meters["res"],
                                                           "OK" if expected_reserve == board_meters["res"] else "MISMATCH"))
        ok = actual == expected and expected_reserve == board_meters["res"]
    figures["ok"] = ok
    return ok, figures, lines
