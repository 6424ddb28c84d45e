"""The table controller on MicroPython: coin-in, lockout, lamps, meters, persistence.
Rulebook 000 (Colorado Caribbean Draw Poker, progressive rules) is quoted where it rules."""
import mptest
from simkit import Rig

LOCK, UNLOCK, JACKPOT, SERVICE = 0, 1, 2, 3


def test_a_token_advances_the_meter_by_the_increment():
    rig = Rig("inc")
    start = rig.app.state["meter"]
    rig.coin(2)
    rig.run_ms(600)
    coins = rig.kinds("coin")
    assert len(coins) == 1, coins
    assert coins[0]["seat"] == 2
    assert rig.app.state["meter"] == start + 70
    assert rig.board.lamps[2] is True
    # one token per seat per round: the seat's acceptor is inhibited once credited
    assert rig.board.inhibit[2] is True and rig.board.inhibit[1] is False


def test_lock_inhibits_and_a_late_coin_is_refused():
    # Rulebook 000: "the dealer shall lock out the coin acceptor mechanism ... prior to dealing"
    rig = Rig("late")
    rig.press(LOCK)
    assert rig.app.base_state() == "LOCKED"
    assert all(rig.board.inhibit)
    meter = rig.app.state["meter"]
    rig.coin(0)
    rig.run_ms(600)
    assert rig.app.state["meter"] == meter
    assert len(rig.kinds("late_coin")) == 1


def test_unlock_starts_a_new_round_and_clears_lamps():
    rig = Rig("round")
    rig.coin(0)
    rig.run_ms(600)
    rig.press(LOCK)
    rig.press(UNLOCK)
    assert rig.app.state["round"] == 2
    assert not any(rig.board.lamps)
    assert not rig.board.inhibit[0]


def test_second_token_in_a_round_is_logged_not_credited():
    rig = Rig("extra")
    rig.coin(1)
    rig.run_ms(600)
    rig.coin(1)
    rig.run_ms(600)
    assert len(rig.kinds("coin")) == 1
    assert len(rig.kinds("extra_coin")) == 1


def test_glitches_are_never_credited():
    rig = Rig("glitch")
    edges = [(3, 1, 0), (3, 0, 3), (3, 1, 200), (3, 0, 204)]
    rig.board.feed_edges(edges)
    rig.run_ms(1600)
    assert not rig.kinds("coin")
    g = rig.kinds("glitch")
    assert g and g[0]["count"] == 2


def test_jam_inhibits_the_seat_and_clears_on_release():
    rig = Rig("jam")
    rig.board.feed_edges([(4, 1, 0)])
    rig.run_ms(2600)
    assert rig.kinds("jam") and rig.board.inhibit[4]
    rig.board.feed_edges([(4, 0, 0)])
    rig.run_ms(100)
    assert rig.kinds("jam_cleared") and not rig.board.inhibit[4]


def test_meter_survives_a_reboot_and_sequence_continues():
    rig = Rig("persist")
    for seat in range(7):
        rig.coin(seat)
    rig.run_ms(800)
    meter = rig.app.state["meter"]
    last_seq = rig.events[-1]["q"]
    rig.boot()
    assert rig.app.state["meter"] == meter
    rig.run_ms(50)
    boot = [e for e in rig.events if e["k"] == "boot"]
    assert boot[-1]["q"] > last_seq


def test_unacknowledged_events_are_resent_and_acks_release_them():
    rig = Rig("resend")
    rig.coin(0)
    rig.run_ms(600)
    first = rig.received
    rig.run_ms(1200)  # resend_ms passes with no ack: everything comes again
    assert rig.received >= 2 * first, (first, rig.received)
    rig.ack_all()
    rig.run_ms(50)
    assert rig.app.journal.unacked_count() == 0


def test_ceiling_sends_the_excess_to_overflow():
    rig = Rig("ceiling", {"seed_cents": 1000, "ceiling_cents": 1100})
    rig.set_state(meter=1050)
    rig.coin(0)
    rig.run_ms(600)
    assert rig.app.state["meter"] == 1100
    assert rig.app.state["over"] == 20


def test_host_silence_disables_the_progressive():
    rig = Rig("silent", {"host_timeout_ms": 3000})
    rig.run_ms(3100)
    assert "host" in rig.app.faults
    assert all(rig.board.inhibit)
    assert rig.board.display[0].strip() == "PROG OFF"
    rig.send({"t": "hb"})
    rig.run_ms(20)
    assert "host" not in rig.app.faults


