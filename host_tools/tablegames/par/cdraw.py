"""Caribbean Draw Poker, rulebook 000: the main game (ante, call, both hands draw up to two).

Complete enumeration with card removal: every player hand (2,598,960), every dealer hand of
the 47 cards left (1,533,939), and the next four cards of the deck in order (42 x 41 x 40 x 39,
the player's draw first, then the dealer's): 10,709,407,160,592,940,800 deals. The player
decides with his five cards only (rulebook 000 deals the dealer's cards face down, rule 5): fold,
or call and keep any three, four or five cards (16 ways). Each is valued exactly and the best
is played; the dealer draws by rule 12 as the settlement engine reads it
(tablegames.games.caribbean_draw.dealer_draw, checked card for card in the tests).

How the kernel gets there in minutes is described at the top of _cdraw.c: a rank-pattern count
of a dealer who ignores suits, corrected by a sweep over the 1.1e8 dealer draws where flushes
make a difference.
"""
from fractions import Fraction
from math import comb

from . import cards as C
from . import kernel as kmod
from . import paytables as ptab
from .sheet import ParSheet, Row

NEXT_FOUR = 42 * 41 * 40 * 39
TOTAL = comb(52, 5) * comb(47, 5) * NEXT_FOUR

GAME = "caribbean-draw"
PAYTABLE = "caribbean-draw-co"   # tablegames/paytables/caribbean-draw-co.json
# rulebook 000 rule 14.2, the bet's pay table, by category (high card .. royal flush), as the
# settlement engine pays it
PAYS = ptab.pays(ptab.load(PAYTABLE, GAME)["bet_odds"], ptab.FIVE, PAYTABLE)

RULES = [
    "rule 7: fold (lose the ante) or call with a bet of exactly twice the ante",
    "rule 8: a caller keeps his five cards or discards and replaces one or two",
    "rule 12: the dealer stands on a straight or better; draws one to two pair, four to a flush, "
    "four to a straight (open-ended first; four to a flush over four to a straight); draws two to "
    "three of a kind, a pair (keeping the highest other card) and no pair (keeping the highest three); "
    "between two inside straights the dealer keeps the higher, as the settlement engine does",
    "rule 13: the dealer qualifies with a pair of eights or better; if not, the ante pays 1 to 1 "
    "and the bet is returned",
    "rule 14: against a qualifying dealer the higher hand wins: ante 1 to 1 and the bet by the "
    "pay table (14.2); the same rank pushes both (14, 14.5)",
    "one player at the table: the player's draw comes off the deck before the dealer's (rules 11, 12); "
    "other players' hands and draws are not modelled",
]


def qualify_rank():
    """Dense rank of the weakest qualifying dealer hand: a pair of eights, 4-3-2 (rule 13)."""
    return kmod.kernel().rank5(*C.cards("8s 8h 4s 3d 2c"))[0]


def enumerate_draw(progress=None, hmax=-1, fmax=-1, debug=None, focus=None, direct_eq=12000,
                   parts=0, save=None, resume=None):
    """The kernel's enumeration. hmax / fmax restrict it to the dealer hands / final-hand
    classes with the lowest indices (the tests use that to check the sweep cheaply); debug
    lists (final five, number of discards, (d1, d2)) whose dealer corrections to report;
    focus lists player hands whose every option to report; below direct_eq paths at a rank the
    equal counts are summed from those paths instead of read from the subset counts.
    parts > 0 cuts the run into that many parts (about; the kernel says how many) whose credits
    add: after each, save(done, parts, accumulators) is called (tablegames.par.checkpoint keeps
    them); resume = (done, file, offset) starts from the accumulators of `done` parts stored in
    the file at offset."""
    k = kmod.kernel()
    table = tuple(PAYS[c] for c in range(10))
    done, path, offset = resume or (0, None, 0)
    return kmod.run("Caribbean Draw Poker", k.cdraw, table, qualify_rank(), hmax, fmax, list(debug or []),
                    [tuple(h) for h in (focus or [])], direct_eq, parts, save, done, path, offset,
                    progress=progress, phases=PHASES)


# Where the kernel's counter stands as each part of the run begins (k_cdraw in _cdraw.c counts
# in thousandths, by the share of the time each part takes: the non-qualifying reading by its
# parts, the sweep by rank).
PHASES = [(0.0, "the dealer's draws"), (0.04, "the draw paths"), (0.06, "the paths below the qualifier"),
          (0.26, "the non-qualifying reading"), (0.70, "the sweep by rank")]


def option_value(nq, lose, win, den):
    """Exact expected result per ante of one way to call, from its weighed outcome counts."""
    return Fraction(nq - 3 * lose + sum(w * (1 + 2 * PAYS[c]) for c, w in enumerate(win)), den)


