"""Colorado Hold'em Poker (rulebook 001, Section 38), both versions."""
import pytest

from tablegames.games import RoundError, settle

REQ, PERM = "colorado-holdem-required", "colorado-holdem-permissible"


def play(n, cards, discard, ante=500, bet=None, **kw):
    s = {"seat": n, "ante": ante, "cards": cards, "decision": "play", "discard": discard,
         "bet": ante if bet is None else bet}
    s.update(kw)
    return s


def ch(seats, community="Kh 7c 2d", paytable=REQ, **kw):
    r = {"community": community, "seats": seats}
    r.update(kw)
    return settle("colorado-holdem", r, paytable)


def test_hand_is_exactly_the_two_kept_cards_and_the_community():
    # (a)(1)(v) "'Hand' means the five card hand formed by each player by combining the two cards
    # retained by the player after the player's discard and the three community cards."
    st = ch([play(1, "Kd Ks 7d", discard="Ks")])     # keeps Kd 7d: two pair, not the full house
    assert st.one(1, "ante").hand.startswith("two pair, kings and sevens")


def test_required_version_thresholds():
    # (k)(3) "Any wager on a hand, which has a rank that is lower than a pair of sevens shall be a
    # losing wager." (m)(2) "Pair of Tens, Jacks, Queens, King or Aces 1 to 1"
    st = ch([play(1, "6c 6d 3h", "3h"), play(2, "8s 8d 3c", "3c"), play(3, "Tc Td 3s", "3s")])
    assert st.one(1, "ante").result == "lose"
    assert st.one(2, "ante").result == "push"
    assert (st.one(3, "ante").result, st.one(3, "ante").amount, st.one(3, "bet").amount) == ("win", 500, 500)


def test_permissible_version_thresholds():
    # (l)(5) "lower than a pair of nines shall be a losing wager" (l)(6) "a pair of nines or tens
    # shall be a push" (n)(2) "Pair of Jacks, Queens, King or Aces 1 to 1"
    st = ch([play(1, "8c 8d 3h", "3h"), play(2, "Tc Td 3s", "3s"), play(3, "Jc Jd 4s", "4s", bet=0)],
            paytable=PERM)
    assert st.one(1, "ante").result == "lose"
    assert st.one(2, "ante").result == "push"
    assert st.one(3, "ante").result == "win" and not st.for_seat(3, "bet")


@pytest.mark.parametrize("paytable, quads, boat", [(REQ, 40, 11), (PERM, 25, 10)])
def test_version_pay_tables(paytable, quads, boat):
    # (m)(2) "Four-of-a-kind 40 to 1 / Full House 11 to 1"; (n)(2) "Four-of-a-kind 25 to 1 / Full House 10 to 1"
    st = ch([play(1, "Kd Ks 7d", "7d"), play(2, "7h 7s 3c", "3c")], community="Kh 7c Kc", paytable=paytable)
    assert st.one(1, "ante").amount == 500 * quads
    assert st.one(2, "ante").amount == 500 * boat


def test_instant_winner_pays_the_initial_wager_5_to_1():
    # (c)(3) instant winners: "Three card straight flush" and "Three-of-a-kind"; (m)(2) "Three Card
    # Straight Flush (instant Winner) 5 to 1 / Three-of-a-kind (Instant Winner) 5 to 1"
    st = ch([{"seat": 1, "ante": 500, "cards": "5h 6h 7h", "decision": "instant"},
             {"seat": 2, "ante": 500, "cards": "9c 9d 9s", "decision": "instant"}])
    assert [ln.amount for ln in st.lines] == [2500, 2500]


def test_erroneous_instant_winner():
    # (o)(4) "If a player erroneously declares an immediate winner, that player's hand shall be void
    # and that player shall lose his or her initial wager."
    st = ch([{"seat": 1, "ante": 500, "cards": "5h 6h 8h", "decision": "instant"}])
    assert st.one(1, "ante").result == "lose" and "(o)(4)" in st.one(1, "ante").rule


