"""Colorado Hold'em (rulebook 001, Section 38): three cards, discard one, three community cards.

No dealer hand: the player's five cards (the two kept plus the three community cards) are
paid from the version's table. Every three-card hand (22,100) x every community set from
the other 49 cards (18,424) = 407,170,400 deals; the kernel counts, for each hand and each
discard, the final hands by category (pairs split by rank).

Rules as modelled: RULES below.
"""
from fractions import Fraction

from ..errors import GameError

from . import cards as C
from . import kernel as kmod
from . import paytables as ptab
from .sheet import ParSheet, Row

N = 18424     # community sets
HANDS = 22100
NFINE = 23
RANKS = "23456789TJQKA"

GAME = "colorado-holdem"
DEFAULT = "colorado-holdem-required"


# fine category index: 0..9 as cards.CATEGORIES (1 unused), 10 + r for a pair of rank r
def _pair(r):
    return 10 + r


def _table(pair_from, push_pairs, pays, pair_pays=1):
    """value per fine category in units of one wager: pays x, 0 for a push, -1 for a loss"""
    v = [-1] * NFINE
    for cat, x in pays.items():
        v[cat] = x
    for r in range(13):
        v[_pair(r)] = pair_pays if r >= pair_from else (0 if r in push_pairs else -1)
    v[1] = None
    return v


def _instant(odds, name):
    # the kernel's instant kinds: 1 three of a kind, 2 three-card straight flush
    return {1: ptab.whole(odds["three_of_a_kind"], name + " instant three of a kind"),
            2: ptab.whole(odds["straight_flush"], name + " instant straight flush")}


def load_version(name):
    """A Colorado Hold'em pay table (tablegames/paytables/NAME.json, the settlement engine's) as
    the sheets use it: the value of every fine category for the main wagers and the bonus."""
    pt = ptab.load(name, GAME)
    lose_below = ptab.rank_index(pt["lose_below"]["rank"])
    pay_from = ptab.rank_index(pt["pay_from"]["rank"])
    main = {k: v for k, v in pt["odds"].items() if k != "pair"}
    bonus = {k: v for k, v in pt["bonus_odds"].items() if k != "pair"}
    bonus_push_from = ptab.rank_index(pt["bonus_push_from"]["rank"])
    if "pair" in pt["bonus_odds"]:
        raise GameError("%s: the bonus sheet does not price a paying pair (bonus_odds pair)" % name)
    return {
        "title": pt["title"], "version": pt["version"],
        "fold_allowed": bool(pt["fold_allowed"]), "bet_required": bool(pt["bet_required"]),
        # pairs below lose_below lose, from pay_from they are paid, between they push
        "main": _table(pay_from, tuple(range(lose_below, pay_from)), ptab.pays(main, ptab.FIVE, name),
                       ptab.whole(pt["odds"]["pair"], name + " pair")),
        # the bonus pays no pair: from bonus_push_from a pair pushes, below it loses
        "bonus": _table(13, tuple(range(bonus_push_from, 13)), ptab.pays(bonus, ptab.FIVE, name + " bonus")),
        "instant": _instant(pt["instant_odds"], name),
        "bonus_instant": _instant(pt["bonus_instant_odds"], name + " bonus"),
    }


VERSIONS = ptab.Tables(GAME, {name: load_version(name) for name in ptab.names(GAME)})
RULES = [
    "required-bet version (k, m): fold (lose the ante), play (bet = ante, discard one; both wagers lose "
    "below a pair of sevens, push on sevens to nines, are paid (m)(2) from a pair of tens), or declare "
    "an instant winner (three of a kind, three-card straight flush: the ante alone is paid 5 to 1 and "
    "the hand ends)",
    "permissible-bet version (l, n): continue with the ante alone or add the bet (= ante), discard one; "
    "wagers lose below a pair of nines, push on nines and tens, are paid (n)(2) from a pair of jacks; "
    "or declare an instant winner as above",
    "bonus wager (g): its version's table ((m)(4) or (n)(4)), settled on the player's five cards or, "
    "when declared, the instant winner; the bonus sheet keeps the two cards best for the bonus (g(4): "
    "the bonus has no bearing on the other wagers)",
    "A-2-3 and Q-K-A count as three-card straight flushes (c(1): the ace plays high or low)",
    "the $50,000 payout cap (m)(3) is not applied: the sheet is per unit wager, and the cap binds only "
    "for antes over $100",
]
INSTANT = {1: "three of a kind", 2: "three-card straight flush"}


