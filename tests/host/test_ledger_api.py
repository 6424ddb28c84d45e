"""The ledger's public behaviour as the service relies on it (tablectl.ledger.Ledger): each event
recorded once, in sequence order, nothing past a gap, duplicates and gaps counted per board,
a failed batch leaves nothing half-written, command counters only go up, readers see the rows
without taking the write lock.

Rule (docs/RELIABILITY.md): "No coin counted twice ... the ledger holds seq 1..n exactly once,
in order, though frames are resent and duplicated."
"""
import os
import sqlite3
import time

import pytest

from tablectl.ledger import Ledger

B = "sim-ledger"


def ev(seq, board=B, kind="coin"):
    return {"t": "ev", "b": board, "k": kind, "q": seq, "seat": seq % 7, "inc": 70}


@pytest.fixture
def led(tmp_path):
    ledger = Ledger(str(tmp_path / "l.db"))
    yield ledger
    ledger.close()


def seqs(ledger, board=B):
    return [e["seq"] for e in ledger.events(board=board)]


def test_a_fresh_board_starts_from_nothing(led):
    fresh = {"last_seq": 0, "duplicates": 0, "gaps": 0, "port": None}
    assert led.board("new-board") == fresh
    assert led.board("new-board") == fresh  # the second time from its row


def test_events_in_order_each_recorded_once(led):
    assert led.record_events(B, [ev(q) for q in (3, 1, 2)]) == (3, 3, 0, False)  # sorted by seq first
    assert seqs(led) == [1, 2, 3]
    assert [e["id"] for e in led.events()] == [1, 2, 3]  # the first row too


def test_a_resent_event_is_a_duplicate_not_a_gap(led):
    led.record_events(B, [ev(q) for q in range(1, 6)])
    assert led.record_events(B, [ev(5)]) == (5, 0, 1, False)   # exactly the last one again
    assert led.record_events(B, [ev(q) for q in range(3, 8)]) == (7, 2, 3, False)
    assert seqs(led) == list(range(1, 8))
    info = led.board(B)
    assert (info["last_seq"], info["duplicates"], info["gaps"]) == (7, 4, 0)


def test_nothing_past_a_gap_is_recorded_and_the_gap_is_counted(led):
    led.record_events(B, [ev(q) for q in range(1, 6)])
    assert led.record_events(B, [ev(7), ev(8)]) == (5, 0, 0, True)
    assert led.record_events(B, [ev(6), ev(8)]) == (6, 1, 0, True)  # 6 fits, 8 is past a gap
    assert seqs(led) == list(range(1, 7))
    info = led.board(B)
    assert (info["last_seq"], info["duplicates"], info["gaps"]) == (6, 0, 2)
    assert led.record_events(B, [ev(q) for q in (7, 8)]) == (8, 2, 0, False)


def test_boards_keep_separate_sequences(led):
    led.record_batches([(B, [ev(1), ev(2)]), ("other", [ev(1, "other")])])
    assert seqs(led) == [1, 2] and seqs(led, "other") == [1]
    assert led.board("other")["last_seq"] == 1 and led.board(B)["last_seq"] == 2
    assert led.boards() == sorted([B, "other"])


def test_a_failed_batch_leaves_nothing_and_the_ledger_goes_on(led):
    led.record_events(B, [ev(1)])
    with pytest.raises(Exception):
        # the second table's event has no sequence number: the whole transaction is rolled back
        led.record_batches([(B, [ev(2)]), ("other", [{"t": "ev", "k": "coin"}])])
    assert seqs(led) == [1] and led.board(B)["last_seq"] == 1
    assert led.record_events(B, [ev(2)]) == (2, 1, 0, False)  # no transaction left open
    assert led.verify() == (2, [])


def test_a_failed_note_leaves_nothing_and_the_ledger_goes_on(led):
    with pytest.raises(TypeError):
        led.note(B, "gap", {"not json": object()})
    led.record_events(B, [ev(1)])  # no transaction left open
    assert led.verify() == (1, [])


def test_rows_carry_when_they_were_recorded(led):
    t0 = time.time()
    led.record_events(B, [ev(1)])
    row = next(led.events())
    assert t0 - 1 <= row["recorded_at"] <= time.time() + 1
    assert (row["board"], row["kind"], row["body"]["inc"]) == (B, "coin", 70)


def test_notes_join_the_chain_without_a_sequence_number(led):
    led.record_events(B, [ev(1)])
    led.note(B, "gap", {"after": 1})
    rows = list(led.events(board=B))
    assert [(r["seq"], r["kind"]) for r in rows] == [(1, "coin"), (None, "gap")]
    assert list(led.events(kinds=["gap"]))[0]["body"] == {"after": 1}
    assert [r["id"] for r in led.events(after_id=1)] == [2]
    assert len(list(led.events(limit=1))) == 1
    assert led.verify() == (2, [])


def test_no_key_lives_in_the_ledger(led, tmp_path):
    """Table keys and the ledger key live in the key store (0600 files), never in the database:
    anyone with a copy of the books could otherwise sign awards or recompute the chain."""
    from tablectl.keys import KeyStore
    keys = KeyStore.for_ledger(led.path)
    keys.set_table_key(B, bytes.fromhex("ab" * 32))
    led.record_events(B, [ev(1)])
    raw = open(led.path, "rb").read() + (open(led.path + "-wal", "rb").read() if os.path.exists(led.path + "-wal") else b"")
    assert b"ab" * 32 not in raw and keys.ledger_key().hex().encode() not in raw
    assert keys.table_key(B) == bytes.fromhex("ab" * 32)
    keys.set_table_key(B, bytes.fromhex("cd" * 32))  # a new key; the old one kept for old MACs
    assert keys.all_table_keys(B) == [bytes.fromhex("cd" * 32), bytes.fromhex("ab" * 32)]


def test_a_reader_sees_the_rows_and_cannot_write(tmp_path):
    path = str(tmp_path / "r.db")
    writer = Ledger(path)
    writer.record_events(B, [ev(1), ev(2)])
    reader = Ledger(path, readonly=True)
    try:
        assert [e["seq"] for e in reader.events()] == [1, 2]
        assert reader.verify() == (2, [])
        with pytest.raises(sqlite3.OperationalError):
            reader.record_events(B, [ev(3)])
    finally:
        reader.close()
        writer.close()
