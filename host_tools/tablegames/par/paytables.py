"""The PAR sheets' pay tables: read from tablegames/paytables/*.json, the files `tablectl settle`
pays by, so a sheet always prices the table the settlement engine pays (one source; a house's
own file prices the same way). Odds are kept as written ("a to b") and handed to the kernel as
whole x-to-1 numbers; a table whose odds are not whole is refused in one line.
"""
from functools import lru_cache

from ..errors import GameError
from ..games.base import load_paytable, paytable_names
from ..poker.cards import RANKS
from . import cards as C

# pay-table keys -> the kernel's five-card categories ("ace_king" is the high-card line a player
# can win with against a qualified dealer; "high_card" the same line where any high card pays)
FIVE = {"royal_flush": C.ROYAL, "straight_flush": C.STRAIGHT_FLUSH, "four_of_a_kind": C.QUADS,
        "full_house": C.FULL_HOUSE, "flush": C.FLUSH, "straight": C.STRAIGHT, "three_of_a_kind": C.TRIPS,
        "two_pair": C.TWO_PAIR, "pair": C.PAIR, "ace_king": C.HIGH, "high_card": C.HIGH}


@lru_cache(maxsize=None)
def _load(name):
    return load_paytable(name)


def load(name, game):
    """The pay table `name` (tablegames/paytables/NAME.json), which must be one of `game`'s."""
    pt = _load(name)
    if pt.get("game") != game:
        raise GameError("pay table %s is for %s, not %s" % (name, pt.get("game"), game))
    return pt


class Tables(dict):
    """A game's pay tables by name; an unknown name is a GameError that lists the known ones."""

    def __init__(self, game, items):
        super().__init__(items)
        self.game = game

    def __missing__(self, name):
        raise GameError("no %s pay table %r: the PAR sheets have %s" % (self.game, name, ", ".join(self)))


def names(game):
    """The pay tables of a game, in file-name order."""
    return paytable_names(game)


def whole(odds, what):
    """[a, b] ("a to b") as the whole number a / b the kernel takes."""
    a, b = odds
    if b <= 0 or a % b:
        raise GameError("%s pays %s to %s: a PAR sheet needs whole x-to-1 odds" % (what, a, b))
    return a // b


def pays(odds, keys, what):
    """{category: x to 1} for every line of `odds` (a pay table's odds object), through `keys`."""
    out = {}
    for key, value in odds.items():
        if key not in keys:
            raise GameError("%s: no hand category %r" % (what, key))
        out[keys[key]] = whole(value, "%s %s" % (what, key.replace("_", " ")))
    return out


def rank_index(text):
    """A pay table's rank ("7", "T", "J") as 0 (deuce) .. 12 (ace)."""
    return RANKS.index("T" if text == "10" else text.upper())
