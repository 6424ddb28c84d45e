"""Reconciliation (tablectl.reconcile) of a real ledger against the board's own meters: each
identity of reconcile.py's docstring, and what it names when one does not hold.

    opening + seeds + contributions + corrections - awards from the meter  =  meter + overflow
    per seat: opening tokens + coin events of the seat                      =  the board's count
    awards:   opening wins + every award's amount = the board's wins; hits likewise;
              every award answers an intent the host recorded before it sent it
"""
import pytest

from boardside import signed_event
from tablectl.ledger import Ledger
from tablectl.reconcile import ROLLOVER_CENTS, reconcile

B = "b1"
OPENING = {"meter": 1_000_000, "over": 0, "res": 500, "contrib": 0, "rcontrib": 0, "seeded": 1_000_000,
           "awarded": 0, "wins": 0, "hits": 0, "corr": 0, "frozen": 0, "round": 1,
           "seat_coins": [0, 0, 0], "seat_tokens": [0, 0, 0]}


@pytest.fixture
def led(tmp_path, monkeypatch):
    monkeypatch.delenv("TABLECTL_KEYS", raising=False)
    ledger = Ledger(str(tmp_path / "books.db"))
    yield ledger
    ledger.close()


class Books:
    """Events recorded in the ledger in order, and the meters a board that made them would show."""

    def __init__(self, led, opening=OPENING, events_before=0):
        self.led = led
        self.q = events_before   # events the ledger holds already, before the snapshot
        self.board = dict(opening, seat_coins=list(opening["seat_coins"]))
        self.record("meters", **opening)

    def record(self, kind, **fields):
        self.q += 1
        self.led.record_events(B, [signed_event(None, self.q, kind, B, **fields)])

    def coin(self, seat, inc=70, reserve=30):
        self.record("coin", seat=seat, round=1, inc=inc, reserve=reserve)
        self.board["meter"] += inc
        self.board["res"] += reserve
        self.board["seat_coins"][seat] += 1

    def award(self, seat, amount, command_id, intent=True):
        if intent:
            self.led.note(B, "intent", {"cmd": "award", "args": {"seat": seat}, "id": command_id})
        self.record("award", seat=seat, round=1, amount=amount, from_meter=True, meter_cents=amount,
                    reset=False, hand="flush", id=command_id)
        self.board["meter"] -= amount
        self.board["wins"] += amount
        self.board["hits"] += 1


def test_books_that_balance_reconcile_with_every_figure_shown(led):
    books = Books(led)
    for seat in (0, 1, 1, 2):
        books.coin(seat)
    books.award(1, 50_000, command_id=77)
    ok, figures, lines = reconcile(led, B, books.board)
    assert ok, lines
    assert (figures["opening"], figures["contributions"], figures["awards"], figures["expected"]) == \
        (1_000_000, 280, 50_000, 950_280)
    assert figures["expected"] == figures["actual"] and figures["expected_reserve"] == 500 + 120
    assert figures["seats_ok"] and figures["awards_ok"] and figures["awards_without_intent"] == []


def test_reconcile_names_a_seat_whose_tokens_differ(led):
    books = Books(led)
    books.coin(0)
    books.coin(2)
    board = dict(books.board, seat_coins=[1, 0, 2])   # the board counted one more at seat 3
    ok, figures, lines = reconcile(led, B, board)
    assert not ok and not figures["seats_ok"]
    assert "  tokens per seat            MISMATCH: seat 3: ledger 1 tokens, board 2" in lines
    assert figures["expected"] == figures["actual"]   # the meter itself agrees: only the count is named


def test_reconcile_names_a_meter_that_differs_from_the_books(led):
    books = Books(led)
    books.coin(0)
    ok, figures, lines = reconcile(led, B, dict(books.board, meter=books.board["meter"] + 1))
    assert not ok
    assert any(line.startswith("  board's meter + overflow") and line.endswith("MISMATCH") for line in lines)


def test_reconcile_names_a_reserve_that_differs_from_the_books(led):
    books = Books(led)
    books.coin(0)
    ok, _, lines = reconcile(led, B, dict(books.board, res=books.board["res"] - 30))
    assert not ok and "  reserve: ledger 530, board 500  MISMATCH" in lines


def test_an_award_that_answers_no_recorded_intent_is_named(led):
    books = Books(led)
    books.coin(0)
    books.award(0, 10_000, command_id=5, intent=False)   # paid by some other host or tool
    ok, figures, lines = reconcile(led, B, books.board)
    assert not ok
    [row] = figures["awards_without_intent"]
    assert ("  award in ledger row %d (seat 1, 10000 cents) answers no intent this host recorded: "
            "paid from another host or tool?" % row) in lines


def test_awards_the_board_counts_but_the_books_lack_are_named(led):
    books = Books(led)
    books.award(0, 10_000, command_id=5)
    ok, figures, lines = reconcile(led, B, dict(books.board, wins=books.board["wins"] + 20_000,
                                                 hits=books.board["hits"] + 1))
    assert not ok and not figures["awards_ok"]
    assert "  awards: 1 in the ledger, 10000 cents; board 2 hits, 30000 cents  MISMATCH" in lines


def test_tokens_before_the_first_meter_snapshot_belong_to_the_opening_balance(led):
    led.record_events(B, [signed_event(None, 1, "coin", B, seat=0, round=1, inc=70)])
    # the board's snapshot already holds that token
    books = Books(led, dict(OPENING, seat_coins=[1, 0, 0], meter=OPENING["meter"] + 70), events_before=1)
    books.coin(0)
    ok, figures, lines = reconcile(led, B, books.board)
    assert ok, lines
    assert figures["tokens"] == 1 and figures["opening"] == OPENING["meter"] + 70


def test_a_money_event_without_a_field_reconcile_reads_is_named_not_guessed(led):
    books = Books(led)
    books.record("coin", seat=0, round=1, reserve=30)   # no "inc"
    ok, _, lines = reconcile(led, B, books.board)
    assert not ok
    assert any("coin event without 'inc'" in line for line in lines), lines


def test_seat_counts_compare_across_the_rollover(led):
    opening = dict(OPENING, seat_coins=[ROLLOVER_CENTS - 1, 0, 0])
    books = Books(led, opening)
    books.coin(0)
    board = dict(books.board, seat_coins=[0, 0, 0])   # the board's counter rolled over to 0
    ok, figures, lines = reconcile(led, B, board)
    assert ok and figures["seats_ok"], lines


def test_without_a_meter_snapshot_there_is_nothing_to_reconcile_from(led):
    led.record_events(B, [signed_event(None, 1, "coin", B, seat=0, round=1, inc=70)])
    ok, figures, lines = reconcile(led, B, {"meter": 70, "over": 0, "res": 0})
    assert (ok, figures, lines) == (False, {}, ["no meter snapshot for board b1 in the ledger yet"])
