"""Hand evaluation: card text, the hand order, exhaustive category counts.

Published counts cited:
- five cards (2,598,960 hands) and seven cards (133,784,560 sets, best five): Wikipedia, "Poker
  probability", frequency tables of 5-card and 7-card poker hands.
- three cards (22,100 hands): Wizard of Odds, "Three Card Poker" probability table
  (straight flush 48, three of a kind 52, straight 720, flush 1,096, pair 3,744, high card 16,440).
- four cards (270,725 hands): Wizard of Odds, "Four Card Poker", the four-card hand frequencies
  (four of a kind 13, straight flush 44, three of a kind 2,496, straight 2,772, flush 2,816,
  two pair 2,808, pair 82,368, high card 177,408).
"""
import itertools
import random

import numpy as np
import pytest

from tablegames.errors import GameError

from tablegames.poker import (CardError, Five, Four, Three, category, category_counts, combinations,
                            evaluate, histogram, lowest_value, n_values, parse_cards, rank3, rank4,
                            rank5, rank_all, rank_batch, reference_value)
from tablegames.poker import _fastpoker, hands


# ---------------------------------------------------------------- card text

def test_usual_card_forms_parse_to_the_same_cards():
    assert parse_cards("As Kd 10h Tc") == parse_cards("A\u2660 K\u2666 T\u2665 10\u2663") == parse_cards("as,kd,th,tc")
    assert parse_cards("AsKd10h") == parse_cards("As Kd 10h")


@pytest.mark.parametrize("text, message", [
    ("As Kd 1h", "'1h'"),
    ("As Kx", "'Kx'"),
    ("As Kd As", "duplicate card As"),
])
def test_bad_card_text_names_the_problem(text, message):
    with pytest.raises(CardError, match=message):
        parse_cards(text)


def test_wrong_count_is_named():
    with pytest.raises(CardError, match="expected 5 cards, got 4"):
        parse_cards("As Kd Qh Jc", count=5)
    with pytest.raises(CardError, match="expected 5 or 6 or 7 cards"):
        rank5("As Kd Qh Jc")


# ---------------------------------------------------------------- order

def test_stronger_hands_compare_greater():
    order = ["7c 5d 4h 3s 2c", "Ac Kd Qh Js 9c", "2c 2d 3h 4s 5c", "Ac Ad Kh Ks Qc",
             "2c 2d 2h 3s 4c", "Ac 2d 3h 4s 5c", "6c 2d 3h 4s 5c", "Tc Jd Qh Ks Ac",
             "2c 3c 4c 5c 7c", "2c 2d 2h 3s 3c", "2c 2d 2h 2s 3c", "Ac 2c 3c 4c 5c",
             "9s Ts Js Qs Ks", "As Ks Qs Js Ts"]
    values = [rank5(h) for h in order]
    assert values == sorted(values) and len(set(values)) == len(values)
    assert values[0] == 1 and values[-1] == 7462


def test_ace_is_low_only_in_the_wheel():
    # rulebook 001 (c)(1): "an ace may be combined with a 2, 3, 4 and 5 to complete a straight"
    assert category(rank5("Ac 2d 3h 4s 5c")) == Five.STRAIGHT
    assert category(rank5("Qc Kd Ah 2s 3c")) == Five.HIGH_CARD     # no wrap-around
    assert rank5("Ac 2d 3h 4s 5c") < rank5("2c 3d 4h 5s 6c")


def test_seed_002_tie_rules():
    # rulebook 002 section 3: "If both parties have STRAIGHT FLUSHES the one with the higher card wins,
    # the lowest combination being Ace, 2,3,4,5."
    assert rank5("Ah 2h 3h 4h 5h") < rank5("2s 3s 4s 5s 6s")
    # "When both have a FULL HOUSE, the hand with the higher value THREE OF A KIND, wins."
    assert rank5("3c 3d 3h 2s 2c") > rank5("2h 2d 2s Ac Ad")
    # "In the case of TWO PAIRS, the higher value pair wins. If these are equal, then the lower
    # value pair is considered the same way."
    assert rank5("Kc Kd 3h 3s 2c") > rank5("Qc Qd Jh Js Ac")
    assert rank5("Kc Kd 4h 4s 2c") > rank5("Kh Ks 3c 3d Ac")
    # "...the cards outside, the winning combinations are compared one by one, highest to lowest.
    # ... If all cards thus considered are the same value, then a tie is declared"
    assert rank5("Ac Kd 9h 5s 3c") > rank5("Ad Kh 9s 5c 2d")
    assert rank5("Ac Kd 9h 5s 3c") == rank5("Ad Kh 9s 5d 3h")
    # "When both have a FLUSH, the hand with the highest card wins. Ace counts as high."
    assert rank5("Ac 9c 7c 5c 3c") > rank5("Kd Qd Jd 9d 7d")


