"""A session of the real firmware (TableApp on MicroPython) that touches every line of the
books: coins with a reserve contribution, coins past the ceiling into the overflow, a progressive award from the meter that resets it to
its seed, a fixed award not from the meter, a meter correction in SERVICE, more coins after.

`micropython books_session.py` prints one JSON line: every event the host received (once each,
in sequence order) and the board's own `meters` at the end. tests/host/test_books.py records
the events in the real Ledger and reconciles them with the board (tablectl.reconcile).
"""
import json

from simkit import Rig

LOCK, UNLOCK, JACKPOT, SERVICE = 0, 1, 2, 3
RESERVE_CENTS = 30
# 100 cents above the seed: the second token of the session already spills into the overflow
CEILING_CENTS = 10000100


def session():
    rig = Rig("books", config={"reserve_cents": RESERVE_CENTS, "ceiling_cents": CEILING_CENTS}, key=b"k" * 32)
    rig.board.switch = True
    assert rig.command("provision", {"key": "6b" * 32})["ok"] == 1
    rig.board.switch = False
    for seat in (0, 2, 5):
        rig.coin(seat)
    rig.run_ms(200)
    rig.press(LOCK)
    rig.press(JACKPOT)
    meter = rig.app.state["meter"]
    r = rig.command("award", {"seat": 2, "amount_cents": meter, "meter_cents": meter, "reset": True,
                              "hand": "royal flush", "round": rig.app.state["round"]}, signed=True)
    assert r["ok"] == 1, r
    r = rig.command("award", {"seat": 5, "amount_cents": 50000, "meter_cents": 0, "hand": "four of a kind",
                                       "round": rig.app.state["round"]},
                    signed=True)
    assert r["ok"] == 1, r
    rig.board.switch = True
    assert rig.command("service", {"enter": True}, signed=True)["ok"] == 1
    r = rig.command("meter_set", {"meter_cents": rig.app.state["meter"] - 1234, "reason": "audit: meter over"},
                    signed=True)
    assert r["ok"] == 1, r
    assert rig.command("service", {"enter": False}, signed=True)["ok"] == 1
    rig.board.switch = False
    rig.press(UNLOCK)
    for seat in (1, 3):
        rig.coin(seat)
    rig.run_ms(200)
    rig.ack_all()
    rig.run_ms(50)
    return {"board": "sim-test", "events": sorted(rig.events, key=lambda e: e["q"]), "meters": rig.app.meters()}


print(json.dumps(session()))
