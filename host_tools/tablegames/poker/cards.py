"""Card text <-> card numbers.

A card is an int 0..51: ``4 * rank + suit`` with rank 0..12 for deuce..ace and suit 0..3 for
clubs, diamonds, hearts, spades. The encoding is the one every evaluator in this package and the C
core use; it is stable and part of the API (the PAR tool builds decks from it).

Accepted text, one card per token, tokens separated by spaces or commas:
``As Kd 10h Tc``, ``a♠``, ``Q♥``, ``2C``; a run of cards with no separator (``AsKd``) is split.
Bad input raises CardError (a GameError) whose message names the offending token, the duplicated
card, or the wrong count.
"""
from ..errors import GameError

RANKS = "23456789TJQKA"
SUITS = "cdhs"
RANK_NAMES = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
              "jack", "queen", "king", "ace")
RANK_PLURALS = ("twos", "threes", "fours", "fives", "sixes", "sevens", "eights", "nines", "tens",
                "jacks", "queens", "kings", "aces")
SUIT_NAMES = ("clubs", "diamonds", "hearts", "spades")

_RANK_OF = {ch: i for i, ch in enumerate(RANKS)}
_RANK_OF.update({ch.lower(): i for i, ch in enumerate(RANKS)})
_RANK_OF["10"] = 8
_RANK_OF["1"] = None  # "1" alone is not a rank; kept so "10" is found first when splitting
_SUIT_OF = {"c": 0, "d": 1, "h": 2, "s": 3, "C": 0, "D": 1, "H": 2, "S": 3,
            "\u2663": 0, "\u2666": 1, "\u2665": 2, "\u2660": 3,   # black/red filled suit symbols
            "\u2667": 0, "\u2662": 1, "\u2661": 2, "\u2664": 3}   # outlined variants
DECK = tuple(range(52))


class CardError(GameError):
    """Card text that cannot be a card, a card given twice, or the wrong number of cards (a
    GameError, so a ValueError too)."""


def card(rank, suit):
    """The card number for rank 0..12 (deuce..ace) and suit 0..3 (c, d, h, s)."""
    return 4 * rank + suit


def rank_of(c):
    return c >> 2


def suit_of(c):
    return c & 3


def card_str(c):
    """``As`` style text for one card number."""
    if not isinstance(c, int) or not 0 <= c < 52:
        raise CardError("not a card number (0..51): %r" % (c,))
    return RANKS[c >> 2] + SUITS[c & 3]


def cards_str(cards):
    return " ".join(card_str(c) for c in cards)


def _one(token):
    """Parse a token that should be exactly one card; None if it is not."""
    if len(token) == 3 and token[:2] == "10":
        r, s = 8, _SUIT_OF.get(token[2])
    elif len(token) == 2:
        r, s = _RANK_OF.get(token[0]), _SUIT_OF.get(token[1])
    else:
        return None
    if r is None or s is None:
        return None
    return 4 * r + s


def _split_run(token):
    """``AsKd10h`` -> [As, Kd, 10h]; None if the token is not a clean run of cards."""
    out, i = [], 0
    while i < len(token):
        for width in (3, 2):
            c = _one(token[i:i + width])
            if c is not None:
                out.append(c)
                i += width
                break
        else:
            return None
    return out


def _why(token):
    if len(token) >= 2:
        rank_txt, suit_txt = (token[:2], token[2:]) if token.startswith("10") else (token[0], token[1:])
        if _RANK_OF.get(rank_txt) is None:
            return "%r is not a rank (2-9, 10 or T, J, Q, K, A)" % rank_txt
        if len(suit_txt) != 1 or suit_txt not in _SUIT_OF:
            return "%r is not a suit (c d h s or \u2663 \u2666 \u2665 \u2660)" % suit_txt
    return "a card is a rank and a suit, like As, 10h, Td or Q\u2665"


def parse_cards(text, count=None, what="cards"):
    """Card text (or an iterable of card numbers / card tokens) -> tuple of card numbers.

    count: an int or a collection of allowed counts; a wrong count raises CardError.
    Duplicates within the text raise CardError naming the card.
    """
    if isinstance(text, str):
        tokens = text.replace(",", " ").split()
    else:
        tokens = list(text)
    cards = []
    for tok in tokens:
        if isinstance(tok, int) and not isinstance(tok, bool):
            if not 0 <= tok < 52:
                raise CardError("bad card %r in %s: card numbers are 0..51" % (tok, what))
            cards.append(tok)
            continue
        if not isinstance(tok, str):
            raise CardError("bad card %r in %s: give card text like 'As Kd 10h'" % (tok, what))
        c = _one(tok)
        if c is not None:
            cards.append(c)
            continue
        run = _split_run(tok)
        if run is None:
            raise CardError("bad card %r in %s: %s" % (tok, what, _why(tok)))
        cards.extend(run)
    seen = set()
    for c in cards:
        if c in seen:
            raise CardError("duplicate card %s in %s: a single deck has one of each"
                            % (card_str(c), what))
        seen.add(c)
    if count is not None:
        allowed = (count,) if isinstance(count, int) else tuple(count)
        if len(cards) not in allowed:
            want = " or ".join(str(n) for n in allowed)
            raise CardError("%s: expected %s cards, got %d (%s)"
                            % (what, want, len(cards), cards_str(cards) or "none"))
    return tuple(cards)


def check_disjoint(groups):
    """groups: iterable of (label, cards). Raise CardError if any card appears in two places."""
    where = {}
    for label, cards in groups:
        for c in cards:
            if c in where:
                raise CardError("duplicate card %s: dealt to %s and to %s; a single deck has one of each"
                                % (card_str(c), where[c], label))
            where[c] = label
