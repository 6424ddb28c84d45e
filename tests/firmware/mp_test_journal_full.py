"""The littlefs journal (table/journal.py) on a flash that refuses every append, on MicroPython.

"Unrecorded" is what the host can never be told: the events the board took but could not journal
(docs/RELIABILITY.md, the storage fault). It is a count of those events, exactly: a journal that
writes each event on its own has no group of other events to take back with a failed write, so
nothing but the failed events themselves may be added (the raw log's groups are
mp_test_rawjournal_groups.py)."""
import mptest
from simkit import FullNv, Rig


def test_a_token_the_full_flash_could_not_take_is_one_unrecorded_event_not_more():
    rig = Rig("journal-full-count")
    rig.coin(0)
    rig.run_ms(300)
    rig.ack_all()
    rig.run_ms(50)
    assert rig.app.unrecorded == 0 and "storage" not in rig.app.faults
    rig.board.nv = FullNv(rig.board.nv)
    rig.app.journal.nv = rig.board.nv
    rig.coin(1)
    rig.run_ms(300)
    assert "storage" in rig.app.faults
    # the coin's one event, refused by the flash; the journal then takes nothing more, so the
    # fault itself is not an event that could be lost a second time
    assert rig.app.unrecorded == 1, rig.app.unrecorded
    assert rig.command("status")["unrecorded"] == 1


if __name__ == "__main__":
    mptest.run(globals())
