"""The linked pool's rules without a database (host_tools/tablectl/pool/engine.py): a pool's
parameters and their bounds, one token's credit at and around the ceiling, the hands the pool
pays, and the royal's and straight flush's amounts, split royals' odd cents included. Integer
cents only.

Rulebook 000, rule 9.3: "Royal flush pays 100% of the displayed progressive jackpot; Straight
flush pays either 10% of the displayed progressive jackpot or pays $5,000"; rule 3.2: royals in
one hand "may be divided equally between or among the qualified players"."""
import pytest

from tablectl.errors import TablectlError
from tablectl.pool import engine


def params(**kw):
    return engine.check_params(kw)


# ------------------------------------------------------------------ parameters

def test_the_defaults_fill_what_is_not_given():
    assert engine.check_params({}) == engine.DEFAULTS
    assert engine.check_params({"increment_cents": 1}) == dict(engine.DEFAULTS, increment_cents=1)
    assert engine.DEFAULTS == {"seed_cents": 10000000, "increment_cents": 70, "ceiling_cents": 50000000,
                               "reserve_cents": 0, "sf_percent": 1, "bench": 0}


def test_parameters_must_be_an_object_of_known_names():
    for bad in (None, [], "seed_cents=1", 5):
        with pytest.raises(TablectlError, match="must be an object of name -> whole number"):
            engine.check_params(bad)
    with pytest.raises(TablectlError, match=r"no pool parameter 'seed' \(known: bench, ceiling_cents, "
                                            r"increment_cents, reserve_cents, seed_cents, sf_percent\)"):
        engine.check_params({"seed": 1})


@pytest.mark.parametrize("name", sorted(engine.PARAMS))
def test_each_parameter_takes_its_bounds_and_nothing_past_them(name):
    low, high, _ = engine.PARAMS[name]
    base = {"seed_cents": 0, "ceiling_cents": engine.METER_LIMIT_CENTS}
    for ok in (low, high):
        assert engine.check_params(dict(base, **{name: ok}))[name] == ok
    for bad in (low - 1, high + 1, True, False, 1.0, "1", None):
        with pytest.raises(TablectlError, match=r"pool parameter %s=.* must be a whole number from %d to %d"
                                                % (name, low, high)):
            engine.check_params(dict(base, **{name: bad}))


def test_the_bounds_are_the_boards():
    assert engine.METER_LIMIT_CENTS == 9999999999
    assert engine.PARAMS["seed_cents"][:2] == (0, 9999999999)
    assert engine.PARAMS["increment_cents"][:2] == (0, 100000)
    assert engine.PARAMS["ceiling_cents"][:2] == (1, 9999999999)
    assert engine.PARAMS["reserve_cents"][:2] == (0, 100000)
    assert engine.PARAMS["sf_percent"][:2] == (0, 1)
    assert engine.PARAMS["bench"][:2] == (0, 1)
    assert engine.GAMES == ("caribbean_draw", "caribbean_stud")


def test_the_seed_may_be_the_ceiling_but_not_above_it():
    assert params(seed_cents=500, ceiling_cents=500)["seed_cents"] == 500
    with pytest.raises(TablectlError, match="^seed_cents 501 is above ceiling_cents 500$"):
        params(seed_cents=501, ceiling_cents=500)


# ------------------------------------------------------------------ one token

def test_a_token_adds_its_increment_while_it_fits_under_the_ceiling():
    p = params(seed_cents=100, increment_cents=70, ceiling_cents=1000, reserve_cents=3)
    assert engine.credit(100, p) == (70, 0, 3)
    assert engine.credit(930, p) == (70, 0, 3)     # exactly to the ceiling
    assert engine.credit(931, p) == (69, 1, 3)     # one cent over
    assert engine.credit(999, p) == (1, 69, 3)
    assert engine.credit(1000, p) == (0, 70, 3)    # at the ceiling: all overflow
    assert engine.credit(1005, p) == (0, 70, 3)    # above it (the ceiling lowered): nothing taken back


def test_a_token_of_no_increment_adds_nothing_but_its_reserve():
    p = params(seed_cents=100, increment_cents=0, ceiling_cents=1000, reserve_cents=9)
    assert engine.credit(1000, p) == (0, 0, 9)
    assert engine.credit(10, p) == (0, 0, 9)


# ------------------------------------------------------------------ the hands the pool pays

