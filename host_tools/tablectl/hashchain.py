"""The hash chain both books keep: the table's ledger (SQLite, ledger.py) and the pool's books
(PostgreSQL, pool/store.py), docs/SECURITY.md.

- Each row carries a MAC, keyed with the books' ledger key, over its content and the MAC of the
  row before it (`row_mac`); the first row follows GENESIS. An edited, deleted, inserted or
  reordered row, or a chain recomputed without the key, no longer checks.
- An anchor file in the key store names the newest row and its MAC, signed (`anchor:<row>:<mac>`):
  rows cut from the end are missing against it. It is two fixed slots written in turn in place
  (one pwrite, no rename): a crash tears at most the slot being written, the other still names a
  committed row.
- A board signs its events with its table key over the event's exact bytes (`board_mac`).

What is computed here is what every existing ledger and pool was written with, to the byte: a
change here is a change of both stored formats.
"""
import hashlib
import hmac
import json
import os
from typing import Iterable, Optional

# The MAC the first row follows.
GENESIS = "0" * 64
# One anchor record: its JSON padded to this many bytes, the last a newline.
ANCHOR_SLOT = 256
# The bytes before an event's payload that its board MAC also covers: version 1, MAC flag.
SIGNED_PREFIX = bytes((1, 1))

# json.dumps with separators builds a new encoder on every call: on the write path (a row MAC per
# event) that was a fifth of the time. One, made once; the text it writes is json.dumps's to the
# byte (the chain of every existing book depends on it).
_COMPACT = json.JSONEncoder(separators=(",", ":"))


def row_mac(key: bytes, prev_hash: str, row_id: int, subject: str, seq: Optional[int], kind: str,
            recorded_at: float, body: str, board_mac: Optional[str]) -> str:
    """A row's MAC, chained to the row before it (prev_hash). subject: the ledger's board, or the
    pool's `mac_subject(pool, board)`."""
    text = _COMPACT.encode([prev_hash, row_id, subject, seq, kind, repr(recorded_at), body, board_mac])
    # hmac.digest: the one-shot HMAC (OpenSSL's), same value as hmac.new(...).hexdigest()
    return hmac.digest(key, text.encode(), "sha256").hex()


def legacy_row_hash(prev_hash: str, row_id: int, board: str, seq: Optional[int], kind: str,
                    recorded_at: float, body: str) -> str:
    """The unkeyed chain of table ledgers written before their schema 2 (checked for their old
    rows only)."""
    text = json.dumps([prev_hash, row_id, board, seq, kind, repr(recorded_at), body], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def signed(key: bytes, text: str) -> str:
    """The books' signature over a short statement (an anchor, a chain tip, a meta record)."""
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def signed_by_board(keys: Iterable[bytes], raw: str, mac: object) -> bool:
    """Whether one of a board's table keys made `mac` over the event's exact bytes `raw`."""
    if not isinstance(mac, str):
        return False
    payload = SIGNED_PREFIX + raw.encode()
    return any(hmac.compare_digest(hmac.new(k, payload, hashlib.sha256).hexdigest(), mac) for k in keys)


def anchor_record(key: bytes, tip: tuple[int, str]) -> bytes:
    """The anchor slot naming the newest row (id, MAC), signed."""
    text = json.dumps({"row": tip[0], "mac": tip[1], "sig": signed(key, "anchor:%d:%s" % tip)})
    return text.encode().ljust(ANCHOR_SLOT - 1) + b"\n"


def write_anchor(fd: int, key: bytes, tip: tuple[int, str]) -> None:
    """Write the anchor for tip into its slot (slots taken in turn by the row id's parity)."""
    os.pwrite(fd, anchor_record(key, tip), ANCHOR_SLOT * (tip[0] % 2))


def anchor_slots(key: bytes, data: bytes) -> list[tuple[int, str, bool]]:
    """The anchor file's readable slots: (row, MAC, whether its signature holds), in file order.
    A slot torn by a crash, or never written, is left out."""
    slots = []
    for i in range(0, len(data), ANCHOR_SLOT):
        try:
            anchor = json.loads(data[i:i + ANCHOR_SLOT])
            row, mac, sig = anchor["row"], anchor["mac"], anchor["sig"]
            good = hmac.compare_digest(sig, signed(key, "anchor:%d:%s" % (row, mac)))
        except (ValueError, KeyError, TypeError):
            continue
        slots.append((row, mac, good))
    return slots
