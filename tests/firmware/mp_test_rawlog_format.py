"""The raw flash log's records on flash, byte for byte: the format a board's log keeps across
firmware updates (a new build must read the log an older one wrote, or the board freezes its
journal as corrupt). Layout: docs/FIRMWARE.md and firmware/table/rawlog.py's header; each
record's CRC-32 over (expected seq (4 LE) + sector no. (4 LE) + slot (1) + the record).

The expected bytes were computed from that layout with CPython's zlib, not with the code under
test."""
import binascii

import mptest
from simkit import fresh_dir
from boards.simflash import PowerCut, SimNorFlash
from table import rawlog as R


def _log(name, sectors=4):
    dev = SimNorFlash(fresh_dir(name) + "/flash.bin", sectors)
    log = R.RawLog(dev)
    log.format(1)
    return dev, log


def test_ack_full_and_jump_records_are_the_documented_bytes_in_their_slots():
    dev, log = _log("rlfmt-kinds")
    # COIN: 12 bytes (COIN_BODY) before its CRC: one slot
    assert len(R.encode_coin(3, 1000, 960, 123456789)) == R.COIN_BODY == 12
    assert log.append(R.encode_coin(3, 1000, 960, 123456789), True, 0) == (0, 1, 1)
    # ACK: 0x30 | acknowledged seq (4) | 0xFF x7 | CRC; it takes no number (2 is still next)
    assert log.append(R.encode_ack(1), False, 0) == (0, 2, 2)
    # FULL: 0x20 | length (2) | JSON | 0xFF pad | CRC, over whole slots: 19 bytes of JSON take two
    assert log.append(R.encode_full(b'{"k":"award","a":1}'), True, 0) == (0, 3, 2)
    # JUMP: 0x60 | next seq (4) | 0xFF x7 | CRC: a repair's skip of numbers
    assert log.append(R.encode_jump(10), False, 0) == (0, 5, 3)
    # a coin without a pulse end (0xFFFF) takes the number the jump set
    assert log.append(R.encode_coin(6, 2000, None, 70), True, 0) == (0, 6, 10)
    assert dev.read(0, 16, 16) == bytes.fromhex("13e8030000280015cd5b07003957d2f1")
    assert dev.read(0, 32, 16) == bytes.fromhex("3001000000ffffffffffffffea9e1672")
    assert dev.read(0, 48, 32) == bytes.fromhex(
        "2013007b226b223a226177617264222c2261223a317dffffffffffffc20a99a3")
    assert dev.read(0, 80, 16) == bytes.fromhex("600a000000ffffffffffffff64c6e58f")
    assert dev.read(0, 96, 16) == bytes.fromhex("16d0070000ffff460000000096e5308f")
    assert dev.read(0, 112, 16) == b"\xff" * 16
    # and a boot reads them back, each with its number (the two-slot FULL whole)
    seen = []
    booted = R.RawLog(dev)
    assert booted.scan(0, 0, 1, lambda kind, body, seq, n, slot: seen.append((kind, seq, slot, len(body)))) == R.END
    assert seen == [(R.K_COIN, 1, 1, 12), (R.K_ACK, 2, 2, 12), (R.K_FULL, 2, 3, 28), (R.K_JUMP, 3, 5, 12),
                    (R.K_COIN, 10, 6, 12)], seen


def test_a_sector_holds_its_header_and_255_one_slot_records():
    dev, log = _log("rlfmt-capacity")
    places = [log.append(R.encode_coin(0, 1000 + i, None, 70 * (i + 1)), True, 0) for i in range(256)]
    assert places[0] == (0, 1, 1) and places[254] == (0, 255, 255)
    assert places[255] == (1, 1, 256)  # the next sector, after its own header
    # sector 1's header: 0x50 | sector no. 1 | first seq 256 | 0xFF x3 | CRC over (physical
    # sector (2 LE) + these 12 bytes)
    assert dev.read(1, 0, 16) == bytes.fromhex("500100000000010000ffffff") + dev.read(1, 12, 4)
    header = dev.read(1, 0, 12)
    assert R.from_le(dev.read(1, 12, 4), 0, 4) == binascii.crc32(b"\x01\x00" + header) & 0xFFFFFFFF


def test_a_log_numbered_past_2_to_the_24_reads_its_headers_first_numbers_with_all_four_bytes():
    """A header's first number is 4 bytes: a log whose numbers pass 16,777,216 (2^24), as a board
    moved to the raw log after that many events starts, opens and chains its sectors as any."""
    first = (1 << 24) + 5
    dev, log = _log("rlfmt-big", 4)
    log.format(first)
    assert dev.read(0, 0, 12) == bytes.fromhex("5000000000" "05000001" "ffffff")
    places = [log.append(R.encode_coin(0, 1000 + i, None, 70 * (i + 1)), True, 0) for i in range(256)]
    assert places[255] == (1, 1, first + 255)
    seen = []
    booted = R.RawLog(dev)
    assert booted.scan(0, 0, first, lambda kind, body, seq, n, slot: seen.append(seq)) == R.END, booted.corrupt
    assert seen == list(range(first, first + 256)) and booted.next_seq == first + 256


