"""A table that feeds a linked pool (docs/POOL.md) on MicroPython: the board shows the pool's amount,
and when its host says the pool is lost the progressive is off until the pool is heard again.

Rulebook 000, rule 3.1: "Multiple Caribbean Stud Poker games and/or Caribbean Draw Poker games may be
linked together with a common progressive jackpot." The linked pool's rule: "If a table loses the pool for
longer than a configured time it inhibits progressive coin-in and shows it"."""
import mptest
from table import meter
from table import protocol as proto
from simkit import FullNv, Rig


def test_the_display_shows_the_linked_amount_and_the_own_meter_still_counts():
    rig = Rig("linked")
    own = rig.app.state["meter"]
    reply = rig.command("linked", {"meter_cents": 12345678, "pool": "floor"})
    assert reply["ok"] == 1 and reply["faults"] == [], reply
    rig.run_ms(20)
    assert rig.board.display[0] == "123456.78", rig.board.display
    rig.coin(1)
    rig.run_ms(600)
    assert rig.app.state["meter"] == own + 70  # the board journals every token itself
    assert len(rig.kinds("coin")) == 1


def _provisioned_rig(name):
    rig = Rig(name, key=b"k" * 32)
    rig.board.switch = True
    assert rig.command("provision", {"key": ("6b" * 32)})["ok"] == 1
    rig.board.switch = False
    return rig


def test_pool_lost_inhibits_every_acceptor_shows_it_and_an_amount_restores_play():
    rig = _provisioned_rig("poollost")  # signed frames, as a keyed table's host sends them
    rig.command("linked", {"meter_cents": 500000, "pool": "floor"})
    reply = rig.command("linked", {"lost": True})
    assert reply["faults"] == ["pool"], reply
    rig.run_ms(20)
    assert all(rig.board.inhibit)
    assert rig.board.display[0].strip() == "POOL OFF", rig.board.display
    rig.coin(0)
    rig.run_ms(600)
    assert rig.kinds("coin") == [] and len(rig.kinds("refused_coin")) == 1
    assert [e["code"] for e in rig.kinds("fault")] == ["pool"]
    assert rig.command("clear")["cleared"] == []  # a technician cannot play on without the pool
    rig.command("linked", {"meter_cents": 500070})
    rig.run_ms(20)
    assert "pool" not in rig.app.faults and not rig.board.inhibit[0]
    assert [e["code"] for e in rig.kinds("fault_cleared")] == ["pool"]
    rig.coin(0)
    rig.run_ms(600)
    assert len(rig.kinds("coin")) == 1


def test_a_bad_linked_amount_is_refused_and_changes_nothing():
    rig = Rig("linkedbad")
    rig.run_ms(20)
    before = rig.board.display[0]
    for bad in (-1, 10 ** 10, "5", 1.5, True):
        reply = rig.command("linked", {"meter_cents": bad, "pool": "floor"})
        assert reply["ok"] == 0 and reply["err"] == "BAD_ARGS", reply
    for bad in ("", "x" * 65, 7):
        reply = rig.command("linked", {"meter_cents": 100, "pool": bad})
        assert reply["ok"] == 0 and reply["err"] == "BAD_ARGS", reply
    rig.run_ms(20)
    assert rig.board.display[0] == before
    assert rig.app.state.get("pool") is None and rig.kinds("linked") == []  # nothing joined half-way


LOCK, UNLOCK, JACKPOT = 0, 1, 2
SEED = 10000000


def _linked_jackpot(name, seats=(1,)):
    """A provisioned board linked to pool "floor", seats with a token, locked, the jackpot key turned."""
    rig = _provisioned_rig(name)
    assert rig.command("linked", {"meter_cents": 2500000, "pool": "floor"}, signed=True)["ok"] == 1
    for seat in seats:
        rig.coin(seat)
    rig.run_ms(300)
    rig.press(LOCK)
    rig.press(JACKPOT)
    return rig


def _award(rig, **args):
    args.setdefault("round", rig.app.state["round"])
    return rig.command("award", args, signed=True)


def test_joining_a_pool_is_journaled_and_survives_a_power_cut():
    rig = _provisioned_rig("linkjoin")
    assert rig.command("linked", {"meter_cents": 100, "pool": "floor"})["ok"] == 1
    assert [e["pool"] for e in rig.kinds("linked")] == ["floor"]
    assert rig.command("linked", {"meter_cents": 170})["ok"] == 1  # linked: the amount alone
    assert len(rig.kinds("linked")) == 1  # an amount is a display update, not a ledger row
    rig.boot()
    assert rig.app.state["pool"] == "floor"
    rig.run_ms(20)
    assert rig.board.display[0].strip() == "POOL", rig.board.display  # the pool's amount not heard yet
    status = rig.command("status")
    assert status["pool"] == "floor" and status["pool_meter"] is None


def test_a_board_that_never_joined_takes_no_amount_alone():
    rig = Rig("linknojoin")
    reply = rig.command("linked", {"meter_cents": 100})
    assert reply["ok"] == 0 and reply["err"] == "STATE", reply


