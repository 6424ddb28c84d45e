"""The journal on the raw flash log (firmware/table/rawjournal.py), on MicroPython: coin events in
16-byte records rebuilt for the link, acknowledgements and the outbox across reboots, the wrap's
checkpoints, a full log, and the attacks a 16-byte record invites (a record rewritten with a valid
CRC, a bit flipped), with the signed repair's way out."""
import json

import mptest
from boards.simflash import SimNorFlash
from drivers.nvfile import NvFiles
from simkit import Rig, VirtualClockBoard, fresh_dir
from table import config as config_mod
from table import protocol as proto
from table import rawlog as L
from table import rawjournal as RJ
from table.app import TableApp, initial_state
from table.journal import Journal, StorageError


KEY = bytes(range(32))


class RawRig(Rig):
    """A Rig whose board journals on a NOR chip of `sectors` sectors, whatever the environment."""
    sectors = 8

    def boot(self, config=None):
        self.session = None
        self.board = VirtualClockBoard(self.dir, "sim-raw", 8, 8, "pio")
        self.board.log_device = SimNorFlash(self.dir + "/data/rawlog.bin", self.sectors, self.board.note_flash_write)
        self.board.warp_ms = getattr(self, "now", 0) + 1000
        self.app = TableApp(self.board, self.board.now_ms())
        if config:
            self.app.cfg.update(config)
            self.set_state(cfg=self.app.cfg)
            self.app.build_inputs(self.board.now_ms())


def _coins(rig, n, ack=False):
    """n tokens, at most one a seat a round (the rule): a round is closed by lock and unlock.
    ack: the host acknowledges after each round."""
    done = 0
    while done < n:
        k = min(7, n - done)
        for i in range(k):
            rig.coin(i)
        rig.run_ms(300)
        if ack:
            rig.ack_all()
            rig.run_ms(10)
            del rig.events[:-1]  # (the host's copy: acknowledged, kept small)
        done += k
        # Close the round (the next tokens are a new round's).
        now = rig.board.now_ms()
        rig.app.key_pressed(now, "lock")
        rig.app.key_pressed(now, "unlock")
        rig.run_ms(10)


def test_the_rigs_board_clock_moves_only_when_the_test_moves_it():
    # What the tests here count in board time (acknowledgement records, the wear budget's
    # refills, loop turns) must not depend on how fast the machine runs them.
    import time
    for rig in (RawRig("rjclock"), Rig("clock")):
        before = rig.board.now_ms()
        time.sleep_ms(30) if hasattr(time, "sleep_ms") else time.sleep(0.03)
        assert rig.board.now_ms() == before
        rig.run_ms(20)
        assert rig.board.now_ms() == before + 20


def test_the_raw_log_is_what_the_board_journals_on():
    rig = RawRig("rjkind")
    assert isinstance(rig.app.journal, RJ.RawJournal) and not isinstance(rig.app.journal, Journal)
    assert "storage" not in rig.app.faults


def test_a_coin_takes_one_slot_and_its_rebuilt_event_has_every_field_it_had():
    rig = RawRig("rjcoin")
    j = rig.app.journal
    before = (j.log.head_n, j.log.head_slot)
    rig.coin(3)
    rig.run_ms(300)
    coins = [e for e in rig.events if e["k"] == "coin"]
    assert len(coins) == 1
    assert (j.log.head_n, j.log.head_slot) == (before[0], before[1] + 1)  # 16 bytes on flash
    # Sent again (no ack, reboot): the same field values, from the record and the replayed state.
    sent = coins[0]
    rig.boot()
    rig.events = []
    rig.seen = {}
    rig.hello()
    rig.run_ms(2500)
    again = [e for e in rig.events if e["q"] == sent["q"]]
    assert again and again[0] == sent, (again, sent)
    assert sent["p"]["meter"] == rig.app.state["meter"] and sent["to_meter"] == 70


def test_resends_after_a_reboot_rebuild_every_unacknowledged_coin():
    rig = RawRig("rjresend")
    _coins(rig, 12)
    first = {}
    for e in rig.events:
        first[e["q"]] = e
    rig.send(proto.ack(max(first) - 5))  # part acknowledged
    rig.run_ms(20)
    rig.boot()
    rig.events = []
    rig.seen = {}
    rig.hello()
    rig.run_ms(3000)
    resent = [e for e in rig.events if e["q"] in first]
    assert len(resent) >= 5
    for e in resent:
        assert e == first[e["q"]], (e, first[e["q"]])


def test_acknowledgements_are_records_and_survive_a_reboot():
    rig = RawRig("rjack")
    _coins(rig, RJ.ACK_RECORD_EVENTS, True)
    rig.ack_all()
    rig.run_ms(20)
    j = rig.app.journal
    logged = j.logged_acked
    assert j.acked_seq == j.next_seq - 1 and logged >= RJ.ACK_RECORD_EVENTS
    assert j.acked_seq - logged < RJ.ACK_RECORD_EVENTS  # the rest in RAM only
    rig.boot()
    j = rig.app.journal
    # What an ACK record holds survives; the few acknowledged since are sent again (the host
    # drops them as duplicates), with the boot's own events.
    assert j.acked_seq == logged and j.unacked_count() == j.next_seq - 1 - logged


def test_the_log_wraps_with_checkpoints_and_the_meters_come_back():
    rig = RawRig("rjwrap")
    rig.sectors = 4
    rig.boot()
    dev = rig.board.log_device
    for _ in range(12):
        _coins(rig, 84, True)
        rig.ack_all()
        rig.run_ms(20)
    j = rig.app.journal
    assert j.log.head_n >= 4, j.log.head_n  # past one lap of the 4-sector chip
    meters = rig.app.meters()
    tokens = sum(meters["seat_coins"])
    assert tokens == 12 * 84, tokens
    assert dev.erases <= j.log.head_n + 2
    rig.boot()
    assert rig.app.meters() == meters and "storage" not in rig.app.faults


def test_a_log_full_of_unacknowledged_events_refuses_the_next_and_boots_again():
    rig = RawRig("rjfull")
    rig.sectors = 2
    rig.boot({"outbox_limit": 5000})
    for _ in range(60):
        _coins(rig, 21)
        if "storage" in rig.app.faults:
            break
    assert "storage" in rig.app.faults and "flash full" in rig.app.fault_detail["storage"], rig.app.fault_detail
    meter = rig.app.state["meter"]
    rig.boot()
    assert rig.app.state["meter"] == meter and rig.app.journal.corrupt is None


def _poke(dev, n_phys, offset, data):
    f = open(dev.path, "r+b")
    f.seek(n_phys * L.SECTOR_BYTES + offset)
    f.write(data)
    f.close()


def _last_coin_place(j):
    u = j.unacked
    for i in range(len(u) - 1, -1, -1):
        seq, pos, slots = u.get(i)
        if j._record(i)[1] == L.K_COIN:
            return seq, pos // L.SLOTS, pos % L.SLOTS
    raise AssertionError("no coin record")