def rows_from(strategy):
    s = strategy
    rows = [Row("fold", s["fold"], Fraction(-1), Fraction(1)),
            Row("call, dealer does not qualify", s["noq"], Fraction(1), Fraction(3))]
    for cat in range(9, -1, -1):
        if s["win"][cat]:
            rows.append(Row("call, player wins with %s" % C.CATEGORIES[cat], s["win"][cat],
                            Fraction(1 + 2 * PAYS[cat]), Fraction(3)))
    rows.append(Row("call, tie (push)", s["tie"], Fraction(0), Fraction(3)))
    rows.append(Row("call, dealer wins", s["lose"], Fraction(-3), Fraction(3)))
    return rows


def expected(rows):
    return sum(Fraction(r.combinations) * r.pay for r in rows) / TOTAL


def strategy_lines(result):
    opt, simple = result["strategies"]
    hands = comb(52, 5)
    lines = ["decision per initial five cards (the dealer's are all face down): the option with the "
             "largest exact expected value among fold and the 16 ways to call and draw"]
    lines.append("hands folded: %s of %s%s" % ("{:,}".format(opt["hands_fold"]), "{:,}".format(hands),
                                               " (calling beats folding with every hand)" if not opt["hands_fold"] else ""))
    for cat in range(10):
        d = opt["hands_draw"][cat]
        n = sum(d)
        if n:
            lines.append("%-16s stand %5.1f %%, draw one %5.1f %%, draw two %5.1f %%" % (
                C.CATEGORIES[cat], 100.0 * d[0] / n, 100.0 * d[1] / n, 100.0 * d[2] / n))
    lines.append("hands where the dealer's own drawing rule (the simple strategy) is not an optimal play: %s"
                 % "{:,}".format(result["differs"]))
    lines.append("hands with two best options worth exactly the same: counted as calls, %s with folding"
                 % "{:,}".format(result["indifferent"]))
    lines.append("the optimal play of every hand: tablectl par caribbean-draw --strategy FILE writes it; "
                 "tablectl par caribbean-draw --hand CARDS prices every option of one hand")
    return lines


def strategy_table(result):
    """{colex index of the class representative: (hands in class, optimal discard mask or 255 = fold,
    the dealer rule's discard mask)}; masks are over the representative's cards in ascending order."""
    raw = result["strategy"]
    out = {}
    for i in range(0, len(raw), 8):
        rep = int.from_bytes(raw[i:i + 4], "little")
        out[rep] = (raw[i + 4], raw[i + 5], raw[i + 6])
    return out


def dealer_qualifies():
    """The share of deals in which the dealer qualifies (rule 13: a pair of eights or better,
    after drawing by rule 12), exact: the kernel draws out one hand of each suit class against
    every draw (k_cdraw_dealer_qualifies in _cdraw.c, a fraction of a second where the count by
    rank sets below takes seconds of Python; tests/host/test_par_cdraw.py checks they agree)."""
    return Fraction(kmod.kernel().cdraw_dealer_qualifies(qualify_rank()), comb(52, 5) * 1081)


