"""Caribbean Draw Poker, rulebook 000 (Colorado rules): a specification by example.

Each test quotes the rule text it checks. Money is integer cents. Seat 1 is the seat at the
dealer's left (the first to receive cards, rule 5); "left to right" is seat 1, 2, 3, ...
"""
import pytest

from tablegames.games import RoundError, settle
from tablegames.games.caribbean_draw import dealer_draw
from tablegames.poker import cards_str, parse_cards


def seat(n, cards, ante=100, decision="call", progressive=0, **kw):
    s = {"seat": n, "ante": ante, "cards": cards, "decision": decision}
    if decision == "call":
        s["bet"] = 2 * ante
    if progressive:
        s["progressive"] = progressive
    s.update(kw)
    return s


def rnd(seats, dealer="Kh Kc 9d 4s 2h", draw="7c 3d", **kw):
    r = {"seats": seats, "dealer": {"cards": dealer, "draw": draw}, "meter_cents": 2_000_000,
         "meter_reset_cents": 500_000}
    r.update(kw)
    return r


def keep(hand):
    kept, _, rule = dealer_draw(parse_cards(hand))
    return cards_str(kept), rule


# ---------------------------------------------------------------- rule 12: dealer draw

@pytest.mark.parametrize("hand", ["9h Th Jh Qh Kh", "2c 7c 9c Jc Ac", "5c 6d 7h 8s 9c",
                                  "4c 4d 4h 4s Ac", "3c 3d 3h Js Jc"])
def test_dealer_stands_on_straight_or_better(hand):
    # 12.1 "The dealer must stand with any of these card combinations: straight flush, flush,
    # straight, four of a kind, and full house."
    kept, rule = keep(hand)
    assert kept == cards_str(parse_cards(hand)) and rule.startswith("12.1")


def test_dealer_draws_one_to_two_pairs():
    # 12.2 "two pairs (the dealer keeps the pairs and discards the fifth card)"
    assert keep("9c 9d 4h 4s Ac")[0] == "9c 9d 4h 4s"


def test_dealer_draws_one_to_four_flush_or_four_straight():
    # 12.2 "any hand less than one pair that has a four card flush or a four card straight (the
    # dealer keeps the four cards to the flush or straight and discards the fifth card)"
    assert keep("2h 7h 9h Kh Ac")[0] == "2h 7h 9h Kh"
    assert keep("5c 6d 7h 8s Kc")[0] == "5c 6d 7h 8s"
    assert keep("5c 6d 8h 9s Kc")[0] == "5c 6d 8h 9s"       # an inside straight draw is four to a straight


def test_four_flush_over_a_different_four_straight():
    # 12.2 "In the event that the dealer has both four cards to a straight and a different
    # combination of four cards to a flush, the dealer must play four cards to the flush."
    kept, rule = keep("5h 6h 8c 9h Kh")
    assert kept == "5h 6h 9h Kh" and "flush is played over" in rule


def test_open_ended_straight_preferred():
    # 12.2 "If the dealer has multiple straight options, the dealer must play for the open end
    # straight."
    assert keep("4h 5c 6d 7s 9h")[0] == "4h 5c 6d 7s"        # not 5-6-7-9
    assert keep("3d 5c 6d 7s 8h")[0] == "5c 6d 7s 8h"        # not 3-5-6-7
    assert keep("8c Td Jh Qs Kc")[0] == "Td Jh Qs Kc"        # not 8-10-J-Q
    # The seed is silent when no option is open-ended (J-Q-K-A and 9-J-Q-K both need a ten): the
    # dealer keeps the draw to the higher straight, "to make the best possible poker hand" (12).
    assert keep("9c Jd Qh Ks Ac")[0] == "Jd Qh Ks Ac"


def test_dealer_draws_two():
    # 12.3 "three of a kind, one pair (the dealer keeps the highest of the other three cards), and
    # no pair (the dealer discards the lowest two cards)"
    assert keep("7c 7d 7h 2s Kc")[0] == "7c 7d 7h"
    assert keep("8h 8c Kd 2s 5h")[0] == "8h 8c Kd"
    assert keep("Kc Qh 9d 5s 3c")[0] == "Kc Qh 9d"


def test_pair_with_four_flush_keeps_pair_and_highest():
    # 12.3 "If the hand includes a pair as well as a four card flush or a four card straight, the
    # dealer must keep the pair plus the highest of the three remaining cards."
    assert keep("3h 3c 7h 9h Jh")[0] == "3h 3c Jh"
    assert keep("6c 6d 7h 8s 9c")[0] == "6c 6d 9c"


