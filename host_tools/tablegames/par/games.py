"""Which games and pay tables have a PAR sheet, and how each is built.

GAMES: name -> {"help", "default", "paytables": {name: builder}}; a builder takes
(progress, options) and returns a list of ParSheet. Game and pay-table names are the settlement
engine's (`tablectl settle`, tablegames/paytables/*.json): the sheets of a game are those of its
pay-table files, read from the files.
"""

from . import california, cdraw, clearbet, colorado, progressive, stud, tcp


def _tcp(paytable):
    def build(progress, options):
        counts = tcp._counts(progress)
        return [tcp.ante_play(paytable, counts=counts), tcp.pair_plus(paytable, counts=counts)]
    return build


def _progressive(schedule):
    def build(progress, options):
        meter = options.get("meter_cents")
        return [progressive.sheet(schedule, meter_cents=meter)]
    return build


def _stud(paytable):
    def build(progress, options):
        return [stud.sheet(paytable, progress=progress)]
    return build


def _colorado(version):
    def build(progress, options):
        return [colorado.sheet(version, progress=progress), colorado.bonus_sheet(version, progress=progress)]
    return build


def _california(paytable):
    def build(progress, options):
        return [california.main_sheet(progress, paytable), california.action_sheet(paytable, progress),
                california.up_card_sheet(paytable)]
    return build


def _clearbet(pass_after_buy):
    def build(progress, options):
        return clearbet.sheets(progress, pass_after_buy=pass_after_buy)
    return build


def _caribbean_draw(progress, options):
    return [cdraw.sheet(progress, checkpoint=options.get("checkpoint"))]


GAMES = {
    "three-card-poker": {
        "help": "Three Card Poker, Ante/Play (ante bonus 1-4-5) and Pair Plus: the calibration game",
        "default": tcp.DEFAULT,
        "paytables": {name: _tcp(name) for name in tcp.PAYTABLES},
    },
    "progressive": {
        "help": "rulebook 000 coin-in progressive: return against the meter, break-even meter",
        "default": progressive.SEED_PAYTABLE,
        "paytables": {name: _progressive(name) for name in progressive.NAMED},
    },
    "caribbean-stud": {
        "help": "Caribbean Stud: common US table, rulebook 002 European table",
        "default": stud.DEFAULT,
        "paytables": {name: _stud(name) for name in stud.PAYTABLES},
    },
    "colorado-holdem": {
        "help": "Colorado Hold'em (rulebook 001), required-bet and permissible-bet versions, with the bonus wager",
        "default": colorado.DEFAULT,
        "paytables": {name: _colorado(name) for name in colorado.VERSIONS},
    },
    "california-draw": {
        "help": "California Draw Poker (rulebook 003): ante and call with ante bonus, Action Bet tables, Up Card wager",
        "default": california.DEFAULT,
        "paytables": {name: _california(name) for name in california.PAYTABLES},
    },
    "caribbean-draw": {
        "help": "Caribbean Draw Poker (rulebook 000) main game: fold or call, both hands draw (progressive: see progressive)",
        "default": cdraw.PAYTABLE,
        "paytables": {cdraw.PAYTABLE: _caribbean_draw},
    },
    "caribbean-clear-dark": {
        "help": "Caribbean poker with clear and dark bets (rulebook 004): sixth-card purchase, exchange, ties to the player",
        "default": clearbet.PAYTABLE,
        "paytables": {clearbet.PAYTABLE: _clearbet(False), clearbet.BUY_THEN_PASS: _clearbet(True)},
    },
}


def build(game, paytable=None, progress=None, options=None):
    spec = GAMES[game]
    name = paytable or spec["default"]
    return spec["paytables"][name](progress, options or {})
