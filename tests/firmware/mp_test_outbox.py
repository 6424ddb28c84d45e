"""The outbox (table/journal_base.py Outbox): the events not yet acknowledged, oldest first, as
both journals keep them. It stores offsets and lengths and only the oldest event's number and the
places a storage repair skipped numbers; every number it answers must be the one appended, across
skips, acknowledgements and a drop that lands on a skip. An event answered with the wrong number
is an event the host files under another's, or one resent as if new."""
import gc

import mptest
from table.journal_base import Outbox


def _filled(numbers):
    box = Outbox()
    for i, seq in enumerate(numbers):
        box.append(seq, 1000 + 16 * i, 30 + i)
    return box


def _numbers(box):
    return [box.seq(i) for i in range(len(box))]


def test_consecutive_numbers_read_back_with_their_offsets_and_lengths():
    box = _filled([5, 6, 7, 8])
    assert len(box) == 4
    assert _numbers(box) == [5, 6, 7, 8]
    assert box.get(0) == (5, 1000, 30)
    assert box.get(3) == (8, 1048, 33)
    assert box.jumps == []  # nothing stored per number while they run on by one


def test_numbers_a_storage_repair_skipped_read_back_as_appended():
    # a repair skips the numbers a bad stretch may have held: 4 and 5 then 9..10, then 40
    numbers = [2, 3, 9, 10, 40, 41, 42]
    box = _filled(numbers)
    assert _numbers(box) == numbers
    assert [box.get(i)[0] for i in range(len(box))] == numbers
    assert box.get(4) == (40, 1064, 34)
    assert len(box.jumps) == 2


def test_index_at_or_after_finds_the_oldest_at_or_past_a_number_across_skips():
    box = _filled([2, 3, 9, 10, 40, 41, 42])
    assert box.index_at_or_after(1) == 0
    assert box.index_at_or_after(2) == 0
    assert box.index_at_or_after(3) == 1
    assert box.index_at_or_after(4) == 2    # skipped: the next that exists
    assert box.index_at_or_after(9) == 2
    assert box.index_at_or_after(11) == 4
    assert box.index_at_or_after(41) == 5
    assert box.index_at_or_after(42) == 6
    assert box.index_at_or_after(43) == 7   # past the newest: len()
    assert Outbox().index_at_or_after(7) == 0


def test_index_at_or_after_checks_its_guess_where_numbers_jumped():
    # the guess (seq - oldest) lands on index 3 for 5, which holds 40: it must scan instead
    box = _filled([2, 3, 4, 40, 41])
    assert box.index_at_or_after(5) == 3
    assert box.index_at_or_after(40) == 3
    assert box.index_at_or_after(41) == 4


def test_dropping_the_acknowledged_keeps_every_later_number():
    numbers = [2, 3, 9, 10, 40, 41, 42]
    for n in range(len(numbers) + 1):
        box = _filled(numbers)
        box.drop(n)
        assert len(box) == len(numbers) - n, n
        assert _numbers(box) == numbers[n:], (n, _numbers(box))
        assert [box.get(i)[1:] for i in range(len(box))] == [(1000 + 16 * i, 30 + i) for i in range(n, len(numbers))]


def test_an_acknowledgement_releases_exactly_the_events_numbered_up_to_it():
    # count_through(seq) is what an ack of seq releases (both journals' ack): none for a number
    # below the oldest (one a storage repair skipped, or one already released), never more than
    # the outbox holds for a number at or past the newest, and across a skip exactly those
    # numbered seq or lower. One too many released is an unacknowledged event lost.
    box = _filled([2, 3, 9, 10])
    asked = (0, 1, 2, 3, 5, 8, 9, 10, 11, 99)
    assert [box.count_through(seq) for seq in asked] == [0, 0, 1, 2, 2, 2, 3, 4, 4, 4]
    assert Outbox().count_through(7) == 0


def test_a_drop_that_lands_on_a_skip_leaves_no_jump_at_the_oldest():
    box = _filled([2, 3, 9, 10])
    box.drop(2)  # the oldest is now 9, where the jump was
    assert box.first_seq == 9
    assert box.jumps == []
    assert _numbers(box) == [9, 10]
    box.append(11, 0, 1)
    assert _numbers(box) == [9, 10, 11]
    assert box.jumps == []


def test_appends_after_drops_and_an_empty_outbox_start_from_the_new_number():
    box = _filled([2, 3, 9])
    box.drop(3)
    assert len(box) == 0
    box.append(12, 0, 1)   # numbering resumes after a skip with nothing outstanding
    box.append(13, 16, 1)
    assert _numbers(box) == [12, 13]
    assert box.jumps == []
    box.drop(0)
    assert _numbers(box) == [12, 13]


def test_a_later_skip_after_drops_is_kept():
    box = _filled([1, 2, 3])
    box.drop(1)
    box.append(7, 0, 1)
    box.append(8, 0, 1)
    assert _numbers(box) == [2, 3, 7, 8]
    box.drop(1)
    assert _numbers(box) == [3, 7, 8]
    box.drop(1)
    assert _numbers(box) == [7, 8]
    assert box.jumps == []


def test_a_full_outbox_holds_about_six_bytes_of_heap_an_event():
    mptest.only_on_micropython("MicroPython's heap is the subject (gc.mem_free); CPython has no such figure")
    box = Outbox()
    gc.collect()
    before = gc.mem_free()
    for seq in range(1, 1017):  # outbox_limit 1000 + the 16 the app keeps in reserve
        box.append(seq, seq * 16, 40)
    gc.collect()
    held = before - gc.mem_free()
    # 6 bytes an event (4 of offset, 2 of length) and the arrays' last growth step: the three
    # arrays of before held 10, a list of tuples ~37
    assert held <= 1016 * 8, held


if __name__ == "__main__":
    mptest.run(globals())
