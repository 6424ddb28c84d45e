"""The journal's bytes on flash, as firmware/table/journal.py's docstring defines them (a board
updated to new firmware must read what the old one wrote), and its sequence bookkeeping.

    record:      0xA5 | length (2 LE) | CRC-32 (4 LE) | event JSON
    checkpoint:  b"TC1" | gen (4 LE) | length (4 LE) | CRC-32 (4 LE) | JSON

The CRC-32 values below were computed with zlib (an implementation independent of
table.protocol.crc32), not with the code under test.
"""
import mptest
from simkit import fresh_dir
from boards.sim import SimBoard
from table import journal as J

PAYLOAD = b'{"k":"coin","q":1}'
RECORD = bytes.fromhex("a5" "1200" "393c2493") + PAYLOAD  # 18 bytes; zlib.crc32 LE
BODY = b'{"next": 2}'
CHECKPOINT = b"TC1" + bytes.fromhex("05000000" "0b000000" "75e9ac61") + BODY  # gen 5, 11 bytes


def test_a_record_is_the_documented_bytes():
    assert J.encode_record(PAYLOAD) == RECORD
    assert list(J.scan_records(RECORD)) == [(0, PAYLOAD)]


def test_a_checkpoint_is_the_documented_bytes():
    assert J.encode_checkpoint(5, {"next": 2}) == CHECKPOINT
    assert J.decode_checkpoint(CHECKPOINT) == (5, {"next": 2})


def test_a_torn_or_foreign_checkpoint_is_no_checkpoint():
    assert J.decode_checkpoint(CHECKPOINT[:-1]) is None  # torn
    assert J.decode_checkpoint(b"TC2" + CHECKPOINT[3:]) is None  # another format
    bad_crc = bytearray(CHECKPOINT)
    bad_crc[11] ^= 1
    assert J.decode_checkpoint(bytes(bad_crc)) is None
    assert J.decode_checkpoint(b"") is None and J.decode_checkpoint(None) is None
    assert J.decode_checkpoint(CHECKPOINT[:14]) is None  # not even a header
    # CRC and length right, but not JSON: still no checkpoint (never a crash at boot)
    junk = b"xx"
    crc = J.crc32(junk)
    assert J.decode_checkpoint(b"TC1" + bytes(4) + bytes((2, 0, 0, 0)) + bytes(
        ((crc >> 0) & 255, (crc >> 8) & 255, (crc >> 16) & 255, (crc >> 24) & 255)) + junk) is None


def test_scan_stops_at_the_first_bad_record():
    two = J.encode_record(b'{"q":2}')
    three = J.encode_record(b'{"q":3}')
    good = RECORD + two + three
    assert [p for _o, p in J.scan_records(good)] == [PAYLOAD, b'{"q":2}', b'{"q":3}']
    assert [o for o, _p in J.scan_records(good)] == [0, len(RECORD), len(RECORD) + len(two)]
    bad = bytearray(good)
    bad[len(RECORD) + 3] ^= 1  # the second record's CRC
    assert [p for _o, p in J.scan_records(bytes(bad))] == [PAYLOAD]
    bad = bytearray(good)
    bad[len(RECORD)] = 0xA4  # the second record's magic
    assert [p for _o, p in J.scan_records(bytes(bad))] == [PAYLOAD]
    assert [p for _o, p in J.scan_records(good[:-1])] == [PAYLOAD, b'{"q":2}']  # torn tail
    assert list(J.scan_records(RECORD[:J._REC_HEADER])) == []


def _journal(name):
    d = fresh_dir(name)
    board = SimBoard(d, "sim-journal", 8, 8, "pio")
    return _reopen(board), board


def _reopen(board):
    """The board's journal as the app opens it: on the raw log when the virtual board has a NOR
    chip (TABLE_RAWLOG_SECTORS: test_on_micropython.py runs this module both ways), else files."""
    if board.log_device is not None:
        from table.rawjournal import RawJournal
        return RawJournal(board.nv, board.log_device, board.board_id)
    return J.Journal(board.nv)


