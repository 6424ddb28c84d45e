"""Hand classes, their order and their names: the pure-Python reference for every evaluator.

A hand's *value* is a dense integer, 1 for the weakest class of its kind and larger for stronger
hands (so stronger hands compare greater and equal values tie). Three kinds exist:

  kind  cards                         values     used by
  5     five cards, or best five of   1..7462    every five-card game; 7462 is a royal flush
        six or seven
  4     four cards                    1..2535    California Draw Poker (rulebook 003)
  3     three cards                   1..741     Colorado Hold'em instant winners (rulebook 001)

Ranking rules (ace high everywhere; ace low only in the lowest straight: A-2-3-4-5 for five
cards, and likewise A-2-3-4 and A-2-3 for four and three cards):

- Five cards: the standard order, and ties broken as rulebook 002 ("Caribbean Poker", section 3)
  spells out: straights by their highest card (A-2-3-4-5 lowest), four of a kind and three of a
  kind and full houses by the rank of the set, two pairs by the higher pair then the lower pair,
  a pair by its rank, and then "the cards outside ... compared one by one, highest to lowest ...
  If all cards thus considered are the same value, then a tie". Suits never break ties.
- Four cards: four of a kind > straight flush > three of a kind > straight > flush > two pair >
  pair > high card, the order of rulebook 003's Action Bet table (which pays a straight 6 to 1 above a
  flush 5 to 1, and a four of a kind 300 to 1 above a straight flush). It is also the order of
  rarity: of the 270,725 four-card hands 13 are four of a kind, 44 straight flushes, 2,496 three
  of a kind, 2,772 straights, 2,816 flushes, 2,808 two pairs.
- Three cards: straight flush > three of a kind > straight > flush > pair > high card, the usual
  three-card order (22,100 hands: 48 / 52 / 720 / 1,096 / 3,744 / 16,440).

This module builds the class tables with plain Python so the C core (tablegames.poker._fastpoker)
is checked against an independent construction. It is the reference, not the fast path: use
tablegames.poker.evaluate / the batch functions for speed.
"""
import enum
import itertools
from bisect import bisect_right
from collections import Counter

from ..errors import GameError
from .cards import RANKS, RANK_NAMES, RANK_PLURALS


class Five(enum.IntEnum):
    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    THREE_OF_A_KIND = 3
    STRAIGHT = 4
    FLUSH = 5
    FULL_HOUSE = 6
    FOUR_OF_A_KIND = 7
    STRAIGHT_FLUSH = 8


class Four(enum.IntEnum):
    HIGH_CARD = 0
    PAIR = 1
    TWO_PAIR = 2
    FLUSH = 3
    STRAIGHT = 4
    THREE_OF_A_KIND = 5
    STRAIGHT_FLUSH = 6
    FOUR_OF_A_KIND = 7


class Three(enum.IntEnum):
    HIGH_CARD = 0
    PAIR = 1
    FLUSH = 2
    STRAIGHT = 3
    THREE_OF_A_KIND = 4
    STRAIGHT_FLUSH = 5


CATEGORIES = {5: Five, 4: Four, 3: Three}
ACE = 12


def _straight_top(distinct_desc, n):
    """Top rank of an n-card straight made of these distinct ranks (descending), else None."""
    if len(distinct_desc) != n:
        return None
    if distinct_desc[0] - distinct_desc[-1] == n - 1:
        return distinct_desc[0]
    # the wheel: ace plays low below a deuce (A-2-3-4-5, A-2-3-4, A-2-3)
    if distinct_desc[0] == ACE and distinct_desc[1:] == list(range(n - 2, -1, -1)):
        return n - 2
    return None


def class_key(kind, ranks, flush):
    """(category, tie-break ranks) for one hand of `kind` cards; tuples compare as hands do."""
    counts = Counter(ranks)
    groups = sorted(counts.items(), key=lambda rc: (rc[1], rc[0]), reverse=True)
    shape = tuple(c for _, c in groups)
    order = tuple(r for r, _ in groups)
    top = _straight_top(sorted(counts, reverse=True), kind)
    C = CATEGORIES[kind]
    if top is not None:
        return (C.STRAIGHT_FLUSH if flush else C.STRAIGHT, (top,))
    if flush:
        return (C.FLUSH, order)
    return (_SHAPES[kind][shape], order)


_SHAPES = {
    5: {(4, 1): Five.FOUR_OF_A_KIND, (3, 2): Five.FULL_HOUSE, (3, 1, 1): Five.THREE_OF_A_KIND,
        (2, 2, 1): Five.TWO_PAIR, (2, 1, 1, 1): Five.PAIR, (1, 1, 1, 1, 1): Five.HIGH_CARD},
    4: {(4,): Four.FOUR_OF_A_KIND, (3, 1): Four.THREE_OF_A_KIND, (2, 2): Four.TWO_PAIR,
        (2, 1, 1): Four.PAIR, (1, 1, 1, 1): Four.HIGH_CARD},
    3: {(3,): Three.THREE_OF_A_KIND, (2, 1): Three.PAIR, (1, 1, 1): Three.HIGH_CARD},
}


