"""The board's command handlers: one function `cmd_<name>(app, now_ms, args, msg)` per command
of the vocabulary (table/vocab.py COMMANDS), returning the reply's fields or raising
CommandRefused. `handle` is the one gate every command passes: well-formed, not a repeat (a
repeat gets its first reply and does nothing), known, allowed for its class on this board (no key:
no guarded command; storage fault: only reads and the repair), then the handler.

A handler changes the table only through the app's journal (`app.record`), so a power cut leaves
a command done or not done, never half done.
"""
import gc
import sys

from table import config
from table import meter
from table import protocol as proto
from table import vocab

# What the board runs, as MicroPython reports it (status shows it): platform and interpreter version.
RUNTIME = "%s %s %s" % (sys.platform, sys.implementation.name, ".".join(str(v) for v in sys.implementation.version[:3]))


def handle(app, now_ms, frame):
    link = app.link
    msg = frame.message
    cid = msg.get("id")
    name = msg.get("c")
    args = msg.get("a")
    if not isinstance(cid, int) or not isinstance(name, str) or not isinstance(args, dict):
        link.refuse(now_ms, cid, name, proto.E_BAD_ARGS, "command needs id, c and a")
        return
    cached = link.cached_reply(cid, name)
    if cached is not None:
        link.send(cached)  # a repeated command gets the first reply, and does nothing
        return
    kind = vocab.COMMANDS.get(name)
    handler = globals().get("cmd_" + name) if kind is not None else None
    if handler is None:
        link.refuse(now_ms, cid, name, proto.E_UNKNOWN, "no such command: %s" % name)
        return
    if kind in (vocab.GUARDED, vocab.REPAIR) and app.key is None:
        link.refuse(now_ms, cid, name, proto.E_NO_KEY, "no table key: provision one first")
        return
    if app.journal is None or app.journal.frozen:
        if kind not in (vocab.READ, vocab.REPAIR, vocab.KEYING):
            link.refuse(now_ms, cid, name, proto.E_STORAGE,
                        "storage fault: nothing can be recorded (tablectl storage repair)")
            return
    try:
        result = handler(app, now_ms, args, msg)
    except CommandRefused as exc:
        link.refuse(now_ms, cid, name, exc.code, exc.text)
        return
    except (KeyError, TypeError, ValueError) as exc:
        link.refuse(now_ms, cid, name, proto.E_BAD_ARGS, "bad arguments: %r" % (exc,))
        return
    reply = proto.reply_ok(cid, result)
    link.remember(cid, name, reply)
    link.send(reply)


def journal_kind(app):
    """Where the journal is: "raw log", "files", "files, moving to the raw log" (a board given
    the raw log moves there once the host has acknowledged everything), or None (faulted)."""
    if app.journal is None:
        return None
    if hasattr(app.journal, "log"):
        return "raw log"
    note = app.journal_note or getattr(app.board, "reserve_note", None)
    if note:
        return "files (" + note + ")"
    return "files, moving to the raw log" if app.journal_moves else "files"


def cmd_status(app, now_ms, args, msg):
    return {"state": app.table_state(), "base": app.state["base"], "faults": list(app.faults),
            "fault_detail": app.fault_detail, "board": app.board.board_id, "fw": vocab.FIRMWARE_VERSION,
            "seats": app.seats, "round": app.state["round"], "meter": app.state["meter"],
            "lamps": [app.state["t%d" % i] > 0 for i in range(app.seats)],
            "inhibit": [not app.seat_accepting(i) for i in range(app.seats)],
            "spots": app.spots.state, "keys": app.keys.state, "jammed": list(app.jammed),
            "next_seq": app.journal.next_seq if app.journal else None,
            "acked_seq": app.journal.acked_seq if app.journal else None,
            "unacked": app.journal.unacked_count() if app.journal else None,
            "journal": journal_kind(app),
            "display": app.display_text[0] if app.display_text else "",
            "frames_bad": app.link.reader.frames_bad, "refused": app.link.frames_refused,
            "stale": app.link.frames_stale,
            "key_provisioned": app.key is not None, "service_switch": app.board.service_switch(),
            "boots": app.state["boots"], "runtime": RUNTIME, "unrecorded": app.unrecorded,
            "eligible": app.state.get("elig", 0), "paid": app.state.get("paid", 0),
            "pool": app.state.get("pool"), "pool_meter": app.linked_cents}


def cmd_meters(app, now_ms, args, msg):
    return app.meters()