def _littlefs_only():
    """The littlefs journal's own files and bytes: the raw log's are mp_test_rawlog.py's."""
    import os
    if hasattr(os, "getenv") and os.getenv("TABLE_RAWLOG_SECTORS"):
        raise mptest.Skipped("the littlefs journal's files (the raw log's: mp_test_rawlog.py)")


def test_a_fresh_journal_numbers_from_one_with_nothing_acknowledged():
    j, _ = _journal("jfresh")
    state, fresh = j.load({"meter": 5})
    assert fresh and state == {"meter": 5}
    assert (j.next_seq, j.acked_seq, j.unacked_count()) == (1, 0, 0)
    assert j.append({"k": "coin"}) == 1 and j.append({"k": "coin"}) == 2
    assert j.unacked_count() == 2


def test_acks_release_in_order_and_never_go_back():
    j, board = _journal("jack")
    j.load({})
    for _ in range(5):
        j.append({"k": "coin"})
    assert j.ack(0) == 0 and j.unacked_count() == 5
    assert j.ack(2) == 2 and j.unacked_count() == 3 and j.acked_seq == 2
    assert j.ack(2) == 0 and j.ack(1) == 0 and j.acked_seq == 2  # an old ack changes nothing
    assert j.ack(99) == 3 and j.acked_seq == 5  # never past the newest event
    assert j.unacked_count() == 0 and j.index_at_or_after(6) == 0
    j.append({"k": "coin"})
    assert j.ack(j.next_seq) == 1 and j.acked_seq == 6  # an ack of the next seq is of the newest


def test_an_acknowledged_event_checkpointed_is_not_resent_after_a_reboot():
    j, board = _journal("jackck")
    state, _ = j.load({"meter": 0})
    j.append({"k": "coin", "p": {"meter": 70}})
    j.append({"k": "coin", "p": {"meter": 140}})
    j.ack(1)
    j.checkpoint({"meter": 140})
    j2 = _reopen(board)
    state, fresh = j2.load({"meter": 0})
    assert state == {"meter": 140} and j2.unacked_count() == 1 and j2.read_payload(0).find(b'"q":2') >= 0


def test_checkpoints_alternate_slots_so_the_previous_one_survives_a_torn_write():
    _littlefs_only()
    j, board = _journal("jslots")
    j.load({"meter": 0})
    for _ in range(3):
        j.checkpoint({"meter": 0})
        gens = sorted(J.decode_checkpoint(board.nv.read(slot))[0] for slot in ("ck_a", "ck_b"))
        assert gens == [j.gen - 1, j.gen], gens


def test_compaction_keeps_every_unacknowledged_record():
    _littlefs_only()
    j, board = _journal("jcompact")
    j.load({"meter": 0})
    for i in range(10):
        j.append({"k": "coin", "p": {"meter": 70 * (i + 1)}})
    j.ack(4)
    j.compact({"meter": 700})
    assert j.unacked_count() == 6
    assert [j.read_payload(i).find(b'"q":%d' % (5 + i)) >= 0 for i in range(6)] == [True] * 6
    logs = [n for n in board.nv.names() if n.endswith(".log")]
    assert len(logs) == 1  # the old journal is gone
    j2 = J.Journal(board.nv)
    state, _ = j2.load({"meter": 0})
    assert state == {"meter": 700} and j2.next_seq == 11 and j2.unacked_count() == 6


def test_a_clean_reboot_does_not_compact_and_leftovers_are_removed():
    _littlefs_only()
    j, board = _journal("jleft")
    j.load({"meter": 0})
    j.append({"k": "coin", "p": {"meter": 70}})
    before = sorted(board.nv.names())
    board.nv.append("j9.log", J.encode_record(b'{"k":"coin","q":2,"p":{"meter":1}}'))  # a cut compaction
    j2 = J.Journal(board.nv)
    state, _ = j2.load({"meter": 0})
    assert sorted(board.nv.names()) == before and state == {"meter": 70} and j2.next_seq == 2


