"""What the meter display shows, as text for a 7-segment driver. Pure: state and time in.

The meter is dollars and cents; a '.' folds into the digit before it, so '123456.78' fills eight
digits. When the cents no longer fit, whole dollars are shown (never a wrong figure).
"""


def format_cents(cents, digits):
    dollars, rest = divmod(cents, 100)
    text = "%d.%02d" % (dollars, rest)
    if len(text) - 1 <= digits:
        return " " * (digits - (len(text) - 1)) + text
    text = "%d" % dollars
    if len(text) <= digits:
        return " " * (digits - len(text)) + text
    return "-" * digits  # cannot happen within METER_LIMIT_CENTS on 8 digits; never mislead


def fit(text, digits):
    text = text[:digits]
    return text + " " * (digits - len(text))


# Fault codes shown as "FAULT nn" (docs/FIRMWARE.md lists them).
FAULT_CODES = {"host": 1, "storage": 2, "selfcheck": 3, "outbox": 4, "config": 5, "pool": 6, "key": 7}


def render(view, now_ms, digits):
    """view: dict with state, faults (list), meter, award (cents or None), award_until_ms,
    jammed (list of seats), test_until_ms. Returns (text, blink)."""
    if view.get("test_until_ms", 0) > now_ms:
        return "8." * digits, False
    if view.get("award") is not None and view.get("award_until_ms", 0) > now_ms:
        # Alternate PAY with the amount, both flashing: nobody at the table can miss it.
        if (now_ms // 1500) % 2 == 0:
            return fit("PAY", digits), True
        return format_cents(view["award"], digits), True
    faults = view.get("faults") or []
    phase = (now_ms // 2000) % 2
    if faults:
        if "host" in faults and len(faults) == 1:
            return fit("PROG OFF", digits), False
        if faults == ["pool"]:
            return fit("POOL OFF", digits), False
        code = FAULT_CODES.get(faults[0], 9)
        return fit("FAULT %02d" % code, digits), False
    jammed = view.get("jammed") or []
    if jammed and phase:
        return fit("JAM %d" % (jammed[0] + 1), digits), False
    state = view.get("state")
    if state == "LOCKED" and phase:
        return fit("LOCKED", digits), False
    if state == "JACKPOT_PENDING" and phase:
        return fit("JACKPOT", digits), True
    if state == "SERVICE":
        return fit("SERVICE", digits), False
    if view["meter"] is None:
        return fit("POOL", digits), False  # linked, the pool's amount not heard yet since boot
    return format_cents(view["meter"], digits), False
