"""The money commands and the meter arithmetic of the firmware (table/app.py), on MicroPython:
every refused argument leaves the books untouched, every accepted one moves exactly the meters
it names. Rulebook 000 rules and docs/PROTOCOL.md (award, meter_set); docs/RELIABILITY.md: "Meter
never decreases without an authorised hit or logged correction", "Ceiling and overflow",
"Coin-in disabled on communication loss" (coins refused and logged)."""
import mptest
from simkit import Rig

LOCK, UNLOCK, JACKPOT, SERVICE = 0, 1, 2, 3
SEED = 10000000
BOOKS = ("meter", "over", "res", "contrib", "rcontrib", "seeded", "awarded", "wins", "hits", "corr")


def _rig(name, config=None):
    rig = Rig(name, config=config, key=b"k" * 32)
    rig.board.switch = True
    assert rig.command("provision", {"key": "6b" * 32})["ok"] == 1
    rig.board.switch = False
    return rig


def _books(rig):
    return dict((k, rig.app.state[k]) for k in BOOKS)


def _locked_with_tokens(name, seats=(1,), config=None):
    rig = _rig(name, config)
    for seat in seats:
        rig.coin(seat)
    rig.run_ms(300)
    rig.press(LOCK)
    rig.press(JACKPOT)  # awards only after the dealer's jackpot key (docs/SECURITY.md)
    return rig


def _award(rig, **args):
    args.setdefault("round", rig.app.state["round"])  # an award names its round
    return rig.command("award", args, signed=True)


def test_a_token_moves_the_meter_the_reserve_and_the_seat_count():
    rig = _rig("credit", {"reserve_cents": 30})
    before = _books(rig)
    rig.coin(2)
    rig.run_ms(300)
    s = rig.app.state
    assert (s["meter"], s["contrib"], s["res"], s["rcontrib"]) == \
        (before["meter"] + 70, before["contrib"] + 70, before["res"] + 30, before["rcontrib"] + 30)
    assert s["t2"] == 1 and s["c2"] == 1
    coin = rig.kinds("coin")[-1]
    assert (coin["inc"], coin["to_meter"], coin["to_over"], coin["reserve"]) == (70, 70, 0, 30)
    rig.press(LOCK)
    rig.press(UNLOCK)
    assert [rig.app.state["t%d" % i] for i in range(7)] == [0] * 7  # a new round: no tokens yet


def test_the_meter_fills_exactly_to_the_ceiling_then_everything_goes_to_overflow():
    rig = _rig("ceil", {"seed_cents": 1000, "ceiling_cents": 1140})
    rig.app.state["meter"] = 1070  # room for exactly one increment
    rig.coin(0)
    rig.run_ms(300)
    assert (rig.app.state["meter"], rig.app.state["over"]) == (1140, 0)
    rig.press(LOCK)
    rig.press(UNLOCK)
    rig.coin(0)
    rig.run_ms(300)
    assert (rig.app.state["meter"], rig.app.state["over"]) == (1140, 70)  # no room: all to overflow
    coin = rig.kinds("coin")[-1]
    assert (coin["to_meter"], coin["to_over"]) == (0, 70)


def test_a_coin_during_a_fault_is_refused_and_logged():
    rig = _rig("faultcoin", {"host_timeout_ms": 3000})
    rig.run_ms(3100)
    assert "host" in rig.app.faults
    before = _books(rig)
    rig.coin(3)
    rig.run_ms(300)
    assert _books(rig) == before
    refused = rig.kinds("refused_coin")
    assert refused and refused[-1]["seat"] == 3 and "host" in refused[-1]["faults"]


def test_refused_award_arguments_leave_the_books_untouched():
    rig = _locked_with_tokens("awardargs")
    before = _books(rig)
    meter = before["meter"]
    bad = [({"seat": -1, "amount_cents": 100}, "BAD_ARGS"), ({"seat": 7, "amount_cents": 100}, "BAD_ARGS"),
           ({"seat": "1", "amount_cents": 100}, "BAD_ARGS"), ({"seat": 1, "amount_cents": -1}, "BAD_ARGS"),
           ({"seat": 1, "amount_cents": True}, "BAD_ARGS"), ({"seat": 1, "amount_cents": "5"}, "BAD_ARGS"),
           ({"seat": 1, "amount_cents": 100, "meter_cents": -1}, "BAD_ARGS"),
           ({"seat": 1, "amount_cents": 100, "meter_cents": 101}, "BAD_ARGS"),
           ({"seat": 1, "amount_cents": 100, "meter_cents": True}, "BAD_ARGS"),
           ({"seat": 1, "amount_cents": meter + 1, "meter_cents": meter + 1}, "BAD_ARGS"),
           ({"seat": 0, "amount_cents": 100}, "NOT_ELIGIBLE"),
           ({"seat": 1, "amount_cents": 100, "round": 99}, "STATE")]
    for args, code in bad:
        reply = _award(rig, **args)
        assert reply["ok"] == 0 and reply["err"] == code, (args, reply)
    assert _books(rig) == before
    assert "seat 1 had no progressive token" in _award(rig, seat=0, amount_cents=100)["msg"]  # seats count from 1
    assert "exceeds the meter %d" % meter in _award(rig, seat=1, amount_cents=meter + 1, meter_cents=meter + 1)["msg"]


