"""The batch loops of the C core (_fastpoker.loops(): one row a step, and four or eight rows a
step with vector instructions where the CPU has them): each one this CPU runs is forced through
TABLEGAMES_FASTPOKER_LOOP and checked on all 2,598,960 five-card hands and a million random
seven-card hands against rank_all (the enumerator, which none of the batch loops shares), and on
every kind of bad row in every lane. Then the choice itself: measured on first use, cached per CPU
model and build, forced by the environment, a bad name refused in one line."""
import itertools
import json
import os
from math import comb

import numpy as np
import pytest

from tablegames.errors import GameError
from tablegames.poker import _fastpoker, combinations, evaluator, loops, rank_all, rank_batch

LOOPS = [name for name, _, _ in _fastpoker.loops()]
SIZES = {name: sizes for name, _, sizes in _fastpoker.loops()}


@pytest.fixture
def force(monkeypatch, tmp_path):
    """force(name): the next rank_batch chooses its loops again, with name in the environment
    (and a cache directory of this test's own); the real choice comes back afterwards."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))

    def _force(name):
        monkeypatch.setenv(loops.ENV, name)
        evaluator._BATCH_LOOPS = None
    yield _force
    evaluator._BATCH_LOOPS = None


@pytest.fixture(scope="module")
def five():
    return combinations(5), rank_all(5)


def lex_index(hands, deck=52):
    """Position of each sorted hand in rank_all's order (lexicographic over deck positions)."""
    h = np.sort(hands.astype(np.int64), axis=1)
    n = h.shape[1]
    binom = np.array([[comb(a, b) for b in range(n + 1)] for a in range(deck + 1)], dtype=np.int64)
    return comb(deck, n) - 1 - sum(binom[deck - 1 - h[:, k], n - k] for k in range(n))


def random_hands(rows, n, seed):
    """rows hands of n distinct cards in random order (a partial shuffle of each row's deck)."""
    rng = np.random.default_rng(seed)
    deck = np.tile(np.arange(52, dtype=np.uint8), (rows, 1))
    at = np.arange(rows)
    for k in range(n):
        j = k + rng.integers(0, 52 - k, rows)
        deck[at, k], deck[at, j] = deck[at, j], deck[at, k].copy()
    return np.ascontiguousarray(deck[:, :n])


@pytest.fixture(scope="module")
def seven():
    """A million random seven-card hands, their values by rank_all, and all of rank_all(7)."""
    every = rank_all(7)
    hands = random_hands(1_000_000, 7, 40)
    return hands, every[lex_index(hands)], every


def test_lex_index_is_rank_alls_order():
    combos = np.array(list(itertools.combinations(range(12), 5)), dtype=np.uint8)
    shuffled = np.random.default_rng(1).permuted(combos, axis=1)
    assert (lex_index(shuffled, deck=12) == np.arange(len(combos))).all()
    assert (rank_all(5, deck=range(12))[lex_index(shuffled, deck=12)] == rank_batch(shuffled)).all()


def test_the_cpu_runs_the_portable_loop_and_every_loop_it_lists_ranks_five_to_seven_cards():
    assert LOOPS[0] == "scalar"
    assert all({5, 6, 7} <= set(sizes) for sizes in SIZES.values())


@pytest.mark.parametrize("name", LOOPS)
def test_every_loop_ranks_every_five_card_hand_and_a_million_seven_card_hands_as_rank_all(
        name, force, five, seven):
    force(name)
    combos, values5 = five
    hands7, values7, every7 = seven
    out5 = np.empty(len(combos), np.uint16)
    assert rank_batch(combos, threads=1, out=out5) is out5
    assert evaluator.batch_loops()["why"] == "forced"
    assert _fastpoker.info()["batch_loop"][5] == name and _fastpoker.info()["batch_loop"][7] == name
    assert (out5 == values5).all()
    assert (rank_batch(hands7, threads=1) == values7).all()
    # two threads split the rows at uneven places: every lane and tail still right
    assert (rank_batch(hands7[:100_003]) == values7[:100_003]).all()
    # six cards: each seven-card hand less its last card, against the best of the seven's sixes
    sixes = np.ascontiguousarray(hands7[:200_000, :6])
    assert (rank_batch(sixes, threads=1) == rank_all(6)[lex_index(sixes)]).all()
    # two suits only: nearly every row a flush, many to a block (the vector loops redo them one by one)
    two_suits = np.array([c for c in range(52) if c % 4 in (1, 3)], dtype=np.uint8)
    flushy = two_suits[np.argsort(np.random.default_rng(9).random((50_000, 26)), axis=1)[:, :7]]
    assert (rank_batch(flushy, threads=1) == every7[lex_index(flushy)]).all()


