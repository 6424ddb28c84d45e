"""The table controller: state machine, meters, outbox and link, driven by step(now_ms).

Imports no `machine`: the board object (boards/contract.py) is handed in and every clock value
is an argument, so tests and the virtual board drive time. One step() per main-loop turn does
all the work in a fixed order; nothing here blocks.

Money rule: a change to a meter is an event appended to the journal before it is applied, and
every figure is integer cents (see journal.py for why that makes power cuts harmless).
"""
from table import config as config_mod
from table import meter
from table import keystore
from table import protocol as proto
from table.link import HostLink
from table.vocab import FIRMWARE_VERSION, FAULT, JACKPOT_PENDING, KEY_NAMES, LOCKED, OPEN, SERVICE, SPOT_NAMES  # noqa: F401 (SERVICE: tests)
from table.debounce import Debouncer
from table.display import render
from table.journal_base import StorageError, decode_checkpoint
from table.pulse import (BAD_COUNT, COIN, GLITCH, JAM, LOST, OUT_OF_SPEC, CoinDecoder)


# Outbox slots kept for state and fault events once coin-in has been stopped for a full outbox.
OUTBOX_RESERVE = 16
# Rate limit for events a noisy line could flood the outbox with (glitches, out-of-spec pulses).
NOISE_EVENT_MS = 1000
# The wear budget: journal slots (16 bytes, a raw-log slot) in hand for the events a signal from
# outside can repeat without end, and one more slot each WEAR_REFILL_MS. A bet spot is debounced
# to a change per debounce_ms (30 ms): a chattering sensor or a hand waved over the circles made
# 33 events a second a spot, six slots each; a noise injector on the acceptor lines made a glitch
# and an out-of-spec event a second a seat, a line held and let go a jam and its clearing, a token
# through an inhibited acceptor during a fault a refused_coin of eight slots. Tokens (one slot
# each, at the acceptors' maximum rate) and the dealer's rounds take what the Pico's log is sized
# for; the rest get one slot a second on top (the sizing: docs/FIRMWARE.md, "The arithmetic"; the
# wear as measured: docs/BENCHMARKS.md, `bench_pico.py rawwear`). The burst covers play: every spot of 8 seats on and off is 48 reports. Past it an
# event of these kinds is counted (`suppressed` in the next event journaled), and a spot is
# reported in turn with its state then: a change undone meanwhile is never sent, the host's view
# was right all along. status and diag show the live inputs always.
WEAR_BUDGET_SLOTS = 512
WEAR_REFILL_MS = 1000
_WEAR_KINDS = ("glitch", "out_of_spec", "jam", "jam_cleared", "refused_coin", "bad_count", "cmd_refused",
               "frame_error", "version_mismatch", "service_refused")  # and (record's wear=True) a key that changes nothing, a host fault


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


_FILES_CHECKPOINTS = ("ck_a", "ck_b")
_RAW_CHECKPOINTS = ("rl_a", "rl_b")


def files_journal_names(nv):
    """The littlefs journal's files on this board: its checkpoints and its logs."""
    return [n for n in nv.names() if n in _FILES_CHECKPOINTS or (n.startswith("j") and n.endswith(".log"))]


def holds_raw_checkpoint(nv):
    for slot in _RAW_CHECKPOINTS:
        if decode_checkpoint(nv.read(slot)) is not None:
            return True
    return False


def open_journal(board):
    """The journal on the raw flash log when the board hands over a block device for it
    (board.log_device), else on the board's files (littlefs).

    A board that has journaled on files and is then given the raw log (a pin map that asks for
    it, on firmware that has it) keeps the files until everything in them is acknowledged:
    TableApp.step then moves the state over (move_to_raw_log). Which one is the journal after a
    cut is decided by the raw log's checkpoint, written last: with a valid one, the files are
    what a move cut short left behind, and go."""
    dev = getattr(board, "log_device", None)
    if dev is None:
        from table.journal import Journal  # imported only here: a raw-log board never pays its heap
        return Journal(board.nv)
    nv = board.nv
    left = files_journal_names(nv)
    if left:
        if not holds_raw_checkpoint(nv):
            from table.journal import Journal
            return Journal(nv)  # the move waits for the host's acknowledgements
        for name in left:
            nv.remove(name)
    from table.rawjournal import RawJournal
    return RawJournal(nv, dev, board.board_id)


