"""The vocabulary (table/vocab.py, table/schema.py) is what the board really says: a session that goes through a
round, a jackpot, service, corrections, jams, glitches and refusals records only events the
vocabulary names, each with exactly its fields. A field renamed in the board and not in the
vocabulary (which the host's reconcile and reports read) fails here, on the bench."""
import mptest
from simkit import Rig, coin_edges
from table import commands, schema, vocab
from table import protocol as proto

KEY = b"v" * 32


def _keyed_rig(name):
    rig = Rig(name, key=KEY)
    rig.board.switch = True
    assert rig.command("provision", {"key": KEY.hex()})["ok"] == 1
    return rig


def test_every_event_of_a_busy_session_is_in_the_vocabulary():
    rig = _keyed_rig("vocab-session")
    rig.coin(0)
    rig.coin(2)
    rig.run_ms(600)
    rig.board.spots |= 1  # seat 1's ante covered
    rig.run_ms(100)
    rig.board.feed_edges(coin_edges(1, 1, 2, 50, 0)[0])  # a 2 ms glitch
    rig.run_ms(1200)
    rig.board.feed_edges(coin_edges(3, 1, 50, 50, 0)[0][:1])  # held down: a jam
    rig.run_ms(2000)
    rig.press(0)  # lock
    rig.coin(4)   # a late token
    rig.run_ms(600)
    rig.press(2)  # jackpot
    assert rig.command("award", {"seat": 0, "round": 1, "amount_cents": 500, "meter_cents": 500,
                                 "reset": False, "hand": "flush"})["ok"] == 1
    assert rig.command("award", {"seat": 0, "round": 1, "amount_cents": 500})["err"] == proto.E_PAID
    rig.command("clear")
    rig.press(1)  # unlock
    assert rig.command("service", {"enter": True})["ok"] == 1
    assert rig.command("config_set", {"changes": {"increment_cents": 80}})["ok"] == 1
    assert rig.command("meter_set", {"meter_cents": 100000, "reason": "vocabulary test"})["ok"] == 1
    assert rig.command("service", {"enter": False})["ok"] == 1
    rig.command("status", signed=False)  # refused: unsigned on a keyed board
    assert rig.command("key_change", {"key": (b"w" * 32).hex()})["ok"] == 1
    rig.key = b"w" * 32
    rig.board.service_switch_pressed = True
    rig.press(3)  # service key
    rig.app.snapshot(rig.board.now_ms())
    rig.run_ms(100)
    seen = {}
    for event in rig.events:
        problem = schema.event_problem(event)
        assert problem is None, (problem, event)
        seen[event["k"]] = True
    for kind in ("boot", "meters", "coin", "spot", "glitch", "jam", "key", "state", "late_coin",
                 "award", "cmd_refused", "config", "correction", "key_provisioned", "key_changed"):
        assert kind in seen, "the session should have recorded a %s event; it recorded %s" % (kind, sorted(seen))


def test_every_command_of_the_vocabulary_has_its_handler_and_no_handler_is_unlisted():
    for name in vocab.COMMANDS:
        assert callable(getattr(commands, "cmd_" + name, None)), "no handler cmd_%s in table/commands.py" % name
    for name in dir(commands):
        if name.startswith("cmd_"):
            assert name[4:] in vocab.COMMANDS, "handler %s has no entry in vocab.COMMANDS" % name


def test_the_class_of_a_command_decides_who_may_send_it():
    rig = Rig("vocab-classes")  # no key yet
    for name in vocab.GUARDED_COMMANDS:
        reply = rig.command(name, {})
        assert reply["err"] == proto.E_NO_KEY, (name, reply)
    assert rig.command("status")["ok"] == 1
    assert rig.command("lock")["ok"] == 1  # a play command works on a bench board with no key


def test_a_field_the_vocabulary_does_not_name_is_reported():
    assert schema.event_problem({"k": "coin", "seat": 0, "round": 1, "inc": 70, "to_meter": 70,
                                "to_over": 0, "reserve": 0, "pe": 5, "q": 1, "b": "x", "t": "ev",
                                "ms": 1}) is None
    assert "without 'inc'" in schema.event_problem({"k": "coin", "seat": 0, "round": 1, "to_meter": 70,
                                                   "to_over": 0, "reserve": 0, "pe": 5})
    assert "does not name: 'increment'" in schema.event_problem(
        {"k": "coin", "seat": 0, "round": 1, "inc": 70, "to_meter": 70, "to_over": 0, "reserve": 0,
         "pe": 5, "increment": 70})
    assert "unknown event kind" in schema.event_problem({"k": "coins"})


if __name__ == "__main__":
    mptest.run(globals())
