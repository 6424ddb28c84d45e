"""Hand evaluation: one hand at a time for settlement, whole arrays at a time for analysis.

Values are the dense integers of tablegames.poker.hands (stronger hands compare greater; kind 5:
1..7462, kind 4: 1..2535, kind 3: 1..741). All work is done by the C core
tablegames.poker._fastpoker, built by `pip install -e .`.

Scalar API (cards as text or card numbers):
    rank5(cards) -> int           5, 6 or 7 cards: the value of the best five
    rank4(cards) -> int           exactly four cards (California Draw Poker)
    rank3(cards) -> int           exactly three cards (Colorado Hold'em instant winners)
    evaluate(cards, kind=None) -> Hand   value + category + name + the cards that make it

Batch API (numpy, GIL released, threaded):
    rank_batch(hands, kind=5) -> uint16[N]          hands: uint8 array (N, n)
    batch_loops() -> {"loops": {n: name}, "why": ...}  the loop ranking each row size, and why
    rank_all(n, deck=None, fixed=(), kind=5) -> uint16[C(len(deck), n)]
        fixed + every n-card combination of deck, in lexicographic order of deck positions
        (the order of itertools.combinations(deck, n) and of combinations(n, deck))
    combinations(n, deck=None) -> uint8[C, n]       the combinations rank_all walks
    histogram(n, deck=None, fixed=(), kind=5) -> int64[n_values(kind) + 1]
        how many of those combinations have each value (index = value; index 0 is always 0)
    category_counts(hist, kind=5) -> {category: count}
"""
import itertools
from dataclasses import dataclass
from functools import total_ordering

from ..errors import CoreMissing, GameError
from . import hands
from .cards import DECK, CardError, cards_str, parse_cards


CORE = "tablegames.poker._fastpoker"


class _MissingCore:
    """Stands where the C core would be when it was not built (no compiler at install time):
    the first use says so in one line instead of a traceback."""

    def __getattr__(self, name):
        raise CoreMissing("hand evaluation", CORE)


try:
    from . import _fastpoker as _c
except ImportError:  # installed without a compiler: the pure-Python parts still work
    _c = _MissingCore()


def require_core(what="hand evaluation"):
    """Raise CoreMissing (one line: which core, what to do) unless the C core is built; for
    commands that should say so before they do anything else (connect to a board, read files)."""
    if isinstance(_c, _MissingCore):
        raise CoreMissing(what, CORE)


def _numpy():
    """numpy, for the batch API only: one hand at a time (settlement, `tablectl eval`) never
    pays for importing it."""
    try:
        import numpy
    except ImportError:
        raise GameError("batch evaluation needs numpy: pip install 'tablectl[math]'") from None
    return numpy

_KIND_COUNTS = {5: (5, 6, 7), 4: (4,), 3: (3,)}


def _cards(cards, kind):
    if isinstance(cards, str):
        return parse_cards(cards, count=_KIND_COUNTS[kind])
    cards = tuple(cards)
    if len(cards) not in _KIND_COUNTS[kind]:
        return parse_cards(cards, count=_KIND_COUNTS[kind])  # raises the count error
    return cards


def _rank(kind, cards):
    cs = _cards(cards, kind)
    try:
        return _c.rank(kind, bytes(cs))
    except (ValueError, TypeError):
        parse_cards(cs)  # names the bad or duplicated card
        raise


def rank5(cards):
    """Value (1..7462) of five cards, or of the best five of six or seven."""
    return _rank(5, cards)


def rank4(cards):
    """Value (1..2535) of a four-card hand."""
    return _rank(4, cards)


def rank3(cards):
    """Value (1..741) of a three-card hand."""
    return _rank(3, cards)


_RANKERS = {5: rank5, 4: rank4, 3: rank3}


def rank(cards, kind=5):
    return _RANKERS[kind](cards)


def best_five(cards):
    """The five cards (in the order given) that make the best hand of 5..7 cards."""
    cs = _cards(cards, 5)
    if len(cs) == 5:
        return cs
    target = _c.rank(5, bytes(cs))
    for sub in itertools.combinations(cs, 5):
        if _c.rank(5, bytes(sub)) == target:
            return sub
    raise AssertionError("unreachable")


@total_ordering
@dataclass(frozen=True)
class Hand:
    """One evaluated hand. Compares by value; a kind-5 hand never compares with a kind-4 one."""

    value: int
    kind: int
    cards: tuple     # every card given
    best: tuple      # the cards that make the hand (the best five for 6-7 cards)

    @property
    def category(self):
        return hands.category(self.value, self.kind)

    @property
    def name(self):
        return hands.name(self.value, self.kind)

    @property
    def is_royal(self):
        return self.kind == 5 and self.value == 7462

    def __lt__(self, other):
        if not isinstance(other, Hand) or other.kind != self.kind:
            return NotImplemented
        return self.value < other.value

    def __eq__(self, other):
        if not isinstance(other, Hand) or other.kind != self.kind:
            return NotImplemented
        return self.value == other.value

    def __hash__(self):
        return hash((self.kind, self.value))

    def as_dict(self):
        return {"value": self.value, "kind": self.kind, "category": hands.category_name(self.category),
                "name": self.name, "cards": cards_str(self.cards), "best": cards_str(self.best)}