def test_a_skip_record_names_a_torn_slot_in_the_documented_bytes():
    # SKIP: 0x40 | sector no. (4) | first slot (1) | slots (1) | 0xFF x5 | CRC; it takes no number
    dev, log = _log("rlfmt-skip")
    for i in range(5):
        log.append(R.encode_coin(0, 1000 + i, None, 70 * (i + 1)), True, 0)
    dev.arm_cut(program_bytes=5)  # the power goes five bytes into slot 6
    try:
        log.append(R.encode_coin(1, 2000, None, 420), True, 0)
        raise AssertionError("no cut")
    except PowerCut:
        pass
    dev.power_on()
    booted = R.RawLog(dev)
    booted.scan(0, 0, 1, lambda *record: None)
    assert booted.append(R.encode_coin(1, 2000, None, 420), True, 0) == (0, 8, 6)
    assert dev.read(0, 7 * 16, 16) == bytes.fromhex("40000000000601ffffffffff15707a46")


def test_a_full_record_is_whole_slots_up_to_its_largest():
    # length 9: 3 + 9 + 4 = 16 bytes, one slot; length 10 takes two
    assert R.slots_for(R.K_FULL, 9, 0) == 1 and R.slots_for(R.K_FULL, 10, 0) == 2
    largest = R.MAX_PAYLOAD_BYTES
    assert largest == 96 * 16 - 7
    assert R.slots_for(R.K_FULL, largest & 0xFF, largest >> 8) == 96
    assert len(R.encode_full(b"x" * largest)) == 96 * 16 - 4
    assert R.slots_for(R.K_FULL, (largest + 1) & 0xFF, (largest + 1) >> 8) == 0  # not a record start
    assert R.encode_full(b"x" * (largest + 1)) is None


def _header(n, first_seq, phys):
    """A sector header as the layout says, its CRC over (physical sector (2 LE) + its 12 bytes)."""
    body = bytes((0x50,)) + R.le(n, 4) + R.le(first_seq, 4) + b"\xff\xff\xff"
    return body + R.le(binascii.crc32(body, binascii.crc32(R.le(phys, 2))) & 0xFFFFFFFF, 4)


def test_a_chip_holds_a_log_when_a_header_checks_in_the_physical_sector_its_number_says():
    # Boot formats a chip only when no sector holds a header: never over a log.
    dev = SimNorFlash(fresh_dir("rlfmt-holds") + "/flash.bin", 6)
    assert not R.RawLog(dev).holds_a_log()  # a blank chip
    R.RawLog(dev).format(1)
    assert R.RawLog(dev).holds_a_log()
    # The sector number is all four bytes: sector 0x01000004 of a 6-sector chip lives in
    # physical sector 2 (0x01000004 % 6), and its header there is a log's.
    n = 0x01000004
    assert _header(n, 7, 2) == bytes.fromhex("500400000107000000ffffff" "e68cc4b5")
    dev2 = SimNorFlash(fresh_dir("rlfmt-holds2") + "/flash.bin", 6)
    dev2.program(2, 0, _header(n, 7, 2))
    assert R.RawLog(dev2).holds_a_log()
    # The same bytes in physical sector 3 do not check there (the CRC covers the place), nor
    # does a header that checks in sector 2 but names a sector that lives elsewhere.
    dev3 = SimNorFlash(fresh_dir("rlfmt-holds3") + "/flash.bin", 6)
    dev3.program(3, 0, _header(n, 7, 2))
    dev3.program(1, 0, _header(3, 7, 1))
    assert not R.RawLog(dev3).holds_a_log()


def _torn_stretch(dev, slot, torn_skips):
    """What cuts leave from `slot` on: a coin record cut after 4 bytes, then `torn_skips` SKIPs
    each cut after its first 2 bytes (one torn in each later boot)."""
    dev.program(0, slot * 16, R.encode_coin(1, 2000, None, 420)[:4])
    for s in range(slot + 1, slot + 1 + torn_skips):
        dev.program(0, s * 16, b"\x40\x00")


def test_a_tear_is_one_torn_record_and_at_most_eight_torn_skips_after_it():
    # TORN_SLACK_SLOTS = 8: a longer run of bad slots before erased ones is corruption.
    dev, log = _log("rlfmt-slack8")
    for i in range(5):
        log.append(R.encode_coin(0, 1000 + i, None, 70 * (i + 1)), True, 0)
    _torn_stretch(dev, 6, 8)
    booted = R.RawLog(dev)
    assert booted.scan(0, 0, 1, lambda *record: None) == R.END and booted.torn == (0, 6, 9)
    # The next record goes after a SKIP naming the nine slots, and later boots pass over them.
    assert booted.append(R.encode_coin(1, 2000, None, 420), True, 0) == (0, 16, 6)
    assert dev.read(0, 15 * 16, 12) == bytes.fromhex("400000000006" "09ffffffffff")
    again = R.RawLog(dev)
    assert again.scan(0, 0, 1, lambda *record: None) == R.END and again.next_seq == 7
    dev, log = _log("rlfmt-slack9")
    for i in range(5):
        log.append(R.encode_coin(0, 1000 + i, None, 70 * (i + 1)), True, 0)
    _torn_stretch(dev, 6, 9)
    booted = R.RawLog(dev)
    assert booted.scan(0, 0, 1, lambda *record: None) == R.CORRUPT and booted.corrupt[:2] == (0, 6)


