"""The table controller: state machine, meters, outbox and link, driven by step(now_ms).

Imports no `machine`: the board object (boards/contract.py) is handed in and every clock value
is an argument, so tests and the virtual board drive time. One step() per main-loop turn does
all the work in a fixed order; nothing here blocks.

Money rule: a change to a meter is an event appended to the journal before it is applied, and
every figure is integer cents (see journal.py for why that makes power cuts harmless).
"""
import gc
import json
import sys

from table import config as config_mod
from table import protocol as proto
from table.debounce import Debouncer
from table.display import render
from table.journal import Journal, StorageError
from table.pulse import (BAD_COUNT, COIN, GLITCH, JAM, JAM_CLEARED, OUT_OF_SPEC, CoinDecoder)

FIRMWARE_VERSION = "0.1.0"
# What the board runs, as MicroPython reports it (status shows it): platform and interpreter version.
RUNTIME = "%s %s %s" % (sys.platform, sys.implementation.name, ".".join(str(v) for v in sys.implementation.version[:3]))

OPEN = "OPEN"
LOCKED = "LOCKED"
JACKPOT_PENDING = "JACKPOT_PENDING"
SERVICE = "SERVICE"
FAULT = "FAULT"

KEY_NAMES = ("lock", "unlock", "jackpot", "service")
SPOT_NAMES = ("ante", "bet", "bonus")

# Cumulative meters roll over here (12 digits of cents), as electromechanical meters do;
# the host computes differences modulo this.
ROLLOVER_CENTS = 10 ** 12
# Outbox slots kept for state and fault events once coin-in has been stopped for a full outbox.
OUTBOX_RESERVE = 16
# Unacknowledged events on the wire at once; the host acknowledges in batches.
SEND_WINDOW = 64
# Rate limits for events a noisy line or an attacker could flood the outbox with.
NOISE_EVENT_MS = 1000
REPLY_CACHE = 16
READ_REPLY_CACHE = 4
MAX_RESEND_BACKOFF = 8
# Refused frames (bad MAC, replays, wrong state, unknown versions...): the first few in each
# window are journaled one by one, the rest counted and journaled as one event when the window
# ends. A flood of any frame therefore costs at most REFUSALS_PER_WINDOW + 1 journal records a
# minute: it cannot wear the flash out or fill the outbox.
REFUSALS_PER_WINDOW = 4
REFUSAL_WINDOW_MS = 60000
# Commands that only read. Their replies are large (a status reply held as a dict costs ~2 KB),
# so only the last READ_REPLY_CACHE are kept, as the encoded frame: a host repeating one because
# the reply was lost gets the first reply, as with any command, at a fraction of the heap.
READ_ONLY_COMMANDS = proto.READ_COMMANDS


def session_nonce(boots):
    """This boot's session: the persistent boot count (never repeats while the journal works)
    and 32 random bits (never repeat in practice even if it does not)."""
    try:
        import os
        bits = os.urandom(4)
    except (ImportError, AttributeError, OSError):
        import random
        bits = bytes(random.getrandbits(8) for _ in range(4))
    return "%d.%s" % (boots, "".join("%02x" % b for b in bits))


def seat_bits(flags):
    """[bool per seat] -> bit mask (seat 0 = bit 0): how eligibility and payments are journaled."""
    mask = 0
    for i in range(len(flags)):
        if flags[i]:
            mask |= 1 << i
    return mask


def initial_state(cfg):
    state = {
        "meter": cfg["seed_cents"], "over": 0, "res": 0,
        "contrib": 0, "rcontrib": 0, "seeded": cfg["seed_cents"], "awarded": 0,
        "wins": 0, "hits": 0, "corr": 0, "round": 1, "base": OPEN, "frozen": cfg["seed_cents"],
        "cfg": cfg, "boots": 0, "award": None,
        # This round's progressive: seats that had a token when the table locked (bit mask),
        # seats paid, and each payment's command id and reply (a repeated award gets its reply).
        "elig": 0, "paid": 0, "pays": [],
    }
    for seat in range(config_mod.MAX_SEATS):
        state["c%d" % seat] = 0
        state["t%d" % seat] = 0
    return state


