"""`tablectl report` over a ledger filled by real Ledger.record_events calls, with a clock we set."""
import csv
import datetime
import json

import pytest

from tablectl import cli
from tablectl import ledger as ledger_mod
from tablectl.commands import report
from tablectl.ledger import Ledger

BOARD = "sim-1"
SEED = 10000000
T0 = datetime.datetime(2024, 6, 1, 18, 10).timestamp()


class Clock:
    def __init__(self, t):
        self.t = t

    def time(self):
        return self.t


@pytest.fixture
def books(tmp_path, monkeypatch):
    """A session: 10 tokens over 2 hours across 3 seats, a token value change, a straight flush paid
    as a fixed sum, a royal paid from the meter with a reset, and a meter correction."""
    clock = Clock(T0)
    monkeypatch.setattr(ledger_mod, "time", clock)
    db = str(tmp_path / "books.db")
    led = Ledger(db)
    seq = [0]
    state = {"meter": SEED}

    def ev(kind, fields=None, patch=None, at=None):
        if at is not None:
            clock.t = at
        seq[0] += 1
        body = {"t": "ev", "b": BOARD, "k": kind, "q": seq[0], "ms": seq[0] * 100}
        body.update(fields or {})
        if patch:
            body["p"] = patch
        last, new, dup, gap = led.record_events(BOARD, [body])
        assert (last, new, dup, gap) == (seq[0], 1, 0, False)

    def coin(seat, at):
        state["meter"] += 70
        ev("coin", {"seat": seat, "round": 1, "inc": 70, "to_meter": 70}, {"meter": state["meter"]}, at)

    ev("boot", {"boots": 1}, {"boots": 1}, at=T0)
    for i, seat in enumerate([0, 0, 2, 6, 2, 0]):  # 18:10 .. 18:35: seat1 x3, seat3 x2, seat7 x1
        coin(seat, T0 + 300 * i)
    # the token value changes to $5 (config event with the board's new config in its patch)
    ev("config", {"old": {"token_cents": 100}, "new": {"token_cents": 500}},
       {"cfg": {"token_cents": 500, "increment_cents": 70}}, at=T0 + 3600)
    for i, seat in enumerate([2, 2, 3, 0]):  # 19:11 .. 19:26: seat3 x2, seat4 x1, seat1 x1
        coin(seat, T0 + 3660 + 300 * i)
    before = state["meter"]
    ev("award", {"seat": 3, "amount": 50000, "from_meter": False, "reset": False, "hand": "straight flush",
                 "meter_before": before, "seed_added": 0}, {"wins": 50000, "hits": 1, "base": "LOCKED"},
       at=T0 + 5400)
    ev("award", {"seat": 2, "amount": before, "from_meter": True, "reset": True, "hand": "royal flush",
                 "meter_before": before, "seed_added": SEED}, {"meter": SEED, "base": "LOCKED"}, at=T0 + 5500)
    state["meter"] = SEED
    ev("correction", {"old": SEED, "new": SEED + 5, "reason": "test"}, {"meter": SEED + 5, "corr": 5},
       at=T0 + 5600)
    led.close()
    return db


def events(db):
    led = Ledger(db)
    try:
        return list(led.events())
    finally:
        led.close()


def test_coin_in_per_seat_and_hour_in_integer_cents(books):
    rep = report.coin_in(events(books))
    by_seat = {r["seat"]: r for r in rep["seats"]}
    assert sorted(by_seat) == [1, 3, 4, 7]  # 1-based
    assert by_seat[1]["tokens"] == 4 and by_seat[1]["cents"] == 3 * 100 + 500
    assert by_seat[3]["tokens"] == 4 and by_seat[3]["cents"] == 2 * 100 + 2 * 500
    assert by_seat[4] == {"board": BOARD, "seat": 4, "tokens": 1, "cents": 500, "contrib_cents": 70}
    assert rep["total"] == {"tokens": 10, "cents": 6 * 100 + 4 * 500, "contrib_cents": 700}
    hours = {r["hour"]: r for r in rep["hours"]}
    assert sorted(hours) == ["2024-06-01 18:00", "2024-06-01 19:00"]
    assert hours["2024-06-01 18:00"]["seats"] == {1: 3, 3: 2, 7: 1}
    assert hours["2024-06-01 19:00"]["cents"] == 2000
    for r in rep["seats"] + rep["hours"]:
        assert all(isinstance(r[k], int) for k in ("tokens", "cents", "contrib_cents"))


