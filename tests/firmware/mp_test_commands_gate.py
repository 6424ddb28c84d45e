"""The board's command gate and the bookkeeping of its money handlers (table/commands.py), on
MicroPython: what a malformed or unknown command gets, which seats an award may pay (rulebook 000
rule 9: only a seat in this round's progressive, once), what `clear` may and may not clear, and
the limits a configuration change must keep (docs/PROTOCOL.md, docs/SECURITY.md)."""
import os

import mptest
from simkit import FullNv, Rig
from table import protocol as proto

KEY = b"g" * 32
LOCK, UNLOCK, JACKPOT = 0, 1, 2


def _keyed(name, config=None):
    rig = Rig(name, config=config, key=KEY)
    rig.board.switch = True
    assert rig.command("provision", {"key": KEY.hex()})["ok"] == 1
    rig.board.switch = False
    return rig


def _raw(rig, message):
    """Send one frame as the keyed host would and return the board's reply to it (by its id)."""
    rig.send(message, rig.key)
    rig.run_ms(20)
    return rig.replies.get(message.get("id"))


def test_a_malformed_command_is_refused_by_what_is_missing():
    rig = _keyed("gate-malformed")
    for bad in ({"t": proto.COMMAND, "id": "7", "c": "status", "a": {}},
                {"t": proto.COMMAND, "id": 8, "c": 5, "a": {}},
                {"t": proto.COMMAND, "id": 9, "c": "status", "a": []}):
        rig.send(bad, rig.key)
        rig.run_ms(20)
    refusals = [r for r in rig.replies.values() if not r.get("ok")]
    assert len(refusals) == 3, rig.replies
    for r in refusals:
        assert r["err"] == proto.E_BAD_ARGS and r["msg"] == "command needs id, c and a", r
    assert rig.command("status")["ok"] == 1  # and the board goes on


def test_an_unknown_command_is_named_and_a_missing_argument_is_bad_arguments():
    rig = _keyed("gate-unknown")
    reply = rig.command("format_flash")
    assert reply["err"] == proto.E_UNKNOWN and reply["msg"] == "no such command: format_flash", reply
    rig.board.switch = True
    assert rig.command("service", {"enter": True})["ok"] == 1
    meter = rig.app.state["meter"]
    reply = rig.command("meter_set", {"meter_cents": 5})  # no reason
    assert reply["err"] == proto.E_BAD_ARGS and reply["msg"].startswith("bad arguments: KeyError"), reply
    assert rig.app.state["meter"] == meter


def _jackpot_with_tokens(name, seats):
    rig = _keyed(name)
    for seat in seats:
        rig.coin(seat)
    rig.run_ms(400)
    rig.press(LOCK)
    rig.press(JACKPOT)
    return rig


def _award(rig, seat, amount=100, **extra):
    args = {"seat": seat, "round": rig.app.state["round"], "amount_cents": amount, "meter_cents": 0}
    args.update(extra)
    return rig.command("award", args)


def test_only_seats_with_a_token_at_lockout_are_paid_and_each_once():
    rig = _jackpot_with_tokens("gate-seats", (0, 2, 5))
    assert _award(rig, 1)["err"] == proto.E_NOT_ELIGIBLE
    assert _award(rig, 3)["err"] == proto.E_NOT_ELIGIBLE
    paid = _award(rig, 2)
    assert paid["ok"] == 1 and paid["seat"] == 2, paid
    again = _award(rig, 2)  # a new command id: a second payment, refused
    assert again["err"] == proto.E_PAID and again["msg"] == "seat 3 was paid in round 1 already", again
    assert _award(rig, 5)["ok"] == 1 and _award(rig, 0)["ok"] == 1
    assert rig.app.state["paid"] == (1 << 0) | (1 << 2) | (1 << 5)
    assert rig.app.state["hits"] == 3 and rig.app.state["wins"] == 300
    assert [p[3] for p in rig.app.state["pays"]] == [2, 5, 0]  # each payment's seat, in order


def test_an_award_with_a_bad_reset_or_a_long_hand_name_pays_nothing():
    rig = _jackpot_with_tokens("gate-award-args", (1,))
    wins = rig.app.state["wins"]
    assert _award(rig, 1, reset=1)["err"] == proto.E_BAD_ARGS
    assert _award(rig, 1, hand=7)["err"] == proto.E_BAD_ARGS
    assert _award(rig, 1, hand="x" * 33)["err"] == proto.E_BAD_ARGS
    assert rig.app.state["wins"] == wins and rig.app.state["paid"] == 0
    assert _award(rig, 1, hand="x" * 32)["ok"] == 1  # 32 characters is the limit, not past it


