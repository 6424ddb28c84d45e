"""Paying a round's progressive winners (tablectl.awards): what the host checks before it signs
an award, against the real firmware (table.app on the virtual board, run in-process on CPython,
its frames signed with the real protocol) and a real SQLite ledger.

Rulebook 000 rule 9: the progressive is paid to "qualified players", a seat that had a token when
the round locked, "flush or better" (9.3); docs/SECURITY.md: an award only after the dealer's
jackpot key (JACKPOT_PENDING), and a seat is paid once a round (the host from its ledger, the board
from its state). Each refusal here is a one-line error, and nothing is sent to the board for it.
"""
import json
import os
import sys

import pytest

from conftest import FIRMWARE, ROOT
from table import protocol as proto
from tablectl.awards import award_command_id, paid_in_ledger, parse_hands, pay_jackpot, payments_json
from tablectl.errors import TablectlError
from tablectl.ledger import Ledger
from tablegames.progressive import parse_hand

KEY = bytes(range(40, 72))
LOCK, UNLOCK, JACKPOT = 0, 1, 2
ROYAL = "As Ks Qs Js Ts"
FLUSH = "2h 5h 9h Jh Kh"
NOTHING = "2c 3d 4h 5s 7c"


@pytest.fixture
def rig(monkeypatch):
    """A keyed virtual board with tokens on seats 1 and 2 (1-based), locked, jackpot key turned."""
    monkeypatch.syspath_prepend(os.path.join(ROOT, "tests", "firmware"))
    monkeypatch.syspath_prepend(FIRMWARE)
    for name in ("simkit", "boards", "boards.sim"):  # the firmware's own modules, not a cached host copy
        sys.modules.pop(name, None)
    from simkit import Rig
    r = Rig("host-awards", key=KEY)
    r.board.switch = True
    assert r.command("provision", {"key": KEY.hex()})["ok"] == 1
    r.board.switch = False
    r.coin(0)
    r.coin(1)
    r.run_ms(400)
    r.press(LOCK)
    r.press(JACKPOT)
    return r


def board_command(rig, sent):
    """command(name, args, command_id=None) as `tablectl serve` gives pay_jackpot: a signed frame
    to the board, its reply back, a refusal raised. `sent` collects the names sent."""
    def command(name, args, command_id=None):
        cid = command_id if command_id is not None else 100000 + len(sent)
        sent.append(name)
        rig.send(proto.command(cid, name, args), rig.key)
        rig.run_ms(20)
        reply = rig.replies.pop(cid)
        if not reply.get("ok"):
            raise TablectlError("board refused %s: %s (%s)" % (name, reply.get("msg"), reply.get("err")))
        return reply
    return command


def hands(*pairs):
    return parse_hands([seat for seat, _ in pairs], [cards for _, cards in pairs])


def books(rig):
    s = rig.app.state
    return s["meter"], s["wins"], s["hits"], s["paid"]


def test_parse_hands_names_what_is_wrong():
    for seats, cards, error in (
            ([1, 2], [ROYAL], "give one --cards for every --seat"),
            (["1"], [ROYAL], "seat '1' is not a seat number"),
            ([True], [ROYAL], "seat True is not a seat number"),
            ([1, 1], [ROYAL, FLUSH], "seat 1 named twice"),
            ([1], [5], "seat 1's cards must be text like \"As Ks Qs Js Ts\""),
            ([1, 2], [ROYAL, "As 2d 3d 4d 5d"], "card As is in the hands of seats 1 and 2")):
        with pytest.raises(TablectlError) as exc:
            parse_hands(seats, cards)
        assert str(exc.value) == error
    assert parse_hands([2, 1], [FLUSH, ROYAL]) == {1: parse_hand(ROYAL), 2: parse_hand(FLUSH)}


def test_no_award_before_the_dealers_jackpot_key_and_a_dry_run_needs_the_table_locked(rig):
    rig.press(UNLOCK)  # a new round, open: no jackpot key turned
    sent = []
    for dry_run in (False, True):
        with pytest.raises(TablectlError) as exc:
            pay_jackpot(board_command(rig, sent), "sim-test", hands((1, ROYAL)), dry_run=dry_run)
        assert str(exc.value) == ("the table is OPEN: a jackpot is paid only after the dealer turns the jackpot key "
                                  "(table locked, then JACKPOT_PENDING)")
    assert sent == ["status", "status"]


