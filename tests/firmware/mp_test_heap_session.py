"""The live heap over a session: rounds of seven tokens, the dealer's lock and unlock, a host
acknowledging every event. Whatever the board keeps per event (the outbox, reply caches, the
journal's bookkeeping) must be released when the host has it, or a board that runs for weeks runs
out of heap. On the Pico the same is watched over minutes of its own time (`bench_pico.py
session`); here, on the unix port, over enough rounds to see a few bytes an event."""
import gc

import mptest
from simkit import Rig

ROUNDS_WARM = 15   # the first checkpoint, the caches filled, the log's first sectors opened
ROUNDS_MEASURED = 90   # 90 rounds of 7 tokens, 2 keys and their state changes: ~1,000 events

def _round(rig):
    for seat in range(7):
        rig.coin(seat)
    rig.run_ms(700)
    rig.press(0)  # lock
    rig.run_ms(100)
    rig.press(1)  # unlock
    rig.run_ms(100)
    rig.ack_all()
    rig.run_ms(50)
    # the test's host keeps what it has seen: forgotten here, so only the board's heap is measured
    del rig.events[:]
    rig.seen.clear()


def test_the_live_heap_stays_flat_over_rounds_with_a_host_acknowledging():
    mptest.only_on_micropython("MicroPython's heap is the subject (gc.mem_free); CPython has no such figure")
    rig = Rig("heap-session")
    rig.hello()
    rig.run_ms(200)
    for _ in range(ROUNDS_WARM):
        _round(rig)
    events_before = rig.app.journal.next_seq
    free = []
    for _ in range(ROUNDS_MEASURED):
        _round(rig)
        gc.collect()
        free.append(gc.mem_free())
    events = rig.app.journal.next_seq - events_before
    assert events >= 900, events
    assert rig.app.journal.unacked_count() == 0
    # What is free swings with where the journal stands (a files journal's compaction, the log's
    # sector): the most free in the first third against the most free in the last. A byte an event
    # kept for good would lower the second by ~650 bytes.
    third = ROUNDS_MEASURED // 3
    early, late = max(free[:third]), max(free[-third:])
    assert early - late < 512, "the heap's top fell %d bytes over %d acknowledged events (%r)" % (
        early - late, events, free[::10])

if __name__ == "__main__":
    mptest.run(globals())
