"""Progressive awards as the board receives them, from seed 000 (Colorado, Caribbean Draw Poker).

9.3: "Royal flush pays 100% of the displayed progressive jackpot; Straight flush pays either 10%
of the displayed progressive jackpot or pays $5,000 ...; Four of a kind pays $500; Full house
pays $100 Flush pays $50". 9: "the dealer pays any and all progressive jackpot winners from left
to right". 3.2: royal flushes in the same hand "may be divided equally between or among the
qualified players". The arithmetic is the game module's (tested with the games); here: what of
each award comes out of the meter, and which award resets it to its seed."""
import pytest

from tablectl.errors import TablectlError
from tablectl.progressive import board_awards, hand_name, parse_hand, qualifies

SEED = 10_000_000


def hit(seat, text):
    value = qualifies(parse_hand(text))
    assert value is not None, text
    return (seat, value)


def test_royal_pays_the_whole_meter_and_the_meter_resets_to_seed():
    pays = board_awards([hit(4, "As Ks Qs Js Ts")], 12_345_678, SEED)
    assert len(pays) == 1
    p = pays[0]
    assert (p["seat"], p["amount_cents"], p["meter_cents"], p["reset"], p["meter_after"]) == \
        (4, 12_345_678, 12_345_678, True, SEED)
    assert "9.3" in p["rule"]


def test_straight_flush_ten_percent_rounds_down_and_leaves_the_fraction_in_the_meter():
    p = board_awards([hit(2, "9h 8h 7h 6h 5h")], 12_345_679, SEED)[0]
    assert p["amount_cents"] == p["meter_cents"] == 1_234_567
    assert p["meter_after"] == 12_345_679 - 1_234_567 and not p["reset"]


def test_straight_flush_fixed_option_pays_5000_dollars_not_from_the_meter():
    p = board_awards([hit(2, "9h 8h 7h 6h 5h")], 12_345_679, SEED, straight_flush="fixed")[0]
    assert p["amount_cents"] == 500_000 and p["meter_cents"] == 0


def test_fixed_awards_do_not_touch_the_meter_by_default():
    pays = board_awards([hit(1, "9c 9d 9h 9s 2c"), hit(2, "Kc Kd Kh 2s 2h"), hit(3, "Ac 9c 7c 4c 3c")],
                        20_000_000, SEED)
    assert [p["amount_cents"] for p in pays] == [50_000, 10_000, 5_000]
    assert [p["meter_cents"] for p in pays] == [0, 0, 0]


def test_fixed_awards_from_the_meter_never_take_it_below_zero():
    p = board_awards([hit(1, "9c 9d 9h 9s 2c")], 30_000, SEED, fixed_from_meter=True)[0]
    assert p["amount_cents"] == 50_000 and p["meter_cents"] == 30_000 and p["meter_after"] == 0


def test_left_to_right_each_percentage_from_the_meter_as_it_stands():
    pays = board_awards([hit(6, "9h 8h 7h 6h 5h"), hit(2, "9c 8c 7c 6c 5c")], 10_000_000, SEED)
    assert [p["seat"] for p in pays] == [2, 6]
    assert [p["amount_cents"] for p in pays] == [1_000_000, 900_000]


def test_royals_in_one_hand_split_equally_and_only_the_last_resets():
    pays = board_awards([hit(5, "As Ks Qs Js Ts"), hit(1, "Ah Kh Qh Jh Th"), hit(3, "Ad Kd Qd Jd Td")],
                        10_000_001, SEED)
    assert [p["seat"] for p in pays] == [1, 3, 5]
    assert len(set(p["amount_cents"] for p in pays)) == 1  # divided equally
    assert [p["reset"] for p in pays] == [False, False, True]
    # the cent that does not divide stays on the meter, which restarts from its seed
    assert pays[-1]["meter_after"] == SEED + 10_000_001 - 3 * pays[0]["amount_cents"]


def test_hands_that_do_not_qualify_and_bad_cards():
    assert qualifies(parse_hand("Ac Kd Qh Js Tc")) is None  # a straight is not a progressive hand
    assert "straight" in hand_name(parse_hand("Ac Kd Qh Js Tc"))
    with pytest.raises(TablectlError, match="Xs"):
        parse_hand("As Ks Qs Js Xs")
    with pytest.raises(TablectlError):
        parse_hand("As As Qs Js Ts")
    with pytest.raises(TablectlError):
        parse_hand("As Ks Qs Js")
