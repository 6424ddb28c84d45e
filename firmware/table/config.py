"""The table's configuration: every key, its range, and the checks that span keys.

A configuration is a plain dict. validate() either returns a complete, checked copy or raises
ConfigError naming what is wrong; the caller keeps the old configuration in that case.
"""

MAX_SEATS = 8
# The largest meter value (10 digits of cents: $99,999,999.99) that every display and record holds.
METER_LIMIT_CENTS = 9999999999

# key: (minimum, maximum, default, what it is). All integers; money in cents, times in ms.
SCHEMA = {
    "seats": (1, MAX_SEATS, 7, "seats with a token acceptor"),
    "pulses_per_coin": (1, 50, 1, "acceptor pulses that make one token"),
    "pulse_min_ms": (1, 500, 10, "narrower active pulses are glitches"),
    "pulse_max_ms": (5, 1000, 150, "wider active pulses are out of spec (not counted)"),
    "coin_gap_ms": (10, 5000, 300, "an idle gap this long ends a token's pulse train"),
    "jam_ms": (200, 60000, 2000, "a line held active this long is a jam"),
    "token_cents": (1, 100000, 100, "value of one progressive token"),
    "increment_cents": (0, 100000, 70, "meter increment per token"),
    "reserve_cents": (0, 100000, 0, "hidden/reserve increment per token"),
    "seed_cents": (0, METER_LIMIT_CENTS, 10000000, "meter reset (seed) value"),
    "ceiling_cents": (1, METER_LIMIT_CENTS, 50000000, "meter ceiling; above it contributions go to overflow"),
    # Rulebook 000 rule 3: the progressive wager is "a token" in the coin-in slot, and the schedule
    # (rule 9.3) pays per hand, not per token: a second token in a round would buy nothing, so
    # the board credits one and refuses the rest (extra_coin). Kept as a key so a stored
    # configuration still loads; a stored value above 1 is a config fault until corrected.
    "tokens_per_round": (1, 1, 1, "tokens a seat may play per round (rulebook 000: one)"),
    # Rulebook 000 rule 9.3: "Straight flush pays either 10% of the displayed progressive jackpot or
    # pays $5,000 (licensee chooses payout option at the time the game is put into play)".
    # 0: 10 % of the meter; 1: the fixed $5,000. Set in SERVICE, signed and journaled like every
    # key, so the host reads it from the board and never from a command line.
    "sf_fixed": (0, 1, 0, "straight flush pays 0: 10% of the meter, 1: a fixed $5,000"),
    # 1: fixed awards (four of a kind, full house, flush, a fixed straight flush) are paid out
    # of the meter as far as it holds after the royals and percentage awards of the round; the
    # house pays the rest (docs/GAMES.md). 0: the house pays fixed awards, the meter is
    # left alone.
    "fixed_from_meter": (0, 1, 0, "fixed awards are taken from the meter (0: no, 1: yes)"),
    "host_timeout_ms": (0, 3600000, 10000, "host silent this long disables the progressive (0: never)"),
    "heartbeat_ms": (100, 60000, 1000, "how often the board sends a heartbeat"),
    "resend_ms": (50, 60000, 1000, "unacknowledged events are resent after this"),
    "debounce_ms": (5, 1000, 30, "keypad and bet-spot debounce"),
    "outbox_limit": (32, 100000, 1000, "unacknowledged events held before coin-in is inhibited"),
    "award_show_ms": (30000, 600000, 30000, "how long the display flashes an award"),
    "max_fixed_award_cents": (0, METER_LIMIT_CENTS, 500000,
                              "largest part of an award not taken from the meter (the schedule's largest fixed pay)"),
}


class ConfigError(ValueError):
    pass


def defaults():
    cfg = {}
    for key in SCHEMA:
        cfg[key] = SCHEMA[key][2]
    return cfg


def validate(changes, base=None):
    """Return base updated with changes, checked. Raise ConfigError; nothing is modified."""
    cfg = dict(base) if base is not None else defaults()
    for key in changes:
        if key not in SCHEMA:
            raise ConfigError("unknown setting %r" % (key,))
        value = changes[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise ConfigError("%s must be a whole number, not %r" % (key, value))
        low, high = SCHEMA[key][0], SCHEMA[key][1]
        if value < low or value > high:
            raise ConfigError("%s=%d is out of range %d..%d (%s)" % (key, value, low, high, SCHEMA[key][3]))
        cfg[key] = value
    for key in SCHEMA:
        if key not in cfg:
            cfg[key] = SCHEMA[key][2]
    if cfg["seed_cents"] > cfg["ceiling_cents"]:
        raise ConfigError("seed_cents=%d is above ceiling_cents=%d" % (cfg["seed_cents"], cfg["ceiling_cents"]))
    if cfg["increment_cents"] + cfg["reserve_cents"] > cfg["token_cents"]:
        raise ConfigError("increment_cents + reserve_cents (%d) exceed token_cents=%d"
                          % (cfg["increment_cents"] + cfg["reserve_cents"], cfg["token_cents"]))
    if cfg["pulse_min_ms"] >= cfg["pulse_max_ms"]:
        raise ConfigError("pulse_min_ms=%d must be below pulse_max_ms=%d" % (cfg["pulse_min_ms"], cfg["pulse_max_ms"]))
    if cfg["coin_gap_ms"] <= cfg["pulse_min_ms"]:
        raise ConfigError("coin_gap_ms=%d must be above pulse_min_ms=%d" % (cfg["coin_gap_ms"], cfg["pulse_min_ms"]))
    if cfg["jam_ms"] <= cfg["pulse_max_ms"]:
        raise ConfigError("jam_ms=%d must be above pulse_max_ms=%d" % (cfg["jam_ms"], cfg["pulse_max_ms"]))
    if cfg["host_timeout_ms"] and cfg["host_timeout_ms"] <= cfg["heartbeat_ms"]:
        raise ConfigError("host_timeout_ms=%d must be above heartbeat_ms=%d" % (cfg["host_timeout_ms"], cfg["heartbeat_ms"]))
    return cfg