def _all_classes(kind):
    keys = set()
    for ranks in itertools.combinations_with_replacement(range(13), kind):
        if max(Counter(ranks).values()) <= 4:
            keys.add(class_key(kind, ranks, False))
    for ranks in itertools.combinations(range(13), kind):
        keys.add(class_key(kind, ranks, True))
    return sorted(keys)


class _Table:
    def __init__(self, kind):
        self.kind = kind
        self.classes = _all_classes(kind)                    # value - 1 -> (category, ranks)
        self.value_of = {k: i + 1 for i, k in enumerate(self.classes)}
        cats = [c for c, _ in self.classes]
        self.category_starts = [cats.index(c) + 1 for c in CATEGORIES[kind]]


_TABLES = {}


def table(kind):
    if kind not in _TABLES:
        _TABLES[kind] = _Table(kind)
    return _TABLES[kind]


def n_values(kind):
    """How many distinct hand values `kind` has (values run 1..n_values)."""
    return {5: 7462, 4: 2535, 3: 741}[kind]


def reference_value(cards, kind=5):
    """Value of a hand by plain Python (slow; the fast evaluator must agree with this).

    kind 5 takes 5, 6 or 7 cards and returns the value of the best five.
    """
    t = table(kind)
    if kind == 5 and len(cards) > 5:
        return max(reference_value(sub, 5) for sub in itertools.combinations(cards, 5))
    if len(cards) != kind:
        raise GameError("a %d-card hand needs %d cards, got %d" % (kind, kind, len(cards)))
    ranks = [c >> 2 for c in cards]
    flush = len({c & 3 for c in cards}) == 1
    return t.value_of[class_key(kind, ranks, flush)]


def category(value, kind=5):
    """The category (Five/Four/Three enum member) of a hand value."""
    t = table(kind)
    if not 1 <= value <= len(t.classes):
        raise GameError("no %d-card hand has value %r" % (kind, value))
    return CATEGORIES[kind](bisect_right(t.category_starts, value) - 1)


def category_start(cat, kind=5):
    """The smallest value in a category: `value >= category_start(Five.FLUSH)` means flush or better."""
    return table(kind).category_starts[int(cat)]


def lowest_value(kind, cat, *lead):
    """Smallest value of `cat` whose tie-break ranks start with `lead` (rank numbers 0..12).

    lowest_value(5, Five.PAIR, 6) is the weakest pair of eights: the rulebook 000 qualifier.
    """
    t = table(kind)
    for i, (c, ranks) in enumerate(t.classes):
        if c == cat and tuple(ranks[:len(lead)]) >= tuple(lead):
            return i + 1
    raise GameError("no %d-card hand of category %s with ranks %s" % (kind, cat, lead))


def is_royal(value):
    return value == 7462


def _join(ranks):
    return "-".join(RANKS[r] for r in ranks)


def name(value, kind=5):
    """A short English name: 'pair of eights, A-K-9 kickers', 'royal flush', ..."""
    cat, ranks = table(kind).classes[value - 1]
    C = CATEGORIES[kind]
    if cat == C.STRAIGHT_FLUSH:
        if kind == 5 and ranks[0] == ACE:
            return "royal flush"
        return "straight flush, %s high" % RANK_NAMES[ranks[0]]
    if cat == C.STRAIGHT:
        return "straight, %s high" % RANK_NAMES[ranks[0]]
    if cat == C.FLUSH:
        return "flush, %s" % _join(ranks)
    if cat.name == "FOUR_OF_A_KIND":
        return "four of a kind, %s" % RANK_PLURALS[ranks[0]] + (
            ", %s kicker" % RANKS[ranks[1]] if len(ranks) > 1 else "")
    if cat.name == "FULL_HOUSE":
        return "full house, %s full of %s" % (RANK_PLURALS[ranks[0]], RANK_PLURALS[ranks[1]])
    if cat == C.THREE_OF_A_KIND:
        return "three of a kind, %s" % RANK_PLURALS[ranks[0]] + (
            ", %s kickers" % _join(ranks[1:]) if len(ranks) > 2 else
            ", %s kicker" % RANKS[ranks[1]] if len(ranks) > 1 else "")
    if cat.name == "TWO_PAIR":
        return "two pair, %s and %s" % (RANK_PLURALS[ranks[0]], RANK_PLURALS[ranks[1]]) + (
            ", %s kicker" % RANKS[ranks[2]] if len(ranks) > 2 else "")
    if cat == C.PAIR:
        return "pair of %s, %s kicker%s" % (RANK_PLURALS[ranks[0]], _join(ranks[1:]),
                                            "s" if len(ranks) > 2 else "")
    return "%s high, %s" % (RANK_NAMES[ranks[0]], _join(ranks))


def category_name(cat):
    return cat.name.lower().replace("_", " ")
