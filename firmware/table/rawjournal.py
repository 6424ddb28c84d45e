"""The journal on the raw flash log (table/rawlog.py): the same interface as table/journal.py's
Journal (load, append, ack, read_payload, index_at_or_after, checkpoint, repair, ...), for a board
that hands the app a NOR block device (board.log_device).

Where things are:
  - events: records in the log. A coin event whose fields all follow from the state before it
    and the configuration in force (table.meter.credit) is a 16-byte COIN record holding the
    meter after it as a check value; an event the state before it rebuilds (a key, a lock, an
    unlock, a meters snapshot, a refused second or late token) is a 16-byte DERIVED record, and the ones
    a key press makes at one moment share a GROUP record (a round's lock and unlock are a slot
    each, not five: the flash's life, docs/FIRMWARE.md); every other event is a FULL record of
    its JSON (one CRC, so an award with its payments is one record, paid wholly or not).
  - acknowledgements: an ACK record every ACK_RECORD_EVENTS acknowledged (lost ones only cost a
    resend after a power cut, which the host drops as a duplicate).
  - checkpoints: littlefs files rl_a / rl_b (table/journal.py's slot format), holding the state
    at the acknowledged point and the log position of the oldest unacknowledged event. Written
    when the log must erase a sector the newest one does not cover, and every
    ACK_CHECKPOINT_EVENTS acknowledged (so a boot replays at most that many events).

RAM: the state at the acknowledged point (the checkpoint's, moved forward on each ack by reading
the acknowledged records again) and a cursor (the state before one unacknowledged event) from
which a COIN record's event is rebuilt for the link: resends go in order, so the cursor moves
forward. Per event only the outbox's packed arrays.

Boot: the newest valid checkpoint, then the log from its position: a first pass finds the newest
ACK, a second replays the events into the state (recomputing each COIN and checking its meter:
a disagreement freezes the journal as corrupt) and rebuilds the outbox.
"""
import gc
import json

from table import rawlog as L
from table.journal_base import Outbox, StorageError, checkpoint_parts, decode_checkpoint, repaired
from table.meter import credit
from table import config as config_mod
from table import protocol as proto
from table import vocab

ACK_RECORD_EVENTS = 64
ACK_CHECKPOINT_EVENTS = 4096
_COIN_KEYS = ("t", "b", "k", "ms", "inc", "to_meter", "to_over", "reserve", "seat", "round", "pe", "p", "q")
_SLOTS = ("rl_a", "rl_b")


class _Mismatch(Exception):
    pass


# DERIVED records (table/rawlog.py): events that follow wholly from the state before them, kept as
# a form, the board ms and a few parameter bytes. What each form rebuilds is table/app.py's
# key_pressed, lock, unlock, snapshot, a refused second token (extra_coin) and a token after the
# lock (late_coin: pulses on a locked acceptor's line, which a pulse injector can send at the
# acceptors' full rate, so one slot each, not a FULL record of eight); an event that is not
# exactly that (a field more, a different value) is written whole, because append() compares the
# rebuilt event with it first. A bet spot's change (F_SPOT) is one parameter byte, seat << 3 |
# spot << 1 | on, so a GROUP holds three: sensors a hand or a fault can flip many times a second
# were FULL records of six slots each.
F_KEY, F_LOCK, F_UNLOCK, F_METERS, F_EXTRA, F_LATE, F_SPOT = 0, 1, 2, 3, 4, 5, 6
_PARAM_BYTES = (2, 0, 0, 1, 3, 3, 1)  # each form's parameters (a GROUP record packs them one after another)
_GROUP_ROOM = 7                 # a GROUP's bytes for (form, parameters) of each event
_MISSING = object()
_STATES = (vocab.OPEN, vocab.LOCKED, vocab.JACKPOT_PENDING, vocab.SERVICE, vocab.FAULT)
_METER_KEYS = ("meter", "over", "res", "contrib", "rcontrib", "seeded", "awarded", "wins", "hits", "corr",
               "round", "frozen")


