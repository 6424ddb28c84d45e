"""`tablectl par`: the command's output forms and its errors."""
import json
import os
from fractions import Fraction

import pytest

import tablegames
from tablectl import cli


def test_json_has_exact_fractions(capsys, tmp_path):
    png = tmp_path / "tcp.png"
    assert cli.main(["par", "three-card-poker", "--json", "--no-progress", "--plot", str(png)]) == 0
    out = json.loads(capsys.readouterr().out)
    ante = out["sheets"][0]
    assert ante["total_combinations"] == 407170400
    assert sum(r["combinations"] for r in ante["rows"]) == 407170400
    num, den = map(int, ante["house_edge"]["exact"].split("/"))
    assert round(100 * num / den, 2) == 3.37
    assert png.stat().st_size > 1000


def test_progressive_at_a_meter(capsys, tmp_path):
    png = tmp_path / "meter.png"
    assert cli.main(["par", "progressive", "--meter", "250,000", "--no-progress", "--plot", str(png)]) == 0
    text = capsys.readouterr().out
    assert "break-even meter: $218,047.37" in text
    assert "meter $250,000.00" in text
    assert png.exists()


@pytest.mark.parametrize("argv,words", [
    (["par", "blackjack"], "unknown game"),
    (["par", "caribbean-stud", "--paytable", "nope"], "no pay table 'nope'"),
    (["par", "caribbean-stud", "--meter", "5"], "--meter applies to the progressive"),
    (["par", "progressive", "--meter", "lots"], "is not an amount"),
    (["par", "caribbean-stud", "--strategy", "x.gz"], "--strategy applies to caribbean-draw only"),
    (["par", "caribbean-draw", "--strategy", "/no/such/folder/x.gz"], "no folder /no/such/folder"),
    (["par", "caribbean-draw", "--hand", "Ah Kd 7c 4s 2h", "--up", "9s"], "no dealer up card"),
])
def test_user_errors(capsys, argv, words):
    assert cli.main(argv + ["--no-progress"]) == 1
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("argv,words", [
    # one name per game and pay table, the settlement engine's: the PAR sheets' former names are gone
    (["par", "clear-bet"], "unknown game 'clear-bet': choose one of"),
    (["par", "caribbean-stud", "--paytable", "us-common"], "has no pay table 'us-common': choose one of caribbean-stud-eu, caribbean-stud-us"),
])
def test_names_are_the_settlement_engines(capsys, argv, words):
    assert cli.main(argv + ["--no-progress"]) == 1
    assert words in capsys.readouterr().err
    assert cli.main(["par", "caribbean-clear-dark", "--paytable", "caribbean-clear-dark", "--hand", "Ah Kd 4c 3s 2h",
                     "--up", "2s", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["game"] == "caribbean-clear-dark"


def test_one_situation_is_priced_exactly(capsys):
    assert cli.main(["par", "caribbean-stud", "--hand", "Ah Kd 4c 3s 2h", "--up", "2s", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    best = out["decisions"][0]
    # the enumeration raises A-K-4-3-2 against a deuce (docs/PAR.md); here is the exact margin
    assert best["decision"] == "raise"
    assert best["expected"]["exact"] == "-160232/163185"


def test_caribbean_draw_hand_is_priced_exactly(capsys):
    # rulebook 000: four to a royal flush; breaking the ace-high to draw one is the best play,
    # and every option weighs all its deals exactly (tests/host/test_par_cdraw.py checks the
    # figures against the full enumeration's method)
    assert cli.main(["par", "caribbean-draw", "--hand", "Ah Kh Qh Jh 3c", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert len(out["decisions"]) == 17
    best = out["decisions"][0]
    assert best["decision"] == "call, discard 3c and draw one"
    assert [d for d in out["decisions"] if d["decision"] == "fold"][0]["expected"]["exact"] == "-1/1"


def test_situation_errors(capsys):
    assert cli.main(["par", "caribbean-stud", "--hand", "Ah Kd 7c 4s"]) == 1
    assert "expected 5 cards" in capsys.readouterr().err
    assert cli.main(["par", "caribbean-stud", "--hand", "Ah Kd 7c 4s 2h"]) == 1
    assert "up card" in capsys.readouterr().err
    assert cli.main(["par", "caribbean-stud", "--hand", "Ah Kd 7c 4s 2h", "--up", "Ah"]) == 1
    assert "also in --hand" in capsys.readouterr().err
    assert cli.main(["par", "progressive", "--hand", "Ah Kd 7c 4s 2h"]) == 1
    assert "no player decisions" in capsys.readouterr().err


def test_output_piped_into_head_is_not_an_error():
    # `tablectl par ... | head -1`: the reader goes away after one line; tablectl says nothing
    # about a board or service (there is none) and exits 0
    import os
    import subprocess
    import sys

    exe = os.path.join(os.path.dirname(sys.executable), "tablectl")
    proc = subprocess.Popen([exe, "par", "three-card-poker", "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    first = proc.stdout.readline()
    proc.stdout.close()
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 0
    assert first.startswith(b"Three Card Poker")
    assert err == b""


# ---------------------------------------------------------------- pricing any progressive table

SEED_PT = os.path.join(os.path.dirname(tablegames.__file__), "paytables", "caribbean-draw-co.json")


def _paytable(tmp_path, name, **changes):
    with open(SEED_PT) as f:
        pt = json.load(f)
    pt["name"] = name
    for key, value in changes.items():
        if key in pt["table_defaults"]:
            pt["table_defaults"][key] = value
        else:
            pt["progressive"][key] = value
    path = tmp_path / (name + ".json")
    path.write_text(json.dumps(pt))
    return str(path)


def test_progressive_prices_the_seed_pay_table_file_and_its_straight_flush_options(capsys, tmp_path):
    # rulebook 000 rule 9.3, on the file settle pays by: the same figures as the built-in sheets
    assert cli.main(["par", "progressive", "--paytable", SEED_PT, "--token-cents", "100", "--no-progress"]) == 0
    assert "break-even meter: $218,047.37" in capsys.readouterr().out
    fixed = _paytable(tmp_path, "sf5000", straight_flush_award="fixed")
    assert cli.main(["par", "progressive", "--paytable", fixed, "--token-cents", "100", "--no-progress"]) == 0
    assert "break-even meter: $369,290.00" in capsys.readouterr().out


def test_progressive_prices_a_houses_own_schedule_and_token(capsys, tmp_path):
    # four of a kind $250, full house $75, flush $40, on a $5 token: return(M) per token =
    # (4 M + 36 M / 10 + 624 x 25,000 + 3,744 x 7,500 + 5,108 x 4,000) / (2,598,960 x 500)
    own = _paytable(tmp_path, "house", four_of_a_kind={"cents": 25000}, full_house={"cents": 7500},
                    flush={"cents": 4000})
    assert cli.main(["par", "progressive", "--paytable", own, "--token-cents", "500", "--meter", "1,000,000",
                     "--json", "--no-progress"]) == 0
    sheet = json.loads(capsys.readouterr().out)["sheets"][0]
    fixed = 624 * 25000 + 3744 * 7500 + 5108 * 4000
    be = Fraction(500 * 2598960 - fixed) / Fraction(76, 10)
    num, den = map(int, sheet["extra"]["break_even_meter_cents"]["exact"].split("/"))
    assert Fraction(num, den) == be
    at = Fraction(fixed + Fraction(76, 10) * 100_000_000, 500 * 2598960)
    assert abs(sheet["extra"]["return_at_meter"]["value"] - float(at)) < 1e-12
    assert sheet["extra"]["token_cents"] == 500
    assert cli.main(["par", "progressive", "--paytable", own, "--token-cents", "500", "--meter", "1000000",
                     "--no-progress"]) == 0
    text = capsys.readouterr().out
    assert "break-even meter: $%s" % "{:,.2f}".format(float(be) / 100) in text
    assert "return at the meter $1,000,000.00: %.4f %%" % (100 * float(at)) in text
    # and settle pays by the same file: the four of a kind is $250 there too
    rnd = {"meter_cents": 2_000_000, "dealer": {"cards": "Kh Kc 8c 4h 2h", "draw": "7c 3c"},
           "seats": [{"seat": 1, "ante": 100, "bet": 200, "progressive": 500, "cards": "9c 9d 9h 9s 2c",
                      "decision": "call"}], "table": {"token_cents": 500}}
    path = tmp_path / "round.json"
    path.write_text(json.dumps(rnd))
    assert cli.main(["settle", "caribbean-draw", str(path), "--paytable", own, "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["progressive"][0]["award_cents"] == 25000


@pytest.mark.parametrize("change,words", [
    ({"royal_flush": {"cents": 100000}}, "royal flush must be {\"percent_of_meter\": 1..100}"),
    ({"flush": {"cents": -5}}, "progressive flush must be {\"cents\": N}"),
    ({"full_house": {"cents": 100.5}}, "progressive full house must be"),
    ({"straight_flush_award": "half"}, "straight_flush_award must be one of fixed, percent"),
])
def test_progressive_refuses_a_schedule_it_cannot_pay(capsys, tmp_path, change, words):
    bad = _paytable(tmp_path, "bad", **change)
    assert cli.main(["par", "progressive", "--paytable", bad, "--no-progress"]) == 1
    assert words in capsys.readouterr().err


@pytest.mark.parametrize("argv,words", [
    (["par", "progressive", "--token-cents", "0"], "--token-cents must be"),
    (["par", "caribbean-stud", "--token-cents", "100"], "apply to the progressive game only"),
    (["par", "progressive", "--paytable", "/no/such.json"], "cannot read pay table /no/such.json"),
    (["par", "progressive", "--paytable", "caribbean-stud-eu"], "is for caribbean-stud"),
])
def test_progressive_option_errors(capsys, argv, words):
    assert cli.main(argv + ["--no-progress"]) == 1
    assert words in capsys.readouterr().err