def test_the_edges_of_an_award_are_accepted():
    rig = _locked_with_tokens("awardedge", seats=(0, 6))
    meter = rig.app.state["meter"]
    assert _award(rig, seat=6, amount_cents=0)["ok"] == 1  # the last seat, nothing to pay
    assert _award(rig, seat=0, amount_cents=meter, meter_cents=meter)["ok"] == 1  # all of the meter
    assert rig.app.state["meter"] == 0


def test_awards_move_exactly_the_meters_they_name():
    rig = _locked_with_tokens("awardbooks", seats=(1, 2, 3))
    b0 = _books(rig)
    # a fixed award paid by the house: not from the meter
    assert _award(rig, seat=1, amount_cents=50000, meter_cents=0)["ok"] == 1
    # a percentage from the meter
    assert _award(rig, seat=2, amount_cents=1000, meter_cents=1000)["ok"] == 1
    # all of the amount from the meter
    assert _award(rig, seat=3, amount_cents=500, meter_cents=500)["ok"] == 1
    s = _books(rig)
    assert s["meter"] == b0["meter"] - 1500 and s["over"] == b0["over"]
    assert s["wins"] == b0["wins"] + 51500 and s["hits"] == b0["hits"] + 3
    assert s["awarded"] == b0["awarded"] + 1500 and s["seeded"] == b0["seeded"]
    events = rig.kinds("award")[-3:]
    assert [(e["amount"], e["meter_cents"], e["from_meter"], e["seed_added"]) for e in events] == \
        [(50000, 0, False, 0), (1000, 1000, True, 0), (500, 500, True, 0)]


def test_the_house_pays_at_most_the_largest_fixed_award_or_a_tenth_of_the_meter_at_lockout():
    # Rulebook 000 rule 9.3: a straight flush pays 10 % of the meter; when the meter is short the
    # house makes up the rest, so the house part may reach a tenth of the meter at lockout even
    # when that is above the largest fixed award (docs/GAMES.md, short meter).
    rig = _locked_with_tokens("houselimit", seats=(1, 2, 3), config={"max_fixed_award_cents": 5000})
    frozen = rig.app.state["frozen"]  # 10,000,000 cents + 3 tokens: the seed and a little
    tenth = frozen // 10
    assert tenth > 5000
    assert _award(rig, seat=1, amount_cents=tenth + 1, meter_cents=0)["err"] == "BAD_ARGS"
    assert _award(rig, seat=1, amount_cents=tenth, meter_cents=0)["ok"] == 1
    rig = _locked_with_tokens("houselimit2", seats=(1,), config={"max_fixed_award_cents": 2000000})
    assert _award(rig, seat=1, amount_cents=2000001, meter_cents=0)["err"] == "BAD_ARGS"
    assert _award(rig, seat=1, amount_cents=2000000, meter_cents=0)["ok"] == 1


def test_cumulative_meters_roll_over_at_twelve_digits_of_cents():
    # Like an electromechanical meter: 999,999,999,990 cents + 70 reads 60 (the host computes
    # differences modulo 10^12).
    rig = _rig("rollover12")
    rig.app.state["contrib"] = 999999999990
    rig.app.state["c0"] = 999999999999
    rig.coin(0)
    rig.run_ms(300)
    assert rig.app.state["contrib"] == 60 and rig.app.state["c0"] == 0
    # and not a digit sooner: eleven digits of cents are carried on, not rolled
    rig.app.state["contrib"] = 99999999990
    rig.coin(1)  # another seat: one token a seat a round
    rig.run_ms(300)
    assert rig.app.state["contrib"] == 100000000060 and rig.app.state["c1"] == 1


def test_unlock_starts_a_round_with_nobody_eligible_and_nobody_paid():
    rig = _locked_with_tokens("newround", seats=(0, 1))
    assert _award(rig, seat=0, amount_cents=100)["ok"] == 1
    s = rig.app.state
    assert (s["elig"], s["paid"], len(s["pays"])) == (0b11, 0b01, 1)
    round_before = s["round"]
    rig.press(UNLOCK)
    s = rig.app.state
    assert (s["round"], s["elig"], s["paid"], s["pays"]) == (round_before + 1, 0, 0, [])
    status = rig.command("status")
    assert (status["eligible"], status["paid"]) == (0, 0)