def derived_event(form, params, ms, state, board_id):
    """The event a DERIVED record stands for, given the state before it (with "p" when it changes
    the state). params: the 7 parameter bytes."""
    event = {"t": proto.EVENT, "b": board_id, "ms": ms}
    if form == F_KEY:
        event["k"] = "key"
        event["key"] = vocab.KEY_NAMES[params[0]]
        event["state"] = _STATES[params[1]]
        return event
    if form == F_EXTRA or form == F_LATE:
        event["k"] = "extra_coin" if form == F_EXTRA else "late_coin"
        event["seat"] = params[0]
        event["round"] = state["round"]
        if form == F_LATE:
            event["state"] = state["base"]
        offset = params[1] | (params[2] << 8)
        event["pe"] = None if offset == L.NO_PULSE_END else ms - offset
        return event
    if form == F_SPOT:
        spot = (params[0] >> 1) & 3
        if spot >= len(vocab.SPOT_NAMES):
            raise ValueError("spot record: no spot %d" % spot)
        event["k"] = "spot"
        event["seat"] = params[0] >> 3
        event["spot"] = vocab.SPOT_NAMES[spot]
        event["on"] = bool(params[0] & 1)
        return event
    if form == F_METERS:
        event["k"] = "meters"
        for k in _METER_KEYS:
            event[k] = state[k]
        seats = params[0]
        event["seat_coins"] = [state["c%d" % i] for i in range(seats)]
        event["seat_tokens"] = [state["t%d" % i] for i in range(seats)]
        return event
    event["k"] = "state"
    old = state["base"]
    if form == F_LOCK:
        elig = 0
        for i in range(config_mod.MAX_SEATS):
            if state.get("t%d" % i, 0) > 0:
                elig |= 1 << i
        patch = {"base": vocab.LOCKED, "frozen": state["meter"], "elig": elig, "paid": 0, "pays": []}
        to, reason = vocab.LOCKED, "lock"
    elif form == F_UNLOCK:
        patch = {"base": vocab.OPEN, "round": state["round"] + 1, "elig": 0, "paid": 0, "pays": [], "award": None}
        for i in range(config_mod.MAX_SEATS):
            patch["t%d" % i] = 0
        to, reason = vocab.OPEN, "unlock"
    else:
        raise ValueError("derived form %d" % form)
    event["from"] = old
    event["to"] = to
    event["reason"] = reason
    event["round"] = patch.get("round", state["round"])
    event["meter"] = state["meter"]
    event["p"] = patch
    return event


def _derived_params(event):
    """(form, 7 parameter bytes) of an event a DERIVED record may stand for, else None."""
    k = event.get("k")
    if k == "key":
        try:
            return F_KEY, bytes((vocab.KEY_NAMES.index(event["key"]), _STATES.index(event["state"])))
        except (ValueError, KeyError):
            return None
    if k == "extra_coin" or k == "late_coin":
        seat, pe, ms = event.get("seat"), event.get("pe"), event.get("ms")
        if not isinstance(seat, int) or not 0 <= seat < 256 or not isinstance(ms, int):
            return None
        offset = L.NO_PULSE_END if pe is None else ms - pe
        if not isinstance(offset, int) or not 0 <= offset <= L.NO_PULSE_END or (pe is not None and offset == L.NO_PULSE_END):
            return None
        return F_EXTRA if k == "extra_coin" else F_LATE, bytes((seat, offset & 0xFF, offset >> 8))
    if k == "spot":
        seat, on = event.get("seat"), event.get("on")
        if type(seat) is not int or not 0 <= seat < 32 or not (on is True or on is False):
            return None
        try:
            spot = vocab.SPOT_NAMES.index(event.get("spot"))
        except ValueError:
            return None
        return F_SPOT, bytes(((seat << 3) | (spot << 1) | (1 if on else 0),))
    if k == "meters":
        seats = event.get("seat_coins")
        if isinstance(seats, list) and len(seats) < 256:
            return F_METERS, bytes((len(seats),))
        return None
    if k == "state":
        if event.get("reason") == "lock":
            return F_LOCK, b""
        if event.get("reason") == "unlock":
            return F_UNLOCK, b""
    return None


