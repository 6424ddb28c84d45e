"""The JSON a person or a script reads from `tablectl status --json`, `meters --json` and
`monitor --json`: the board's reply with readable names, units in the names, seat numbers from 1.

The wire keeps its short keys (`res`, `contrib`, `corr`: every byte crosses a 115200-baud line
and the board's small heap); the host renames them here, in one table per reply, which
docs/CLI-JSON.md documents key by key (tests/host/test_unit_json.py holds the two together).
The protocol's own fields (`t`, `id`, `ok`, `s`, `n`) are left out. A field a newer board adds
that this table does not name yet is kept under its wire name, so nothing the board said is lost.
"""
from __future__ import annotations

import json

from typing import Any, Callable, Optional

from table import vocab

from .seats import seat_label

# Fields of the link, not of the reply's content (docs/PROTOCOL.md).
PROTOCOL_FIELDS = ("t", "id", "ok", "s", "n")


def _seat_numbers(bits: Any) -> Any:
    """A bitmask over seats (bit 0 = seat 1) -> the seat numbers it holds, from 1."""
    if not isinstance(bits, int) or isinstance(bits, bool):
        return bits
    return [i + 1 for i in range(bits.bit_length()) if bits >> i & 1]


def dollars(cents: int) -> str:
    """Integer cents as a person reads money: -$1,234.05. Every figure a person reads is in
    dollars; the JSON keeps integer cents (`_cents` keys)."""
    sign = "-" if cents < 0 else ""
    cents = abs(cents)
    return "%s$%s.%02d" % (sign, "{:,}".format(cents // 100), cents % 100)


def _spots_named(bits: Any) -> Any:
    """The bet-spot bitmask (bit seat*3 + circle, seat 0 first; table.vocab.SPOT_NAMES) -> each
    covered spot by its seat from 1 and its circle: [{"seat": 1, "spot": "bet"}, ...]."""
    if not isinstance(bits, int) or isinstance(bits, bool):
        return bits
    names = vocab.SPOT_NAMES
    return [{"seat": seat_label(i // len(names)), "spot": names[i % len(names)]}
            for i in range(bits.bit_length()) if bits >> i & 1]


def spots_text(bits: Any) -> str:
    """The covered spots as a person reads them: `1:bet 2:ante 7:bonus`, or `none`."""
    spots = _spots_named(bits)
    if not isinstance(spots, list):
        return str(bits)
    return " ".join("%d:%s" % (s["seat"], s["spot"]) for s in spots) or "none"


def person_seats(value: Any) -> Any:
    """An event's body (or anything in it) with every `seat` counted from 1 as a dealer counts
    (the wire and the ledger count from 0), at any depth: a command's `args` and `reply` too.
    The one place the host turns the board's seat numbers into a person's."""
    if isinstance(value, dict):
        return {k: (seat_label(v) if k == "seat" and isinstance(v, int) and not isinstance(v, bool) else person_seats(v))
                for k, v in value.items()}
    if isinstance(value, list):
        return [person_seats(v) for v in value]
    return value


def detail_text(body: dict[str, Any], hidden: tuple[str, ...] = ()) -> str:
    """An event's fields as `key=value` words for a table column: nested fields as
    `args.seat=1`, texts with spaces in double quotes, never Python's dict text."""
    words: list[str] = []

    def add(prefix: str, value: Any) -> None:
        if isinstance(value, dict) and value:
            for k in sorted(value):
                if k in ("t", "id", "s", "n") and value.get("t") is not None:
                    continue  # a board's reply kept in a row: its link fields say nothing to a person
                add("%s.%s" % (prefix, k), value[k])
        elif isinstance(value, str):
            words.append("%s=%s" % (prefix, value if value and " " not in value and '"' not in value
                                    else json.dumps(value)))
        elif isinstance(value, (dict, list, bool)) or value is None:
            words.append("%s=%s" % (prefix, json.dumps(value, sort_keys=True)))
        else:
            words.append("%s=%s" % (prefix, value))
    for k in sorted(body):
        if k not in hidden:
            add(k, body[k])
    return " ".join(words)


def _key_names(bits: Any) -> Any:
    """The dealer's keypad bitmask -> the names of the keys held (table.vocab.KEY_NAMES)."""
    if not isinstance(bits, int) or isinstance(bits, bool):
        return bits
    return [name for i, name in enumerate(vocab.KEY_NAMES) if bits >> i & 1]


def _seats_flagged(flags: Any) -> Any:
    """A list of one flag per seat -> the seat numbers whose flag is set, from 1."""
    if not isinstance(flags, list):
        return flags
    return [seat_label(i) for i, flag in enumerate(flags) if flag]


# wire key -> (readable key, conversion or None)
Names = dict[str, tuple[str, Optional[Callable[[Any], Any]]]]

METERS: Names = {
    "meter": ("meter_cents", None),
    "over": ("overflow_cents", None),
    "res": ("reserve_cents", None),
    "contrib": ("contributions_cents", None),
    "rcontrib": ("reserve_contributions_cents", None),
    "seeded": ("seeded_cents", None),
    "awarded": ("awarded_from_meter_cents", None),
    "wins": ("wins_cents", None),
    "hits": ("hits", None),
    "corr": ("corrections_cents", None),
    "frozen": ("frozen_at_lockout_cents", None),
    "round": ("round", None),
    "seat_coins": ("tokens_per_seat", None),
    "seat_tokens": ("round_tokens_per_seat", None),
}

STATUS: Names = {
    "board": ("board", None),
    "fw": ("firmware", None),
    "runtime": ("runtime", None),
    "boots": ("boot_count", None),
    "state": ("state", None),
    "base": ("base_state", None),
    "faults": ("faults", None),
    "fault_detail": ("fault_detail", None),
    "seats": ("seats", None),
    "round": ("round", None),
    "meter": ("meter_cents", None),
    "display": ("display", None),
    "lamps": ("seats_lit", _seats_flagged),
    "inhibit": ("seats_inhibited", _seats_flagged),
    "jammed": ("seats_jammed", _seats_flagged),
    "spots": ("bet_spots_covered", _spots_named),
    "keys": ("keys_held", _key_names),
    "eligible": ("seats_eligible", _seat_numbers),
    "paid": ("seats_paid", _seat_numbers),
    "next_seq": ("next_event_seq", None),
    "acked_seq": ("acked_event_seq", None),
    "unacked": ("unacked_events", None),
    "journal": ("journal_storage", None),
    "unrecorded": ("unrecorded_events", None),
    "frames_bad": ("bad_frames", None),
    "refused": ("refused_frames", None),
    "stale": ("stale_frames", None),
    "key_provisioned": ("table_key_provisioned", None),
    "service_switch": ("service_switch_on", None),
    "progressive": ("progressive", None),   # added by the host (the table's options, already readable)
    "alarms": ("alarms", None),             # added by the host (Ledger.alarms: history that went back)
    "pool": ("linked_pool", None),
    "pool_meter": ("pool_meter_cents", None),
}


def rename(reply: dict[str, Any], names: Names) -> dict[str, Any]:
    """The reply under readable names (see the module text)."""
    out: dict[str, Any] = {}
    for key, value in reply.items():
        if key in PROTOCOL_FIELDS:
            continue
        if key in names:
            readable, convert = names[key]
            out[readable] = convert(value) if convert is not None else value
        else:
            out[key] = value
    return out


def meters_json(reply: dict[str, Any]) -> dict[str, Any]:
    return rename(reply, METERS)


def status_json(reply: dict[str, Any]) -> dict[str, Any]:
    return rename(reply, STATUS)
