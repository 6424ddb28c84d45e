"""Bet-spot reports (table/app.py _report_spots, table/rawjournal.py F_SPOT), on MicroPython.

A bet spot's sensor is debounced to one change per debounce_ms (30 ms): a chattering sensor, or
a hand waved over the circles, made up to 33 `spot` events a second a spot, each journaled as a
FULL record of six 16-byte slots on the raw log, against the one slot a credited token costs.
The Pico's flash life (docs/BENCHMARKS.md, pico_rawwear) counts slots. These tests hold the
reports to what the host needs (every spot's state, promptly in play) at a bounded cost: one
slot for up to three changes of one turn, out of the wear budget (WEAR_BUDGET_SLOTS at once
and one a WEAR_REFILL_MS after that, shared with the other inputs an outsider can repeat), a
chattering spot never starving the others."""
import json

import mptest
from table import app as app_mod
from table import rawlog as L
from table import rawjournal as RJ
from mp_test_rawjournal import RawRig

ANTE, BET, BONUS = 0, 1, 2


def _bit(seat, spot):
    return 1 << (seat * 3 + spot)


def _spot_events(rig, since_q=0):
    return [e for e in rig.events if e["k"] == "spot" and e["q"] >= since_q]


def _slots_since(j, first_q):
    """Log slots the unacknowledged events from number first_q take (a GROUP's counted once)."""
    slots = {}
    for i in range(j.unacked_count()):
        seq, pos, packed = j.unacked.get(i)
        if seq >= first_q:
            slots[pos] = packed & 0xFF
    return sum(slots.values())


def test_a_covered_spot_is_one_slot_and_the_host_hears_it_as_before():
    rig = RawRig("spotone")
    rig.run_ms(10)
    j = rig.app.journal
    first_q = j.next_seq
    rig.board.spots = _bit(2, BET)
    rig.run_ms(10)
    got = _spot_events(rig, first_q)
    assert [(e["seat"], e["spot"], e["on"]) for e in got] == [(2, "bet", True)], got
    assert _slots_since(j, first_q) == 1
    assert j._record(j.unacked_count() - 1)[1] == L.K_DERIVED
    # After a power cut the board resends it from its one slot, field for field.
    rig.boot()
    rig.run_ms(10)
    resent = [json.loads(rig.app.journal.read_payload(i)) for i in range(rig.app.journal.unacked_count())]
    assert got[0] in resent, (got[0], resent)


def test_the_changes_of_one_turn_share_a_slot_three_to_a_slot():
    # Seven players put their antes down within one 2 ms turn: seven events, three slots.
    rig = RawRig("spotturn")
    rig.run_ms(10)
    j = rig.app.journal
    first_q = j.next_seq
    mask = 0
    for seat in range(7):
        mask |= _bit(seat, ANTE)
    rig.board.spots = mask
    rig.run_ms(10)
    got = _spot_events(rig, first_q)
    assert sorted(e["seat"] for e in got) == list(range(7)) and all(e["on"] and e["spot"] == "ante" for e in got)
    assert [e["q"] for e in got] == list(range(first_q, first_q + 7))
    assert _slots_since(j, first_q) == 3, _slots_since(j, first_q)
    rig.boot()
    rig.run_ms(10)
    resent = [json.loads(rig.app.journal.read_payload(i)) for i in range(rig.app.journal.unacked_count())]
    for e in got:
        assert e in resent, e


def test_a_round_of_play_is_reported_at_once_every_change():
    # Ante and bet down at every seat, then up again at the settlement: 28 changes, none held
    # back, each reported in the turn it was seen.
    rig = RawRig("spotplay")
    rig.run_ms(10)
    first_q = rig.app.journal.next_seq
    mask = 0
    for seat in range(7):
        for spot in (ANTE, BET):
            mask |= _bit(seat, spot)
            rig.board.spots = mask
            rig.run_ms(200)
            assert rig.app.spots_reported == mask, (rig.app.spots_reported, mask)
    for seat in range(7):
        for spot in (ANTE, BET):
            mask &= ~_bit(seat, spot)
            rig.board.spots = mask
            rig.run_ms(200)
            assert rig.app.spots_reported == mask
    assert len(_spot_events(rig, first_q)) == 28


