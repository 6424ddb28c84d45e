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
        self.board = dict(opening, seat_coins=list(opening.get("seat_coins", [])))
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
    assert not ok and "  reserve: ledger $5.30, board $5.00  MISMATCH" in lines


def test_an_award_that_answers_no_recorded_intent_is_named(led):
    books = Books(led)
    books.coin(0)
    books.award(0, 10_000, command_id=5, intent=False)   # paid by some other host or tool
    ok, figures, lines = reconcile(led, B, books.board)
    assert not ok
    [row] = figures["awards_without_intent"]
    assert ("  award in ledger row %d (seat 1, $100.00) answers no intent this host recorded: "
            "paid from another host or tool?" % row) in lines


def test_awards_the_board_counts_but_the_books_lack_are_named(led):
    books = Books(led)
    books.award(0, 10_000, command_id=5)
    ok, figures, lines = reconcile(led, B, dict(books.board, wins=books.board["wins"] + 20_000,
                                                 hits=books.board["hits"] + 1))
    assert not ok and not figures["awards_ok"]
    assert "  awards: 1 in the ledger, $100.00; board 2 hits, $300.00  MISMATCH" in lines


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


# ---- which records explain an award ----------------------------------------------------------------
def test_only_an_award_intent_explains_an_award(led):
    """Reconcile per award: the host records an intent to *award* before it sends one. An intent
    for another command that happens to carry the same id, or the host's record of a reply (kind
    "cmd", written after the fact), explains nothing."""
    books = Books(led)
    led.note(B, "intent", {"cmd": "meter_set", "args": {"new": 5}, "id": 9})
    books.award(0, 1_000, command_id=9, intent=False)
    led.note(B, "cmd", {"cmd": "award", "args": {"seat": 1}, "id": 10, "reply": {"ok": 1}})
    books.award(1, 2_000, command_id=10, intent=False)
    ok, figures, lines = reconcile(led, B, books.board)
    assert not ok and len(figures["awards_without_intent"]) == 2, lines
    assert figures["seats_ok"] and figures["awards_ok"]  # the sums agree: only the intents are missing


def test_an_award_without_a_seat_is_named_with_seat_0(led):
    # (a pool's award names no seat of this table; seat numbers are shown from 1)
    books = Books(led)
    books.record("award", round=1, amount=700, from_meter=True, meter_cents=700, reset=False, hand="-", id=3)
    books.board["meter"] -= 700
    books.board["wins"] += 700
    books.board["hits"] += 1
    ok, figures, lines = reconcile(led, B, books.board)
    [row] = figures["awards_without_intent"]
    assert ("  award in ledger row %d (seat 0, $7.00) answers no intent this host recorded: "
            "paid from another host or tool?" % row) in lines


def test_a_malformed_money_event_is_named_by_row_and_counts_nowhere(led):
    books = Books(led)
    books.coin(0)
    books.record("award", seat=0, round=1, from_meter=True, meter_cents=500, id=4)  # no "amount"
    bad_row = list(led.events(B))[-1]["id"]
    books.coin(1)  # the events after it are still read
    ok, figures, lines = reconcile(led, B, books.board)
    assert not ok and figures["award_count"] == 0 and figures["awards"] == 0
    assert figures["tokens"] == 2 and figures["contributions"] == 140 and figures["seats_ok"], figures
    bad = [line for line in lines if line.startswith("  ledger row ")]
    assert bad == ["  ledger row %d: award event without 'amount': the board and this host disagree on the "
                   "vocabulary (firmware and tablectl versions?)" % bad_row], lines


# ---- per seat -----------------------------------------------------------------------------------
def test_a_board_with_more_seats_than_its_opening_snapshot_counts_the_new_seats_from_0(led):
    """The opening snapshot names the seats the board had then; a seat added since opened at 0."""
    books = Books(led, dict(OPENING, seat_coins=[4, 2]))
    books.board["seat_coins"] = [4, 2, 0]
    books.coin(2)
    books.coin(0)
    ok, figures, lines = reconcile(led, B, books.board)
    assert ok and figures["seats_ok"], lines
    assert "  tokens per seat            OK" in lines
    ok, figures, lines = reconcile(led, B, dict(books.board, seat_coins=[5, 2, 2]))
    assert not ok and "  tokens per seat            MISMATCH: seat 3: ledger 1 tokens, board 2" in lines