def test_settlement_applies_the_dealer_draw_and_refuses_a_wrong_draw():
    r = rnd([seat(1, "Ac Ad 5h 6s 9c", discard="5h 6s", draw="2d 3c")],
            dealer="Kh Kc 9d 4s 2h", draw="7c 3d")
    st = settle("caribbean-draw", r)
    assert st.dealer["final"] == "Kh Kc 9d 7c 3d"
    r["dealer"]["draw"] = "7c"
    with pytest.raises(RoundError, match=r"rule 12.3.*draws exactly 2"):
        settle("caribbean-draw", r)
    r["dealer"]["draw"] = "7c 3d"
    r["dealer"]["discard"] = "9d 2h"
    with pytest.raises(RoundError, match="must discard 4s 2h"):
        settle("caribbean-draw", r)


# ---------------------------------------------------------------- rules 13, 14: qualify, pay

def test_dealer_below_a_pair_of_eights_pays_antes_even_money():
    # 13 "the dealer must hold at least a pair of eights to qualify ... If the dealer does not
    # have a qualifying hand, the dealer will announce 'no hand' and immediately pay all the ante
    # wagers at the rate of 1 to 1"
    r = rnd([seat(1, "2c 3d 5h 9s Jc", ante=200)], dealer="7h 7c Kd 4s 2h", draw="3h 5d")
    st = settle("caribbean-draw", r)
    assert st.dealer["qualifies"] is False
    assert (st.one(1, "ante").result, st.one(1, "ante").amount) == ("win", 200)
    assert st.one(1, "bet").result == "push"


def test_pair_of_eights_qualifies():
    r = rnd([seat(1, "2c 3d 5h 9s Jc")], dealer="8h 8c Kd 4s 2h", draw="3h 5d")
    st = settle("caribbean-draw", r)
    assert st.dealer["qualifies"] is True
    assert st.one(1, "ante").result == st.one(1, "bet").result == "lose"


@pytest.mark.parametrize("player, pays", [
    ("As Ks Qs Js Ts", 100), ("9d 8d 7d 6d 5d", 50), ("Ac Ad Ah As 2c", 20),
    ("Ac Ad Ah 2s 2c", 7), ("2c 7c 9c Jc Ac", 5), ("5c 6d 7d 8s 9c", 3), ("Jc Jd Jh 2s 3c", 2),
    ("Qc Qd Jh Js 3c", 1), ("Ac Ad 5h 6s 2c", 1),
])
def test_bet_pay_table(player, pays):
    # 14.2 "Royal flush pays 100 to 1 / Straight flush pays 50 to 1 / Four of a kind pays 20 to 1 /
    # Full house pays 7 to 1 / Flush pays 5 to 1 / Straight pays 3 to 1 / Three of a kind pays 2
    # to 1 / 2 pairs or lower pays 1 to 1 (even money)"; 14.1 "The antes of winning hands are paid
    # at the rate of 1 to 1"
    r = rnd([seat(1, player, ante=250)], dealer="Kh Kc 9h 4s 2h", draw="7h 3h")
    st = settle("caribbean-draw", r)
    assert st.one(1, "bet").amount == 500 * pays and st.one(1, "bet").result == "win"
    assert st.one(1, "ante").amount == 250


def test_tied_hands_push():
    # 14 "If the player's and the dealer's hands are the same rank, it is a push and the player
    # retains both the ante and the bet." 14.5 "Tied hands result in a push and no action."
    r = rnd([seat(1, "Ks Kd 9s 7d 3c")], dealer="Kh Kc 9d 4s 2h", draw="7c 3d")
    st = settle("caribbean-draw", r)
    assert [ln.result for ln in st.for_seat(1)] == ["push", "push"]


def test_player_draw_counts():
    # 8 "draw (discard and have replaced up to two cards)"
    r = rnd([seat(1, "Ac Ad 5h 6s 9c", discard="5h 6s", draw="Ah 3c")])
    st = settle("caribbean-draw", r)
    assert st.one(1, "bet").hand.startswith("three of a kind, aces")
    r = rnd([seat(1, "Ac Ad 5h 6s 9c", discard="5h 6s 9c", draw="Ah 3c 4c")])
    with pytest.raises(RoundError, match="rule 8: a player may discard and have replaced up to two"):
        settle("caribbean-draw", r)


