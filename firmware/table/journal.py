"""Power-cut-safe storage of the table's state and its outbox of events.

Every change to the persistent state is an event; the event is appended to the journal (and
flushed) before it takes effect or goes on the wire. So the journal is both the write-ahead log of
the meters and the persistent outbox. An event carries a patch ("p": {key: new value}) of the
state keys it changes, and booting means: newest valid checkpoint + every later patch, in order.

  checkpoint slots ck_a / ck_b:  b"TC1" | gen (4 LE) | length (4 LE) | CRC-32 (4 LE) | JSON
      JSON = {"S": state, "next": next sequence, "acked": newest acknowledged, "j": journal no.}
      Written to the slot with the older generation: a cut mid-write spoils only that slot, and
      boot takes the newest slot whose CRC checks.
  journal j<N>.log:  records 0xA5 | length (2 LE) | CRC-32 (4 LE) | event JSON
      A cut mid-append leaves a torn last record: a header cut short, or a record whose length
      runs past the end of the file. Boot drops it (that event never happened: nothing acted on
      it, since acting comes after the append) and compacts. Anything else that does not check
      (a bad magic byte, a bad CRC on a complete record, valid records after a bad one) is
      corruption, not a cut: the journal is frozen as it stands and the board reports a storage
      fault (`corrupt`), because reading past it as if it were the end would roll the meters back
      and hand out sequence numbers again. `repair()` is the way out, by signed command only.

Compaction writes the unacknowledged records to j<N+1>.log, then a checkpoint naming N+1, then
removes j<N>.log; a cut anywhere in between leaves a complete older pair.
"""
import gc
import json

from table.protocol import crc32
from table.journal_base import (Outbox, StorageError, _from_le, _le, checkpoint_parts,  # noqa: F401 (re-exported)
                                decode_checkpoint, encode_checkpoint, repaired)

_REC_MAGIC = 0xA5
_REC_HEADER = 7
COMPACT_BYTES = 16384
ACK_CHECKPOINT_EVENTS = 128
# The smallest record a journal can hold (header and the shortest event JSON): a bad stretch of
# n bytes held at most n // MIN_RECORD_BYTES + 1 events, so a repair skips that many numbers.
MIN_RECORD_BYTES = 32


def encode_record(payload):
    return bytes((_REC_MAGIC,)) + _le(len(payload), 2) + _le(crc32(payload), 4) + payload


def scan_records(data):
    """Yield (offset, payload) for each valid record; stop at the first torn or bad one.
    Sets nothing; the caller compares the end offset with len(data) to see a torn tail."""
    offset = 0
    n = len(data)
    while offset + _REC_HEADER <= n:
        if data[offset] != _REC_MAGIC:
            return
        length = _from_le(data, offset + 1, 2)
        crc = _from_le(data, offset + 3, 4)
        end = offset + _REC_HEADER + length
        if end > n:
            return
        payload = data[offset + _REC_HEADER:end]
        if crc32(payload) != crc:
            return
        yield offset, payload
        offset = end


def _is_torn_tail(data, end):
    """True when the bytes from end are what a cut in the middle of one append leaves: the
    start of a single record whose header is cut short or whose length runs past the file."""
    rest = len(data) - end
    if data[end] != _REC_MAGIC:
        return False
    if rest < _REC_HEADER:
        return True
    length = _from_le(data, end + 1, 2)
    return end + _REC_HEADER + length > len(data)


def scan_any(data, start):
    """Every valid record at or after start, found by looking for the magic byte at each offset
    (records after a bad stretch, whose numbers a repair must not reuse)."""
    offset = start
    n = len(data)
    while offset + _REC_HEADER <= n:
        if data[offset] == _REC_MAGIC:
            length = _from_le(data, offset + 1, 2)
            end = offset + _REC_HEADER + length
            if end <= n and crc32(data[offset + _REC_HEADER:end]) == _from_le(data, offset + 3, 4):
                yield offset, data[offset + _REC_HEADER:end]
                offset = end
                continue
        offset += 1


