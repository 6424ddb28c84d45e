"""`tablectl par`: the command's output forms and its errors."""
import json

import pytest

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


def test_one_situation_is_priced_exactly(capsys):
    assert cli.main(["par", "caribbean-stud", "--hand", "Ah Kd 4c 3s 2h", "--up", "2s", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    best = out["decisions"][0]
    # the enumeration raises A-K-4-3-2 against a deuce (docs/PAR.md); here is the exact margin
    assert best["decision"] == "raise"
    assert best["expected"]["exact"] == "-160232/163185"


def test_caribbean_draw_hand_is_priced_exactly(capsys):
    # seed 000: four to a royal flush; breaking the ace-high to draw one is the best play,
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