def fine_name(f):
    if f >= 10:
        return "pair of %ss" % C.rank_name(f - 10)
    return C.CATEGORIES[f]


_cache = {}


def counts(progress=None):
    """int32 [22100, 4 + 3*23]: instant kind, then per discard the final-hand counts."""
    if "a" not in _cache:
        k = kmod.kernel()
        np = kmod.numpy()
        raw = kmod.run("Colorado Hold'em", k.colorado_counts, progress=progress)
        _cache["a"] = np.frombuffer(raw, dtype=np.int32).reshape(HANDS, 4 + 3 * NFINE)
    return _cache["a"]


def _hand_cards():
    out = []
    for c2 in range(2, 52):
        for c1 in range(1, c2):
            for c0 in range(c1):
                out.append((c0, c1, c2))
    out.sort(key=lambda c: _colex(c))
    return out


def _colex(c):
    from math import comb

    return sum(comb(x, i + 1) for i, x in enumerate(c))


def _evaluate(row, values):
    """exact numerators (over N) of each discard for a per-category value list"""
    return [sum(int(row[4 + d * NFINE + f]) * values[f] for f in range(NFINE) if values[f] is not None)
            for d in range(3)]


def decide_main(row, version):
    """(choice, ev numerator over N per ante): choice is ('fold',), ('instant',) or ('play', d, bet)."""
    v = VERSIONS[version]
    main = v["main"]
    base = _evaluate(row, main)  # one wager
    options = []
    if v["fold_allowed"]:
        options.append((-N, ("fold",)))
    for d in range(3):
        if not v["bet_required"]:
            options.append((base[d], ("play", d, False)))
        options.append((2 * base[d], ("play", d, True)))
    if row[0]:
        options.append((v["instant"][row[0]] * N, ("instant",)))
    # largest EV; among equals the first listed (fold before play, ante alone before the bet)
    best = max(options, key=lambda o: o[0])
    for ev, choice in options:
        if ev == best[0]:
            return choice, ev


def simple_main(row, cards, version):
    """Declare instant winners; keep a pair if any, else the two highest cards; in the
    required version always play; in the permissible version bet with a pair or when both
    kept cards are tens or higher."""
    if row[0]:
        return ("instant",)
    r = [c >> 2 for c in cards]
    if r[0] == r[1]:
        d = 2
    elif r[1] == r[2]:
        d = 0
    elif r[0] == r[2]:
        d = 1
    else:
        d = 0  # sorted ascending: discard the lowest
    kept = [r[i] for i in range(3) if i != d]
    bet = VERSIONS[version]["bet_required"] or kept[0] == kept[1] or min(kept) >= 8
    return ("play", d, bet)


def _value_of(choice, row, version, values=None):
    v = VERSIONS[version]
    values = v["main"] if values is None else values
    if choice[0] == "fold":
        return -N
    if choice[0] == "instant":
        return v["instant"][row[0]] * N
    _, d, bet = choice
    return (2 if bet else 1) * _evaluate(row, values)[d]