def test_called_hands_are_settled_from_the_dealers_right_counterclockwise():
    # 14.3 "beginning with the player to the dealer's right and moving counterclockwise"
    r = rnd([seat(1, "2c 3c 5h 9s Jc"), seat(2, "Ac Ad 5d 6s 9c"), seat(3, "Ks Kd 8s 7d 3h")])
    st = settle("caribbean-draw", r)
    assert [ln.seat for ln in st.lines] == [3, 3, 2, 2, 1, 1]


# ---------------------------------------------------------------- refusals

def test_call_must_be_twice_the_ante():
    # 7.2 "the player must make an additional wager, equal to exactly twice the amount of the ante"
    r = rnd([seat(1, "2c 3d 5h 9s Jc", bet=150)])
    with pytest.raises(RoundError, match="rule 7.2: the bet must be exactly twice the ante"):
        settle("caribbean-draw", r)


def test_ante_limit():
    # 2 "The ante wager may not exceed two dollars and fifty cents."
    with pytest.raises(RoundError, match=r"rule 2: the ante wager may not exceed \$2.50"):
        settle("caribbean-draw", rnd([seat(1, "2c 3d 5h 9s Jc", ante=300)]))


def test_seven_cards_in_a_five_card_game_are_refused():
    with pytest.raises(RoundError, match="7 cards.*rule 5: the dealer deals five cards"):
        settle("caribbean-draw", rnd([seat(1, "2c 3d 5h 9s Jc Qc Qd")]))


def test_one_deck():
    with pytest.raises(RoundError, match="duplicate card Kh"):
        settle("caribbean-draw", rnd([seat(1, "Kh 3d 5h 9s Jc")]))


def test_dead_hand_keeps_ante_and_bet():
    # 6 "An incorrect number of cards dealt to any player constitutes a dead hand for that player
    # only. The player receiving the misdealt cards retains the player's ante and any bet."
    r = rnd([seat(1, "2c 3d 5h 9s", misdeal=True), seat(2, "Ac Ad 5h 6s 9c")])
    st = settle("caribbean-draw", r)
    assert [ln.result for ln in st.for_seat(1)] == ["push", "push"]
    assert st.one(2, "bet").result == "win"


def test_fold_loses_the_ante():
    # 7.1 "If the player folds, the ante wager is lost."
    st = settle("caribbean-draw", rnd([seat(1, "2c 3c 5h 9s Jc", decision="fold")]))
    assert (st.one(1, "ante").result, st.one(1, "ante").amount) == ("lose", 100)


# ---------------------------------------------------------------- rule 9: the progressive

def test_progressive_schedule_percent_table():
    # 9.3 "Royal flush pays 100% of the displayed progressive jackpot; Straight flush pays either
    # 10% of the displayed progressive jackpot or pays $5,000 ... Four of a kind pays $500 / Full
    # house pays $100 Flush pays $50"
    r = rnd([seat(1, "9d 8d 7d 6d 5d", progressive=100), seat(2, "Ac Ad Ah As 2c", progressive=100),
             seat(3, "Jc Jd Jh 2s 2d", progressive=100), seat(4, "3c 7c 9c Tc 5c", progressive=100),
             seat(5, "Qc Qd Qh 3s 4c", progressive=100)],
            dealer="Kh Kd 9h 4s 2h", draw="7h 3h")
    st = settle("caribbean-draw", r)
    awards = [(a["seat"], a["award_cents"]) for a in st.progressive]
    assert awards == [(1, 200_000), (2, 50_000), (3, 10_000), (4, 5_000)]
    assert st.one(5, "progressive").result == "lose"
    assert st.meter == {"before_cents": 2_000_000, "after_cents": 1_800_000}


def test_straight_flush_fixed_option():
    # 9.3 "(licensee chooses payout option at the time the game is put into play)"
    r = rnd([seat(1, "9d 8d 7d 6d 5d", progressive=100)], dealer="Kh Kc 9h 4s 2h", draw="7h 3h",
            table={"straight_flush_award": "fixed"})
    st = settle("caribbean-draw", r)
    assert st.progressive[0]["award_cents"] == 500_000
    assert st.meter["after_cents"] == 2_000_000          # fixed awards do not touch the meter by default
    r["table"]["fixed_awards_from_meter"] = True
    assert settle("caribbean-draw", r).meter["after_cents"] == 1_500_000


