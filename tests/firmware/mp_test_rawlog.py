"""The raw flash log (firmware/table/rawlog.py) on a NOR flash model (boards/simflash.py): its
bytes, power cuts at every byte of a record and during erases, corruption told from tears, records
moved into other slots, wrap, and the coin record's meter check.

The expected bytes below were computed with CPython's zlib, not with the code under test."""
import mptest
from simkit import fresh_dir
from boards.simflash import SimNorFlash, PowerCut
from table import rawlog as R
from table import meter

SECTORS = 6
CFG = {"increment_cents": 70, "reserve_cents": 20, "ceiling_cents": 10 ** 9}


def _dev(name, sectors=SECTORS):
    return SimNorFlash(fresh_dir(name) + "/flash.bin", sectors)


def _state(meter_cents=0):
    s = {"meter": meter_cents, "over": 0, "res": 0, "contrib": 0, "rcontrib": 0, "round": 3}
    for i in range(8):
        s["c%d" % i] = 0
        s["t%d" % i] = 0
    return s


class Seen:
    """Collects what a scan visits: (kind, seq, n, slot, body bytes)."""

    def __init__(self):
        self.items = []

    def __call__(self, kind, body, seq, n, slot):
        self.items.append((kind, seq, n, slot, bytes(body)))

    def seqs(self, kind=None):
        return [it[1] for it in self.items if kind is None or it[0] == kind]


def _boot(dev, start=(0, 0, 1)):
    log = R.RawLog(dev)
    seen = Seen()
    status = log.scan(start[0], start[1], start[2], seen)
    return log, seen, status


def _coin(i):
    return R.encode_coin(i % 7, 1000 + i, 990 + i, 70 * (i + 1))


def test_the_bytes_of_a_header_and_a_coin_record_are_the_documented_ones():
    dev = _dev("rlbytes")
    log = R.RawLog(dev)
    log.format(1)
    assert dev.read(0, 0, 16) == bytes.fromhex("500000000001000000ffffff" "6d0e094b")
    body = R.encode_coin(3, 1000, 960, 123456789)
    assert body == bytes.fromhex("13e8030000280015cd5b0700")
    assert log.append(body, True, 0) == (0, 1, 1)
    assert dev.read(0, 16, 16) == body + bytes.fromhex("3957d2f1")
    assert dev.read(0, 32, 16) == b"\xff" * 16
    assert R.decode_coin(body) == (3, 1000, 960, 123456789)
    assert R.decode_coin(R.encode_coin(0, 5, None, 0)) == (0, 5, None, 0)


def test_a_coin_that_does_not_fit_sixteen_bytes_is_refused_not_truncated():
    assert R.encode_coin(16, 1, 1, 1) is None
    assert R.encode_coin(0, 1 << 32, None, 1) is None  # ms past 4 bytes (49.7 days of uptime)
    assert R.decode_coin(R.encode_coin(0, (1 << 32) - 1, None, 1)) == (0, (1 << 32) - 1, None, 1)
    assert R.encode_coin(0, 100, 101, 1) is None  # pulse end after the event
    assert R.encode_coin(0, 70000, 1, 1) is None  # offset past 2 bytes
    assert R.encode_coin(0, 1, 1, 1 << 40) is None
    assert R.encode_coin(0, 1, 1, -1) is None


def test_records_read_back_in_order_with_implicit_numbers():
    dev = _dev("rlorder")
    log = R.RawLog(dev)
    log.format(1)
    big = b'{"k":"award","p":{"meter":1}}' * 20  # 600 bytes: 38 slots, over three pages
    log.append(_coin(0), True, 0)
    log.append(R.encode_full(big), True, 0)
    log.append(R.encode_ack(2), False, 0)
    log.append(_coin(1), True, 0)
    log2, seen, status = _boot(dev)
    assert status == R.END and log2.corrupt is None and log2.torn is None
    assert [(k, q) for k, q, _n, _s, _b in seen.items] == [
        (R.K_COIN, 1), (R.K_FULL, 2), (R.K_ACK, 3), (R.K_COIN, 3)]
    full = seen.items[1][4]
    assert full[3:3 + len(big)] == big and R.from_le(full, 1, 2) == len(big)
    assert (log2.head_n, log2.head_slot, log2.next_seq) == (log.head_n, log.head_slot, 4)


def _fill(log, count, start=0, covered=0):
    for i in range(start, start + count):
        log.append(_coin(i), True, covered)


def test_a_cut_at_every_byte_of_a_coin_record_drops_only_that_record():
    for cut in range(16):
        dev = _dev("rlcut%d" % cut)
        log = R.RawLog(dev)
        log.format(1)
        _fill(log, 5)
        dev.arm_cut(program_bytes=cut)
        try:
            log.append(_coin(5), True, 0)
            raise AssertionError("no cut")
        except PowerCut:
            pass
        dev.power_on()
        log2, seen, status = _boot(dev)
        assert status == R.END and log2.corrupt is None, (cut, log2.corrupt)
        assert seen.seqs() == [1, 2, 3, 4, 5], cut
        # The torn slot is never written over: the next record goes after it (after a SKIP).
        if cut:
            assert log2.torn == (0, 6, 1) and log2.head_slot == 7, (cut, log2.torn)
        log2.append(_coin(50), True, 0)
        log2.append(_coin(51), True, 0)
        log3, seen3, status3 = _boot(dev)
        assert status3 == R.END and log3.corrupt is None and log3.torn is None, (cut, log3.corrupt)
        assert seen3.seqs(R.K_COIN) == [1, 2, 3, 4, 5, 6, 7], cut  # number 6 was never used
        assert R.decode_coin(seen3.items[-1][4]) == R.decode_coin(_coin(51))


