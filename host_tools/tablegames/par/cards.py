"""Card numbering and hand categories shared with the C kernel.

card = rank * 4 + suit, rank 0 = deuce .. 12 = ace, suits 0..3 (s h d c).
"""
RANKS = "23456789TJQKA"
SUITS = "shdc"

# five-card categories, weakest first (the kernel's enum, same order)
CATEGORIES = [
    "high card", "pair", "two pair", "three of a kind", "straight", "flush",
    "full house", "four of a kind", "straight flush", "royal flush",
]
HIGH, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH, ROYAL = range(10)


def card(text):
    """'As' -> 48. Only the two-character form; the PAR code names a few fixed cards."""
    return RANKS.index(text[0].upper()) * 4 + SUITS.index(text[1].lower())


def cards(text):
    return [card(t) for t in text.split()]


def name(c):
    return RANKS[c >> 2] + SUITS[c & 3]


def rank_name(r):
    return "10" if RANKS[r] == "T" else RANKS[r]
