"""The PAR kernel's own rank tables and pay tables against the settlement engine's:
the two were built apart, so agreement here checks both."""
import json
import os
from math import comb

import numpy as np
import pytest

from tablegames.par import cards as C
from tablegames.par import clearbet, colorado, kernel, stud

PAYTABLES = os.path.join(os.path.dirname(__file__), "..", "..", "host_tools", "tablectl", "paytables")
poker = pytest.importorskip("tablegames.poker")


def _colex(rows):
    rows = np.sort(rows.astype(np.int64), axis=1)
    binom = np.array([[comb(n, k) for k in range(8)] for n in range(53)], dtype=np.int64)
    return sum(binom[rows[:, i], i + 1] for i in range(rows.shape[1]))


@pytest.mark.parametrize("n", [5, 4])
def test_every_hand_ranks_the_same(n):
    k = kernel.kernel()
    mine = np.frombuffer(k.rank_table(n), dtype=np.uint16).astype(np.int64)
    hands = poker.combinations(n)
    theirs = poker.rank_all(n, kind=n).astype(np.int64)
    ours = mine[_colex(hands)]
    # both dense, weakest first: the same order means the same numbers up to an offset
    assert len(np.unique(ours)) == len(np.unique(theirs))
    assert np.array_equal(ours - ours.min(), theirs - theirs.min())


def _load(name):
    path = os.path.join(PAYTABLES, name + ".json")
    if not os.path.exists(path):
        pytest.skip("no pay table %s yet" % name)
    with open(path) as f:
        return json.load(f)


KEYS = {"royal_flush": C.ROYAL, "straight_flush": C.STRAIGHT_FLUSH, "four_of_a_kind": C.QUADS,
        "full_house": C.FULL_HOUSE, "flush": C.FLUSH, "straight": C.STRAIGHT, "three_of_a_kind": C.TRIPS,
        "two_pair": C.TWO_PAIR, "pair": C.PAIR, "ace_king": C.HIGH}


def _odds(table):
    return {KEYS[k]: v[0] // v[1] for k, v in table.items() if k in KEYS}


@pytest.mark.parametrize("mine,theirs", [("us-common", "caribbean-stud-us"), ("seed002-european", "caribbean-stud-eu")])
def test_stud_pay_tables_agree(mine, theirs):
    t = _load(theirs)
    table = t.get("bet_odds") or t.get("odds")
    assert _odds(table) == {c: p for c, p in stud.PAYTABLES[mine]["pays"].items() if c in _odds(table)}


def test_clear_dark_pay_table_agrees():
    t = _load("caribbean-clear-dark")
    assert _odds(t["bet_odds"]) == {c: p for c, p in clearbet.PAYS.items() if c in _odds(t["bet_odds"])}


@pytest.mark.parametrize("version", ["required", "permissible"])
def test_colorado_pay_tables_agree(version):
    t = _load("colorado-holdem-" + version)
    v = colorado.VERSIONS[version]
    for key, (x, y) in t["odds"].items():
        if key != "pair":
            assert v["main"][KEYS[key]] == x // y, key
    for key, (x, y) in t["bonus_odds"].items():
        if key != "pair":
            assert v["bonus"][KEYS[key]] == x // y, key
    assert t["instant_odds"]["three_of_a_kind"][0] == v["instant"]