def group_events(body):
    """[(form, 7 parameter bytes)] of a GROUP record's events, oldest first. Raises ValueError for
    a record this build never writes (a form it lacks, parameters past the slot, padding not
    erased)."""
    count = body[0] & 0x0F
    out = []
    at = 5
    for _ in range(count):
        form = body[at] if at < 12 else 0xFF
        if form >= len(_PARAM_BYTES) or at + 1 + _PARAM_BYTES[form] > 12:
            raise ValueError("group record: event %d does not decode" % len(out))
        n = _PARAM_BYTES[form]
        out.append((form, bytes(body[at + 1:at + 1 + n]) + b"\xff" * (7 - n)))
        at += 1 + n
    for i in range(at, 12):
        if body[i] != 0xFF:
            raise ValueError("group record: bytes after its events")
    return out


def encode_group(events, ms):
    """The record of consecutive derived events of one ms: [(form, parameters)]. One event is a
    DERIVED record, several a GROUP."""
    if len(events) == 1:
        form, params = events[0]
        return bytes((L.K_DERIVED | form,)) + L.le(ms, 4) + params + b"\xff" * (7 - len(params))
    packed = b""
    for form, params in events:
        packed += bytes((form,)) + params
    return bytes((L.K_GROUP | len(events),)) + L.le(ms, 4) + packed + b"\xff" * (_GROUP_ROOM - len(packed))


def _derived_of(kind, body, sub):
    """(form, 7 parameter bytes, ms) of the event numbered sub in a DERIVED or GROUP record."""
    if kind == L.K_GROUP:
        form, params = group_events(body)[sub]
    else:
        form, params = body[0] & 0x0F, body[5:12]
    return form, params, L.from_le(body, 1, 4)


def _pos(n, slot):
    return n * L.SLOTS + slot


