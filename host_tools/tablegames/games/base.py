"""What every game module shares: round reading, pay tables, settlement lines.

A settlement is a list of Lines in the order the seed says the dealer pays or collects them. Every
line names the wager, its stake, the result (win / lose / push), the amount won or lost (integer
cents; 0 for a push) and the rule it applied, quoting the seed's rule number.
"""
import json
import os
from dataclasses import dataclass, field

from tablegames.errors import GameError
from ..poker import CardError, cards_str, check_disjoint, hands, parse_cards

PAYTABLE_DIR = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "paytables")

WIN, LOSE, PUSH = "win", "lose", "push"


class RoundError(GameError):
    """A round that breaks a rule of its game (or cannot be read); the message names the rule."""


@dataclass
class Line:
    seat: int
    wager: str           # ante, bet, progressive, bonus, action, upcard, call, purchase ...
    stake: int           # cents on the wager
    result: str          # win / lose / push
    amount: int          # cents won (win), lost (lose) or 0 (push)
    rule: str            # which rule decided it, with the seed's rule number
    hand: str = ""       # the hand the result was decided on, if any
    box: int = 0         # rulebook 004 only: the betting box (several per player)
    # False for a wager whose stake is spent even when it wins (the progressive token drops into
    # the coin-in slot): the player's net is the amount won minus the stake.
    stake_returned: bool = True

    def as_dict(self):
        d = {"seat": self.seat, "wager": self.wager, "stake_cents": self.stake,
             "result": self.result, "amount_cents": self.amount, "rule": self.rule}
        if self.hand:
            d["hand"] = self.hand
        if self.box:
            d["box"] = self.box
        if not self.stake_returned:
            d["stake_returned"] = False
        return d

    def net(self):
        """The player's net on this line, in cents."""
        if self.result == WIN:
            return self.amount - (0 if self.stake_returned else self.stake)
        return -self.amount if self.result == LOSE else 0


@dataclass
class Settlement:
    game: str
    paytable: str
    lines: list = field(default_factory=list)          # payment order
    dealer: dict = field(default_factory=dict)
    progressive: list = field(default_factory=list)    # awards in payment order (rulebook 000)
    meter: dict = field(default_factory=dict)          # before / after (rulebook 000)
    notes: list = field(default_factory=list)

    def add(self, *args, **kw):
        line = Line(*args, **kw)
        self.lines.append(line)
        return line

    def net(self, seat=None):
        """Player's net result in cents (wins minus losses), for one seat or the whole table."""
        total = 0
        for ln in self.lines:
            if seat is not None and ln.seat != seat:
                continue
            total += ln.net()
        return total

    def for_seat(self, seat, wager=None):
        return [ln for ln in self.lines if ln.seat == seat and (wager is None or ln.wager == wager)]

    def one(self, seat, wager, box=0):
        found = [ln for ln in self.lines if ln.seat == seat and ln.wager == wager and (not box or ln.box == box)]
        if len(found) != 1:
            raise KeyError("%d lines for seat %s wager %s" % (len(found), seat, wager))
        return found[0]

    def as_dict(self):
        d = {"game": self.game, "paytable": self.paytable, "dealer": self.dealer,
             "lines": [dict(order=i + 1, **ln.as_dict()) for i, ln in enumerate(self.lines)],
             "net_cents": {str(s): self.net(s) for s in sorted({ln.seat for ln in self.lines})}}
        if self.progressive or self.meter:
            d["progressive"] = self.progressive
            d["meter"] = self.meter
        if self.notes:
            d["notes"] = self.notes
        return d


# ------------------------------------------------------------------ pay tables

def paytable_names(game=None):
    out = []
    for fn in sorted(os.listdir(PAYTABLE_DIR)):
        if fn.endswith(".json"):
            with open(os.path.join(PAYTABLE_DIR, fn)) as f:
                pt = json.load(f)
            if game is None or pt.get("game") == game:
                out.append(fn[:-5])
    return out


def is_paytable_file(name):
    """A pay table given as a file (FILE.json, same format as tablegames/paytables/*.json), for a
    casino's own schedule, rather than by name."""
    return isinstance(name, str) and name.endswith(".json")