@pytest.mark.parametrize("cards, kind", [
    ("As Ks Qs Js Ts", engine.ROYAL), ("Th Jh Qh Kh Ah", engine.ROYAL),
    ("Ks Qs Js Ts 9s", engine.STRAIGHT_FLUSH), ("5c 4c 3c 2c Ac", engine.STRAIGHT_FLUSH),
    ("9d 8d 7d 6d 5d", engine.STRAIGHT_FLUSH),
    ("As Ad Ac Ah Ks", None), ("As Ks Qs Js 9s", None), ("As Kd Qs Js Ts", None), ("2c 3d 4h 5s 7c", None),
])
def test_only_a_royal_or_a_straight_flush_is_a_pool_hand(cards, kind):
    assert engine.hand_kind(cards) == kind


def test_cards_that_are_not_a_hand_are_refused_with_the_reason():
    for bad in ("As Ks Qs Js", "As As Qs Js Ts", "Xx Ks Qs Js Ts"):
        with pytest.raises(TablectlError):
            engine.hand_kind(bad)


# ------------------------------------------------------------------ hits

def test_a_royal_takes_the_meter_which_restarts_from_its_seed():
    p = params(seed_cents=1000, increment_cents=70, ceiling_cents=5000)
    assert engine.hit(4321, 0, p, engine.ROYAL) == {
        "amount_cents": 4321, "reset": True, "seed_added": 1000, "meter_after": 1000, "over_after": 0, "split": 1}


def test_after_a_royal_the_meter_takes_back_overflow_up_to_the_ceiling():
    p = params(seed_cents=1000, increment_cents=70, ceiling_cents=1500)
    got = engine.hit(1500, 800, p, engine.ROYAL)
    assert (got["amount_cents"], got["meter_after"], got["over_after"], got["seed_added"]) == (1500, 1500, 300, 1000)
    got = engine.hit(1500, 400, p, engine.ROYAL)
    assert (got["meter_after"], got["over_after"]) == (1400, 0)
    # a seed at the ceiling: no room, the overflow stays
    p = params(seed_cents=1500, increment_cents=70, ceiling_cents=1500)
    got = engine.hit(1500, 400, p, engine.ROYAL)
    assert (got["meter_after"], got["over_after"]) == (1500, 400)


def test_royals_in_one_hand_divide_the_meter_and_the_odd_cents_stay_on_it():
    p = params(seed_cents=1000, increment_cents=70, ceiling_cents=10 ** 6)
    two = engine.royals(2001, 7, p, 2)
    assert two == [
        {"amount_cents": 1000, "reset": False, "seed_added": 0, "meter_after": 1001, "over_after": 7, "split": 2},
        {"amount_cents": 1000, "reset": True, "seed_added": 1000, "meter_after": 1001 + 7, "over_after": 0,
         "split": 2}]
    three = engine.royals(3000, 0, p, 3)
    assert [h["amount_cents"] for h in three] == [1000, 1000, 1000]
    assert [h["meter_after"] for h in three] == [2000, 1000, 1000]
    assert [h["reset"] for h in three] == [False, False, True]
    assert [h["split"] for h in three] == [3, 3, 3]
    four = engine.royals(10003, 0, p, 4)
    assert [h["amount_cents"] for h in four] == [2500] * 4
    assert four[-1]["meter_after"] == 1000 + 3 and four[-1]["seed_added"] == 1000
    assert sum(h["amount_cents"] for h in four) + four[-1]["meter_after"] - four[-1]["seed_added"] == 10003
    one = engine.royals(77, 0, p, 1)
    assert one == [engine.hit(77, 0, p, engine.ROYAL)]


def test_a_straight_flush_takes_ten_percent_rounded_down_and_leaves_the_rest():
    p = params(seed_cents=1000, increment_cents=70, ceiling_cents=10 ** 6)
    assert engine.hit(12349, 5, p, engine.STRAIGHT_FLUSH) == {
        "amount_cents": 1234, "reset": False, "seed_added": 0, "meter_after": 11115, "over_after": 5}
    assert engine.hit(9, 0, p, engine.STRAIGHT_FLUSH)["amount_cents"] == 0
    assert engine.hit(10, 0, p, engine.STRAIGHT_FLUSH)["amount_cents"] == 1


def test_the_fixed_straight_flush_option_is_not_paid_from_the_pool():
    p = params(sf_percent=0)
    with pytest.raises(TablectlError, match=r"fixed \$5,000 option: the table's house pays it"):
        engine.hit(10 ** 6, 0, p, engine.STRAIGHT_FLUSH)
    assert engine.hit(10 ** 6, 0, p, engine.ROYAL)["amount_cents"] == 10 ** 6


def test_any_other_hand_is_not_a_pool_hand():
    for kind in (None, "flush", "four"):
        with pytest.raises(TablectlError, match="not a pool hand: only a royal flush or a straight flush"):
            engine.hit(1000, 0, engine.DEFAULTS, kind)
