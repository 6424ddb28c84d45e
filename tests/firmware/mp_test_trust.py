"""The trust rule and the storage faults, on MicroPython (docs/SECURITY.md).

Once provisioned, a frame the board acts on is signed, of this boot's session, and numbered above
the last one taken; anything else changes nothing and does not count as the host being there.
A journal record that is bad but not a torn tail is a storage fault, never read as the end."""
import os

import mptest
from simkit import FullNv, Rig
from table import keystore
from table import protocol as proto
from table.app import TableApp

KEY = b"k" * 32
LOCK = 0


def _provisioned(name, config=None):
    rig = Rig(name, config, key=KEY)
    rig.board.switch = True
    assert rig.command("provision", {"key": KEY.hex()})["ok"] == 1
    rig.board.switch = False
    rig.run_ms(50)
    rig.ack_all()
    rig.run_ms(50)
    return rig


def test_forged_acks_and_heartbeats_are_not_the_host():
    rig = _provisioned("trust-host", {"host_timeout_ms": 5000})
    rig.coin(0)
    rig.run_ms(300)
    waiting = rig.app.journal.unacked_count()
    assert waiting > 0
    for _ in range(8):
        rig.board.rx.extend(proto.encode_frame(proto.ack(10 ** 6)))
        rig.board.rx.extend(proto.encode_frame(proto.heartbeat()))
        rig.board.rx.extend(proto.encode_frame(proto.heartbeat(), b"\x01" * 32))
        rig.run_ms(1000, 20)
    assert "host" in rig.app.faults  # the unsigned "host" did not keep the board company
    assert rig.app.journal.unacked_count() >= waiting  # and released nothing
    assert not rig.app.seat_accepting(1)  # coin-in is off while the host is gone
    rig.ack_all()  # the real host, signed
    rig.run_ms(50)
    assert "host" not in rig.app.faults


def test_a_signed_frame_of_an_earlier_boot_or_a_replay_is_refused():
    rig = _provisioned("trust-replay")
    rig.send(proto.command(71, "lock", {}), KEY)
    rig.counter += 1
    captured = proto.sealed_frame(proto.command(72, "unlock", {}), KEY, rig.session, rig.counter)
    rig.run_ms(20)
    assert rig.app.state["base"] == "LOCKED"
    rig.board.rx.extend(captured)  # taken once (counter above the last)
    rig.run_ms(20)
    assert rig.app.state["base"] == "OPEN"
    rig.send(proto.command(73, "lock", {}), KEY)
    rig.run_ms(20)
    rig.board.rx.extend(captured)  # the same bytes again: a replay
    rig.run_ms(20)
    assert rig.app.state["base"] == "LOCKED"
    rig.boot()  # a new boot, a new session: the old frame is of another session
    rig.board.rx.extend(captured)
    rig.run_ms(20)
    assert rig.app.state["base"] == "LOCKED"
    assert rig.replies[72]["err"] == proto.E_REPLAY


def _refusals_journaled(rig):
    return [e for e in rig.events if e["k"] == "cmd_refused"]


def test_the_hosts_frames_of_the_last_boot_before_it_hears_the_new_session_are_stale_not_refused():
    """A power cut: the host's heartbeats and acks in flight, sealed in the old session, reach the
    new boot before the host's hello. They are not acted on, but they are not an attack: counted
    as stale, never journaled, never in the refused count. Once the host has spoken in the new
    session, the old session's frames are replays again, refused and journaled."""
    rig = _provisioned("trust-stale")
    old_session, counter = rig.session, rig.counter
    rig.boot()
    rig.run_ms(50)
    journaled = len(_refusals_journaled(rig))
    for n in range(1, 6):
        rig.board.rx.extend(proto.sealed_frame(proto.heartbeat(), KEY, old_session, counter + n))
        rig.board.rx.extend(proto.sealed_frame(proto.ack(1), KEY, old_session, counter + 10 + n))
        rig.run_ms(20)
    link = rig.app.link
    assert link.frames_stale == 10 and link.frames_refused == 0
    assert len(_refusals_journaled(rig)) == journaled
    rig.board.rx.extend(proto.sealed_frame(proto.command(81, "status", {}), KEY, old_session, counter + 30))
    rig.run_ms(20)
    assert rig.replies[81]["err"] == proto.E_REPLAY and link.frames_refused == 0  # answered, not counted
    status = rig.command("status")  # the host has heard the new session and spoken in it
    assert status["stale"] == 11 and status["refused"] == 0
    rig.board.rx.extend(proto.sealed_frame(proto.heartbeat(), KEY, old_session, counter + 40))
    rig.run_ms(20)
    assert link.frames_refused == 1 and len(_refusals_journaled(rig)) == journaled + 1


