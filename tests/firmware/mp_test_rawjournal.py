"""The journal on the raw flash log (firmware/table/rawjournal.py), on MicroPython: coin events in
16-byte records rebuilt for the link, acknowledgements and the outbox across reboots, the wrap's
checkpoints, a full log, and the attacks a 16-byte record invites (a record rewritten with a valid
CRC, a bit flipped), with the signed repair's way out."""
import json

import mptest
from boards.sim import SimBoard
from boards.simflash import SimNorFlash
from simkit import Rig, fresh_dir
from table import protocol as proto
from table import rawlog as L
from table import rawjournal as RJ
from table.app import TableApp
from table.journal import Journal


KEY = bytes(range(32))


class RawRig(Rig):
    """A Rig whose board journals on a NOR chip of `sectors` sectors, whatever the environment."""
    sectors = 8

    def boot(self, config=None):
        self.session = None
        self.board = SimBoard(self.dir, "sim-raw", 8, 8, "pio")
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
    dev.armed = True
    rig.coin(2)
    rig.run_ms(300)
    assert j.frozen and "storage" in rig.app.faults
    meter = rig.app.state["meter"]
    head = j.log.head_n
    first, last = j.repair(rig.app.state)
    assert j.log.head_n > head
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


def test_round_events_and_a_refused_second_token_are_one_slot_each_and_rebuild_exactly():
    rig = RawRig("rjderived")
    _coins(rig, 7)  # a round: then lock, unlock, snapshot
    rig.coin(0)     # a round's token on seat 0...
    rig.run_ms(300)
    rig.coin(0)     # ...and a second one: refused, an extra_coin event
    rig.run_ms(300)
    j = rig.app.journal
    kinds = {}
    for i in range(j.unacked_count()):
        seq, kind, body = j._record(i)
        kinds[kind] = kinds.get(kind, 0) + 1
    assert kinds.get(L.K_FULL) == 1, kinds  # the boot event only
    assert kinds.get(L.K_DERIVED) >= 6, kinds  # 2 keys, lock, unlock, snapshot, extra_coin
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


if __name__ == "__main__":
    mptest.run(globals())
