"""The table controller on MicroPython: coin-in, lockout, lamps, meters, persistence.
Seed 000 (Colorado Caribbean Draw Poker, progressive rules) is quoted where it rules."""
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
    # Seed 000: "the dealer shall lock out the coin acceptor mechanism ... prior to dealing"
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
    rig.app.state["meter"] = 1050
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


if __name__ == "__main__":
    mptest.run(globals())
