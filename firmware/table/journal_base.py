"""What both journals share: the outbox of unacknowledged events, the checkpoint's bytes, the
storage error. The files journal (table/journal.py) and the raw log's (table/rawjournal.py) import
it; a board journaling on the raw log never loads the files journal's code (4.7 KB of a Pico's
heap, measured on the emulated Pico, is the whole of table/journal.py).

  checkpoint:  b"TC1" | gen (4 LE) | length (4 LE) | CRC-32 (4 LE) | JSON
"""
import json
from array import array

from table.protocol import crc32

_CK_MAGIC = b"TC1"


class StorageError(Exception):
    pass


class Outbox:
    """(seq, offset, length) of each record not yet acknowledged, oldest first, held in three
    packed arrays. A list of tuples held ~37 bytes of heap per event on the Pico build (measured,
    bench_pico.py boot), ~38 KB of its ~130 KB free with the outbox full (outbox_limit 1000 + 16);
    this holds 10 bytes per event."""

    def __init__(self):
        self.seqs = array("i")
        self.offsets = array("i")
        self.lengths = array("H")  # a record's length field is 2 bytes: always fits

    def __len__(self):
        return len(self.seqs)

    def append(self, seq, offset, length):
        self.seqs.append(seq)
        self.offsets.append(offset)
        self.lengths.append(length)

    def seq(self, index):
        return self.seqs[index]

    def get(self, index):
        return self.seqs[index], self.offsets[index], self.lengths[index]

    def index_at_or_after(self, seq):
        """Position of the oldest event numbered seq or later (len() if none). Numbers are
        consecutive except across a storage repair's skip, so the guess is checked."""
        if not len(self.seqs):
            return 0
        i = seq - self.seqs[0]
        if i <= 0:
            return 0
        if i < len(self.seqs) and self.seqs[i] == seq:
            return i
        for j in range(len(self.seqs)):
            if self.seqs[j] >= seq:
                return j
        return len(self.seqs)

    def drop(self, n):
        """Forget the oldest n (acknowledged)."""
        if n:
            self.seqs = self.seqs[n:]
            self.offsets = self.offsets[n:]
            self.lengths = self.lengths[n:]


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