def test_a_reboot_with_nothing_journaled_writes_nothing():
    _littlefs_only()
    j, board = _journal("jempty")
    j.load({"meter": 0})
    slots = [board.nv.read(s) for s in ("ck_a", "ck_b")]
    names = sorted(board.nv.names())
    j2 = J.Journal(board.nv)
    assert j2.load({"meter": 0}) == ({"meter": 0}, False)
    assert [board.nv.read(s) for s in ("ck_a", "ck_b")] == slots and sorted(board.nv.names()) == names


def test_only_journal_files_without_a_checkpoint_mean_lost_storage():
    _littlefs_only()
    # a stray file is not a journal: the board still starts fresh (j<N>.log without a checkpoint
    # would be a storage fault, never a silent start from zero)
    j, board = _journal("jstray")
    board.nv.write("journal-notes.txt", b"x")
    board.nv.write("x.log", b"x")
    state, fresh = j.load({"meter": 0})
    assert fresh
    j2, board2 = _journal("jlost")
    board2.nv.append("j0.log", J.encode_record(b'{"q":1}'))
    assert mptest.raises(J.StorageError, j2.load, {"meter": 0})


def test_when_the_journal_asks_for_compaction_and_an_ack_checkpoint():
    _littlefs_only()
    # compaction once the journal passes 16 KiB and the unacknowledged records are few;
    # an acknowledgement checkpoint every 128 acknowledged events
    j, _ = _journal("jpolicy")
    j.load({})
    j.journal_bytes = J.COMPACT_BYTES
    assert not j.wants_compaction()
    j.journal_bytes = J.COMPACT_BYTES + 1
    assert j.wants_compaction()
    for _ in range(100):
        j.append({"k": "coin"})
    j.journal_bytes = J.COMPACT_BYTES + 1  # 100 unacknowledged records: copying them is not worth it
    assert not j.wants_compaction()
    assert J.COMPACT_BYTES == 16384 and J.ACK_CHECKPOINT_EVENTS == 128
    for _ in range(100):
        j.append({"k": "coin"})
    j.ack(127)
    assert not j.wants_ack_checkpoint()
    j.ack(128)
    assert j.wants_ack_checkpoint()
    j.checkpoint({})
    assert not j.wants_ack_checkpoint()


def test_a_full_outbox_holds_a_few_bytes_of_heap_an_event():
    # With no host acknowledging, the outbox holds up to outbox_limit + 16 events (1016 by
    # default) and the Pico has ~130 KB of heap once the controller is built. Each event is held
    # as its number, offset and length in packed arrays (10 bytes); the list of tuples before took
    # ~37 bytes an event on the Pico build (bench_pico.py boot), ~38 KB at a full outbox.
    mptest.only_on_micropython("MicroPython's heap is the subject (gc.mem_free); CPython has no such figure")
    import gc
    from drivers.nvfile import NvFiles
    j = J.Journal(NvFiles(fresh_dir("jheap")))  # plain files: nothing of the simulator's own kept
    j.load({"meter": 0})
    j.append({"k": "boot"})
    gc.collect()
    before = gc.mem_free()
    for i in range(1016):
        j.append({"k": "spot", "seat": i % 7})
    gc.collect()
    held = before - gc.mem_free()
    assert j.unacked_count() == 1017
    assert held <= 12 * 1016, held
    assert j.read_payload(1016).find(b'"q":1017') >= 0


def test_a_reboot_replays_patches_and_keeps_the_numbering():
    j, board = _journal("jreboot")
    j.load({"meter": 0})
    j.append({"k": "coin", "p": {"meter": 70}})
    j.append({"k": "coin", "p": {"meter": 140}})
    j.ack(1)
    j2 = _reopen(board)
    state, fresh = j2.load({"meter": 0})
    assert not fresh and state == {"meter": 140}
    assert j2.next_seq == 3 and j2.unacked_count() == 2  # the ack lived in RAM: resent, harmless
    assert b'"q":2' in j2.read_payload(1) and b'"meter":140' in j2.read_payload(1)


def _loaded(name, records):
    """A journal whose file holds exactly `records` (bytes) after a fresh checkpoint; rebooted."""
    j, board = _journal(name)
    j.load({"meter": 0})
    board.nv.append(j._journal_name(), records)
    board.nv.close(j._journal_name())
    j2 = J.Journal(board.nv)
    state, _ = j2.load({"meter": 0})
    return j2, state


