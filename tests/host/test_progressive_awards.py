"""Progressive awards as the board receives them, from rulebook 000 (Colorado, Caribbean Draw Poker).

9.3: "Royal flush pays 100% of the displayed progressive jackpot; Straight flush pays either 10%
of the displayed progressive jackpot or pays $5,000 ...; Four of a kind pays $500; Full house
pays $100 Flush pays $50". 9: "the dealer pays any and all progressive jackpot winners from left
to right". 3.2: royal flushes in the same hand "may be divided equally between or among the
qualified players". The arithmetic is the game module's (tested with the games); here: what of
each award comes out of the meter, and which award resets it to its seed."""
import pytest

from tablegames.errors import GameError
from tablegames.progressive import board_awards, hand_name, parse_hand, qualifies

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


FIXED_SF = {"straight_flush_award": "fixed"}
FROM_METER = {"fixed_awards_from_meter": True}


def test_straight_flush_fixed_option_pays_5000_dollars_not_from_the_meter():
    p = board_awards([hit(2, "9h 8h 7h 6h 5h")], 12_345_679, SEED, FIXED_SF)[0]
    assert p["amount_cents"] == 500_000 and p["meter_cents"] == 0 and p["house_cents"] == 500_000


def test_fixed_awards_do_not_touch_the_meter_by_default():
    pays = board_awards([hit(1, "9c 9d 9h 9s 2c"), hit(2, "Kc Kd Kh 2s 2h"), hit(3, "Ac 9c 7c 4c 3c")],
                        20_000_000, SEED)
    assert [p["amount_cents"] for p in pays] == [50_000, 10_000, 5_000]
    assert [p["meter_cents"] for p in pays] == [0, 0, 0]
    assert [p["house_cents"] for p in pays] == [50_000, 10_000, 5_000]


def test_fixed_awards_from_a_short_meter_are_paid_in_full_the_house_pays_the_rest():
    # "Four of a kind pays $500": a $300 meter pays $300 of it, the house the other $200
    p = board_awards([hit(1, "9c 9d 9h 9s 2c")], 30_000, SEED, FROM_METER)[0]
    assert (p["amount_cents"], p["meter_cents"], p["house_cents"], p["meter_after"]) == (50_000, 30_000, 20_000, 0)


def test_every_percentage_is_of_the_displayed_meter_whatever_the_seat_order():
    # 9.3 "10% of the displayed progressive jackpot": the meter displayed at lockout, for both
    pays = board_awards([hit(6, "9h 8h 7h 6h 5h"), hit(2, "9c 8c 7c 6c 5c")], 10_000_000, SEED)
    assert [p["seat"] for p in pays] == [2, 6]
    assert [p["amount_cents"] for p in pays] == [1_000_000, 1_000_000]
    assert pays[-1]["meter_after"] == 8_000_000


def test_a_royal_is_never_starved_by_fixed_awards_paid_before_it():
    # The starved royal: meter $400, fixed awards from the meter, seat 1 four of a kind, seat 2 a
    # royal. 9.3 "Royal flush pays 100% of the displayed progressive jackpot": the royal gets the
    # $400; the four of a kind, paid first (left to right, rule 9), is still $500, all from the house.
    pays = board_awards([hit(1, "9c 9d 9h 9s 2c"), hit(2, "As Ks Qs Js Ts")], 40_000, SEED, FROM_METER)
    assert [(p["seat"], p["amount_cents"], p["meter_cents"], p["house_cents"]) for p in pays] == [
        (1, 50_000, 0, 50_000), (2, 40_000, 40_000, 0)]
    assert pays[-1]["reset"] and pays[-1]["meter_after"] == SEED


def test_a_straight_flush_beside_a_royal_is_ten_percent_of_the_displayed_meter_from_the_house():
    # the royal takes the whole meter; the straight flush's 10 % of the same displayed meter is
    # paid, not 10 % of the seed the meter restarts from
    pays = board_awards([hit(1, "As Ks Qs Js Ts"), hit(3, "9h 8h 7h 6h 5h")], 20_000_000, SEED)
    assert [(p["amount_cents"], p["meter_cents"], p["house_cents"]) for p in pays] == [
        (20_000_000, 20_000_000, 0), (2_000_000, 0, 2_000_000)]
    assert pays[-1]["meter_after"] == SEED


def test_royals_in_one_hand_split_equally_and_only_the_last_resets():
    pays = board_awards([hit(5, "As Ks Qs Js Ts"), hit(1, "Ah Kh Qh Jh Th"), hit(3, "Ad Kd Qd Jd Td")],
                        10_000_001, SEED)
    assert [p["seat"] for p in pays] == [1, 3, 5]
    # divided equally: 10,000,001 cents / 3 = 3,333,333 each, rounded down, all from the meter
    assert [p["amount_cents"] for p in pays] == [3_333_333] * 3
    assert [p["meter_cents"] for p in pays] == [3_333_333] * 3
    assert [p["reset"] for p in pays] == [False, False, True]
    # paid left to right; the 2 cents that do not divide stay on the meter, which then restarts
    # from its seed
    assert [p["meter_after"] for p in pays] == [6_666_668, 3_333_335, SEED + 2]