def test_loop_stats_counts_the_main_loop_turns_on_the_board_clock():
    rig = Rig("loop-stats")
    first = rig.command("loop_stats")
    rig.run_ms(200, step_ms=2)  # 100 turns
    second = rig.command("loop_stats")
    assert first["ok"] == 1 and second["ok"] == 1
    assert second["board_ms"] - first["board_ms"] >= 200
    assert second["turns"] - first["turns"] >= 100, (first, second)


def test_a_repeated_command_gets_its_first_reply():
    # The wire protocol's rule: "Commands carry an id and are idempotent: a repeated command returns the first reply."
    from table import protocol as proto
    rig = Rig("idempotent")
    first = rig.command("status")
    rig.coin(0)
    rig.run_ms(100)  # the meter moves...
    rig.replies = {}
    rig.send(proto.command(first["id"], "status", {}))
    rig.run_ms(20)
    assert rig.replies[first["id"]]["meter"] == first["meter"]  # ...the repeat answers as the first did
    locked = rig.command("lock")
    assert locked["ok"] == 1
    rig.replies = {}
    rig.send(proto.command(locked["id"], "lock", {}))
    rig.run_ms(20)
    assert rig.replies[locked["id"]] == locked  # not "lock needs OPEN": the first reply, nothing done again
    assert len(rig.kinds("remote")) == 1


def test_only_hello_is_taken_in_another_versions_frame():
    # docs/PROTOCOL.md: versions are agreed in hello; a command framed as version 2 is refused
    # with VERSION and not remembered (the same id in a version 1 frame then runs), and an ack
    # framed as version 2 releases nothing
    from table import protocol as proto
    rig = Rig("version")
    rig.board.rx.extend(proto.encode_frame(proto.command(77, "lock", {}), version=2))
    rig.run_ms(20)
    assert rig.replies[77]["err"] == proto.E_VERSION
    assert rig.app.link.frames_refused == 1
    rig.send(proto.command(77, "lock", {}))
    rig.run_ms(20)
    assert rig.replies[77]["ok"] == 1
    rig.coin(0)
    rig.run_ms(600)
    top = max(e["q"] for e in rig.events)
    rig.board.rx.extend(proto.encode_frame(proto.ack(top), version=2))
    rig.run_ms(20)
    assert rig.app.journal.unacked_count() > 0
    rig.session = None
    rig.board.rx.extend(proto.encode_frame(proto.hello(), version=2))
    rig.run_ms(20)
    assert rig.session is not None  # the board answered with its own hello
    rig.ack_all()
    rig.run_ms(20)
    assert rig.app.journal.unacked_count() == 0


def test_display_shows_dollars_and_cents():
    rig = Rig("display")
    rig.run_ms(20)
    assert rig.board.display[0] == "100000.00", rig.board.display


def test_a_reply_too_long_for_a_frame_is_an_error_reply_not_a_reset():
    rig = Rig("longreply")
    for i in range(20):  # twenty firmware files: their checksums do not fit one frame
        with open(rig.dir + "/f%02d.py" % i, "w") as f:
            f.write("x = %d\n" % i)
    reply = rig.command("checksums", {})
    assert reply is not None and reply["ok"] == 0 and "too long" in reply["msg"], reply
    assert rig.command("status")["ok"] == 1  # still running


def test_cumulative_meters_roll_over_at_twelve_digits():
    # The firmware's rule: "Meters hold at least 10 digits; rollover is tested."
    from table.meter import ROLLOVER_CENTS
    rig = Rig("rollover")
    rig.set_state(contrib=ROLLOVER_CENTS - 30, c0=ROLLOVER_CENTS - 1)
    rig.coin(0)
    rig.run_ms(100)
    assert rig.app.state["contrib"] == 40, rig.app.state["contrib"]
    assert rig.app.state["c0"] == 0
    assert rig.app.state["meter"] == 10000070  # the progressive meter itself is capped by its ceiling
    rig.boot()  # and the rolled-over values are what comes back after a reboot
    assert rig.app.state["contrib"] == 40 and rig.app.state["c0"] == 0


def _provisioned_rig(name):
    rig = Rig(name, key=b"k" * 32)
    rig.board.switch = True
    assert rig.command("provision", {"key": ("6b" * 32)})["ok"] == 1
    rig.board.switch = False
    return rig


