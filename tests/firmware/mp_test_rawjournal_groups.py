"""GROUP records of the raw log's journal (firmware/table/rawjournal.py, table/rawlog.py), on
MicroPython: the events a key press makes at one moment (the key and the lock; the key, the
unlock and the round's closing snapshot) share one 16-byte slot and take a number each. Flash
life is slots a token (docs/BENCHMARKS.md, pico_rawwear); these tests hold the group to what a
single record promises: the host sees each event as before, a cut or a refused write leaves
none of them, a checkpoint or an acknowledgement between them replays each exactly once, a
repair keeps them, and a forged group freezes the journal."""
import json

import mptest
from boards.simflash import SimNorFlash
from drivers.nvfile import NvFiles
from simkit import fresh_dir
from table import config as config_mod
from table import protocol as proto
from table import rawlog as L
from table import rawjournal as RJ
from table import vocab
from table.app import initial_state
from mp_test_rawjournal import RawRig, _FailOnce, _poke, _coins


def _places(j, start=0):
    """{log position: [kind, number of events]} of the unacknowledged events from index start."""
    out = {}
    for i in range(start, j.unacked_count()):
        seq, pos, _packed = j.unacked.get(i)
        kind = j._record(i)[1]
        got = out.setdefault(pos, [kind, 0])
        got[1] += 1
    return out


def _round_of_seven(name):
    """A board on the raw log plays a round of seven tokens (lock, unlock): (rig, its journal, the
    index of the round's first unacknowledged event, that event's number)."""
    rig = RawRig(name)
    rig.run_ms(10)
    j = rig.app.journal
    start = j.unacked_count()
    first_q = j.next_seq
    _coins(rig, 7)
    return rig, j, start, first_q