def test_a_chattering_sensor_costs_at_most_the_budget_and_its_last_state_is_reported():
    # Seat 0's ante flips every 40 ms for 60 s (1,500 debounced changes). The host hears the
    # budget's 512 reports and then one a second, not 1,500; the log slots follow; and when the
    # sensor settles the host hears its final state.
    rig = RawRig("spotchatter")
    rig.sectors = 64
    rig.boot()
    rig.run_ms(10)
    j = rig.app.journal
    first_q = j.next_seq
    writes = j.writes
    on = False
    for _ in range(1500):
        on = not on
        rig.board.spots = _bit(0, ANTE) if on else 0
        rig.run_ms(40, 4)
        rig.ack_all()
    reports = len(_spot_events(rig, first_q))
    limit = app_mod.WEAR_BUDGET_SLOTS + 60000 // app_mod.WEAR_REFILL_MS + 1
    assert reports <= limit, (reports, limit)
    assert reports >= app_mod.WEAR_BUDGET_SLOTS, reports
    assert j.writes - writes <= limit + 2, (j.writes - writes, limit)  # + the ACK records
    assert rig.app.wear_budget == 0
    rig.board.spots = _bit(0, ANTE)  # it settles covered
    rig.run_ms(2 * app_mod.WEAR_REFILL_MS)
    assert rig.app.spots_reported == _bit(0, ANTE)
    last = _spot_events(rig, first_q)[-1]
    assert (last["seat"], last["spot"], last["on"]) == (0, "ante", True), last


def test_a_chattering_sensor_does_not_starve_the_other_spots():
    # With the budget spent on seat 0's chattering ante, seat 6 puts a bet down: it is reported
    # within two refills, not after the chatter stops.
    rig = RawRig("spotstarve")
    rig.sectors = 32
    rig.boot()
    rig.run_ms(10)
    on = False
    while rig.app.wear_budget > 0:
        on = not on
        rig.board.spots = _bit(0, ANTE) if on else 0
        rig.run_ms(40, 4)
        rig.ack_all()
    first_q = rig.app.journal.next_seq
    bet = _bit(6, BET)
    waited_ms = 0
    while not rig.app.spots_reported & bet:
        on = not on
        rig.board.spots = (_bit(0, ANTE) if on else 0) | bet
        rig.run_ms(40, 4)
        rig.ack_all()
        waited_ms += 40
        assert waited_ms <= 2 * app_mod.WEAR_REFILL_MS + 100, waited_ms
    rig.board.spots = bet
    rig.run_ms(50)
    got = [(e["seat"], e["spot"], e["on"]) for e in _spot_events(rig, first_q)]
    assert (6, "bet", True) in got, got


def test_a_spot_record_that_checks_but_names_no_spot_freezes_the_journal():
    # A DERIVED spot record with a valid CRC whose spot field is 3 (ante, bet, bonus are 0-2):
    # this build never writes it, so boot does not guess; the journal freezes (storage fault).
    rig = RawRig("spotforged")
    rig.run_ms(10)
    j = rig.app.journal
    body = bytes((L.K_DERIVED | RJ.F_SPOT,)) + L.le(rig.board.now_ms(), 4) + bytes(((1 << 3) | (3 << 1) | 1,)) + b"\xff" * 6
    j.log.append(body, True, j.ck_n)
    rig.boot()
    assert rig.app.journal is None or rig.app.journal.frozen or "storage" in rig.app.faults, rig.app.faults


def test_a_spot_event_the_form_cannot_hold_is_written_whole():
    # An `on` that is 1 rather than true, or a seat past the byte: not rebuilt as sent, so FULL.
    rig = RawRig("spotwhole")
    rig.run_ms(10)
    j = rig.app.journal
    for fields in ({"seat": 1, "spot": "ante", "on": 1}, {"seat": 40, "spot": "bet", "on": True},
                   {"seat": 1, "spot": "side", "on": True}):
        q = rig.app.record(rig.board.now_ms(), "spot", fields)
        assert q is not None
        assert j._record(j.unacked_count() - 1)[1] == L.K_FULL, fields
        assert json.loads(j.read_payload(j.unacked_count() - 1))["seat"] == fields["seat"]


if __name__ == "__main__":
    mptest.run(globals())