def cmd_config_get(app, now_ms, args, msg):
    return {"config": app.cfg}


def cmd_lock(app, now_ms, args, msg):
    if app.state["base"] != vocab.OPEN:
        raise CommandRefused(proto.E_STATE, "lock needs OPEN, table is %s" % app.state["base"])
    app.record(now_ms, "remote", {"cmd": "lock"})
    app.lock(now_ms)
    return {"state": app.state["base"]}


def cmd_unlock(app, now_ms, args, msg):
    if app.state["base"] not in (vocab.LOCKED, vocab.JACKPOT_PENDING):
        raise CommandRefused(proto.E_STATE, "unlock needs LOCKED, table is %s" % app.state["base"])
    app.record(now_ms, "remote", {"cmd": "unlock"})
    app.unlock(now_ms)
    return {"state": app.state["base"]}


def cmd_display_test(app, now_ms, args, msg):
    app.test_until_ms = now_ms + int(args.get("ms", 3000))
    return {"until_ms": app.test_until_ms}


def cmd_diag(app, now_ms, args, msg):
    return {"keys": app.board.read_keys(), "spots": app.board.read_spots(),
            # what the host last heard of the spots, and the wear budget's slots in hand (0: an
            # input repeats without end: a spot chatters, a line is noisy)
            "spots_reported": app.spots_reported, "wear_budget": app._wear_left(now_ms),
            "held_ms": [app.board.pulse_sources[i].held_ms(now_ms) for i in range(app.seats)],
            "coins": [app.decoders[i].coins for i in range(app.seats)],
            "glitches": [app.decoders[i].glitches for i in range(app.seats)],
            "edges_lost": [app.board.pulse_sources[i].edges_lost() for i in range(app.seats)],
            "service_switch": app.board.service_switch(),
            "mem_free": gc.mem_free() if hasattr(gc, "mem_free") else None,  # None on CPython (fuzz tests)
            "heap_low": app.board.heap_low, "heap_checks": app.board.heap_checks}


def cmd_checksums(app, now_ms, args, msg):
    return {"files": app.board.file_checksums(args.get("names"))}


def cmd_loop_stats(app, now_ms, args, msg):
    """Main-loop turns so far and the board's clock: two readings give the loop's rate, which
    falls when something on the board takes too long (a slow flash, a stuck driver)."""
    return {"board_ms": now_ms, "turns": app.loops}


def cmd_provision(app, now_ms, args, msg):
    if not app.board.service_switch():
        raise CommandRefused(proto.E_NEEDS_SERVICE_SWITCH,
                             "turn the service key switch on at the board to provision a key")
    key = _key_arg(args)
    _store_key(app, key, now_ms)
    app.record(now_ms, "key_provisioned", {"by": "service switch"}, {"keyed": 1})
    return {"provisioned": True}


def cmd_service(app, now_ms, args, msg):
    enter = bool(args.get("enter", True))
    base = app.state["base"]
    if enter:
        if not app.board.service_switch():
            raise CommandRefused(proto.E_NEEDS_SERVICE_SWITCH, "service mode needs the key switch on")
        if base not in (vocab.LOCKED, vocab.OPEN, vocab.JACKPOT_PENDING):
            raise CommandRefused(proto.E_STATE, "service from %s is not allowed" % base)
        app.set_base(now_ms, vocab.SERVICE, "service", {"prior": base})
    else:
        if base != vocab.SERVICE:
            raise CommandRefused(proto.E_STATE, "not in service")
        app.set_base(now_ms, vocab.LOCKED, "service ended")
    return {"state": app.state["base"]}


def cmd_config_set(app, now_ms, args, msg):
    if app.state["base"] != vocab.SERVICE:
        raise CommandRefused(proto.E_STATE, "configuration changes only in SERVICE (table is %s)"
                             % app.state["base"])
    changes = args["changes"]
    try:
        new_cfg = config.validate(changes, app.cfg)
    except config.ConfigError as exc:
        raise CommandRefused(proto.E_BAD_ARGS, str(exc))
    old = {}
    for k in changes:
        old[k] = app.cfg[k]
    patch = {"cfg": new_cfg}
    if new_cfg["ceiling_cents"] < app.state["meter"]:
        raise CommandRefused(proto.E_BAD_ARGS, "ceiling_cents below the current meter (%d)" % app.state["meter"])
    app.record(now_ms, "config", {"old": old, "new": changes}, patch)
    app.cfg = new_cfg
    app.build_inputs(now_ms)
    return {"config": app.cfg}


