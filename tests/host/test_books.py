"""The host's books against planted bugs: the ledger's tamper evidence covers every column of a
row, and reconciliation counts corrections, checks the reserve and reports a mismatch.

The events come from the real firmware (tests/firmware/books_session.py on MicroPython: coins
with a reserve contribution, a progressive award that resets the meter to its seed, a fixed
award, a meter correction in SERVICE), are recorded in the real Ledger (SQLite) and reconciled
with the board's own meters. Only the public behaviour is used: Ledger.record_events, verify,
and reconcile's (ok, figures, lines).

Rules: "Tamper-evident books" and "Meter never decreases without an authorised hit or logged
correction" (docs/RELIABILITY.md); the reconciliation identity is reconcile.py's docstring:
opening + seeds + contributions + corrections - awards from the meter = meter + overflow, and
opening reserve + reserve contributions = reserve.
"""
import json
import os
import sqlite3

import pytest

from conftest import run_micropython
from tablectl.ledger import Ledger
from tablectl.reconcile import reconcile

HERE = os.path.dirname(os.path.abspath(__file__))
SESSION = os.path.join(os.path.dirname(HERE), "firmware", "books_session.py")


@pytest.fixture(scope="module")
def session():
    proc = run_micropython(SESSION, cwd=os.path.dirname(SESSION), timeout=300)
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.fixture
def books(session, tmp_path):
    """A ledger holding the session, recorded in the batches a link read gives (a few frames)."""
    path = str(tmp_path / "books.db")
    led = Ledger(path)
    evs = session["events"]
    # the host records its intent before it sends an award (reconcile wants one behind each)
    for e in evs:
        if e["k"] == "award":
            led.note(session["board"], "intent", {"cmd": "award", "id": e["id"], "args": {}})
    for i in range(0, len(evs), 5):
        last, new, dup, gap = led.record_events(session["board"], evs[i:i + 5])
        assert not gap and new == len(evs[i:i + 5])
    yield led, path
    led.close()


def kinds(session):
    return [e["k"] for e in session["events"]]


def test_the_session_has_what_the_books_must_handle(session):
    k = kinds(session)
    assert k.count("coin") == 5 and k.count("award") == 2 and k.count("correction") == 1
    assert all(e["reserve"] == 30 for e in session["events"] if e["k"] == "coin")
    assert session["meters"]["res"] == 150 and session["meters"]["corr"] == -1234
    assert session["meters"]["over"] > 0  # the ceiling sent part of the contributions to the overflow


# ---- reconciliation -------------------------------------------------------------------------------
def test_the_books_reconcile_with_the_board(books, session):
    led, _ = books
    ok, f, lines = reconcile(led, session["board"], session["meters"])
    assert ok, lines
    assert f["corrections"] == -1234  # the meter_set in SERVICE counts
    assert f["contributions"] == 5 * 70 and f["tokens"] == 5
    assert f["seeds"] == 10_000_000 and f["awards"] == 10_000_100  # the royal; the fixed award is not from the meter
    assert f["expected"] == f["actual"] == session["meters"]["meter"] + session["meters"]["over"]
    assert f["expected_reserve"] == f["actual_reserve"] == 150
    assert f["seats_ok"] and f["awards_ok"]
    assert f["award_amounts"] == sum(e["amount"] for e in session["events"] if e["k"] == "award")


def test_an_award_no_host_intent_explains_is_named(session, tmp_path):
    """Reconcile per award: an award the host never recorded asking for (paid from another host
    or tool) does not balance, however the sums come out."""
    led = Ledger(str(tmp_path / "bare.db"))
    led.record_events(session["board"], session["events"])
    ok, f, lines = reconcile(led, session["board"], session["meters"])
    assert not ok and len(f["awards_without_intent"]) == 2
    assert any("answers no intent" in line for line in lines)
    led.close()


def test_a_token_missing_from_one_seat_is_named(books, session):
    led, _ = books
    meters = dict(session["meters"])
    coins = list(meters["seat_coins"])
    coins[2] += 1
    coins[3] -= 1  # the sums agree, the seats do not
    meters["seat_coins"] = coins
    ok, f, lines = reconcile(led, session["board"], meters)
    assert not ok and not f["seats_ok"]


def test_a_meter_a_cent_off_is_a_mismatch(books, session):
    led, _ = books
    for delta in (1, -1):
        board = dict(session["meters"], meter=session["meters"]["meter"] + delta)
        ok, f, lines = reconcile(led, session["board"], board)
        assert not ok and not f["ok"]
        assert any("meter" in line and "MISMATCH" in line for line in lines), lines