def test_a_coin_record_rewritten_with_a_valid_crc_freezes_the_journal():
    # An attacker with a programmer raises the stored meter and recomputes the CRC (the number
    # and place it covers are known): the replayed meter disagrees, never the stored one shown.
    rig = RawRig("rjforge")
    _coins(rig, 5)
    j = rig.app.journal
    dev = rig.board.log_device
    seq, n, slot = _last_coin_place(j)
    meter = rig.app.state["meter"]
    rec = dev.read(n % dev.sectors, slot * 16, 16)
    seat, ms, pe, meter_after = L.decode_coin(rec)
    body = L.encode_coin(seat, ms, pe, meter_after + 100000)
    forged = body + L.le(L.record_crc(seq, n, slot, body), 4)
    _poke(dev, n % dev.sectors, slot * 16, b"\xff" * 16)  # (not NOR: an attacker's rewrite)
    _poke(dev, n % dev.sectors, slot * 16, forged)
    rig.boot()
    assert "storage" in rig.app.faults and rig.app.journal.frozen, rig.app.faults
    assert rig.app.state["meter"] <= meter  # never the forged one


def test_a_flipped_bit_freezes_and_the_signed_repair_clears_it_with_the_meters_kept():
    rig = RawRig("rjflip", key=KEY)
    rig.board.switch = True
    assert rig.command("provision", {"key": KEY.hex()})["ok"] == 1
    rig.board.switch = False
    _coins(rig, 10)
    j = rig.app.journal
    dev = rig.board.log_device
    meter = rig.app.state["meter"]
    seq, n, slot = _last_coin_place(j)
    # A record in the middle (not the newest), one bit.
    u = j.unacked
    seq, pos, _slots = u.get(len(u) // 2)
    b = dev.read(pos // L.SLOTS % dev.sectors, (pos % L.SLOTS) * 16 + 3, 1)
    _poke(dev, pos // L.SLOTS % dev.sectors, (pos % L.SLOTS) * 16 + 3, bytes((b[0] ^ 0x10,)))
    rig.boot()
    j = rig.app.journal
    assert j.frozen and "storage" in rig.app.faults and "bad log record" in j.corrupt, j.corrupt
    assert rig.app.state["meter"] == meter  # the records after the bad one still count
    shown = dict(rig.app.state)
    rig.board.switch = True  # the service key switch: storage_repair is refused without it
    reply = rig.command("storage_repair", {"reason": "bit flip test"})
    assert reply["ok"] == 1, reply
    first, last = reply["skipped_from"], reply["skipped_to"]
    assert last >= seq and not rig.app.journal.frozen
    rig.board.switch = False
    rig.boot()
    j = rig.app.journal
    assert not j.frozen and "storage" not in rig.app.faults, rig.app.fault_detail
    for k in ("meter", "over", "res", "contrib", "c0", "c1"):
        assert rig.app.state[k] == shown[k], k
    assert j.next_seq > last  # numbering goes on past the skipped ones (after the boot's events)
    _coins(rig, 1)
    assert rig.app.state["meter"] == meter + 70


def test_an_event_the_compact_record_cannot_rebuild_is_written_whole():
    rig = RawRig("rjfull2")
    j = rig.app.journal
    state = rig.app.state
    from table import meter as M
    fields, patch = M.credit(state, rig.app.cfg, 0)
    event = {"t": proto.EVENT, "b": "sim-raw", "k": "coin", "ms": 5000, "seat": 0,
             "round": state["round"], "pe": 4990, "suppressed": 3, "p": patch}
    for k in fields:
        event[k] = fields[k]
    head = j.log.head_slot
    j.append(event)
    assert j.log.head_slot - head > 1  # FULL: the extra field is kept
    payload = json.loads(j.read_payload(j.unacked_count() - 1))
    assert payload["suppressed"] == 3


class _FailOnce:
    """The board's chip, refusing one program (a failing flash) when armed."""

    def __init__(self, dev):
        self.dev = dev
        self.armed = False

    def __getattr__(self, name):
        return getattr(self.dev, name)

    def program(self, sector, offset, data):
        if self.armed:
            self.armed = False
            raise OSError(5)
        return self.dev.program(sector, offset, data)


def test_a_repair_after_a_refused_write_starts_past_the_head_and_loses_no_event():
    # The head has moved sectors past where the boot's scan ended: the repair's new stretch must
    # start after the head, never over the sectors the unacknowledged events are in.
    rig = RawRig("rjrefused")
    rig.sectors = 8
    rig.boot()
    dev = _FailOnce(rig.board.log_device)
    rig.board.log_device = dev
    rig.app.journal.log.dev = dev
    _coins(rig, 7 * 30)  # more than a sector's worth of records since the boot
    j = rig.app.journal
    assert j.log.head_n > j.log.top_n, (j.log.head_n, j.log.top_n)
    unacked_before = j.unacked_count()
    refused = j.next_seq
    dev.armed = True
    rig.coin(2)
    rig.run_ms(300)
    assert j.frozen and "storage" in rig.app.faults
    assert j.next_seq == refused + 1  # the refused event's number is never used again
    meter = rig.app.state["meter"]
    head = j.log.head_n
    first_expected = j.next_seq  # the refused event's number counts as used
    first, last = j.repair(rig.app.state)
    # The new stretch starts in the sector right after the head; its numbers jump one sector's
    # worth of slots (and one) past the highest used.
    assert j.unacked.get(0)[1] // L.SLOTS == head + 1, (j.unacked.get(0), head)
    assert (first, last) == (first_expected, first_expected - 1 + L.SLOTS + 1), (first, last, first_expected)
    j.append({"t": proto.EVENT, "b": "sim-raw", "k": "storage_repaired", "ms": 1})
    rig.boot()
    j = rig.app.journal
    assert not j.frozen and rig.app.state["meter"] == meter
    assert j.unacked_count() >= unacked_before  # every unacknowledged event still there to send


def test_an_acknowledgement_record_the_flash_refuses_freezes_the_journal_until_a_boot():
    # The refused program may have left its slot torn: nothing may follow it before a boot's scan.
    rig = RawRig("rjackrefused")
    rig.boot()
    dev = _FailOnce(rig.board.log_device)
    rig.board.log_device = dev
    rig.app.journal.log.dev = dev
    _coins(rig, 7 * 10)
    j = rig.app.journal
    assert j.next_seq - 1 - j.logged_acked >= RJ.ACK_RECORD_EVENTS and not j.frozen
    dev.armed = True
    j.ack(j.next_seq - 1)
    assert j.frozen
    try:
        j.append({"t": proto.EVENT, "b": "sim-raw", "k": "remote", "ms": 1})
        raise AssertionError("appended after a refused write")
    except OSError:
        pass
    rig.boot()
    assert not rig.app.journal.frozen


def test_round_events_and_a_refused_second_token_take_a_slot_each_moment_and_rebuild_exactly():
    rig = RawRig("rjderived")
    _coins(rig, 7)  # a round: then lock, unlock, snapshot
    rig.coin(0)     # a round's token on seat 0...
    rig.run_ms(300)
    rig.coin(0)     # ...and a second one: refused, an extra_coin event
    rig.run_ms(300)
    j = rig.app.journal
    kinds = {}  # slots of each kind (a GROUP's events share one)
    places = {}
    for i in range(j.unacked_count()):
        seq, pos, _packed = j.unacked.get(i)
        places[pos] = j._record(i)[1]
    for kind in places.values():
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds.get(L.K_FULL) == 1, kinds  # the boot event only
    assert kinds.get(L.K_GROUP) == 2, kinds  # key + lock; key + unlock + closing snapshot
    assert kinds.get(L.K_DERIVED) == 2, kinds  # the boot's snapshot, extra_coin
    sent = dict((e["q"], e) for e in rig.events)
    assert any(e["k"] == "extra_coin" for e in sent.values())
    rig.boot()
    rig.events = []
    rig.seen = {}
    rig.hello()
    rig.run_ms(3000)
    again = dict((e["q"], e) for e in rig.events)
    for q in sent:
        if q in again:
            assert again[q] == sent[q], (again[q], sent[q])
    assert len([q for q in sent if q in again]) == len(sent)


def _journal(name, sectors=8):
    """A RawJournal of its own (no app): its littlefs files and its NOR chip, freshly loaded."""
    d = fresh_dir(name)
    j = RJ.RawJournal(NvFiles(d + "/nv"), SimNorFlash(d + "/rawlog.bin", sectors), "sim-raw")
    state, fresh = j.load(initial_state(config_mod.defaults()))
    assert fresh
    return j, state


def _reload(j):
    again = RJ.RawJournal(j.nv, j.log.dev, "sim-raw")
    state, fresh = again.load(initial_state(config_mod.defaults()))
    assert not fresh
    return again, state


def _key_event(ms, key="lock", state="OPEN"):
    return {"t": proto.EVENT, "b": "sim-raw", "ms": ms, "k": "key", "key": key, "state": state}


def _last_record(j):
    return j._record(j.unacked_count() - 1)


def test_a_checkpoint_is_wanted_once_4096_events_are_acknowledged_since_the_last_one():
    # So a boot replays at most ACK_CHECKPOINT_EVENTS (4096) acknowledged events.
    j, state = _journal("rjackck", 24)
    for i in range(100):
        j.append(_key_event(i))
    j.ack(100)
    j.checkpoint(state)
    assert not j.wants_ack_checkpoint()
    for i in range(4096):
        j.append(_key_event(1000 + i))
    for seq in range(200, 100 + 4096, 100):
        j.ack(seq)
        assert not j.wants_ack_checkpoint(), seq
    j.ack(100 + 4095)
    assert not j.wants_ack_checkpoint()
    j.ack(100 + 4096)
    assert j.wants_ack_checkpoint()
    j.checkpoint(state)
    assert not j.wants_ack_checkpoint()


# The DERIVED forms are part of the on-flash format: a record keeps its form number for good.
_KEYS = {"lock": 0, "unlock": 1, "jackpot": 2, "service": 3}
_STATE_NOS = {"OPEN": 0, "LOCKED": 1, "JACKPOT_PENDING": 2, "SERVICE": 3, "FAULT": 4}


def _form_bytes(e):
    """(form, parameters) of an event a DERIVED form stands for, as the format documents them."""
    if e["k"] == "key":
        return 0, bytes((_KEYS[e["key"]], _STATE_NOS[e["state"]]))
    if e["k"] == "state" and e["reason"] == "lock":
        return 1, b""
    if e["k"] == "state" and e["reason"] == "unlock":
        return 2, b""
    if e["k"] == "meters":
        return 3, bytes((len(e["seat_coins"]),))
    assert e["k"] in ("extra_coin", "late_coin"), e
    offset = 0xFFFF if e["pe"] is None else e["ms"] - e["pe"]
    return 4 if e["k"] == "extra_coin" else 5, bytes((e["seat"], offset & 0xFF, offset >> 8))


def test_key_lock_unlock_snapshot_extra_and_late_coin_are_derived_forms_0_to_5_alone_or_in_a_group_slot():
    # DERIVED: 0x70|form | ms | parameters, 0xFF to 7 bytes. GROUP (events of one moment):
    # 0x80|count | ms | (form, parameters) of each | 0xFF to 7 bytes.
    rig = RawRig("rjforms")
    rig.coin(0)
    rig.run_ms(300)
    rig.coin(0)  # a second token in the round: refused, extra_coin
    rig.run_ms(300)
    now = rig.board.now_ms()
    rig.app.key_pressed(now, "lock")     # key + lock: a GROUP of 2
    rig.app.key_pressed(now, "unlock")   # key + unlock + closing snapshot: a GROUP of 3
    rig.app.snapshot(now)                # alone: DERIVED
    rig.app.key_pressed(now, "jackpot")  # a key that does nothing when OPEN: alone
    rig.app.lock(now)                    # the host's lock command: no key, alone
    rig.coin(3)                          # a token after the lock: late_coin
    rig.run_ms(300)
    j = rig.app.journal
    sent = dict((e["q"], e) for e in rig.events)
    groups = {}
    firsts = set()
    for i in range(j.unacked_count()):
        seq, kind, body, sub = j._entry(i)
        e = sent[seq]
        if kind == L.K_GROUP:
            groups.setdefault(j.unacked.get(i)[1], []).append((sub, e, bytes(body)))
            continue
        if kind != L.K_DERIVED:
            assert e["k"] not in ("key", "extra_coin", "late_coin", "meters") and e.get("reason") not in ("lock", "unlock"), e
            continue
        assert len(body) == 12  # one slot: the body and its CRC
        form, params = _form_bytes(e)
        assert bytes(body) == bytes((0x70 | form,)) + L.le(e["ms"], 4) + params + b"\xff" * (7 - len(params)), (e, bytes(body))
        firsts.add(body[0])
    assert len(groups) == 2, groups
    grouped = []
    for members in groups.values():
        members.sort(key=lambda m: m[0])
        assert [m[0] for m in members] == list(range(len(members)))
        packed = b""
        for sub, e, body in members:
            form, params = _form_bytes(e)
            packed += bytes((form,)) + params
            grouped.append(form)
        ms = L.le(members[0][1]["ms"], 4)
        assert members[0][2] == bytes((0x80 | len(members),)) + ms + packed + b"\xff" * (7 - len(packed)), members
        firsts.add(members[0][2][0])
    assert firsts == set((0x70, 0x71, 0x73, 0x74, 0x75, 0x82, 0x83)), firsts
    assert sorted(grouped) == [0, 0, 1, 2, 3], grouped


def test_pulses_injected_on_a_locked_tables_acceptor_line_cost_one_slot_a_token():
    # A wear attack: a pulse generator on an inhibited acceptor's line, at the acceptors' full
    # rate. Each late token is journaled (the host's books show it) in one 16-byte slot, as a
    # credited token is: the flash's life at the maximum rate holds (a FULL record was 8 slots).
    rig = RawRig("rjlateflood")
    rig.app.key_pressed(rig.board.now_ms(), "lock")
    rig.run_ms(10)
    j = rig.app.journal
    start = j.unacked_count()
    for i in range(20):
        rig.coin(i % 7)
        rig.run_ms(500)
    late = set(e["q"] for e in rig.kinds("late_coin"))
    assert len(late) == 20, len(late)
    slots = 0
    for i in range(start, j.unacked_count()):
        seq, pos, packed = j.unacked.get(i)
        if seq in late:
            assert j._record(i)[1] == L.K_DERIVED and packed == 1, (seq, j._record(i)[1], packed)
            slots += packed
    assert slots == 20  # one 16-byte slot each


def test_a_lock_makes_eligible_only_the_seats_with_a_token():
    state = {"base": "OPEN", "meter": 5000, "round": 4, "t1": 1, "t3": 2, "t5": 0}
    event = RJ.derived_event(RJ.F_LOCK, b"\xff" * 7, 10, state, "b")
    assert event["p"]["elig"] == (1 << 1) | (1 << 3)  # a seat the state names no token for: none
    assert event["p"]["frozen"] == 5000 and event["to"] == "LOCKED"


def _appended_whole(j, event):
    """Appends; asserts the record is FULL and the payload the event as given."""
    j.append(event)
    seq, kind, body = _last_record(j)
    assert kind == L.K_FULL, (event, kind)
    assert json.loads(j.read_payload(j.unacked_count() - 1)) == event


def test_events_a_derived_or_coin_record_cannot_hold_exactly_are_written_whole():
    j, state = _journal("rjwhole")
    _appended_whole(j, _key_event(1 << 32))  # ms past 4 bytes
    _appended_whole(j, _key_event(1, "reset"))  # a key this build's records have no number for
    _appended_whole(j, _key_event(2, "lock", "BOOTING"))  # a state they have no number for
    e = _key_event(3)
    del e["key"]
    _appended_whole(j, e)  # no key named at all
    extra = {"t": proto.EVENT, "b": "sim-raw", "ms": 5000, "k": "extra_coin", "round": state["round"]}
    for seat, pe in ((256, 4990), (1, 5001), (1, 5000 - 0x10000), (1, 5000 - 0xFFFF)):
        e = dict(extra)
        e["seat"], e["pe"] = seat, pe  # a seat past a byte; a pulse end after ms, or 65.5 s before
        _appended_whole(j, e)
    # A late token whose table state is not the one the state before it says.
    _appended_whole(j, dict(extra, k="late_coin", seat=1, pe=4990, state="LOCKED"))
    # A coin event of the COIN record's field count whose fields are not its fields.
    odd = {"t": proto.EVENT, "b": "sim-raw", "k": "coin", "ms": 5500, "seat": 0, "round": 1, "suppressed": 2,
           "inc": 70, "to_meter": 70, "to_over": 0, "reserve": 0, "p": {"meter": 70}}
    _appended_whole(j, odd)
    meters = {"t": proto.EVENT, "b": "sim-raw", "ms": 6000, "k": "meters"}
    for k in RJ._METER_KEYS:
        meters[k] = state[k]
    for seats in (256, 9):  # more than a byte counts; more seats than the state has
        e = dict(meters)
        e["seat_coins"] = [0] * seats
        e["seat_tokens"] = [0] * seats
        _appended_whole(j, e)
    # A coin whose meter is not the one the state before it gives (credit recomputes another).
    from table import meter as M
    fields, patch = M.credit(state, state["cfg"], 2)
    coin = {"t": proto.EVENT, "b": "sim-raw", "k": "coin", "ms": 7000, "seat": 2, "round": state["round"],
            "pe": 6990}
    for k in fields:
        coin[k] = fields[k]
    # Its patch right but a field not (a round the state is not in): the record would rebuild
    # another event.
    coin["p"] = dict(patch)
    coin["round"] = state["round"] + 5
    _appended_whole(j, dict(coin))
    coin["round"] = state["round"]
    patch = dict(patch)
    patch["meter"] += 1
    coin["p"] = patch
    _appended_whole(j, coin)
    j2, _s = _reload(j)
    assert j2.corrupt is None and j2.unacked_count() == j.unacked_count()


def test_a_repeated_acknowledgement_writes_nothing():
    # A 2-sector chip full of events; the ACK record cannot be written (its sector is not
    # covered yet): the host acknowledging the same number again must not write a checkpoint.
    j, state = _journal("rjackagain", 2)
    for i in range(L.SLOTS - 1):
        j.append(_key_event(i))
    assert j.ack(100) == 100 and j.logged_acked == 0
    gen = j.gen
    assert j.ack(100) == 0
    assert j.gen == gen and j.acked_seq == 100


def test_a_fresh_chip_with_unrelated_files_starts_a_log_but_a_torn_checkpoint_is_a_fault():
    d = fresh_dir("rjnames")
    nv = NvFiles(d + "/nv")
    nv.write("events.log", b"not a journal")
    nv.write("jingle.txt", b"nor this")
    j = RJ.RawJournal(nv, SimNorFlash(d + "/rawlog.bin", 4), "sim-raw")
    state, fresh = j.load(initial_state(config_mod.defaults()))
    assert fresh and j.corrupt is None
    for name in ("rl_a", "rl_b", "ck_a", "ck_b", "j3.log"):
        d = fresh_dir("rjnames-" + name)
        nv = NvFiles(d + "/nv")
        nv.write(name, b"torn")
        j = RJ.RawJournal(nv, SimNorFlash(d + "/rawlog.bin", 4), "sim-raw")
        mptest.raises(StorageError, j.load, initial_state(config_mod.defaults()))


def test_after_a_bad_record_later_records_this_build_cannot_decode_are_passed_over():
    # A record of a DERIVED form this build does not know (written by a newer firmware before a
    # downgrade) and a key record of a board up for 23 hours (ms past 2^26), after a flipped
    # bit: the boot freezes with the newest meter the later records give, never crashes.
    j, state = _journal("rjlater")
    for i in range(5):
        j.append({"t": proto.EVENT, "b": "sim-raw", "k": "note", "ms": i, "p": {"meter": 1000 + i}})
    bad_seq, pos, _slots = j.unacked.get(1)
    j.log.append(bytes((L.K_DERIVED | 0x0F,)) + L.le(100, 4) + b"\xff" * 7, True, j.ck_n)
    j.next_seq += 1  # (the newer firmware's event took a number)
    j.append(_key_event(0x05000000))
    lock = RJ.derived_event(RJ.F_LOCK, b"\xff" * 7, 0x1234, j._state, "sim-raw")
    j.append(lock)
    assert _last_record(j)[1] == L.K_DERIVED
    j.append({"t": proto.EVENT, "b": "sim-raw", "k": "note", "ms": 200, "p": {"meter": 4321}})
    last = j.next_seq - 1
    dev = j.log.dev
    _poke(dev, pos // L.SLOTS % dev.sectors, (pos % L.SLOTS) * 16 + 6, b"\x00")
    j2, state2 = _reload(j)
    assert j2.frozen and "bad log record" in j2.corrupt, j2.corrupt
    assert state2["meter"] == 4321 and j2.next_seq == last + 1
    assert state2["base"] == "LOCKED"  # the lock's patch, rebuilt from its DERIVED record


def test_a_repair_starts_past_a_sector_whose_header_checks_but_does_not_chain():
    j, state = _journal("rjbadchain", 8)
    for i in range(L.SLOTS + 20):  # one-slot records, the last one setting the meter
        j.append(_key_event(i))
    j.append({"t": proto.EVENT, "b": "sim-raw", "k": "note", "ms": 1, "p": {"meter": 777}})
    dev = j.log.dev
    # Sector 1's header rewritten to say a later first number, its CRC made to check.
    import binascii
    head = bytearray(dev.read(1, 0, 12))
    head[5:9] = L.le(L.SLOTS + 5, 4)
    _poke(dev, 1, 0, bytes(head) + L.le(binascii.crc32(bytes(head), binascii.crc32(L.le(1, 2))) & 0xFFFFFFFF, 4))
    j2, state2 = _reload(j)
    assert j2.frozen and "header says" in j2.corrupt, j2.corrupt
    assert state2["meter"] == 777  # the records of sector 1 still count
    first, last = j2.repair(state2)
    assert j2.unacked.get(0)[1] // L.SLOTS == 2  # sector 1's records are kept where they are
    j2.append({"t": proto.EVENT, "b": "sim-raw", "k": "storage_repaired", "ms": 1})
    j3, state3 = _reload(j2)
    assert not j3.frozen and state3["meter"] == 777


def test_a_board_up_for_a_day_replays_its_key_records():
    # ms 0x05000000 (23 hours of uptime): its top byte is part of ms, never a parameter.
    j, state = _journal("rjlatekey")
    j.append(_key_event(0x05000000, "service", "LOCKED"))
    j.append({"t": proto.EVENT, "b": "sim-raw", "k": "note", "ms": 0x05000001, "p": {"meter": 99}})
    j2, state2 = _reload(j)
    assert not j2.frozen and j2.corrupt is None and state2["meter"] == 99
    again = json.loads(j2.read_payload(0))
    assert again["ms"] == 0x05000000 and again["key"] == "service" and again["state"] == "LOCKED", again


def test_a_second_repair_before_any_event_skips_past_the_first_ones_jump():
    # The repair's own event found the flash full (the app freezes the journal again): a second
    # repair takes the first one's jump as the highest number used and skips a sector's worth
    # past it, no more.
    j, state = _journal("rjrepairtwice")
    for i in range(20):
        j.append({"t": proto.EVENT, "b": "sim-raw", "k": "note", "ms": i, "p": {"meter": 100 + i}})
    _seq, pos, _slots = j.unacked.get(10)
    dev = j.log.dev
    _poke(dev, pos // L.SLOTS % dev.sectors, (pos % L.SLOTS) * 16 + 6, b"\x00")
    j2, state2 = _reload(j)
    assert j2.frozen
    first, last = j2.repair(state2)
    assert (first, last) == (21, 20 + L.SLOTS + 1)
    j2.frozen = True
    assert j2.repair(state2) == (last + 1, last + L.SLOTS + 1)
    j2.append({"t": proto.EVENT, "b": "sim-raw", "k": "storage_repaired", "ms": 1})
    j3, state3 = _reload(j2)
    assert not j3.frozen and state3["meter"] == 119 and j3.next_seq == last + L.SLOTS + 3


def _note(ms, meter):
    return {"t": proto.EVENT, "b": "sim-raw", "k": "note", "ms": ms, "p": {"meter": meter}}


def _repaired_then_five_events(name):
    """A journal repaired after a bit flip (its log: the copies, the repair's JUMP, the repair's
    own event, whose checkpoint follows), then five events setting the meter to 500..504.
    -> (journal, the repair's event's number, the JUMP's (n, slot))."""
    j, state = _journal(name)
    for i in range(20):
        j.append(_note(i, 100 + i))
    _seq, pos, _slots = j.unacked.get(10)
    dev = j.log.dev
    _poke(dev, pos // L.SLOTS % dev.sectors, (pos % L.SLOTS) * 16 + 6, b"\x00")
    j2, state2 = _reload(j)
    assert j2.frozen and state2["meter"] == 119
    first, last = j2.repair(state2)
    repaired = j2.append({"t": proto.EVENT, "b": "sim-raw", "k": "storage_repaired", "ms": 1})
    assert repaired == last + 1
    for i in range(5):
        j2.append(_note(100 + i, 500 + i))
    _seq, pos, _slots = j2.unacked.get(j2.unacked.index_at_or_after(repaired))
    jump = pos - 1  # right before the repair's event
    assert dev.read(jump // L.SLOTS % dev.sectors, (jump % L.SLOTS) * 16, 1) == bytes((L.K_JUMP,))
    return j2, repaired, (jump // L.SLOTS, jump % L.SLOTS)


def test_a_repairs_jump_that_no_longer_checks_loses_no_number_and_no_value_after_it():
    """With a bit flipped in the repair's JUMP, the events after it are numbered past anything a
    scan looks at from the spot (the JUMP skips 258 numbers or more). The checkpoint written
    after the repair's event says how far the numbers had gone: the boot freezes (never takes
    the JUMP and what follows for a tear), the meter those events set is shown, and none of
    their numbers is used again."""
    j, repaired, (n, slot) = _repaired_then_five_events("rjbadjump")
    used = j.next_seq - 1
    dev = j.log.dev
    _poke(dev, n % dev.sectors, slot * 16 + 6, b"\x00")
    j2, state2 = _reload(j)
    assert j2.frozen and "sector %d slot %d" % (n, slot) in j2.corrupt, j2.corrupt
    assert state2["meter"] == 504, state2["meter"]
    assert j2.next_seq == used + 1, (j2.next_seq, used)
    assert j2.repair(state2)[0] == used + 1


def test_a_bad_record_right_after_a_repairs_jump_numbers_on_from_the_jump():
    """The repair's own event damaged (a bit flipped): the log stands at the number the JUMP set
    (all four of its bytes), the five events after it still count (meter 504), and numbering
    goes on after them."""
    j, repaired, (n, slot) = _repaired_then_five_events("rjbadafterjump")
    used = j.next_seq - 1
    dev = j.log.dev
    _poke(dev, n % dev.sectors, (slot + 1) * 16 + 6, b"\x00")
    j2, state2 = _reload(j)
    assert j2.frozen and "sector %d slot %d" % (n, slot + 1) in j2.corrupt, j2.corrupt
    assert state2["meter"] == 504 and j2.next_seq == used + 1, (state2["meter"], j2.next_seq, used)


def _frozen_at_the_sixth_with_events_acknowledged_to(name, acked):
    """Ten events (meter 101..110) with 1..acked acknowledged at a checkpoint, then a bit flipped
    in event 6: the journal as it boots, frozen."""
    j, state = _journal(name)
    for i in range(5):
        j.append(_note(i, 101 + i))
    j.ack(acked)
    j.checkpoint(state)
    for i in range(5, 10):
        j.append(_note(i, 101 + i))
    _seq, pos, _slots = j.unacked.get(5 - acked)
    assert _seq == 6
    dev = j.log.dev
    _poke(dev, pos // L.SLOTS % dev.sectors, (pos % L.SLOTS) * 16 + 6, b"\x00")
    j2, state2 = _reload(j)
    assert j2.frozen and state2["meter"] == 110
    return j2, state2


def test_a_repair_copies_a_lone_unacknowledged_event_and_the_board_boots_with_it():
    """One event unacknowledged before the bad one: the repair copies it with its number, and
    the board boots with it still to deliver, rebuilt as it was."""
    j, state = _frozen_at_the_sixth_with_events_acknowledged_to("rjlonecopy", 4)
    assert j.unacked_count() == 1  # event 5
    first, last = j.repair(state)
    assert first == 11  # past event 10, found after the bad one
    j.append({"t": proto.EVENT, "b": "sim-raw", "k": "storage_repaired", "ms": 1})
    j2, state2 = _reload(j)
    assert not j2.frozen and state2["meter"] == 110
    assert [j2.unacked.seq(i) for i in range(j2.unacked_count())] == [5, last + 1]
    assert json.loads(j2.read_payload(0)) == dict(_note(4, 105), q=5)


def test_an_acknowledgement_of_a_number_a_repair_skipped_releases_nothing_after_them():
    """The host may hold numbers of the bad stretch (sent before the flip) and acknowledge one:
    the repair's own event, numbered past the skipped ones, is still to be delivered."""
    j, state = _frozen_at_the_sixth_with_events_acknowledged_to("rjackskipped", 5)
    assert j.unacked_count() == 0
    first, last = j.repair(state)
    repaired = j.append({"t": proto.EVENT, "b": "sim-raw", "k": "storage_repaired", "ms": 1})
    assert j.ack(8) == 0 and j.unacked_count() == 1 and j.unacked.seq(0) == repaired
    assert j.ack(repaired) == 1 and j.unacked_count() == 0


def test_a_repair_cut_before_its_event_boots_frozen_as_before_with_the_meters_shown():
    """Until the repair's own event and the checkpoint after it are on flash, the old checkpoint
    is the newest: the board boots frozen as before, showing the same meters, and the repair is
    done again. So the new stretch starts past every sector holding records, also past one
    whose header no longer checks (a bit flipped in it) with records behind it."""
    j, state = _journal("rjrepaircut")
    for i in range(L.SLOTS + 20):  # sector 0 full, sector 1 begun
        j.append(_key_event(i))
    j.append(_note(1, 777))
    dev = j.log.dev
    _poke(dev, 1, 6, bytes((dev.read(1, 6, 1)[0] ^ 0x01,)))  # sector 1's header
    j2, state2 = _reload(j)
    why = j2.corrupt
    assert j2.frozen and "sector 1 slot 0" in why and state2["meter"] == 777, why
    j2.repair(state2)  # ...and the power goes before the repair's event is journaled
    j3, state3 = _reload(j2)
    assert j3.frozen and j3.corrupt == why and state3["meter"] == 777, (j3.corrupt, state3["meter"])


def test_an_extra_coin_with_no_pulse_end_is_one_derived_slot():
    """Offset 0xFFFF stands for no pulse end (as in a COIN record): such a refused second token
    is one 16-byte slot too, and it reads back with "pe": null."""
    j, state = _journal("rjextranone")
    e = {"t": proto.EVENT, "b": "sim-raw", "ms": 5000, "k": "extra_coin", "seat": 2, "round": state["round"],
         "pe": None}
    j.append(e)
    seq, kind, body = _last_record(j)
    assert kind == L.K_DERIVED and bytes(body) == b"\x74" + L.le(5000, 4) + b"\x02\xff\xff" + b"\xff" * 4
    assert json.loads(j.read_payload(j.unacked_count() - 1)) == dict(e, q=seq)


def test_a_record_that_checks_but_names_a_key_this_build_lacks_freezes_the_journal():
    # A DERIVED key record with a valid CRC naming key 9 (a forger's, or a newer firmware's with
    # more keys before a downgrade): the journal freezes as corrupt at it (a storage fault the
    # signed repair clears), never crashes the boot; one more such record after it is passed
    # over, and the records after both still count.
    j, state = _journal("rjbadkey")
    j.append({"t": proto.EVENT, "b": "sim-raw", "k": "note", "ms": 1, "p": {"meter": 10}})
    bad = bytes((L.K_DERIVED | RJ.F_KEY,)) + L.le(6, 4) + b"\x09\x00" + b"\xff" * 5
    _n, slot, seq = j.log.append(bad, True, j.ck_n)
    j.log.append(bad, True, j.ck_n)
    j.next_seq += 2  # (the numbers those records took)
    j.append({"t": proto.EVENT, "b": "sim-raw", "k": "note", "ms": 7, "p": {"meter": 20}})
    j2, state2 = _reload(j)
    assert j2.frozen and "sector 0 slot %d" % slot in j2.corrupt, j2.corrupt
    assert state2["meter"] == 20 and j2.next_seq == seq + 3


def test_an_extra_coin_whose_pulse_ended_300_ms_before_is_one_derived_slot():
    j, state = _journal("rjextra300")
    e = {"t": proto.EVENT, "b": "sim-raw", "ms": 5000, "k": "extra_coin", "seat": 2, "round": state["round"],
         "pe": 4700}
    j.append(e)
    seq, kind, body = _last_record(j)
    assert kind == L.K_DERIVED and bytes(body) == b"\x74" + L.le(5000, 4) + b"\x02\x2c\x01" + b"\xff" * 4
    assert json.loads(j.read_payload(j.unacked_count() - 1)) == e


def test_an_acknowledgement_of_a_number_not_yet_used_acknowledges_only_what_exists():
    j, state = _journal("rjackahead")
    for i in range(3):
        j.append(_key_event(i))
    assert j.ack(4) == 3 and j.acked_seq == 3
    j.append(_key_event(3))  # number 4
    assert j.ack(4) == 1 and j.unacked_count() == 0


def test_acknowledged_events_survive_a_boot_a_checkpoint_and_another_boot():
    j, state = _journal("rjackboots")
    for i in range(70):
        j.append({"t": proto.EVENT, "b": "sim-raw", "k": "note", "ms": i, "p": {"x%d" % i: i}})
    j.ack(RJ.ACK_RECORD_EVENTS)  # an ACK record: events 1..64 acknowledged
    j2, state2 = _reload(j)
    assert j2.acked_seq == RJ.ACK_RECORD_EVENTS
    j2.checkpoint(state2)  # the state at the acknowledged point
    j3, state3 = _reload(j2)
    for i in range(70):
        assert state3.get("x%d" % i) == i, i


def test_a_repair_the_flash_refuses_leaves_the_journal_frozen_with_its_numbers():
    j, state = _journal("rjrepairfails")
    for i in range(10):
        j.append({"t": proto.EVENT, "b": "sim-raw", "k": "note", "ms": i, "p": {"meter": i}})
    _seq, pos, _slots = j.unacked.get(4)
    dev = j.log.dev
    _poke(dev, pos // L.SLOTS % dev.sectors, (pos % L.SLOTS) * 16 + 6, b"\x00")
    j2, state2 = _reload(j)
    assert j2.frozen
    before = j2.next_seq
    failing = _FailOnce(dev)
    failing.armed = True
    j2.log.dev = failing
    mptest.raises(OSError, j2.repair, state2)
    assert j2.frozen and j2.next_seq == before


def test_a_chip_holding_a_log_with_no_checkpoint_left_is_a_storage_fault_not_a_fresh_start():
    # Both checkpoint files gone (a littlefs that lost them): starting from zero would roll the
    # meters back and number events again. The board keeps the log for a technician and takes
    # nothing.
    rig = RawRig("rjnocheckpoint")
    _coins(rig, 3)
    for name in ("rl_a", "rl_b"):
        rig.board.nv.remove(name)
    rig.boot()
    app = rig.app
    assert app.journal is None and "storage" in app.faults, app.fault_detail
    assert app.fault_detail["storage"] == "journal present but no valid checkpoint", app.fault_detail
    assert not app.seat_accepting(0)
    assert L.RawLog(rig.board.log_device).holds_a_log()  # not formatted over


def _add(j, state, e):
    """Journal an event and apply its patch, as the app does."""
    j.append(e)
    for k in e.get("p") or {}:
        state[k] = e["p"][k]


def _to_the_sectors_end(j):
    """Key records (a slot each, no patch) up to the last slot of the head's sector. After a bad
    record a boot tries every number a slot could hold in each erased slot to its sector's end:
    with none left, a test of what follows a bad record stays quick."""
    i = 0
    while j.log.head_slot < L.SLOTS:
        j.append(_key_event(50000 + i))
        i += 1


def _damage(j, index):
    """One bit flipped in the record of unacknowledged event `index`: it no longer checks.
    Returns its (sector, slot)."""
    _seq, pos, _packed = j.unacked.get(index)
    _flip_at(j.log.dev, pos)
    return pos // L.SLOTS, pos % L.SLOTS


def _flip_at(dev, pos):
    """One bit of the record at log position pos flipped (bit rot)."""
    phys, offset = pos // L.SLOTS % dev.sectors, (pos % L.SLOTS) * 16 + 3
    _poke(dev, phys, offset, bytes((dev.read(phys, offset, 1)[0] ^ 0x10,)))


def test_a_whole_record_whose_event_names_another_number_than_its_place_freezes_the_journal():
    # A FULL record that checks (a forger's, with the CRC recomputed) but whose event says
    # number 999 where the log gives it 2: corrupt, and its meter is never shown.
    j, state = _journal("rjfullnumber")
    _add(j, state, _note(1, 10))
    forged = {"k": "note", "p": {"meter": 5000}, "q": 999}
    _n, slot, seq = j.log.append(L.encode_full(json.dumps(forged).encode()), True, j.ck_n)
    assert seq == 2
    j.next_seq += 1  # (the number that record took)
    _add(j, state, _note(3, 20))
    _to_the_sectors_end(j)
    j2, state2 = _reload(j)
    assert j2.frozen and "sector 0 slot %d" % slot in j2.corrupt and "numbered 999" in j2.corrupt, j2.corrupt
    assert state2["meter"] == 20 and j2.next_seq == j.next_seq


def _coin_event(state, seat, ms):
    """A credited token's event as the app journals it (a COIN record holds it whole)."""
    from table import meter as M
    fields, patch = M.credit(state, state["cfg"], seat)
    e = {"t": proto.EVENT, "b": "sim-raw", "k": "coin", "ms": ms, "seat": seat, "round": state["round"],
         "pe": ms - 10, "p": patch}
    for k in fields:
        e[k] = fields[k]
    return e


def test_after_a_bad_record_a_coin_whose_meter_no_longer_follows_shows_the_meter_it_stored():
    # Three tokens, the second's record rotten: from the state before it the third recomputes
    # to one token less than it stored. The board shows the meter the third record holds, the
    # newest word on the meter, never a rollback.
    j, state = _journal("rjcoinafterbad")
    for seat in range(3):
        _add(j, state, _coin_event(state, seat, 3000 + seat))
        assert _last_record(j)[1] == L.K_COIN
    meter = state["meter"]
    _to_the_sectors_end(j)
    n, slot = _damage(j, 1)  # the second token's record
    j2, state2 = _reload(j)
    assert j2.frozen and "sector %d slot %d" % (n, slot) in j2.corrupt, j2.corrupt
    assert state2["meter"] == meter, (state2["meter"], meter)
    assert j2.next_seq == j.next_seq


def test_after_a_bad_record_an_acknowledgement_record_takes_no_number_and_the_events_after_it_count():
    j, state = _journal("rjackafterbad")
    _add(j, state, _note(1, 100))
    j.append(_key_event(2))
    _seq, pos, _packed = j.unacked.get(1)
    for i in range(RJ.ACK_RECORD_EVENTS):
        j.append(_key_event(10 + i))
    j.ack(j.next_seq - 1)
    assert j.logged_acked == j.next_seq - 1  # an ACK record, after the key record that rots below
    _add(j, state, _note(3, 300))
    _to_the_sectors_end(j)
    n, slot = pos // L.SLOTS, pos % L.SLOTS
    _flip_at(j.log.dev, pos)
    j2, state2 = _reload(j)
    assert j2.frozen and "sector %d slot %d" % (n, slot) in j2.corrupt, j2.corrupt
    assert state2["meter"] == 300 and j2.next_seq == j.next_seq, (state2["meter"], j2.next_seq, j.next_seq)


def test_coin_events_a_coin_record_would_rebuild_otherwise_are_written_whole():
    # A COIN record keeps a token's seat, ms, pulse end and meter; replay rebuilds the rest for
    # this board from the state before it. An event it would rebuild otherwise goes whole.
    j, state = _journal("rjcoinwhole")
    coin = _coin_event(state, 1, 5000)
    j.append(dict(coin))
    assert _last_record(j)[1] == L.K_COIN  # (as it is: the compact record)
    _appended_whole(j, dict(coin, b="sim-other"))  # another board's id
    _appended_whole(j, dict(coin, ms=1 << 32, pe=(1 << 32) - 10))  # ms past 4 bytes: up 49.7 days
    _appended_whole(j, dict(coin, p=dict(coin["p"], award=None)))  # a patch setting more than the token
    j2, _s = _reload(j)
    assert j2.corrupt is None and j2.unacked_count() == j.unacked_count() == 4


def test_an_event_too_large_for_one_record_is_refused_and_takes_no_number():
    j, state = _journal("rjtoolarge")
    _add(j, state, _note(1, 10))
    head = (j.log.head_n, j.log.head_slot)
    seq = j.next_seq
    big = dict(_note(2, 20), text="x" * (L.MAX_PAYLOAD_BYTES + 1))
    exc = mptest.raises(OSError, j.append, big)
    assert exc.args[0] == "event too large for one log record", exc.args
    assert (j.log.head_n, j.log.head_slot) == head and j.next_seq == seq and j.unacked_count() == 1
    assert j.append(_note(3, 30)) == seq  # the next event takes the number
    j2, state2 = _reload(j)
    assert not j2.frozen and state2["meter"] == 30
    assert [j2.unacked.seq(i) for i in range(j2.unacked_count())] == [1, 2]


def test_a_group_the_flash_refuses_gives_every_key_its_value_from_before_the_group():
    # A lock and an unlock of one moment in one group: both set base, elig, paid and pays. The
    # refused group leaves each key as it was before the group (not as the lock left it), and a
    # key the state did not have (elig, in a state from before eligibility was kept) not there.
    j, state = _journal("rjgrouprestore")
    del state["elig"]
    before = dict(state)
    dev = _FailOnce(j.log.dev)
    j.log.dev = dev
    first = j.next_seq
    j.begin_group()
    for form in (RJ.F_LOCK, RJ.F_UNLOCK):
        e = RJ.derived_event(form, b"\xff" * 7, 10, state, "sim-raw")
        _add(j, state, e)
    assert state["round"] == before["round"] + 1 and "elig" in state
    dev.armed = True
    mptest.raises(OSError, j.end_group)
    assert state == before and "elig" not in state, state
    assert j.lost_in_group == 2 and j.frozen and j.next_seq == first + 2


def _frozen_after_a_bad_second_record(name):
    """A note setting the meter to 101, a key record that then rots, a note setting 103 and
    x = 7, the sector filled: the journal as it boots, frozen, showing 103."""
    j, state = _journal(name)
    _add(j, state, _note(1, 101))
    j.append(_key_event(2))
    _add(j, state, {"t": proto.EVENT, "b": "sim-raw", "k": "note", "ms": 3, "p": {"meter": 103, "x": 7}})
    _to_the_sectors_end(j)
    _damage(j, 1)
    j2, state2 = _reload(j)
    assert j2.frozen and state2["meter"] == 103 and state2["x"] == 7
    return j2, state2


def test_the_event_right_after_a_repair_keeps_its_own_value_of_a_key_the_repair_also_sets():
    # The repair hands the state the board shows (meter 103, x 7) to the next event's patch; a
    # value that event sets itself is newer and stays.
    j, state = _frozen_after_a_bad_second_record("rjfixoverridden")
    j.repair(state)
    after = {"t": proto.EVENT, "b": "sim-raw", "k": "storage_repaired", "ms": 4, "p": {"meter": 999}}
    _add(j, state, after)
    assert after["p"] == {"meter": 999, "x": 7}, after["p"]
    j2, state2 = _reload(j)
    assert not j2.frozen and state2["meter"] == 999 and state2["x"] == 7


def test_a_repair_cut_before_its_event_and_done_again_starts_past_the_first_attempts_sector():
    j, state = _frozen_after_a_bad_second_record("rjrepairagain")
    why = j.corrupt
    skipped = j.repair(state)
    assert j.unacked.get(0)[1] // L.SLOTS == 1  # the first attempt's stretch: sector 1
    # ...the power goes before the repair's event: the board boots frozen as before.
    j2, state2 = _reload(j)
    assert j2.frozen and j2.corrupt == why and state2["meter"] == 103
    assert j2.log.read_header(1) is not None  # the first attempt's sector, its header whole
    assert j2.repair(state2) == skipped
    assert j2.unacked.get(0)[1] // L.SLOTS == 2  # past it, never over it
    repaired = j2.append({"t": proto.EVENT, "b": "sim-raw", "k": "storage_repaired", "ms": 5})
    j3, state3 = _reload(j2)
    assert not j3.frozen and state3["meter"] == 103 and state3["x"] == 7
    assert [j3.unacked.seq(i) for i in range(j3.unacked_count())] == [1, repaired]
    assert json.loads(j3.read_payload(0)) == dict(_note(1, 101), q=1)


def test_a_second_repair_copies_the_events_on_both_sides_of_the_first_repairs_jump_with_their_numbers():
    # Nothing acknowledged across two repairs: the second copies event 1, the first repair's own
    # event (numbered past its JUMP) and the one after it, each with its number, a JUMP between.
    j, state = _frozen_after_a_bad_second_record("rjrepairtwice2")
    j.repair(state)
    repaired = j.append({"t": proto.EVENT, "b": "sim-raw", "k": "storage_repaired", "ms": 4})
    _add(j, state, _note(10, 500))
    j.append(_key_event(11))
    _add(j, state, _note(12, 502))
    _to_the_sectors_end(j)
    sent = [j.read_payload(i) for i in range(3)]
    assert [json.loads(p)["q"] for p in sent] == [1, repaired, repaired + 1]
    _damage(j, 3)  # the key record
    j2, state2 = _reload(j)
    assert j2.frozen and state2["meter"] == 502
    assert [j2.unacked.seq(i) for i in range(j2.unacked_count())] == [1, repaired, repaired + 1]
    j2.repair(state2)
    second = j2.append({"t": proto.EVENT, "b": "sim-raw", "k": "storage_repaired", "ms": 20})
    j3, state3 = _reload(j2)
    assert not j3.frozen and state3["meter"] == 502 and state3["x"] == 7
    assert [j3.unacked.seq(i) for i in range(j3.unacked_count())] == [1, repaired, repaired + 1, second]
    assert [j3.read_payload(i) for i in range(3)] == sent


if __name__ == "__main__":
    mptest.run(globals())