@pytest.mark.parametrize("name", LOOPS)
@pytest.mark.parametrize("n", [5, 6, 7])
def test_every_loop_names_every_kind_of_bad_row_in_any_lane_and_the_tail(name, n, force):
    # 37 rows: vector steps of four or eight rows and a tail; a bad row at each of these places.
    # A repeat at every pair of positions; bytes past 51, among them 64 + c and 128 + c (a card's
    # low six bits) and 248..255 (the pads' values).
    force(name)
    good = random_hands(37, n, 12 + n)
    expect = rank_batch(good, threads=1)
    for k in range(1, 38):
        assert (rank_batch(good[:k], threads=1) == expect[:k]).all()
    for at in (0, 3, 5, 7, 8, 15, 16, 29, 33, 36):
        for a, b in itertools.combinations(range(n), 2):
            bad = good.copy()
            bad[at, b] = bad[at, a]
            with pytest.raises(ValueError, match="hand %d: a card given twice" % at):
                rank_batch(bad, threads=1)
        for pos in (0, n // 2, n - 1):
            for byte in (52, 63, 64, 64 + int(good[at, 0]), 128 + int(good[at, 1]), 200, *range(248, 256)):
                bad = good.copy()
                bad[at, pos] = byte
                with pytest.raises(ValueError, match="hand %d: a card number outside" % at):
                    rank_batch(bad, threads=1)


def test_a_name_the_cpu_does_not_run_is_refused_in_one_line(force):
    force("avx9000")
    with pytest.raises(GameError) as e:
        rank_batch(random_hands(10, 7, 1))
    msg = str(e.value)
    assert "\n" not in msg
    assert msg.startswith("TABLEGAMES_FASTPOKER_LOOP=avx9000: not a batch loop this CPU runs")
    assert msg.endswith("it runs " + ", ".join(LOOPS))
    force("")                # unset (empty): measured, not refused
    assert rank_batch(random_hands(10, 7, 1)).min() > 0


def test_the_choice_is_measured_once_then_read_from_the_cache_of_this_cpu_and_build(tmp_path):
    env = {"XDG_CACHE_HOME": str(tmp_path)}
    try:
        first = loops.choose(_fastpoker, environ=env)
        assert first["why"] == "measured" and first["cpu"] == loops.cpu_model()
        assert first["cache"] == str(tmp_path / "tablegames" / "eval-loops.json")
        # the fastest of its own figures, for every row size; every loop the CPU runs was timed
        assert first["loops"] == {n: min(d, key=d.get) for n, d in first["ns_per_hand"].items()}
        assert set(first["ns_per_hand"][7]) == set(LOOPS)
        assert {n: set(d) for n, d in first["ns_per_hand"].items()} == {
            n: {name for name in LOOPS if n in SIZES[name]} for n in (3, 4, 5, 6, 7)}
        again = loops.choose(_fastpoker, environ=env)
        assert again["why"] == "cached" and again["loops"] == first["loops"]
        assert again["ns_per_hand"] == first["ns_per_hand"]
        # the cache is what decides: an entry saying "scalar" for this CPU and build is obeyed
        data = json.loads((tmp_path / "tablegames" / "eval-loops.json").read_text())
        (key,) = data
        assert key.startswith(loops.cpu_model() + " | " + loops.build_id(_fastpoker) + " | ")
        data[key]["loops"] = {str(n): "scalar" for n in (3, 4, 5, 6, 7)}
        (tmp_path / "tablegames" / "eval-loops.json").write_text(json.dumps(data))
        assert loops.choose(_fastpoker, environ=env)["why"] == "cached"
        assert set(_fastpoker.info()["batch_loop"].values()) == {"scalar"}
        # another build's or CPU's entry, or a damaged one, is not used: measured again
        data = {key.replace(loops.build_id(_fastpoker), "0" * 16): data[key]}
        (tmp_path / "tablegames" / "eval-loops.json").write_text(json.dumps(data))
        assert loops.choose(_fastpoker, environ=env)["why"] == "measured"
        (tmp_path / "tablegames" / "eval-loops.json").write_text("{not json")
        assert loops.choose(_fastpoker, environ=env)["why"] == "measured"
        assert len(json.loads((tmp_path / "tablegames" / "eval-loops.json").read_text())) == 1
    finally:
        evaluator._BATCH_LOOPS = None    # the next rank_batch sets the real choice again


def test_an_unwritable_cache_only_means_measuring_again(tmp_path):
    blocker = tmp_path / "tablegames"
    blocker.write_text("a file where the cache directory would be")
    try:
        got = loops.choose(_fastpoker, environ={"XDG_CACHE_HOME": str(tmp_path)})
        assert got["why"] == "measured" and blocker.read_text().startswith("a file")
    finally:
        evaluator._BATCH_LOOPS = None


def test_a_forced_vector_loop_leaves_three_and_four_card_rows_to_the_measured_choice(force):
    vector = [name for name in LOOPS if 3 not in SIZES[name]]
    if not vector:
        pytest.skip("this CPU runs no vector batch loop (%s)" % ", ".join(LOOPS))
    force(vector[0])
    hands3 = random_hands(1000, 3, 5)
    assert (rank_batch(hands3, kind=3) == rank_all(3, kind=3)[lex_index(hands3)]).all()
    chosen = evaluator.batch_loops()["loops"]
    assert chosen[7] == vector[0] and chosen[3] in LOOPS and 3 in SIZES[chosen[3]]
