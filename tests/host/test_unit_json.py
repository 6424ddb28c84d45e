"""User-facing JSON (tablectl.readable): `status --json`, `meters --json` and `monitor --json`
name every field readably, with its unit, seats from 1, and docs/CLI-JSON.md documents exactly
the names the code prints. (The real board's replies pass through it in
tests/e2e/test_cli_e2e.py, which checks that no field of theirs is left unnamed.)"""
import os
import re

from table import protocol as proto
from tablectl import readable

DOC = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                   "docs", "CLI-JSON.md")

# A meters reply as it comes off the wire (the board's short keys, the link's own fields).
WIRE_METERS = {"t": proto.REPLY, "id": 7, "ok": 1, "s": 1234, "n": 9,
               "meter": 1_000_070, "over": 5, "res": 30, "contrib": 70, "rcontrib": 30, "seeded": 1_000_000,
               "awarded": 0, "wins": 0, "hits": 0, "corr": -1234, "frozen": 0, "round": 3,
               "seat_coins": [1, 0, 2], "seat_tokens": [1, 0, 0]}


def test_meters_json_carries_readable_names_and_the_same_figures():
    out = readable.meters_json(WIRE_METERS)
    assert out == {"meter_cents": 1_000_070, "overflow_cents": 5, "reserve_cents": 30, "contributions_cents": 70,
                   "reserve_contributions_cents": 30, "seeded_cents": 1_000_000, "awarded_from_meter_cents": 0,
                   "wins_cents": 0, "hits": 0, "corrections_cents": -1234, "frozen_at_lockout_cents": 0,
                   "round": 3, "tokens_per_seat": [1, 0, 2], "round_tokens_per_seat": [1, 0, 0]}


def test_no_abbreviated_wire_key_reaches_the_user():
    out = readable.meters_json(WIRE_METERS)
    assert not set(out) & {"contrib", "res", "rcontrib", "corr", "over", "t", "id", "ok", "s", "n"}


def test_status_seats_are_numbered_from_1_and_bitmasks_become_lists():
    wire = {"t": proto.REPLY, "id": 1, "ok": 1, "base": "LOCKED", "state": "LOCKED", "seats": 7,
            "lamps": [False, True, False, False, True, False, False], "inhibit": [True] * 7,
            "jammed": [False] * 6 + [True], "eligible": 0b10010, "paid": 0b10000, "spots": 0b1,
            "keys": 0b0101, "meter": 1000, "fw": "0.3.0", "unacked": 0}
    out = readable.status_json(wire)
    assert out["seats_lit"] == [2, 5] and out["seats_inhibited"] == [1, 2, 3, 4, 5, 6, 7]
    assert out["seats_jammed"] == [7] and out["seats_eligible"] == [2, 5] and out["seats_paid"] == [5]
    assert out["bet_spots_covered"] == [{"seat": 1, "spot": "ante"}] and out["keys_held"] == ["lock", "jackpot"]
    assert (out["base_state"], out["meter_cents"], out["firmware"], out["unacked_events"]) == \
        ("LOCKED", 1000, "0.3.0", 0)


def test_a_field_this_tablectl_does_not_name_yet_is_kept_under_its_wire_name():
    assert readable.meters_json({"meter": 1, "newfangled": 2}) == {"meter_cents": 1, "newfangled": 2}


def test_every_name_is_unique_and_says_its_unit():
    for names in (readable.METERS, readable.STATUS):
        out = [name for name, _ in names.values()]
        assert len(out) == len(set(out))
    money = ("meter", "over", "res", "contrib", "rcontrib", "seeded", "awarded", "wins", "corr", "frozen")
    for wire in money:
        assert readable.METERS[wire][0].endswith("_cents"), wire
    assert readable.STATUS["meter"][0] == "meter_cents"


def _doc_table(heading):
    text = open(DOC).read()
    section = text.split("## " + heading, 1)[1].split("\n## ", 1)[0]
    return {m.group(1): m.group(2) for m in re.finditer(r"^\| `([a-z_]+)` \| `?([a-z_()]+)`? \|", section, re.M)}


def test_the_doc_names_exactly_the_keys_the_code_prints():
    for heading, names in (("`tablectl meters --json`", readable.METERS), ("`tablectl status --json`", readable.STATUS)):
        documented = _doc_table(heading)
        printed = {name: wire for wire, (name, _) in names.items()}
        assert set(documented) == set(printed), heading
        for name, wire in printed.items():
            assert documented[name] in (wire, "(host)"), (name, documented[name], wire)