def _rec(seq, meter=None):
    event = {"k": "coin", "q": seq}
    if meter is not None:
        event["p"] = {"meter": meter}
    return J.encode_record(J.json.dumps(event).encode())


def test_a_header_cut_short_is_a_torn_tail_not_corruption():
    _littlefs_only()
    # The docstring: "a header cut short ... Boot drops it" (the cut came mid-append).
    j, state = _loaded("jtornhead", _rec(1, 70) + bytes((0xA5, 0x12)))
    assert j.corrupt is None and not j.frozen
    assert state == {"meter": 70} and j.next_seq == 2
    assert j.nv.read(j._journal_name()) == _rec(1, 70)  # dropped: boot compacted without it


def test_a_record_whose_length_runs_past_the_end_is_a_torn_tail():
    _littlefs_only()
    # "a record whose length runs past the end of the file": the append was cut in its payload
    j, state = _loaded("jtornbody", _rec(1, 70) + _rec(2, 140)[:-1])
    assert j.corrupt is None and not j.frozen and state == {"meter": 70} and j.next_seq == 2
    assert j.nv.read(j._journal_name()) == _rec(1, 70)


def test_a_complete_record_that_does_not_check_is_corruption_even_at_the_end():
    _littlefs_only()
    # "a bad CRC on a complete record ... is corruption, not a cut": a cut leaves a record short,
    # never one of full length with other bytes in it. The last record, complete, one CRC bit off:
    bad = bytearray(_rec(2, 140))
    bad[3] ^= 1
    j, state = _loaded("jbadlast", _rec(1, 70) + bytes(bad))
    assert j.frozen and j.corrupt == "bad journal record at byte %d of %d" % (
        len(_rec(1, 70)), len(_rec(1, 70)) + len(bad)), j.corrupt
    assert state == {"meter": 70} and j.next_seq == 2
    # a whole header (7 bytes) announcing an empty payload whose CRC is not the empty one's:
    # nothing of it is missing, so it is not a cut either
    j, state = _loaded("jbadempty", _rec(1, 70) + bytes((0xA5, 0, 0, 1, 2, 3, 4)))
    assert j.frozen and j.corrupt is not None and state == {"meter": 70}


def test_a_record_whose_crc_checks_but_is_not_an_event_is_corruption():
    _littlefs_only()
    for junk in (b"not json", b'{"k":"coin"}'):  # not JSON; JSON with no sequence number
        j, state = _loaded("jjunk", _rec(1, 70) + J.encode_record(junk) + _rec(3, 210))
        assert j.frozen and j.corrupt == "bad journal record at byte %d of %d" % (
            len(_rec(1, 70)), len(_rec(1, 70)) + len(J.encode_record(junk)) + len(_rec(3, 210))), j.corrupt
        # the record after the bad one still checks: its number and its meter are the newest word
        assert j.next_seq == 4 and state == {"meter": 210}


def test_freezing_reads_past_the_bad_stretch_only_what_checks_and_is_newer():
    _littlefs_only()
    # After the bad record: a magic byte with a wrong CRC (no record), a record that checks but is
    # not JSON (skipped), an older number (no roll back) and one with no patch (number only).
    bad_crc = bytearray(_rec(7, 999))
    bad_crc[3] ^= 1
    tail = (b"\x00\x00" + bytes(bad_crc) + J.encode_record(b"[1,") + _rec(4, 280) + _rec(2, 5) + _rec(5))
    j, state = _loaded("jfreeze", _rec(1, 70) + b"\x00" + tail)
    assert j.frozen and j.highest_seen == 5 and j.next_seq == 6
    assert state == {"meter": 280}  # seq 4's patch; seq 2 is older than it and seq 5 has none; 7 never checked
    assert mptest.raises(OSError, j.append, {"k": "coin"}).args[0] == "journal frozen"