def test_a_cut_at_every_byte_of_a_multi_page_record_leaves_it_whole_or_absent():
    payload = b'{"k":"award","pay":[1,2,3,4,5,6,7],"p":{"meter":100}}' * 6  # 3 pages' worth
    body = R.encode_full(payload)
    dev = _dev("rlcutfull")
    for cut in range(0, len(body) + 4, 7):
        log = R.RawLog(dev)
        log.format(1)
        _fill(log, 3)
        # The record straddles page boundaries and may not start at a page.
        dev.arm_cut(program_bytes=cut)
        try:
            log.append(body, True, 0)
            dev.power_on()
            whole = True
        except PowerCut:
            dev.power_on()
            whole = False
        log2, seen, status = _boot(dev)
        assert status == R.END and log2.corrupt is None, (cut, log2.corrupt)
        got = [it for it in seen.items if it[0] == R.K_FULL]
        if whole:
            assert len(got) == 1 and got[0][4][3:3 + len(payload)] == payload
        else:
            assert got == [], cut  # the award is not in the log at all: not paid
        log2.append(_coin(9), True, 0)
        log3, seen3, status3 = _boot(dev)
        assert status3 == R.END and log3.corrupt is None, (cut, log3.corrupt)
        assert seen3.seqs(R.K_COIN)[-1] == (5 if whole else 4)


def test_a_cut_while_a_skip_is_written_and_again_at_the_next_boot_still_boots():
    dev = _dev("rlskipcut")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 4)
    dev.arm_cut(program_bytes=9)
    try:
        log.append(_coin(4), True, 0)
    except PowerCut:
        dev.power_on()
    for cut in (3, 0, 12):  # each boot's SKIP torn in turn
        log2, seen, status = _boot(dev)
        assert status == R.END and log2.corrupt is None, log2.corrupt
        dev.arm_cut(program_bytes=cut)
        try:
            log2.append(_coin(5), True, 0)
        except PowerCut:
            dev.power_on()
    log3, seen3, status3 = _boot(dev)
    assert status3 == R.END and log3.corrupt is None, log3.corrupt
    log3.append(_coin(6), True, 0)
    log4, seen4, status4 = _boot(dev)
    assert status4 == R.END and log4.corrupt is None and seen4.seqs(R.K_COIN) == [1, 2, 3, 4, 5], seen4.items