def test_a_seat_with_no_token_in_the_books_is_named_with_0_tokens(led):
    books = Books(led)
    books.coin(0)
    ok, figures, lines = reconcile(led, B, dict(books.board, seat_coins=[1, 1, 0]))
    assert not ok and "  tokens per seat            MISMATCH: seat 2: ledger 0 tokens, board 1" in lines


def test_an_opening_snapshot_without_seat_counts_opens_every_seat_at_0(led):
    # (a snapshot of firmware that did not count tokens per seat yet)
    books = Books(led, {k: v for k, v in OPENING.items() if k != "seat_coins"})
    books.board["seat_coins"] = [0, 0]
    books.coin(1)
    ok, figures, lines = reconcile(led, B, books.board)
    assert ok and figures["seats_ok"], lines
    assert not reconcile(led, B, dict(books.board, seat_coins=[0, 2]))[0]


def test_a_board_reply_without_seat_counts_checks_no_seat(led):
    books = Books(led)
    books.coin(0)
    board = dict(books.board)
    del board["seat_coins"]
    ok, figures, lines = reconcile(led, B, board)
    assert ok and figures["seats_ok"], lines


# ---- awards: wins and hits, each on its own ----------------------------------------------------------
def test_the_awards_line_shows_what_the_board_counted_since_the_opening(led):
    books = Books(led, dict(OPENING, wins=123_456, hits=7))
    books.award(0, 10_000, command_id=5)
    books.award(2, 2_500, command_id=6)
    ok, figures, lines = reconcile(led, B, books.board)
    assert ok and figures["awards_ok"], lines
    assert "  awards: 2 in the ledger, $125.00; board 2 hits, $125.00  OK" in lines


def test_wins_alone_or_hits_alone_off_is_a_mismatch(led):
    books = Books(led, dict(OPENING, wins=1_000, hits=1))
    books.award(0, 10_000, command_id=5)
    for board, shown in ((dict(books.board, wins=books.board["wins"] + 1), "board 1 hits, $100.01"),
                         (dict(books.board, hits=books.board["hits"] + 1), "board 2 hits, $100.00")):
        ok, figures, lines = reconcile(led, B, board)
        assert not ok and not figures["awards_ok"], lines
        assert "  awards: 1 in the ledger, $100.00; %s  MISMATCH" % shown in lines


def test_an_opening_of_older_firmware_without_wins_or_hits_opens_them_at_0(led):
    opening = {k: v for k, v in OPENING.items() if k not in ("wins", "hits")}
    books = Books(led, dict(opening, seat_coins=[0, 0, 0]))
    books.board.update(wins=0, hits=0)
    books.award(1, 4_000, command_id=8)
    ok, figures, lines = reconcile(led, B, books.board)
    assert ok and figures["awards_ok"], lines
    assert "  awards: 1 in the ledger, $40.00; board 1 hits, $40.00  OK" in lines
    for board in (dict(books.board, wins=4_001), dict(books.board, hits=2)):
        assert not reconcile(led, B, board)[0]


def test_a_board_reply_without_wins_or_hits_checks_no_award_count(led):
    books = Books(led)
    books.award(1, 4_000, command_id=8)
    board = {k: v for k, v in books.board.items() if k not in ("wins", "hits")}
    ok, figures, lines = reconcile(led, B, board)
    assert ok and figures["awards_ok"], lines
    assert "  awards: 1 in the ledger, $40.00; board 0 hits, $0.00  OK" in lines


def test_events_kept_under_a_number_the_ledger_held_count_and_the_figures_say_how_many(led):
    """A board whose journal went back sends a token under a number the ledger already holds: the
    ledger keeps it apart (seq_conflict), reconcile counts its money all the same, raises the alarm,
    and its figures say how many such events there were; books without any say nothing of them."""
    books = Books(led)
    books.coin(0)
    ok, figures, _ = reconcile(led, B, books.board)
    assert ok and "conflicted_events" not in figures
    led.record_events(B, [signed_event(None, books.q, "coin", B, seat=1, round=1, inc=70, reserve=30)])
    books.board["meter"] += 70
    books.board["res"] += 30
    books.board["seat_coins"][1] += 1
    ok, figures, lines = reconcile(led, B, books.board)
    assert figures["conflicted_events"] == 1 and figures["contributions"] == 140 and figures["tokens"] == 2
    assert figures["expected"] == figures["actual"] and figures["seats_ok"]
    assert not ok and any("seq_conflict" in line for line in lines), lines
