"""An append-only log of 16-byte slots programmed in place into erased NOR flash (docs/FIRMWARE.md,
"The raw flash log"). Pure: handed a block device, no machine, no os.

Why: littlefs copies a file's last block to a freshly erased one on every flushed append (4 KiB
erased for each token: `bench_pico.py wear`'s record). Here a sector is erased once per 255 slots,
so wear is one erase per 255 coin records.

The device (boards/simflash.py on the unix port, drivers/rawflash.py on the Pico) offers:
  dev.sectors                          how many 4 KiB sectors the log owns
  dev.readinto(sector, offset, buf)    fill buf from the sector
  dev.program(sector, offset, data)    NOR program: bits only go 1 -> 0 (the device pads pages
                                       with 0xFF, which leaves cells as they are)
  dev.erase(sector)                    every byte of the sector back to 0xFF

Layout: a sector is 256 slots of 16 bytes. Sectors are numbered n = 0, 1, 2, ... as the log opens
them; sector n lives in physical sector n % dev.sectors. Slot 0 is the sector header:
  0x50 | n (4 LE) | first seq (4 LE) | 0xFF x3 | CRC-32 (4 LE)
The CRC of the header is over (physical sector (2 LE) + its first 12 bytes), so a header copied
into another sector does not check. Records follow, each a whole number of slots:
  COIN  0x10|seat | ms (4) | ms - pulse end (2; 0xFFFF: none) | meter after (5) | CRC-32 (4)
  FULL  0x20 | length (2) | event JSON | 0xFF pad | CRC-32 (4)      (several slots, one CRC)
  ACK   0x30 | acknowledged seq (4) | 0xFF x7 | CRC-32 (4)
  SKIP  0x40 | sector no. (4) | first slot (1) | slots (1) | 0xFF x5 | CRC-32 (4)
  JUMP  0x60 | next seq (4 LE) | 0xFF x7 | CRC-32 (4)      (a storage repair skips numbers)
  DERIVED 0x70|form | ms (4) | 7 bytes of parameters | CRC-32 (4)   (an event that follows
        wholly from the state before it: a key, a lock, an unlock, a meters snapshot, a refused
        or late token; see
        table/rawjournal.py)
  GROUP 0x80|count | ms (4) | 7 bytes: each event's form and parameters | CRC-32 (4)   (2 or 3
        DERIVED events of one moment in one slot: a key and the lock it makes; a key, the unlock
        and the round's closing snapshot. Takes `count` numbers, one an event)
Each record's CRC-32 is over (expected seq (4 LE) + sector no. n (4 LE) + slot (1) + the record
before the CRC). The sequence number is implicit: COIN, DERIVED and FULL take the next number,
GROUP the next `count`, JUMP sets it, ACK and SKIP take none. Feeding the number and the place into the CRC makes a record that moved (to another
slot, another sector, another lap) or that a vanished record shifted fail its check.

Torn vs corrupt. A cut during a program leaves the record's slots partly programmed and only
erased slots after them (a record never spans sectors; the writer moves to the next sector
instead). Boot drops such a stretch (that event never happened: nothing acts before the write
returns) and the next record goes after it, never over it, starting with a SKIP naming the
stretch, so later boots know that hole was a tear. A bad stretch with valid records after it and
no SKIP naming it, a header that does not chain (wrong number, wrong first seq) or a non-erased
sector where only an erased one may be, is corruption: scanning stops there and `corrupt` says
where (the journal freezes, never reads past it as if it were the end).

Erase order. Opening sector n: (1) erase sector n+1's physical sector (the one after), (2) program
sector n's header. So whenever a sector has a valid header, the one after it was wholly erased
after that sector's predecessor filled: a cut during an erase hits a sector that holds nothing
the log needs, and boot finds the head before it. Erasing sector n+1 destroys sector n+1-S of the
previous lap: allowed only when a checkpoint covers it (`covered_n`, the sector the checkpoint's
replay starts in, is above it); else `append` raises LogFull and the caller checkpoints first.
"""
import binascii

SECTOR_BYTES = 4096
SLOT_BYTES = 16
SLOTS = SECTOR_BYTES // SLOT_BYTES  # 256, slot 0 the header