def sheet(version=DEFAULT, progress=None):
    v = VERSIONS[version]
    a = counts(progress).tolist()
    hands = _hand_cards()
    rows = {}
    wagered = {}
    exp_simple = 0
    decisions = {"fold": 0, "instant": 0, "ante only": 0, "ante and bet": 0}
    for h, row in enumerate(a):
        choice, ev = decide_main(row, version)
        exp_simple += _value_of(simple_main(row, hands[h], version), row, version)
        if choice[0] == "fold":
            rows["fold"] = rows.get("fold", (0, Fraction(-1), Fraction(1)))
            rows["fold"] = (rows["fold"][0] + N, Fraction(-1), Fraction(1))
            decisions["fold"] += 1
            continue
        if choice[0] == "instant":
            key = "instant winner, " + INSTANT[row[0]]
            c0 = rows.get(key, (0,))[0]
            rows[key] = (c0 + N, Fraction(v["instant"][row[0]]), Fraction(1))
            decisions["instant"] += 1
            continue
        _, d, bet = choice
        decisions["ante and bet" if bet else "ante only"] += 1
        mult = 2 if bet else 1
        for f in range(NFINE):
            n = row[4 + d * NFINE + f]
            if not n:
                continue
            key = "%s, %s" % ("ante and bet" if bet else "ante alone", fine_name(f))
            c0 = rows.get(key, (0,))[0]
            rows[key] = (c0 + n, Fraction(mult * v["main"][f]), Fraction(mult))
    order = ["fold"] + ["instant winner, " + INSTANT[k] for k in (2, 1)]
    for prefix in ("ante and bet", "ante alone"):
        for f in [9, 8, 7, 6, 5, 4, 3, 2] + [_pair(r) for r in range(12, -1, -1)] + [0]:
            order.append("%s, %s" % (prefix, fine_name(f)))
    out_rows = [Row(k, rows[k][0], rows[k][1], rows[k][2]) for k in order if k in rows]
    strategy = ["hands (of 22,100): " + ", ".join("%s %d" % (k, n) for k, n in decisions.items() if n)]
    strategy.append("the decision for every hand (which card to discard, bet or not) is in the JSON output, "
                    "key extra.decisions, one line per suit class")
    s = ParSheet(
        game=GAME, paytable=version, title=v["title"], total=HANDS * N, rows=out_rows,
        strategy=strategy,
        simple={"description": "declare instant winners, keep a pair else the two highest cards, "
                               + ("always play" if v["bet_required"] else "bet with a pair or two tens-or-better"),
                "expected": Fraction(exp_simple, HANDS * N)},
        notes=list(RULES),
        extra={"decisions": _decision_list(a, hands, version)},
    )
    return s.check()


def _decision_list(a, hands, version):
    out = []
    seen = set()
    for h, row in enumerate(a):
        cards = hands[h]
        key = _suit_class(cards)
        if key in seen:
            continue
        seen.add(key)
        choice, ev = decide_main(row, version)
        if choice[0] in ("fold", "instant"):
            text = choice[0]
        else:
            kept = " ".join(C.name(cards[i]) for i in range(3) if i != choice[1])
            text = "keep %s, %s" % (kept, "bet" if choice[2] else "ante alone")
        out.append("%s: %s (EV %+.5f)" % (" ".join(C.name(c) for c in cards), text, ev / N))
    return out


def _suit_class(cards):
    best = None
    import itertools

    for perm in itertools.permutations(range(4)):
        k = tuple(sorted((c & ~3) | perm[c & 3] for c in cards))
        if best is None or k < best:
            best = k
    return best


def bonus_sheet(version=DEFAULT, progress=None):
    """The bonus wager with the discard (and instant-winner declaration) best for the bonus."""
    v = VERSIONS[version]
    a = counts(progress).tolist()
    bonus = v["bonus"]
    rows = {}
    for row in a:
        evs = _evaluate(row, bonus)
        d = max(range(3), key=lambda i: evs[i])
        if row[0] and v["bonus_instant"][row[0]] * N >= evs[d]:
            key = "instant winner, " + INSTANT[row[0]]
            rows[key] = (rows.get(key, (0,))[0] + N, Fraction(v["bonus_instant"][row[0]]))
            continue
        for f in range(NFINE):
            n = row[4 + d * NFINE + f]
            if n:
                key = fine_name(f)
                rows[key] = (rows.get(key, (0,))[0] + n, Fraction(bonus[f]))
    order = ["instant winner, " + INSTANT[k] for k in (2, 1)] + [fine_name(f) for f in
             [9, 8, 7, 6, 5, 4, 3, 2] + [_pair(r) for r in range(12, -1, -1)] + [0]]
    out_rows = [Row(k, rows[k][0], rows[k][1]) for k in order if k in rows]
    s = ParSheet(game=GAME, paytable=version + " bonus",
                 title="Colorado Hold'em bonus wager, %s version table" % v["version"], total=HANDS * N,
                 rows=out_rows, unit="bonus wager",
                 strategy=["keep the two cards best for the bonus; declare an instant winner when its 5 to 1 "
                           "beats playing on"],
                 notes=["(m)(4)/(n)(4) pay tables; a pair of jacks or better pushes"
                        + ("; (m)(4) has no line for a five-card three of a kind: paid 3 to 1 as (n)(4) "
                           "does (to be confirmed with the Division of Gaming)" if v["version"] == "required" else "")])
    return s.check()
