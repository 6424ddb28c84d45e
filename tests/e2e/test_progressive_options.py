"""The table's progressive options end to end: set on the board in SERVICE, signed;
read back by `status` (text and --json) and used by `jackpot`, with no per-run flag.

Rulebook 000 rule 9.3: "Straight flush pays either 10% of the displayed progressive jackpot or pays
$5,000 (licensee chooses payout option at the time the game is put into play)".
"""
import json

import pytest

from test_cli_e2e import Board


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    board = None
    try:
        board = Board(tmp_path_factory.mktemp("options"), with_service=True)
        yield board
    finally:
        if board is not None:
            board.close()


def test_options_set_in_service_show_in_status_and_drive_the_jackpot(table):
    status = json.loads(table.run("status", "--json").stdout)
    assert status["progressive"] == {"straight_flush_award": "percent", "fixed_awards_from_meter": False,
                                     "token_cents": 100, "seed_cents": 10_000_000}
    assert "straight flush 10% of the meter; fixed awards paid by the house" in table.run("status").stdout
    # the per-run choice is gone: the option is the table's
    old = table.run("jackpot", "--seat", "1", "--cards", "9h 8h 7h 6h 5h", "--straight-flush", "fixed",
                    check=False)
    assert old.returncode != 0 and "--straight-flush" in old.stderr
    table.bench("switch", "on")
    table.run("provision")
    refused = table.run("config", "set", "sf_fixed", "1", check=False)   # not in SERVICE
    assert refused.returncode == 1 and "SERVICE" in refused.stderr
    table.run("service", "enter")
    assert table.run("config", "set", "sf_fixed", "1").stdout.strip() == "sf_fixed = 1 (was 0)"
    table.run("config", "set", "fixed_from_meter", "1")
    bad = table.run("config", "set", "tokens_per_round", "2", check=False)
    assert bad.returncode == 1 and "tokens_per_round=2 is out of range 1..1" in bad.stderr
    table.run("service", "exit")
    table.bench("switch", "off")
    status = json.loads(table.run("status", "--json").stdout)
    assert status["progressive"]["straight_flush_award"] == "fixed"
    assert status["progressive"]["fixed_awards_from_meter"] is True
    assert "straight flush a fixed sum" in table.run("status").stdout
    # a straight flush now pays the fixed $5,000, from the meter as the table says
    table.run("unlock")
    table.bench("coin", 1)
    table.bench("key", "lock")
    out = json.loads(table.run("jackpot", "--seat", "1", "--cards", "9h 8h 7h 6h 5h", "--dry-run", "--json").stdout)
    assert out["options"]["straight_flush_award"] == "fixed"
    pay = out["payments"][0]
    assert (pay["amount_cents"], pay["meter_cents"], pay["house_cents"]) == (500_000, 500_000, 0)
    # paid for real on the board: a four of a kind left of a royal. The royal is the whole meter
    # (rule 9.3) and the meter resets to its seed; the four of a kind's $500 is the house's.
    table.run("unlock")
    table.bench("coin", 1)
    table.bench("coin", 2)
    table.bench("key", "lock")
    table.bench("key", "jackpot")  # an award needs the dealer's jackpot key (docs/SECURITY.md)
    meter = json.loads(table.run("meters", "--json").stdout)["meter_cents"]
    out = json.loads(table.run("jackpot", "--seat", "1", "--cards", "9c 9d 9h 9s 2c", "--seat", "2",
                               "--cards", "As Ks Qs Js Ts", "--json").stdout)
    assert [(p["seat"], p["amount_cents"], p["meter_cents"], p["house_cents"]) for p in out["payments"]] == [
        (1, 50_000, 0, 50_000), (2, meter, meter, 0)]
    assert out["payments"][-1]["board_meter_after"] == 10_000_000


def test_settle_takes_the_options_from_the_board(table, tmp_path):
    # runs after the test above: the board says straight flush fixed, fixed awards from the meter
    rnd = {"seats": [{"seat": 1, "ante": 100, "bet": 200, "progressive": 100, "cards": "9h 8h 7h 6h 5h",
                      "decision": "call"}],
           "dealer": {"cards": "Kh Kc 8c 4d 2d", "draw": "7c 3c"}, "meter_cents": 2_000_000}
    path = tmp_path / "round.json"
    path.write_text(json.dumps(rnd))
    st = json.loads(table.run("settle", "caribbean-draw", path, "--from-board", "--json").stdout)
    assert st["progressive"][0]["award_cents"] == 500_000 and st["progressive"][0]["meter_cents"] == 500_000
    # without the board, the round file's own options (here none: the pay table's defaults)
    st = json.loads(table.run("settle", "caribbean-draw", path, "--json").stdout)
    assert st["progressive"][0]["award_cents"] == 200_000
    rnd["table"] = {"straight_flush_award": "percent"}
    path.write_text(json.dumps(rnd))
    bad = table.run("settle", "caribbean-draw", path, "--from-board", check=False)
    assert bad.returncode == 1
    assert bad.stderr.strip() == ('tablectl: the round says table straight_flush_award = "percent" but the '
                                  'board is configured "fixed": the option is the table\'s (rulebook 000 rule '
                                  '9.3); drop it from the round or change the board in SERVICE')


def test_par_prices_the_table_as_the_board_is_configured(table):
    # the board says straight flush fixed (set above), $1 token: rulebook 000's $5,000 option
    out = table.run("par", "progressive", "--from-board", "--no-progress").stdout
    assert "break-even meter: $369,290.00" in out and "straight flush a fixed $5,000.00" in out
    bad = table.run("par", "progressive", "--from-board", "--token-cents", "500", "--no-progress", check=False)
    assert bad.returncode == 1 and "the board's token is 100 cents" in bad.stderr