def test_award_flashes_on_the_display_for_at_least_30_seconds():
    # Rulebook 000 9.2: the supervisor "will announce the amount"; GLI: winning amount shown.
    rig = _provisioned_rig("award30")
    rig.coin(1)
    rig.run_ms(100)
    rig.press(LOCK)
    rig.press(JACKPOT)
    meter = rig.app.state["meter"]
    reply = rig.command("award", {"seat": 1, "amount_cents": meter, "meter_cents": meter, "reset": True,
                                  "hand": "royal flush", "round": rig.app.state["round"]})
    assert reply["ok"] == 1, reply
    assert rig.app.state["meter"] == 10000000  # back to its seed
    shown = set()
    for _ in range(29):
        rig.run_ms(1000, 10)
        assert rig.board.display[1] is True  # flashing
        shown.add(rig.board.display[0].strip())
    assert "PAY" in shown and "100000.70" in shown, shown
    rig.run_ms(1500, 10)
    assert rig.board.display[1] is False  # after 30 s the meter is back, steady (alternating LOCKED)


def test_a_reboot_shows_pay_again_only_while_the_awards_round_is_open():
    rig = _provisioned_rig("awardreboot")
    rig.coin(1)
    rig.run_ms(100)
    rig.press(LOCK)
    rig.press(JACKPOT)
    assert rig.command("award", {"seat": 1, "amount_cents": 500, "round": rig.app.state["round"]})["ok"] == 1
    rig.boot()  # a power cut while PAY is on show, the round still open: shown again
    rig.run_ms(200, 10)
    assert rig.app.award_until_ms > rig.board.now_ms()
    rig.press(UNLOCK)  # the round is over: its award is not the new round's
    assert rig.app.state["award"] is None
    rig.boot()
    rig.run_ms(200, 10)
    assert rig.app.award_until_ms == 0 and "PAY" not in rig.board.display[0], rig.board.display


def test_an_award_needs_the_key_and_a_fresh_counter():
    from table import protocol as proto
    rig = _provisioned_rig("awardauth")
    rig.coin(0)
    rig.run_ms(100)
    rig.press(LOCK)
    rig.press(JACKPOT)
    before = rig.app.state["meter"]
    args = {"seat": 0, "amount_cents": 100, "meter_cents": 100, "round": rig.app.state["round"]}
    unsigned = rig.command("award", args, signed=False)
    assert unsigned["err"] == "BAD_MAC"
    # the signed frame is taken once; the same bytes written again are a replay (same counter)
    rig.send(proto.command(500, "award", args), rig.key)
    frame = proto.sealed_frame(proto.command(500, "award", args), rig.key, rig.session, rig.counter)
    rig.run_ms(20)
    assert rig.replies[500]["ok"] == 1
    rig.replies = {}
    rig.board.rx.extend(frame)
    rig.run_ms(20)
    assert rig.replies[500]["err"] == "REPLAY"
    assert rig.app.state["meter"] == before - 100


def test_a_flood_of_bad_macs_is_counted_not_stored_one_by_one():
    # Tampering is logged, but a flood on the wire must not fill the outbox (switching the
    # progressive off) or wear the flash: past 4 a minute, refusals are counted into one event.
    rig = _provisioned_rig("flood")
    from table import protocol as proto
    before = rig.app.journal.next_seq
    for i in range(200):
        rig.send(proto.command(1000 + i, "award", {"seat": 0, "amount_cents": 1}), b"x" * 32)
    rig.run_ms(61000, 50)
    stored = rig.app.journal.next_seq - before
    refused = rig.kinds("cmd_refused")
    assert rig.app.link.frames_refused == 200
    assert stored < 80, stored  # heartbeat-free: refusals (5), meters-free; boot etc. not counted
    counted = sum(e.get("count", {}).get("BAD_MAC", 0) for e in refused)
    assert len([e for e in refused if "count" not in e]) == 4
    assert len([e for e in refused if "count" not in e]) + counted == 200
    assert "outbox" not in rig.app.faults


def test_power_up_self_check_faults_on_a_changed_firmware_file():
    from boards.selfcheck import file_checksums, manifest_checker
    rig = Rig("selfcheck")
    with open(rig.dir + "/main.py", "w") as f:
        f.write("print('firmware')\n")
    import json
    with open(rig.dir + "/manifest.json", "w") as f:
        json.dump(file_checksums(rig.dir, ["main.py"]), f)
    assert manifest_checker(rig.dir)() == "ok"
    with open(rig.dir + "/main.py", "w") as f:
        f.write("print('tampered')\n")
    from boards.sim import SimBoard
    from table.app import TableApp
    board = SimBoard(rig.dir, "sim-test")
    app = TableApp(board, board.now_ms() + 5000, manifest_checker(rig.dir))
    assert "selfcheck" in app.faults
    app.step(board.now_ms() + 5010)
    assert all(board.inhibit)
    assert board.display[0].strip() == "FAULT 03"