K_HEADER = 0x50
K_COIN = 0x10
K_FULL = 0x20
K_ACK = 0x30
K_SKIP = 0x40
K_JUMP = 0x60
K_DERIVED = 0x70
K_GROUP = 0x80
MAX_GROUP_EVENTS = 3  # the most numbers one slot takes

COIN_BODY = 12  # a coin record before its CRC
NO_PULSE_END = 0xFFFF
# The largest FULL record: a bad stretch longer than this (plus the SKIPs a run of cuts during
# boots can leave torn after it) is not a tear.
MAX_RECORD_SLOTS = 96
MAX_PAYLOAD_BYTES = MAX_RECORD_SLOTS * SLOT_BYTES - 7
TORN_SLACK_SLOTS = 8

END = "end"
CORRUPT = "corrupt"


class LogFull(OSError):
    """The next sector still holds records no checkpoint covers."""


def le(value, n):
    return bytes((value >> (8 * i)) & 0xFF for i in range(n))


def from_le(b, start, n):
    v = 0
    for i in range(n):
        v |= b[start + i] << (8 * i)
    return v


def slots_for(kind_byte, b1, b2):
    """How many slots a record takes, from its first three bytes (0: not a record start)."""
    k = kind_byte & 0xF0
    if k == K_COIN or k == K_ACK or k == K_SKIP or k == K_JUMP or k == K_DERIVED:
        return 1
    if k == K_GROUP:
        return 1 if 2 <= kind_byte & 0x0F <= MAX_GROUP_EVENTS else 0
    if k == K_FULL:
        length = b1 | (b2 << 8)
        if length > MAX_PAYLOAD_BYTES:
            return 0
        return (3 + length + 4 + SLOT_BYTES - 1) // SLOT_BYTES
    return 0


def numbers_taken(kind_byte):
    """How many sequence numbers a record of this first byte takes (JUMP sets the number instead)."""
    k = kind_byte & 0xF0
    if k == K_COIN or k == K_FULL or k == K_DERIVED:
        return 1
    if k == K_GROUP:
        return kind_byte & 0x0F
    return 0


def record_crc(seq, n, slot, body):
    crc = binascii.crc32(le(seq, 4) + le(n, 4) + bytes((slot,)))
    return binascii.crc32(body, crc) & 0xFFFFFFFF


def header_crc(phys, body12):
    return binascii.crc32(body12, binascii.crc32(le(phys, 2))) & 0xFFFFFFFF


_PAGE_BYTES = 256
_ERASED_PAGE = b"\xff" * _PAGE_BYTES


def _all_ff(buf, start=0, end=None):
    if end is None:
        end = len(buf)
    for i in range(start, end):
        if buf[i] != 0xFF:
            return False
    return True


# ------------------------------------------------------------------ the compact coin record
def encode_coin(seat, ms, pulse_end_ms, meter_after):
    """The 12 bytes of a coin record before its CRC, or None when a field does not fit (the
    caller then writes the event whole, as a FULL record)."""
    if not (0 <= seat < 16 and 0 <= ms < (1 << 32) and 0 <= meter_after < (1 << 40)):
        return None
    if pulse_end_ms is None:
        offset = NO_PULSE_END
    else:
        offset = ms - pulse_end_ms
        if not (0 <= offset < NO_PULSE_END):
            return None
    return bytes((K_COIN | seat,)) + le(ms, 4) + le(offset, 2) + le(meter_after, 5)


def decode_coin(body):
    """-> (seat, ms, pulse end ms or None, meter after)."""
    seat = body[0] & 0x0F
    ms = from_le(body, 1, 4)
    offset = from_le(body, 5, 2)
    return seat, ms, (None if offset == NO_PULSE_END else ms - offset), from_le(body, 7, 5)


def replay_coin(state, cfg, body, credit):
    """The coin event's money fields and patch, recomputed from the state before and the
    configuration in force with `credit` (table.meter.credit), and checked against the meter the
    record stored. Raises ValueError when they disagree: the record, the state or the
    configuration is not what was on the board when the token was credited."""
    seat, ms, pulse_end_ms, meter_after = decode_coin(body)
    fields, patch = credit(state, cfg, seat)
    if patch["meter"] != meter_after:
        raise ValueError("coin record: meter %d stored, %d recomputed" % (meter_after, patch["meter"]))
    fields["seat"] = seat
    fields["round"] = state["round"]
    fields["pe"] = pulse_end_ms
    return ms, fields, patch