class Journal:
    def __init__(self, nv):
        self.nv = nv
        self.gen = 0
        self.journal_no = 0
        self.next_seq = 1
        self.acked_seq = 0
        self.journal_bytes = 0
        self.unacked = Outbox()  # (seq, offset, length) of records not yet acknowledged, in order
        self.corrupt = None       # what is wrong, when the journal holds a bad record (see above)
        self.frozen = False       # nothing may be appended (corrupt, or the flash failed)
        self.highest_seen = 0     # the highest sequence number found anywhere in the journal
        self.bad_bytes = 0
        self._state = None
        self.checkpoint_acked = 0
        self.writes = 0
        self.bytes_written = 0

    def _journal_name(self, no=None):
        return "j%d.log" % (self.journal_no if no is None else no)

    def load(self, initial_state):
        """Boot: rebuild the state. Returns (state, fresh). Raises StorageError if the
        storage holds a journal but no valid checkpoint (never silently start from zero)."""
        best = None
        for slot in ("ck_a", "ck_b"):
            got = decode_checkpoint(self.nv.read(slot))
            if got is not None and (best is None or got[0] > best[0]):
                best = got
        names = self.nv.names()
        if best is None:
            if any((n.startswith("j") and n.endswith(".log")) or n in ("rl_a", "rl_b") for n in names):
                # (rl_a / rl_b: the raw flash log's checkpoints, its reserve gone from the board)
                raise StorageError("journal present but no valid checkpoint")
            state = dict(initial_state)
            self.gen = 0
            self.journal_no = 0
            self.next_seq = 1
            self.acked_seq = 0
            self._write_checkpoint(state)
            return state, True
        self.gen, content = best
        state = content["S"]
        self.next_seq = content["next"]
        self.acked_seq = content["acked"]
        self.checkpoint_acked = self.acked_seq
        self.journal_no = content["j"]
        for name in names:  # leftovers of a compaction cut short
            if name.startswith("j") and name.endswith(".log") and name != self._journal_name():
                self.nv.remove(name)
        data = self.nv.read(self._journal_name()) or b""
        end = 0
        self.unacked = Outbox()
        for offset, payload in scan_records(data):
            end = offset + _REC_HEADER + len(payload)
            try:
                event = json.loads(payload)
                seq = event["q"]
            except (ValueError, KeyError, TypeError):
                end = offset  # a record that checks but does not parse: corrupt from here
                break
            if seq >= self.next_seq:
                patch = event.get("p")
                if patch:
                    for key in patch:
                        state[key] = patch[key]
                self.next_seq = seq + 1
            if seq > self.acked_seq:
                self.unacked.append(seq, offset, len(payload))
        self.journal_bytes = end
        self.highest_seen = self.next_seq - 1  # the replay only raises next_seq from the checkpoint's
        self._state = state
        if end != len(data):
            if _is_torn_tail(data, end):
                self.compact(state)  # drops the torn record
            else:
                self._freeze_corrupt(data, end)
        return state, False

    def _freeze_corrupt(self, data, end):
        self.frozen = True
        self.bad_bytes = len(data) - end
        # Numbers beyond the bad stretch (records after it still check) must not be reused either,
        # and their patches are the newest word on the keys they set (patches are values, not
        # differences): the meters shown are the latest the flash still proves.
        for offset, payload in scan_any(data, end + 1):
            try:
                event = json.loads(payload)
                seq = event["q"]
            except (ValueError, KeyError, TypeError):
                continue
            if seq > self.highest_seen:
                self.highest_seen = seq
                patch = event.get("p")
                if patch and self._state is not None:
                    for key in patch:
                        self._state[key] = patch[key]
        # Status shows the next number as past everything the flash holds: none is handed out
        # while frozen, and the repair starts beyond the bad stretch as well.
        self.next_seq = max(self.next_seq, self.highest_seen + 1)
        self.corrupt = "bad journal record at byte %d of %d" % (end, len(data))

    def repair(self, state):
        """Clear a frozen journal (signed service action): keep the state up to the bad record,
        write it with the unacknowledged events before it to a new journal and a checkpoint, and
        move the next sequence number past anything the bad stretch or the records after it could
        have used. Returns (first, last) of the numbers skipped."""
        first = self.next_seq
        self.next_seq = max(self.highest_seen, self.next_seq - 1) + self.bad_bytes // MIN_RECORD_BYTES + 2
        try:
            self.compact(state)
        except OSError:
            # Still frozen (nothing may follow the bad record), and a retry skips the same numbers.
            self.next_seq = first
            raise
        return repaired(self, first)

    def append(self, event):
        """Give the event the next sequence number and make it durable. Returns the seq.
        Raises OSError when the flash will not take it (the caller freezes the journal)."""
        if self.frozen:
            raise OSError("journal frozen")
        seq = self.next_seq
        event["q"] = seq
        payload = json.dumps(event, separators=(",", ":")).encode()  # MicroPython 1.24 takes separators
        record = encode_record(payload)
        try:
            self.nv.append(self._journal_name(), record)
        except OSError:
            # Part of the record may be on flash: a later append must not follow it, and its
            # number must never be handed out again.
            self.frozen = True
            self.next_seq = seq + 1
            raise
        self.unacked.append(seq, self.journal_bytes, len(payload))
        self.journal_bytes += len(record)
        self.next_seq = seq + 1
        self.writes += 1
        self.bytes_written += len(record)
        return seq

    # Each event is its own write here (one line of the open journal file): nothing to group.
    lost_in_group = 0

    def begin_group(self):
        pass

    def end_group(self):
        pass

    def ack(self, seq):
        """Host has everything up to seq. Returns how many records that released."""
        if seq <= self.acked_seq:
            return 0
        seq = min(seq, self.next_seq - 1)  # never past the newest written
        released = self.unacked.count_through(seq)
        self.unacked.drop(released)
        self.acked_seq = seq
        return released

    def unacked_count(self):
        return len(self.unacked)

    def read_payload(self, index):
        """The stored payload of the index-th unacknowledged event (0 = oldest)."""
        seq, offset, length = self.unacked.get(index)
        return self.nv.read_at(self._journal_name(), offset + _REC_HEADER, length)

    def index_at_or_after(self, seq):
        return self.unacked.index_at_or_after(seq)

    def wants_compaction(self):
        return self.journal_bytes > COMPACT_BYTES and len(self.unacked) * 256 < self.journal_bytes

    def compact(self, state):
        old_name = self._journal_name()
        new_no = self.journal_no + 1
        new_name = self._journal_name(new_no)
        self.nv.remove(new_name)
        new_unacked = Outbox()
        offset = 0
        for i in range(len(self.unacked)):
            seq, old_offset, length = self.unacked.get(i)
            payload = self.nv.read_at(old_name, old_offset + _REC_HEADER, length)
            record = encode_record(payload)
            self.nv.append(new_name, record)
            new_unacked.append(seq, offset, length)
            offset += len(record)
            self.bytes_written += len(record)
        self.nv.close(new_name)
        self.journal_no = new_no
        self._write_checkpoint(state)
        self.nv.remove(old_name)
        self.unacked = new_unacked
        self.journal_bytes = offset

    def checkpoint(self, state):
        """Snapshot now (keeps the same journal): shortens the next boot's replay."""
        self._write_checkpoint(state)

    def wants_ack_checkpoint(self):
        """Acknowledgements live in RAM until a checkpoint; after a power cut the board would
        resend (harmless: the host drops duplicates) and copy them in its boot compaction
        (costly). So every ACK_CHECKPOINT_EVENTS acknowledged, a checkpoint records them."""
        return self.acked_seq - self.checkpoint_acked >= ACK_CHECKPOINT_EVENTS

    def _write_checkpoint(self, state):
        self.checkpoint_acked = self.acked_seq
        self.gen += 1
        content = {"S": state, "next": self.next_seq, "acked": self.acked_seq, "j": self.journal_no}
        slot = "ck_a" if self.gen % 2 else "ck_b"
        # The state's JSON is the largest single allocation the board makes: collect first, so a
        # heap fragmented by the turns since the last collection cannot fail it (a MemoryError
        # here would reset the board in the middle of its bookkeeping). Checkpoints are rare.
        gc.collect()
        parts = checkpoint_parts(self.gen, content)
        content = None
        self.nv.write(slot, parts)
        self.writes += 1
        self.bytes_written += len(parts[0]) + len(parts[1])
