"""California Draw Poker (rulebook 003): four-card hands, house hand from the up card."""
import pytest

from tablegames.games import RoundError, settle
from tablegames.games.california_draw import house_hand
from tablegames.poker import cards_str, parse_cards


def cal(seats, down="9c 9d 4h 2s", up="Kc", paytable=None):
    return settle("california-draw", {"dealer": {"down": down, "up": up}, "seats": seats}, paytable)


def seat(n, down, up, ante=500, decision="call", **kw):
    s = {"seat": n, "ante": ante, "down": down, "up": up, "decision": decision}
    if decision == "call":
        s["call"] = ante
    s.update(kw)
    return s


def test_up_card_weakens_the_house_hand():
    # rulebook 003: "the dealer's four down cards are suited king through ten, consisting of a straight
    # flush ... However, the dealer's up card is an unsuited deuce, making the dealer's hand a king
    # high hand."
    v, hand = house_hand(parse_cards("Ks Qs Js Ts"), parse_cards("2h")[0])
    assert cards_str(hand) == "2h Ks Qs Js"


def test_even_money_on_ante_and_call_and_ties_push():
    # rulebook 003: "If the player's four card poker hand beats the dealer's (house) four card poker
    # hand, the player wins even money on the Ante and Call bets. ... In the event of a
    # dealer/player tie, both wagers push."
    st = cal([seat(1, "Ac Ad 3h", "5s"), seat(2, "9h 9s 6c", "4c")])
    assert (st.one(1, "ante").amount, st.one(1, "call").amount) == (500, 500)
    assert st.one(2, "ante").result == "lose"     # 9-9-K-4 for the house beats 9-9-6-4
    st = cal([seat(1, "Kh 9h 9s", "4d")])
    assert st.one(1, "ante").result == "push"


def test_ante_bonus_regardless_of_dealer():
    # rulebook 003: "The ante wager is paid 25 to 1 for a straight flush and 50 to 1 for a four of a
    # kind, regardless of the dealer's hand."
    st = cal([seat(1, "5h 6h 7h", "8h")], down="Ac Ad Ah 2s", up="As")
    assert st.one(1, "ante").result == "lose"
    assert st.one(1, "ante_bonus").amount == 500 * 25


@pytest.mark.parametrize("paytable, sf", [("california-draw-75", 75), ("california-draw-60", 60)])
def test_action_bet_tables(paytable, sf):
    # rulebook 003: "Four of a Kind 300 to 1 / Straight Flush 75 to 1 [60 to 1 in the second table] /
    # Three of a Kind 10 to 1 / Straight 6 to 1 / Flush 5 to 1 / Two Pair 4 to 1"
    st = cal([seat(1, "5h 6h 7h", "8h", action=100), seat(2, "Qc Qs 8d", "8s", action=100),
              seat(3, "Jc Js 3d", "5d", action=100)], paytable=paytable)
    assert st.one(1, "action").amount == 100 * sf
    assert st.one(2, "action").amount == 400
    assert st.one(3, "action").result == "lose"


def test_action_bet_forfeited_on_fold_but_up_card_wager_stands():
    # rulebook 003: "the wager is forfeited in the event the player decides to fold rather than make a
    # Call bet"; "The Up Card Wager pays 10 to 1 when the dealer's up card and player's up card are
    # both an ace. ... the same number, the wager pays 3 to 1 ... 2 to 1 when both up cards are the
    # same suit."
    st = cal([seat(1, "2c 3d 7h", "Ah", decision="fold", action=100, upcard=100)], up="Ac")
    assert st.one(1, "action").result == "lose"
    assert st.one(1, "upcard").amount == 1000
    assert cal([seat(1, "2c 3d 7h", "Kh", upcard=100)], up="Kc").one(1, "upcard").amount == 300
    assert cal([seat(1, "2c 3d 7h", "Qc", upcard=100)], up="Kc").one(1, "upcard").amount == 200
    assert cal([seat(1, "2c 3d 7h", "Qh", upcard=100)], up="Kc").one(1, "upcard").result == "lose"


def test_one_card_draw_and_call_equal_to_ante():
    # rulebook 003: "placing a call bet equal to the ante wager ... draw a card, discarding one of his
    # original four cards"
    st = cal([seat(1, "Ac Ad 3h", "5s", discard="3h", draw="Ah")])
    assert st.one(1, "ante").hand == "three of a kind, aces, 5 kicker"
    with pytest.raises(RoundError, match="up to|discards 2"):
        cal([seat(1, "Ac Ad 3h", "5s", discard="3h 5s", draw="Ah 8c")])
    with pytest.raises(RoundError, match="equal to the ante"):
        cal([seat(1, "Ac Ad 3h", "5s", call=1000)])