def test_a_session_that_is_no_earlier_boot_is_refused_even_before_the_host_speaks():
    rig = _provisioned("trust-stale-forged")
    rig.boot()
    rig.run_ms(50)
    boots = rig.app.state["boots"]
    for session in ("%d.00000000" % (boots + 1), "x.1", "-1.0", "%d.ffffffff" % boots):
        rig.board.rx.extend(proto.sealed_frame(proto.heartbeat(), KEY, session, 5))
        rig.run_ms(20)
    assert rig.app.link.frames_stale == 0 and rig.app.link.frames_refused == 4


def test_the_board_signs_every_frame_it_sends():
    rig = _provisioned("trust-sign")
    rig.coin(0)
    rig.run_ms(300)
    reply = rig.command("status")
    assert reply["ok"] == 1 and reply[proto.SESSION] == rig.session and reply[proto.COUNTER] > 0
    assert rig.unsigned_events == 0 or rig.unsigned_events <= 3  # only those sent before the key


def _journal_path(rig):
    data = rig.dir + "/data"
    names = [n for n in os.listdir(data) if n.startswith("j") and n.endswith(".log")]
    return data + "/" + names[0]


def test_a_bad_record_that_is_not_the_tail_is_a_storage_fault():
    rig = _provisioned("trust-corrupt")
    for seat in range(4):
        rig.coin(seat)
        rig.run_ms(300)
    meter = rig.app.state["meter"]
    top = rig.app.journal.next_seq
    path = _journal_path(rig)
    with open(path, "rb") as f:
        raw = bytearray(f.read())
    raw[len(raw) // 2] ^= 0x10
    with open(path, "wb") as f:
        f.write(raw)
    rig.boot()
    assert "storage" in rig.app.faults
    assert rig.app.journal.next_seq >= top  # no number handed out again
    assert rig.app.state["meter"] >= meter - 70  # the newest meter the flash proves, not a rollback
    assert not rig.app.seat_accepting(5)
    before = rig.app.state["meter"]
    rig.coin(5)
    rig.run_ms(300)
    assert rig.app.state["meter"] == before  # frozen: nothing credited, nothing journaled
    assert rig.command("clear", {})["ok"] == 0  # only the signed repair clears it
    rig.board.switch = True
    rep = rig.command("storage_repair", {"reason": "bit error"})
    assert rep["ok"] == 1 and rep["skipped_from"] <= top <= rep["skipped_to"] + 1, rep
    assert "storage" not in rig.app.faults
    assert rig.kinds("storage_repaired")[0]["q"] == rep["skipped_to"] + 1


def test_a_torn_last_record_is_dropped_without_a_fault():
    rig = _provisioned("trust-torn")
    rig.coin(0)
    rig.run_ms(300)
    path = _journal_path(rig)
    with open(path, "rb") as f:
        raw = f.read()
    with open(path, "wb") as f:
        f.write(raw[:-5])  # the last append cut short
    rig.boot()
    assert "storage" not in rig.app.faults


def test_a_full_flash_is_a_fault_not_a_crash_loop():
    rig = _provisioned("trust-full")
    rig.coin(0)
    rig.run_ms(300)
    rig.board.nv = FullNv(rig.board.nv)
    rig.app.journal.nv = rig.board.nv
    rig.coin(1)
    rig.run_ms(300)
    assert "storage" in rig.app.faults and rig.app.unrecorded >= 1
    assert not rig.app.seat_accepting(2)
    assert rig.command("status")["unrecorded"] >= 1
    # and a reboot on a full flash boots into the same fault instead of crashing
    full = rig.board.nv
    rig.board = rig.board.__class__(rig.dir, "sim-test", 8, 8, "pio")
    rig.board.nv = FullNv(rig.board.nv)
    app = TableApp(rig.board, 5000)
    assert "storage" in app.faults
    del full


# --- the key's life on the board (table/keystore.py, docs/SECURITY.md "Keys") -------------------
def _slot(rig, name):
    return rig.dir + "/data/" + name


def _exists(path):
    try:
        os.stat(path)
        return True
    except OSError:
        return False


def _flip(path, index, bit=1):
    with open(path, "rb") as f:
        raw = bytearray(f.read())
    raw[index] ^= bit
    with open(path, "wb") as f:
        f.write(raw)


def _unsigned_host_is_refused(rig):
    """An unsigned ack, hb and lock change nothing on a board that is faulted for its key."""
    rig.coin(0)
    rig.run_ms(300)
    assert rig.app.state["t0"] == 0  # coin-in off: the key fault
    waiting = rig.app.journal.unacked_count()
    assert waiting > 0
    base = rig.app.state["base"]
    rig.board.rx.extend(proto.encode_frame(proto.ack(10 ** 6)))
    rig.board.rx.extend(proto.encode_frame(proto.heartbeat()))
    rig.board.rx.extend(proto.encode_frame(proto.command(990, "lock", {})))
    rig.run_ms(50)
    assert rig.app.journal.unacked_count() >= waiting  # the ack released nothing
    assert rig.app.state["base"] == base
    assert rig.replies[990]["ok"] == 0


def test_a_rotten_key_slot_is_a_key_fault_not_an_unkeyed_board():
    rig = _provisioned("key-rot")
    _flip(_slot(rig, "kA"), 20)  # one bit of the key
    rig.boot()
    assert "key" in rig.app.faults and rig.app.key is None and rig.app.key_lost
    assert not rig.app.seat_accepting(0)
    _unsigned_host_is_refused(rig)
    assert rig.command("clear", {}, signed=False)["ok"] == 0
    # a key provisioned again (switch on) clears it
    rig.board.switch = True
    assert rig.command("provision", {"key": KEY.hex()}, signed=False)["ok"] == 1
    rig.board.switch = False
    assert "key" not in rig.app.faults and rig.app.key is not None
    rig.boot()
    assert "key" not in rig.app.faults and rig.app.seat_accepting(0)


def test_a_new_key_goes_to_the_other_slot_and_a_torn_write_keeps_the_old_key():
    rig = _provisioned("key-torn")
    new = b"n" * 32
    assert rig.command("key_change", {"key": new.hex()})["ok"] == 1
    rig.key = new
    assert _exists(_slot(rig, "kA")) and _exists(_slot(rig, "kB"))
    # the next change is cut short in kA (the slot of the older key): the newest good slot stays
    with open(_slot(rig, "kA"), "rb") as f:
        whole = f.read()
    with open(_slot(rig, "kA"), "wb") as f:
        f.write(whole[:17])
    rig.boot()
    assert "key" in rig.app.faults  # a torn slot is a fault...
    assert rig.app.key is not None and rig.app.key.raw == new  # ...and the key the host holds signs
    assert rig.command("status")["ok"] == 1
    assert not rig.app.seat_accepting(0)


def test_a_rotten_newest_slot_is_a_fault_even_with_an_older_key_left():
    rig = _provisioned("key-rot-newest")
    new = b"m" * 32
    assert rig.command("key_change", {"key": new.hex()})["ok"] == 1
    _flip(_slot(rig, "kB"), 41)  # its CRC
    rig.boot()
    assert "key" in rig.app.faults and not rig.app.seat_accepting(0)


def test_a_keyed_board_whose_key_files_are_gone_is_not_unkeyed():
    rig = _provisioned("key-gone")
    os.remove(_slot(rig, "kA"))  # the journal still says the board is keyed
    rig.boot()
    assert rig.app.key is None and rig.app.key_lost and "key" in rig.app.faults
    _unsigned_host_is_refused(rig)
    assert rig.command("status", signed=False)["err"] == proto.E_NO_KEY


def test_an_earlier_key_bin_is_read_and_moved_to_a_slot():
    rig = Rig("key-legacy")
    with open(_slot(rig, "key.bin"), "wb") as f:
        f.write(KEY + proto.crc32(KEY).to_bytes(4, "little"))
    rig.boot()
    assert rig.app.key is not None and rig.app.key.raw == KEY and not rig.app.faults
    rig.key = KEY
    new = b"q" * 32
    assert rig.command("key_change", {"key": new.hex()})["ok"] == 1
    assert not _exists(_slot(rig, "key.bin")) and _exists(_slot(rig, "kA"))
    _flip(_slot(rig, "kA"), 0)
    rig.boot()
    assert "key" in rig.app.faults


def test_after_two_key_changes_the_newest_generation_signs_whichever_slot_holds_it():
    # Provisioned into kA (generation 1), changed into kB (2), changed again into kA (3): kB
    # still holds a good key, an older one; the newest generation is the key.
    rig = _provisioned("key-twice")
    second, third = b"s" * 32, b"t" * 32
    assert rig.command("key_change", {"key": second.hex()})["ok"] == 1
    rig.key = second
    assert rig.command("key_change", {"key": third.hex()})["ok"] == 1
    rig.key = third
    rig.boot()
    app = rig.app
    assert app.key.raw == third and (app.key_gen, app.key_slot) == (3, 0) and not app.faults, app.faults
    assert rig.command("status")["ok"] == 1
    rig.key = second  # the older key of the other slot signs nothing
    assert rig.command("status")["err"] == proto.E_BAD_MAC


def _legacy_key_bin(rig, key, flip=False):
    """The one-file key store of earlier firmware: the key and its CRC-32 (flip: one bit rotten)."""
    raw = bytearray(key + proto.crc32(key).to_bytes(4, "little"))
    if flip:
        raw[33] ^= 0x01
    with open(_slot(rig, "key.bin"), "wb") as f:
        f.write(raw)


def test_a_key_bin_a_cut_left_beside_a_newer_slot_is_not_the_key_whole_or_damaged():
    # keystore.store writes the slot, reads it back, then removes key.bin: a power cut between
    # leaves both. The slot's key (generation 1) is the key; key.bin (generation 0), whole or
    # rotten, is neither the key nor a fault, and the next key change removes it.
    new = b"n" * 32
    for flip in (False, True):
        rig = Rig("key-legacy-left")
        _legacy_key_bin(rig, KEY, flip)
        with open(_slot(rig, "kA"), "wb") as f:
            f.write(keystore.encode(1, new))
        rig.boot()
        assert rig.app.key.raw == new and not rig.app.faults, (flip, rig.app.fault_detail)
        rig.key = new
        assert rig.command("status")["ok"] == 1
        newer = b"w" * 32
        assert rig.command("key_change", {"key": newer.hex()})["ok"] == 1
        assert not _exists(_slot(rig, "key.bin")) and _exists(_slot(rig, "kB"))


def test_a_damaged_key_bin_alone_is_a_key_fault_not_an_unkeyed_board():
    # A board of earlier firmware was keyed (its key.bin is there) but the file no longer
    # checks: never read as a board that was never keyed, which would take unsigned commands.
    rig = Rig("key-legacy-rot")
    _legacy_key_bin(rig, KEY, flip=True)
    rig.boot()
    app = rig.app
    assert app.key is None and app.key_lost and "key" in app.faults
    assert app.fault_detail["key"] == "key.bin damaged: provision a key", app.fault_detail
    _unsigned_host_is_refused(rig)
    assert rig.command("status", signed=False)["err"] == proto.E_NO_KEY
    rig.board.switch = True
    assert rig.command("provision", {"key": KEY.hex()}, signed=False)["ok"] == 1
    rig.board.switch = False
    rig.key = KEY
    assert "key" not in rig.app.faults and not _exists(_slot(rig, "key.bin"))
    assert rig.command("status")["ok"] == 1


class _NotKeptNv:
    """The board's files on a flash whose cells no longer hold what is written: every whole-file
    write lands with one bit flipped, so reading it back gives other bytes."""

    def __init__(self, nv):
        self.nv = nv

    def __getattr__(self, name):
        return getattr(self.nv, name)

    def write(self, name, data):
        data = bytearray(data)
        data[len(data) // 2] ^= 0x04
        self.nv.write(name, bytes(data))


def test_a_key_the_flash_does_not_keep_is_refused_and_the_old_key_still_signs():
    rig = _provisioned("key-not-kept")
    new = b"n" * 32
    rig.board.nv = _NotKeptNv(rig.board.nv)
    reply = rig.command("key_change", {"key": new.hex()})
    assert reply["ok"] == 0 and reply["err"] == proto.E_STORAGE, reply
    assert reply["msg"].startswith("the flash did not keep the key (OSError(5"), reply
    assert reply["msg"].endswith("): the old one stays"), reply
    assert rig.app.key.raw == KEY and not rig.kinds("key_changed")
    assert rig.command("status")["ok"] == 1  # the host's key still signs
    rig.key = new
    assert rig.command("status")["err"] == proto.E_BAD_MAC  # the new one does not
    rig.key = KEY
    # Booted on working flash: kB holds the bytes the flash mangled (a key fault), kA the key.
    rig.boot()
    assert rig.app.key.raw == KEY and "key" in rig.app.faults, rig.app.fault_detail
    assert rig.command("status")["ok"] == 1
    assert rig.command("key_change", {"key": new.hex()})["ok"] == 1  # into kB: both slots check
    rig.key = new
    assert "key" not in rig.app.faults and rig.command("status")["ok"] == 1


def test_with_both_slots_rotten_the_key_fault_stays_until_a_key_is_in_both_again():
    rig = _provisioned("key-both-rot")
    assert rig.command("key_change", {"key": (b"s" * 32).hex()})["ok"] == 1
    _flip(_slot(rig, "kA"), 20)
    _flip(_slot(rig, "kB"), 20)
    rig.boot()
    assert rig.app.key is None and rig.app.key_lost and "key" in rig.app.faults
    rig.board.switch = True
    assert rig.command("provision", {"key": KEY.hex()}, signed=False)["ok"] == 1
    # kA holds the key now; kB is still rotten: the fault stays, coin-in stays off.
    assert rig.app.key.raw == KEY and "key" in rig.app.faults, rig.app.faults
    assert rig.app.fault_detail["key"] == "key slot kB damaged: provision a key", rig.app.fault_detail
    assert not rig.app.seat_accepting(0)
    rig.key = KEY
    assert rig.command("provision", {"key": KEY.hex()})["ok"] == 1  # into kB
    rig.board.switch = False
    assert "key" not in rig.app.faults and rig.app.seat_accepting(0)
    rig.boot()
    assert not rig.app.faults and rig.app.key.raw == KEY, rig.app.fault_detail


def test_a_provision_key_is_64_lower_case_hex_digits_checked_on_the_board():
    rig = Rig("key-args")
    rig.board.switch = True
    for bad in ("6b" * 31 + " 6", "6B" * 32, "6b" * 31 + "zz", 5, "6b" * 33):
        reply = rig.command("provision", {"key": bad})
        assert reply["ok"] == 0 and reply["err"] == proto.E_BAD_ARGS, (bad, reply)
    assert rig.app.key is None and not _exists(_slot(rig, "kA"))


if __name__ == "__main__":
    mptest.run(globals())