def cmd_meter_set(app, now_ms, args, msg):
    if app.state["base"] != vocab.SERVICE:
        raise CommandRefused(proto.E_STATE, "meter corrections only in SERVICE")
    new = args["meter_cents"]
    reason = args["reason"]
    if not isinstance(new, int) or isinstance(new, bool) or new < 0 or new > app.cfg["ceiling_cents"]:
        raise CommandRefused(proto.E_BAD_ARGS, "meter_cents must be 0..ceiling_cents")
    if not isinstance(reason, str) or not reason:
        raise CommandRefused(proto.E_BAD_ARGS, "a correction needs a reason")
    old = app.state["meter"]
    app.record(now_ms, "correction", {"old": old, "new": new, "reason": reason},
                 {"meter": new, "corr": app.state["corr"] + (new - old)})
    return {"old": old, "new": new}


def cmd_award(app, now_ms, args, msg):
    """Pay one seat's progressive award. Refused unless the dealer's jackpot key has put the
    table in JACKPOT_PENDING, the award names this round, the seat had a token when the table
    locked and has not been paid this round, and the amount is within the meter plus the
    largest fixed award the table pays. The payment, its command id and the meter change are
    one journal record: across a power cut it happened once or not at all, and a repeat of
    the same command (same id) gets the first reply back instead of a second payment."""
    s = app.state
    cid = msg.get("id")
    for pay in s.get("pays") or ():
        if pay[0] == cid:
            return {"meter": pay[2], "amount": pay[1], "seat": pay[3], "round": s["round"], "repeat": True}
    base = s["base"]
    if base != vocab.JACKPOT_PENDING:
        raise CommandRefused(proto.E_STATE, "awards only in JACKPOT_PENDING, after the dealer's jackpot key "
                             "(table is %s)" % base)
    seat = args["seat"]
    amount = args["amount_cents"]
    round_no = args["round"]
    meter_part = args.get("meter_cents", 0)
    reset = args.get("reset", False)
    hand = args.get("hand", "")
    if not _whole(round_no) or round_no != s["round"]:
        raise CommandRefused(proto.E_STATE, "award names round %r; this is round %d" % (round_no, s["round"]))
    if not _whole(seat) or seat < 0 or seat >= app.seats:
        raise CommandRefused(proto.E_BAD_ARGS, "seat out of range")
    if not _whole(amount) or amount < 0:
        raise CommandRefused(proto.E_BAD_ARGS, "amount_cents must be a whole number >= 0")
    if not _whole(meter_part) or not 0 <= meter_part <= amount:
        raise CommandRefused(proto.E_BAD_ARGS, "meter_cents must be a whole number from 0 to amount_cents")
    if not isinstance(reset, bool) or not isinstance(hand, str) or len(hand) > 32:
        raise CommandRefused(proto.E_BAD_ARGS, "reset must be true/false and hand a short name")
    # A linked table has one progressive, the pool's: its own meter pays nothing, and the pool's
    # part of an award names the pool's lock (the pool commits it on this award's signed event).
    pool = s.get("pool")
    pool_part = args.get("pool_cents", 0)
    lock_no = args.get("lock")
    if pool is not None and (meter_part or reset):
        raise CommandRefused(proto.E_STATE, "table linked to pool %s: its progressive is the pool's, the own "
                             "meter pays nothing (tablectl jackpot pays through the pool)" % pool)
    if not _whole(pool_part) or not 0 <= pool_part <= amount:
        raise CommandRefused(proto.E_BAD_ARGS, "pool_cents must be a whole number from 0 to amount_cents")
    if pool_part and pool is None:
        raise CommandRefused(proto.E_STATE, "no pool pays this table: it is not linked")
    if pool_part and (not _whole(lock_no) or lock_no < 1):
        raise CommandRefused(proto.E_BAD_ARGS, "a pool award names the pool's lock (lock >= 1)")
    if not s.get("elig", 0) & (1 << seat):
        raise CommandRefused(proto.E_NOT_ELIGIBLE, "seat %d had no progressive token when round %d locked"
                             % (seat + 1, s["round"]))
    if s.get("paid", 0) & (1 << seat):
        raise CommandRefused(proto.E_PAID, "seat %d was paid in round %d already" % (seat + 1, s["round"]))
    if meter_part > s["meter"]:
        raise CommandRefused(proto.E_BAD_ARGS, "award %d exceeds the meter %d" % (meter_part, s["meter"]))
    # What the house pays (the part not from the meter) is at most the largest fixed award, or
    # a straight flush's 10 % of the meter at lockout when the meter is short (rulebook 000 rule
    # 9.3; docs/GAMES.md, short meter): so no award can be larger than the schedule allows.
    house_limit = meter.house_limit(app.cfg, s["frozen"])
    if amount - meter_part - pool_part > house_limit:
        raise CommandRefused(proto.E_BAD_ARGS, "the part not from the meter (%d) is above what the schedule "
                             "lets the house pay (%d)" % (amount - meter_part - pool_part, house_limit))
    patch = {"wins": (s["wins"] + amount) % meter.ROLLOVER_CENTS, "hits": s["hits"] + 1, "award": amount,
             "paid": s.get("paid", 0) | (1 << seat)}
    patch["awarded"] = (s["awarded"] + meter_part) % meter.ROLLOVER_CENTS
    meter_after, over_after, seed_added = meter.after_award(s["meter"], s["over"], meter_part, reset, app.cfg)
    if reset:
        patch["seeded"] = (s["seeded"] + seed_added) % meter.ROLLOVER_CENTS
        patch["over"] = over_after
    patch["meter"] = meter_after
    patch["pays"] = list(s.get("pays") or ()) + [[cid, amount, meter_after, seat]]
    fields = {"seat": seat, "round": s["round"], "amount": amount, "from_meter": meter_part > 0,
              "meter_cents": meter_part, "reset": reset, "hand": hand, "id": cid,
              "meter_before": s["meter"], "seed_added": seed_added}
    if pool_part:
        fields["pool_cents"] = pool_part
        fields["lock"] = lock_no
    app.record(now_ms, "award", fields, patch)
    if app.state.get("paid", 0) != patch["paid"]:
        raise CommandRefused(proto.E_STORAGE, "the award could not be recorded; nothing was paid")
    app.award_until_ms = now_ms + app.cfg["award_show_ms"]
    return {"meter": app.state["meter"], "amount": amount, "seat": seat, "round": s["round"]}


