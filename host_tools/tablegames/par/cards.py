"""Cards and hand categories for the PAR code and its C kernel.

A card number is tablegames.poker's, the one encoding of the package: 4 * rank + suit, rank 0
(deuce) .. 12 (ace), suit 0..3 = c d h s. The kernel (_kernel.c) uses only "same suit or not" and
permutations of the suits, so any card number means the same card here, in the evaluator and in
the settlement engine. The categories are the kernel's five-card enum, weakest first (the royal
flush apart from the other straight flushes, as the pay tables list it).
"""
from ..poker.cards import RANKS, SUITS, card_str, parse_cards

__all__ = ["RANKS", "SUITS", "CATEGORIES", "card", "cards", "name", "rank_name"]

CATEGORIES = [
    "high card", "pair", "two pair", "three of a kind", "straight", "flush",
    "full house", "four of a kind", "straight flush", "royal flush",
]
HIGH, PAIR, TWO_PAIR, TRIPS, STRAIGHT, FLUSH, FULL_HOUSE, QUADS, STRAIGHT_FLUSH, ROYAL = range(10)


def card(text):
    """'As' -> 51 (tablegames.poker's number for the ace of spades)."""
    return parse_cards(text, count=1, what="card")[0]


def cards(text):
    return list(parse_cards(text))


def name(c):
    return card_str(c)


def rank_name(r):
    return "10" if RANKS[r] == "T" else RANKS[r]


def relabel_suits(cs, suit_to_zero):
    """The same cards with suits `suit_to_zero` and 0 swapped: the kernel's probes take a dealer
    up card of suit 0 (the other suits are the same by symmetry), this turns any up card into one."""
    def one(c):
        s = c & 3
        return (c & ~3) | (0 if s == suit_to_zero else suit_to_zero if s == 0 else s)
    return [one(c) for c in cs]
