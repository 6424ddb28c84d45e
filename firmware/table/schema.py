"""What the table's words carry: the fields of every event the board records and the rules for
every command argument (the commands themselves, with their class and argument names, are in
table/vocab.py). Read by the host (ledger, reconcile, service) and the tests; the board never
imports it: these checks are the host's, and on the board they would cost heap it does not have.
"""
from table.vocab import COMMANDS

# The kinds the host's books read by name.
COIN = "coin"
AWARD = "award"
CORRECTION = "correction"
METERS = "meters"
STATE = "state"
CONFIG = "config"
STORAGE_REPAIRED = "storage_repaired"
KEY_PROVISIONED = "key_provisioned"

# --- events ----------------------------------------------------------------------------------
# Every event carries "t", "b" (board id), "k" (kind), "ms" (board clock) and "q" (sequence
# number); these are the fields each kind adds. A field marked optional here is "?"-suffixed.
# Cents are integers; "pe" is when the token's last pulse ended (board ms).

EVENTS = {
    "boot": ("boots", "fw", "fresh", "selfcheck", "faults"),
    "fault": ("code", "detail", "state"),
    "fault_cleared": ("code", "state"),
    # The jackpot key's state event is the board's signed statement a linked pool pays by
    # (docs/POOL.md): the round, its eligible seats ("elig", bit per seat) and the pool it feeds.
    STATE: ("from", "to", "reason", "round", "meter", "elig?", "pool?"),
    METERS: ("meter", "over", "res", "contrib", "rcontrib", "seeded", "awarded", "wins", "hits",
             "corr", "round", "frozen", "seat_coins", "seat_tokens"),
    COIN: ("seat", "round", "inc", "to_meter", "to_over", "reserve", "pe"),
    "late_coin": ("seat", "state", "round", "pe"),
    "refused_coin": ("seat", "faults", "jammed", "pe"),
    "extra_coin": ("seat", "round", "pe"),
    "glitch": ("seat", "count", "last_width_ms"),
    "out_of_spec": ("seat", "count", "last_width_ms"),
    "bad_count": ("seat", "pulses"),
    "pulses_lost": ("seat", "pulses"),
    "jam": ("seat", "held_ms"),
    "jam_cleared": ("seat",),
    "spot": ("seat", "spot", "on"),
    "key": ("key", "state"),
    "service_refused": ("reason",),
    "service_requested": ("state",),
    "frame_error": ("t", "error"),
    "cmd_refused": ("id?", "c?", "err?", "msg", "frame?", "count?"),
    "version_mismatch": ("offered", "err"),
    "remote": ("cmd",),
    KEY_PROVISIONED: ("by",),
    CONFIG: ("old", "new"),
    CORRECTION: ("old", "new", "reason"),
    AWARD: ("seat", "round", "amount", "from_meter", "meter_cents", "reset", "hand", "id",
            "meter_before", "seed_added", "pool_cents?", "lock?"),
    "award_cleared": (),
    # The board joins (pool: its name) or, service key switch on, leaves (pool: None) a linked pool.
    "linked": ("pool",),
    "key_changed": (),
    STORAGE_REPAIRED: ("skipped_from", "skipped_to", "detail", "reason", "unrecorded"),
}
# Fields any event may carry besides its own: "p" (the state patch it applies) and
# "suppressed" (events dropped for a full outbox since the last one that got through).
COMMON_FIELDS = ("t", "b", "k", "ms", "q", "p", "suppressed")


def event_problem(event, needed=None):
    """None if `event` is an event of the vocabulary with exactly its fields, else what is off.
    needed: check only that these fields are there (a reader of the books, where events of older
    firmware lack fields added since); each must be a field the vocabulary names for the kind.
    (The tests run the full check over every event a board session records.)"""
    kind = event.get("k")
    spec = EVENTS.get(kind)
    if spec is None:
        return "unknown event kind %r" % (kind,)
    allowed = [f.rstrip("?") for f in spec]
    if needed is not None:
        for f in needed:
            if f not in allowed:
                return "%s events have no field %r in the vocabulary" % (kind, f)
            if f not in event:
                return "%s event without %r" % (kind, f)
        return None
    for f in spec:
        if not f.endswith("?") and f not in event:
            return "%s event without %r" % (kind, f)
    for f in event:
        if f not in allowed and f not in COMMON_FIELDS:
            return "%s event with a field the vocabulary does not name: %r" % (kind, f)
    return None


# --- command arguments -------------------------------------------------------------------------
# command -> its arguments as "name:rule ..." (a command missing here takes none). The rules are
# RULES below.
ARGS = {
    "checksums": "names:names",
    "display_test": "ms:ms",
    "linked": "meter_cents:cents lost:bool pool:pool leave:bool",
    "provision": "key:key",
    "service": "enter:bool",
    "config_set": "changes:changes",
    "meter_set": "meter_cents:cents reason:text",
    "award": "seat:seat round:round amount_cents:cents meter_cents:cents reset:bool hand:hand "
             "pool_cents:cents lock:lock",
    "key_change": "key:key",
    "storage_repair": "reason:text",
    "verify_software": "seed:seed names:names",
}


# --- argument rules (read by the host; the board's handlers check against the table's state) --
def _whole(v, low, high):
    return isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def _text(v, longest=200):
    return isinstance(v, str) and 0 < len(v) <= longest


def _hex(v, low, high):
    """Lower-case hex digits, an even number from low to high (the board checks every one too)."""
    if not isinstance(v, str) or not low <= len(v) <= high or len(v) % 2:
        return False
    for c in v:
        if c not in "0123456789abcdef":
            return False
    return True


def _hex_key(v):
    return _hex(v, 64, 64)


RULES = {
    "bool": lambda v: isinstance(v, bool),
    "text": _text,
    "hand": lambda v: isinstance(v, str) and len(v) <= 32,
    "cents": lambda v: _whole(v, 0, 10 ** 10),
    "ms": lambda v: _whole(v, 0, 60000),
    "seat": lambda v: _whole(v, 0, 7),
    "round": lambda v: _whole(v, 1, 10 ** 12),
    "lock": lambda v: _whole(v, 1, 10 ** 15),
    "pool": lambda v: _text(v, 64),
    "key": _hex_key,
    "seed": lambda v: _hex(v, 32, 128),  # 16..64 bytes: at least the 128 bits 9 NYCRR 5319.14 asks
    "names": lambda v: isinstance(v, list) and len(v) <= 64 and all(_text(x) for x in v),
    "changes": lambda v: isinstance(v, dict) and 0 < len(v) <= 32 and all(
        isinstance(k, str) and _whole(x, 0, 10 ** 12) for k, x in v.items()),
}


def arg_rules(name):
    """{argument: rule name} of command `name` (KeyError for a command the vocabulary lacks)."""
    spec = ARGS.get(name, "")
    out = {}
    for item in spec.split():
        arg, rule = item.split(":")
        out[arg] = rule
    return out


def arg_problem(name, args):
    """None if `args` are arguments command `name` takes, each within its rule; else what is off."""
    if name not in COMMANDS:
        return "no such command: %r" % (name,)
    if not isinstance(args, dict):
        return "arguments must be an object"
    rules = arg_rules(name)
    for key in args:
        if key not in rules:
            return "%s takes no argument %r" % (name, key)
    for key in rules:
        if key in args and not RULES[rules[key]](args[key]):
            return "%s: argument %s=%r is not allowed" % (name, key, args[key])
    return None