def cmd_clear(app, now_ms, args, msg):
    # No "host" fault is ever here: the command's own authentic frame cleared it (link.py,
    # host_heard) before the command ran.
    cleared = []
    for code in list(app.faults):
        if code in ("config", "selfcheck"):
            continue  # these clear only by fixing the cause and rebooting
        if code == "storage":
            continue  # only `storage_repair` clears it, journaled with what was skipped
        if code == "pool":
            continue  # clears when the host hears the linked pool again (`linked`)
        if code == "key":
            continue  # clears when a new key is stored in both slots (provision, keystore.py)
        app.clear_fault(code, now_ms)
        cleared.append(code)
    # A jam is not cleared here: it ends when the acceptor lets go of its line (the coin decoder
    # sees that on its next poll), and no command may end it sooner.
    if app.state.get("award") is not None:
        app.record(now_ms, "award_cleared", {}, {"award": None})
        app.award_until_ms = 0
    return {"cleared": cleared}


def cmd_linked(app, now_ms, args, msg):
    """The table feeds a linked pool (docs/POOL.md): show the pool's amount (`meter_cents`), or
    `lost`: the host has not heard the pool for its configured time, so the progressive is
    off (fault `pool`: every acceptor inhibited, POOL OFF shown) until an amount comes again.
    The board still journals its own meters; only what the display shows changes."""
    if args.get("lost") is True:
        app.set_fault("pool", "linked pool lost", now_ms)
        return {"faults": list(app.faults)}
    joined = app.state.get("pool")
    if args.get("leave") is True:
        # Leaving gives the own meter back its awards: only with the service key switch turned
        # by hand, never by a host alone.
        if not app.board.service_switch():
            raise CommandRefused(proto.E_NEEDS_SERVICE_SWITCH, "leaving a linked pool needs the service key switch on")
        if joined is not None:
            app.record(now_ms, "linked", {"pool": None}, {"pool": None})
            if app.state.get("pool") is not None:
                raise CommandRefused(proto.E_STORAGE, "leaving the pool could not be recorded")
        app.linked_cents = None
        app.clear_fault("pool", now_ms)
        return {"pool": None, "faults": list(app.faults)}
    cents = args["meter_cents"]
    if not _whole(cents) or not 0 <= cents <= config.METER_LIMIT_CENTS:
        raise CommandRefused(proto.E_BAD_ARGS, "meter_cents must be 0..%d" % config.METER_LIMIT_CENTS)
    name = args.get("pool")
    if name is not None:
        if not isinstance(name, str) or not 0 < len(name) <= 64:
            raise CommandRefused(proto.E_BAD_ARGS, "pool must be a pool's name (1 to 64 characters)")
        if joined is not None and joined != name:
            raise CommandRefused(proto.E_STATE, "linked to pool %s: leave it first (service key switch)" % joined)
        if joined is None:
            app.record(now_ms, "linked", {"pool": name}, {"pool": name})
            if app.state.get("pool") != name:
                raise CommandRefused(proto.E_STORAGE, "joining the pool could not be recorded")
    elif joined is None:
        raise CommandRefused(proto.E_STATE, "not linked to a pool: name it (pool)")
    app.linked_cents = cents
    app.clear_fault("pool", now_ms)
    return {"faults": list(app.faults)}