def test_meter_history_and_jackpots(books):
    rep = report.meter_history(events(books))
    kinds = [r["kind"] for r in rep["rows"]]
    assert kinds == ["coin"] * 10 + ["award", "correction"]  # the fixed-sum award did not move the meter
    s = rep["boards"][BOARD]
    assert s["first_cents"] == SEED + 70 and s["high_cents"] == SEED + 700 and s["last_cents"] == SEED + 5
    jp = report.jackpot_history(events(books))
    assert [r["seat"] for r in jp["rows"]] == [4, 3]
    royal = jp["rows"][1]
    assert royal["from_meter"] and royal["reset"] and royal["amount_cents"] == SEED + 700
    assert royal["meter_before_cents"] == SEED + 700 and royal["meter_after_cents"] == SEED
    assert jp["total_cents"] == 50000 + SEED + 700 and jp["from_meter_cents"] == SEED + 700


def test_cli_text_csv_json_and_period(books, tmp_path, capsys):
    out_csv = tmp_path / "coin.csv"
    assert cli.main(["report", "coin-in", "--db", books, "--csv", str(out_csv)]) == 0
    text = capsys.readouterr().out
    assert "$26.00" in text  # 6 x $1 + 4 x $5
    assert "total: 10 tokens, coin-in $26.00, to the meter $7.00" in text
    rows = list(csv.DictReader(open(out_csv)))
    assert rows[0]["section"] == "seat" and rows[0]["seat_or_hour"] == "1" and rows[0]["coin_in_dollars"] == "8.00"
    # only the second hour
    assert cli.main(["report", "coin-in", "--db", books, "--from", "2024-06-01 19:00", "--json"]) == 0
    rep = json.loads(capsys.readouterr().out)
    assert rep["total"]["tokens"] == 4 and rep["total"]["cents"] == 2000
    assert cli.main(["report", "jackpots", "--db", books]) == 0
    text = capsys.readouterr().out
    assert "royal flush" in text and "$100,007.00" in text and "2 jackpots" in text
    assert cli.main(["report", "meters", "--db", books, "--to", "2024-06-01 18:20"]) == 0
    text = capsys.readouterr().out
    assert text.count(" coin ") == 2  # 18:10 and 18:15; --to is exclusive


def test_plots_are_real_pngs(books, tmp_path, capsys):
    for what in ("meters", "coin-in", "jackpots"):
        png = tmp_path / ("%s.png" % what)
        assert cli.main(["report", what, "--db", books, "--plot", str(png)]) == 0
        data = png.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000
    capsys.readouterr()


def test_errors_are_plain(books, tmp_path, capsys):
    assert cli.main(["report", "meters", "--db", str(tmp_path / "none.db")]) == 1
    assert "tablectl: no ledger at" in capsys.readouterr().err
    assert cli.main(["report", "meters", "--db", books, "--from", "yesterday-ish"]) == 1
    assert "cannot read the time" in capsys.readouterr().err
    assert cli.main(["report", "jackpots", "--db", books, "--from", "2030-01-01", "--plot",
                     str(tmp_path / "x.png")]) == 1
    assert "nothing to plot" in capsys.readouterr().err


def test_parse_when():
    now = datetime.datetime(2024, 6, 1, 12, 0)
    assert report.parse_when("-2h", now) == datetime.datetime(2024, 6, 1, 10, 0).timestamp()
    assert report.parse_when("18:30", now) == datetime.datetime(2024, 6, 1, 18, 30).timestamp()
    assert report.parse_when("2024-05-31", now) == datetime.datetime(2024, 5, 31).timestamp()
    assert report.dollars(-12345) == "-$123.45" and report.plain_dollars(5) == "0.05"