def test_a_reserve_a_cent_off_is_a_mismatch(books, session):
    # the meter balances; only the reserve is wrong
    led, _ = books
    for delta in (1, -1):
        board = dict(session["meters"], res=session["meters"]["res"] + delta)
        ok, f, lines = reconcile(led, session["board"], board)
        assert not ok and not f["ok"]
        assert any("reserve" in line and "MISMATCH" in line for line in lines), lines


def test_a_board_that_never_applied_the_correction_does_not_balance(books, session):
    led, _ = books
    board = dict(session["meters"], meter=session["meters"]["meter"] + 1234)
    ok, f, _ = reconcile(led, session["board"], board)
    assert not ok and f["corrections"] == -1234


def test_overflow_counts_with_the_meter(books, session):
    # a cent moved from the meter to the overflow still balances; a cent lost from the overflow does not
    led, _ = books
    m = session["meters"]
    assert reconcile(led, session["board"], dict(m, meter=m["meter"] - 1, over=m["over"] + 1))[0]
    assert not reconcile(led, session["board"], dict(m, over=m["over"] - 1))[0]


def test_without_the_board_the_ledger_alone_gives_the_expected_figures(books, session):
    led, _ = books
    ok, f, _ = reconcile(led, session["board"], None)
    assert ok and "actual" not in f  # nothing to disagree with
    assert f["expected"] == session["meters"]["meter"] + session["meters"]["over"]
    assert f["expected_reserve"] == session["meters"]["res"]


def test_events_of_older_firmware_without_the_newer_fields(tmp_path):
    """Coins without `reserve`, awards without `meter_cents` (only `from_meter`) or `seed_added`:
    the books read them as no reserve, the whole amount from the meter if from_meter, no seed."""
    led = Ledger(str(tmp_path / "old.db"))
    evs = [{"k": "meters", "q": 1, "meter": 1000, "over": 5, "res": 7},
           {"k": "coin", "q": 2, "inc": 70},
           {"k": "award", "q": 3, "amount": 300, "from_meter": True},
           {"k": "award", "q": 4, "amount": 50000, "from_meter": False},
           {"k": "award", "q": 5, "amount": 100, "meter_cents": 40, "seed_added": 900}]
    led.record_events("old", evs)
    ok, f, _ = reconcile(led, "old", {"meter": 1000 + 5 + 70 - 300 - 40 + 900 - 5, "over": 5, "res": 7})
    led.close()
    assert ok, f
    assert (f["opening"], f["contributions"], f["awards"], f["seeds"], f["expected_reserve"]) == \
        (1005, 70, 340, 900, 7)


def test_no_meter_snapshot_no_reconciliation(tmp_path):
    led = Ledger(str(tmp_path / "empty.db"))
    ok, f, lines = reconcile(led, "sim-test", {"meter": 0, "over": 0, "res": 0})
    led.close()
    assert not ok and "no meter snapshot" in lines[0]


# ---- tamper evidence: every column of a row ------------------------------------------------------
def _tamper(path, sql, params):
    con = sqlite3.connect(path)
    con.execute(sql, params)
    con.commit()
    con.close()


def _verify(path):
    led = Ledger(path)
    try:
        return led.verify()
    finally:
        led.close()


def _coin_row(path):
    con = sqlite3.connect(path)
    row_id = con.execute("SELECT id FROM ledger WHERE kind='coin' ORDER BY id LIMIT 1 OFFSET 2").fetchone()[0]
    con.close()
    return row_id


def test_an_untouched_ledger_verifies(books, session):
    led, _ = books
    count, problems = led.verify()
    assert count == len(session["events"]) + 2 and problems == []  # + the two award intents


@pytest.mark.parametrize("column,value", [
    ("kind", "refused_coin"),          # a credited coin passed off as a refused one
    ("board", "another-table"),        # moved to another table's books
    ("seq", 999_999),                  # renumbered
    ("recorded_at", 1.0),              # back-dated
    ("body", None),                    # the event itself (set below: the increment raised)
])
def test_an_edit_to_any_column_is_named_by_verify(books, column, value):
    led, path = books
    row_id = _coin_row(path)
    if column == "body":
        _tamper(path, "UPDATE ledger SET body=replace(body, '\"inc\":70', '\"inc\":7000') WHERE id=?", (row_id,))
    else:
        _tamper(path, "UPDATE ledger SET %s=? WHERE id=?" % column, (value, row_id))
    count, problems = _verify(path)
    assert problems, "an edited %s passed verify()" % column
    assert any(("row %d " % row_id) in p for p in problems), problems


def test_a_deleted_row_is_named_by_verify(books):
    led, path = books
    row_id = _coin_row(path)
    _tamper(path, "DELETE FROM ledger WHERE id=?", (row_id,))
    _, problems = _verify(path)
    assert problems and any(str(row_id) in p for p in problems), problems