def test_the_house_part_refusal_names_the_part_and_the_limit():
    rig = _jackpot_with_tokens("gate-house", (1,))
    limit = max(rig.app.cfg["max_fixed_award_cents"], rig.app.state["frozen"] // 10)
    reply = _award(rig, 1, amount=limit + 50, meter_cents=40)
    assert reply["err"] == proto.E_BAD_ARGS, reply
    assert "(%d)" % (limit + 10) in reply["msg"] and reply["msg"].endswith("(%d)" % limit), reply


def test_clear_clears_what_a_technician_may_and_nothing_else():
    rig = _keyed("gate-clear")
    now = rig.board.now_ms()
    # (what clear may clear is raised last: every fault it passes over is passed over, not an end)
    for code in ("config", "selfcheck", "host", "pool", "key", "outbox"):
        rig.app.set_fault(code, "test", now)
    reply = rig.command("clear")
    assert reply["ok"] == 1 and reply["cleared"] == ["outbox"], reply
    # config and selfcheck clear only by fixing the cause and rebooting; host when the host
    # speaks (it just did, so it is gone); pool when the pool's amount comes again; key when a
    # good key is in both slots (a damaged slot beside the good one raises it)
    assert sorted(rig.app.faults) == ["config", "key", "pool", "selfcheck"], rig.app.faults


def test_a_jam_ends_when_the_acceptor_lets_go_and_clear_cannot_end_it_sooner():
    rig = _keyed("gate-jam")
    rig.board.feed_edges([(4, 1, 0)])  # seat 5's line held down: a jam
    rig.run_ms(2500)
    assert rig.app.jammed[4]
    rig.command("clear")
    assert rig.app.jammed[4] and rig.board.inhibit[4]  # still held: stays jammed, inhibited
    rig.board.feed_edges([(4, 0, 0)])
    rig.run_ms(50)  # no clear needed: the decoder sees the line free
    assert not rig.app.jammed[4] and not rig.app.decoders[4].jammed
    assert rig.kinds("jam_cleared")


def test_clear_ends_the_award_display():
    rig = _jackpot_with_tokens("gate-award-display", (1,))
    assert _award(rig, 1)["ok"] == 1
    assert rig.app.state["award"] == 100 and rig.app.award_until_ms > rig.board.now_ms()
    rig.command("clear")
    assert rig.app.state["award"] is None and rig.app.award_until_ms == 0
    assert rig.kinds("award_cleared")


def test_the_ceiling_may_be_set_to_the_meter_but_not_below_it():
    rig = _keyed("gate-ceiling")
    rig.coin(0)
    rig.run_ms(400)  # the meter above its seed, so only the meter check can refuse
    rig.board.switch = True
    assert rig.command("service", {"enter": True})["ok"] == 1
    meter = rig.app.state["meter"]
    reply = rig.command("config_set", {"changes": {"ceiling_cents": meter - 1}})
    assert reply["err"] == proto.E_BAD_ARGS and reply["msg"] == "ceiling_cents below the current meter (%d)" % meter
    reply = rig.command("config_set", {"changes": {"ceiling_cents": meter, "increment_cents": 80}})
    assert reply["ok"] == 1 and rig.app.cfg["ceiling_cents"] == meter, reply
    config = rig.kinds("config")[-1]
    assert config["new"] == {"ceiling_cents": meter, "increment_cents": 80}
    assert sorted(config["old"]) == ["ceiling_cents", "increment_cents"]


def test_a_repeated_award_after_a_reboot_gets_its_first_reply_and_pays_nothing():
    # The reply cache is in RAM; the payment's command id is in the journal with the payment, so a
    # host repeating the command after a power cut gets the first payment back, not a second one.
    rig = _jackpot_with_tokens("gate-repeat", (3,))
    args = {"seat": 3, "round": rig.app.state["round"], "amount_cents": 700, "meter_cents": 70}
    rig.send(proto.command(4242, "award", args), rig.key)
    rig.run_ms(20)
    first = rig.replies[4242]
    assert first["ok"] == 1 and first["meter"] == rig.app.state["meter"], first
    books = (rig.app.state["meter"], rig.app.state["wins"], rig.app.state["hits"])
    rig.boot()
    rig.send(proto.command(4242, "award", args), rig.key)
    rig.run_ms(20)
    again = rig.replies[4242]
    assert again["ok"] == 1 and again.get("repeat") is True, again
    assert (again["amount"], again["meter"], again["seat"], again["round"]) == \
        (700, first["meter"], 3, first["round"]), (again, first)
    assert (rig.app.state["meter"], rig.app.state["wins"], rig.app.state["hits"]) == books
    other = rig.command("award", args)  # a new id for the same seat: refused, paid already
    assert other["err"] == proto.E_PAID


def test_a_state_from_before_eligibility_was_journaled_pays_nobody_this_round():
    # A checkpoint written by firmware that did not journal "elig"/"paid": nobody counts as in
    # this round's progressive (no award) and nobody as paid; the next lock records both.
    rig = _jackpot_with_tokens("gate-oldstate", (0, 1))
    del rig.app.state["elig"]
    del rig.app.state["paid"]
    assert _award(rig, 0)["err"] == proto.E_NOT_ELIGIBLE
    assert _award(rig, 1)["err"] == proto.E_NOT_ELIGIBLE
    rig.app.state["elig"] = 0b11
    # Seat 1 (bit 0) too: a missing paid mask means nobody paid, not the first seat.
    assert _award(rig, 0)["ok"] == 1 and rig.app.state["paid"] == 0b01
    assert _award(rig, 1)["ok"] == 1 and rig.app.state["paid"] == 0b11
    # and the first payment on such a state marks its own seat only
    rig = _jackpot_with_tokens("gate-oldstate-2", (0, 1))
    del rig.app.state["paid"]
    assert _award(rig, 1)["ok"] == 1 and rig.app.state["paid"] == 0b10


def test_clear_goes_past_every_fault_it_may_not_clear():
    # whatever order the faults were raised in, each one clear may not touch is skipped, not a stop
    for blocker in ("config", "selfcheck", "storage", "host", "pool"):
        rig = _keyed("gate-clear-" + blocker)
        now = rig.board.now_ms()
        rig.app.set_fault(blocker, "test", now)
        rig.app.set_fault("outbox", "test", now)
        reply = rig.command("clear")
        assert reply["cleared"] == ["outbox"], (blocker, reply)
        assert "outbox" not in rig.app.faults


def test_lock_and_unlock_commands_refuse_a_table_in_the_wrong_state():
    # docs/PROTOCOL.md: lock only from OPEN, unlock only from LOCKED or JACKPOT_PENDING; the refusal
    # names the state, and nothing is journaled for it.
    rig = _keyed("gate-lockstate")
    reply = rig.command("unlock")
    assert reply["err"] == proto.E_STATE and reply["msg"] == "unlock needs LOCKED, table is OPEN", reply
    assert rig.command("lock")["state"] == "LOCKED"
    remote = len(rig.kinds("remote"))
    reply = rig.command("lock")
    assert reply["err"] == proto.E_STATE and reply["msg"] == "lock needs OPEN, table is LOCKED", reply
    assert len(rig.kinds("remote")) == remote and rig.app.state["base"] == "LOCKED"


def test_display_test_lights_every_segment_for_the_time_asked_then_the_meter_again():
    rig = _keyed("gate-displaytest")
    now = rig.board.now_ms()
    reply = rig.command("display_test", {"ms": 500})
    assert reply["ok"] == 1 and now <= reply["until_ms"] - 500 <= now + 20, reply
    assert rig.app.display_text[0] == "8." * rig.board.display_digits
    rig.run_ms(600)
    assert "8.8.8." not in rig.app.display_text[0], rig.app.display_text


def test_provisioning_and_service_need_the_key_switch_turned_at_the_board():
    # docs/SECURITY.md: physical presence (the service key switch) for a key and for service mode.
    rig = _keyed("gate-switch")
    reply = rig.command("provision", {"key": (b"h" * 32).hex()})
    assert reply["err"] == proto.E_NEEDS_SERVICE_SWITCH, reply
    assert reply["msg"] == "turn the service key switch on at the board to provision a key", reply
    reply = rig.command("service", {"enter": True})
    assert reply["err"] == proto.E_NEEDS_SERVICE_SWITCH and reply["msg"] == "service mode needs the key switch on"
    assert rig.app.state["base"] == "OPEN" and rig.command("status")["ok"] == 1  # the old key still signs


def test_service_is_entered_once_and_left_only_from_service():
    rig = _keyed("gate-service")
    reply = rig.command("service", {"enter": False})
    assert reply["err"] == proto.E_STATE and reply["msg"] == "not in service", reply
    rig.board.switch = True
    assert rig.command("service", {"enter": True})["state"] == "SERVICE"
    reply = rig.command("service", {"enter": True})
    assert reply["err"] == proto.E_STATE and reply["msg"] == "service from SERVICE is not allowed", reply
    assert rig.command("service", {"enter": False})["state"] == "LOCKED"  # out of service, locked


def test_a_key_that_is_not_32_bytes_is_refused_and_the_old_key_stays():
    rig = _keyed("gate-keylen")
    for bad in ("ab" * 31, "ab" * 33, 7):
        reply = rig.command("key_change", {"key": bad})
        assert reply["err"] == proto.E_BAD_ARGS and reply["msg"] == "key must be 32 bytes (64 hex digits)", reply
    assert rig.command("status")["ok"] == 1  # still signed with the old key, so still accepted
    assert not rig.kinds("key_changed")


def test_an_award_the_flash_cannot_record_is_refused_and_nothing_is_paid():
    # docs/RELIABILITY.md: a payment exists only once its journal record is durable.
    rig = _jackpot_with_tokens("gate-award-full", (1,))
    books = (rig.app.state["meter"], rig.app.state["wins"], rig.app.state["hits"], rig.app.state["paid"])
    rig.app.journal.nv = FullNv(rig.app.journal.nv)
    reply = _award(rig, 1)
    assert reply["err"] == proto.E_STORAGE and reply["msg"] == "the award could not be recorded; nothing was paid"
    assert (rig.app.state["meter"], rig.app.state["wins"], rig.app.state["hits"], rig.app.state["paid"]) == books
    assert "storage" in rig.app.faults


def test_an_award_the_flash_cannot_record_on_a_state_without_a_paid_mask_is_refused_too():
    # The check after recording compares the state with the payment's own mask: a state from
    # firmware that kept no mask must not read as "seat 1 paid" when the record never landed.
    rig = _jackpot_with_tokens("gate-award-full-old", (0,))
    del rig.app.state["paid"]
    meter_before = rig.app.state["meter"]
    rig.app.journal.nv = FullNv(rig.app.journal.nv)
    reply = _award(rig, 0)
    assert reply["err"] == proto.E_STORAGE, reply
    assert "paid" not in rig.app.state and rig.app.state["meter"] == meter_before


def _frozen(name):
    """A keyed table whose journal holds a bad record in the middle: storage fault, frozen."""
    rig = _keyed(name)
    for seat in range(3):
        rig.coin(seat)
        rig.run_ms(300)
    data = rig.dir + "/data"
    path = data + "/" + [n for n in os.listdir(data) if n.startswith("j") and n.endswith(".log")][0]
    with open(path, "rb") as f:
        raw = bytearray(f.read())
    raw[len(raw) // 2] ^= 0x10
    with open(path, "wb") as f:
        f.write(raw)
    rig.boot()
    assert rig.app.journal.frozen and "storage" in rig.app.faults
    return rig


def test_storage_repair_needs_the_switch_a_frozen_journal_and_a_reason():
    rig = _keyed("gate-repair-none")
    rig.board.switch = True
    reply = rig.command("storage_repair", {"reason": "bit error"})
    assert reply["err"] == proto.E_STATE and reply["msg"] == "no storage fault to repair", reply
    rig = _frozen("gate-repair-args")
    reply = rig.command("storage_repair", {"reason": "bit error"})
    assert reply["err"] == proto.E_NEEDS_SERVICE_SWITCH, reply
    assert reply["msg"] == "storage repair needs the service key switch on", reply
    rig.board.switch = True
    for reason in ("", None, 5):
        reply = rig.command("storage_repair", {"reason": reason})
        assert reply["err"] == proto.E_BAD_ARGS and reply["msg"] == "a storage repair needs a reason", reply
    assert rig.app.journal.frozen and "storage" in rig.app.faults


class NoWriteNv(FullNv):
    """The flash takes no new file either: a repair cannot write its new journal."""

    def write(self, name, data):
        raise OSError(5)


def test_a_repair_the_flash_refuses_leaves_the_journal_frozen_and_the_fault_on():
    # A failed repair must not half-clear the fault: the journal stays frozen (nothing appended
    # after the bad record), coin-in stays off, and a later repair on working flash still works.
    rig = _frozen("gate-repair-fail")
    rig.board.switch = True
    nv = rig.app.journal.nv
    rig.app.journal.nv = NoWriteNv(nv)
    reply = rig.command("storage_repair", {"reason": "bit error"})
    assert reply["err"] == proto.E_STORAGE, reply
    assert reply["msg"].startswith("repair failed, storage still faulted: OSError("), reply
    assert rig.app.journal.frozen and "storage" in rig.app.faults and not rig.app.seat_accepting(0)
    rig.app.journal.nv = nv
    reply = rig.command("storage_repair", {"reason": "bit error"})
    assert reply["ok"] == 1 and "storage" not in rig.app.faults, reply
    assert not rig.app.journal.frozen


def test_verify_software_answers_hmacs_of_the_files_keyed_with_the_regulators_seed():
    # docs/SECURITY.md: HMAC-SHA256 and HMAC-SHA1 of each named file, computed from the file on
    # the board's flash with the seed as the key. The expected MACs are RFC 4231's and RFC 2202's
    # first test cases (key twenty 0x0b bytes, data "Hi There"), not computed by the board's code.
    rig = Rig("gate-verify")
    with open(rig.dir + "/hi.txt", "wb") as f:
        f.write(b"Hi There")
    reply = rig.command("verify_software", {"seed": "0b" * 20, "names": ["hi.txt", "gone.py"]})
    assert reply["ok"] == 1, reply
    sha256, sha1 = reply["files"]["hi.txt"]
    assert sha256 == "b0344c61d8db38535ca8afceaf0bf12b881dc200c9833da726e9376c2e32cff7", sha256
    assert sha1 in ("b617318655057264e28bc0b6fb378c8ef146be00", None), sha1  # None: a build without sha1
    assert reply["files"]["gone.py"] is None  # a file it cannot read


def test_verify_software_refuses_a_seed_or_names_out_of_bounds_and_takes_their_edges():
    rig = Rig("gate-verify-args")
    for seed in ("0b" * 15, "0b" * 65, "0b" * 20 + "0", "0B" * 20, "0g" * 20, 1234, None):
        reply = rig.command("verify_software", {"seed": seed, "names": ["main.py"]})
        assert reply["err"] == proto.E_BAD_ARGS, (seed, reply)
        assert reply["msg"] == "seed must be 16..64 bytes as lower-case hex digits", (seed, reply)
    for names in ("main.py", [], ["m%d.py" % i for i in range(9)], ["/main.py"], ["../main.py"],
                  ["table/../../etc"], [7], None):
        reply = rig.command("verify_software", {"seed": "0b" * 16, "names": names})
        assert reply["err"] == proto.E_BAD_ARGS, (names, reply)
        assert reply["msg"] == "names must be 1..8 firmware file names", (names, reply)
    # the edges: a 16- and a 64-byte seed, one name and eight
    for seed, names in (("0b" * 16, ["main.py"]), ("0b" * 64, ["m%d.py" % i for i in range(8)])):
        reply = rig.command("verify_software", {"seed": seed, "names": names})
        assert reply["ok"] == 1 and sorted(reply["files"]) == sorted(names), reply


def test_every_cross_check_of_a_configuration_names_both_settings():
    # table/config.py: validate() returns a complete, checked copy or raises; nothing is modified.
    from table import config
    base = config.defaults()
    for changes, error in (
            ({"seed_cents": base["ceiling_cents"] + 1}, "seed_cents=%d is above ceiling_cents=%d"
             % (base["ceiling_cents"] + 1, base["ceiling_cents"])),
            ({"pulse_min_ms": 100, "pulse_max_ms": 100}, "pulse_min_ms=100 must be below pulse_max_ms=100"),
            ({"coin_gap_ms": base["pulse_min_ms"]}, "coin_gap_ms=%d must be above pulse_min_ms=%d"
             % (base["pulse_min_ms"], base["pulse_min_ms"])),
            ({"jam_ms": 300, "pulse_max_ms": 300}, "jam_ms=300 must be above pulse_max_ms=300"),
            ({"host_timeout_ms": base["heartbeat_ms"]}, "host_timeout_ms=%d must be above heartbeat_ms=%d"
             % (base["heartbeat_ms"], base["heartbeat_ms"]))):
        err = mptest.raises(config.ConfigError, config.validate, changes, base)
        assert str(err) == error, (changes, str(err))
    assert base == config.defaults()  # the base is never modified
    assert config.validate({"host_timeout_ms": 0}, base)["host_timeout_ms"] == 0  # 0: no host watch


def test_a_configuration_missing_settings_is_completed_with_their_defaults():
    # A board of older firmware reports a configuration without the settings added since; the
    # host checks a change against it (tablectl config): what is missing counts at its default.
    from table import config
    older = config.defaults()
    del older["max_fixed_award_cents"]
    del older["award_show_ms"]
    got = config.validate({"seed_cents": 1000}, older)
    assert got == dict(config.defaults(), seed_cents=1000)
    assert "award_show_ms" not in older  # the base is not modified


if __name__ == "__main__":
    mptest.run(globals())