def test_a_dry_run_of_a_locked_table_computes_the_payment_and_sends_nothing(rig):
    rig.press(UNLOCK)
    rig.coin(0)
    rig.run_ms(400)
    rig.press(LOCK)  # locked, the jackpot key not turned
    before, sent = books(rig), []
    result = pay_jackpot(board_command(rig, sent), "sim-test", hands((1, FLUSH)), dry_run=True)
    assert sent == ["status", "meters", "config_get"] and books(rig) == before
    [pay] = result["payments"]
    assert (pay["seat"], pay["amount_cents"], pay["meter_after"]) == (1, 5000, before[0])  # $50, from the house
    assert "board_meter_after" not in pay and "already_paid" not in pay


@pytest.mark.parametrize("pairs, error", [
    (((8, ROYAL),), "seat 8 does not exist on this table (1-7)"),
    (((0, ROYAL),), "seat 0 does not exist on this table (1-7)"),
    (((3, ROYAL),), "seat 3 had no progressive token when round 1 locked: no award"),
    (((1, FLUSH), (2, NOTHING)), "seat 2's hand 2c 3d 4h 5s 7c (seven high, 7-5-4-3-2) is not a progressive hand (flush or better)"),
])
def test_an_award_the_rules_do_not_allow_is_refused_before_anything_is_sent(rig, pairs, error):
    before, sent = books(rig), []
    with pytest.raises(TablectlError) as exc:
        pay_jackpot(board_command(rig, sent), "sim-test", hands(*pairs))
    assert str(exc.value) == error
    assert "award" not in sent and books(rig) == before


def test_a_seat_the_ledger_shows_paid_under_another_command_is_not_paid_again(rig, tmp_path):
    # Paid by a command the host did not derive (an award sent by hand): the ledger's row, not
    # the id, says the seat has its money; the host refuses before it signs anything.
    rig.command("award", {"seat": 0, "round": 1, "amount_cents": 5000, "meter_cents": 0})
    ledger = Ledger(str(tmp_path / "books.db"))
    try:
        ledger.record_events("sim-test", rig.events)
        row = paid_in_ledger(ledger, "sim-test", 1, 0)
        assert row is not None and row["body"]["id"] != award_command_id("sim-test", 1, 0)
        assert paid_in_ledger(ledger, "sim-test", 1, 1) is None and paid_in_ledger(ledger, "sim-test", 2, 0) is None
        before, sent = books(rig), []
        with pytest.raises(TablectlError) as exc:
            pay_jackpot(board_command(rig, sent), "sim-test", hands((1, FLUSH)), ledger=ledger)
        assert str(exc.value) == "seat 1 was paid in round 1 already (ledger row %d)" % row["id"]
        assert "award" not in sent and books(rig) == before
    finally:
        ledger.close()


def test_a_retried_jackpot_gets_the_first_payment_back_and_pays_nothing_more(rig, tmp_path):
    ledger = Ledger(str(tmp_path / "books.db"))
    try:
        first = pay_jackpot(board_command(rig, []), "sim-test", hands((2, FLUSH)), ledger=ledger)
        paid = books(rig)
        assert paid[1:3] == (5000, 1)
        ledger.record_events("sim-test", rig.events)  # the award row, under the derived id
        again = pay_jackpot(board_command(rig, []), "sim-test", hands((2, FLUSH)), ledger=ledger)
        assert books(rig) == paid
        [p1], [p2] = first["payments"], again["payments"]
        assert "already_paid" not in p1 and p1["repeat"] is False
        assert p2["already_paid"] is True and p2["repeat"] is True
        assert p2["board_meter_after"] == p1["board_meter_after"] == paid[0]
        out = json.loads(payments_json(again))
        assert out["round"] == 1 and out["meter_cents"] == again["meter_before"]
        assert [(p["seat"], p["amount_cents"]) for p in out["payments"]] == [(2, 5000)]
    finally:
        ledger.close()


