"""Paying a linked table's round (tablectl.awards.pay_linked_jackpot, docs/POOL.md): the real
firmware (table.app on the virtual board, in-process on CPython, its frames signed with the real
protocol) joined to a floor pool on a real PostgreSQL that holds the board's table key, so every
token, the jackpot statement and each award the pool takes is checked against the board's MAC.

Rulebook 000 rule 3.1: "A player wins a progressive jackpot award if the player has made the
optional wager and holds a hand having a value of flush or better"; rule 9.3: the royal flush takes
the progressive. What the host refuses here it refuses before the pool locks anything or the board
is sent an award; what the pool does not pay (a hand the pool's rules leave to the table) the
table's house pays as a fixed award, never from a meter.
"""
import os
import sys

import pytest

from conftest import FIRMWARE, ROOT
from table import protocol as proto
from tablectl.awards import pay_linked_jackpot
from tablectl.errors import TablectlError
from tablectl.keys import KeyStore
from tablectl.pool.store import PoolStore

from poolkit import admin, make_pool, pg_server, pg_url, pool_keys  # noqa: F401 (fixtures)

KEY = bytes(range(80, 112))
LOCK, UNLOCK, JACKPOT = 0, 1, 2
ROYAL = "As Ks Qs Js Ts"
SF = "9c 8c 7c 6c 5c"
FLUSH = "2h 5h 9h Jh Kh"
NOTHING = "2c 3d 4h 5s 7c"


class LinkedTable:
    """A keyed virtual board linked to pool `floor`, the host end keeping each event's exact bytes
    and MAC as the service's ledger does ({q, raw, mac}: what the pool checks)."""

    def __init__(self, store):
        from simkit import Rig
        self.rig = Rig("linked-awards", key=KEY)
        self.store = store
        self.signed = {}
        feed = self.rig.host.feed

        def keep(data):
            frames = feed(data)
            for f in frames:
                if f.message.get("t") == proto.EVENT:
                    self.signed[f.message["q"]] = {"q": f.message["q"], "raw": f.payload.decode(),
                                                   "mac": f.mac.hex() if f.mac else None}
            return frames
        self.rig.host.feed = keep
        self.rig.board.switch = True
        assert self.rig.command("provision", {"key": KEY.hex()})["ok"] == 1
        self.rig.board.switch = False
        assert self.rig.command("linked", {"pool": "floor", "meter_cents": 10000})["faults"] == []
        self.board = "sim-test"  # the virtual board's id (simkit.Rig)
        self.sent = []  # the names of the commands the award path sent
        self.pool_reachable = True

    def command(self, name, args, command_id=None):
        """command(name, args, command_id=None) as `tablectl serve` gives the award path."""
        cid = command_id if command_id is not None else 200000 + len(self.sent)
        self.sent.append(name)
        self.rig.send(proto.command(cid, name, args), self.rig.key)
        self.rig.run_ms(20)
        reply = self.rig.replies.pop(cid)
        if not reply.get("ok"):
            raise TablectlError("board refused %s: %s (%s)" % (name, reply.get("msg"), reply.get("err")))
        return reply

    def events(self, kind):
        return [self.signed[e["q"]] for e in self.rig.events if e["k"] == kind]

    def play_round(self, seats):
        """A token on each seat (0-based), the round locked and the jackpot key turned; the tokens
        go to the pool with their signed bytes."""
        for seat in seats:
            self.rig.coin(seat)
        self.rig.run_ms(400)
        self.rig.press(LOCK)
        self.rig.press(JACKPOT)
        taken = self.store.record_tokens([(self.board, self.events("coin"))])[0]
        assert isinstance(taken, dict), taken

    def declare(self, round_no, hands_0):
        statement = [s for s in self.events("state") if '"JACKPOT_PENDING"' in s["raw"]][-1]
        return {"hits": self.store.hit_hands(self.board, round_no, hands_0, statement=statement)}

    def confirm(self, lock_nos):
        """The board's awards of pool locks go to the pool (unless the pool is out of reach);
        returns the locks the pool holds as paid, as the service's pool link does."""
        if self.pool_reachable:
            for award in self.events("award"):
                if '"lock"' in award["raw"]:
                    self.store.paid(self.board, award)
        unpaid = {u["lock_no"] for u in self.store.unpaid("floor")}
        return {n for n in lock_nos if n not in unpaid}

    def pay(self, hands):
        from tablectl.awards import parse_hands
        seats = sorted(hands)
        return pay_linked_jackpot(self.command, self.board, parse_hands(seats, [hands[s] for s in seats]),
                                  self.declare, self.confirm)