def test_a_flipped_bit_is_corruption_not_a_tear():
    for where in (16 * 3 + 2, 16 * 3 + 14, 16 * 10 + 5):  # record 3's ms, its CRC; record 10's
        dev = _dev("rlflip")
        log = R.RawLog(dev)
        log.format(1)
        _fill(log, 20)
        b = bytearray(dev.read(0, where, 1))
        f = open(dev.path, "r+b")
        f.seek(where)
        f.write(bytes((b[0] ^ 0x08,)))
        f.close()
        log2, seen, status = _boot(dev)
        assert status == R.CORRUPT and log2.corrupt[:2] == (0, where // 16), log2.corrupt
        assert seen.seqs() == list(range(1, where // 16))  # the records before it still count
        later = Seen()
        highest = log2.scan_after_corruption(0, where // 16, where // 16, later)
        assert highest == 20 and later.seqs() == list(range(where // 16 + 1, 21)), later.seqs()


def _poke(dev, sector, offset, data):
    f = open(dev.path, "r+b")
    f.seek(sector * 4096 + offset)
    f.write(data)
    f.close()


def test_a_sector_is_erased_from_a_slot_only_if_every_byte_to_its_end_is():
    # Read a page at a time: a programmed byte anywhere after the slot, on any page, up to the
    # sector's last slot, means not erased.
    dev = _dev("rl_erasedfrom")
    log = R.RawLog(dev)
    assert log._erased_from(2, 0) and log._erased_from(2, 5)
    for slot in (5, 17, 200, log.slots - 1):
        dev.erase(2)
        _poke(dev, 2, slot * R.SLOT_BYTES + 15, b"\x7f")
        assert not log._erased_from(2, 1), slot
        assert log._erased_from(2, slot + 1), slot
    assert log._erased_from(3, 0)


def test_a_record_copied_into_another_slot_does_not_check():
    dev = _dev("rlmove")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 6)
    # Replay record 2 into the next free slot: its number and place are in its CRC.
    _poke(dev, 0, 16 * 7, dev.read(0, 16 * 2, 16))
    log2, seen, status = _boot(dev)
    assert seen.seqs() == [1, 2, 3, 4, 5, 6] and log2.next_seq == 7  # not credited again
    # Mid-log (over a record, as an attacker with a programmer could): corruption.
    _poke(dev, 0, 16 * 4, b"\xff" * 16)  # (an attacker, not NOR: set back to erased)
    _poke(dev, 0, 16 * 4, dev.read(0, 16 * 2, 16))
    log3, seen3, status3 = _boot(dev)
    assert status3 == R.CORRUPT and log3.corrupt[:2] == (0, 4), log3.corrupt
    # Swapping two records: both fail.
    dev2 = _dev("rlswap")
    log = R.RawLog(dev2)
    log.format(1)
    _fill(log, 6)
    a, b = dev2.read(0, 32, 16), dev2.read(0, 48, 16)
    _poke(dev2, 0, 32, b)
    _poke(dev2, 0, 48, a)
    log4, seen4, status4 = _boot(dev2)
    assert status4 == R.CORRUPT and seen4.seqs() == [1], seen4.seqs()


def test_a_deleted_record_shifts_the_numbers_and_fails():
    dev = _dev("rldel")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 6)
    rest = dev.read(0, 16 * 4, 16 * 4)
    _poke(dev, 0, 16 * 3, rest + b"\xff" * 16)  # record 3 cut out, the later ones moved up
    log2, seen, status = _boot(dev)
    # Not taken for a tear (that would drop records 4 to 6 and roll the meter back).
    assert seen.seqs() == [1, 2] and status == R.CORRUPT, (status, log2.torn)


def _checkpointed_fill(log, count, start, ck):
    """Appends coins; when the log needs an erase the stand-in journal checkpoints at the head
    (as the real journal does when nothing is unacknowledged). ck: [n, slot, seq]."""
    for i in range(start, start + count):
        if log.must_open_sector(1) and ck[0] < log.cover_needed():
            ck[0], ck[1], ck[2] = log.head_n, log.head_slot, log.next_seq
        log.append(_coin(i), True, ck[0])


def test_the_log_wraps_erasing_only_sectors_a_checkpoint_covers():
    dev = _dev("rlwrap", 4)
    log = R.RawLog(dev)
    log.format(1)
    ck = [0, 0, 1]
    per_sector = R.SLOTS - 1
    _checkpointed_fill(log, per_sector * 10, 0, ck)  # two and a half laps
    assert log.head_n >= 9
    # One erase a sector opened, never more (a fresh chip's first lap needs none).
    assert dev.erases == log.head_n + 2 - 4, (dev.erases, log.head_n)
    log2, seen, status = _boot(dev, ck)
    assert status == R.END and log2.corrupt is None, log2.corrupt
    assert seen.seqs() == list(range(ck[2], per_sector * 10 + 1))
    assert log2.next_seq == per_sector * 10 + 1
    # With the checkpoint held back (events unacknowledged), the log refuses to erase them.
    try:
        _fill(log, per_sector * 4, per_sector * 10, ck[0])
        raise AssertionError("no LogFull")
    except R.LogFull:
        pass
    log3, seen3, status3 = _boot(dev, ck)
    assert status3 == R.END and seen3.seqs()[0] == ck[2] and log3.corrupt is None


def test_a_cut_during_any_erase_loses_nothing():
    for erase_bytes in (0, 16, 100, 2048, 4095, 4096):
        dev = _dev("rlerase", 3)
        log = R.RawLog(dev)
        log.format(1)
        ck = [0, 0, 1]
        _checkpointed_fill(log, 2 * (R.SLOTS - 1), 0, ck)  # sectors 0 and 1 full (2 erased once)
        dev.arm_cut(erase_bytes=erase_bytes)
        try:
            _checkpointed_fill(log, 10, 1000, ck)  # opens sector 2: erases physical sector 0
            raise AssertionError("no cut")
        except PowerCut:
            dev.power_on()
        assert dev.cut_at[0] == "erase"
        log2, seen, status = _boot(dev, ck)
        assert status == R.END and log2.corrupt is None, (erase_bytes, log2.corrupt)
        last = 2 * (R.SLOTS - 1)
        assert log2.next_seq == last + 1 and ck[2] == last + 1, erase_bytes
        before = dev.erases
        log2.append(_coin(7), True, ck[0])
        log2.append(_coin(8), True, ck[0])
        log3, seen3, status3 = _boot(dev, ck)
        assert status3 == R.END and log3.corrupt is None, (erase_bytes, log3.corrupt)
        assert seen3.seqs() == [last + 1, last + 2] and dev.erases - before <= 2
        # From the format on, every record still reads back across the interrupted erase.
        log4, seen4, status4 = _boot(dev, (1, 0, R.SLOTS))
        assert status4 == R.END and seen4.seqs() == list(range(R.SLOTS, last + 3))


def test_a_cut_while_a_sector_header_is_programmed_loses_nothing():
    for cut in range(16):
        dev = _dev("rlhead", 4)
        log = R.RawLog(dev)
        log.format(1)
        _fill(log, R.SLOTS - 1)
        dev.arm_cut(program_bytes=cut)
        try:
            log.append(_coin(999), True, 0)
            raise AssertionError("no cut")
        except PowerCut:
            dev.power_on()
        log2, seen, status = _boot(dev)
        assert status == R.END and log2.corrupt is None, (cut, log2.corrupt)
        assert seen.seqs() == list(range(1, R.SLOTS)) and log2.head_slot == R.SLOTS
        log2.append(_coin(999), True, 0)
        log3, seen3, status3 = _boot(dev)
        assert status3 == R.END and seen3.seqs()[-1] == R.SLOTS, (cut, log3.corrupt)


def test_a_bad_sector_header_with_records_behind_it_is_corruption():
    dev = _dev("rlbadhead", 4)
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, R.SLOTS + 10)
    _poke(dev, 1, 6, b"\x07")  # the first seq it says
    log2, seen, status = _boot(dev)
    assert status == R.CORRUPT and log2.corrupt[:2] == (1, 0)
    # An older lap's sector where the next one must be (a header copied in): corruption too.
    dev2 = _dev("rloldlap", 4)
    log = R.RawLog(dev2)
    log.format(1)
    _fill(log, R.SLOTS + 10)
    _poke(dev2, 1, 0, dev2.read(0, 0, 4096))
    log3, seen3, status3 = _boot(dev2)
    assert status3 == R.CORRUPT and log3.corrupt[:2] == (1, 0)
    # One record behind the bad header, in the sector's first record slot: corruption, not the
    # log's end (read as the end, record 256 would be lost).
    dev3 = _dev("rlbadheadone", 4)
    log = R.RawLog(dev3)
    log.format(1)
    _fill(log, R.SLOTS)
    assert (log.head_n, log.head_slot) == (1, 2)
    _poke(dev3, 1, 6, b"\x07")
    log4, seen4, status4 = _boot(dev3)
    assert status4 == R.CORRUPT and log4.corrupt[:2] == (1, 0), (status4, log4.corrupt)


def test_a_full_record_that_does_not_fit_moves_to_the_next_sector():
    dev = _dev("rlspill", 4)
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, R.SLOTS - 5)  # 4 slots left in sector 0
    log.append(R.encode_full(b"x" * 100), True, 0)  # 7 slots
    assert (log.head_n, log.head_slot) == (1, 8)
    log2, seen, status = _boot(dev)
    assert status == R.END and seen.seqs()[-1] == R.SLOTS - 4 and log2.corrupt is None


def test_replay_recomputes_the_coin_event_and_the_meter_catches_a_disagreement():
    state = _state(5000)
    body = R.encode_coin(2, 1000, 960, 5070)
    ms, fields, patch = R.replay_coin(state, CFG, body, meter.credit)
    assert ms == 1000 and fields == {"inc": 70, "to_meter": 70, "to_over": 0, "reserve": 20,
                                     "seat": 2, "round": 3, "pe": 960}
    assert patch["meter"] == 5070 and patch["c2"] == 1 and patch["res"] == 20
    # The state before was not what the board had (a record lost before this one), or the
    # configuration in force differs: the rebuilt meter disagrees, and replay refuses it.
    mptest.raises(ValueError, R.replay_coin, _state(5001), CFG, body, meter.credit)
    cfg = dict(CFG)
    cfg["increment_cents"] = 71
    mptest.raises(ValueError, R.replay_coin, state, cfg, body, meter.credit)
    # Past the ceiling the increment goes to overflow: the meter stored is the capped one.
    cfg = dict(CFG)
    cfg["ceiling_cents"] = 5030
    body = R.encode_coin(2, 1000, None, 5030)
    ms, fields, patch = R.replay_coin(state, cfg, body, meter.credit)
    assert fields["to_over"] == 40 and patch["over"] == 40 and fields["pe"] is None


def _flip(dev, sector, offset, mask=0x08):
    b = dev.read(sector, offset, 1)
    _poke(dev, sector, offset, bytes((b[0] ^ mask,)))


def test_a_cut_late_in_the_largest_record_is_a_tear_its_skip_names():
    dev = _dev("rlcutlargest")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 5)
    body = R.encode_full(b"x" * R.MAX_PAYLOAD_BYTES)  # 96 slots: 6..101
    dev.arm_cut(program_bytes=95 * 16 + 5)  # five bytes into its last slot
    try:
        log.append(body, True, 0)
        raise AssertionError("no cut")
    except PowerCut:
        dev.power_on()
    log2, seen, status = _boot(dev)
    assert status == R.END and log2.torn == (0, 6, 96), (status, log2.torn)
    assert log2.append(_coin(6), True, 0) == (0, 103, 6)  # after the SKIP in slot 102
    log3, seen3, status3 = _boot(dev)
    assert status3 == R.END and log3.corrupt is None and log3.torn is None, log3.corrupt
    assert seen3.seqs(R.K_COIN) == [1, 2, 3, 4, 5, 6]


def test_a_torn_length_that_runs_past_the_sector_is_a_tear_not_a_read_past_it():
    # A FULL of 3 slots at slot 252, cut so that its length's high byte reads 0x01: 19 slots,
    # past the sector's end. Not a record; the boot reads nothing beyond the sector.
    dev = _dev("rlpastend", 4)
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, R.SLOTS - 5)  # slots 1..251
    dev.program(0, 252 * 16, b"\x20\x20\x01")
    log2, seen, status = _boot(dev)
    assert status == R.END and log2.torn == (0, 252, 1) and seen.seqs() == list(range(1, R.SLOTS - 4))
    log2.append(_coin(0), True, 0)
    log3, seen3, status3 = _boot(dev)
    assert status3 == R.END and log3.corrupt is None and seen3.seqs(R.K_COIN)[-1] == R.SLOTS - 4


