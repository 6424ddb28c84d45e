"""Progressive awards as seed 000 (Colorado, Caribbean Draw Poker) schedules them.

9.3: "Royal flush pays 100% of the displayed progressive jackpot; Straight flush pays either 10%
of the displayed progressive jackpot or pays $5,000 ...; Four of a kind pays $500; Full house
pays $100 Flush pays $50". 9: "the dealer pays any and all progressive jackpot winners from left
to right". 3.2: royal flushes in the same hand "may be divided equally between or among the
qualified players"."""
import pytest

from tablectl.errors import TablectlError
from tablectl.progressive import (FLUSH, FOUR, FULL_HOUSE, ROYAL, STRAIGHT_FLUSH, compute_awards,
                                  parse_hand, progressive_category)

SEED = 10_000_000


@pytest.mark.parametrize("text,category", [
    ("As Ks Qs Js Ts", ROYAL),
    ("A\u2660 K\u2660 Q\u2660 J\u2660 10\u2660", ROYAL),
    ("9h 8h 7h 6h 5h", STRAIGHT_FLUSH),
    ("5d 4d 3d 2d Ad", STRAIGHT_FLUSH),  # ace low only in A-2-3-4-5
    ("9c 9d 9h 9s 2c", FOUR),
    ("Kc Kd Kh 2s 2c", FULL_HOUSE),
    ("Ac 9c 7c 4c 2c", FLUSH),
    ("Ac Kd Qh Js Tc", None),  # a straight is not a progressive hand
    ("Qs Ks As 2s 3h", None),
])
def test_categories_that_qualify(text, category):
    assert progressive_category(parse_hand(text)) == category


def test_royal_pays_the_whole_meter_and_the_meter_resets_to_seed():
    pays = compute_awards([(4, ROYAL)], 12_345_678, SEED)
    assert pays == [{"seat": 4, "hand": ROYAL, "amount_cents": 12_345_678, "from_meter": True,
                     "reset": True, "meter_after": SEED}]


def test_straight_flush_ten_percent_rounds_down_and_leaves_the_fraction_in_the_meter():
    pays = compute_awards([(2, STRAIGHT_FLUSH)], 12_345_679, SEED)
    assert pays[0]["amount_cents"] == 1_234_567
    assert pays[0]["meter_after"] == 12_345_679 - 1_234_567


def test_straight_flush_fixed_option_pays_5000_dollars():
    pays = compute_awards([(2, STRAIGHT_FLUSH)], 12_345_679, SEED, straight_flush="fixed")
    assert pays[0]["amount_cents"] == 500_000 and not pays[0]["from_meter"]


def test_fixed_awards_do_not_touch_the_meter_by_default():
    pays = compute_awards([(1, FOUR), (2, FULL_HOUSE), (3, FLUSH)], 20_000_000, SEED)
    assert [p["amount_cents"] for p in pays] == [50_000, 10_000, 5_000]
    assert all(p["meter_after"] == 20_000_000 for p in pays)


def test_fixed_awards_from_the_meter_when_the_table_says_so():
    pays = compute_awards([(1, FOUR)], 20_000_000, SEED, fixed_from_meter=True)
    assert pays[0]["from_meter"] and pays[0]["meter_after"] == 19_950_000


def test_left_to_right_each_percentage_from_the_meter_as_it_stands():
    # Two straight flushes: the second takes 10% of what the first left.
    pays = compute_awards([(6, STRAIGHT_FLUSH), (2, STRAIGHT_FLUSH)], 10_000_000, SEED)
    assert [p["seat"] for p in pays] == [2, 6]
    assert pays[0]["amount_cents"] == 1_000_000
    assert pays[1]["amount_cents"] == 900_000


def test_royals_in_one_hand_split_the_meter_to_the_cent():
    pays = compute_awards([(5, ROYAL), (1, ROYAL), (3, ROYAL)], 10_000_001, SEED)
    assert [p["seat"] for p in pays] == [1, 3, 5]
    amounts = [p["amount_cents"] for p in pays]
    assert sum(amounts) == 10_000_001 and max(amounts) - min(amounts) <= 1
    assert [p["reset"] for p in pays] == [False, False, True]
    assert pays[-1]["meter_after"] == SEED


def test_bad_cards_are_named():
    with pytest.raises(TablectlError, match="'Xs'"):
        parse_hand("As Ks Qs Js Xs")
    with pytest.raises(TablectlError, match="appears twice"):
        parse_hand("As As Qs Js Ts")
    with pytest.raises(TablectlError, match="initial 5 cards; got 4"):
        parse_hand("As Ks Qs Js")