def _record_bytes(j, pos):
    """The 12 bytes before the CRC of the record at log position pos, as they are on the chip."""
    dev = j.log.dev
    return bytes(dev.read(pos // L.SLOTS % dev.sectors, (pos % L.SLOTS) * 16, 12))


def test_a_round_of_seven_tokens_takes_nine_slots_and_the_host_sees_every_event_in_order():
    # Seven COIN records, then one slot for the lock (key + state) and one for the unlock (key +
    # state + the closing snapshot): 9 slots, where one a record made it 12.
    rig, j, start, first_q = _round_of_seven("rggroupround")
    places = _places(j, start)
    assert len(places) == 9, places
    kinds = sorted(v[0] for v in places.values())
    assert kinds == [L.K_COIN] * 7 + [L.K_GROUP] * 2, kinds
    assert sorted(v[1] for v in places.values() if v[0] == L.K_GROUP) == [2, 3]
    got = [e for e in rig.events if e["q"] >= first_q]
    assert [e["q"] for e in got] == list(range(first_q, first_q + 12)), [e["q"] for e in got]
    tail = [(e["k"], e.get("key") or e.get("reason")) for e in got[7:]]
    assert tail == [("key", "lock"), ("state", "lock"), ("key", "unlock"), ("state", "unlock"), ("meters", None)], tail
    assert rig.app.state["base"] == "OPEN" and rig.app.state["t0"] == 0


def test_a_groups_bytes_are_the_documented_ones_each_form_with_its_own_parameter_count():
    # GROUP | count, ms (4 bytes LE), then each event's form and its parameters (key: the key and
    # the state, 2 bytes; lock and unlock: none; meters: the seat count, 1 byte), 0xFF up to byte
    # 12 (the CRC after it). A build that gave a form one parameter byte more or less could not
    # read the log another build wrote: the board would freeze its journal as corrupt.
    rig, j, start, first_q = _round_of_seven("rggroupbytes")
    groups = sorted(pos for pos, v in _places(j, start).items() if v[0] == L.K_GROUP)
    body = [_record_bytes(j, p) for p in groups]
    got = [e for e in rig.events if e["q"] >= first_q][7:]
    key_lock, key_unlock, meters = got[0], got[2], got[4]
    states = ("OPEN", "LOCKED", "JACKPOT_PENDING", "SERVICE", "FAULT")
    keys = vocab.KEY_NAMES
    assert body[0] == bytes((0x82,)) + L.le(key_lock["ms"], 4) + bytes(
        (0, keys.index("lock"), states.index(key_lock["state"]), 1)) + b"\xff" * 3, body[0]
    assert body[1] == bytes((0x83,)) + L.le(key_unlock["ms"], 4) + bytes(
        (0, keys.index("unlock"), states.index(key_unlock["state"]), 2, 3, len(meters["seat_coins"]))) + b"\xff", body[1]


def test_coins_and_spots_of_one_moment_share_slots_and_read_back_as_they_were():
    # An extra coin and a late coin (3 parameter bytes each: the seat and the pulse end's offset,
    # 300 ms here so that its high byte is not 0) each with a spot change (1 byte: seat << 3 |
    # spot << 1 | on) in the same ms: two GROUPs. Read back after a reboot, each event is what was
    # written: a form given a byte more or less would shift or cut the events after it.
    j, state = _journal("rggroupcoins")
    ms = 5000
    base = {"t": proto.EVENT, "b": "sim-raw", "ms": ms}
    events = [dict(base, k="extra_coin", seat=2, round=state["round"], pe=ms - 30),
              dict(base, k="spot", seat=4, spot="bet", on=True),
              dict(base, k="late_coin", seat=3, round=state["round"], state=state["base"], pe=ms - 300),
              dict(base, k="spot", seat=5, spot="bonus", on=False)]
    first = j.next_seq
    j.begin_group()
    for e in events:
        _add(j, state, e)
    j.end_group()
    places = _places(j)
    assert sorted(v[0] for v in places.values()) == [L.K_GROUP, L.K_GROUP], places
    body = [_record_bytes(j, p) for p in sorted(places)]
    head = L.le(ms, 4)
    # form 4 (extra), seat 2, offset 30 (2 bytes LE); form 6 (spot), 4 << 3 | 1 << 1 | 1
    assert body[0] == b"\x82" + head + bytes((4, 2, 30, 0, 6, 4 << 3 | 1 << 1 | 1)) + b"\xff", body[0]
    # form 5 (late), seat 3, offset 300; form 6, 5 << 3 | 2 << 1 | 0
    assert body[1] == b"\x82" + head + bytes((5, 3, 300 & 0xFF, 300 >> 8, 6, 5 << 3 | 2 << 1)) + b"\xff", body[1]
    j2, _state2 = _reload(j)
    start = j2.index_at_or_after(first)
    got = [json.loads(j2.read_payload(start + i)) for i in range(len(events))]
    for want, read in zip(events, got):
        assert read["q"] == first + events.index(want), read
        assert {k: read.get(k) for k in want} == want, (want, read)


def test_three_spot_changes_of_one_moment_are_one_slot_of_a_byte_each():
    j, state = _journal("rggroupspots")
    ms = 7000
    base = {"t": proto.EVENT, "b": "sim-raw", "ms": ms}
    j.begin_group()
    for seat in (1, 2, 3):
        _add(j, state, dict(base, k="spot", seat=seat, spot="ante", on=True))
    j.end_group()
    places = _places(j)
    assert list(places.values()) == [[L.K_GROUP, 3]], places
    assert _record_bytes(j, list(places)[0]) == b"\x83" + L.le(ms, 4) + bytes(
        (6, 1 << 3 | 1, 6, 2 << 3 | 1, 6, 3 << 3 | 1)) + b"\xff"


def _on_chip(rig, dev):
    """The booted board's log on `dev` (a wrapper of its chip that fails when armed)."""
    rig.board.log_device = dev
    rig.app.journal.log.dev = dev
    return dev


def _token_then_lock(rig):
    """A token on seat 0, then the dealer's lock: returns the ms of the key press."""
    rig.coin(0)
    rig.run_ms(300)
    now = rig.board.now_ms()
    rig.app.key_pressed(now, "lock")
    return now


def test_a_group_the_flash_refuses_takes_its_events_back_out_of_the_state():
    # The lock's slot is refused (a failing chip): the key and the lock never happened. The
    # table stays OPEN, the frozen meter unset, coin-in stops on the storage fault, both events
    # count as unrecorded, and the host never hears of either.
    rig = RawRig("rggrouprefused")
    dev = _on_chip(rig, _FailOnce(rig.board.log_device))
    rig.coin(0)
    rig.run_ms(300)
    before = dict(rig.app.state)
    dev.armed = True
    rig.app.key_pressed(rig.board.now_ms(), "lock")
    rig.run_ms(50)
    app = rig.app
    assert "storage" in app.faults and app.journal.frozen, app.faults
    assert app.unrecorded == 2, app.unrecorded
    for k in ("base", "frozen", "elig", "paid", "pays"):
        assert app.state.get(k) == before.get(k), (k, app.state.get(k), before.get(k))
    assert not [e for e in rig.events if e["k"] in ("key", "state")], rig.events
    rig.boot()
    assert rig.app.state["base"] == "OPEN" and not rig.app.journal.frozen


class _CutMidProgram(_FailOnce):
    """The chip, with the power cut during the next program when armed: its first `keep` bytes land."""

    def __init__(self, dev, keep):
        _FailOnce.__init__(self, dev)
        self.keep = keep

    def program(self, sector, offset, data):
        if self.armed:
            self.armed = False
            self.dev.program(sector, offset, data[:self.keep])
            raise OSError(5)  # (the board stops here: the test boots again)
        return self.dev.program(sector, offset, data)


def test_a_cut_while_a_group_is_programmed_leaves_none_of_its_events():
    # Torn after 9 of its 16 bytes: boot drops the slot (nothing acted on it), the table is
    # still OPEN with the tokens in, and the boot's own event takes the key's number.
    rig = RawRig("rggroupcut")
    dev = _on_chip(rig, _CutMidProgram(rig.board.log_device, 9))
    rig.coin(0)
    rig.coin(1)
    rig.run_ms(300)
    meter = rig.app.state["meter"]
    key_q = rig.app.journal.next_seq
    dev.armed = True
    rig.app.key_pressed(rig.board.now_ms(), "lock")
    rig.boot()
    app = rig.app
    assert not app.journal.frozen and "storage" not in app.faults, app.fault_detail
    assert app.state["base"] == "OPEN" and app.state["meter"] == meter
    assert app.state["t0"] == 1 and app.state["t1"] == 1
    boot_q = None
    for i in range(app.journal.unacked_count()):
        payload = json.loads(app.journal.read_payload(i))
        if payload["k"] == "boot" and payload["q"] >= key_q:
            boot_q = payload["q"]
    assert boot_q == key_q, (boot_q, key_q)


def test_an_acknowledgement_and_checkpoint_between_a_groups_events_replay_the_rest_once():
    # The host acknowledged the unlock but not the snapshot after it, and a checkpoint was
    # written there: boot starts at the group's slot with the unlock already in the state. The
    # unlock is not applied twice (the round goes up by one), and the snapshot alone is resent.
    rig = RawRig("rggroupcheckpoint")
    _coins(rig, 2)
    round_before = rig.app.state["round"]
    now = _token_then_lock(rig)
    rig.app.key_pressed(now, "unlock")
    rig.run_ms(10)
    unlock = [e for e in rig.events if e.get("reason") == "unlock"][-1]
    snapshot = [e for e in rig.events if e["k"] == "meters"][-1]
    assert snapshot["q"] == unlock["q"] + 1
    rig.send(proto.ack(unlock["q"]))
    rig.run_ms(10)
    j = rig.app.journal
    assert j.unacked_count() == 1 and j._entry(0)[3] == 2  # the snapshot, third of its group
    j.checkpoint(rig.app.state)
    rig.boot()
    app = rig.app
    assert not app.journal.frozen and "storage" not in app.faults, app.fault_detail
    assert app.state["round"] == round_before + 1, (app.state["round"], round_before)
    assert app.state["t0"] == 0 and app.state["base"] == "OPEN"
    assert json.loads(app.journal.read_payload(0)) == snapshot


def _grouped(j, state, items, ms):
    """Events of DERIVED forms journaled as one group by hand, applying each patch as the app
    does. items: [(form, parameters)]. Returns the events, numbered."""
    j.begin_group()
    out = []
    for form, params in items:
        e = RJ.derived_event(form, params + b"\xff" * (7 - len(params)), ms, state, "sim-raw")
        j.append(e)
        for k in e.get("p") or {}:
            state[k] = e["p"][k]
        out.append(e)
    j.end_group()
    return out


def _journal(name, sectors=8):
    d = fresh_dir(name)
    j = RJ.RawJournal(NvFiles(d + "/nv"), SimNorFlash(d + "/rawlog.bin", sectors), "sim-raw")
    state, fresh = j.load(initial_state(config_mod.defaults()))
    return j, state


def _reload(j):
    again = RJ.RawJournal(j.nv, j.log.dev, "sim-raw")
    state, _fresh = again.load(initial_state(config_mod.defaults()))
    return again, state


def _note(ms, meter):
    return {"t": proto.EVENT, "b": "sim-raw", "k": "note", "ms": ms, "p": {"meter": meter}}


def _add(j, state, e):
    """Journal an event and apply its patch, as the app does."""
    j.append(e)
    for k in e.get("p") or {}:
        state[k] = e["p"][k]


_KEY_UNLOCK_IN_LOCKED = bytes((1, 1))  # key 1 (unlock), pressed with the table LOCKED (state 1)
_KEY_LOCK_IN_OPEN = bytes((0, 0))


def test_a_repair_copies_a_half_acknowledged_group_event_by_event():
    # Key, unlock and snapshot in one slot; the host took the first two (a checkpoint there);
    # then a bit flips in a later record. The repair copies the snapshot alone (a DERIVED record
    # with its own number), and after the boot it reads back exactly as it was.
    j, state = _journal("rggrouprepair")
    _add(j, state, _note(1, 100))
    _grouped(j, state, [(RJ.F_KEY, _KEY_LOCK_IN_OPEN), (RJ.F_LOCK, b"")], 10)
    key, unlock, snap = _grouped(j, state, [(RJ.F_KEY, _KEY_UNLOCK_IN_LOCKED), (RJ.F_UNLOCK, b""),
                                            (RJ.F_METERS, b"\x07")], 20)
    j.ack(unlock["q"])
    j.checkpoint(state)
    _add(j, state, _note(30, 200))
    _add(j, state, _note(31, 300))
    _seq, pos, _packed = j.unacked.get(1)
    dev = j.log.dev
    _poke(dev, pos // L.SLOTS % dev.sectors, (pos % L.SLOTS) * 16 + 6, b"\x00")
    j2, state2 = _reload(j)
    assert j2.frozen and state2["meter"] == 300 and state2["base"] == "OPEN", (j2.corrupt, state2["base"])
    assert j2.unacked_count() == 1 and j2.unacked.seq(0) == snap["q"]
    j2.repair(state2)
    copied = j2._entry(0)
    assert copied[1] == L.K_DERIVED and bytes(copied[2])[0] == 0x73 and copied[0] == snap["q"], copied
    j2.append({"t": proto.EVENT, "b": "sim-raw", "k": "storage_repaired", "ms": 40})
    j3, state3 = _reload(j2)
    assert not j3.frozen and state3["meter"] == 300 and state3["round"] == state["round"]
    assert json.loads(j3.read_payload(0)) == dict(snap, q=snap["q"])


def test_after_a_bad_record_a_groups_numbers_are_counted_and_its_patches_kept():
    # The records after a corrupt one still say which numbers were used: a group took three, so
    # the next event is numbered past all three, and the lock it holds is the newest word.
    j, state = _journal("rggroupafterbad")
    _add(j, state, _note(1, 100))
    _add(j, state, _note(2, 110))
    _grouped(j, state, [(RJ.F_KEY, _KEY_LOCK_IN_OPEN), (RJ.F_LOCK, b"")], 10)
    _grouped(j, state, [(RJ.F_KEY, _KEY_UNLOCK_IN_LOCKED), (RJ.F_UNLOCK, b""), (RJ.F_METERS, b"\x07")], 20)
    _grouped(j, state, [(RJ.F_KEY, _KEY_LOCK_IN_OPEN), (RJ.F_LOCK, b"")], 30)
    last = j.next_seq - 1
    _seq, pos, _packed = j.unacked.get(1)
    dev = j.log.dev
    _poke(dev, pos // L.SLOTS % dev.sectors, (pos % L.SLOTS) * 16 + 6, b"\x00")
    j2, state2 = _reload(j)
    assert j2.frozen and "bad log record" in j2.corrupt, j2.corrupt
    assert j2.next_seq == last + 1, (j2.next_seq, last)
    assert state2["base"] == "LOCKED" and state2["round"] == state["round"]


def test_a_group_record_that_checks_but_holds_a_form_this_build_lacks_freezes_the_journal():
    # A forger's (or a newer firmware's) GROUP with a valid CRC naming form 9, or with bytes
    # after its events: corrupt, never a crash and never read as some other event.
    for bad in (bytes((L.K_GROUP | 2,)) + L.le(6, 4) + b"\x09\x00\x00\x01" + b"\xff" * 3,
                bytes((L.K_GROUP | 2,)) + L.le(6, 4) + b"\x00\x00\x00\x01\x00" + b"\xff" * 2):
        j, state = _journal("rggroupforged")
        _add(j, state, _note(1, 10))
        _n, slot, seq = j.log.append(bad, True, j.ck_n)
        j.next_seq += 2
        _add(j, state, _note(7, 20))
        j2, state2 = _reload(j)
        assert j2.frozen and "sector 0 slot %d" % slot in j2.corrupt, j2.corrupt
        assert state2["meter"] == 20 and j2.next_seq == seq + 3


def test_a_key_whose_action_is_written_whole_goes_first_in_its_own_slot():
    # The jackpot key in a LOCKED round: its state change is a FULL record, so the key waiting
    # for its group goes to flash first (alone), then the change: numbers stay in order.
    rig = RawRig("rggroupjackpot")
    now = _token_then_lock(rig)
    rig.app.key_pressed(now, "jackpot")
    rig.run_ms(10)
    j = rig.app.journal
    tail = [j._record(i)[1] for i in range(j.unacked_count() - 2, j.unacked_count())]
    assert tail == [L.K_DERIVED, L.K_FULL], tail
    got = rig.events[-2:]
    assert got[0]["k"] == "key" and got[0]["key"] == "jackpot" and got[1].get("to") == "JACKPOT_PENDING", got
    assert got[1]["q"] == got[0]["q"] + 1
    assert rig.app.state["base"] == "JACKPOT_PENDING"


if __name__ == "__main__":
    mptest.run(globals())