def test_the_largest_record_torn_and_eight_torn_skips_after_it_are_one_tear_a_skip_names():
    """The longest stretch a tear may leave: the largest FULL (96 slots) cut in its last slot,
    then a SKIP torn in each of eight later boots: 104 slots (6..109). The SKIP naming them goes
    in slot 110, and later boots pass over the whole stretch."""
    dev, log = _log("rlfmt-longest")
    for i in range(5):
        log.append(R.encode_coin(0, 1000 + i, None, 70 * (i + 1)), True, 0)
    body = R.encode_full(b"x" * R.MAX_PAYLOAD_BYTES)
    dev.program(0, 6 * 16, body[:95 * 16 + 5])
    for s in range(102, 110):
        dev.program(0, s * 16, b"\x40\x00")
    booted = R.RawLog(dev)
    assert booted.scan(0, 0, 1, lambda *record: None) == R.END and booted.torn == (0, 6, 104), booted.corrupt
    assert booted.append(R.encode_coin(1, 2000, None, 420), True, 0) == (0, 111, 6)
    assert dev.read(0, 110 * 16, 12) == bytes.fromhex("400000000006" "68ffffffffff")
    seen = []
    again = R.RawLog(dev)
    assert again.scan(0, 0, 1, lambda kind, body, seq, n, slot: seen.append((seq, slot))) == R.END, again.corrupt
    assert seen[-1] == (6, 111) and again.next_seq == 7


def _cut_at_slot(dev, log, record):
    """Append `record`, the power cut five bytes into it; then power on."""
    dev.arm_cut(program_bytes=5)
    try:
        log.append(record, True, 0)
        raise AssertionError("no cut")
    except PowerCut:
        pass
    dev.power_on()


def test_the_skip_goes_in_the_torn_sectors_last_free_slot():
    dev, log = _log("rlfmt-skiplast")
    for i in range(R.SLOTS - 3):  # slots 1..253
        log.append(R.encode_coin(0, 1000 + i, None, 70 * (i + 1)), True, 0)
    _cut_at_slot(dev, log, R.encode_coin(1, 2000, None, 1))  # slot 254 torn
    booted = R.RawLog(dev)
    booted.scan(0, 0, 1, lambda *record: None)
    assert booted.torn == (0, 254, 1)
    # SKIP in slot 255 (the last); the coin, which no longer fits, opens sector 1
    assert booted.append(R.encode_coin(1, 2000, None, 1), True, 0) == (1, 1, 254)
    assert dev.read(0, 255 * 16, 12) == bytes.fromhex("4000000000fe" "01ffffffffff")


def test_a_tear_in_a_sectors_last_slot_is_skipped_from_the_next_sectors_first_slot():
    dev, log = _log("rlfmt-skipnext")
    for i in range(R.SLOTS - 2):  # slots 1..254
        log.append(R.encode_coin(0, 1000 + i, None, 70 * (i + 1)), True, 0)
    _cut_at_slot(dev, log, R.encode_coin(1, 2000, None, 1))  # slot 255 torn
    booted = R.RawLog(dev)
    assert booted.scan(0, 0, 1, lambda *record: None) == R.END and booted.torn == (0, 255, 1)
    # Sector 1 opens; its first record is the SKIP naming sector 0's slot 255, then the coin.
    assert booted.append(R.encode_coin(1, 2000, None, 1), True, 0) == (1, 2, 255)
    assert dev.read(1, 16, 12) == bytes.fromhex("4000000000ff" "01ffffffffff")
    seen = []
    again = R.RawLog(dev)
    assert again.scan(0, 0, 1, lambda kind, body, seq, n, slot: seen.append((kind, seq, n, slot))) == R.END
    assert again.corrupt is None and again.torn is None and again.next_seq == 256
    assert seen[-1] == (R.K_COIN, 255, 1, 2)
    assert [q for kind, q, _n, _s in seen if kind == R.K_COIN] == list(range(1, 256))
    assert again.append(R.encode_coin(2, 3000, None, 2), True, 0) == (1, 3, 256)


def test_a_jump_takes_no_number_whatever_the_caller_says():
    dev, log = _log("rlfmt-jumpseq")
    log.append(R.encode_coin(3, 1000, 960, 70), True, 0)
    assert log.append(R.encode_jump(10), True, 0) == (0, 2, 2)
    assert log.next_seq == 10
    assert log.append(R.encode_coin(3, 1001, 960, 140), True, 0) == (0, 3, 10)


mptest.run(globals())