def test_a_torn_record_may_reach_the_end_of_the_page_it_starts_in():
    # A page programs as one: a FULL cut there may have any of its bits torn, its kind byte
    # reading as a one-slot kind (0x30 keeps the FULL's bit 5) and its length anything; the rest
    # of that page may hold its payload's bytes. A tear, up to the page's end (slot 47).
    for first in (32, 33):  # the page's first slot (32..47), or inside it
        dev = _dev("rlpage")
        log = R.RawLog(dev)
        log.format(1)
        _fill(log, first - 1)
        dev.program(0, first * 16, b"\x30\x13\x05" + b"0" * 13)
        for s in range(first + 1, 48):
            dev.program(0, s * 16, b'"0123456789abcd"')
        log2, seen, status = _boot(dev)
        assert status == R.END and log2.torn == (0, first, 48 - first), (first, status, log2.corrupt)
        assert seen.seqs() == list(range(1, first))
        # Payload bytes past the page's end are not a tear: corruption.
        dev.program(0, 48 * 16, b'"0123456789abcd"')
        log3, seen3, status3 = _boot(dev)
        assert status3 == R.CORRUPT and log3.corrupt[:2] == (0, first), log3.corrupt


def test_a_torn_full_whose_length_bytes_are_whole_reaches_as_far_as_they_say_and_no_further():
    """A FULL cut after its kind and length bytes were programmed: its extent is the 20 slots
    its length (300 bytes) names, 33..52, past the end of the page it starts in (slot 47).
    Payload bytes up to slot 52 are a tear; a programmed slot after it (not a torn SKIP) is
    corruption."""
    payload = b'{"k":"note","x":"' + b"a" * 281 + b'"}'
    assert len(payload) == 300 and R.slots_for(R.K_FULL, 300 & 0xFF, 300 >> 8) == 20
    dev = _dev("rltornlength")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 32)
    body = R.encode_full(payload)
    dev.program(0, 33 * 16, body[:19 * 16])  # slots 33..51; slot 52 (its CRC) never programmed
    log2, seen, status = _boot(dev)
    assert status == R.END and log2.torn == (0, 33, 19), (status, log2.torn, log2.corrupt)
    assert seen.seqs() == list(range(1, 33))
    dev.program(0, 53 * 16, b'"0123456789abcd"')
    log3, seen3, status3 = _boot(dev)
    assert status3 == R.CORRUPT and log3.corrupt[:2] == (0, 33), (status3, log3.torn)