class RawJournal:
    def __init__(self, nv, dev, board_id):
        self.nv = nv
        self.log = L.RawLog(dev)
        self.board_id = board_id
        self.gen = 0
        self.next_seq = 1
        self.acked_seq = 0
        # (seq, n * 256 + slot, slots | event's place in its GROUP << 8) of each unacknowledged event
        self.unacked = Outbox()
        self.corrupt = None
        self.frozen = False
        self.highest_seen = 0
        self.bad_bytes = 0
        self._state = None
        self._ack_state = None    # the state after every acknowledged event
        self._cur_i = 0           # the cursor: _cur_state is the state before unacked[_cur_i]
        self._cur_state = None
        self.checkpoint_acked = 0
        self.logged_acked = 0     # the newest ACK record's number
        self.ck_n = 0             # the sector the newest checkpoint's replay starts in
        self.writes = 0
        self.bytes_written = 0
        self.journal_bytes = 0
        self._pending_fix = None  # a repair's state, for the patch of the event that follows it
        # Between begin_group and end_group: derived events of one moment waiting to go into one
        # record ([(form, parameters, ms)]), and the values their patches replaced in the state.
        self._group = None
        self._group_saved = None
        self.lost_in_group = 0    # events a failed group write took back (the app counts them)

    # ---------------------------------------------------------------- boot
    def load(self, initial_state):
        best = None
        for slot in _SLOTS:
            got = decode_checkpoint(self.nv.read(slot))
            if got is not None and (best is None or got[0] > best[0]):
                best = got
        if best is None:
            names = self.nv.names()
            for name in names:
                if name in _SLOTS or name in ("ck_a", "ck_b") or (name.startswith("j") and name.endswith(".log")):
                    # A journal is there (torn raw checkpoints, or the littlefs journal's files):
                    # never silently start from zero.
                    raise StorageError("journal present but no valid checkpoint")
            if self.log.holds_a_log():
                raise StorageError("journal present but no valid checkpoint")
            state = dict(initial_state)
            self.start(state, 1)
            return state, True
        self.gen, content = best
        n, slot, seq = content["log"]
        self.acked_seq = content["acked"]
        self.checkpoint_acked = self.logged_acked = self.acked_seq
        self.ck_n = n
        self.log.next_known = content["next"]
        state = content["S"]
        self._state = state
        # Pass 1: the newest acknowledgement in the log (an ACK names a number, not a place).
        newest = [self.acked_seq]

        def acks(kind, body, q, _n, _s):
            if kind == L.K_ACK:
                a = L.from_le(body, 1, 4)
                if a > newest[0]:
                    newest[0] = a
        status = self.log.scan(n, slot, seq, acks)
        self.acked_seq = self.logged_acked = newest[0]
        # Pass 2: replay.
        self.unacked = Outbox()
        self._ack_state = None
        self._replay_seq = seq
        try:
            status2 = self.log.scan(n, slot, seq, self._replay)
        except _Mismatch as exc:
            status2 = L.CORRUPT
            self.log.corrupt = exc.args[0]
        if self._ack_state is None:
            self._ack_state = json.loads(json.dumps(state))
        self.next_seq = self._replay_seq
        self.highest_seen = self.next_seq - 1
        if status != L.END or status2 != L.END:
            self._freeze_corrupt()
        return state, False

    def start(self, state, next_seq):
        """A new log whose first event is next_seq, after `state` with every event before it
        acknowledged: a board's first boot (1), or a files journal moved over (app.py)."""
        self.log.format(next_seq)
        self.next_seq = next_seq
        self.acked_seq = self.checkpoint_acked = self.logged_acked = self.highest_seen = next_seq - 1
        self.unacked = Outbox()
        self._state = state
        self._ack_state = json.loads(json.dumps(state))
        self._write_checkpoint()

    def _replay(self, kind, body, seq, n, slot):
        if kind == L.K_GROUP:
            try:
                count = len(group_events(body))
            except ValueError as exc:
                raise _Mismatch((n, slot, "record %d: %s" % (seq, exc)))
            for sub in range(count):
                # A group the checkpoint cut through: its first events are in the checkpoint's state.
                if seq + sub > self.checkpoint_acked:
                    self._replay_event(kind, body, seq + sub, n, slot, sub)
            self._replay_seq = seq + count
        elif kind == L.K_COIN or kind == L.K_FULL or kind == L.K_DERIVED:
            self._replay_event(kind, body, seq, n, slot, 0)
            self._replay_seq = seq + 1
        elif kind == L.K_JUMP:
            self._replay_seq = L.from_le(body, 1, 4)

    def _replay_event(self, kind, body, seq, n, slot, sub):
        if seq > self.acked_seq and self._ack_state is None:
            self._ack_state = json.loads(json.dumps(self._state))
        try:
            patch = self._patch_of(kind, body, seq, self._state, sub)
        except (ValueError, KeyError, TypeError, IndexError) as exc:
            # IndexError: a DERIVED record that checks but names a key or state this build
            # lacks (a forger's, or a newer firmware's): corrupt, never a crash at boot.
            raise _Mismatch((n, slot, "record %d: %s" % (seq, exc)))
        if patch:
            for k in patch:
                self._state[k] = patch[k]
        if seq > self.acked_seq:
            self.unacked.append(seq, _pos(n, slot), (len(body) + 4) // L.SLOT_BYTES | sub << 8)

    def _patch_of(self, kind, body, seq, state, sub=0):
        """The state patch of the event in this record (the sub-th of a GROUP), given the state
        before it."""
        if kind == L.K_COIN:
            _ms, _fields, patch = L.replay_coin(state, state["cfg"], body, credit)
            return patch
        if kind == L.K_DERIVED or kind == L.K_GROUP:
            form, params, ms = _derived_of(kind, body, sub)
            return derived_event(form, params, ms, state, self.board_id).get("p")
        event = json.loads(L.full_payload(body))
        if event["q"] != seq:
            raise ValueError("numbered %r" % (event["q"],))
        return event.get("p")

    def _freeze_corrupt(self):
        n, slot, why = self.log.corrupt
        self.frozen = True
        # Records that still check after the bad spot: their numbers must not be reused, and
        # their patches are the newest word on the keys they set.
        state = self._state

        def later(kind, body, q, _n, _s):
            try:
                if kind == L.K_FULL:
                    patch = json.loads(L.full_payload(body)).get("p")
                elif kind == L.K_COIN:
                    try:
                        patch = L.replay_coin(state, state["cfg"], body, credit)[2]
                    except ValueError:  # the state before it is not known: its meter at least
                        patch = {"meter": L.decode_coin(body)[3]}
                elif kind == L.K_DERIVED:
                    patch = derived_event(body[0] & 0x0F, body[5:12], L.from_le(body, 1, 4), state,
                                          self.board_id).get("p")
                elif kind == L.K_GROUP:
                    ms = L.from_le(body, 1, 4)
                    for form, params in group_events(body):
                        patch = derived_event(form, params, ms, state, self.board_id).get("p")
                        if patch:
                            for k in patch:
                                state[k] = patch[k]
                    return
                else:
                    return
            except (ValueError, KeyError, TypeError, IndexError):
                return
            if patch:
                for k in patch:
                    state[k] = patch[k]
        self.highest_seen = max(self.highest_seen, self.log.scan_after_corruption(n, slot, self.next_seq, later))
        self.next_seq = max(self.next_seq, self.highest_seen + 1)
        self.bad_bytes = (L.SLOTS - slot) * L.SLOT_BYTES
        self.corrupt = "bad log record at sector %d slot %d: %s" % (n, slot, why)

    # ---------------------------------------------------------------- events
    def _compact(self, event):
        """The COIN record of a coin event whose every field replay will recompute, else None."""
        if event.get("k") != "coin" or len(event) != len(_COIN_KEYS):
            return None
        for k in _COIN_KEYS:
            if k not in event:
                return None
        if event["t"] != proto.EVENT or event["b"] != self.board_id:
            return None
        body = L.encode_coin(event["seat"], event["ms"], event["pe"], event["p"].get("meter", -1))
        if body is None:
            return None
        try:
            _ms, fields, patch = L.replay_coin(self._state, self._state["cfg"], body, credit)
        except (ValueError, KeyError, TypeError):
            return None
        for k in fields:
            if fields[k] != event[k]:
                return None
        if patch != event["p"]:
            return None
        return body

    def _derived(self, event):
        """The DERIVED record of an event that the state before it rebuilds exactly, else None."""
        got = _derived_params(event)
        if got is None or not (0 <= event.get("ms", -1) < (1 << 32)):
            return None
        form, params = got
        params = params + b"\xff" * (7 - len(params))
        try:
            again = derived_event(form, params, event["ms"], self._state, self.board_id)
        except (ValueError, KeyError, TypeError, IndexError):
            return None
        again["q"] = event["q"]
        if again != event:
            return None
        return bytes((L.K_DERIVED | form,)) + L.le(event["ms"], 4) + params

    def _room(self, slots):
        """Checkpoint first when the next record opens a sector whose erase the newest
        checkpoint does not cover (slots + 1: a SKIP may go first)."""
        if self.log.must_open_sector(slots + 1) and self.ck_n < self.log.cover_needed():
            self._write_checkpoint()

    # ---------------------------------------------------------------- groups
    def begin_group(self):
        """Derived events appended from here to end_group that share a ms go into one record (a
        key and the lock it makes: one slot, not two). Until end_group writes it, such an event
        has its number but is not on flash: the caller lets nothing outside the board's state act
        on it (no frame, no output), so a cut before the write is a key never pressed."""
        if self._group is None:
            self._group = []
            self._group_saved = {}
            self.lost_in_group = 0

    def end_group(self):
        """Write the waiting events. Raises OSError when the flash refuses them: their patches are
        taken back out of the state first and lost_in_group says how many there were."""
        try:
            self._flush_group()
        finally:
            self._group = None
            self._group_saved = None

    def _pend(self, event, body):
        """Keep a derived event (its DERIVED record's body) for the group's record."""
        form = body[0] & 0x0F
        params = bytes(body[5:5 + _PARAM_BYTES[form]])
        g = self._group
        if g:
            room = 0
            for f, p, _ms in g:
                room += 1 + len(p)
            if len(g) >= L.MAX_GROUP_EVENTS or g[0][2] != event["ms"] or room + 1 + len(params) > _GROUP_ROOM:
                self._flush_group()
        saved = self._group_saved
        patch = event.get("p")
        if patch:
            for k in patch:
                if k not in saved:
                    saved[k] = self._state.get(k, _MISSING)
        self._group.append((form, params, event["ms"]))
        return event["q"]

    def _flush_group(self):
        g = self._group
        if not g:
            return
        count = len(g)
        body = encode_group([(f, p) for f, p, _ms in g], g[0][2])
        seq = self.next_seq
        try:
            self._room(1)
            n, slot, _q = self.log.append(body, True, self.ck_n)
        except OSError:
            # Not on flash: the events never happened. Their patches come back out of the state.
            state = self._state
            for k, old in self._group_saved.items():
                if old is _MISSING:
                    state.pop(k, None)
                else:
                    state[k] = old
            self.lost_in_group = count
            del g[:]
            self._group_saved = {}
            self.frozen = True
            self.next_seq = seq + count  # the slot may be torn: its numbers are not reused
            raise
        for sub in range(count):
            self.unacked.append(seq + sub, _pos(n, slot), 1 | (sub << 8 if count > 1 else 0))
        self.next_seq = seq + count
        del g[:]
        self._group_saved = {}
        self.writes += 1
        self.bytes_written += L.SLOT_BYTES

    # ---------------------------------------------------------------- append
    def append(self, event):
        if self.frozen:
            raise OSError("journal frozen")
        g = self._group
        seq = self.next_seq + (len(g) if g else 0)
        event["q"] = seq
        fix = self._pending_fix
        if fix is not None:
            patch = event.get("p") or {}
            for k in fix:
                if k not in patch:
                    patch[k] = fix[k]
            event["p"] = patch
        body = None if fix is not None else self._compact(event)
        if body is None and fix is None:
            body = self._derived(event)
            if body is not None and g is not None:
                return self._pend(event, body)
        if g:
            self._flush_group()  # the events waiting go first: numbers stay in order
        if body is None:
            body = L.encode_full(json.dumps(event, separators=(",", ":")).encode())
            if body is None:
                raise OSError("event too large for one log record")
        slots = (len(body) + 4) // L.SLOT_BYTES
        try:
            self._room(slots)
            n, slot, _q = self.log.append(body, True, self.ck_n)
        except L.LogFull:
            raise
        except OSError:
            self.frozen = True
            self.next_seq = seq + 1
            raise
        self.unacked.append(seq, _pos(n, slot), slots)
        self.next_seq = seq + 1
        if fix is not None:
            # The repair's event is on flash: now the checkpoint that moves boot to the new log.
            self._pending_fix = None
            self._write_checkpoint()
        self.writes += 1
        self.bytes_written += len(body) + 4
        return seq

    def _record(self, index):
        """(seq, kind, body) of the record holding unacknowledged event `index`."""
        return self._entry(index)[:3]

    def _entry(self, index):
        """(seq, kind, body, the event's place in its GROUP) of unacknowledged event `index`."""
        seq, pos, packed = self.unacked.get(index)
        slots = packed & 0xFF
        n = pos // L.SLOTS
        slot = pos % L.SLOTS
        whole = self.log._read(n, slot, slots * L.SLOT_BYTES)
        return seq, whole[0] & 0xF0, memoryview(whole)[:slots * L.SLOT_BYTES - 4], packed >> 8

    def _apply_index(self, index, state):
        seq, kind, body, sub = self._entry(index)
        patch = self._patch_of(kind, body, seq, state, sub)
        if patch:
            for k in patch:
                state[k] = patch[k]

    def read_payload(self, index):
        if self._cur_state is None or self._cur_i > index:
            self._cur_state = json.loads(json.dumps(self._ack_state))
            self._cur_i = 0
        while self._cur_i < index:
            self._apply_index(self._cur_i, self._cur_state)
            self._cur_i += 1
        seq, kind, body, sub = self._entry(index)
        if kind == L.K_FULL:
            return L.full_payload(body)
        if kind == L.K_DERIVED or kind == L.K_GROUP:
            form, params, ms = _derived_of(kind, body, sub)
            event = derived_event(form, params, ms, self._cur_state, self.board_id)
            event["q"] = seq
            return json.dumps(event, separators=(",", ":")).encode()
        ms, fields, patch = L.replay_coin(self._cur_state, self._cur_state["cfg"], body, credit)
        event = {"t": proto.EVENT, "b": self.board_id, "k": "coin", "ms": ms}
        for k in fields:
            event[k] = fields[k]
        event["p"] = patch
        event["q"] = seq
        return json.dumps(event, separators=(",", ":")).encode()

    def ack(self, seq):
        if seq <= self.acked_seq:
            return 0
        seq = min(seq, self.next_seq - 1)  # never past the newest written
        u = self.unacked
        released = u.count_through(seq)
        if self._cur_state is not None and self._cur_i <= released:
            state, i = self._cur_state, self._cur_i
        else:
            state, i = self._ack_state, 0
        while i < released:
            self._apply_index(i, state)
            i += 1
        self._ack_state = state
        self._cur_state = None
        u.drop(released)
        self.acked_seq = seq
        if seq - self.logged_acked >= ACK_RECORD_EVENTS and not self.frozen:
            try:
                self._room(1)
                self.log.append(L.encode_ack(seq), False, self.ck_n)
                self.logged_acked = seq
            except L.LogFull:
                pass
            except OSError:
                self.frozen = True  # the slot may be torn: nothing more until a boot scans it
        return released

    def unacked_count(self):
        return len(self.unacked)

    def index_at_or_after(self, seq):
        return self.unacked.index_at_or_after(seq)

    # ---------------------------------------------------------------- checkpoints
    def wants_compaction(self):
        return False

    def wants_ack_checkpoint(self):
        return self.acked_seq - self.checkpoint_acked >= ACK_CHECKPOINT_EVENTS

    def compact(self, state):
        self._write_checkpoint()

    def checkpoint(self, state):
        """The state at the acknowledged point (not `state`): the events after it are replayed."""
        self._write_checkpoint()

    def _write_checkpoint(self):
        if len(self.unacked):
            seq, pos, packed = self.unacked.get(0)
            n, slot = pos // L.SLOTS, pos % L.SLOTS
            # Boot's scan starts at the record, which numbers from its first event; replay passes
            # over a GROUP's events up to the checkpoint's acknowledged number.
            seq -= packed >> 8
        else:
            n, slot, seq = self.log.head_n, self.log.head_slot, self.log.next_seq
        self.gen += 1
        content = {"S": self._ack_state, "next": self.next_seq, "acked": self.acked_seq,
                   "log": [n, slot, seq]}
        gc.collect()
        parts = checkpoint_parts(self.gen, content)
        content = None
        self.nv.write(_SLOTS[self.gen % 2], parts)
        self.ck_n = n
        self.checkpoint_acked = self.acked_seq
        self.writes += 1
        self.bytes_written += len(parts[0]) + len(parts[1])

    def repair(self, state):
        """Clear a frozen journal (signed service action): a new stretch of log after everything
        the old one holds, with the unacknowledged events before the bad record copied into it
        (same numbers) and a JUMP of the next number past anything the bad stretch or the
        records after it could have used. The state the board shows beyond the copies goes into
        the patch of the next event (the repair's own), and the checkpoint that moves boot to the
        new stretch is written after that event: a cut anywhere before it leaves the old
        checkpoint, so the board boots frozen as before and the repair is done again.
        Returns (first, last) of the numbers skipped."""
        first = self.next_seq
        target = max(self.highest_seen, self.next_seq - 1) + L.SLOTS + 2
        log = self.log
        # Past every sector the log has used: the newest a scan saw, the head appends reached,
        # and any after them whose header still checks (records beyond a bad header).
        m = max(log.top_n, log.head_n) + 1
        while log.read_header(m) is not None:
            m += 1
        log.head_n = m
        log.needs_open = True
        log.torn = None
        old = self.unacked
        log.next_seq = old.seq(0) if len(old) else target
        try:
            new = Outbox()
            replayed = json.loads(json.dumps(self._ack_state))
            for i in range(len(old)):
                seq, kind, body, sub = self._entry(i)
                if seq != log.next_seq:
                    log.append(L.encode_jump(seq), False, self.ck_n)
                self._apply_index(i, replayed)
                if kind == L.K_GROUP:
                    # Each event of a group copied on its own (a group may be half acknowledged).
                    form, params, ms = _derived_of(kind, body, sub)
                    body = encode_group([(form, params[:_PARAM_BYTES[form]])], ms)
                n, slot, _q = log.append(bytes(body), True, self.ck_n)
                new.append(seq, _pos(n, slot), (len(body) + 4) // L.SLOT_BYTES)
            # What the board shows beyond the copies (the newer values of records after the bad
            # stretch) goes into the next event's patch: the repair's own event follows at once
            # (commands.storage_repair), and the checkpoint is written only after it.
            fix = {}
            for k in state:
                if replayed.get(k) != state[k]:
                    fix[k] = state[k]
            if log.next_seq < target:
                log.append(L.encode_jump(target), False, self.ck_n)
            self.unacked = new
            self._cur_state = None
            self.next_seq = target
            self._pending_fix = fix
        except OSError:
            self.next_seq = first
            raise
        self._state = state
        return repaired(self, first)