def test_several_hits_paid_left_to_right_each_on_the_displayed_meter():
    # 9 "the dealer pays any and all progressive jackpot winners from left to right"; 9.3 "10% of
    # the displayed progressive jackpot": both straight flushes see the meter displayed at lockout
    r = rnd([seat(1, "9d 8d 7d 6d 5d", progressive=100), seat(2, "Ac Ad Ah As 2c", progressive=100),
             seat(3, "8h 7h 6h 5h 4h", progressive=100)], dealer="Kh Kc 9c 4s 2s", draw="7c 3c")
    st = settle("caribbean-draw", r)
    assert [(a["seat"], a["award_cents"], a["meter_before_cents"]) for a in st.progressive] == [
        (1, 200_000, 2_000_000), (2, 50_000, 1_800_000), (3, 200_000, 1_800_000)]
    assert [ln.seat for ln in st.lines[:3]] == [1, 2, 3]
    assert st.meter["after_cents"] == 1_600_000


def test_royal_and_straight_flush_in_one_round_both_on_the_displayed_meter():
    # 9.3: the royal is 100 % of the displayed jackpot and the straight flush 10 % of it; the meter
    # cannot fund both, so the house pays the straight flush (docs/GAMES.md, short meter)
    r = rnd([seat(1, "As Ks Qs Js Ts", progressive=100), seat(2, "9d 8d 7d 6d 5d", progressive=100)],
            dealer="Kh Kc 9c 4h 2h", draw="7c 3c")
    st = settle("caribbean-draw", r)
    assert [(a["award_cents"], a["meter_cents"], a["house_cents"]) for a in st.progressive] == [
        (2_000_000, 2_000_000, 0), (200_000, 0, 200_000)]
    assert st.meter["after_cents"] == 500_000
    assert "house pays $2,000.00" in st.progressive[1]["rule"]


def test_short_meter_fixed_awards_from_the_meter_never_leave_a_royal_with_nothing():
    # The starved royal, through settle: meter $400, fixed awards from the meter, a four of a kind
    # at seat 1 and a royal at seat 2. 9.3 "Royal flush pays 100% of the displayed progressive
    # jackpot": $400, not $0; the four of a kind is its $500, paid by the house.
    r = rnd([seat(1, "9c 9d 9h 9s 2c", progressive=100), seat(2, "As Ks Qs Js Ts", progressive=100)],
            dealer="Kh Kc 8c 4h 2h", draw="7c 3c", meter_cents=40_000,
            table={"fixed_awards_from_meter": True})
    st = settle("caribbean-draw", r)
    assert [(a["seat"], a["award_cents"], a["meter_cents"], a["house_cents"]) for a in st.progressive] == [
        (1, 50_000, 0, 50_000), (2, 40_000, 40_000, 0)]
    assert st.one(2, "progressive").amount == 40_000
    assert st.meter["after_cents"] == 500_000


def test_settle_and_the_jackpot_path_pay_the_same():
    from tablegames.progressive import board_awards, parse_hand, qualifies
    hands = {1: "9c 9d 9h 9s 2c", 2: "As Ks Qs Js Ts", 3: "8h 7h 6h 5h 4h", 4: "Ad Kd Qd Jd Td"}
    for table in ({}, {"fixed_awards_from_meter": True}, {"straight_flush_award": "fixed"},
                  {"straight_flush_award": "fixed", "fixed_awards_from_meter": True}):
        for meter in (0, 40_000, 600_001, 2_000_000):
            r = rnd([seat(n, h, progressive=100) for n, h in hands.items()], dealer="Kc Kh 3d 5d 7c",
                    draw="Qc Jc", meter_cents=meter, table=table)
            st = settle("caribbean-draw", r)
            pays = board_awards([(n, qualifies(parse_hand(h))) for n, h in hands.items()], meter, 500_000, table)
            assert [(a["seat"], a["award_cents"], a["meter_cents"]) for a in st.progressive] == \
                [(p["seat"], p["amount_cents"], p["meter_cents"]) for p in pays]
            assert st.meter["after_cents"] == pays[-1]["meter_after"]