def test_a_damaged_record_with_a_valid_one_after_it_is_corruption_not_a_tear():
    # A FULL of two slots (number 6) with a flipped bit, then a DERIVED record (number 7): record
    # 7 checks, so the bad stretch is not a tear (dropping it would lose record 7).
    dev = _dev("rldamagedfull")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 5)
    assert log.append(R.encode_full(b'{"k":"x"}' + b" " * 9), True, 0) == (0, 6, 6)
    assert log.append(bytes((R.K_DERIVED,)) + R.le(5000, 4) + b"\x01\x00" + b"\xff" * 5, True, 0) == (0, 8, 7)
    _flip(dev, 0, 16 * 7 + 2)
    log2, seen, status = _boot(dev)
    assert status == R.CORRUPT and log2.corrupt[:2] == (0, 6) and log2.torn is None, (status, log2.torn)
    # Two damaged one-slot records in a row (the first's kind byte cleared), good ones after.
    dev = _dev("rldamagedtwo")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 8)
    _poke(dev, 0, 16 * 3, b"\x00")
    _flip(dev, 0, 16 * 4 + 2)
    log3, seen3, status3 = _boot(dev)
    assert status3 == R.CORRUPT and log3.corrupt[:2] == (0, 3) and log3.torn is None, (status3, log3.torn)
    later = Seen()
    assert log3.scan_after_corruption(0, 3, 3, later) == 8 and later.seqs() == [5, 6, 7, 8]


def test_a_damaged_group_and_record_with_a_good_one_two_slots_on_is_corruption_not_a_tear():
    # A GROUP of two numbers (6 and 7) with its kind byte cleared, then a coin (8) with a flipped
    # bit, then a good coin numbered 9: three past the damaged record's first number, two slots
    # on. Read as a tear, coin 9 would be dropped.
    dev = _dev("rldamagedgroup")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 5)
    assert log.append(bytes((R.K_GROUP | 2,)) + b"\x00" * 11, True, 0) == (0, 6, 6)
    _fill(log, 2, 5)
    assert (log.head_slot, log.next_seq) == (9, 10)
    _poke(dev, 0, 16 * 6, b"\x00")
    _flip(dev, 0, 16 * 7 + 2)
    log2, seen, status = _boot(dev)
    assert status == R.CORRUPT and log2.corrupt[:2] == (0, 6) and log2.torn is None, (status, log2.torn)
    later = Seen()
    assert log2.scan_after_corruption(0, 6, 6, later) == 9 and later.seqs() == [9]


def test_a_sector_is_erased_for_another_lap_only_when_a_checkpoint_covers_it():
    dev = _dev("rlcover", 4)
    log = R.RawLog(dev)
    log.format(1)
    # Opening sectors 1 and 2 erases sectors 2 and 3: nothing of the log is there yet.
    _fill(log, 3 * (R.SLOTS - 1), 0, 0)
    assert (log.head_n, log.head_slot) == (2, R.SLOTS)
    # Opening sector 3 erases sector 4, in the cells of sector 0: the checkpoint must start in
    # sector 1 or later.
    assert log.cover_needed() == 1
    try:
        log.append(_coin(0), True, 0)
        raise AssertionError("no LogFull")
    except R.LogFull as exc:
        assert "sector 0 still holds records no checkpoint covers" in str(exc), str(exc)
    assert log.append(_coin(0), True, 1) == (3, 1, 3 * (R.SLOTS - 1) + 1)


def test_a_scan_from_a_sector_without_a_valid_header_is_corrupt_at_its_header():
    dev = _dev("rlnohead", 4)
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 3)
    log2 = R.RawLog(dev)
    assert log2.scan(1, 0, 4, Seen()) == R.CORRUPT and log2.corrupt[:2] == (1, 0), log2.corrupt


def test_after_a_corrupt_record_a_jump_sets_the_numbers_the_later_records_take():
    for after_jump in (0, 2):
        dev = _dev("rljumpafter")
        log = R.RawLog(dev)
        log.format(1)
        _fill(log, 5)
        log.append(R.encode_jump(20), False, 0)
        _fill(log, after_jump, 5)
        _flip(dev, 0, 16 * 3 + 2)
        log2, seen, status = _boot(dev)
        assert status == R.CORRUPT and log2.corrupt[:2] == (0, 3)
        later = Seen()
        highest = log2.scan_after_corruption(0, 3, 3, later)
        assert later.seqs(R.K_COIN) == [4, 5] + list(range(20, 20 + after_jump)), later.seqs()
        # numbers 6..19 were skipped: the next record takes 20 + after_jump
        assert highest == 19 + after_jump, (after_jump, highest)