def test_instant_winner_makes_no_bet():
    # (l)(2)(ii)(A) "A player declaring and qualifying for an instant winner may not make any
    # additional wager for that round of play."
    with pytest.raises(RoundError, match="may not make any additional wager"):
        ch([{"seat": 1, "ante": 500, "bet": 500, "cards": "5h 6h 7h", "decision": "instant"}], paytable=PERM)


def test_bet_equals_ante_and_fold_only_in_required_version():
    # (a)(1)(ii) "'Bet wager' means an additional wager made by a player in an amount equal to the
    # player's ante wager"
    with pytest.raises(RoundError, match=r"\(a\)\(1\)\(ii\)"):
        ch([play(1, "Tc Td 3s", "3s", bet=1000)])
    with pytest.raises(RoundError, match="no fold"):
        ch([{"seat": 1, "ante": 500, "cards": "Tc Td 3s", "decision": "fold"}], paytable=PERM)
    st = ch([{"seat": 1, "ante": 500, "cards": "Tc Td 3s", "decision": "fold"}])
    assert st.one(1, "ante").result == "lose"


def test_bonus_wager_tables():
    # (g)(2) "$1.00 gaming chip"; (m)(4) "Straight 15 to 1 ... Two pair 1 to 1 / Pair of Jacks or
    # Better Push"; (n)(4) "Full House 50 to 1 / Flush 25 to 1"
    st = ch([play(1, "9d Ts Jc", "Jc", bonus=100), play(2, "Jh Jd 4s", "4s", bonus=100),
             play(3, "5h 5s 4c", "4c", bonus=100)], community="Qh 8c Js")
    assert st.one(1, "bonus").amount == 1500
    assert st.one(2, "bonus").result == "win"        # J J J: three of a kind
    assert st.one(3, "bonus").result == "lose"
    st = ch([play(1, "Qd Qs 4c", "4c", bonus=100)], community="Qh 8c 8s", paytable=PERM)
    assert st.one(1, "bonus").amount == 5000
    with pytest.raises(RoundError, match=r"\$1.00 gaming chip"):
        ch([play(1, "Qd Qs 4c", "4c", bonus=500)])


def test_bonus_pair_of_jacks_pushes():
    st = ch([play(1, "Jh Jd 4s", "4s", bonus=100)], community="Qh 8c 2s")
    assert st.one(1, "bonus").result == "push"


def test_payout_cap_per_hand():
    # (m)(3) "a casino may establish a maximum amount of $50,000 or such greater amount that is
    # payable to a player on a single hand, exclusive of any amount payable on a winning bonus wager"
    st = ch([play(1, "As Ks 2c", "2c", ante=10000, bonus=100)], community="Qs Js Ts")
    assert st.one(1, "ante").amount == 5_000_000
    assert st.one(1, "bet").amount == 0 and "payout limit" in st.one(1, "bet").rule
    assert st.one(1, "bonus").amount == 1_000_000
    with pytest.raises(RoundError, match=r"\$50,000 or such greater amount"):
        ch([play(1, "As Ks 2c", "2c")], community="Qs Js Ts", table={"payout_cap_cents": 100000})


def test_irregularities_void_all_hands():
    # (o)(3) "If any player or the area designated for the placement of the community cards is
    # dealt an incorrect number of cards, all hands shall be void and the cards shall be reshuffled."
    r = [play(1, "As Ks 2c 3c", "2c", bonus=100)]
    with pytest.raises(RoundError, match=r"\(o\)\(3\)|o3"):
        ch(r)
    st = ch(r, irregularity="o3")
    assert {ln.result for ln in st.lines} == {"push"} and len(st.lines) == 3


def test_winners_paid_from_the_dealers_right():
    # (k)(4)(i) "The dealer shall pay: all winning wagers beginning with the player farthest to the
    # right of the dealer and continuing counterclockwise around the table."
    st = ch([play(1, "Tc Td 3s", "3s"), play(2, "6c 6d 3h", "3h"), play(3, "Ac Ad 4s", "4s")])
    assert [(ln.seat, ln.result) for ln in st.lines] == [(2, "lose"), (2, "lose"), (3, "win"), (3, "win"),
                                                        (1, "win"), (1, "win")]