def test_two_royals_split_the_meter_in_halves():
    pays = board_awards([hit(6, "Ac Kc Qc Jc Tc"), hit(2, "Ah Kh Qh Jh Th")], 12_345_679, SEED)
    assert [(p["seat"], p["amount_cents"], p["meter_cents"]) for p in pays] == \
        [(2, 6_172_839, 6_172_839), (6, 6_172_839, 6_172_839)]
    assert [p["meter_after"] for p in pays] == [6_172_840, SEED + 1]


def test_hands_that_do_not_qualify_and_bad_cards():
    assert qualifies(parse_hand("Ac Kd Qh Js Tc")) is None  # a straight is not a progressive hand
    assert "straight" in hand_name(parse_hand("Ac Kd Qh Js Tc"))
    with pytest.raises(GameError, match="Xs"):
        parse_hand("As Ks Qs Js Xs")
    with pytest.raises(GameError):
        parse_hand("As As Qs Js Ts")
    with pytest.raises(GameError):
        parse_hand("As Ks Qs Js")


# Every combination of winning hands, seats, options and meters: the short-meter policy
# (docs/GAMES.md) as invariants. 9.3's schedule on the displayed meter M:
SCHEDULE = {"royal": None, "sf": None, "quads": 50_000, "full house": 10_000, "flush": 5_000}
HANDS = {"royal": "As Ks Qs Js Ts", "sf": "9h 8h 7h 6h 5h", "quads": "9c 9d 9h 9s 2c",
         "full house": "Kc Kd Kh 2s 2h", "flush": "Ac 9c 7c 4c 3c"}


def promised(kind, meter, n_royals, sf_fixed):
    if kind == "royal":
        return meter // n_royals                      # 100 %, divided equally (9.2)
    if kind == "sf":
        return 500_000 if sf_fixed else meter // 10   # 10 % or $5,000
    return SCHEDULE[kind]


@pytest.mark.parametrize("meter", [0, 4_000, 40_000, 60_001, 500_000, 20_000_003])
@pytest.mark.parametrize("sf_fixed", [False, True])
@pytest.mark.parametrize("from_meter", [False, True])
def test_no_hand_is_paid_less_than_the_schedule_and_the_meter_never_goes_below_zero(meter, sf_fixed, from_meter):
    import itertools
    kinds = list(HANDS)
    values = {k: qualifies(parse_hand(h)) for k, h in HANDS.items()}
    opts = {"straight_flush_award": "fixed" if sf_fixed else "percent", "fixed_awards_from_meter": from_meter}
    checked = 0
    for n in (1, 2, 3):
        for combo in itertools.product(kinds, repeat=n):
            seats = [7, 2, 4][:n]                    # given out of order: paid left to right
            pays = board_awards([(s, values[k]) for s, k in zip(seats, combo)], meter, SEED, opts)
            by_seat = dict(zip(seats, combo))
            assert [p["seat"] for p in pays] == sorted(seats)
            n_royals = combo.count("royal")
            for p in pays:
                kind = by_seat[p["seat"]]
                assert p["amount_cents"] == promised(kind, meter, n_royals, sf_fixed), (combo, p)
                assert 0 <= p["meter_cents"] <= p["amount_cents"]
                assert p["house_cents"] == p["amount_cents"] - p["meter_cents"]
                if kind == "royal":
                    assert p["meter_cents"] == p["amount_cents"]   # a royal is all meter, never house
                if kind in ("quads", "full house", "flush") or (kind == "sf" and sf_fixed):
                    assert p["meter_cents"] == 0 or from_meter
            taken = sum(p["meter_cents"] for p in pays)
            assert taken <= meter
            assert pays[-1]["meter_after"] == (SEED if n_royals else 0) + meter - taken
            assert [p["reset"] for p in pays].count(True) == (1 if n_royals else 0)
            # the meter funds royals first, then percentages, then fixed awards: what the house
            # pays is only what the meter could not hold
            if any(p["house_cents"] and (by_seat[p["seat"]] != "sf" or not sf_fixed or from_meter)
                   and (by_seat[p["seat"]] == "sf" or from_meter) for p in pays):
                assert taken == meter
            checked += 1
    assert checked == 5 + 25 + 125


def test_the_weakest_flush_qualifies():
    # 9.3: "Flush pays $50": 7-5-4-3-2 suited is the lowest flush there is
    assert qualifies(parse_hand("7c 5c 4c 3c 2c")) is not None
    assert qualifies(parse_hand("Ac Kc Qc Jc 9d")) is None  # the best hand below it


def test_the_tables_options_come_from_the_boards_configuration():
    from tablegames.progressive import board_options, options_text
    cfg = {"sf_fixed": 1, "fixed_from_meter": 0, "token_cents": 125, "tokens_per_round": 1}
    opts = board_options(cfg)
    assert opts == {"straight_flush_award": "fixed", "fixed_awards_from_meter": False, "token_cents": 125}
    assert options_text(opts) == ("straight flush a fixed sum (rule 9.3 option); fixed awards paid by the house; "
                                  "token $1.25")
    with pytest.raises(GameError, match="no sf_fixed, token_cents: its firmware predates"):
        board_options({"fixed_from_meter": 0, "tokens_per_round": 1})
    with pytest.raises(GameError, match="credits 2 tokens a seat per round"):
        board_options(dict(cfg, tokens_per_round=2))


def test_an_option_the_pay_table_does_not_know_is_a_clear_error():
    with pytest.raises(GameError):
        board_awards([hit(2, "9h 8h 7h 6h 5h")], 12_345_679, SEED,
                     {"straight_flush_award": "half", "fixed_awards_from_meter": False, "token_cents": 100})