def cmd_key_change(app, now_ms, args, msg):
    key = _key_arg(args)
    _store_key(app, key, now_ms)
    app.record(now_ms, "key_changed", {}, {"keyed": 1})
    return {"changed": True}


def cmd_storage_repair(app, now_ms, args, msg):
    """The signed service action that clears a storage fault (service key switch on): the
    journal is rewritten from the state before the bad record, sequence numbers jump past
    every number the bad bytes could have held, and the repair is the first event after it,
    naming the numbers skipped, so the host records the gap instead of waiting for it."""
    if not app.board.service_switch():
        raise CommandRefused(proto.E_NEEDS_SERVICE_SWITCH, "storage repair needs the service key switch on")
    journal = app.journal
    if journal is None or not journal.frozen:
        raise CommandRefused(proto.E_STATE, "no storage fault to repair")
    reason = args.get("reason")
    if not isinstance(reason, str) or not reason:
        raise CommandRefused(proto.E_BAD_ARGS, "a storage repair needs a reason")
    detail = app.fault_detail.get("storage", "")
    try:
        skipped = journal.repair(app.state)
    except OSError as exc:
        raise CommandRefused(proto.E_STORAGE, "repair failed, storage still faulted: %r" % (exc,))
    if "storage" in app.faults:
        app.faults.remove("storage")
        app.fault_detail.pop("storage", None)
    app.record(now_ms, "storage_repaired", {"skipped_from": skipped[0], "skipped_to": skipped[1],
                                              "detail": detail, "reason": reason[:80],
                                              "unrecorded": app.unrecorded})
    app.unrecorded = 0
    app.snapshot(now_ms)
    return {"skipped_from": skipped[0], "skipped_to": skipped[1], "meter": app.state["meter"]}


def _key_arg(args):
    text = args["key"]
    # Every character checked here, not left to bytes.fromhex (which skips spaces on some ports)
    if not isinstance(text, str) or len(text) != 64 or [c for c in text if c not in "0123456789abcdef"]:
        raise CommandRefused(proto.E_BAD_ARGS, "key must be 32 bytes (64 hex digits)")
    return bytes.fromhex(text)


def _store_key(app, key, now_ms):
    try:
        app.store_key(key, now_ms)
    except OSError as exc:
        raise CommandRefused(proto.E_STORAGE, "the flash did not keep the key (%r): the old one stays" % (exc,))


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


class CommandRefused(Exception):
    def __init__(self, code, text):
        super().__init__(text)  # MicroPython's Exception has no __init__ attribute to call
        self.code = code
        self.text = text


def cmd_verify_software(app, now_ms, args, msg):
    """The regulator's check: HMAC-SHA256 and HMAC-SHA1 of the named firmware files keyed with
    the seed they chose (16..64 bytes as lower-case hex), computed from the files as they are."""
    seed = args["seed"]
    if not isinstance(seed, str) or not 32 <= len(seed) <= 128 or len(seed) % 2 or \
            [c for c in seed if c not in "0123456789abcdef"]:
        raise CommandRefused(proto.E_BAD_ARGS, "seed must be 16..64 bytes as lower-case hex digits")
    names = args["names"]
    if not isinstance(names, list) or not names or len(names) > 8 or \
            [n for n in names if not isinstance(n, str) or n.startswith("/") or ".." in n]:
        raise CommandRefused(proto.E_BAD_ARGS, "names must be 1..8 firmware file names")
    return {"files": app.board.file_macs(names, bytes.fromhex(seed))}