def test_after_a_corrupt_record_a_jump_past_2_to_the_24_sets_the_numbers_with_all_four_bytes():
    """Numbers are 4 bytes on flash: a board's 16,777,216th event (2^24) is numbered as any
    other, and a jump past it, read after a corrupt spot, sets the numbers of the records after
    it."""
    to = (1 << 24) + 5
    dev = _dev("rljumpbig")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 5)
    log.append(R.encode_jump(to), False, 0)
    _fill(log, 2, 5)
    _flip(dev, 0, 16 * 3 + 2)
    log2, seen, status = _boot(dev)
    assert status == R.CORRUPT and log2.corrupt[:2] == (0, 3)
    later = Seen()
    assert log2.scan_after_corruption(0, 3, 3, later) == to + 1
    assert later.seqs(R.K_COIN) == [4, 5, to, to + 1], later.seqs()


def test_a_jump_that_no_longer_checks_is_corruption_and_the_records_after_it_still_count():
    """A repair's JUMP skips 258 numbers (SLOTS + 2) or more, so the records after it are
    numbered where neither the tear check nor a slot's window from the spot looks. The journal
    says a number the log had reached (next_known, from its checkpoint): a bad stretch before it
    is no tear (those records were whole when the checkpoint was written), and each slot after
    the spot is tried with the numbers around it too."""
    to = 5 + R.SLOTS + 3
    for known in (to + 1, to + 2, to + 3):  # a checkpoint after the first, second, third record
        dev = _dev("rljumpflipped")
        log = R.RawLog(dev)
        log.format(1)
        _fill(log, 5)
        log.append(R.encode_jump(to), False, 0)  # slot 6
        _fill(log, 3, 5)  # numbers to, to + 1, to + 2
        _flip(dev, 0, 16 * 6 + 2)
        log2 = R.RawLog(dev)
        log2.next_known = known
        seen = Seen()
        assert log2.scan(0, 0, 1, seen) == R.CORRUPT and log2.corrupt[:2] == (0, 6), (log2.corrupt, log2.torn)
        assert seen.seqs() == [1, 2, 3, 4, 5]
        later = Seen()
        assert log2.scan_after_corruption(0, 6, 6, later) == to + 2, known
        assert later.seqs() == [to, to + 1, to + 2], (known, later.seqs())


def test_after_a_bad_jump_the_first_record_is_found_a_sectors_groups_below_the_number_the_journal_knew():
    """The checkpoint was written 400 numbers past a repair's JUMP (GROUP records of three numbers
    a slot), and the JUMP then rots. The first record after it is numbered where no slot's window
    from the spot reaches, and 400 below next_known: up to a sector's slots of GROUPs (3 x 256
    numbers) below it is where it may be, so it is found there, and every record after it."""
    to = 2000
    dev = _dev("rljumpgroups")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 5)
    log.append(R.encode_jump(to), False, 0)  # slot 6
    for _ in range(134):  # numbers to .. to + 401, three a slot
        log.append(bytes((R.K_GROUP | 3,)) + b"\x00" * 11, True, 0)
    assert log.next_seq == to + 402
    _flip(dev, 0, 16 * 6 + 2)
    log2 = R.RawLog(dev)
    log2.next_known = to + 400
    assert log2.scan(0, 0, 1, Seen()) == R.CORRUPT and log2.corrupt[:2] == (0, 6), (log2.corrupt, log2.torn)
    later = Seen()
    assert log2.scan_after_corruption(0, 6, 6, later) == to + 401
    assert later.seqs() == list(range(to, to + 402, 3)), later.seqs()[:4]


def test_after_a_corrupt_record_of_a_log_numbered_in_the_thousands_the_records_after_it_count():
    """A log numbered from 5,000 (a board's later life), no checkpoint's number known: the records
    after a damaged one are found by the numbers a slot can be from the spot, each one kept."""
    dev = _dev("rlthousands")
    log = R.RawLog(dev)
    log.format(5000)
    _fill(log, 8)  # numbers 5000 .. 5007 in slots 1 .. 8
    _flip(dev, 0, 16 * 3 + 2)  # number 5002
    log2, seen, status = _boot(dev, (0, 0, 5000))
    assert status == R.CORRUPT and log2.corrupt[:2] == (0, 3), (log2.corrupt, log2.torn)
    assert seen.seqs() == [5000, 5001]
    later = Seen()
    assert log2.scan_after_corruption(0, 3, 5002, later) == 5007
    assert later.seqs() == [5003, 5004, 5005, 5006, 5007], later.seqs()


def test_a_tear_at_the_number_the_journal_knew_was_next_is_still_a_tear():
    """The checkpoint written just before the append that was cut says that append's number came
    next: the torn record was never whole, and boot drops it as any tear. Had that number been
    taken before the checkpoint, the slot was whole then: corruption."""
    dev = _dev("rltearatknown")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 5)
    dev.arm_cut(program_bytes=5)
    try:
        log.append(_coin(5), True, 0)
        raise AssertionError("no cut")
    except PowerCut:
        dev.power_on()
    log2 = R.RawLog(dev)
    log2.next_known = 6
    assert log2.scan(0, 0, 1, Seen()) == R.END and log2.torn == (0, 6, 1), (log2.corrupt, log2.torn)
    log3 = R.RawLog(dev)
    log3.next_known = 7
    assert log3.scan(0, 0, 1, Seen()) == R.CORRUPT and log3.corrupt[:2] == (0, 6), log3.corrupt