@pytest.fixture
def table(monkeypatch, pg_url, pool_keys, tmp_path):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "tests", "firmware"))
    monkeypatch.syspath_prepend(FIRMWARE)
    for name in ("simkit", "boards", "boards.sim"):  # the firmware's own modules, not a cached host copy
        sys.modules.pop(name, None)
    table_keys = KeyStore(str(tmp_path / "tables"))
    store = PoolStore(pg_url, pool_keys, table_keys=table_keys)
    t = LinkedTable(store)
    table_keys.set_table_key(t.board, KEY)
    make_pool(store, members=((t.board, "caribbean_draw"),), bench=False,
              params={"seed_cents": 10000, "increment_cents": 70, "ceiling_cents": 10000000, "reserve_cents": 5,
                      "sf_percent": 1})
    yield t
    store.close()


def test_a_royal_is_paid_from_the_pool_by_the_boards_award_naming_its_lock(table):
    table.play_round([0, 1])
    result = table.pay({1: ROYAL})
    [pay] = result["payments"]
    assert result["linked"] and result["pool"] == "floor" and result["round"] == 1
    assert (pay["seat"], pay["lock_no"], pay["pool"], pay["house_cents"], pay["meter_cents"]) == (1, 1, "floor", 0, 0)
    assert pay["amount_cents"] == pay["pool_cents"] == 10000 + 2 * 70
    assert pay["pool_confirmed"] is True and pay["repeat"] is False
    [award] = table.rig.kinds("award")
    assert (award["seat"], award["lock"], award["amount"]) == (0, 1, 10140)
    assert table.store.status("floor")["meter_cents"] == 10000 and table.store.reconcile()["ok"]


def test_a_hand_the_pool_leaves_to_the_table_is_a_fixed_award_its_house_pays(table):
    """A flush is no pool hand (the pool pays royals and straight flushes, rule 9.3): the table's
    own options price it, a fixed amount from its house, beside the royal the pool pays."""
    table.play_round([0, 1, 2])
    result = table.pay({1: ROYAL, 3: FLUSH})
    by_seat = {p["seat"]: p for p in result["payments"]}
    assert by_seat[1]["lock_no"] == 1 and by_seat[1]["house_cents"] == 0
    flush = by_seat[3]
    assert "lock_no" not in flush and flush["meter_cents"] == 0 and not flush["reset"]
    assert flush["house_cents"] == flush["amount_cents"] > 0
    assert [(a["seat"], a.get("lock")) for a in table.rig.kinds("award")] == [(0, 1), (2, None)]
    assert table.store.status("floor")["hits"] == 1


@pytest.mark.parametrize("hands, error", [
    ({8: ROYAL}, "seat 8 does not exist on this table (1-7)"),
    ({3: ROYAL}, "seat 3 had no progressive token when round 1 locked: no award"),
    ({1: ROYAL, 2: NOTHING}, "seat 2's hand 2c 3d 4h 5s 7c (seven high, 7-5-4-3-2) is not a progressive hand "
                             "(flush or better)"),
])
def test_an_award_the_rules_do_not_allow_is_refused_before_the_pool_locks_anything(table, hands, error):
    table.play_round([0, 1])
    table.sent.clear()
    with pytest.raises(TablectlError) as exc:
        table.pay(hands)
    assert str(exc.value) == error
    assert table.sent == ["status"] and table.store.status("floor")["hits"] == 0


def test_no_linked_award_before_the_dealers_jackpot_key(table):
    table.rig.coin(0)
    table.rig.run_ms(400)
    table.rig.press(LOCK)  # locked, the jackpot key not turned
    with pytest.raises(TablectlError, match="the table is LOCKED: a jackpot is paid only after the dealer turns"):
        table.pay({1: ROYAL})
    assert table.store.status("floor")["hits"] == 0