def move_to_raw_log(board, journal, state):
    """The raw log's journal starting from `state` (every event acknowledged) and the files
    journal's next number, then the files removed. A cut before the raw checkpoint is written
    leaves the files as the journal (the next boot moves again); a cut after it leaves files
    that open_journal removes. Raises OSError when the flash refuses (the files stay)."""
    from table.rawjournal import RawJournal
    nv = board.nv
    for slot in _RAW_CHECKPOINTS:
        nv.remove(slot)  # torn ones of a move cut short (a valid one would have been the journal)
    raw = RawJournal(nv, board.log_device, board.board_id)
    raw.start(state, journal.next_seq)
    for name in files_journal_names(nv):
        nv.remove(name)
    return raw


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
        self.journal = open_journal(board)
        self.faults = []
        self.fault_detail = {}
        self.key = self._load_key()
        self.link = HostLink(self, now_ms)
        # A files journal on a board that has the raw log waits to be moved there (open_journal).
        # (The raw log's journal has a .log: commands.journal_kind tells them apart the same way.)
        self.journal_moves = getattr(board, "log_device", None) is not None and self.journal is not None \
            and not hasattr(self.journal, "log")
        self.journal_note = None
        self.display_text = None
        self.test_until_ms = 0
        self.award_until_ms = 0
        self.linked_cents = None  # a linked pool's amount to show instead of the own meter (docs/POOL.md)
        self.noise = {}  # (kind, seat) -> [count, first_ms]
        self.suppressed = 0
        # (see WEAR_BUDGET_SLOTS; a boot starts with it full. The virtual board may set a bigger
        # burst for the link's benches: boards/sim.py)
        self.wear_burst = getattr(board, "wear_budget_slots", WEAR_BUDGET_SLOTS)
        self.wear_budget = self.wear_burst
        self.wear_budget_ms = now_ms
        self.pulses = []
        self.outcomes = []
        self.unrecorded = 0  # events that could not be made durable (storage full or faulted)
        self._group_depth = 0
        self.loops = 0
        cfg = config_mod.defaults()
        try:
            self.state, fresh = self.journal.load(initial_state(cfg))
        except (StorageError, ValueError, KeyError) as exc:
            # The storage holds something we cannot read: keep it for a technician, accept nothing.
            self.state, fresh = initial_state(cfg), False
            self.set_fault("storage", str(exc))
            self.journal = None
        except OSError as exc:
            self.state, fresh = initial_state(cfg), False
            self.set_fault("storage", "storage failed at boot: %r" % (exc,))
            self.journal = None
        if self.journal is not None and self.journal.corrupt:
            # A bad record that is not a torn tail: never read past it as if it were the end (that
            # would roll the meters back and reuse sequence numbers). The meters are those up to
            # the bad record, frozen and shown; coin-in stays off until a signed service action.
            self.set_fault("storage", self.journal.corrupt)
        try:
            self.cfg = config_mod.validate(self.state["cfg"], config_mod.defaults())
        except config_mod.ConfigError as exc:
            self.cfg = cfg
            self.set_fault("config", str(exc))
        self._check_key()
        self.build_inputs(now_ms)
        selfcheck = manifest_check() if manifest_check else "no manifest"
        if selfcheck not in ("ok", "no manifest"):
            self.set_fault("selfcheck", selfcheck)
        self.link.restart_delivery()
        if self.state.get("award") is not None and self.state["base"] == JACKPOT_PENDING:
            # a power cut while the award was on show: show it again (its round is still open)
            self.award_until_ms = now_ms + self.cfg["award_show_ms"]
        self.record(now_ms, "boot", {"boots": self.state["boots"] + 1, "fw": FIRMWARE_VERSION,
                                      "fresh": fresh, "selfcheck": selfcheck,
                                      "faults": list(self.faults)},
                     {"boots": self.state["boots"] + 1})
        self.link.session = session_nonce(self.state["boots"])
        self.snapshot(now_ms)
        self._update_outputs(now_ms)

    # ------------------------------------------------------------------ set-up helpers
    def build_inputs(self, now_ms):
        cfg = self.cfg
        self.seats = min(cfg["seats"], len(self.board.pulse_sources))
        self.decoders = [CoinDecoder(cfg["pulses_per_coin"], cfg["pulse_min_ms"], cfg["pulse_max_ms"],
                                     cfg["coin_gap_ms"], cfg["jam_ms"]) for _ in range(self.seats)]
        self.keys = Debouncer(cfg["debounce_ms"], self.board.read_keys())
        self.spots = Debouncer(cfg["debounce_ms"], self.board.read_spots())
        self.spots_reported = self.spots.state  # the spots as the host last heard of them
        self.spot_next = 0  # where the next report's search starts: a chattering spot cannot starve the others
        self.jammed = [False] * self.seats

    def _load_key(self):
        """The key of the newest good slot (table/keystore.py); a damaged slot, or a board that
        was keyed and holds no key, is kept in key_problem for the `key` fault raised at boot."""
        key, self.key_gen, self.key_slot, self.key_problem, self.key_files = keystore.load(self.board.nv)
        self.key_lost = self.key_files and key is None  # keyed once: never an unkeyed board again
        return proto.MacKey(key) if key is not None else None

    def _check_key(self, now_ms=None):
        if self.key is None and self.state.get("keyed"):
            self.key_lost = True
            self.key_problem = self.key_problem or "journal says keyed, no key stored"
        if self.key_problem:
            self.set_fault("key", self.key_problem + ": provision a key", now_ms)

    def store_key(self, key, now_ms):
        """A new key in the other slot (raises OSError when the flash does not keep it: the old
        key stays). The key fault clears once both slots check."""
        self.key_gen, self.key_slot = keystore.store(self.board.nv, key, self.key_gen, self.key_slot)
        self.key = proto.MacKey(key)
        self.key_lost = False
        self.key_problem = keystore.load(self.board.nv)[3]
        if not self.key_problem:
            self.clear_fault("key", now_ms)

    # ------------------------------------------------------------------ state and events
    def base_state(self):
        return self.state["base"]

    def table_state(self):
        return FAULT if self.faults else self.state["base"]

    def record(self, now_ms, kind, fields=None, patch=None, wear=False):
        """Journal an event (durably), then apply its patch. Returns the seq, or None.
        wear: the event spends the wear budget (as _WEAR_KINDS do)."""
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
        budgeted = wear or kind in _WEAR_KINDS
        if budgeted and self._wear_left(now_ms) <= 0:
            self.suppressed += 1
            return None
        written = self.journal.bytes_written
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
            self._storage_failed(1, exc)
            return None
        if budgeted:
            # The slots it took; at least one (an event waiting in a group is written later).
            self.wear_budget -= max(1, (self.journal.bytes_written - written + 15) // 16)
        if patch:
            for k in patch:
                self.state[k] = patch[k]
        if self.journal.unacked_count() >= limit - OUTBOX_RESERVE and "outbox" not in self.faults:
            self.set_fault("outbox", "outbox holds %d unacknowledged events" % self.journal.unacked_count(), now_ms)
        return seq

    def _wear_left(self, now_ms):
        """The wear budget's slots in hand now (refilled one a WEAR_REFILL_MS up to the burst)."""
        if self.wear_budget < self.wear_burst:
            gained = (now_ms - self.wear_budget_ms) // WEAR_REFILL_MS
            if gained > 0:
                self.wear_budget = min(self.wear_burst, self.wear_budget + gained)
                self.wear_budget_ms += gained * WEAR_REFILL_MS
        else:
            self.wear_budget_ms = now_ms
        return self.wear_budget

    def _storage_failed(self, events, exc):
        # Also the events of a group that went back out of the state with it (rawjournal.py).
        self.unrecorded += events + self.journal.lost_in_group
        self.journal.lost_in_group = 0
        self.journal.frozen = True
        if "storage" not in self.faults:
            self.faults.append("storage")
            self.fault_detail["storage"] = ("flash full or failing: %r" % (exc,))[:48]

    def _begin_group(self):
        """The events from here to _end_group are of one moment (a key and what it does): a raw
        log journals them in one record. Nothing reads them before _end_group makes them durable
        (no frame goes out, no output changes, within this call)."""
        self._group_depth += 1
        if self._group_depth == 1 and self.journal is not None:
            self.journal.begin_group()

    def _end_group(self):
        self._group_depth -= 1
        if self._group_depth or self.journal is None:
            return
        try:
            self.journal.end_group()
        except OSError as exc:
            self._storage_failed(0, exc)

    def set_fault(self, code, detail, now_ms=None):
        if code in self.faults:
            return
        self.faults.append(code)
        # Short, so a status reply with every fault still fits one frame.
        detail = str(detail)[:48]
        self.fault_detail[code] = detail
        if now_ms is not None:
            # A host that comes and goes (a cable pulled and put back, every host_timeout_ms) is
            # an input repeated without end: its faults spend the wear budget.
            self.record(now_ms, "fault", {"code": code, "detail": detail, "state": self.state["base"]},
                        wear=code == "host")

    def clear_fault(self, code, now_ms):
        if code not in self.faults:
            return
        self.faults.remove(code)
        self.fault_detail.pop(code, None)
        self.record(now_ms, "fault_cleared", {"code": code, "state": self.table_state()}, wear=code == "host")

    def set_base(self, now_ms, new_state, reason, extra_patch=None, extra_fields=None):
        old = self.state["base"]
        patch = {"base": new_state}
        if extra_patch:
            for k in extra_patch:
                patch[k] = extra_patch[k]
        fields = {"from": old, "to": new_state, "reason": reason,
                  "round": patch.get("round", self.state["round"]), "meter": self.state["meter"]}
        if extra_fields:
            for k in extra_fields:
                fields[k] = extra_fields[k]
        self.record(now_ms, "state", fields, patch)

    def snapshot(self, now_ms):
        self.record(now_ms, "meters", self.meters())

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
        self.link.read(now_ms)
        self._keys_and_spots(now_ms)
        self._coin_in(now_ms)
        self._host_watch(now_ms)
        self._flush_noise(now_ms, False)
        self.link.write(now_ms)
        self._update_outputs(now_ms)
        if self.journal is not None and not self.journal.frozen:
            if self.journal.wants_compaction():
                self.journal.compact(self.state)
            elif self.journal.wants_ack_checkpoint():
                self.journal.checkpoint(self.state)
            elif self.journal_moves and self.journal.unacked_count() == 0 and not self.journal.corrupt:
                self._move_journal(now_ms)
        self.board.feed_watchdog()

    def _move_journal(self, now_ms):
        """The files journal onto the raw log, now that the host has every event in it."""
        self.journal_moves = False
        try:
            self.journal = move_to_raw_log(self.board, self.journal, self.state)
        except OSError as exc:
            # The files are still the journal (the raw checkpoint is what makes the move); the
            # next boot tries again.
            self.journal_note = "the move to the raw log failed: %r" % (exc,)
            return
        self.journal_note = None

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
        # A wired seat the table does not play (config seats below the board's inputs): its
        # acceptor is inhibited, and whatever its line does is read and dropped, so that pulses
        # there are never left pending (a bench waiting for them to be played waited forever).
        for seat in range(self.seats, len(self.board.pulse_sources)):
            del pulses[:]
            self.board.pulse_sources[seat].poll(now_ms, pulses)

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
                self.record(now_ms, "late_coin", {"seat": seat, "state": self.state["base"],
                                                   "round": self.state["round"], "pe": detail})
            elif self.faults or self.jammed[seat]:
                self.record(now_ms, "refused_coin", {"seat": seat, "faults": list(self.faults),
                                                      "jammed": self.jammed[seat], "pe": detail})
            else:
                self.record(now_ms, "extra_coin", {"seat": seat, "round": self.state["round"], "pe": detail})
        elif outcome in (GLITCH, OUT_OF_SPEC):
            self._note_noise(now_ms, outcome, seat, detail)
        elif outcome == BAD_COUNT:
            self.record(now_ms, "bad_count", {"seat": seat, "pulses": detail})
        elif outcome == LOST:
            # The counter's buffer overflowed: tokens may be missing, and the books must say so.
            self.record(now_ms, "pulses_lost", {"seat": seat, "pulses": detail})
        elif outcome == JAM:
            self.jammed[seat] = True
            self.record(now_ms, "jam", {"seat": seat, "held_ms": detail})
        else:  # JAM_CLEARED, the decoder's last outcome
            self.jammed[seat] = False
            self.record(now_ms, "jam_cleared", {"seat": seat})

    def _credit(self, now_ms, seat, pulse_end_ms=None):
        fields, patch = meter.credit(self.state, self.cfg, seat)
        fields["seat"] = seat
        fields["round"] = self.state["round"]
        fields["pe"] = pulse_end_ms
        self.record(now_ms, "coin", fields, patch)

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
                self.record(now_ms, key[0], {"seat": key[1], "count": count, "last_width_ms": width_ms})

    # ------------------------------------------------------------------ keypad and bet spots
    def _keys_and_spots(self, now_ms):
        changed, held = self.keys.update(self.board.read_keys(), now_ms)
        if changed:
            for bit in range(len(KEY_NAMES)):
                if changed & (1 << bit) and held & (1 << bit):
                    self.key_pressed(now_ms, KEY_NAMES[bit])
        _changed, covered = self.spots.update(self.board.read_spots(), now_ms)
        self._report_spots(now_ms, covered)

    def _report_spots(self, now_ms, covered):
        """Report the spots whose state differs from what the host last heard, as the wear
        budget allows (a slot each; the changes of one turn share a raw-log slot, three to one)."""
        differ = covered ^ self.spots_reported
        if not differ or self._wear_left(now_ms) <= 0:
            return
        count = self.seats * 3
        start = self.spot_next
        self._begin_group()
        try:
            for i in range(count):
                bit = (start + i) % count
                if not differ & (1 << bit):
                    continue
                if self.wear_budget <= 0:
                    break
                self.wear_budget -= 1
                self.spot_next = (bit + 1) % count
                self.spots_reported ^= 1 << bit
                self.record(now_ms, "spot", {"seat": bit // 3, "spot": SPOT_NAMES[bit % 3],
                                              "on": bool(covered & (1 << bit))})
        finally:
            self._end_group()

    def key_pressed(self, now_ms, name):
        base = self.state["base"]
        handler = _KEY_ACTIONS.get((name, base))
        self._begin_group()
        try:
            # A key that changes nothing (lock when locked, a chattering contact) or asks for
            # service spends the wear budget; one that locks, unlocks or calls a jackpot never waits.
            self.record(now_ms, "key", {"key": name, "state": self.table_state()},
                        wear=handler is None or name == "service")
            if handler is not None:
                handler(self, now_ms)
        finally:
            self._end_group()

    def lock(self, now_ms):
        # The meter at lockout is what this round's progressive awards are computed from, and the
        # seats with a token now are the only ones this round's awards may pay.
        elig = seat_bits([self.state["t%d" % i] > 0 for i in range(self.seats)])
        self.set_base(now_ms, LOCKED, "lock", {"frozen": self.state["meter"], "elig": elig,
                                                "paid": 0, "pays": []})

    def unlock(self, now_ms):
        # A new round: nobody in the progressive yet, nobody paid, no award left to show.
        patch = {"round": self.state["round"] + 1, "elig": 0, "paid": 0, "pays": [], "award": None}
        for seat in range(config_mod.MAX_SEATS):
            patch["t%d" % seat] = 0
        self._begin_group()
        try:
            self.set_base(now_ms, OPEN, "unlock", patch)
            # The round's closing snapshot: the host stores it and audits the events between two.
            self.snapshot(now_ms)
        finally:
            self._end_group()

    def _jackpot(self, now_ms):
        # This event, signed with the table key and numbered once, is the board's statement a
        # linked pool pays by: the round, the seats in its progressive at lockout, the pool.
        self.set_base(now_ms, JACKPOT_PENDING, "jackpot key", None,
                      {"elig": self.state.get("elig", 0), "pool": self.state.get("pool")})

    def _service_request(self, now_ms):
        if not self.board.service_switch():
            self.record(now_ms, "service_refused", {"reason": "service key switch is off"})
            return
        self.record(now_ms, "service_requested", {"state": self.state["base"]})

    # ------------------------------------------------------------------ host watch
    def _host_watch(self, now_ms):
        timeout = self.cfg["host_timeout_ms"]
        last_host_ms = self.link.last_host_ms
        if timeout and now_ms - last_host_ms > timeout:
            if "host" not in self.faults:
                self.set_fault("host", "host silent for %d ms" % (now_ms - last_host_ms), now_ms)
        if self.journal is not None and "outbox" in self.faults:
            if self.journal.unacked_count() < self.cfg["outbox_limit"] // 2:
                self.clear_fault("outbox", now_ms)

    def host_heard(self, now_ms):
        """An authentic frame from the host arrived: it is alive."""
        if "host" in self.faults:
            self.clear_fault("host", now_ms)

    # ------------------------------------------------------------------ outputs
    def _update_outputs(self, now_ms):
        for seat in range(self.board.max_seats):
            if seat < self.seats:
                self.board.set_inhibit(seat, not self.seat_accepting(seat))
                self.board.set_lamp(seat, self.state["t%d" % seat] > 0)
            else:
                self.board.set_inhibit(seat, True)
                self.board.set_lamp(seat, False)
        meter = self.state["meter"] if self.state.get("pool") is None else self.linked_cents
        view = {"state": self.state["base"], "faults": self.faults, "meter": meter,
                "award": self.state.get("award"), "award_until_ms": self.award_until_ms,
                "jammed": [i for i in range(self.seats) if self.jammed[i]],
                "test_until_ms": self.test_until_ms}
        text, blink = render(view, now_ms, self.board.display_digits)
        if (text, blink) != self.display_text:
            self.display_text = (text, blink)
            self.board.show(text, blink)


_KEY_ACTIONS = {
    ("lock", OPEN): TableApp.lock,
    ("unlock", LOCKED): TableApp.unlock,
    ("jackpot", LOCKED): TableApp._jackpot,
    ("unlock", JACKPOT_PENDING): TableApp.unlock,
    ("service", OPEN): TableApp._service_request,
    ("service", LOCKED): TableApp._service_request,
}
