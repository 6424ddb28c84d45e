"""Caribbean Poker, European rules (rulebook 002), and the clear/dark-bet game (rulebook 004)."""
import pytest

from tablegames.games import RoundError, settle


def stud(seats, dealer="Ah Kd 7c 5s 2h", paytable=None):
    return settle("caribbean-stud", {"dealer": {"cards": dealer}, "seats": seats}, paytable)


def raise_(n, cards, ante=100):
    return {"seat": n, "ante": ante, "cards": cards, "decision": "raise", "bet": 2 * ante}


def test_dealer_qualifies_with_ace_king():
    # rulebook 002: "In order to qualify the dealer must have at least Ace-King or higher. If he does
    # not qualify he pays all the players left in the game even money on their first bet."
    st = stud([raise_(1, "2c 3d 5h 9s Jc")], dealer="Ah Qd 7c 5s 2h")
    assert (st.one(1, "ante").result, st.one(1, "ante").amount, st.one(1, "bet").result) == ("win", 100, "push")
    st = stud([raise_(1, "2c 3d 5h 9s Jc")], dealer="Ah Kd 4c 3s 2h")
    assert st.one(1, "ante").result == "lose"


@pytest.mark.parametrize("hand, odds", [
    ("As Ks Qs Js Ts", 100), ("9d 8d 7d 6d 5d", 25), ("Qc Qd Qh Qs 3c", 20), ("Jc Jd Jh 3s 3c", 7),
    ("3c 8c 9c Jc Qc", 5), ("9c Td Jh Qs Kc", 4), ("Jc Jd Jh 3s 4c", 3), ("Jc Jd 3h 3s 4c", 2),
    ("Jc Jd 3h 4s 6c", 1), ("Ac Ks 9d 6c 3d", 1),
])
def test_european_pay_table(hand, odds):
    # rulebook 002 section 2: "ROYAL FLUSH ... Pays 100 to 1 on the bet and 1 to 1 on the ante.
    # STRAIGHT FLUSH ... 25 to 1 ... FOUR OF A KIND ... 20 to 1 ... FULL HOUSE ... 7 to 1 ...
    # FLUSH ... 5 to 1 ... STRAIGHT ... 4 to 1 ... THREE OF A KIND ... 3 to 1 ... TWO PAIRS ... 2 to
    # 1 ... ONE PAIR ... 1 to 1 ... AS-KING ... 1 to 1"
    st = stud([raise_(1, hand)], dealer="Ah Kd 7h 5s 2h")
    assert st.one(1, "bet").amount == 200 * odds and st.one(1, "ante").amount == 100


def test_us_table_pays_straight_flush_50():
    st = stud([raise_(1, "9d 8d 7d 6d 5d")], paytable="caribbean-stud-us")
    assert st.one(1, "bet").amount == 200 * 50


def test_ties_compare_outside_cards_then_push():
    # rulebook 002 section 3: "the cards outside ... are compared one by one, highest to lowest ... If
    # all cards thus considered are the same value, then a tie is declared and all bets are called
    # off."
    st = stud([raise_(1, "Ac Ks 7d 5h 3d"), raise_(2, "As Kc 7s 5c 2c")], dealer="Ah Kd 7c 5s 2h")
    assert st.one(1, "bet").result == "win"
    assert st.one(2, "bet").result == "push" and st.one(2, "ante").result == "push"


def test_raise_is_exactly_double():
    # rulebook 002: "Those who decide to raise must place exactly double the amount of their first bet"
    with pytest.raises(RoundError, match="exactly double"):
        stud([{"seat": 1, "ante": 100, "cards": "2c 3d 5h 9s Jc", "decision": "raise", "bet": 100}])


def test_fold_forfeits_the_first_bet():
    st = stud([{"seat": 1, "ante": 100, "cards": "2c 3d 5h 9s Jc", "decision": "fold"}])
    assert st.one(1, "ante").result == "lose"


def _hands(n):
    """n disjoint five-card hands from the cards the default dealer hand leaves."""
    from tablegames.poker import cards_str, parse_cards
    dealer = set(parse_cards("Ah Kd 7c 5s 2h"))
    deck = [c for c in range(52) if c not in dealer]
    return [cards_str(deck[5 * i:5 * i + 5]) for i in range(n)]


def test_at_most_seven_players():
    # rulebook 002 section 2: "A maximum number of seven players is allowed on the table, all being
    # seated. Only seated players may participate."
    hands = _hands(9)
    st = stud([raise_(n, hands[n - 1]) for n in range(1, 8)])
    assert {ln.seat for ln in st.lines} == set(range(1, 8))
    with pytest.raises(RoundError, match="seat 8: this table has 7 places .*seven players"):
        stud([raise_(n, hands[n - 1]) for n in range(1, 9)])
    with pytest.raises(RoundError, match="seat 9: this table has 7 places"):
        stud([raise_(9, hands[0])])
    with pytest.raises(RoundError, match="seat number from 1"):
        stud([raise_(0, hands[0])])