def load_paytable(name):
    if is_paytable_file(name):
        try:
            with open(name) as f:
                pt = json.load(f)
        except OSError as exc:
            raise RoundError("cannot read pay table %s: %s" % (name, exc.strerror)) from None
        except ValueError as exc:
            raise RoundError("pay table %s is not valid JSON: %s" % (name, exc)) from None
        if not isinstance(pt, dict):
            raise RoundError("pay table %s: a pay table is a JSON object (see tablegames/paytables/*.json)" % name)
        pt.setdefault("name", os.path.basename(name)[:-len(".json")])
        return pt
    path = os.path.join(PAYTABLE_DIR, name + ".json")
    if not os.path.exists(path):
        raise RoundError("no pay table %r: known ones are %s" % (name, ", ".join(paytable_names())))
    with open(path) as f:
        return json.load(f)


def pay(stake, odds):
    """Winnings on `stake` cents at odds [a, b] ("a to b"): integer cents, rounded down."""
    a, b = odds
    return stake * a // b


def odds_text(odds):
    return "%s to %s" % (odds[0], odds[1])


# ------------------------------------------------------------------ round reading

def need(obj, key, what, kind=None):
    if key not in obj:
        raise RoundError("%s: missing %r" % (what, key))
    v = obj[key]
    if kind is int and (not isinstance(v, int) or isinstance(v, bool)):
        raise RoundError("%s: %r must be whole cents (an integer), got %r" % (what, key, v))
    return v


def cents(obj, key, what, default=0):
    v = obj.get(key, default)
    if v is None:
        return 0
    if not isinstance(v, int) or isinstance(v, bool) or v < 0:
        raise RoundError("%s: %r must be whole cents (a non-negative integer), got %r" % (what, key, v))
    return v


def cards(obj, key, what, count=None, default=None):
    if key not in obj:
        if default is not None:
            return default
        raise RoundError("%s: missing %r (the cards, like \"As Kd 10h\")" % (what, key))
    try:
        return parse_cards(obj[key], count=count, what="%s %s" % (what, key))
    except CardError as exc:
        raise RoundError(str(exc)) from None


def disjoint(groups):
    """One deck: no card may be in two places in a round."""
    try:
        check_disjoint(groups)
    except CardError as exc:
        raise RoundError(str(exc)) from None


def seats_of(rnd, what="round", pt=None):
    """The round's seat entries by seat number. A pay table with "max_seats" (the seed's limit on
    players or boxes, quoted in "seats_rule") refuses a seat number above it, so more entries
    than the table has places are refused too."""
    seats = rnd.get("seats")
    if not isinstance(seats, list) or not seats:
        raise RoundError("%s: 'seats' must be a non-empty list of seats" % what)
    limit = (pt or {}).get("max_seats")
    numbers = []
    for i, s in enumerate(seats):
        if not isinstance(s, dict) or not isinstance(s.get("seat"), int) or isinstance(s.get("seat"), bool) \
                or s["seat"] < 1:
            raise RoundError("seat entry %d: needs a seat number from 1 (\"seat\": 1 is the seat at the dealer's left)" % (i + 1))
        if limit is not None and s["seat"] > limit:
            raise RoundError("seat %d: this table has %d places (%s)" % (s["seat"], limit, pt["seats_rule"]))
        numbers.append(s["seat"])
    if len(set(numbers)) != len(numbers):
        raise RoundError("seat numbers must be distinct, got %s" % numbers)
    return sorted(seats, key=lambda s: s["seat"])


def hand_name(value, kind=5):
    return hands.name(value, kind)


def discard_draw(seat_obj, what, hand, max_discards, rule):
    """Apply a player's discards and draws; returns the final hand. Refuses what breaks `rule`."""
    discards = cards(seat_obj, "discard", what, default=())
    draws = cards(seat_obj, "draw", what, default=())
    if len(discards) > max_discards:
        raise RoundError("%s: discards %d cards (%s); %s" % (what, len(discards), cards_str(discards), rule))
    missing = [c for c in discards if c not in hand]
    if missing:
        raise RoundError("%s: discards %s, which is not in the hand %s" % (what, cards_str(missing), cards_str(hand)))
    if len(draws) != len(discards):
        raise RoundError("%s: discards %d card(s) but draws %d; each discard is replaced by one card"
                         % (what, len(discards), len(draws)))
    return tuple(c for c in hand if c not in discards) + draws, discards, draws
