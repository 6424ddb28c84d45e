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


def test_every_argument_rule_refuses_what_it_should_and_takes_what_it_should():
    ok = {"checksums": {"names": ["main.py", "table/app.py"]}, "display_test": {"ms": 60000},
          "linked": {"meter_cents": 0, "lost": False}, "provision": {"key": "ab" * 32},
          "verify_software": {"seed": "5f" * 16, "names": ["main.py"]},
          "service": {"enter": True}, "config_set": {"changes": {"seed_cents": 1000}},
          "storage_repair": {"reason": "x" * 200},
          "award": {"seat": 7, "round": 1, "amount_cents": 10 ** 10, "meter_cents": 0, "reset": False, "hand": ""}}
    for name, args in ok.items():
        assert schema.arg_problem(name, args) is None, (name, args)
    bad = [("checksums", "names", ["ok", ""]), ("checksums", "names", ["n"] * 65), ("checksums", "names", "main.py"),
           ("display_test", "ms", 60001), ("linked", "lost", 1), ("provision", "key", "ab" * 31),
           ("provision", "key", "ag" * 32), ("provision", "key", "AB" * 32),
           ("verify_software", "seed", "5f" * 15), ("verify_software", "seed", "5f" * 65), ("verify_software", "seed", "5F" * 16), ("provision", "key", b"ab" * 32),
           ("config_set", "changes", {}), ("config_set", "changes", {"seed_cents": -1}),
           ("config_set", "changes", {5: 1}), ("config_set", "changes", [("seed_cents", 1)]),
           ("storage_repair", "reason", ""), ("storage_repair", "reason", "x" * 201),
           ("award", "seat", 8), ("award", "round", 0), ("award", "hand", "x" * 33), ("award", "hand", 5),
           ("award", "amount_cents", 10 ** 10 + 1)]
    for name, arg, value in bad:
        assert schema.arg_problem(name, {arg: value}) == "%s: argument %s=%r is not allowed" % (name, arg, value)
    assert schema.arg_problem("status", ["x"]) == "arguments must be an object"
    assert schema.arg_rules("status") == {} and schema.arg_rules("meter_set") == {"meter_cents": "cents",
                                                                                   "reason": "text"}


def test_an_event_is_checked_whole_or_for_the_fields_a_reader_needs():
    coin = {"k": "coin", "seat": 0, "round": 1, "inc": 70, "to_meter": 70, "to_over": 0, "reserve": 0, "pe": 3,
            "q": 1, "b": "b1", "t": "ev", "ms": 5, "p": {"meter": 70}, "suppressed": 2}
    assert schema.event_problem(coin) is None  # the common fields (number, patch, ...) besides its own
    assert schema.event_problem({"k": "cmd_refused", "msg": "refused"}) is None  # optional fields may be absent
    assert schema.event_problem(dict(coin, extra=1)) == "coin event with a field the vocabulary does not name: 'extra'"
    short = dict(coin)
    del short["to_meter"]
    assert schema.event_problem(short) == "coin event without 'to_meter'"
    assert schema.event_problem({"k": "coins"}) == "unknown event kind 'coins'"
    # a reader of older books asks only for what it reads: present, and named by the vocabulary
    assert schema.event_problem(short, needed=("seat", "inc")) is None
    assert schema.event_problem(short, needed=("to_meter",)) == "coin event without 'to_meter'"
    assert schema.event_problem(coin, needed=("amount",)) == "coin events have no field 'amount' in the vocabulary"