# ---------------------------------------------------------------- rulebook 004: clear and dark bets

def cd(seats, dealer="Ah Kd 7c 5s 2h"):
    return settle("caribbean-clear-dark", {"dealer": {"cards": dealer}, "seats": seats})


def box(n, kind, cards, player="A", ante=100, **kw):
    b = {"seat": n, "player": player, "bet_type": kind, "ante": ante, "cards": cards, "bet": 2 * ante}
    if kind == "clear":
        b["decision"] = "bet"
    b.update(kw)
    return b


def test_dark_bets_cannot_pass():
    # rulebook 004: "The player doesn't look through the cards at dark bets, that is why it is not
    # allowed to 'pass' at dark bets."
    with pytest.raises(RoundError, match="not allowed to 'pass' at dark bets"):
        cd([box(1, "dark", "2c 3d 5h 9s Jc", decision="pass")])


def test_bet_is_twice_the_ante():
    # rulebook 004: "The bet 'bet' always refers to the bet 'ante' in cash equivalent as 2 to 1. Any
    # other proportions are inadmissible"
    with pytest.raises(RoundError, match="2 to 1"):
        cd([box(1, "dark", "2c 3d 5h 9s Jc", bet=150)])


def test_one_clear_bet_per_player():
    # rulebook 004: "Each player can have only one bet 'clear'."
    with pytest.raises(RoundError, match="only one bet 'clear'"):
        cd([box(1, "clear", "2c 3d 5h 9s Jc"), box(2, "clear", "2d 3c 5s 9h Jd")])
    st = cd([box(1, "clear", "2c 3d 5h 9s Jc"), box(2, "dark", "2d 3c 8s 9h Jd"), box(3, "dark", "4d 4c 6s Th Qd")])
    assert len(st.lines) == 6


def test_ties_settled_for_the_player():
    # rulebook 004: "If the card combinations of the player and the dealer are equal in superiority
    # between each other, the question of the pay off is settled in favor of the player."
    st = cd([box(1, "dark", "As Kc 7s 5c 2c")], dealer="Ah Kd 7c 5s 2h")
    assert st.one(1, "ante").result == "win" and st.one(1, "bet").result == "win"


def test_buying_a_sixth_card_at_the_antes_price():
    # rulebook 004: "the players have an opportunity to buy the sixth upper card from the dealer's
    # pack, having paid extra, the price of their entrance bet. They can ... discard an
    # unnecessary one"
    st = cd([box(1, "clear", "Qc Qd 3h 4s 9c", buy={"card": "Qh", "discard": "3h"})])
    assert (st.one(1, "purchase").result, st.one(1, "purchase").amount) == ("lose", 100)
    assert st.one(1, "bet").amount == 200 * 3         # three queens, rulebook 002 table
    assert st.lines[0].wager == "purchase"


def test_exchanging_a_card():
    st = cd([box(1, "clear", "Qc Qd 3h 4s 9c", exchange={"discard": "3h", "draw": "9d"})])
    assert st.one(1, "exchange").amount == 100 and st.one(1, "bet").amount == 200 * 2


def test_dark_box_cannot_buy_and_clear_pass_loses_ante():
    with pytest.raises(RoundError, match="dark bets are turned down"):
        cd([box(1, "dark", "Qc Qd 3h 4s 9c", buy={"card": "Qh", "discard": "3h"})])
    st = cd([box(1, "clear", "2c 3d 5h 9s Jc", decision="pass", bet=0)])
    assert st.one(1, "ante").result == "lose"


def test_dealer_without_a_game_pays_antes_even_money():
    # rulebook 004: "When the dealer has no game, card combinations of the players are not looked
    # through and the pay off is performed in proportion of 1 to 1 of the bets 'ante'"
    st = cd([box(1, "dark", "2c 3d 5h 9s Jc")], dealer="Ah Qd 7c 5s 2h")
    assert st.one(1, "ante").result == "win" and st.one(1, "bet").result == "push"


def test_at_most_seven_boxes():
    # rulebook 004: the dark bets of a player are "limited only with the quantity of vacant boxes in
    # the playing field (from 0 to 7)"
    hands = _hands(9)
    st = cd([box(1, "clear", hands[0])] + [box(n, "dark", hands[n - 1]) for n in range(2, 8)])
    assert {ln.box or ln.seat for ln in st.lines} >= set(range(1, 8))
    with pytest.raises(RoundError, match="seat 8: this table has 7 places .*from 0 to 7"):
        cd([box(1, "clear", hands[0])] + [box(n, "dark", hands[n - 1]) for n in range(2, 10)])