def test_progressive_options_are_table_settings_changed_in_service_and_kept_through_a_power_cut():
    # Rulebook 000 9.3: "Straight flush pays either 10% of the displayed progressive jackpot or pays
    # $5,000 (licensee chooses payout option at the time the game is put into play)". The option,
    # and whether fixed awards come out of the meter, are the table's configuration on the board.
    rig = _provisioned_rig("options")
    assert rig.app.cfg["sf_fixed"] == 0 and rig.app.cfg["fixed_from_meter"] == 0
    change = {"changes": {"sf_fixed": 1, "fixed_from_meter": 1}}
    assert rig.command("config_set", change, signed=True)["err"] == "STATE"   # not in play
    rig.board.switch = True
    assert rig.command("service", {"enter": True}, signed=True)["ok"] == 1
    assert rig.command("config_set", change, signed=False)["err"] == "BAD_MAC"              # signed only
    assert rig.command("config_set", {"changes": {"sf_fixed": 2}}, signed=True)["err"] == "BAD_ARGS"
    reply = rig.command("config_set", change, signed=True)
    assert reply["ok"] == 1 and reply["config"]["sf_fixed"] == 1, reply
    logged = rig.kinds("config")
    assert logged and logged[-1]["new"] == {"sf_fixed": 1, "fixed_from_meter": 1}, logged
    rig.boot()   # power cut: the app is dropped, the board boots from its journal
    assert rig.app.cfg["sf_fixed"] == 1 and rig.app.cfg["fixed_from_meter"] == 1
    assert rig.command("config_get")["config"]["sf_fixed"] == 1


def test_one_token_per_seat_per_round_is_the_only_setting():
    # Rulebook 000 3: the optional wager is "a token in the designated coin-in slot", and the award
    # (9.3) is per hand: a board set to take more would sell tokens that buy nothing
    rig = _provisioned_rig("tokens")
    rig.board.switch = True
    assert rig.command("service", {"enter": True}, signed=True)["ok"] == 1
    r = rig.command("config_set", {"changes": {"tokens_per_round": 2}}, signed=True)
    assert r["err"] == "BAD_ARGS", r
    assert rig.app.cfg["tokens_per_round"] == 1


def test_status_says_what_the_board_runs():
    # Status shows the platform, interpreter and its version as the firmware reads them
    # ("rp2 micropython 1.24.1" on a Pico; this test's own interpreter here, on either).
    import sys
    rig = Rig("runtime")
    runtime = rig.command("status")["runtime"]
    assert runtime == "%s %s %d.%d.%d" % ((sys.platform, sys.implementation.name)
                                          + tuple(sys.implementation.version[:3])), runtime


def test_diag_reports_the_lowest_live_heap_the_main_loop_saw():
    # The board's main loop collects every HEAP_WATCH_TURNS turns and notes what is free after
    # it (boards/hwboard.py); diag reports the lowest and over how many collections.
    rig = Rig("heaplow")
    reply = rig.command("diag")
    assert reply["heap_low"] is None and reply["heap_checks"] == 0
    for free in (120000, 104000, 111000):
        rig.board.note_heap(free)
    reply = rig.command("diag")
    assert reply["heap_low"] == 104000 and reply["heap_checks"] == 3


def _data(rig):
    return rig.dir + "/data"


def test_a_journal_with_no_valid_checkpoint_is_a_storage_fault_that_changes_nothing():
    # table/journal.py: "never silently start from zero". The bytes stay for a technician; the
    # table boots with coin-in off and journals nothing.
    import os
    rig = Rig("nockpt")
    rig.coin(0)
    rig.run_ms(300)
    for name in os.listdir(_data(rig)):
        if name.startswith("ck_") or name.startswith("rl_"):  # both checkpoint slots (the second may not be written yet; rl_: the raw log's)
            os.remove(_data(rig) + "/" + name)
    rig.boot()
    assert rig.app.journal is None and rig.app.faults == ["storage"]
    assert rig.app.fault_detail["storage"] == "journal present but no valid checkpoint"
    meter = rig.app.state["meter"]
    rig.coin(1)
    rig.run_ms(300)
    assert rig.app.state["meter"] == meter and rig.app.state["c1"] == 0 and rig.board.inhibit[1]
    status = rig.command("status")
    assert status["state"] == "FAULT" and status["next_seq"] is None and status["unacked"] is None, status
    if rig.board.log_device is None:
        assert sorted(n for n in os.listdir(_data(rig)) if n.endswith(".log"))  # the journal is kept
    else:
        from table.rawlog import RawLog
        assert RawLog(rig.board.log_device).holds_a_log()  # the raw log is kept (not formatted)