def test_a_straight_flush_the_pool_leaves_to_a_table_that_would_pay_it_from_a_meter_is_refused(table):
    """A pool whose straight-flush option is off leaves the hand to the table; a table whose option
    is 10 % of its meter would pay it from a meter a linked table does not have (the board refuses
    an award from its own meter while linked): the host says which option to set instead."""
    version = table.store.status("floor")["version"]
    admin(table.store, "service", "floor", {"enter": True})
    admin(table.store, "params", "floor", {"changes": {"sf_percent": 0}})
    admin(table.store, "service", "floor", {"enter": False})
    assert table.store.status("floor")["version"] > version
    table.play_round([0])
    with pytest.raises(TablectlError) as exc:
        table.pay({1: SF})
    assert str(exc.value) == ("seat 1's straight flush, nine high is not a pool hand at this pool, and the table's "
                              "options pay it from a meter: set the table's straight-flush option as the pool's "
                              "(tablectl config); nothing was paid: the pool holds no lock of this round")
    assert table.rig.kinds("award") == [] and table.store.status("floor")["hits"] == 0


def test_two_royals_of_one_round_are_each_paid_by_an_award_naming_that_seats_lock(table):
    """Rulebook 000 rule 9.3's royal at two seats of one table: the pool divides its meter between
    the two locks; each award names its own lock, which the pool checks against the seat."""
    table.play_round([0, 1])
    result = table.pay({1: ROYAL, 2: "Ah Kh Qh Jh Th"})
    assert [(p["seat"], p["lock_no"], p["pool_confirmed"]) for p in result["payments"]] == [(1, 1, True), (2, 2, True)]
    assert [(a["seat"], a["lock"]) for a in table.rig.kinds("award")] == [(0, 1), (1, 2)]
    assert sum(p["amount_cents"] for p in result["payments"]) == 10000 + 2 * 70
    assert table.store.unpaid("floor") == [] and table.store.reconcile()["ok"]


def test_an_award_the_pool_has_not_heard_of_yet_is_said_unconfirmed_not_confirmed(table):
    """The board paid and journaled the award; the pool out of reach has not taken the lock as
    paid: the answer says so (the service's pool link forwards the award when the pool is back)."""
    table.play_round([0])
    table.pool_reachable = False
    [pay] = table.pay({1: ROYAL})["payments"]
    assert pay["pool_confirmed"] is False and table.rig.kinds("award")[0]["lock"] == 1
    assert [u["lock_no"] for u in table.store.unpaid("floor")] == [1]
    table.pool_reachable = True
    assert table.confirm([1]) == {1}


def test_a_round_the_table_cannot_pay_whole_is_refused_before_the_board_pays_any_of_it(table):
    """The pool's royal and a straight flush the pool leaves to a table that would pay it from a
    meter: refused before the board pays anything, the pool's lock kept for the round (not half a
    round paid and an error); paid whole when the round is paid again with the same hands."""
    admin(table.store, "service", "floor", {"enter": True})
    admin(table.store, "params", "floor", {"changes": {"sf_percent": 0}})
    admin(table.store, "service", "floor", {"enter": False})
    table.play_round([0, 1])
    with pytest.raises(TablectlError) as exc:
        table.pay({1: ROYAL, 2: SF})
    assert str(exc.value) == ("seat 2's straight flush, nine high is not a pool hand at this pool, and the table's "
                              "options pay it from a meter: set the table's straight-flush option as the pool's "
                              "(tablectl config); nothing was paid: the pool keeps lock #1 for round 1 until "
                              "`tablectl jackpot` is run again with the same hands")
    assert table.rig.kinds("award") == []
    assert [(u["lock_no"], u["seat"]) for u in table.store.unpaid("floor")] == [(1, 0)]
    with pytest.raises(TablectlError, match="nothing was paid: the pool keeps lock #1 for round 1"):
        table.pay({1: ROYAL, 2: SF})  # again, the table's option unchanged: the same lock, still nothing paid
    assert table.rig.kinds("award") == [] and table.store.status("floor")["hits"] == 1