def test_a_linked_board_joins_no_second_pool_and_leaves_only_with_the_service_switch():
    rig = _provisioned_rig("linkleave")
    assert rig.command("linked", {"meter_cents": 100, "pool": "floor"})["ok"] == 1
    reply = rig.command("linked", {"meter_cents": 100, "pool": "other"})
    assert reply["ok"] == 0 and "leave it first" in reply["msg"], reply
    reply = rig.command("linked", {"leave": True})
    assert reply["ok"] == 0 and reply["err"] == "NEEDS_SERVICE_SWITCH", reply
    assert rig.app.state["pool"] == "floor"
    rig.board.switch = True
    assert rig.command("linked", {"leave": True})["ok"] == 1
    rig.board.switch = False
    assert rig.app.state["pool"] is None
    assert [e["pool"] for e in rig.kinds("linked")] == ["floor", None]


def test_naming_the_pool_the_board_is_in_again_is_the_amount_alone():
    # The host names the pool with every amount it sends: the same pool again is no new join
    # (no ledger row), only what the display shows.
    rig = _provisioned_rig("linksame")
    assert rig.command("linked", {"meter_cents": 100, "pool": "floor"})["ok"] == 1
    reply = rig.command("linked", {"meter_cents": 300, "pool": "floor"})
    assert reply["ok"] == 1 and reply["faults"] == [], reply
    assert [e["pool"] for e in rig.kinds("linked")] == ["floor"]
    assert rig.app.state["pool"] == "floor" and rig.app.linked_cents == 300
    rig.run_ms(20)
    assert rig.board.display[0].strip() == "3.00", rig.board.display


def test_leaving_when_in_no_pool_records_nothing_and_ends_a_pool_fault():
    rig = _provisioned_rig("linkleavenone")
    assert rig.command("linked", {"lost": True})["faults"] == ["pool"]
    rig.board.switch = True
    reply = rig.command("linked", {"leave": True})
    rig.board.switch = False
    assert reply["ok"] == 1 and reply["pool"] is None and reply["faults"] == [], reply
    assert rig.kinds("linked") == [] and rig.app.state.get("pool") is None  # no ledger row
    assert [e["code"] for e in rig.kinds("fault_cleared")] == ["pool"]


def test_a_join_or_a_leave_the_flash_cannot_record_is_refused_and_changes_nothing():
    # docs/RELIABILITY.md: the table is in a pool once the journal says so, and out of it the same
    # way; a flash that refuses the record leaves it where it was, with the storage fault.
    rig = _provisioned_rig("linkjoinfull")
    rig.app.journal.nv = FullNv(rig.app.journal.nv)
    reply = rig.command("linked", {"meter_cents": 100, "pool": "floor"})
    assert reply["ok"] == 0 and reply["err"] == proto.E_STORAGE, reply
    assert reply["msg"] == "joining the pool could not be recorded", reply
    assert rig.app.state.get("pool") is None and rig.app.linked_cents is None and rig.kinds("linked") == []
    assert "storage" in rig.app.faults
    rig.run_ms(20)
    assert rig.board.display[0].startswith("FAULT"), rig.board.display  # never the pool's amount
    rig = _provisioned_rig("linkleavefull")
    assert rig.command("linked", {"meter_cents": 100, "pool": "floor"})["ok"] == 1
    rig.app.journal.nv = FullNv(rig.app.journal.nv)
    rig.board.switch = True
    reply = rig.command("linked", {"leave": True})
    assert reply["ok"] == 0 and reply["err"] == proto.E_STORAGE, reply
    assert reply["msg"] == "leaving the pool could not be recorded", reply
    assert rig.app.state["pool"] == "floor" and rig.app.linked_cents == 100
    assert [e["pool"] for e in rig.kinds("linked")] == ["floor"] and "storage" in rig.app.faults


def test_the_jackpot_key_signs_the_statement_a_pool_pays_by():
    """docs/POOL.md: a pool hit needs the board's own statement, made when the dealer's jackpot key
    opened JACKPOT_PENDING: its board, round, eligible seats and a number never reused."""
    rig = _linked_jackpot("linkstatement", seats=(1, 4))
    opened = [e for e in rig.kinds("state") if e["to"] == "JACKPOT_PENDING"]
    assert len(opened) == 1
    st = opened[0]
    assert st["elig"] == (1 << 1) | (1 << 4) and st["pool"] == "floor" and st["round"] == rig.app.state["round"]
    assert st["b"] == "sim-test" and st["q"] >= 1


def test_a_statement_from_a_state_that_predates_the_eligible_seats_names_no_seat():
    """A checkpoint written before the state kept this round's eligible seats has no "elig": the
    statement then names no seat (a pool pays no seat the board cannot vouch for), never seat 1."""
    rig = _provisioned_rig("linknoelig")
    assert rig.command("linked", {"meter_cents": 2500000, "pool": "floor"}, signed=True)["ok"] == 1
    rig.press(LOCK)
    del rig.app.state["elig"]
    rig.press(JACKPOT)
    opened = [e for e in rig.kinds("state") if e["to"] == "JACKPOT_PENDING"]
    assert len(opened) == 1 and opened[0]["elig"] == 0, opened