class _NoWriteNv:
    """The board's files on a flash that takes no write at all (a dead or write-protected chip)."""

    def __init__(self, nv):
        self.nv = nv

    def __getattr__(self, name):
        return getattr(self.nv, name)

    def write(self, name, data):
        raise OSError(5)

    def append(self, name, data):
        raise OSError(5)


def test_a_flash_that_takes_no_write_at_first_boot_is_a_storage_fault_not_a_crash():
    from boards.sim import SimBoard
    from simkit import fresh_dir
    from table.app import TableApp
    board = SimBoard(fresh_dir("nowrite"), "sim-test", 8, 8, "pio")
    board.nv = _NoWriteNv(board.nv)
    app = TableApp(board, board.now_ms())
    assert app.faults == ["storage"] and app.journal is None
    assert app.fault_detail["storage"].startswith("storage failed at boot: OSError(5"), app.fault_detail
    assert not app.seat_accepting(0)


def test_a_stored_configuration_that_fails_its_checks_boots_on_defaults_with_a_config_fault():
    from table import config
    rig = Rig("badcfg")
    bad = dict(rig.app.cfg)
    bad["jam_ms"] = bad["pulse_max_ms"] = 300  # each in range, but a jam must outlast the longest pulse
    rig.app.record(rig.board.now_ms(), "config", {"new": {"jam_ms": 300, "pulse_max_ms": 300}}, {"cfg": bad})
    rig.boot()
    assert rig.app.faults == ["config"], (rig.app.faults, rig.app.fault_detail)
    assert rig.app.fault_detail["config"] == "jam_ms=300 must be above pulse_max_ms=300"
    assert rig.app.cfg == config.defaults() and not rig.app.seat_accepting(0)


def test_a_stored_key_whose_check_fails_is_a_key_fault():
    # A key slot is the key, its generation and a CRC-32 (table/keystore.py): a damaged slot is
    # not half a key, and not "no key" either: the key fault, coin-in off, nothing taken unsigned
    # (tests/firmware/mp_test_trust.py has the rest of the key's life).
    rig = Rig("badkey")
    rig.board.switch = True
    assert rig.command("provision", {"key": "6b" * 32})["ok"] == 1
    path = _data(rig) + "/kA"
    with open(path, "rb") as f:
        raw = bytearray(f.read())
    raw[35] ^= 1
    with open(path, "wb") as f:
        f.write(raw)
    rig.boot()
    assert rig.app.key is None and "key" in rig.app.faults
    assert rig.command("status", signed=False)["err"] == "NO_KEY"


def test_a_fault_raised_twice_is_one_fault_and_one_event():
    rig = Rig("faulttwice")
    for _ in range(2):
        assert rig.command("linked", {"lost": True})["faults"] == ["pool"]
    assert [e["code"] for e in rig.kinds("fault")] == ["pool"]


def test_the_service_key_with_the_switch_off_is_journaled_as_refused():
    rig = Rig("servicekey")
    rig.press(SERVICE)
    assert [e["reason"] for e in rig.kinds("service_refused")] == ["service key switch is off"]
    assert rig.app.state["base"] == "OPEN" and not rig.kinds("service_requested")
    rig.board.switch = True
    rig.press(SERVICE)
    assert [e["state"] for e in rig.kinds("service_requested")] == ["OPEN"]


def test_the_meter_display_shows_whole_dollars_when_cents_do_not_fit_and_never_a_wrong_figure():
    from table.display import format_cents
    assert format_cents(123456, 6) == "1234.56"      # a '.' folds into the digit before it
    assert format_cents(1234567, 6) == " 12345"      # cents do not fit: whole dollars
    assert format_cents(123456789, 6) == "------"    # not even the dollars: dashes, not a wrong figure
    assert format_cents(99999999999, 8) == "--------"


if __name__ == "__main__":
    mptest.run(globals())