def test_an_ack_inside_a_repairs_skipped_numbers_moves_the_ack_and_releases_nothing():
    _littlefs_only()
    j, state = _loaded("jskip", _rec(1, 70) + b"\x00" * 40 + _rec(2, 140))
    assert j.bad_bytes == 40 + len(_rec(2, 140)) and j.highest_seen == 2 and state == {"meter": 140}
    first, last = j.repair(state)
    # past the highest number seen, by as many events as the bad stretch could have held, plus one
    assert (first, last) == (3, 2 + j.bad_bytes // J.MIN_RECORD_BYTES + 1) and not j.frozen
    assert j.highest_seen == last  # the skipped numbers count as used: none is handed out again
    seq = j.append({"k": "storage_repaired"})
    assert seq == last + 1 and j.unacked_count() == 2  # 1 (before the bad stretch) and the repair
    assert j.ack(2) == 1 and j.ack(last) == 0 and j.acked_seq == last and j.unacked_count() == 1
    assert j.index_at_or_after(first) == 0 and j.ack(seq) == 1

def test_a_record_right_after_a_one_byte_bad_stretch_is_the_newest_word():
    _littlefs_only()
    # the search past the bad record starts at its second byte: a record there is found
    j, state = _loaded("jonebyte", _rec(1, 70) + b"\x00" + _rec(2, 140))
    assert j.frozen and j.bad_bytes == 1 + len(_rec(2, 140))
    assert j.highest_seen == 2 and j.next_seq == 3 and state == {"meter": 140}


def test_a_number_after_the_bad_stretch_that_was_used_before_it_rolls_nothing_back():
    _littlefs_only()
    # seq 2 after the bad stretch is no newer than the seq 2 replayed before it: its patch is
    # not the newest word (patches are values: applying it would put an older meter back)
    j, state = _loaded("jdup", _rec(1, 70) + _rec(2, 140) + b"\x00" + _rec(2, 5))
    assert j.frozen and j.highest_seen == 2 and j.next_seq == 3 and state == {"meter": 140}


def test_a_long_record_after_the_bad_stretch_is_found():
    _littlefs_only()
    # a record's length is two bytes: one of 300 bytes after the bad stretch is read whole
    event = {"k": "coin", "q": 2, "p": {"meter": 140}, "note": "x" * 300}
    long_rec = J.encode_record(J.json.dumps(event).encode())
    assert len(long_rec) > 300
    j, state = _loaded("jlong", _rec(1, 70) + b"\x00" + long_rec)
    assert j.frozen and j.highest_seen == 2 and j.next_seq == 3 and state == {"meter": 140}


def test_a_repair_skips_as_many_numbers_as_the_bad_bytes_could_have_held():
    _littlefs_only()
    # MIN_RECORD_BYTES = 32: no event the board journals makes a shorter record. The shortest
    # event app.record() can write (empty board id and kind, ms 0, the first number) is longer:
    shortest = J.json.dumps({"t": "ev", "b": "", "k": "", "ms": 0, "q": 1}, separators=(",", ":")).encode()
    assert J.MIN_RECORD_BYTES == 32 and len(J.encode_record(shortest)) >= J.MIN_RECORD_BYTES
    # 63 bad bytes held at most one 32-byte record and the start of another: 2 numbers skipped,
    # after seq 1 (the last good record); 64 bytes: two records and the start of a third: 3
    for bad_bytes, skipped in ((63, (2, 3)), (64, (2, 4))):
        j, state = _loaded("jskipn", _rec(1, 70) + b"\x00" * bad_bytes)
        assert j.bad_bytes == bad_bytes and j.next_seq == 2
        assert j.repair(state) == skipped, (bad_bytes, skipped)
        assert j.append({"k": "storage_repaired"}) == skipped[1] + 1


class _CountingNv:
    """The board's own files, counting the bytes handed to them (what reaches the flash)."""

    def __init__(self, nv):
        self.nv = nv
        self.bytes = 0

    def __getattr__(self, name):
        return getattr(self.nv, name)

    def write(self, name, data):
        self.bytes += sum(len(p) for p in data) if isinstance(data, tuple) else len(data)
        self.nv.write(name, data)

    def append(self, name, data):
        self.bytes += len(data)
        self.nv.append(name, data)


def test_a_refused_append_freezes_the_journal_and_its_number_is_never_handed_out():
    _littlefs_only()
    # journal.append: "Part of the record may be on flash: a later append must not follow it,
    # and its number must never be handed out again."
    from simkit import FullNv
    j, board = _journal("jfull")
    j.load({"meter": 0})
    for i in range(3):
        j.append({"k": "coin", "p": {"meter": 70 * (i + 1)}})
    j.nv = FullNv(board.nv)  # the flash refuses every append from here (ENOSPC)
    assert mptest.raises(OSError, j.append, {"k": "coin", "p": {"meter": 280}}).args[0] == 28
    assert j.frozen and j.next_seq == 5  # 4 was refused: status shows 5 as the next number
    assert mptest.raises(OSError, j.append, {"k": "coin"}).args[0] == "journal frozen"  # not tried again
    j.nv = board.nv  # the flash takes writes again: the signed repair
    # past the refused 4, one number more, as for a bad stretch of 0 bytes (0 // 32 + 1 events)
    assert j.repair({"meter": 210}) == (5, 5) and not j.frozen and j.highest_seen == 5
    assert j.append({"k": "storage_repaired"}) == 6
    j2 = J.Journal(board.nv)
    state, _ = j2.load({"meter": 0})
    assert state == {"meter": 210} and j2.next_seq == 7 and j2.unacked_count() == 4


def test_a_repair_the_flash_refuses_leaves_the_journal_frozen_and_a_retry_skips_the_same_numbers():
    _littlefs_only()
    from simkit import FullNv
    j, state = _loaded("jretry", _rec(1, 70) + b"\x00" * 64)
    nv = j.nv
    j.nv = FullNv(nv)  # the repair's compaction cannot copy record 1
    assert mptest.raises(OSError, j.repair, state).args[0] == 28
    assert j.frozen and j.next_seq == 2
    j.nv = nv
    assert j.repair(state) == (2, 4) and not j.frozen  # what it would have skipped the first time


def test_delivery_finds_the_oldest_unacknowledged_event_at_or_after_a_number():
    # index_at_or_after(seq): where the link resumes sending from seq. Consecutive numbers:
    j, _ = _journal("jindex")
    j.load({})
    for _ in range(5):
        j.append({"k": "coin"})
    j.ack(2)  # unacknowledged: 3, 4, 5
    got = [j.index_at_or_after(seq) for seq in (0, 1, 2, 3, 4, 5, 6, 100)]
    assert got == [0, 0, 0, 0, 1, 2, 3, 3], got


def test_delivery_across_a_repairs_skip():
    _littlefs_only()
    # across a repair's skip (2..4 never used): unacknowledged 1, 5, 6, 7
    j, state = _loaded("jindexskip", _rec(1, 70) + b"\x00" * 64)
    assert j.repair(state) == (2, 4)
    for _ in range(3):
        j.append({"k": "coin"})
    got = [j.index_at_or_after(seq) for seq in range(10)]
    assert got == [0, 0, 1, 1, 1, 1, 2, 3, 4, 4], got


def test_the_flash_wear_statistic_is_every_byte_the_journal_hands_the_flash():
    _littlefs_only()
    # bytes_written is the figure bench_flash_wear.py turns into years of flash life
    # (docs/BENCHMARKS.md): checkpoints, events and compactions, nothing left out or counted twice
    _, board = _journal("jwear")
    nv = _CountingNv(board.nv)
    j = J.Journal(nv)
    state, _ = j.load({"meter": 0})  # fresh: its first checkpoint
    for i in range(6):
        j.append({"k": "coin", "p": {"meter": 70 * (i + 1)}})
    j.ack(4)
    j.checkpoint({"meter": 420})
    j.compact({"meter": 420})  # copies 5 and 6
    j.append({"k": "coin", "p": {"meter": 490}})
    assert nv.bytes > 0 and j.bytes_written == nv.bytes, (j.bytes_written, nv.bytes)


mptest.run(globals())
