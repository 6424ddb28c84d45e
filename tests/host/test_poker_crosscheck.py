"""Cross-check against an independent open-source evaluator.

phevaluator (PyPI `phevaluator`, Apache-2.0, perfect-hash evaluator by Henry Lee) is installed as a
test-only dependency (requirements.txt). Its rank is 1 for a royal flush and 7462 for the worst
high card, over the same 7,462 classes, so the two must agree exactly: ours == 7463 - theirs, for
every one of the 2,598,960 five-card hands (which also means the orderings agree, ties included).
"""
import numpy as np
import pytest

from tablegames.poker import card_str, combinations, rank_all

phevaluator = pytest.importorskip("phevaluator")


def test_ordering_of_all_2598960_five_card_hands_agrees_with_phevaluator():
    from phevaluator import Card, evaluate_cards
    ids = [Card(card_str(c)).id_ for c in range(52)]           # their card ids for our cards
    ours = rank_all(5)
    combos = combinations(5)
    theirs = np.fromiter(
        (evaluate_cards(ids[a], ids[b], ids[c], ids[d], ids[e]) for a, b, c, d, e in combos.tolist()),
        dtype=np.int32, count=len(combos))
    assert len(ours) == 2598960
    mismatch = np.flatnonzero(ours.astype(np.int32) != 7463 - theirs)
    assert mismatch.size == 0, [card_str(int(c)) for c in combos[mismatch[0]]]


def test_seven_card_sample_agrees_with_phevaluator():
    from phevaluator import Card, evaluate_cards
    from tablegames.poker import rank_batch
    ids = [Card(card_str(c)).id_ for c in range(52)]
    rng = np.random.default_rng(2024)
    hands = np.argsort(rng.random((200000, 52)), axis=1)[:, :7].astype(np.uint8)
    ours = rank_batch(hands)
    theirs = np.array([evaluate_cards(*(ids[c] for c in h)) for h in hands.tolist()])
    assert (ours.astype(np.int32) == 7463 - theirs).all()
