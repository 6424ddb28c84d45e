"""The host's half of the vocabulary (table/schema.py) names only words the board's half
(table/vocab.py) has, and every argument rule it uses exists: a command renamed on one side only
fails here."""
from table import schema, vocab


def test_every_command_with_arguments_is_a_command_and_every_rule_exists():
    for name in schema.ARGS:
        assert name in vocab.COMMANDS, "schema.ARGS names %r, which vocab.COMMANDS lacks" % name
        for arg, rule in schema.arg_rules(name).items():
            assert rule in schema.RULES, "%s.%s has the unknown rule %r" % (name, arg, rule)


def test_the_kinds_the_books_read_have_their_fields():
    for kind in (schema.COIN, schema.AWARD, schema.CORRECTION, schema.METERS, schema.STATE,
                 schema.CONFIG, schema.STORAGE_REPAIRED, schema.KEY_PROVISIONED):
        assert kind in schema.EVENTS, kind


def test_arguments_are_checked_by_their_rules():
    assert schema.arg_problem("meter_set", {"meter_cents": 100, "reason": "audit"}) is None
    assert "meter_cents=-1 is not allowed" in schema.arg_problem("meter_set", {"meter_cents": -1})
    assert "meter_cents=True is not allowed" in schema.arg_problem("meter_set", {"meter_cents": True})
    assert "takes no argument 'x'" in schema.arg_problem("status", {"x": 1})
    assert "no such command" in schema.arg_problem("format_flash", {})
    assert schema.arg_problem("loop_stats", {}) is None
    assert "key=" in schema.arg_problem("key_change", {"key": "zz" * 32})