def test_royals_in_the_same_round_split_the_meter_equally():
    # 9.2 "In the event that two or more players qualified to receive progressive jackpot payments
    # hold royal flushes in the same hand, the royal flush progressive jackpot may be divided
    # equally between or among the qualified players."
    r = rnd([seat(1, "As Ks Qs Js Ts", progressive=100), seat(2, "Ad Kd Qd Jd Td", progressive=100),
             seat(3, "Ac Kc Qc Jc Tc", progressive=100)], dealer="9h 9c 8c 4h 2h", draw="7c 3c",
            meter_cents=2_000_001)
    st = settle("caribbean-draw", r)
    assert [a["award_cents"] for a in st.progressive] == [666_667] * 3
    assert st.meter["after_cents"] == 500_000   # the seed amount; 2,000,001 = 3 x 666,667 exactly


def test_progressive_is_on_the_initial_five_cards_and_needs_the_wager():
    # 9.1 "Progressive jackpot payouts are based on the initial five cards of each player. Any
    # additionally drawn cards do not qualify"
    r = rnd([seat(1, "Ac Ad Ah 5s 6c", progressive=100, discard="5s 6c", draw="As 2c"),
             seat(2, "3c 8c 9c Jc Qc")])
    st = settle("caribbean-draw", r)
    assert st.progressive == [] and st.one(1, "progressive").result == "lose"


def test_folded_hand_has_no_progressive():
    # 7.1 "the dealer collects first the ante and then the cards" of a folded hand, before the
    # progressive hands are displayed (9)
    st = settle("caribbean-draw", rnd([seat(1, "2c 8c 9c Jc Ac", decision="fold", progressive=100)]))
    assert st.progressive == [] and st.one(1, "progressive").result == "lose"


def test_dealer_misdeal_plays_for_the_progressive_only():
    # 6 "An incorrect number of cards dealt to the dealer constitutes a misdeal to the table and
    # the players may play their hands for the purposes of the progressive jackpot only."
    r = {"seats": [seat(1, "2c 7c 9c Jc Ac", progressive=100), seat(2, "Ks Kd 9s 7d 3d")],
         "dealer": {"misdeal": True, "cards": "Kh Kc 9d 4s"}, "meter_cents": 2_000_000}
    st = settle("caribbean-draw", r)
    assert st.one(1, "progressive").amount == 5_000
    assert {ln.result for ln in st.lines if ln.wager in ("ante", "bet")} == {"push"}


# ---------------------------------------------------------------- rule 3: the token

def test_progressive_wager_must_be_the_tables_token():
    # 3 "Each player may place an additional, optional, wager by placing a token in the designated
    # coin-in slot": the wager is one token of the table's value, nothing else wins the royal
    for cents in (1, 99, 200, 1000):
        with pytest.raises(RoundError, match="rule 3.*token is 100 cents"):
            settle("caribbean-draw", rnd([seat(1, "As Ks Qs Js Ts", progressive=cents)]))
    r = rnd([seat(1, "As Ks Qs Js Ts", progressive=500)], dealer="Kh Kc 9c 4h 2h", draw="7c 3c",
            table={"token_cents": 500})
    assert settle("caribbean-draw", r).one(1, "progressive").amount == 2_000_000
    with pytest.raises(RoundError, match="token_cents"):
        settle("caribbean-draw", rnd([seat(1, "As Ks Qs Js Ts", progressive=100)], table={"token_cents": 0}))
    with pytest.raises(RoundError, match="unknown option 'tokens'"):
        settle("caribbean-draw", rnd([seat(1, "As Ks Qs Js Ts", progressive=100)], table={"tokens": 2}))


def test_the_token_is_spent_when_it_wins_as_on_the_par_sheet():
    # The token drops into the coin-in slot (rule 3); a $500 four of a kind nets +$499 on the
    # token, as the PAR sheet's pay of award - 1 token. With the ante's +$1 (14.1) and the bet's
    # 20 to 1 (14.2, +$40): +$540 for the seat, not +$541.
    r = rnd([seat(1, "9c 9d 9h 9s 2c", progressive=100)], dealer="Kh Kc 8c 4h 2h", draw="7c 3c")
    st = settle("caribbean-draw", r)
    line = st.one(1, "progressive")
    assert (line.result, line.amount, line.net()) == ("win", 50_000, 49_900)
    assert st.net(1) == 49_900 + 100 + 4_000 == 54_000
    assert st.as_dict()["net_cents"] == {"1": 54_000}
    assert st.as_dict()["lines"][0]["stake_returned"] is False
    # a losing token is the same $1 lost
    r = rnd([seat(1, "9c 8d 2d 3s 5c", progressive=100, decision="fold")])
    assert settle("caribbean-draw", r).one(1, "progressive").net() == -100
