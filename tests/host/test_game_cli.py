"""`tablectl eval` and `tablectl settle` as a user meets them."""
import json

from tablectl.cli import main


def test_eval_names_a_hand(capsys):
    assert main(["eval", "As", "Kd", "10h", "Tc", "Ts"]) == 0
    assert capsys.readouterr().out.startswith("three of a kind, tens, A-K kickers")
    assert main(["eval", "A\u2660 K\u2660 Q\u2660 J\u2660 10\u2660 2c 3d", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["name"] == "royal flush"


def test_eval_errors_name_the_token(capsys):
    assert main(["eval", "As", "Kd", "1h"]) == 1
    assert "tablectl: bad card '1h'" in capsys.readouterr().err


def test_settle_round_file(tmp_path, capsys):
    rnd = {"meter_cents": 1_000_000, "dealer": {"cards": "Kh Kc 9d 4s 2h", "draw": "7c 3d"},
           "seats": [{"seat": 1, "ante": 200, "bet": 400, "progressive": 100, "cards": "2s 7s 9s Js As",
                      "decision": "call"}]}
    path = tmp_path / "round.json"
    path.write_text(json.dumps(rnd))
    assert main(["settle", "caribbean-draw", str(path), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert [(ln["wager"], ln["result"], ln["amount_cents"]) for ln in out["lines"]] == [
        ("progressive", "win", 5000), ("ante", "win", 200), ("bet", "win", 2000)]
    assert main(["settle", "caribbean-draw", str(path)]) == 0
    assert "rulebook 000 rule 14.2: flush pays 5 to 1" in capsys.readouterr().out


def test_settle_refuses_a_rule_break_naming_the_rule(tmp_path, capsys):
    rnd = {"dealer": {"cards": "Kh Kc 9d 4s 2h", "draw": "7c 3d"},
           "seats": [{"seat": 1, "ante": 200, "bet": 300, "cards": "2s 7s 9s Js As", "decision": "call"}]}
    path = tmp_path / "round.json"
    path.write_text(json.dumps(rnd))
    assert main(["settle", "caribbean-draw", str(path)]) == 1
    assert "rule 7.2: the bet must be exactly twice the ante" in capsys.readouterr().err


def test_settle_text_shows_the_dealers_cards_in_every_game(tmp_path, capsys):
    # California Draw (rulebook 003): the dealer has down cards and an up card, not "cards"; the text
    # output printed "dealer:  -> ..." with an empty card list while the JSON was complete
    rnd = {"dealer": {"down": "9c 9d 4h 2s", "up": "Kc"},
           "seats": [{"seat": 1, "ante": 500, "call": 500, "down": "Ac Ad 3h", "up": "5s", "decision": "call"}]}
    path = tmp_path / "cal.json"
    path.write_text(json.dumps(rnd))
    assert main(["settle", "california-draw", str(path)]) == 0
    dealer = [ln for ln in capsys.readouterr().out.splitlines() if ln.startswith("dealer:")]
    assert dealer == ["dealer: down 9c 9d 4h 2s, up Kc, house hand Kc 9c 9d 4h -> pair of nines, K-4 kickers"], dealer
    # Caribbean Draw: the five cards and the draw
    rnd = {"meter_cents": 1_000_000, "dealer": {"cards": "Kh Kc 9d 4s 2h", "draw": "7c 3d"},
           "seats": [{"seat": 1, "ante": 200, "bet": 400, "cards": "2s 7s 9s Js As", "decision": "call"}]}
    path.write_text(json.dumps(rnd))
    assert main(["settle", "caribbean-draw", str(path)]) == 0
    out = capsys.readouterr().out
    assert "dealer: Kh Kc 9d 4s 2h (draws 7c 3d: Kh Kc 9d 7c 3d) -> pair of kings" in out


def test_settle_text_says_the_won_token_is_spent(tmp_path, capsys):
    # rulebook 000 rule 3: the token drops into the coin-in slot; a $500 four of a kind nets $499 on it
    rnd = {"meter_cents": 2_000_000, "dealer": {"cards": "Kh Kc 8c 4h 2h", "draw": "7c 3c"},
           "seats": [{"seat": 1, "ante": 100, "bet": 200, "progressive": 100, "cards": "9c 9d 9h 9s 2c",
                      "decision": "call"}]}
    path = tmp_path / "round.json"
    path.write_text(json.dumps(rnd))
    assert main(["settle", "caribbean-draw", str(path)]) == 0
    out = capsys.readouterr().out
    assert "four of a kind pays $500 (the token is spent: net $499.00)" in out
    assert out.strip().endswith("net: seat 1 $540.00")