def evaluate(cards, kind=None):
    """Evaluate a hand. kind None: 3 cards -> 3, 4 cards -> 4, 5 to 7 cards -> best five."""
    cs = parse_cards(cards) if isinstance(cards, str) else tuple(cards)
    if kind is None:
        kind = {3: 3, 4: 4}.get(len(cs), 5)
    if len(cs) not in _KIND_COUNTS[kind]:
        parse_cards(cs, count=_KIND_COUNTS[kind], what="a %d-card hand" % kind)
    value = _rank(kind, cs)
    best = best_five(cs) if kind == 5 else cs
    return Hand(value, kind, cs, best)


# ------------------------------------------------------------------------ batch

def _threads(threads):
    return int(threads) if threads else 0


_BATCH_LOOPS = None


def batch_loops():
    """The batch loop that ranks rows of each size (3 to 7 cards) and why: measured on this CPU
    at first use, read from the cache of an earlier measurement, or forced by
    TABLEGAMES_FASTPOKER_LOOP (tablegames.poker.loops). The first call sets the loops up;
    rank_batch calls it."""
    global _BATCH_LOOPS
    if _BATCH_LOOPS is None:
        from . import loops
        _BATCH_LOOPS = loops.choose(_c)
    return _BATCH_LOOPS


def rank_batch(hand_array, kind=5, threads=0, out=None):
    """Values of N hands given as a (N, n) integer array of card numbers; uint16[N].

    n is 5, 6 or 7 for kind 5, 4 for kind 4 and 3 for kind 3. A row with a card outside 0..51 or
    a card twice raises ValueError naming the row. `out`, a contiguous uint16 array of N values,
    receives the values instead of a new array (a caller ranking batch after batch reuses one:
    a fresh array's pages are faulted in and zeroed on first write, about a tenth of the time of
    a large batch).
    """
    np = _numpy()
    a = np.ascontiguousarray(hand_array, dtype=np.uint8)
    if a.ndim != 2:
        raise GameError("hands must be a 2-d array (N hands x n cards)")
    if out is None:
        out = np.empty(a.shape[0], dtype=np.uint16)
    elif not (isinstance(out, np.ndarray) and out.dtype == np.uint16 and out.ndim == 1
              and out.shape[0] == a.shape[0] and out.flags.c_contiguous and out.flags.writeable):
        raise GameError("out must be a writable contiguous uint16 array of %d values, one per hand" % a.shape[0])
    if a.shape[0]:
        if _BATCH_LOOPS is None:
            batch_loops()
        _c.rank_batch(a, a.shape[1], kind, out, _threads(threads))
    return out


def _deck(deck, fixed):
    deck = DECK if deck is None else tuple(deck)
    fixed = tuple(fixed)
    if fixed and set(fixed) & set(deck):
        deck = tuple(c for c in deck if c not in set(fixed))
    return bytes(deck), bytes(fixed)


def n_combinations(n, deck=None):
    d = 52 if deck is None else len(tuple(deck))
    from math import comb
    return comb(d, n)


def rank_all(n, deck=None, fixed=(), kind=5, threads=0):
    """Value of `fixed` plus each n-card combination of `deck` (default: the 52 cards minus
    `fixed`), in lexicographic order of deck positions. uint16[C(len(deck), n)]."""
    np = _numpy()
    d, f = _deck(deck, fixed)
    out = np.empty(n_combinations(n, d), dtype=np.uint16)
    _c.enumerate(kind, d, n, f, out, None, None, _threads(threads))
    return out


def combinations(n, deck=None, threads=0):
    """Every n-card combination of deck as a uint8 array (C, n), in rank_all's order."""
    np = _numpy()
    d, _ = _deck(deck, ())
    out = np.empty((n_combinations(n, d), n), dtype=np.uint8)
    if n == 0:
        return out
    # the C enumerator walks hands of 3 to 7 cards; smaller subsets come from itertools
    if n < 3:
        out[:] = np.array(list(itertools.combinations(d, n)), dtype=np.uint8).reshape(-1, n)
        return out
    kind, pad = {3: 3, 4: 4}.get(n, 5), b""
    _c.enumerate(kind, d, n, pad, None, None, out, _threads(threads))
    return out


def histogram(n, deck=None, fixed=(), kind=5, threads=0):
    """Counts of each value over `fixed` plus every n-card combination of `deck`.

    int64[n_values(kind) + 1], indexed by value. Example: all 133,784,560 seven-card hands:
    histogram(7); every river for a given hole pair: histogram(5, fixed=hole).
    """
    np = _numpy()
    d, f = _deck(deck, fixed)
    hist = np.zeros(hands.n_values(kind) + 1, dtype=np.int64)
    _c.enumerate(kind, d, n, f, None, hist, None, _threads(threads))
    return hist


def category_counts(hist, kind=5):
    """{category: combinations} from a histogram indexed by value."""
    starts = hands.table(kind).category_starts + [hands.n_values(kind) + 1]
    return {cat: int(hist[starts[i]:starts[i + 1]].sum())
            for i, cat in enumerate(hands.CATEGORIES[kind])}


def values_of_category(cat, kind=5):
    """range of the values of one category."""
    starts = hands.table(kind).category_starts + [hands.n_values(kind) + 1]
    return range(starts[int(cat)], starts[int(cat) + 1])


__all__ = ["rank5", "rank4", "rank3", "rank", "best_five", "evaluate", "Hand", "rank_batch", "batch_loops",
           "rank_all", "combinations", "histogram", "category_counts", "values_of_category",
           "n_combinations", "CardError"]
