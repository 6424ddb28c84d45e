"""`tablectl eval CARDS`: name a poker hand."""
import json

from ..errors import TablectlError
from tablegames.poker import CardError, cards_str, category_name, evaluate, parse_cards, require_core

HELP = "name a poker hand: five cards, the best five of six or seven, or a 4- or 3-card hand"
EXAMPLE = "tablectl eval As Kd 10h Tc Ts"


def add_arguments(p):
    p.add_argument("cards", nargs="+", help="cards like As Kd 10h Tc or A\u2660 (3 to 7 cards)")
    p.add_argument("--kind", type=int, choices=(5, 4, 3),
                   help="hand kind: 5 (best five, default for 5-7 cards), 4 (California Draw "
                        "four-card hand), 3 (three-card hand); default from the number of cards")
    p.add_argument("--json", action="store_true", help="machine-readable output")


def run(args):
    require_core("eval (hand evaluation)")
    try:
        cs = parse_cards(" ".join(args.cards), what="the hand")
        if not 3 <= len(cs) <= 7:
            raise CardError("the hand: expected 3 to 7 cards, got %d (%s)" % (len(cs), cards_str(cs)))
        hand = evaluate(cs, kind=args.kind)
    except (CardError, ValueError) as exc:
        raise TablectlError("%s" % exc) from None
    if args.json:
        print(json.dumps(hand.as_dict(), indent=2))
        return 0
    print(hand.name)
    print("  category: %s   value: %d (higher is stronger; %d-card hands)"
          % (category_name(hand.category), hand.value, hand.kind))
    if hand.best != hand.cards:
        print("  best five: %s" % cards_str(hand.best))
    return 0