def test_best_five_of_seven():
    h = evaluate("2c 3d Ah Kh Qh Jh Th")
    assert h.is_royal and h.name == "royal flush"
    assert set(h.best) == set(parse_cards("Ah Kh Qh Jh Th"))
    assert rank5("Ac Ad Ah Kc Kd Ks 2c") == rank5("Ac Ad Ah Kc Kd")


def test_four_and_three_card_orders():
    # rulebook 003 Action Bet table order: four of a kind, straight flush, three of a kind, straight,
    # flush, two pair
    seq = ["Ac Ad Ah As", "5h 6h 7h 8h", "2c 2d 2h 3s", "Ac 2d 3h 4s", "2c 5c 9c Jc", "Ac Ad Kh Ks",
           "Ac Ad Kh Qs", "Ac Kd Qh 9s"]
    values = [rank4(h) for h in seq]
    assert values == sorted(values, reverse=True)
    assert category(rank4("Ac 2d 3h 4s"), 4) == Four.STRAIGHT
    # rulebook 001 (c)(3): instant winners, "three cards of the same suit in consecutive ranking" and
    # "three cards of the same rank"
    assert category(rank3("5h 6h 7h"), 3) == Three.STRAIGHT_FLUSH
    assert category(rank3("9c 9d 9s"), 3) == Three.THREE_OF_A_KIND
    assert rank3("Ah Kh Qh") > rank3("Ac Ad As") > rank3("2c 3d 4h") > rank3("Ah 9h 2h")


def test_c_core_agrees_with_the_python_reference_on_every_class_and_random_hands():
    for kind in (5, 4, 3):
        t = hands.table(kind)
        assert len(t.classes) == n_values(kind)
    rnd = random.Random(6)
    for kind, n in ((5, 5), (5, 6), (5, 7), (4, 4), (3, 3)):
        for _ in range(2000):
            h = rnd.sample(range(52), n)
            assert evaluate(h, kind).value == reference_value(h, kind), h


def test_every_five_card_value_reached_matches_the_reference_class():
    # one representative per value: the first hand of each value in enumeration order
    values = rank_all(5)
    combos = combinations(5)
    first = np.full(7463, -1, dtype=np.int64)
    idx = np.arange(len(values))[::-1]
    first[values[::-1]] = idx
    assert (first[1:] >= 0).all(), "every one of the 7,462 values occurs"
    for v in range(1, 7463):
        assert reference_value(tuple(int(c) for c in combos[first[v]]), 5) == v


def test_rank_keys_are_unique_for_every_multiset():
    info = _fastpoker.info()
    assert info["multisets"] == 76155   # rank multisets of size 0..7, at most four of a rank


def test_the_precomputed_hash_offsets_are_the_searchs_and_in_use():
    # _fastpoker_offsets.h spares every import the search (about 60 ms): it must be exactly what
    # the search finds today, and the import must have taken it (its check passed)
    from array import array

    from tablegames.poker import gen_offsets

    searched = gen_offsets.searched_offsets()
    assert array("I", _fastpoker.offsets()).tolist() == searched
    with open(gen_offsets.HEADER) as f:
        assert f.read() == gen_offsets.header_text(searched)
    assert _fastpoker.info()["precomputed_offsets"] is True


# ---------------------------------------------------------------- exhaustive counts

def _counts(kind, n):
    return {c.name: v for c, v in category_counts(histogram(n, kind=kind), kind).items()}


def test_all_2598960_five_card_hands():
    counts = _counts(5, 5)
    royal = int(histogram(5)[7462])
    assert royal == 4
    assert counts == {
        "STRAIGHT_FLUSH": 40, "FOUR_OF_A_KIND": 624, "FULL_HOUSE": 3744, "FLUSH": 5108,
        "STRAIGHT": 10200, "THREE_OF_A_KIND": 54912, "TWO_PAIR": 123552, "PAIR": 1098240,
        "HIGH_CARD": 1302540,
    }
    assert sum(counts.values()) == 2598960


def test_all_133784560_seven_card_sets_best_five():
    hist = histogram(7)
    counts = {c.name: v for c, v in category_counts(hist, 5).items()}
    assert counts == {
        "STRAIGHT_FLUSH": 41584, "FOUR_OF_A_KIND": 224848, "FULL_HOUSE": 3473184,
        "FLUSH": 4047644, "STRAIGHT": 6180020, "THREE_OF_A_KIND": 6461620,
        "TWO_PAIR": 31433400, "PAIR": 58627800, "HIGH_CARD": 23294460,
    }
    assert int(hist[7462]) == 4324       # royal flushes among seven-card sets
    assert sum(counts.values()) == 133784560
    # only 4,824 of the 7,462 five-card values can be the best hand of seven cards
    assert int((hist > 0).sum()) == 4824


def test_all_270725_four_card_hands():
    assert _counts(4, 4) == {
        "FOUR_OF_A_KIND": 13, "STRAIGHT_FLUSH": 44, "THREE_OF_A_KIND": 2496, "STRAIGHT": 2772,
        "FLUSH": 2816, "TWO_PAIR": 2808, "PAIR": 82368, "HIGH_CARD": 177408,
    }