def test_after_a_corrupt_record_every_record_of_the_sectors_that_chain_on_counts():
    dev = _dev("rllatersectors", 4)
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, R.SLOTS + 10)  # sector 0: 1..255, sector 1: 256..265
    _flip(dev, 0, 16 * 10 + 5)
    log2, seen, status = _boot(dev)
    assert status == R.CORRUPT and log2.corrupt[:2] == (0, 10)
    later = Seen()
    assert log2.scan_after_corruption(0, 10, 10, later) == R.SLOTS + 10
    assert later.seqs() == list(range(11, R.SLOTS + 11)), later.seqs()[240:]
    # A sector opened and cut before its first record: its header's first number is the next one.
    dev = _dev("rlheaderonly", 4)
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, R.SLOTS - 1)
    dev.arm_cut(program_bytes=16)  # sector 1's header whole, its first record torn at byte 0
    try:
        log.append(_coin(999), True, 0)
        raise AssertionError("no cut")
    except PowerCut:
        dev.power_on()
    assert R.RawLog(dev).read_header(1) == R.SLOTS
    _flip(dev, 0, 16 * 10 + 5)
    log3, seen3, status3 = _boot(dev)
    assert status3 == R.CORRUPT
    assert log3.scan_after_corruption(0, 10, 10, Seen()) == R.SLOTS - 1


def test_after_a_corrupt_spot_a_record_reusing_a_number_already_taken_is_not_newer():
    """A record numbered with a number already taken (a bug's or a forger's) is not the newest
    word on anything: after a corrupt spot it is not visited and counts no number, whatever the
    journal knows; nor is a later sector whose header reuses one."""
    dev = _dev("rlreuse", 4)
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, R.SLOTS - 1)  # 1..255: sector 0 full
    log.next_seq = R.SLOTS - 1  # (as a bug or a forger would) number 255 again, in sector 1
    _fill(log, 2, 500)  # sector 1: slot 1 numbered 255, slot 2 numbered 256
    log2, seen, status = _boot(dev)
    assert status == R.CORRUPT and log2.corrupt[:2] == (1, 0), log2.corrupt  # header says 255, log at 256
    for known in (0, R.SLOTS):  # whatever number the journal knows the log reached
        log2.next_known = known
        later = Seen()
        assert log2.scan_after_corruption(1, 0, R.SLOTS, later) == R.SLOTS
        assert later.seqs() == [R.SLOTS], (known, later.seqs())
    # Nor, after a corrupt spot in sector 0, is a later sector whose header reuses a number.
    _flip(dev, 0, 16 * 10 + 5)
    log3, seen3, status3 = _boot(dev)
    assert status3 == R.CORRUPT and log3.corrupt[:2] == (0, 10), log3.corrupt
    later = Seen()
    assert log3.scan_after_corruption(0, 10, 10, later) == R.SLOTS - 1
    assert later.seqs() == list(range(11, R.SLOTS)), later.seqs()[-3:]


def test_a_stretch_whose_kind_byte_is_no_kind_may_be_a_torn_full_up_to_the_largest():
    # 0xA0: a FULL's kind byte (0x20) with a bit still unprogrammed. Its length cannot be
    # trusted, so its extent is the largest record's, past the page it starts in.
    dev = _dev("rlnokind")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 32)
    dev.program(0, 33 * 16, b"\xa0\x40\x01" + b"0" * 13)
    for s in range(34, 61):
        dev.program(0, s * 16, b'"0123456789abcd"')
    log2, seen, status = _boot(dev)
    assert status == R.END and log2.torn == (0, 33, 28), (status, log2.corrupt)
    assert R.slots_for(0xA0, 0x40, 0x01) == 0 and R.slots_for(0x00, 0, 0) == 0


def test_a_checkpoint_whose_number_its_sectors_header_does_not_say_is_corrupt_there():
    dev = _dev("rlckseq", 4)
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 3)
    log2 = R.RawLog(dev)
    assert log2.scan(0, 0, 2, Seen()) == R.CORRUPT and log2.corrupt[:2] == (0, 0), log2.corrupt


def test_after_a_damaged_ack_the_next_record_takes_the_number_the_ack_did_not():
    dev = _dev("rlbadack")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 2)
    log.append(R.encode_ack(2), False, 0)  # slot 3; the coins after it are 3 and 4
    _fill(log, 2, 2)
    _flip(dev, 0, 16 * 3 + 2)
    log2, seen, status = _boot(dev)
    assert status == R.CORRUPT and log2.corrupt[:2] == (0, 3)
    later = Seen()
    assert log2.scan_after_corruption(0, 3, 3, later) == 4 and later.seqs() == [3, 4], later.seqs()


def test_after_a_bad_record_in_a_sectors_second_last_slot_the_record_in_its_last_counts():
    # Record 254 damaged, record 255 (the sector's last slot) good: its number is used and its
    # value is the newest word, so it must be found (it holds a credited coin's meter).
    for sectors_slots in (None, R.SLOTS - 1):  # a chip whose last slot is the device's own too
        dev = _dev("rllastslotafterbad", 4)
        if sectors_slots:
            dev.slots = sectors_slots
        log = R.RawLog(dev)
        log.format(1)
        last = log.slots - 1
        _fill(log, last)  # slots 1..last hold numbers 1..last
        _flip(dev, 0, 16 * (last - 1) + 2)
        log2, seen, status = _boot(dev)
        assert status == R.CORRUPT and log2.corrupt[:2] == (0, last - 1), log2.corrupt
        later = Seen()
        assert log2.scan_after_corruption(0, last - 1, last - 1, later) == last, (sectors_slots, later.seqs())
        assert later.seqs() == [last] and later.items[0][3] == last


