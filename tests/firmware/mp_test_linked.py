"""A table that feeds a linked pool (docs/POOL.md) on MicroPython: the board shows the pool's amount,
and when its host says the pool is lost the progressive is off until the pool is heard again.

Rulebook 000, rule 3.1: "Multiple Caribbean Stud Poker games and/or Caribbean Draw Poker games may be
linked together with a common progressive jackpot." The linked pool's rule: "If a table loses the pool for
longer than a configured time it inhibits progressive coin-in and shows it"."""
import mptest
from simkit import Rig


def test_the_display_shows_the_linked_amount_and_the_own_meter_still_counts():
    rig = Rig("linked")
    own = rig.app.state["meter"]
    reply = rig.command("linked", {"meter_cents": 12345678})
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
    rig.command("linked", {"meter_cents": 500000})
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
        reply = rig.command("linked", {"meter_cents": bad})
        assert reply["ok"] == 0 and reply["err"] == "BAD_ARGS", reply
    rig.run_ms(20)
    assert rig.board.display[0] == before


if __name__ == "__main__":
    mptest.run(globals())
