"""The progressive meter's arithmetic, in integer cents: what one token adds, what an award takes,
and what the meter reads after it. Pure functions of the state and the configuration, shared by
the board (which applies them) and the host (which shows what an award will leave, and checks the
board's figures), so both compute the same number the same way.

Rulebook 000 rule 9.3 (the meter is reset to the seed after a royal flush is paid) and the overflow
rule of docs/GAMES.md: past the ceiling a token's increment goes to overflow, and the overflow
flows back into the meter after a reset, up to the ceiling.
"""

# Cumulative meters roll over here (12 digits of cents), as electromechanical meters do; the host
# computes differences modulo this.
ROLLOVER_CENTS = 10 ** 12


def credit(state, cfg, seat):
    """One token at `seat`: (the coin event's money fields, the state patch)."""
    increment = cfg["increment_cents"]
    reserve = cfg["reserve_cents"]
    room = cfg["ceiling_cents"] - state["meter"]
    to_meter = increment if increment <= room else max(room, 0)  # past the ceiling: overflow
    to_over = increment - to_meter
    coins = "c%d" % seat
    tokens = "t%d" % seat
    patch = {
        "meter": state["meter"] + to_meter,
        "over": state["over"] + to_over,
        "res": state["res"] + reserve,
        "contrib": (state["contrib"] + increment) % ROLLOVER_CENTS,
        "rcontrib": (state["rcontrib"] + reserve) % ROLLOVER_CENTS,
        coins: (state[coins] + 1) % ROLLOVER_CENTS,
        tokens: state[tokens] + 1,
    }
    return {"inc": increment, "to_meter": to_meter, "to_over": to_over, "reserve": reserve}, patch


def house_limit(cfg, frozen_cents):
    """The most the house may pay toward one award (the part not from the meter): the largest fixed
    award, or a straight flush's 10 % of the meter at lockout when the meter is short (rulebook 000
    rule 9.3; docs/GAMES.md, short meter)."""
    return max(cfg["max_fixed_award_cents"], frozen_cents // 10)


def after_award(meter_cents, over_cents, meter_part_cents, reset, cfg):
    """(meter, overflow, seed added) after an award takes `meter_part_cents` from the meter and,
    when `reset`, restarts it from its seed and takes overflow back up to the ceiling."""
    meter = meter_cents - meter_part_cents
    seed_added = 0
    over = over_cents
    if reset:
        seed_added = cfg["seed_cents"]
        meter += seed_added
        room = cfg["ceiling_cents"] - meter
        take = min(room, over) if room > 0 else 0
        meter += take
        over -= take
    return meter, over, seed_added