def encode_full(payload, kind=K_FULL):
    """A FULL record before its CRC: kind, length, payload, 0xFF padding to whole slots. None
    when the payload is too long for one record."""
    n = len(payload)
    if n > MAX_PAYLOAD_BYTES:
        return None
    total = slots_for(K_FULL, n & 0xFF, n >> 8) * SLOT_BYTES
    return bytes((kind,)) + le(n, 2) + payload + b"\xff" * (total - 7 - n)


def full_payload(body):
    """The payload of a FULL record's body."""
    return bytes(body[3:3 + from_le(body, 1, 2)])


def encode_jump(next_seq):
    return bytes((K_JUMP,)) + le(next_seq, 4) + b"\xff" * 7


def encode_ack(seq):
    return bytes((K_ACK,)) + le(seq, 4) + b"\xff" * 7


class RawLog:
    def __init__(self, dev):
        self.dev = dev
        self.sectors = dev.sectors
        # Slots a sector gives the log (a device may keep its last slot for itself: the Pico's
        # reserve files keep their tag there).
        self.slots = getattr(dev, "slots", SLOTS)
        self._slot = bytearray(SLOT_BYTES)
        self._page = bytearray(_PAGE_BYTES)
        # Where the next record goes and the number it takes. head_slot == self.slots: sector full.
        self.head_n = 0
        self.head_slot = 0
        self.next_seq = 1
        self.needs_open = True      # head_n has no header yet (or a torn one): open it first
        self.top_n = 0              # the highest sector number a scan found records in
        # A number the log is known to have reached: the journal's checkpoint says which came
        # next when it was written, so every record before it was whole then. A bad stretch
        # before it is no tear, and the records after a JUMP that no longer checks (numbered
        # where neither _looks_torn nor a slot's window looks) are looked for around it.
        self.next_known = 0
        self.corrupt = None         # where scanning found corruption, else None
        self.torn = None            # (n, first slot, slots) of a tear found at boot, to be SKIPped
        self.erases = 0
        self.programs = 0
        self.program_bytes = 0

    # ---------------------------------------------------------------- low level
    def _phys(self, n):
        return n % self.sectors

    def _read_slot(self, n, slot):
        self.dev.readinto(self._phys(n), slot * SLOT_BYTES, self._slot)
        return self._slot

    def _read(self, n, slot, length):
        buf = bytearray(length)
        self.dev.readinto(self._phys(n), slot * SLOT_BYTES, buf)
        return buf

    def _slot_erased(self, n, slot):
        return _all_ff(self._read_slot(n, slot))

    def _erased_from(self, n, slot):
        """True when every slot of sector n from `slot` on is erased. Read a page at a time and
        compared in C: every boot checks the rest of the head sector and the sector after it,
        and slot by slot that was 1,000 flash reads, 0.6 s of a Pico's boot."""
        at = slot * SLOT_BYTES
        end = self.slots * SLOT_BYTES
        page = self._page
        while at < end:
            if end - at < _PAGE_BYTES:
                page = bytearray(end - at)
            self.dev.readinto(self._phys(n), at, page)
            if page != _ERASED_PAGE[:len(page)]:
                return False
            at += len(page)
        return True

    def _last_used(self, n, start):
        """The last slot of sector n at or after start that is not erased (start - 1 if none)."""
        last = start - 1
        for s in range(start, self.slots):
            if not self._slot_erased(n, s):
                last = s
        return last

    def read_header(self, n):
        """-> first seq of sector n's header when it checks and says n, else None."""
        b = self._read_slot(n, 0)
        if b[0] != K_HEADER or from_le(b, 1, 4) != n:
            return None
        if from_le(b, 12, 4) != header_crc(self._phys(n), bytes(b[:12])):
            return None
        return from_le(b, 5, 4)

    def holds_a_log(self):
        """Whether any sector holds a valid header: a log is there (never format over it)."""
        for phys in range(self.sectors):
            b = self._read_slot(phys, 0)  # sector numbers n with n % S == phys read the same place
            if b[0] == K_HEADER and from_le(b, 12, 4) == header_crc(phys, bytes(b[:12])) \
                    and from_le(b, 1, 4) % self.sectors == phys:
                return True
        return False

    def _program(self, n, slot, data):
        self.dev.program(self._phys(n), slot * SLOT_BYTES, data)
        self.programs += 1
        self.program_bytes += len(data)

    def _erase(self, n):
        self.dev.erase(self._phys(n))
        self.erases += 1

    def _sector_erased(self, n):
        return self._erased_from(n, 0)

    # ---------------------------------------------------------------- format and open
    def format(self, first_seq=1):
        """A new log: sector 0 opened at first_seq. Every other sector is left as it is (the
        erase order keeps what is beyond the head out of any scan)."""
        self.head_n = 0
        self.head_slot = 0
        self.next_seq = first_seq
        self.needs_open = True
        self.corrupt = None
        self.torn = None
        self._open(0, None)

    def _open(self, n, covered_n):
        """Make sector n the head: erase the sector after it (if covered), then its header."""
        if covered_n is not None and n + 1 - self.sectors >= covered_n:
            raise LogFull("sector %d still holds records no checkpoint covers" % (n + 1 - self.sectors))
        if not self._sector_erased(n):
            # A torn header (cut while it was programmed) or a cut erase: holds nothing needed.
            self._erase(n)
        if not self._sector_erased(n + 1):
            self._erase(n + 1)
        head = bytes((K_HEADER,)) + le(n, 4) + le(self.next_seq, 4) + b"\xff\xff\xff"
        self._program(n, 0, head + le(header_crc(self._phys(n), head), 4))
        self.head_n = n
        self.head_slot = 1
        self.needs_open = False

    def must_open_sector(self, slots):
        """True when a record of `slots` slots needs a new sector (and so an erase)."""
        return self.needs_open or self.head_slot + slots > self.slots

    # ---------------------------------------------------------------- append
    def cover_needed(self):
        """The sector a checkpoint must start in (or later) before the log may open its next
        sector: that open erases the sector after it, the previous lap's sector m + 1 - S."""
        m = self.head_n if self.needs_open else self.head_n + 1
        return m + 2 - self.sectors

    def append(self, body, takes_seq, covered_n):
        """Program one record (body: the record before its CRC, a whole number of slots less 4
        bytes). Returns (n, slot, seq): its place and the number it took (or would have, for
        ACK and SKIP). Raises LogFull when a new sector is needed and its erase is not covered
        by covered_n (the sector the newest checkpoint's replay starts in). The device's own
        errors pass through: the slot may then be torn, and nothing may be appended before a
        boot has scanned it."""
        slots = (len(body) + 4) // SLOT_BYTES
        if body[0] & 0xF0 == K_JUMP:
            takes_seq = False
        if self.torn is not None:
            tn, tslot, tcount = self.torn
            skip = bytes((K_SKIP,)) + le(tn, 4) + bytes((tslot, tcount)) + b"\xff" * 5
            if self.must_open_sector(1):
                self._open(self.head_n + (0 if self.needs_open else 1), covered_n)
            self.torn = None
            self._append_here(skip, False, 1)
        if self.must_open_sector(slots):
            self._open(self.head_n + (0 if self.needs_open else 1), covered_n)
        return self._append_here(body, takes_seq, slots)

    def _append_here(self, body, takes_seq, slots):
        n = self.head_n
        slot = self.head_slot
        seq = self.next_seq
        crc = record_crc(seq, n, slot, body)
        # Never over a torn slot, even if this program fails: the head moves first.
        self.head_slot = slot + slots
        self._program(n, slot, body + le(crc, 4))
        if takes_seq:
            self.next_seq = seq + numbers_taken(body[0])
        elif body[0] & 0xF0 == K_JUMP:
            self.next_seq = from_le(body, 1, 4)
        return n, slot, seq

    # ---------------------------------------------------------------- boot scan
    def _record_at(self, n, slot, seq):
        """(kind, body, slots) of a record at (n, slot) that checks as number seq, else None."""
        b = self._read_slot(n, slot)
        count = slots_for(b[0], b[1], b[2])
        if not count or slot + count > self.slots:
            return None
        if count == 1:
            body = memoryview(b)[:12]
            crc = from_le(b, 12, 4)
        else:
            whole = self._read(n, slot, count * SLOT_BYTES)
            body = memoryview(whole)[:count * SLOT_BYTES - 4]
            crc = from_le(whole, count * SLOT_BYTES - 4, 4)
        if record_crc(seq, n, slot, body) != crc:
            return None
        return b[0] & 0xF0, body, count

    def scan(self, n, slot, seq, visit):
        """Read every record from (n, slot), the first expected to take number seq, to the end of
        the log: visit(kind, body, seq, n, slot) for each valid record (body: a memoryview of the
        record before its CRC, valid only during the call; seq: the number it took or, for ACK
        and SKIP, the next one). Sets the head (where the next record goes), `torn` when the log
        ends in a tear, `corrupt` (n, slot, why) when scanning stopped at corruption. Returns END
        or CORRUPT. A one-slot record costs no allocation."""
        self.corrupt = None
        self.torn = None
        self.top_n = max(self.top_n, n)  # in use, whatever its header says now
        first = self.read_header(n)
        if first is None:
            return self._corrupt(n, 0, "no valid header in the checkpoint's sector")
        if slot == 0:
            slot = 1
            if first != seq:
                return self._corrupt(n, 0, "header says seq %d, checkpoint %d" % (first, seq))
        while True:
            if slot >= self.slots or (self._slot_erased(n, slot) and self._erased_from(n, slot + 1)):
                # The end of this sector's records (a FULL that did not fit moved on to the next
                # sector), or of the log.
                nxt = self._next_sector(n, seq)
                if nxt is CORRUPT:
                    return CORRUPT
                if nxt:
                    n, slot = n + 1, 1
                    self.top_n = max(self.top_n, n)
                    continue
                return self._end(n, slot, seq)
            got = self._record_at(n, slot, seq)
            if got is not None:
                kind, body, count = got
                visit(kind, body, seq, n, slot)
                if kind == K_JUMP:
                    to = from_le(body, 1, 4)
                    if to < seq:
                        return self._corrupt(n, slot, "jump back to %d from %d" % (to, seq))
                    seq = to
                else:
                    seq += numbers_taken(body[0])
                slot += count
                continue
            # Not a record: a tear the log already SKIPped, a tear at the end, or corruption.
            after = self._skip_names(n, slot, seq)
            if after is not None:
                slot = after
                continue
            last = self._last_used(n, slot)
            if not self._looks_torn(n, slot, last, seq):
                return self._corrupt(n, slot, "bad record")
            nxt = self._next_sector(n, seq)
            if nxt is CORRUPT:
                return CORRUPT
            if nxt:
                # The log goes on in the next sector: only after the SKIP naming this tear.
                if self._skip_at(n + 1, 1, seq, n, slot):
                    n, slot = n + 1, 2
                    self.top_n = max(self.top_n, n)
                    continue
                return self._corrupt(n, slot, "bad record")
            if seq < self.next_known:
                return self._corrupt(n, slot, "bad record before number %d" % self.next_known)
            self.torn = (n, slot, last - slot + 1)
            return self._end(n, last + 1, seq)

    def _looks_torn(self, n, slot, last, seq):
        """Whether the bad stretch slot..last (only erased slots after it) is what cuts leave: one
        record cut while it was programmed, then at most TORN_SLACK_SLOTS SKIPs cut in later
        boots. The record's extent is what its first bytes say, or to the end of the page it
        starts in (a page programs as one: its length bytes may be the torn ones). No valid
        record may start inside the stretch (a bit flipped in a record with others after it, or
        records cut out and moved up, are corruption: treating them as a tear would drop them)."""
        b = self._read_slot(n, slot)
        count = slots_for(b[0], b[1], b[2])
        extent = slot + count
        if count == 0:
            extent = slot + MAX_RECORD_SLOTS  # the kind byte itself torn: a FULL may have been
        elif b[0] & K_FULL:
            # Maybe a FULL (any partly programmed 0x20 keeps bit 5) whose length bytes are torn.
            page_end = (slot * SLOT_BYTES // 256 + 1) * 256 // SLOT_BYTES
            extent = max(extent, page_end)
        for s in range(slot + 1, last + 1):
            # The numbers a record starting at s could take: the torn one's (it took none, or
            # up to a GROUP's), or one a slot before it (up to a GROUP's a slot).
            for q in (seq, seq + 1, seq + 2, seq + 3, seq + s - slot, seq + MAX_GROUP_EVENTS * (s - slot)):
                if self._record_at(n, s, q) is not None:
                    return False
            if s >= extent:
                # Past the torn record: only torn SKIPs (a partly programmed 0x40 keeps bit 6).
                if s - extent >= TORN_SLACK_SLOTS or not (self._read_slot(n, s)[0] & 0x40):
                    return False
        return True

    def _end(self, n, slot, seq):
        self.head_n, self.head_slot, self.next_seq = n, slot, seq
        self.needs_open = False
        return END

    def _skip_at(self, n, slot, seq, torn_n, torn_slot):
        b = self._read_slot(n, slot)
        if b[0] != K_SKIP or from_le(b, 1, 4) != torn_n or b[5] != torn_slot:
            return False
        return record_crc(seq, n, slot, bytes(b[:12])) == from_le(b, 12, 4)

    def _skip_names(self, n, slot, seq):
        """The slot after a valid SKIP in sector n right after the stretch from slot, or None."""
        for s in range(slot + 1, min(self.slots, slot + MAX_RECORD_SLOTS + TORN_SLACK_SLOTS + 1)):
            if self._skip_at(n, s, seq, n, slot) and slot + self._slot[6] == s:
                return s + 1
        return None

    def _next_sector(self, n, seq):
        """Whether the log goes on in sector n + 1 (its header chains on), or ends in sector n
        (False), or CORRUPT. Sector n has a valid header, and opening it erased sector n + 1
        first: so n + 1 now holds a header that chains, or nothing but perhaps a header cut
        while it was programmed. Anything else (an older lap's header, records behind a bad or
        missing header) is corruption."""
        first = self.read_header(n + 1)
        if first is not None:
            if first != seq:
                return self._corrupt(n + 1, 0, "header says seq %d, log is at %d" % (first, seq))
            return True
        if self._erased_from(n + 1, 1):
            return False
        return self._corrupt(n + 1, 0, "sector header bad")

    def _corrupt(self, n, slot, why):
        self.corrupt = (n, slot, why)
        # Its records are still there (behind a bad header, say): in use, so a repair's new
        # stretch starts past it, and a cut before the repair moves boot leaves them to be read.
        self.top_n = max(self.top_n, n)
        return CORRUPT

    def scan_after_corruption(self, n, slot, seq, visit):
        """Records that still check after a corrupt spot at (n, slot), the log then at number
        seq: their numbers must not be reused, and their values are the newest word on the keys
        they set. In sector n, each later slot is tried with every number it could hold; the
        sectors after it whose headers chain give their numbers; so do the numbers around
        next_known (a repair's JUMP skips more than a slot's window reaches). Calls visit as scan
        does; returns the highest number used (seq - 1 if none)."""
        highest = seq - 1
        m = n
        s = slot + 1
        guess = None  # the number the next record takes once one is found
        while True:
            while s < self.slots:
                got = None
                if guess is not None:
                    got = self._record_at(m, s, guess)
                    q = guess
                if got is None:
                    # Up to highest + 1 + 3s: at most a GROUP's numbers a slot before s (the last
                    # slots of a sector need that many; the slots left alone gave slot 255 one try).
                    for q in range(highest + 1, highest + 2 + MAX_GROUP_EVENTS * max(s, self.slots - s)):
                        got = self._record_at(m, s, q)
                        if got is not None:
                            break
                if got is None:
                    # At most a sector's slots (of up to a GROUP's numbers) away from the record
                    # numbered next_known - 1.
                    window = MAX_GROUP_EVENTS * self.slots
                    for q in range(max(highest + 1, self.next_known - window), self.next_known + window):
                        got = self._record_at(m, s, q)
                        if got is not None:
                            break
                if got is None:
                    s += 1
                    guess = None
                    continue
                kind, body, count = got
                visit(kind, body, q, m, s)
                guess = q
                taken = numbers_taken(body[0])
                if taken:
                    highest = max(highest, q + taken - 1)
                    guess = q + taken
                elif kind == K_JUMP:
                    guess = from_le(body, 1, 4)
                    highest = max(highest, guess - 1)
                s += count
            m += 1
            if m >= n + self.sectors:
                return highest
            first = self.read_header(m)
            if first is None or first - 1 < highest:
                return highest
            self.top_n = max(self.top_n, m)
            highest = first - 1
            s = 1
            guess = first