def test_all_22100_three_card_hands():
    assert _counts(3, 3) == {
        "STRAIGHT_FLUSH": 48, "THREE_OF_A_KIND": 52, "STRAIGHT": 720, "FLUSH": 1096,
        "PAIR": 3744, "HIGH_CARD": 16440,
    }


# ---------------------------------------------------------------- batch API

def test_five_card_batches_use_their_own_table_and_agree_with_the_shared_one_on_every_hand():
    # rank_batch and rank_all of exactly five cards look up a small table of the 6,175 five-card rank
    # multisets; the enumerator asked for values and combinations at once walks the shared table of
    # every size. Every hand, in the same order:
    combos = combinations(5)
    shared, walked = np.empty(len(combos), np.uint16), np.empty_like(combos)
    assert _fastpoker.enumerate(5, bytes(range(52)), 5, b"", shared, None, walked) == len(combos)
    assert (walked == combos).all()
    assert (rank_batch(combos, threads=1) == shared).all() and (rank_all(5, threads=1) == shared).all()
    assert (histogram(5) == np.bincount(shared, minlength=7463)).all()
    info = _fastpoker.info()
    assert info["five_card_table_bytes"] < 48 * 1024 < info["table_bytes"]
    bad = combos[:1000].copy()
    bad[777, 4] = bad[777, 0]
    with pytest.raises(ValueError, match="hand 777: a card given twice"):
        rank_batch(bad)


def test_batch_values_can_go_into_an_array_the_caller_reuses():
    rnd = np.random.default_rng(8)
    hands5 = np.array([rnd.permutation(52)[:5] for _ in range(300)], dtype=np.uint8)
    values = np.zeros(300, dtype=np.uint16)
    assert rank_batch(hands5, out=values) is values
    assert values.tolist() == rank_batch(hands5).tolist() and values.min() > 0
    for wrong in (np.zeros(300, dtype=np.int32), np.zeros(299, dtype=np.uint16),
                  np.zeros(600, dtype=np.uint16)[::2], [0] * 300):
        with pytest.raises(GameError, match="out must be a writable contiguous uint16 array of 300 values"):
            rank_batch(hands5, out=wrong)


def test_batch_matches_scalar_and_names_bad_rows():
    rnd = np.random.default_rng(7)
    hands7 = np.array([rnd.permutation(52)[:7] for _ in range(500)], dtype=np.uint8)
    out = rank_batch(hands7)
    assert [rank5(h.tolist()) for h in hands7] == out.tolist()
    bad = hands7.copy()
    bad[123, 3] = bad[123, 4]
    with pytest.raises(ValueError, match="hand 123: a card given twice"):
        rank_batch(bad)
    bad[123, 3] = 60
    with pytest.raises(ValueError, match="hand 123: a card number outside"):
        rank_batch(bad)


@pytest.mark.parametrize("n", [5, 6, 7])
def test_batches_agree_with_the_scalar_path_in_every_lane_and_the_tail(n):
    # Rows of 5 to 7 cards go four or eight at a time through a vector loop where the CPU has one and
    # it measured fastest (info()["batch_loop"]; test_poker_loops.py forces each), the last rows and
    # the flush rows through the scalar lookup.
    # Flush-heavy hands (two suits) put flushes in every lane; every length 1..25 leaves a tail;
    # 4,000 rows cross a block of the flush list.
    rnd = np.random.default_rng(11 + n)
    deck2 = [c for c in range(52) if c % 4 < 2]
    rows = [rnd.permutation(52)[:n] for _ in range(3000)] + [rnd.permutation(deck2)[:n] for _ in range(1000)]
    hands = np.array(rows, dtype=np.uint8)
    scalar = [rank5(h.tolist()) for h in hands]
    assert rank_batch(hands, threads=1).tolist() == scalar
    for k in range(1, 26):
        assert rank_batch(hands[:k], threads=1).tolist() == scalar[:k]
    assert _fastpoker.info()["batch_loop"][n] in [name for name, _, _ in _fastpoker.loops()]


def test_rank_all_order_is_itertools_order_with_dead_cards():
    deck = [c for c in range(52) if c not in (0, 51)]
    fixed = (51, 50)
    vals = rank_all(3, deck=[c for c in deck if c != 50], fixed=fixed)
    expect = [rank5(fixed + sub) for sub in itertools.islice(
        itertools.combinations([c for c in deck if c != 50], 3), 2000)]
    assert vals[:2000].tolist() == expect
    hist = histogram(3, deck=[c for c in deck if c != 50], fixed=fixed)
    assert hist.sum() == len(vals) and (np.bincount(vals, minlength=7463) == hist).all()


def test_lowest_value_helper():
    # the rulebook 000 qualifier, "at least a pair of eights"
    q = lowest_value(5, Five.PAIR, 6)
    assert q == rank5("8c 8d 4h 3s 2c")
    assert rank5("7c 7d Ah Ks Qc") < q <= rank5("8h 8s 2c 3d 4h")
