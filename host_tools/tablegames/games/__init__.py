"""One module per game over the shared evaluator (tablegames.poker); pay tables are data
(tablegames/paytables/*.json, one file per game and version).

    from tablegames.games import settle
    result = settle("caribbean-draw", round_dict)            # -> base.Settlement
    result = settle("colorado-holdem", round_dict, paytable="colorado-holdem-permissible")
"""
import importlib

from .base import Line, RoundError, Settlement, load_paytable, paytable_names

# game name -> module (each exposes GAME, DEFAULT_PAYTABLE, settle(round, paytable=None))
GAMES = {
    "caribbean-draw": "tablegames.games.caribbean_draw",
    "caribbean-stud": "tablegames.games.caribbean_stud",
    "colorado-holdem": "tablegames.games.colorado_holdem",
    "california-draw": "tablegames.games.california_draw",
    "caribbean-clear-dark": "tablegames.games.clear_dark",
}


def game_module(name):
    if name not in GAMES:
        raise RoundError("no game %r: the games are %s" % (name, ", ".join(GAMES)))
    return importlib.import_module(GAMES[name])


def settle(game, rnd, paytable=None):
    """Settle one round (a dict, see each game module's docstring) -> Settlement."""
    if not isinstance(rnd, dict):
        raise RoundError("a round is a JSON object with seats, wagers, cards and decisions")
    return game_module(game).settle(rnd, paytable)