class TableApp:
    def __init__(self, board, now_ms, manifest_check=None):
        self.board = board
        self.journal = Journal(board.nv)
        self.faults = []
        self.fault_detail = {}
        self.reader = proto.FrameReader()
        self.replies = {}  # command id -> reply message, for idempotent repeats
        self.reply_order = []
        self.read_replies = []  # (id, command, encoded reply frame) of the last read-only commands
        self.key = self._load_key()
        self.session = None
        self.host_counter = -1  # the last counter taken from the host in this session
        self.sent_counter = 0   # the last counter this board put on a frame in this session
        self.last_host_ms = now_ms
        self.host_connected = False
        self.send_seq = 1
        self.last_send_ms = 0
        self.last_ack_progress_ms = now_ms
        self.resend_backoff = 1
        self.last_heartbeat_ms = 0
        self.display_text = None
        self.test_until_ms = 0
        self.award_until_ms = 0
        self.linked_cents = None  # a linked pool's amount to show instead of the own meter (issue 18)
        self.noise = {}  # (kind, seat) -> [count, first_ms]
        self.suppressed = 0
        self.pulses = []
        self.outcomes = []
        self.frames_refused = 0
        self.refusal_window_ms = now_ms
        self.refusals_in_window = 0
        self.unrecorded = 0  # events that could not be made durable (storage full or faulted)
        self.refusals_held = {}  # error code -> refusals counted, not yet journaled
        self.loops = 0
        cfg = config_mod.defaults()
        try:
            self.state, fresh = self.journal.load(initial_state(cfg))
        except (StorageError, ValueError, KeyError) as exc:
            # The storage holds something we cannot read: keep it for a technician, accept nothing.
            self.state, fresh = initial_state(cfg), False
            self._set_fault("storage", str(exc))
            self.journal = None
        except OSError as exc:
            self.state, fresh = initial_state(cfg), False
            self._set_fault("storage", "cannot read storage: %r" % (exc,))
            self.journal = None
        if self.journal is not None and self.journal.corrupt:
            # A bad record that is not a torn tail: never read past it as if it were the end (that
            # would roll the meters back and reuse sequence numbers). The meters are those up to
            # the bad record, frozen and shown; coin-in stays off until a signed service action.
            self._set_fault("storage", self.journal.corrupt)
        try:
            self.cfg = config_mod.validate(self.state["cfg"], config_mod.defaults())
        except config_mod.ConfigError as exc:
            self.cfg = cfg
            self._set_fault("config", str(exc))
        self._build_inputs(now_ms)
        selfcheck = manifest_check() if manifest_check else "no manifest"
        if selfcheck not in ("ok", "no manifest"):
            self._set_fault("selfcheck", selfcheck)
        self.send_seq = self.journal.acked_seq + 1 if self.journal else 1
        if self.state.get("award") is not None:
            self.award_until_ms = now_ms + self.cfg["award_show_ms"]
        self._record(now_ms, "boot", {"boots": self.state["boots"] + 1, "fw": FIRMWARE_VERSION,
                                      "fresh": fresh, "selfcheck": selfcheck,
                                      "faults": list(self.faults)},
                     {"boots": self.state["boots"] + 1})
        self.session = session_nonce(self.state["boots"])
        self._snapshot(now_ms)
        self._update_outputs(now_ms)

    # ------------------------------------------------------------------ set-up helpers
    def _build_inputs(self, now_ms):
        cfg = self.cfg
        self.seats = min(cfg["seats"], len(self.board.pulse_sources))
        self.decoders = [CoinDecoder(cfg["pulses_per_coin"], cfg["pulse_min_ms"], cfg["pulse_max_ms"],
                                     cfg["coin_gap_ms"], cfg["jam_ms"]) for _ in range(self.seats)]
        self.keys = Debouncer(cfg["debounce_ms"], self.board.read_keys())
        self.spots = Debouncer(cfg["debounce_ms"], self.board.read_spots())
        self.jammed = [False] * self.seats

    def _load_key(self):
        try:
            data = self.board.nv.read("key.bin")
        except OSError:
            return None
        if not data or len(data) != 36:
            return None
        key, crc = data[:32], data[32:]
        if proto.crc32(key).to_bytes(4, "little") != crc:
            return None
        return proto.MacKey(key)

    def _store_key(self, key):
        self.board.nv.write("key.bin", key + proto.crc32(key).to_bytes(4, "little"))
        self.key = proto.MacKey(key)

    # ------------------------------------------------------------------ state and events
    def base_state(self):
        return self.state["base"]

    def table_state(self):
        return FAULT if self.faults else self.state["base"]

    def progressive_enabled(self):
        return not self.faults

    def _record(self, now_ms, kind, fields=None, patch=None):
        """Journal an event (durably), then apply its patch. Returns the seq, or None."""
        if self.journal is None:
            return None  # storage fault: nothing can be made durable, so nothing is changed
        unacked = self.journal.unacked_count()
        limit = self.cfg["outbox_limit"]
        if unacked >= limit and patch is None:
            self.suppressed += 1  # reported in the next event that gets through
            return None
        if unacked >= limit + OUTBOX_RESERVE:
            return None
        if self.journal.frozen:
            self.unrecorded += 1
            return None
        event = {"t": proto.EVENT, "b": self.board.board_id, "k": kind, "ms": now_ms}
        if fields:
            for k in fields:
                event[k] = fields[k]
        if self.suppressed:
            event["suppressed"] = self.suppressed
            self.suppressed = 0
        if patch:
            event["p"] = patch
        try:
            seq = self.journal.append(event)
        except OSError as exc:
            # Flash full or failing: the event did not become durable, so it is not applied.
            # A fault, shown and reported (in status and when the storage works again): coin-in
            # stops, so at most the token that found the flash full goes unrecorded.
            self.unrecorded += 1
            self.journal.frozen = True
            if "storage" not in self.faults:
                self.faults.append("storage")
                self.fault_detail["storage"] = ("flash full or failing: %r" % (exc,))[:48]
            return None
        if patch:
            for k in patch:
                self.state[k] = patch[k]
        if self.journal.unacked_count() >= limit - OUTBOX_RESERVE and "outbox" not in self.faults:
            self._set_fault("outbox", "outbox holds %d unacknowledged events" % self.journal.unacked_count(), now_ms)
        return seq

    def _set_fault(self, code, detail, now_ms=None):
        if code in self.faults:
            return
        self.faults.append(code)
        # Short, so a status reply with every fault still fits one frame.
        detail = str(detail)[:48]
        self.fault_detail[code] = detail
        if now_ms is not None:
            self._record(now_ms, "fault", {"code": code, "detail": detail, "state": self.state["base"]})

    def _clear_fault(self, code, now_ms):
        if code not in self.faults:
            return
        self.faults.remove(code)
        self.fault_detail.pop(code, None)
        self._record(now_ms, "fault_cleared", {"code": code, "state": self.table_state()})

    def _set_base(self, now_ms, new_state, reason, extra_patch=None):
        old = self.state["base"]
        patch = {"base": new_state}
        if extra_patch:
            for k in extra_patch:
                patch[k] = extra_patch[k]
        self._record(now_ms, "state", {"from": old, "to": new_state, "reason": reason,
                                       "round": patch.get("round", self.state["round"]),
                                       "meter": self.state["meter"]}, patch)

    def _snapshot(self, now_ms):
        self._record(now_ms, "meters", self.meters())

    def meters(self):
        s = self.state
        out = {"meter": s["meter"], "over": s["over"], "res": s["res"], "contrib": s["contrib"],
               "rcontrib": s["rcontrib"], "seeded": s["seeded"], "awarded": s["awarded"],
               "wins": s["wins"], "hits": s["hits"], "corr": s["corr"], "round": s["round"],
               "frozen": s["frozen"], "seat_coins": [s["c%d" % i] for i in range(self.seats)],
               "seat_tokens": [s["t%d" % i] for i in range(self.seats)]}
        return out

    # ------------------------------------------------------------------ the main loop turn
    def step(self, now_ms):
        self.loops += 1
        self._link_in(now_ms)
        self._keys_and_spots(now_ms)
        self._coin_in(now_ms)
        self._host_watch(now_ms)
        self._flush_noise(now_ms, False)
        if self.refusals_held and now_ms - self.refusal_window_ms >= REFUSAL_WINDOW_MS:
            self._flush_refusals(now_ms)
            self.refusal_window_ms = now_ms
        self._link_out(now_ms)
        self._update_outputs(now_ms)
        if self.journal is not None and not self.journal.frozen:
            if self.journal.wants_compaction():
                self.journal.compact(self.state)
            elif self.journal.wants_ack_checkpoint():
                self.journal.checkpoint(self.state)
        self.board.feed_watchdog()

    # ------------------------------------------------------------------ coin-in
    def _coin_in(self, now_ms):
        pulses = self.pulses
        out = self.outcomes
        for seat in range(self.seats):
            source = self.board.pulse_sources[seat]
            del pulses[:]
            del out[:]
            source.poll(now_ms, pulses)
            decoder = self.decoders[seat]
            for end_ms, width_ms in pulses:
                decoder.pulse(end_ms, width_ms, out)
            decoder.poll(now_ms, source.held_ms(now_ms), out)
            for outcome, detail in out:
                self._coin_outcome(now_ms, seat, outcome, detail)

    def seat_accepting(self, seat):
        """The single rule for whether a seat's token is credited (and its acceptor enabled)."""
        return (self.state["base"] == OPEN and not self.faults and not self.jammed[seat]
                and self.state["t%d" % seat] < self.cfg["tokens_per_round"])

    def _coin_outcome(self, now_ms, seat, outcome, detail):
        if outcome == COIN:
            # detail is when the token's last pulse ended: every token event carries it
            # ("pe", board ms) so the host can measure pulse-to-ledger latency.
            if self.seat_accepting(seat):
                self._credit(now_ms, seat, detail)
            elif self.state["base"] != OPEN:
                self._record(now_ms, "late_coin", {"seat": seat, "state": self.state["base"],
                                                   "round": self.state["round"], "pe": detail})
            elif self.faults or self.jammed[seat]:
                self._record(now_ms, "refused_coin", {"seat": seat, "faults": list(self.faults),
                                                      "jammed": self.jammed[seat], "pe": detail})
            else:
                self._record(now_ms, "extra_coin", {"seat": seat, "round": self.state["round"], "pe": detail})
        elif outcome in (GLITCH, OUT_OF_SPEC):
            self._note_noise(now_ms, outcome, seat, detail)
        elif outcome == BAD_COUNT:
            self._record(now_ms, "bad_count", {"seat": seat, "pulses": detail})
        elif outcome == JAM:
            self.jammed[seat] = True
            self._record(now_ms, "jam", {"seat": seat, "held_ms": detail})
        elif outcome == JAM_CLEARED:
            self.jammed[seat] = False
            self._record(now_ms, "jam_cleared", {"seat": seat})

    def _credit(self, now_ms, seat, pulse_end_ms=None):
        s = self.state
        cfg = self.cfg
        increment = cfg["increment_cents"]
        room = cfg["ceiling_cents"] - s["meter"]
        to_meter = increment if increment <= room else max(room, 0)
        to_over = increment - to_meter
        patch = {
            "meter": s["meter"] + to_meter,
            "over": s["over"] + to_over,
            "res": s["res"] + cfg["reserve_cents"],
            "contrib": (s["contrib"] + increment) % ROLLOVER_CENTS,
            "rcontrib": (s["rcontrib"] + cfg["reserve_cents"]) % ROLLOVER_CENTS,
            "c%d" % seat: (s["c%d" % seat] + 1) % ROLLOVER_CENTS,
            "t%d" % seat: s["t%d" % seat] + 1,
        }
        self._record(now_ms, "coin", {"seat": seat, "round": s["round"], "inc": increment,
                                      "to_meter": to_meter, "to_over": to_over,
                                      "reserve": cfg["reserve_cents"], "pe": pulse_end_ms}, patch)

    def _note_noise(self, now_ms, kind, seat, width_ms):
        entry = self.noise.get((kind, seat))
        if entry is None:
            self.noise[(kind, seat)] = [1, now_ms, width_ms]
        else:
            entry[0] += 1
            entry[2] = width_ms

    def _flush_noise(self, now_ms, force):
        if not self.noise:
            return
        for key in list(self.noise):
            count, first_ms, width_ms = self.noise[key]
            if force or now_ms - first_ms >= NOISE_EVENT_MS:
                del self.noise[key]
                self._record(now_ms, key[0], {"seat": key[1], "count": count, "last_width_ms": width_ms})

    # ------------------------------------------------------------------ keypad and bet spots
    def _keys_and_spots(self, now_ms):
        changed, held = self.keys.update(self.board.read_keys(), now_ms)
        if changed:
            for bit in range(len(KEY_NAMES)):
                if changed & (1 << bit) and held & (1 << bit):
                    self.key_pressed(now_ms, KEY_NAMES[bit])
        changed, covered = self.spots.update(self.board.read_spots(), now_ms)
        if changed:
            for bit in range(self.seats * 3):
                if changed & (1 << bit):
                    self._record(now_ms, "spot", {"seat": bit // 3, "spot": SPOT_NAMES[bit % 3],
                                                  "on": bool(covered & (1 << bit))})

    def key_pressed(self, now_ms, name):
        base = self.state["base"]
        self._record(now_ms, "key", {"key": name, "state": self.table_state()})
        handler = _KEY_ACTIONS.get((name, base))
        if handler is not None:
            handler(self, now_ms)

    def _lock(self, now_ms):
        # The meter at lockout is what this round's progressive awards are computed from, and the
        # seats with a token now are the only ones this round's awards may pay.
        elig = seat_bits([self.state["t%d" % i] > 0 for i in range(self.seats)])
        self._set_base(now_ms, LOCKED, "lock", {"frozen": self.state["meter"], "elig": elig,
                                                "paid": 0, "pays": []})

    def _unlock(self, now_ms):
        patch = {"round": self.state["round"] + 1, "elig": 0, "paid": 0, "pays": []}
        for seat in range(config_mod.MAX_SEATS):
            patch["t%d" % seat] = 0
        self._set_base(now_ms, OPEN, "unlock", patch)
        # The round's closing snapshot: the host stores it and audits the events between two.
        self._snapshot(now_ms)

    def _jackpot(self, now_ms):
        self._set_base(now_ms, JACKPOT_PENDING, "jackpot key")

    def _service_request(self, now_ms):
        if not self.board.service_switch():
            self._record(now_ms, "service_refused", {"reason": "service key switch is off"})
            return
        self._record(now_ms, "service_requested", {"state": self.state["base"]})

    # ------------------------------------------------------------------ host watch
    def _host_watch(self, now_ms):
        timeout = self.cfg["host_timeout_ms"]
        if timeout and now_ms - self.last_host_ms > timeout:
            if "host" not in self.faults:
                self._set_fault("host", "host silent for %d ms" % (now_ms - self.last_host_ms), now_ms)
        if self.journal is not None and "outbox" in self.faults:
            if self.journal.unacked_count() < self.cfg["outbox_limit"] // 2:
                self._clear_fault("outbox", now_ms)

    # ------------------------------------------------------------------ outputs
    def _update_outputs(self, now_ms):
        for seat in range(self.board.max_seats):
            if seat < self.seats:
                self.board.set_inhibit(seat, not self.seat_accepting(seat))
                self.board.set_lamp(seat, self.state["t%d" % seat] > 0)
            else:
                self.board.set_inhibit(seat, True)
                self.board.set_lamp(seat, False)
        meter = self.state["meter"] if self.linked_cents is None else self.linked_cents
        view = {"state": self.state["base"], "faults": self.faults, "meter": meter,
                "award": self.state.get("award"), "award_until_ms": self.award_until_ms,
                "jammed": [i for i in range(self.seats) if self.jammed[i]],
                "test_until_ms": self.test_until_ms}
        text, blink = render(view, now_ms, self.board.display_digits)
        if (text, blink) != self.display_text:
            self.display_text = (text, blink)
            self.board.show(text, blink)

    # ------------------------------------------------------------------ link: in
    def _link_in(self, now_ms):
        data = self.board.link_read()
        if not data:
            return
        for frame in self.reader.feed(data):
            try:
                self._handle_frame(now_ms, frame)
            except Exception as exc:  # noqa: a frame we cannot handle must not reset the board
                # (the host would resend it and reset it again); log it and go on.
                self.frames_refused += 1
                self._record(now_ms, "frame_error", {"t": str(frame.message.get("t")), "error": repr(exc)[:120]})

    def _seal(self, message):
        """The trust rule, outgoing: a provisioned board signs every frame it sends."""
        if self.key is None:
            return proto.encode_frame(message)
        self.sent_counter += 1
        return proto.sealed_frame(message, self.key, self.session, self.sent_counter)

    def _send(self, message):
        try:
            frame = self._seal(message)
        except proto.FrameError:
            # A reply too long for one frame (e.g. checksums of every file): say so instead.
            frame = self._seal(proto.reply_error(message.get("id", -1), proto.E_BAD_ARGS,
                                                 "reply too long for one frame: ask for less"))
        self.board.link_write(frame)

    def _handle_frame(self, now_ms, frame):
        msg = frame.message
        kind = msg.get("t")
        if frame.version != proto.VERSION and kind != proto.HELLO:
            # Only hello may come in another version's frame (that is how versions are agreed);
            # anything else in one could mean something else: not acted on. A command is told.
            if kind == proto.COMMAND:
                self._refuse(now_ms, msg.get("id"), msg.get("c"), proto.E_VERSION,
                             "frame version %d; this board speaks %d" % (frame.version, proto.VERSION))
            else:
                self.frames_refused += 1
            return
        if kind == proto.HELLO:
            self._hello(now_ms, msg)
            return
        if kind in (proto.EVENT, proto.REPLY):
            self.frames_refused += 1  # the board's own kinds: nothing a host sends
            return
        if self.key is not None and not (kind == proto.COMMAND and msg.get("c") == proto.PROVISION):
            # The trust rule, incoming: signed, this session, a counter above the last one taken.
            # Anything else changes nothing, releases nothing and does not count as the host.
            code, detail = proto.check_sealed(frame, self.key, self.session, self.host_counter)
            if code is not None:
                if kind == proto.COMMAND:
                    self._refuse(now_ms, msg.get("id"), msg.get("c"), code, detail)
                else:
                    self.frames_refused += 1
                    self._note_refusal(now_ms, code, {"frame": str(kind)[:8], "err": code, "msg": detail[:60]})
                return
            self.host_counter = detail
        elif kind not in (proto.ACK, proto.HEARTBEAT, proto.COMMAND):
            self.frames_refused += 1
            return
        self.last_host_ms = now_ms
        if "host" in self.faults:
            self._clear_fault("host", now_ms)
        if kind == proto.ACK:
            seq = msg.get("q")
            if isinstance(seq, int) and self.journal is not None:
                if self.journal.ack(seq):
                    self.last_ack_progress_ms = now_ms
                    self.resend_backoff = 1
                if self.send_seq <= self.journal.acked_seq or msg.get("gap"):
                    # gap: the host lost a frame past seq; go again from there at once
                    self.send_seq = self.journal.acked_seq + 1
        elif kind == proto.HEARTBEAT:
            pass
        elif kind == proto.COMMAND:
            self._handle_command(now_ms, frame)

    def _hello(self, now_ms, msg):
        """Unauthenticated by design (it is how a host finds the session), so it changes nothing
        but where delivery restarts: a (re)connected host gets everything not acknowledged."""
        self.host_connected = True
        version = proto.choose_version(msg.get("v") or ())
        self._send(proto.hello(self.board.board_id, FIRMWARE_VERSION, self.state["boots"], "board",
                               self.session, self.host_counter,
                               self.journal.acked_seq if self.journal is not None else None))
        if version is None:
            self._note_refusal(now_ms, proto.E_VERSION, {"offered": str(msg.get("v"))[:40],
                                                         "err": proto.E_VERSION}, "version_mismatch")
        if self.journal is not None:
            self.send_seq = self.journal.acked_seq + 1
            self.resend_backoff = 1

    # ------------------------------------------------------------------ link: out
    def _link_out(self, now_ms):
        journal = self.journal
        if journal is None:
            return
        if journal.unacked and now_ms - self.last_ack_progress_ms >= self.cfg["resend_ms"] * self.resend_backoff \
                and self.send_seq > journal.acked_seq + 1:
            self.send_seq = journal.acked_seq + 1  # nothing acknowledged lately: go again
            self.last_ack_progress_ms = now_ms
            # Each fruitless resend waits twice as long (up to 8x): a slow or queued link is not
            # flooded with copies of the window it is still carrying.
            self.resend_backoff = min(self.resend_backoff * 2, MAX_RESEND_BACKOFF)
        sent = 0
        while self.send_seq < journal.next_seq and sent < 16:
            index = journal.index_at_or_after(self.send_seq)
            if index >= len(journal.unacked) or index >= SEND_WINDOW:
                if index >= len(journal.unacked):
                    self.send_seq = journal.next_seq
                break
            self.board.link_write(proto.frame_from_payload(journal.read_payload(index), self.key))
            self.send_seq = journal.unacked[index][0] + 1
            sent += 1
            self.last_send_ms = now_ms
        if now_ms - self.last_heartbeat_ms >= self.cfg["heartbeat_ms"]:
            self.last_heartbeat_ms = now_ms
            self._send(proto.heartbeat(journal.next_seq - 1))

    # ------------------------------------------------------------------ commands
    def _handle_command(self, now_ms, frame):
        msg = frame.message
        cid = msg.get("id")
        name = msg.get("c")
        args = msg.get("a")
        if not isinstance(cid, int) or not isinstance(name, str) or not isinstance(args, dict):
            self._refuse(now_ms, cid, name, proto.E_BAD_ARGS, "command needs id, c and a")
            return
        cached = self.replies.get(cid)
        if cached is not None and cached[0] == name:
            self._send(cached[1])  # a repeated command gets the first reply, and does nothing
            return
        for read_id, read_name, payload in self.read_replies:
            if read_id == cid and read_name == name:
                self._send(json.loads(payload))
                return
        handler = _COMMANDS.get(name)
        if handler is None:
            self._refuse(now_ms, cid, name, proto.E_UNKNOWN, "no such command: %s" % name)
            return
        if name in proto.MONEY_COMMANDS and self.key is None:
            self._refuse(now_ms, cid, name, proto.E_NO_KEY, "no table key: provision one first")
            return
        if self.journal is None or self.journal.frozen:
            if name not in proto.READ_COMMANDS and name not in ("storage_repair", proto.PROVISION):
                self._refuse(now_ms, cid, name, proto.E_STORAGE,
                             "storage fault: nothing can be recorded (tablectl storage repair)")
                return
        try:
            result = handler(self, now_ms, args, msg)
        except CommandRefused as exc:
            self._refuse(now_ms, cid, name, exc.code, exc.text)
            return
        except (KeyError, TypeError, ValueError) as exc:
            self._refuse(now_ms, cid, name, proto.E_BAD_ARGS, "bad arguments: %r" % (exc,))
            return
        reply = proto.reply_ok(cid, result)
        self._remember(cid, name, reply)
        self._send(reply)

    def _remember(self, cid, name, reply):
        if name in READ_ONLY_COMMANDS:
            try:
                # Kept as the payload bytes: a repeat is signed afresh (new counter), and a payload
                # costs a fraction of the heap of the dict.
                payload = proto.encode_payload(reply)
                if len(payload) + 2 + proto.MAC_BYTES + 40 > proto.MAX_BODY_BYTES:
                    return  # too long to send; _send answers with an error instead
            except (TypeError, ValueError):
                return
            self.read_replies.append((cid, name, payload))
            if len(self.read_replies) > READ_REPLY_CACHE:
                self.read_replies.pop(0)
            return
        self.replies[cid] = (name, reply)
        self.reply_order.append(cid)
        if len(self.reply_order) > REPLY_CACHE:
            self.replies.pop(self.reply_order.pop(0), None)

    def _refuse(self, now_ms, cid, name, code, text):
        self.frames_refused += 1
        # Security-relevant refusals are journaled (the host's ledger keeps them); others only answered.
        if code in (proto.E_BAD_MAC, proto.E_REPLAY, proto.E_STATE, proto.E_NEEDS_SERVICE_SWITCH,
                    proto.E_NO_KEY, proto.E_PAID, proto.E_NOT_ELIGIBLE):
            self._note_refusal(now_ms, code, {"id": cid if isinstance(cid, int) else None,
                                              "c": str(name)[:16], "err": code, "msg": text[:80]})
        reply = proto.reply_error(cid if isinstance(cid, int) else -1, code, text)
        # A refusal of an unauthenticated or replayed frame is never remembered: the reply cache
        # holds only what an authentic host asked for.
        if isinstance(cid, int) and code not in (proto.E_BAD_MAC, proto.E_REPLAY, proto.E_VERSION):
            self._remember(cid, name, reply)
        self._send(reply)

    def _note_refusal(self, now_ms, code, fields, kind="cmd_refused"):
        """Journal a refusal, within the rate limit (see REFUSALS_PER_WINDOW)."""
        if now_ms - self.refusal_window_ms >= REFUSAL_WINDOW_MS:
            self._flush_refusals(now_ms)
            self.refusal_window_ms = now_ms
        if self.refusals_in_window < REFUSALS_PER_WINDOW:
            self.refusals_in_window += 1
            self._record(now_ms, kind, fields)
        else:
            self.refusals_held[code] = self.refusals_held.get(code, 0) + 1

    def _flush_refusals(self, now_ms):
        self.refusals_in_window = 0
        if self.refusals_held:
            held, self.refusals_held = self.refusals_held, {}
            self._record(now_ms, "cmd_refused", {"count": held, "msg": "refusals beyond %d a minute, counted"
                                                 % REFUSALS_PER_WINDOW})

    # Handlers: (self, now_ms, args, msg) -> dict of reply fields. Raise CommandRefused.
    def cmd_status(self, now_ms, args, msg):
        return {"state": self.table_state(), "base": self.state["base"], "faults": list(self.faults),
                "fault_detail": self.fault_detail, "board": self.board.board_id, "fw": FIRMWARE_VERSION,
                "seats": self.seats, "round": self.state["round"], "meter": self.state["meter"],
                "lamps": [self.state["t%d" % i] > 0 for i in range(self.seats)],
                "inhibit": [not self.seat_accepting(i) for i in range(self.seats)],
                "spots": self.spots.state, "keys": self.keys.state, "jammed": list(self.jammed),
                "next_seq": self.journal.next_seq if self.journal else None,
                "acked_seq": self.journal.acked_seq if self.journal else None,
                "unacked": self.journal.unacked_count() if self.journal else None,
                "display": self.display_text[0] if self.display_text else "",
                "frames_bad": self.reader.frames_bad, "refused": self.frames_refused,
                "key_provisioned": self.key is not None, "service_switch": self.board.service_switch(),
                "boots": self.state["boots"], "runtime": RUNTIME, "unrecorded": self.unrecorded,
                "eligible": self.state.get("elig", 0), "paid": self.state.get("paid", 0)}

    def cmd_meters(self, now_ms, args, msg):
        return self.meters()

    def cmd_config_get(self, now_ms, args, msg):
        return {"config": self.cfg}

    def cmd_lock(self, now_ms, args, msg):
        if self.state["base"] != OPEN:
            raise CommandRefused(proto.E_STATE, "lock needs OPEN, table is %s" % self.state["base"])
        self._record(now_ms, "remote", {"cmd": "lock"})
        self._lock(now_ms)
        return {"state": self.state["base"]}

    def cmd_unlock(self, now_ms, args, msg):
        if self.state["base"] not in (LOCKED, JACKPOT_PENDING):
            raise CommandRefused(proto.E_STATE, "unlock needs LOCKED, table is %s" % self.state["base"])
        self._record(now_ms, "remote", {"cmd": "unlock"})
        self._unlock(now_ms)
        return {"state": self.state["base"]}

    def cmd_display_test(self, now_ms, args, msg):
        self.test_until_ms = now_ms + int(args.get("ms", 3000))
        return {"until_ms": self.test_until_ms}

    def cmd_diag(self, now_ms, args, msg):
        return {"keys": self.board.read_keys(), "spots": self.board.read_spots(),
                "held_ms": [self.board.pulse_sources[i].held_ms(now_ms) for i in range(self.seats)],
                "coins": [self.decoders[i].coins for i in range(self.seats)],
                "glitches": [self.decoders[i].glitches for i in range(self.seats)],
                "edges_lost": [self.board.pulse_sources[i].edges_lost() for i in range(self.seats)],
                "service_switch": self.board.service_switch(),
                "mem_free": gc.mem_free() if hasattr(gc, "mem_free") else None}  # None on CPython (fuzz tests)

    def cmd_checksums(self, now_ms, args, msg):
        return {"files": file_checksums(self.board.firmware_root, args.get("names"))}

    def cmd_provision(self, now_ms, args, msg):
        if not self.board.service_switch():
            raise CommandRefused(proto.E_NEEDS_SERVICE_SWITCH,
                                 "turn the service key switch on at the board to provision a key")
        key = _key_arg(args)
        self._store_key(key)
        self._record(now_ms, "key_provisioned", {"by": "service switch"})
        return {"provisioned": True}

    def cmd_service(self, now_ms, args, msg):
        enter = bool(args.get("enter", True))
        base = self.state["base"]
        if enter:
            if not self.board.service_switch():
                raise CommandRefused(proto.E_NEEDS_SERVICE_SWITCH, "service mode needs the key switch on")
            if base not in (LOCKED, OPEN, JACKPOT_PENDING):
                raise CommandRefused(proto.E_STATE, "service from %s is not allowed" % base)
            self._set_base(now_ms, SERVICE, "service", {"prior": base})
        else:
            if base != SERVICE:
                raise CommandRefused(proto.E_STATE, "not in service")
            self._set_base(now_ms, LOCKED, "service ended")
        return {"state": self.state["base"]}

    def cmd_config_set(self, now_ms, args, msg):
        if self.state["base"] != SERVICE:
            raise CommandRefused(proto.E_STATE, "configuration changes only in SERVICE (table is %s)"
                                 % self.state["base"])
        changes = args["changes"]
        try:
            new_cfg = config_mod.validate(changes, self.cfg)
        except config_mod.ConfigError as exc:
            raise CommandRefused(proto.E_BAD_ARGS, str(exc))
        old = {}
        for k in changes:
            old[k] = self.cfg[k]
        patch = {"cfg": new_cfg}
        if new_cfg["ceiling_cents"] < self.state["meter"]:
            raise CommandRefused(proto.E_BAD_ARGS, "ceiling_cents below the current meter (%d)" % self.state["meter"])
        self._record(now_ms, "config", {"old": old, "new": changes}, patch)
        self.cfg = new_cfg
        self._build_inputs(now_ms)
        return {"config": self.cfg}

    def cmd_meter_set(self, now_ms, args, msg):
        if self.state["base"] != SERVICE:
            raise CommandRefused(proto.E_STATE, "meter corrections only in SERVICE")
        new = args["meter_cents"]
        reason = args["reason"]
        if not isinstance(new, int) or isinstance(new, bool) or new < 0 or new > self.cfg["ceiling_cents"]:
            raise CommandRefused(proto.E_BAD_ARGS, "meter_cents must be 0..ceiling_cents")
        if not isinstance(reason, str) or not reason:
            raise CommandRefused(proto.E_BAD_ARGS, "a correction needs a reason")
        old = self.state["meter"]
        self._record(now_ms, "correction", {"old": old, "new": new, "reason": reason},
                     {"meter": new, "corr": self.state["corr"] + (new - old)})
        return {"old": old, "new": new}

    def cmd_award(self, now_ms, args, msg):
        """Pay one seat's progressive award. Refused unless the dealer's jackpot key has put the
        table in JACKPOT_PENDING, the award names this round, the seat had a token when the table
        locked and has not been paid this round, and the amount is within the meter plus the
        largest fixed award the table pays. The payment, its command id and the meter change are
        one journal record: across a power cut it happened once or not at all, and a repeat of
        the same command (same id) gets the first reply back instead of a second payment."""
        s = self.state
        cid = msg.get("id")
        for pay in s.get("pays") or ():
            if pay[0] == cid:
                return {"meter": pay[2], "amount": pay[1], "seat": pay[3], "round": s["round"], "repeat": True}
        base = s["base"]
        if base != JACKPOT_PENDING:
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
        if not _whole(seat) or seat < 0 or seat >= self.seats:
            raise CommandRefused(proto.E_BAD_ARGS, "seat out of range")
        if not _whole(amount) or amount < 0:
            raise CommandRefused(proto.E_BAD_ARGS, "amount_cents must be a whole number >= 0")
        if not _whole(meter_part) or not 0 <= meter_part <= amount:
            raise CommandRefused(proto.E_BAD_ARGS, "meter_cents must be a whole number from 0 to amount_cents")
        if not isinstance(reset, bool) or not isinstance(hand, str) or len(hand) > 32:
            raise CommandRefused(proto.E_BAD_ARGS, "reset must be true/false and hand a short name")
        if not s.get("elig", 0) & (1 << seat):
            raise CommandRefused(proto.E_NOT_ELIGIBLE, "seat %d had no progressive token when round %d locked"
                                 % (seat + 1, s["round"]))
        if s.get("paid", 0) & (1 << seat):
            raise CommandRefused(proto.E_PAID, "seat %d was paid in round %d already" % (seat + 1, s["round"]))
        if meter_part > s["meter"]:
            raise CommandRefused(proto.E_BAD_ARGS, "award %d exceeds the meter %d" % (meter_part, s["meter"]))
        # What the house pays (the part not from the meter) is at most the largest fixed award, or
        # a straight flush's 10 % of the meter at lockout when the meter is short (seed 000 rule
        # 9.3; docs/GAMES.md, short meter): so no award can be larger than the schedule allows.
        house_limit = max(self.cfg["max_fixed_award_cents"], s["frozen"] // 10)
        if amount - meter_part > house_limit:
            raise CommandRefused(proto.E_BAD_ARGS, "the part not from the meter (%d) is above what the schedule "
                                 "lets the house pay (%d)" % (amount - meter_part, house_limit))
        patch = {"wins": (s["wins"] + amount) % ROLLOVER_CENTS, "hits": s["hits"] + 1, "award": amount,
                 "paid": s.get("paid", 0) | (1 << seat)}
        meter = s["meter"] - meter_part
        patch["awarded"] = (s["awarded"] + meter_part) % ROLLOVER_CENTS
        seed_added = 0
        if reset:
            # The meter restarts from its seed, then takes back overflow up to the ceiling.
            seed_added = self.cfg["seed_cents"]
            meter = meter + seed_added
            patch["seeded"] = (s["seeded"] + seed_added) % ROLLOVER_CENTS
            room = self.cfg["ceiling_cents"] - meter
            take = min(room, s["over"]) if room > 0 else 0
            meter += take
            patch["over"] = s["over"] - take
        patch["meter"] = meter
        patch["pays"] = list(s.get("pays") or ()) + [[cid, amount, meter, seat]]
        self._record(now_ms, "award", {"seat": seat, "round": s["round"], "amount": amount,
                                       "from_meter": meter_part > 0, "meter_cents": meter_part,
                                       "reset": reset, "hand": hand, "id": cid,
                                       "meter_before": s["meter"], "seed_added": seed_added}, patch)
        if self.state.get("paid", 0) != patch["paid"]:
            raise CommandRefused(proto.E_STORAGE, "the award could not be recorded; nothing was paid")
        self.award_until_ms = now_ms + self.cfg["award_show_ms"]
        return {"meter": self.state["meter"], "amount": amount, "seat": seat, "round": s["round"]}

    def cmd_clear(self, now_ms, args, msg):
        cleared = []
        for code in list(self.faults):
            if code in ("config", "selfcheck"):
                continue  # these clear only by fixing the cause and rebooting
            if code == "storage":
                continue  # only `storage_repair` clears it, journaled with what was skipped
            if code == "host":
                continue  # clears itself when the host speaks
            if code == "pool":
                continue  # clears when the host hears the linked pool again (`linked`)
            self._clear_fault(code, now_ms)
            cleared.append(code)
        for seat in range(self.seats):
            if self.jammed[seat] and self.board.pulse_sources[seat].held_ms(now_ms) == 0:
                self.jammed[seat] = False
                self.decoders[seat].jammed = False
        if self.state.get("award") is not None:
            self._record(now_ms, "award_cleared", {}, {"award": None})
            self.award_until_ms = 0
        return {"cleared": cleared}

    def cmd_linked(self, now_ms, args, msg):
        """The table feeds a linked pool (issue 18): show the pool's amount (`meter_cents`), or
        `lost`: the host has not heard the pool for its configured time, so the progressive is
        off (fault `pool`: every acceptor inhibited, POOL OFF shown) until an amount comes again.
        The board still journals its own meters; only what the display shows changes."""
        if args.get("lost") is True:
            self._set_fault("pool", "linked pool lost", now_ms)
            return {"faults": list(self.faults)}
        cents = args["meter_cents"]
        if not _whole(cents) or not 0 <= cents <= config_mod.METER_LIMIT_CENTS:
            raise CommandRefused(proto.E_BAD_ARGS, "meter_cents must be 0..%d" % config_mod.METER_LIMIT_CENTS)
        self.linked_cents = cents
        self._clear_fault("pool", now_ms)
        return {"faults": list(self.faults)}

    def cmd_key_change(self, now_ms, args, msg):
        key = _key_arg(args)
        self._store_key(key)
        self._record(now_ms, "key_changed", {})
        return {"changed": True}

    def cmd_storage_repair(self, now_ms, args, msg):
        """The signed service action that clears a storage fault (service key switch on): the
        journal is rewritten from the state before the bad record, sequence numbers jump past
        every number the bad bytes could have held, and the repair is the first event after it,
        naming the numbers skipped, so the host records the gap instead of waiting for it."""
        if not self.board.service_switch():
            raise CommandRefused(proto.E_NEEDS_SERVICE_SWITCH, "storage repair needs the service key switch on")
        journal = self.journal
        if journal is None or not journal.frozen:
            raise CommandRefused(proto.E_STATE, "no storage fault to repair")
        reason = args.get("reason")
        if not isinstance(reason, str) or not reason:
            raise CommandRefused(proto.E_BAD_ARGS, "a storage repair needs a reason")
        detail = self.fault_detail.get("storage", "")
        try:
            skipped = journal.repair(self.state)
        except OSError as exc:
            raise CommandRefused(proto.E_STORAGE, "repair failed, storage still faulted: %r" % (exc,))
        if "storage" in self.faults:
            self.faults.remove("storage")
            self.fault_detail.pop("storage", None)
        self._record(now_ms, "storage_repaired", {"skipped_from": skipped[0], "skipped_to": skipped[1],
                                                  "detail": detail, "reason": reason[:80],
                                                  "unrecorded": self.unrecorded})
        self.unrecorded = 0
        self._snapshot(now_ms)
        return {"skipped_from": skipped[0], "skipped_to": skipped[1], "meter": self.state["meter"]}


def _key_arg(args):
    text = args["key"]
    if not isinstance(text, str) or len(text) != 64:
        raise CommandRefused(proto.E_BAD_ARGS, "key must be 32 bytes (64 hex digits)")
    return bytes.fromhex(text)


def _whole(value):
    return isinstance(value, int) and not isinstance(value, bool)


class CommandRefused(Exception):
    def __init__(self, code, text):
        super().__init__(text)  # MicroPython's Exception has no __init__ attribute to call
        self.code = code
        self.text = text


_KEY_ACTIONS = {
    ("lock", OPEN): TableApp._lock,
    ("unlock", LOCKED): TableApp._unlock,
    ("jackpot", LOCKED): TableApp._jackpot,
    ("unlock", JACKPOT_PENDING): TableApp._unlock,
    ("service", OPEN): TableApp._service_request,
    ("service", LOCKED): TableApp._service_request,
}

_COMMANDS = {
    "status": TableApp.cmd_status,
    "meters": TableApp.cmd_meters,
    "config_get": TableApp.cmd_config_get,
    "lock": TableApp.cmd_lock,
    "unlock": TableApp.cmd_unlock,
    "display_test": TableApp.cmd_display_test,
    "diag": TableApp.cmd_diag,
    "checksums": TableApp.cmd_checksums,
    "provision": TableApp.cmd_provision,
    "service": TableApp.cmd_service,
    "config_set": TableApp.cmd_config_set,
    "meter_set": TableApp.cmd_meter_set,
    "award": TableApp.cmd_award,
    "clear": TableApp.cmd_clear,
    "key_change": TableApp.cmd_key_change,
    "linked": TableApp.cmd_linked,
    "storage_repair": TableApp.cmd_storage_repair,
}


def file_checksums(root, names=None):
    """sha256 hex of each firmware file (for the power-up self-check and `tablectl flash`)."""
    import hashlib
    import os
    out = {}
    if names is None:
        names = []
        _walk(root, "", names, os)
    for name in names:
        try:
            h = hashlib.sha256()
            with open(root + "/" + name, "rb") as f:
                while True:
                    chunk = f.read(512)
                    if not chunk:
                        break
                    h.update(chunk)
            out[name] = "".join("%02x" % b for b in h.digest())
        except OSError:
            out[name] = None
    return out


def _walk(root, prefix, names, os):
    for entry in sorted(os.listdir(root + ("/" + prefix if prefix else ""))):
        rel = prefix + "/" + entry if prefix else entry
        full = root + "/" + rel
        if os.stat(full)[0] & 0x4000:
            if entry in ("table", "drivers", "boards"):
                _walk(root, rel, names, os)
        elif entry.endswith(".py") or entry.endswith(".mpy") or entry == "pinmap.json":
            names.append(rel)


def manifest_checker(root):
    """A self-check that compares the firmware files with manifest.json written at deploy."""
    def check():
        try:
            with open(root + "/manifest.json") as f:
                manifest = json.load(f)
        except OSError:
            return "no manifest"
        except ValueError:
            return "manifest unreadable"
        actual = file_checksums(root, list(manifest))
        for name in manifest:
            if actual.get(name) != manifest[name]:
                return "checksum mismatch: %s" % name
        return "ok"
    return check
