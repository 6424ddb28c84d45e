"""Three Card Poker, the calibration game: Ante/Play with the ante bonus, and Pair Plus.

Every player hand (22,100) against every dealer hand from the other 49 cards (18,424):
407,170,400 deals, counted by the kernel with exact integers.
"""
from fractions import Fraction

from ..errors import GameError
from . import kernel as kmod
from . import paytables as ptab
from .sheet import ParSheet, Row

CATS3 = ["high card", "pair", "flush", "straight", "three of a kind", "straight flush"]
T_HIGH, T_PAIR, T_FLUSH, T_STRAIGHT, T_TRIPS, T_SF = range(6)
RANKS = "23456789TJQKA"
N_DEALER = 18424  # C(49, 3)
N_PLAYER = 22100  # C(52, 3)

GAME = "three-card-poker"
DEFAULT = "three-card-poker-1-4-6-30-40"
# pay-table keys -> three-card categories
THREE = {"high_card": T_HIGH, "pair": T_PAIR, "flush": T_FLUSH, "straight": T_STRAIGHT,
         "three_of_a_kind": T_TRIPS, "straight_flush": T_SF}


def load_table(name):
    """A Three Card Poker pay table (tablegames/paytables/NAME.json): the ante bonus and the Pair
    Plus pays (x to 1) by three-card category."""
    pt = ptab.load(name, GAME)
    for key in ("ante_odds", "play_odds"):
        if ptab.whole(pt[key], "%s %s" % (name, key)) != 1 or pt.get("play_multiple", 1) != 1:
            raise GameError("%s: the PAR sheet prices a play wager equal to the ante, both paid 1 to 1" % name)
    return {"title": pt["title"], "ante_bonus": ptab.pays(pt["ante_bonus_odds"], THREE, name + " ante bonus"),
            "pair_plus": ptab.pays(pt["pair_plus_odds"], THREE, name + " pair plus")}


PAYTABLES = ptab.Tables(GAME, {name: load_table(name) for name in ptab.names(GAME)})
QUALIFY_KEY = (10 << 8) | (1 << 4) | 0  # dealer qualifies with queen-high (Q-3-2) or better


def key_name(key):
    cat = key >> 12
    r = [(key >> 8) & 15, (key >> 4) & 15, key & 15]
    if cat == T_HIGH:
        return "%s-%s-%s" % (RANKS[r[0]], RANKS[r[1]], RANKS[r[2]])
    if cat == T_FLUSH:
        return "flush %s-%s-%s" % (RANKS[r[0]], RANKS[r[1]], RANKS[r[2]])
    if cat == T_PAIR:
        return "pair of %ss, %s kicker" % (RANKS[r[0]], RANKS[r[1]])
    return "%s, %s high" % (CATS3[cat], RANKS[r[0]] if not (cat in (T_STRAIGHT, T_SF) and r[0] == 1) else "3")


def _counts(progress=None):
    k = kmod.kernel()
    raw = kmod.run("Three Card Poker", k.tcp_counts, QUALIFY_KEY, progress=progress)
    np = kmod.numpy()

    return np.frombuffer(raw, dtype=np.int32).reshape(N_PLAYER, 6)


def ante_play(paytable=DEFAULT, progress=None, counts=None):
    bonus = PAYTABLES[paytable]["ante_bonus"]
    a = _counts(progress) if counts is None else counts
    n = N_DEALER
    # per category and result: combinations when played (optimal and simple strategies)
    rows_opt = {}
    fold_opt = 0
    exp_simple = Fraction(0)
    weakest_play = None
    strongest_fold = None
    for cat, key, nq, win, tie, lose in a.tolist():
        b = bonus.get(cat, 0)
        ev_play = nq + 2 * win - 2 * lose + b * n
        play = ev_play > -n
        if play:
            for res, c in (("dealer does not qualify", nq), ("wins", win), ("ties", tie), ("loses", lose)):
                rows_opt[(cat, res)] = rows_opt.get((cat, res), 0) + c
            weakest_play = key if weakest_play is None else min(weakest_play, key)
        else:
            fold_opt += n
            strongest_fold = key if strongest_fold is None else max(strongest_fold, key)
        # simple strategy: play queen-high or better, the dealer's own qualifier
        exp_simple += ev_play if key >= QUALIFY_KEY else -n
    pays = {"dealer does not qualify": 1, "wins": 2, "ties": 0, "loses": -2}
    rows = [Row("fold", fold_opt, Fraction(-1), Fraction(1))]
    for cat in range(6):
        for res in ("dealer does not qualify", "wins", "ties", "loses"):
            c = rows_opt.get((cat, res), 0)
            if c:
                p = pays[res] + bonus.get(cat, 0)
                label = "play, %s, %s" % (CATS3[cat], "dealer does not qualify" if res.startswith("dealer") else "player " + res)
                rows.append(Row(label, c, Fraction(p), Fraction(2)))
    strategy = []
    if strongest_fold is not None and weakest_play is not None and strongest_fold < weakest_play:
        strategy.append("play %s or better, fold the rest (hands ordered by rank; no exceptions)" % key_name(weakest_play))
        strategy.append("strongest hand folded: %s" % key_name(strongest_fold))
    sheet = ParSheet(
        game=GAME, paytable=paytable + " ante and play",
        title="Three Card Poker, Ante and Play (ante bonus %s)" % _pays_text(bonus),
        total=N_PLAYER * N_DEALER, rows=rows, strategy=strategy,
        simple={"description": "play queen-high or better", "expected": Fraction(exp_simple, N_PLAYER * n)},
        notes=["play wager equals the ante; dealer qualifies with queen-high; ante bonus paid on a played hand "
               "whatever the dealer holds; A-2-3 is the lowest straight"],
    )
    return sheet.check()


def pair_plus(paytable=DEFAULT, progress=None, counts=None):
    pays = PAYTABLES[paytable]["pair_plus"]
    a = _counts(progress) if counts is None else counts
    per_cat = [0] * 6
    for cat in a[:, 0].tolist():
        per_cat[cat] += 1
    rows = [Row(CATS3[c], per_cat[c], Fraction(pays.get(c, -1))) for c in range(5, -1, -1)]
    sheet = ParSheet(game=GAME, paytable=paytable + " pair plus",
                     title="Three Card Poker, Pair Plus %s" % _pays_text(pays), total=N_PLAYER, rows=rows, unit="wager",
                     notes=["no decisions: the wager is settled on the player's three cards"])
    return sheet.check()


def _pays_text(pays):
    """1-4-5 style: the pays, weakest category first."""
    return "-".join(str(pays[c]) for c in sorted(pays))