def test_a_linked_board_refuses_every_award_from_its_own_meter():
    """Attack 1 on the floor (docs/SECURITY.md): on a linked table the board's private meter paid $100,002.10 and the pool paid
    again. Now the pool is the table's only progressive."""
    rig = _linked_jackpot("linkownmeter")
    before = dict(rig.app.state)
    for args in ({"seat": 1, "amount_cents": before["meter"], "meter_cents": before["meter"], "reset": True},
                 {"seat": 1, "amount_cents": 1000, "meter_cents": 1000},
                 {"seat": 1, "amount_cents": 0, "reset": True}):
        reply = _award(rig, **args)
        assert reply["ok"] == 0 and reply["err"] == "STATE" and "pool floor" in reply["msg"], reply
    assert rig.kinds("award") == []
    assert (rig.app.state["meter"], rig.app.state["paid"]) == (before["meter"], 0)


def test_a_pool_award_is_paid_once_journaled_with_its_lock_and_leaves_the_own_meter_alone():
    rig = _linked_jackpot("linkpoolaward")
    meter = rig.app.state["meter"]
    reply = _award(rig, seat=1, amount_cents=2500070, pool_cents=2500070, lock=7, hand="royal flush")
    assert reply["ok"] == 1, reply
    award = rig.kinds("award")[0]
    assert (award["pool_cents"], award["lock"], award["meter_cents"], award["amount"]) == (2500070, 7, 0, 2500070)
    assert rig.app.state["meter"] == meter and rig.app.state["paid"] == 2
    again = _award(rig, seat=1, amount_cents=2500070, pool_cents=2500070, lock=8, hand="royal flush")
    assert again["ok"] == 0 and again["err"] == "ALREADY_PAID", again
    # a pool award names its lock; an unlinked table takes none
    rig2 = _linked_jackpot("linkpoolnolock")
    reply = _award(rig2, seat=1, amount_cents=100, pool_cents=100)
    assert reply["ok"] == 0 and reply["err"] == "BAD_ARGS", reply


def test_a_pool_awards_arguments_are_checked_before_anything_is_paid():
    """What the host asks the board to pay from the pool is checked like every award argument:
    the pool's part a whole number from 0 to the amount, its lock a whole number from 1, and the
    part neither the pool nor the own meter pays within what the house may pay."""
    rig = _linked_jackpot("linkpoolargs", seats=(1, 2, 3))
    before = dict(rig.app.state)
    for args in ({"pool_cents": 1.5, "lock": 1}, {"pool_cents": -1, "lock": 1}, {"pool_cents": True, "lock": 1},
                 {"pool_cents": 1001, "lock": 1},  # more than the amount
                 {"pool_cents": 1000, "lock": 0}, {"pool_cents": 1000, "lock": 1.5},
                 {"pool_cents": 1000, "lock": "7"}, {"pool_cents": 1000, "lock": -3}):
        reply = _award(rig, seat=1, amount_cents=1000, **args)
        assert reply["ok"] == 0 and reply["err"] == "BAD_ARGS", (args, reply)
    assert rig.kinds("award") == [] and rig.app.state["paid"] == before["paid"] == 0
    # the house's part (amount less the pool's) is held to the schedule, as on an unlinked table
    house = meter.house_limit(rig.app.cfg, rig.app.state["frozen"])
    reply = _award(rig, seat=1, amount_cents=5000 + house + 1, pool_cents=5000, lock=1)
    assert reply["ok"] == 0 and reply["err"] == "BAD_ARGS", reply
    assert "(%d) is above what the schedule lets the house pay (%d)" % (house + 1, house) in reply["msg"], reply
    # the edges are paid: the smallest lock; all of the house's limit beside the pool's part;
    # a fixed award the house pays alone on a linked table (the pool's part 0, named or not)
    assert _award(rig, seat=1, amount_cents=5000 + house, pool_cents=5000, lock=1)["ok"] == 1
    assert _award(rig, seat=2, amount_cents=2500, pool_cents=0)["ok"] == 1
    assert _award(rig, seat=3, amount_cents=2500)["ok"] == 1
    awards = rig.kinds("award")
    assert [(a["seat"], a["amount"], a.get("pool_cents"), a.get("lock")) for a in awards] == [
        (1, 5000 + house, 5000, 1), (2, 2500, None, None), (3, 2500, None, None)]
    assert rig.app.state["meter"] == before["meter"]  # the own meter paid nothing


def test_an_unlinked_board_takes_no_pool_award():
    rig = _provisioned_rig("unlinkedpool")
    rig.coin(1)
    rig.run_ms(300)
    rig.press(LOCK)
    rig.press(JACKPOT)
    reply = _award(rig, seat=1, amount_cents=100, pool_cents=100, lock=1)
    assert reply["ok"] == 0 and reply["err"] == "STATE", reply


if __name__ == "__main__":
    mptest.run(globals())