def test_a_retry_after_the_board_restarted_reports_the_amount_its_first_reply_names(rig, tmp_path):
    # A royal takes the whole meter and resets it: computed again on a retry, from the meter as it
    # stands now, the award would be the seed. The board restarted since (its reply cache is gone:
    # its pay-once record answers the repeat, marked as one) and the ledger has not filed the award
    # yet: the board's first reply is the word on what was paid, and nothing more is paid.
    ledger = Ledger(str(tmp_path / "books.db"))
    try:
        first = pay_jackpot(board_command(rig, []), "sim-test", hands((1, ROYAL)), ledger=ledger)
        [p1] = first["payments"]
        paid = books(rig)
        assert p1["reset"] is True and p1["amount_cents"] == first["meter_before"] > paid[0]  # the seed now
        rig.boot()
        assert paid_in_ledger(ledger, "sim-test", 1, 0) is None
        again = pay_jackpot(board_command(rig, []), "sim-test", hands((1, ROYAL)), ledger=ledger)
        [p2] = again["payments"]
        assert again["meter_before"] == paid[0]
        assert (p2["amount_cents"], p2["board_meter_after"]) == (p1["amount_cents"], p1["board_meter_after"])
        assert p2["already_paid"] is True and p2["repeat"] is True and "ledger_row" not in p2
        # The reply names the amount, not its split: meter and house are left to the board's award
        # event (the books have it once the service files it), never guessed from the reset meter.
        assert (p2["meter_cents"], p2["house_cents"]) == (None, None)
        assert books(rig) == paid
    finally:
        ledger.close()


def test_a_retry_in_the_same_boot_reports_what_the_board_paid_not_a_figure_from_the_reset_meter(rig, tmp_path):
    # In the same boot the board's reply cache answers the repeated command id with its first
    # reply as it was (no "repeat" mark): the seat's paid bit is what tells the host it retries.
    ledger = Ledger(str(tmp_path / "books.db"))
    try:
        [p1] = pay_jackpot(board_command(rig, []), "sim-test", hands((1, ROYAL)), ledger=ledger)["payments"]
        paid = books(rig)
        [p2] = pay_jackpot(board_command(rig, []), "sim-test", hands((1, ROYAL)), ledger=ledger)["payments"]
        assert p2["repeat"] is True and p2["already_paid"] is True
        assert p2["amount_cents"] == p1["amount_cents"] > paid[0]  # the royal's meter, not the seed
        assert (p2["meter_cents"], p2["house_cents"]) == (None, None)
        assert books(rig) == paid
    finally:
        ledger.close()


def test_a_dry_run_for_a_seat_paid_before_shows_no_figure_the_books_do_not_hold(rig, tmp_path):
    # Nothing is sent on a dry run, and the meter the payment reset cannot say what was paid: the
    # line says "paid before" with no amount rather than a figure computed from the seed.
    ledger = Ledger(str(tmp_path / "books.db"))
    try:
        pay_jackpot(board_command(rig, []), "sim-test", hands((1, ROYAL)), ledger=ledger)
        paid = books(rig)
        sent = []
        [line] = pay_jackpot(board_command(rig, sent), "sim-test", hands((1, ROYAL)), ledger=ledger,
                             dry_run=True)["payments"]
        assert line["already_paid"] is True
        assert (line["amount_cents"], line["meter_cents"], line["house_cents"]) == (None, None, None)
        assert "award" not in sent and books(rig) == paid
    finally:
        ledger.close()


def test_a_repeated_awards_reply_that_names_no_amount_is_an_error_not_a_guess(rig, tmp_path):
    # A reply to a retry is the only word on what was paid when the books lack the award: one that
    # names no whole amount (an older board, a damaged relay) is refused, never filled in.
    ledger = Ledger(str(tmp_path / "books.db"))
    try:
        pay_jackpot(board_command(rig, []), "sim-test", hands((1, ROYAL)), ledger=ledger)
        paid = books(rig)
        real = board_command(rig, [])

        def without_amount(name, args, command_id=None):
            reply = real(name, args, command_id)
            return {k: v for k, v in reply.items() if k != "amount"} if name == "award" else reply
        with pytest.raises(TablectlError) as exc:
            pay_jackpot(without_amount, "sim-test", hands((1, ROYAL)), ledger=ledger)
        assert str(exc.value) == ("the board's reply to seat 1's repeated award names no amount: see its award event "
                                  "in the books (tablectl audit)")
        assert books(rig) == paid
    finally:
        ledger.close()