def test_an_award_that_names_no_meter_part_is_paid_by_the_house():
    rig = _locked_with_tokens("awarddefault", seats=(1, 2))
    m0 = rig.app.state["meter"]
    assert _award(rig, seat=1, amount_cents=500)["ok"] == 1  # neither meter_cents nor from_meter
    assert rig.app.state["meter"] == m0 and rig.kinds("award")[-1]["from_meter"] is False
    assert _award(rig, seat=2, amount_cents=500, meter_cents=1)["ok"] == 1  # one cent is from the meter
    assert rig.app.state["meter"] == m0 - 1 and rig.kinds("award")[-1]["from_meter"] is True


def test_a_reset_with_one_cent_of_room_takes_one_cent_back():
    rig = _locked_with_tokens("reset1", config={"ceiling_cents": SEED + 1})
    rig.app.state["over"] = 50
    meter = rig.app.state["meter"]
    assert _award(rig, seat=1, amount_cents=meter, meter_cents=meter, reset=True)["ok"] == 1
    assert (rig.app.state["meter"], rig.app.state["over"]) == (SEED + 1, 49)


def test_a_reset_seeds_the_meter_and_takes_back_overflow_up_to_the_ceiling():
    # ceiling 100 above the seed, 110 in overflow: 100 comes back, 10 stays
    rig = _locked_with_tokens("reset", config={"ceiling_cents": SEED + 100})
    rig.app.state["over"] = 110
    meter = rig.app.state["meter"]
    b0 = _books(rig)
    assert _award(rig, seat=1, amount_cents=meter, meter_cents=meter, reset=True)["ok"] == 1
    s = _books(rig)
    assert (s["meter"], s["over"]) == (SEED + 100, 10)
    assert s["seeded"] == b0["seeded"] + SEED and s["awarded"] == b0["awarded"] + meter
    assert rig.kinds("award")[-1]["seed_added"] == SEED


def test_a_reset_with_less_overflow_than_room_takes_it_all():
    rig = _locked_with_tokens("reset2", config={"ceiling_cents": SEED + 100})
    rig.app.state["over"] = 30
    meter = rig.app.state["meter"]
    assert _award(rig, seat=1, amount_cents=meter, meter_cents=meter, reset=True)["ok"] == 1
    assert (rig.app.state["meter"], rig.app.state["over"]) == (SEED + 30, 0)


def test_a_reset_to_a_seed_at_the_ceiling_takes_nothing_back():
    rig = _locked_with_tokens("reset3", config={"ceiling_cents": SEED})
    rig.app.state["over"] = 500
    meter = rig.app.state["meter"]
    assert _award(rig, seat=1, amount_cents=meter, meter_cents=meter, reset=True)["ok"] == 1
    assert (rig.app.state["meter"], rig.app.state["over"]) == (SEED, 500)


def _in_service(name, config=None):
    rig = _rig(name, config)
    rig.press(LOCK)
    rig.board.switch = True
    assert rig.command("service", {"enter": True}, signed=True)["ok"] == 1
    return rig


def test_refused_corrections_leave_the_meter_untouched():
    rig = _in_service("corrargs", {"ceiling_cents": SEED + 1000})
    before = _books(rig)
    for args in ({"meter_cents": -1, "reason": "x"}, {"meter_cents": SEED + 1001, "reason": "x"},
                 {"meter_cents": True, "reason": "x"}, {"meter_cents": "5", "reason": "x"},
                 {"meter_cents": 5, "reason": ""}, {"meter_cents": 5, "reason": 5}):
        reply = rig.command("meter_set", args, signed=True)
        assert reply["ok"] == 0 and reply["err"] == "BAD_ARGS", (args, reply)
    assert _books(rig) == before and rig.kinds("correction") == []


def test_corrections_are_logged_with_old_and_new_and_add_up():
    rig = _in_service("corr", {"ceiling_cents": SEED + 1000})
    m0 = rig.app.state["meter"]
    c0 = rig.app.state["corr"]
    assert rig.command("meter_set", {"meter_cents": SEED + 1000, "reason": "to the ceiling"}, signed=True)["ok"] == 1
    assert rig.command("meter_set", {"meter_cents": 0, "reason": "to zero"}, signed=True)["ok"] == 1
    assert rig.app.state["meter"] == 0 and rig.app.state["corr"] == c0 + (0 - m0)
    assert [(e["old"], e["new"]) for e in rig.kinds("correction")] == [(m0, SEED + 1000), (SEED + 1000, 0)]


mptest.run(globals())
