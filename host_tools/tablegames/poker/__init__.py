"""Poker hands for every game the table runs: card text, evaluators, batch analysis.

    from tablegames.poker import parse_cards, rank5, evaluate, histogram, Five
    rank5("As Ks Qs Js Ts") == 7462            # royal flush, the strongest value
    evaluate("8c 8d Ah Kc 2s").name            # 'pair of eights, A-K-2 kickers'

Modules: cards (text <-> card numbers), hands (classes, order, names; the pure-Python reference),
evaluator (the fast scalar and batch API over the C core _fastpoker). docs/GAMES.md describes it.
"""
from .cards import (DECK, RANKS, SUITS, CardError, card, card_str, cards_str, check_disjoint,
                    parse_cards, rank_of, suit_of)
from .evaluator import (Hand, batch_loops, best_five, category_counts, combinations, evaluate,
                        histogram, n_combinations, rank, rank3, rank4, rank5, rank_all, rank_batch,
                        require_core, values_of_category)
from .hands import (Five, Four, Three, category, category_name, category_start, is_royal,
                    lowest_value, n_values, name, reference_value)
