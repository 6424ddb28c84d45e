"""One situation priced exactly: `tablectl par GAME --hand CARDS [--up CARD]` lists every
decision open to the player with its exact expected value, best first. The same numbers the
full enumeration uses for that hand (the tests check them against it), computed directly.
"""
from fractions import Fraction

from tablegames.errors import GameError
from . import california, cdraw, clearbet, colorado, stud, tcp
from . import kernel as kmod


def _parse(text, count, what):
    from ..poker import CardError, parse_cards

    try:
        return list(parse_cards(text, count=count, what=what))
    except CardError as exc:
        raise GameError("%s" % exc)


def _name(cs):
    from ..poker import cards_str

    return cards_str(list(cs))


def _options_stud(paytable, hand, up):
    k = kmod.kernel()
    pt = stud.PAYTABLES[paytable]
    pays = tuple(pt["pays"][c] for c in range(10))
    ev, n = k.stud_brute(pays, pt["tie"] == "player", stud.qualify_rank(), tuple(hand), up)
    return [("fold", Fraction(-1)), ("raise", Fraction(ev, n))]


def _options_clear(pass_after_buy, hand, up):
    k = kmod.kernel()
    pays = tuple(clearbet.PAYS[c] for c in range(10))
    nobuy_raise, _ = k.stud_brute(pays, True, stud.qualify_rank(), tuple(hand), up)
    nobuy, buy = k.clearbet_brute(pays, stud.qualify_rank(), pass_after_buy, tuple(hand), up)
    label = "buy a sixth card, keep the best five, then bet or pass" if pass_after_buy else \
        "bet and buy a sixth card, keep the best five"
    return [("pass", Fraction(-1)), ("bet", Fraction(nobuy_raise, 163185)), (label, Fraction(buy, 6853770))]


def _options_california(paytable, hand, up):
    k = kmod.kernel()
    bonus = tuple(california.PAYTABLES[paytable]["ante_bonus"].get(c, 0) for c in range(8))
    p = sorted(hand)
    ev = k.california_brute(bonus, tuple(p), up)
    total = 7669695
    out = [("fold", Fraction(-1)), ("call and stand", Fraction(ev[0], total))]
    for i, c in enumerate(p):
        out.append(("call, discard %s and draw" % _name([c]), Fraction(ev[1 + i], total)))
    return out


def _options_colorado(version, hand):
    p = sorted(hand)
    row = colorado.counts(progress=False)[colorado._colex(p)].tolist()
    v = colorado.VERSIONS[version]
    base = colorado._evaluate(row, v["main"])
    n = colorado.N
    out = [("fold", Fraction(-1))] if v["fold_allowed"] else []
    for d in range(3):
        kept = _name([c for i, c in enumerate(p) if i != d])
        if not v["bet_required"]:
            out.append(("keep %s, ante alone" % kept, Fraction(base[d], n)))
        out.append(("keep %s, bet" % kept, Fraction(2 * base[d], n)))
    if row[0]:
        out.append(("declare an instant winner", Fraction(v["instant"][row[0]])))
    return out


def _options_tcp(paytable, hand):
    p = sorted(hand)
    counts = tcp._counts(progress=False)
    cat, key, nq, win, tie, lose = counts[colorado._colex(p)].tolist()
    b = tcp.PAYTABLES[paytable]["ante_bonus"].get(cat, 0)
    return [("fold", Fraction(-1)), ("play", Fraction(nq + 2 * win - 2 * lose, tcp.N_DEALER) + b)]


def _options_cdraw(hand):
    # every way to call (keep 3, 4 or 5 cards), exactly, in a few seconds (the dealer's draw
    # makes this the slowest situation: see cdraw_hand in _cdraw.c)
    k = kmod.kernel()
    p = sorted(hand)
    out = [("fold", Fraction(-1))]
    for mask, nq, tie, lose, win, den in k.cdraw_hand(cdraw.qualify_rank(), tuple(p)):
        ev = cdraw.option_value(nq, lose, win, den)
        gone = [c for i, c in enumerate(p) if mask >> i & 1]
        if not gone:
            label = "call and stand"
        else:
            label = "call, discard %s and draw %s" % (_name(gone), "one" if len(gone) == 1 else "two")
        out.append((label, ev))
    return out


def options(game, paytable, hand_text, up_text):
    """[(decision, exact expected value per ante)], best first."""
    need_up = game in ("caribbean-stud", "caribbean-clear-dark", "california-draw")
    sizes = {"caribbean-stud": 5, "caribbean-clear-dark": 5, "california-draw": 4, "colorado-holdem": 3,
             "three-card-poker": 3, "caribbean-draw": 5}
    if game not in sizes:
        raise GameError("--hand prices one situation of %s; %s has no player decisions to price" % (
            ", ".join(sizes), game))
    hand = _parse(hand_text, sizes[game], "--hand")
    up = None
    if need_up:
        if not up_text:
            raise GameError("%s: give the dealer's up card too, e.g. --up 9s" % game)
        up = _parse(up_text, 1, "--up")[0]
        if up in hand:
            raise GameError("--up %s is also in --hand: one deck, every card once" % _name([up]))
    elif up_text:
        raise GameError("%s has no dealer up card: drop --up" % game)
    if game == "caribbean-stud":
        out = _options_stud(paytable, hand, up)
    elif game == "caribbean-clear-dark":
        out = _options_clear(paytable == clearbet.BUY_THEN_PASS, hand, up)
    elif game == "california-draw":
        out = _options_california(paytable, hand, up)
    elif game == "colorado-holdem":
        out = _options_colorado(paytable, hand)
    elif game == "caribbean-draw":
        out = _options_cdraw(hand)
    else:
        out = _options_tcp(paytable, hand)
    return sorted(out, key=lambda o: -o[1])


def render(game, paytable, hand_text, up_text):
    opts = options(game, paytable, hand_text, up_text)
    lines = ["%s [%s], hand %s%s: every decision, exact expected value per ante" % (
        game, paytable, hand_text, (", dealer shows " + up_text) if up_text else "")]
    for i, (label, ev) in enumerate(opts):
        lines.append("%s %-52s %+.6f  (%d/%d)" % ("*" if i == 0 else " ", label, float(ev), ev.numerator, ev.denominator))
    return "\n".join(lines), opts
