"""The table's vocabulary, defined once for both sides: the board's states and inputs, every
command it takes (with its class), and every event it records (with its fields).

The board (table/app.py, table/commands.py) writes these words; the host (tablectl: ledger,
reconcile, report, service) reads them from here too, so a word renamed here is renamed on both
sides at once, and a word used but not defined here is caught by the tests
(tests/firmware/mp_test_vocab.py runs the board and checks every event it records against EVENTS).

Adding a command: one line in COMMANDS, its handler `cmd_<name>` in table/commands.py, and its
CLI verb (docs/ARCHITECTURE.md shows a real one).
"""

# --- the table's states ----------------------------------------------------------------------
OPEN = "OPEN"
LOCKED = "LOCKED"
JACKPOT_PENDING = "JACKPOT_PENDING"
SERVICE = "SERVICE"
FAULT = "FAULT"  # shown while any fault is raised; the base state underneath is kept

KEY_NAMES = ("lock", "unlock", "jackpot", "service")  # the dealer's keypad, bit 0 upwards
SPOT_NAMES = ("ante", "bet", "bonus")                 # the bet spots of one seat

# --- commands --------------------------------------------------------------------------------
# What a command may do decides who may send it:
READ = "read"        # reads only: changes nothing, its reply may be repeated from a cache
PLAY = "play"        # moves the table the way the dealer's keypad does (usable on a bench
                     # board with no key yet; signed like every frame once one is provisioned)
GUARDED = "guarded"  # moves money, configuration or the books: refused on a board with no key
KEYING = "keying"    # installs the key: the one command a keyed board takes unsigned, and only
                     # with its service key switch turned on by hand
REPAIR = "repair"    # guarded, and the one command a board with a storage fault still takes

# name -> (class, its arguments as "name:rule ..."). The rules (host side: arg_problem below) are
# checked by the host's service before anything is recorded or signed; the board checks again in
# the handler, against the table's own state.
COMMANDS = {
    "status": (READ, ""),
    "meters": (READ, ""),
    "config_get": (READ, ""),
    "diag": (READ, ""),
    "checksums": (READ, "names:names"),
    "loop_stats": (READ, ""),
    "lock": (PLAY, ""),
    "unlock": (PLAY, ""),
    "display_test": (PLAY, "ms:ms"),
    "linked": (PLAY, "meter_cents:cents lost:bool"),  # a linked pool's amount, or "lost" (docs/POOL.md)
    "provision": (KEYING, "key:key"),
    "service": (GUARDED, "enter:bool"),
    "config_set": (GUARDED, "changes:changes"),
    "meter_set": (GUARDED, "meter_cents:cents reason:text"),
    "award": (GUARDED, "seat:seat round:round amount_cents:cents meter_cents:cents reset:bool hand:hand"),
    "clear": (GUARDED, ""),
    "key_change": (GUARDED, "key:key"),
    "storage_repair": (REPAIR, "reason:text"),
}


def commands_of(*classes):
    return tuple(name for name in COMMANDS if COMMANDS[name][0] in classes)


READ_COMMANDS = commands_of(READ)
PLAY_COMMANDS = commands_of(PLAY)
GUARDED_COMMANDS = commands_of(GUARDED, REPAIR)  # need a provisioned key
PROVISION = "provision"

# --- events ----------------------------------------------------------------------------------
# Every event carries "t", "b" (board id), "k" (kind), "ms" (board clock) and "q" (sequence
# number); these are the fields each kind adds. A field marked optional here is "?"-suffixed.
# Cents are integers; "pe" is when the token's last pulse ended (board ms).
COIN = "coin"
AWARD = "award"
CORRECTION = "correction"
METERS = "meters"
STATE = "state"
CONFIG = "config"
STORAGE_REPAIRED = "storage_repaired"
KEY_PROVISIONED = "key_provisioned"

EVENTS = {
    "boot": ("boots", "fw", "fresh", "selfcheck", "faults"),
    "fault": ("code", "detail", "state"),
    "fault_cleared": ("code", "state"),
    STATE: ("from", "to", "reason", "round", "meter"),
    METERS: ("meter", "over", "res", "contrib", "rcontrib", "seeded", "awarded", "wins", "hits",
             "corr", "round", "frozen", "seat_coins", "seat_tokens"),
    COIN: ("seat", "round", "inc", "to_meter", "to_over", "reserve", "pe"),
    "late_coin": ("seat", "state", "round", "pe"),
    "refused_coin": ("seat", "faults", "jammed", "pe"),
    "extra_coin": ("seat", "round", "pe"),
    "glitch": ("seat", "count", "last_width_ms"),
    "out_of_spec": ("seat", "count", "last_width_ms"),
    "bad_count": ("seat", "pulses"),
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
            "meter_before", "seed_added"),
    "award_cleared": (),
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


# --- argument rules (read by the host; the board's handlers check against the table's state) --
def _whole(v, low, high):
    return isinstance(v, int) and not isinstance(v, bool) and low <= v <= high


def _text(v, longest=200):
    return isinstance(v, str) and 0 < len(v) <= longest


def _hex_key(v):
    if not isinstance(v, str) or len(v) != 64:
        return False
    for c in v:
        if c not in "0123456789abcdefABCDEF":
            return False
    return True


RULES = {
    "bool": lambda v: isinstance(v, bool),
    "text": _text,
    "hand": lambda v: isinstance(v, str) and len(v) <= 32,
    "cents": lambda v: _whole(v, 0, 10 ** 10),
    "ms": lambda v: _whole(v, 0, 60000),
    "seat": lambda v: _whole(v, 0, 7),
    "round": lambda v: _whole(v, 1, 10 ** 12),
    "key": _hex_key,
    "names": lambda v: isinstance(v, list) and len(v) <= 64 and all(_text(x) for x in v),
    "changes": lambda v: isinstance(v, dict) and 0 < len(v) <= 32 and all(
        isinstance(k, str) and _whole(x, 0, 10 ** 12) for k, x in v.items()),
}


def arg_rules(name):
    """{argument: rule name} of command `name` (KeyError for a command the vocabulary lacks)."""
    spec = COMMANDS[name][1]
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
