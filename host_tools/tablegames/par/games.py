"""Which games and pay tables have a PAR sheet, and how each is built.

GAMES: name -> {"help", "default", "paytables": {name: builder}}; a builder takes
(progress, options) and returns a list of ParSheet.
"""

from . import california, cdraw, clearbet, colorado, progressive, stud, tcp


def _tcp(pair_plus):
    def build(progress, options):
        counts = tcp._counts(progress)
        return [tcp.ante_play("1-4-5", counts=counts), tcp.pair_plus(pair_plus, counts=counts)]
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


def _california(action):
    def build(progress, options):
        return [california.main_sheet(progress), california.action_sheet(action, progress),
                california.up_card_sheet()]
    return build


def _clearbet(pass_after_buy):
    def build(progress, options):
        return clearbet.sheets(progress, pass_after_buy=pass_after_buy)
    return build


def _caribbean_draw(progress, options):
    return [cdraw.sheet(progress)]


GAMES = {
    "three-card-poker": {
        "help": "Three Card Poker, Ante/Play (ante bonus 1-4-5) and Pair Plus: the calibration game",
        "default": "1-4-6-30-40",
        "paytables": {"1-4-6-30-40": _tcp("1-4-6-30-40"), "1-3-6-30-40": _tcp("1-3-6-30-40")},
    },
    "progressive": {
        "help": "seed 000 coin-in progressive: return against the meter, break-even meter",
        "default": "seed000-10pct",
        "paytables": {"seed000-10pct": _progressive("seed000-10pct"),
                      "seed000-fixed5000": _progressive("seed000-fixed5000")},
    },
    "caribbean-stud": {
        "help": "Caribbean Stud: common US table, seed 002 European table",
        "default": "us-common",
        "paytables": {"us-common": _stud("us-common"), "seed002-european": _stud("seed002-european")},
    },
    "colorado-holdem": {
        "help": "Colorado Hold'em (seed 001), required-bet and permissible-bet versions, with the bonus wager",
        "default": "required",
        "paytables": {"required": _colorado("required"), "permissible": _colorado("permissible")},
    },
    "california-draw": {
        "help": "California Draw Poker (seed 003): ante and call with ante bonus, Action Bet tables, Up Card wager",
        "default": "action-75",
        "paytables": {"action-75": _california("action-75"), "action-60": _california("action-60")},
    },
    "caribbean-draw": {
        "help": "Caribbean Draw Poker (seed 000) main game: fold or call, both hands draw (progressive: see progressive)",
        "default": "seed000",
        "paytables": {"seed000": _caribbean_draw},
    },
    "clear-bet": {
        "help": "Caribbean poker with clear and dark bets (seed 004): sixth-card purchase, exchange, ties to the player",
        "default": "seed004",
        "paytables": {"seed004": _clearbet(False), "seed004-buy-then-pass": _clearbet(True)},
    },
}


def build(game, paytable=None, progress=None, options=None):
    spec = GAMES[game]
    name = paytable or spec["default"]
    return spec["paytables"][name](progress, options or {})