def test_a_jump_back_to_numbers_already_taken_is_corruption():
    # A JUMP only ever skips numbers (a repair's): one that goes back would number later records
    # with numbers the host already holds. A bug's or a forger's: scanning stops at it.
    dev = _dev("rljumpback")
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, 5)
    assert log.append(R.encode_jump(3), False, 0) == (0, 6, 6)
    _fill(log, 2, 5)  # (numbered 3 and 4 again)
    log2, seen, status = _boot(dev)
    assert status == R.CORRUPT and log2.corrupt == (0, 6, "jump back to 3 from 6"), log2.corrupt
    assert seen.seqs(R.K_COIN) == [1, 2, 3, 4, 5] and log2.torn is None


def test_a_damaged_record_in_a_full_sectors_last_slot_is_corruption_not_a_tear():
    # Record 255, the last slot of sector 0, with a flipped bit: nothing after it in its sector,
    # as after a tear. But sector 1 opened at number 256, so record 255 was whole then: the scan
    # stops at sector 1's header (read as the end, records 256 to 258 would be lost).
    dev = _dev("rllastslotbad", 4)
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, R.SLOTS + 3)
    _flip(dev, 0, 16 * (R.SLOTS - 1) + 5)
    log2, seen, status = _boot(dev)
    assert status == R.CORRUPT and log2.torn is None, (status, log2.torn)
    assert log2.corrupt == (1, 0, "header says seq 256, log is at 255"), log2.corrupt
    assert seen.seqs() == list(range(1, R.SLOTS - 1))


def test_a_bad_last_slot_with_the_log_going_on_is_a_tear_only_when_the_next_sector_starts_with_its_skip():
    # An ACK (it takes no number) in sector 0's last slot, damaged; sector 1 opened at the number
    # the log was at, with records but no SKIP naming the slot (the way a tear there is closed:
    # test_a_tear_in_a_sectors_last_slot_is_skipped_from_the_next_sectors_first_slot). Not a tear.
    dev = _dev("rllastackbad", 4)
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, R.SLOTS - 2)
    assert log.append(R.encode_ack(R.SLOTS - 2), False, 0) == (0, R.SLOTS - 1, R.SLOTS - 1)
    _fill(log, 2, 500)
    assert R.RawLog(dev).read_header(1) == R.SLOTS - 1
    _flip(dev, 0, 16 * (R.SLOTS - 1) + 2)
    log2, seen, status = _boot(dev)
    assert status == R.CORRUPT and log2.corrupt == (0, R.SLOTS - 1, "bad record"), log2.corrupt
    assert log2.torn is None and seen.seqs() == list(range(1, R.SLOTS - 1))


def test_after_a_corrupt_record_an_ack_later_on_takes_no_number():
    # (Near the sector's end: after a corrupt spot every erased slot to the end is tried with
    # every number it could hold.) Coin 252 damaged; then an ACK, then coins 253 and 254.
    dev = _dev("rlackafterbad", 4)
    log = R.RawLog(dev)
    log.format(1)
    _fill(log, R.SLOTS - 4)  # slots 1..252, numbers 1..252
    assert log.append(R.encode_ack(250), False, 0) == (0, R.SLOTS - 3, R.SLOTS - 3)
    _fill(log, 2, 500)  # slots 254, 255: numbers 253, 254
    _flip(dev, 0, 16 * (R.SLOTS - 4) + 5)  # coin 252
    log2, seen, status = _boot(dev)
    assert status == R.CORRUPT and log2.corrupt[:2] == (0, R.SLOTS - 4), log2.corrupt
    later = Seen()
    assert log2.scan_after_corruption(0, R.SLOTS - 4, R.SLOTS - 4, later) == R.SLOTS - 2
    assert [(k, q) for k, q, _n, _s, _b in later.items] == [
        (R.K_ACK, R.SLOTS - 3), (R.K_COIN, R.SLOTS - 3), (R.K_COIN, R.SLOTS - 2)], later.items
    assert R.from_le(later.items[0][4], 1, 4) == 250


def test_from_a_checkpoint_whose_sector_a_later_lap_erased_every_sector_after_it_counts_once():
    # A checkpoint older than the log's erases (the newest checkpoint lost, say): its sector is
    # erased, so the scan is corrupt at its header; the sectors after it chain on to the head,
    # all of the chip's other sectors, and each of their records counts once. (A chip whose
    # sectors give the log 8 slots: a lap in 28 records, and the erased sector's slots quick to try.)
    dev = _dev("rlstalecheckpoint", 4)
    dev.slots = 8
    log = R.RawLog(dev)
    log.format(1)
    ck = [0, 0, 1]
    _checkpointed_fill(log, 7 * 4 + 3, 0, ck)  # sectors 0..3 of 7 records, 3 in sector 4
    assert (log.head_n, log.next_seq) == (4, 32) and ck[0] >= 2
    assert log.read_header(1) is None and log.read_header(2) == 15  # opening sector 4 erased 5 = 1's cells
    log2 = R.RawLog(dev)
    assert log2.scan(1, 0, 8, Seen()) == R.CORRUPT, log2.corrupt
    assert log2.corrupt == (1, 0, "no valid header in the checkpoint's sector"), log2.corrupt
    later = Seen()
    assert log2.scan_after_corruption(1, 0, 8, later) == 31
    assert later.seqs() == list(range(15, 32)), later.seqs()
    assert log2.top_n == 4


if __name__ == "__main__":
    mptest.run(globals())
