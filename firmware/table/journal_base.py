"""What both journals share: the outbox of unacknowledged events, the checkpoint's bytes, the
storage error. The files journal (table/journal.py) and the raw log's (table/rawjournal.py) import
it; a board journaling on the raw log never loads the files journal's code (what table/journal.py
costs a Pico's heap is in `bench_pico.py heapmap`'s record).

  checkpoint:  b"TC1" | gen (4 LE) | length (4 LE) | CRC-32 (4 LE) | JSON
"""
import json
from array import array

from table.protocol import crc32

_CK_MAGIC = b"TC1"


class StorageError(Exception):
    pass


class Outbox:
    """(seq, offset, length) of each record not yet acknowledged, oldest first. Offsets and lengths
    are two packed arrays; the numbers are not stored one by one, since they run on by one from
    the oldest except where a storage repair skipped some: the oldest's number and those skips are
    kept instead. The arrays are 6 bytes an event, a list of tuples several times that; what an
    event holds of the heap in all is in `bench_pico.py boot`'s record."""

    def __init__(self):
        self.offsets = array("i")
        self.lengths = array("H")  # a record's length field is 2 bytes: always fits
        self.first_seq = 0  # the number of the oldest (index 0)
        # [index, seq] where the numbering jumps (a repair's skip), by index: the events from
        # that index on run on from seq. Empty but after a repair.
        self.jumps = []

    def __len__(self):
        return len(self.offsets)

    def append(self, seq, offset, length):
        n = len(self.offsets)
        if not n:
            self.first_seq = seq
            self.jumps = []
        elif seq != self.seq(n - 1) + 1:
            self.jumps.append([n, seq])
        self.offsets.append(offset)
        self.lengths.append(length)

    def seq(self, index):
        start, number = 0, self.first_seq
        for at, seq in self.jumps:
            if at > index:
                break
            start, number = at, seq
        return number + index - start

    def get(self, index):
        return self.seq(index), self.offsets[index], self.lengths[index]

    def index_at_or_after(self, seq):
        """Position of the oldest event numbered seq or later (len() if none). Numbers are
        consecutive except across a storage repair's skip, so the guess is checked."""
        n = len(self.offsets)
        if not n:
            return 0
        i = seq - self.first_seq
        if i <= 0:
            return 0
        if i < n and self.seq(i) == seq:
            return i
        for j in range(n):
            if self.seq(j) >= seq:
                return j
        return n

    def count_through(self, seq):
        """How many of the oldest are numbered seq or lower: what an acknowledgement of seq
        releases (both journals' ack)."""
        n = 0
        while n < len(self.offsets) and self.seq(n) <= seq:
            n += 1
        return n

    def drop(self, n):
        """Forget the oldest n (acknowledged)."""
        if n:
            if n < len(self.offsets):
                self.first_seq = self.seq(n)
            # the jumps after the new oldest, moved down; one at it is now first_seq itself
            self.jumps = [[at - n, seq] for at, seq in self.jumps if at > n]
            self.offsets = self.offsets[n:]
            self.lengths = self.lengths[n:]


def repaired(journal, first):
    """The end of a journal's repair (both journals' clear_corrupt): the journal takes events again,
    numbered on from its new next_seq. Returns (first, last) of the numbers skipped."""
    journal.frozen = False
    journal.corrupt = None
    journal.highest_seen = journal.next_seq - 1
    return first, journal.next_seq - 1


def _le(value, n):
    return bytes((value >> (8 * i)) & 0xFF for i in range(n))


def _from_le(b, start, n):
    v = 0
    for i in range(n):
        v |= b[start + i] << (8 * i)
    return v


def checkpoint_parts(gen, content):
    """(header, body) of a checkpoint slot: written as two parts, so the state's JSON (the
    largest thing the board writes) is never copied once more to join them."""
    body = json.dumps(content).encode()
    return _CK_MAGIC + _le(gen, 4) + _le(len(body), 4) + _le(crc32(body), 4), body


def encode_checkpoint(gen, content):
    head, body = checkpoint_parts(gen, content)
    return head + body


def decode_checkpoint(data):
    """-> (gen, content) or None when the slot is empty, torn or corrupt."""
    if not data or len(data) < 15 or data[:3] != _CK_MAGIC:
        return None
    gen = _from_le(data, 3, 4)
    length = _from_le(data, 7, 4)
    crc = _from_le(data, 11, 4)
    body = data[15:15 + length]
    if len(body) != length or crc32(body) != crc:
        return None
    try:
        return gen, json.loads(body)
    except ValueError:
        return None