def dealer_qualifies_by_rank_sets():
    """The same share counted another way, independent of the kernel's dealer rule: the settlement
    engine's dealer_draw and the evaluator. The dealer's five cards are any five of the deck and his
    draw any of the 47 cards he does not hold (the player's cards and draw are as unknown to
    the dealer's hand as the rest of the deck), so no player hand enters:

    - a pair of eights or better stays one (rule 12 keeps pairs, two pairs, trips; stands on
      the rest): every such hand qualifies;
    - a pair of deuces to sevens keeps the pair and the highest other card and draws two of the
      47, which hold 2 of the pair's rank, 3 of the kicker's, 3 each of the two discarded ranks
      and 4 of each of the 9 others. It qualifies only by improving (a straight or flush cannot
      be made around a pair): of C(47,2) = 1,081 draws, C(42,2) - (2 x 3 + 9 x 6) = 801 miss, so
      280 qualify, whatever the suits (tests/host/test_par_cdraw.py checks it by brute force);
    - a hand below a pair draws one or two cards by rule 12: each of the 63,850 classes of such
      hands (1,277 rank sets x 50 suit patterns) is drawn out with the settlement engine's
      dealer_draw and the evaluator, every draw of the 47 cards.
    """
    from itertools import combinations as combos

    from ..games.caribbean_draw import dealer_draw
    from ..poker import Five, hands, histogram, rank_batch
    from ..poker.cards import RANKS

    np = kmod.numpy()

    q = hands.lowest_value(5, Five.PAIR, RANKS.index("8"))
    hist = histogram(5)
    qualifying = int(hist[q:].sum())
    low_pairs = int(hist[hands.category_start(Five.PAIR):q].sum())
    draws = {1: np.array(list(combos(range(47), 1)), dtype=np.intp),
             2: np.array(list(combos(range(47), 2)), dtype=np.intp)}
    per_1081 = qualifying * 1081 + low_pairs * 280       # in 1/1081ths of a deal
    weighted = 0
    straights = [set(range(lo, lo + 5)) for lo in range(9)] + [{12, 0, 1, 2, 3}]
    for ranks in combos(range(13), 5):
        if set(ranks) in straights:
            continue  # a straight stands (12.1) and qualifies: counted in `qualifying`
        for suits in _suit_patterns():
            weight = 1
            for i in range(len(set(suits))):
                weight *= 4 - i                            # suit relabellings of the pattern
            hand = tuple(r * 4 + su for r, su in zip(ranks, suits))
            kept, discards, _ = dealer_draw(hand)
            rest = np.array([c for c in range(52) if c not in hand], dtype=np.uint8)
            idx = draws[len(discards)]
            finals = np.concatenate([np.broadcast_to(np.array(kept, dtype=np.uint8), (len(idx), len(kept))),
                                     rest[idx]], axis=1)
            hits = int((rank_batch(np.ascontiguousarray(finals), 5) >= q).sum())
            per_1081 += weight * hits * (1081 // len(idx))
            weighted += weight
    if weighted != int(hist[:hands.category_start(Five.PAIR)].sum()) - int(hist[0]):
        raise AssertionError("dealer qualification: %d no-pair hands drawn out" % weighted)
    return Fraction(per_1081, comb(52, 5) * 1081)


def dealer_figures(optimal):
    calls = TOTAL - optimal["fold"]
    return [("dealer qualifies", dealer_qualifies(),
             "of all deals: a pair of eights or better after his draw, rules 12 and 13"),
            ("... against a call", 1 - Fraction(optimal["noq"], calls),
             "of the deals the optimal strategy calls")]


def _suit_patterns():
    """Suits of five cards up to relabelling, flushes left out: restricted growth strings."""
    out = []

    def grow(prefix, top):
        if len(prefix) == 5:
            if top > 0:
                out.append(tuple(prefix))
            return
        for v in range(min(top + 2, 4)):
            grow(prefix + [v], max(top, v))

    grow([0], 0)
    return out


# The run cut into parts for checkpoints (k_cdraw's plan: a third of them ranges of classes for
# the non-qualifying reading, the rest ranges of ranks of the sweep, fewer if ranks coincide).
PARTS = 24
CLASSES = 134459             # suit classes of five-card hands: the kernel's accumulators are per class
ACCUMULATOR_BYTES = CLASSES * 16 * 13 * 8   # x 16 ways to play x 13 counts, int64
# Test hook: TABLECTL_PAR_CDRAW_SAMPLE=HMAX:FMAX runs the enumeration on the dealer hands and
# final-hand classes with the lowest indices only (seconds, not minutes) and prints its raw
# counts instead of a sheet, so that the checkpoints can be tested end to end through the CLI.
SAMPLE_ENV = "TABLECTL_PAR_CDRAW_SAMPLE"


def sample():
    """(hmax, fmax) of the test hook, or None for the whole enumeration."""
    import os

    from tablegames.errors import GameError

    value = os.environ.get(SAMPLE_ENV)
    if not value:
        return None
    try:
        hmax, fmax = (int(x) for x in value.split(":"))
    except ValueError:
        raise GameError("%s=%r: give HMAX:FMAX, e.g. 200000:1000" % (SAMPLE_ENV, value)) from None
    return hmax, fmax


def checkpoint(path=None, restart=False):
    """The checkpoint of this game's enumeration (tablegames.par.checkpoint): its file (default:
    the user's cache folder) and the identity a stale file is refused by."""
    import os

    from . import checkpoint as ck

    k = kmod.kernel()
    identity = {"game": GAME, "paytable": PAYTABLE, "pays": [PAYS[c] for c in range(10)], "qualifier": qualify_rank(),
                "sample": list(sample() or ()) or None, "parts": PARTS, "direct_eq": 12000,
                "code": ck.code_hash(k.__file__, os.path.abspath(__file__))}
    return ck.Checkpoint(path or ck.default_path(GAME, PAYTABLE), identity, restart=restart)


class SampleSheet:
    """What the CLI prints for the sample hook: the kernel's raw counts, not a PAR sheet."""

    def __init__(self, result, limits):
        self.result, self.limits = result, limits

    def to_dict(self):
        import hashlib

        r = self.result
        return {"sample": "dealer hands below %d, final-hand classes below %d: not a PAR sheet" % self.limits,
                "strategies": r["strategies"], "differs": r["differs"], "indifferent": r["indifferent"],
                "paths": r["paths"], "strategy_sha256": hashlib.sha256(r["strategy"]).hexdigest()}

    def render(self):
        import json

        return json.dumps(self.to_dict(), sort_keys=True, indent=1)


def sheet(progress=None, result=None, checkpoint=None):
    """The PAR sheet; with a checkpoint (checkpoint()), the run resumes from its file when there
    is one and keeps its progress there as it goes."""
    limits = sample()
    if result is None:
        hmax, fmax = limits or (-1, -1)
        if checkpoint is not None:
            from tablegames.errors import GameError

            resume = checkpoint.resume(ACCUMULATOR_BYTES)
            try:
                result = enumerate_draw(progress, hmax=hmax, fmax=fmax, parts=PARTS, save=checkpoint.save,
                                        resume=resume)
            except OSError as exc:  # writing a part, or reading the one resumed from
                raise GameError("cannot keep or read the checkpoint %s: %s (--checkpoint FILE puts it elsewhere, "
                                "--restart starts over)" % (checkpoint.path, exc.strerror or exc)) from None
        else:
            result = enumerate_draw(progress, hmax=hmax, fmax=fmax)
    if limits:
        return SampleSheet(result, limits)
    if result["bad_totals"] or result["mismatch"]:
        raise AssertionError("Caribbean Draw enumeration inconsistent: %d option totals, %d symmetry sums"
                             % (result["bad_totals"], result["mismatch"]))
    rows = rows_from(result["strategies"][0])
    simple_rows = rows_from(result["strategies"][1])
    s = ParSheet(
        game=GAME, paytable=PAYTABLE, title="Caribbean Draw Poker, Colorado rules (rulebook 000)",
        total=TOTAL, rows=rows, strategy=strategy_lines(result),
        simple={"description": "always call and draw as the dealer must (rule 12)", "expected": expected(simple_rows)},
        notes=["deals: 2,598,960 player hands x 1,533,939 dealer hands x 42 x 41 x 40 x 39 next cards"] + RULES,
        extra={"dealer_paths_corrected": result["paths"], "hand_classes": result["classes"]},
        figures=dealer_figures(result["strategies"][0]),
    )
    s.result = result  # for --strategy: the play of every hand class
    return s.check()


# ---------------------------------------------------------------- the optimal play, stored

RECORD = 8  # <i rep colex, B hands in class, B optimal discard mask (255 fold), B dealer-rule mask, x


def write_strategy(path, result, sheet_):
    """Write the optimal play of every hand class with the sheet's exact figures (gzip: a JSON
    header line, then one 8-byte record per class)."""
    import gzip
    import json

    def frac(x):
        return "%d/%d" % (x.numerator, x.denominator)

    header = {"game": GAME, "paytable": PAYTABLE, "total": sheet_.total,
              "expected": frac(sheet_.expected), "simple_expected": frac(sheet_.simple["expected"]),
              "classes": result["classes"],
              "record": "little-endian int32 colex index of the class's representative hand (cards "
                        "ascending, card = rank * 4 + suit), uint8 hands in the class, uint8 optimal "
                        "discards (bit i = the representative's i-th card; 255 = fold), uint8 the "
                        "dealer rule's discards, one pad byte"}
    with gzip.open(path, "wb") as fh:
        fh.write(json.dumps(header).encode() + b"\n")
        fh.write(result["strategy"])


def read_strategy(path):
    """(header, {representative colex: (hands, optimal mask, dealer-rule mask)})."""
    import gzip
    import json

    with gzip.open(path, "rb") as fh:
        data = fh.read()
    cut = data.index(b"\n")
    header = json.loads(data[:cut])
    return header, strategy_table({"strategy": data[cut + 1:]})


_PERMS = None


def canonical(hand):
    """(colex of the class representative, {card of hand: position in the representative}):
    the representative is the suit relabelling with the smallest colex index."""
    from itertools import permutations

    global _PERMS
    if _PERMS is None:
        _PERMS = list(permutations(range(4)))
    best = None
    for p in _PERMS:
        mapped = [(c & ~3) | p[c & 3] for c in hand]
        srt = sorted(mapped)
        ix = sum(comb(c, i + 1) for i, c in enumerate(srt))
        if best is None or ix < best[0]:
            best = (ix, {c: srt.index(m) for c, m in zip(hand, mapped)})
    return best


def play(table, hand):
    """The stored play of a hand: ('fold', []) or ('call', [cards to discard]), and the dealer
    rule's discards."""
    rep, pos = canonical(hand)
    _, opt, simple = table[rep]
    by_pos = {v: c for c, v in pos.items()}
    simple_cards = [by_pos[i] for i in range(5) if simple >> i & 1]
    if opt == 255:
        return ("fold", []), simple_cards
    return ("call", [by_pos[i] for i in range(5) if opt >> i & 1]), simple_cards
