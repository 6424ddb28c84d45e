"""The board's end of the link (table/link.py), on MicroPython, turn by turn on a clock the test
steps itself: the outbox's window and pace, the resend back-off and the delivery restart after a
(re)connect, the reply caches that make a repeated command do nothing twice, and the rate limit on
journaling refusals (docs/PROTOCOL.md, docs/SECURITY.md, docs/RELIABILITY.md).

Rules checked: "Commands carry an id and are idempotent: a repeated command returns the first
reply" (docs/PROTOCOL.md); "Every frame authenticated after provisioning; nothing replayed or
forged is acted on ... all refused and logged (rate-limited: 4 a minute one by one, the rest
counted)" (docs/RELIABILITY.md); "a (re)connected host gets everything not acknowledged"."""
import mptest
from simkit import Rig
from table import protocol as proto

KEY = b"L" * 32
RESEND_MS = 1000   # config default resend_ms
WINDOW = 64        # unacknowledged events on the wire at once (docs/PROTOCOL.md)
PER_TURN = 4       # events sent in one main-loop turn
REFUSALS_A_MINUTE = 4


class Wire:
    """The host's end, stepped by hand: each turn() is one main-loop turn at a time the test sets,
    and returns the messages the board wrote in it."""

    def __init__(self, name, key=None, config=None):
        cfg = {"host_timeout_ms": 0}  # no host fault events in the outbox while the test waits
        if config:
            cfg.update(config)
        self.rig = Rig(name, cfg, key=key)
        self.app = self.rig.app
        self.link = self.app.link
        self.reader = proto.FrameReader()
        self.now = self.rig.board.now_ms()
        self.key = key
        self.session = None
        self.counter = -1
        if key is not None:
            self.rig.board.switch = True
            assert self.command(1, "provision", {"key": key.hex()})["ok"] == 1
            self.rig.board.switch = False
        self.release_all()

    def turn(self, ms=0):
        self.now += ms
        self.app.step(self.now)
        return self.drain()

    def drain(self):
        tx = bytes(self.rig.board.tx)
        self.rig.board.tx = bytearray()
        out = []
        for frame in self.reader.feed(tx):
            msg = frame.message
            if msg["t"] == proto.HELLO:
                self.session = msg.get(proto.SESSION)
                self.counter = max(self.counter, msg.get("hn", -1))
            out.append(msg)
        return out

    def put(self, message, signed=True):
        if self.key is None or not signed:
            self.rig.board.rx.extend(proto.encode_frame(message))
            return
        if self.session is None:
            self.rig.board.rx.extend(proto.encode_frame(proto.hello()))
            self.turn(1)
        self.counter += 1
        self.rig.board.rx.extend(proto.sealed_frame(message, self.key, self.session, self.counter))

    def command(self, cid, name, args=None, signed=True):
        self.put(proto.command(cid, name, args or {}), signed)
        return replies(self.turn(1)).get(cid)

    def release_all(self):
        """Acknowledge everything journaled so far; the outbox is then empty."""
        self.turn(1)
        self.put(proto.ack(self.app.journal.next_seq - 1))
        self.turn(1)
        assert self.app.journal.unacked_count() == 0

    def journal_events(self, n):
        first = self.app.journal.next_seq
        for i in range(n):
            assert self.app.record(self.now, "remote", {"i": i}) is not None
        return list(range(first, first + n))


def events(msgs):
    return [m["q"] for m in msgs if m["t"] == proto.EVENT]


def replies(msgs):
    return {m["id"]: m for m in msgs if m["t"] == proto.REPLY}


# ---- the outbox ----------------------------------------------------------------------------------
def test_at_most_64_unacknowledged_events_are_on_the_wire():
    w = Wire("link-window")
    seqs = w.journal_events(100)
    sent = []
    for _ in range(WINDOW // PER_TURN + 4):
        sent += events(w.turn(10))
    assert sent == seqs[:WINDOW], sent  # in order, each once, and not one past the window
    w.put(proto.ack(seqs[9]))  # the host files ten: the window moves on by ten
    sent = []
    for _ in range(10 // PER_TURN + 3):
        sent += events(w.turn(10))
    assert sent == seqs[WINDOW:WINDOW + 10], sent


def test_one_turn_sends_at_most_4_events_so_coin_in_and_keys_are_not_held_up():
    w = Wire("link-pace")
    seqs = w.journal_events(10)
    turns = [events(w.turn(1)) for _ in range(4)]
    assert [len(t) for t in turns] == [PER_TURN, PER_TURN, 10 - 2 * PER_TURN, 0]
    assert turns[0] + turns[1] + turns[2] == seqs


FRAME_MS = 5  # a frame's cost on a Pico, rounded up (the figure: docs/BENCHMARKS.md, `bench_pico.py boot`)


def test_a_dealer_key_held_80_ms_is_seen_while_the_board_resends_its_whole_window():
    # Keys are sampled once a turn, at its start: a turn longer than a press can start before it
    # and end after it. A turn here lasts 2 ms plus FRAME_MS a frame written in it; the key goes
    # down 1 ms after the sample of the turn that starts a resend of the full window (a host's
    # hello), and is held 80 ms.
    w = Wire("link-keys")
    w.journal_events(WINDOW)
    w.turn(RESEND_MS + 1)  # (the first copies go out)
    w.rig.board.rx.extend(proto.encode_frame(proto.hello()))
    press_from = w.now + 1
    press_until = press_from + 80
    seen = []
    for _ in range(40):
        w.rig.board.keys = 1 if press_from <= w.now < press_until else 0  # bit 0: the lock key
        msgs = w.turn(0)
        seen += [m for m in msgs if m["t"] == proto.EVENT and m["k"] == "key"]
        w.now += 2 + FRAME_MS * len(events(msgs))
        if w.now >= press_until + 200:
            break
    assert w.app.state["base"] == "LOCKED", w.app.state["base"]


def _resend_times(w, until_ms, step_ms=10):
    """Board times at which the oldest unacknowledged event went out again."""
    first = w.app.journal.unacked.seq(0)
    times = []
    end = w.now + until_ms
    while w.now < end:
        if first in events(w.turn(step_ms)):
            times.append(w.now)
    return times


def test_a_window_nobody_acknowledges_is_resent_after_1_2_4_8_8_resend_times():
    w = Wire("link-backoff")
    acked_at = w.now
    [seq] = w.journal_events(1)
    assert events(w.turn(0)) == [seq]
    times = _resend_times(w, 40000)
    # the first resend waits resend_ms from the last acknowledgement that released something
    assert times[0] - acked_at == RESEND_MS, times
    gaps = [b - a for a, b in zip(times, times[1:])]
    assert gaps[:6] == [2 * RESEND_MS, 4 * RESEND_MS, 8 * RESEND_MS, 8 * RESEND_MS, 8 * RESEND_MS,
                        8 * RESEND_MS], gaps


def test_an_acknowledgement_that_releases_events_starts_the_back_off_again():
    w = Wire("link-backoff-reset")
    seqs = w.journal_events(2)
    events(w.turn(1))
    times = _resend_times(w, 7100)  # resends at +1 s, +3 s, +7 s: the back-off is at 8x now
    assert len(times) == 3, times
    w.put(proto.ack(seqs[0]))  # the host files one: progress
    w.turn(10)
    acked_at = w.now
    times = _resend_times(w, 5000)
    assert times[0] - acked_at == RESEND_MS, (acked_at, times)  # 1x again, not 8x
    assert times[1] - times[0] == 2 * RESEND_MS, times


def test_an_acknowledgement_that_releases_nothing_keeps_the_back_off():
    w = Wire("link-backoff-keep")
    seqs = w.journal_events(2)
    events(w.turn(1))
    times = _resend_times(w, 3100)  # +1 s, +3 s: 4x now
    assert len(times) == 2, times
    w.put(proto.ack(seqs[0] - 1))  # an old acknowledgement: nothing released
    w.turn(10)
    times2 = _resend_times(w, 8000)
    assert times2[0] - times[-1] == 4 * RESEND_MS, (times, times2)


def test_a_reconnected_host_gets_everything_not_acknowledged_at_once():
    """hello (unauthenticated) changes nothing but where delivery restarts: from the first event
    the host has not acknowledged, in the same turn, and with the back-off back at 1x."""
    w = Wire("link-hello", KEY)
    seqs = w.journal_events(PER_TURN)  # (what one turn sends)
    assert events(w.turn(0)) == seqs
    w.put(proto.ack(seqs[1]))  # two filed
    w.turn(0)
    times = _resend_times(w, 7100)  # +1, +3, +7 s: nobody acknowledges; 8x now
    assert len(times) == 3, times
    last = times[-1]
    w.rig.board.rx.extend(proto.encode_frame(proto.hello()))
    msgs = w.turn(last + 500 - w.now)
    hello = [m for m in msgs if m["t"] == proto.HELLO][0]
    assert hello["a"] == seqs[1]  # it tells the host what it holds acknowledged
    assert events(msgs) == seqs[2:], msgs  # everything after the host's last acknowledgement, now
    # and the back-off starts again at 1x: resend_ms after the hello's copy went out, then 2x
    again = _resend_times(w, 3600)
    assert again[:2] == [last + 500 + RESEND_MS, last + 500 + 3 * RESEND_MS], (last, again)


def _sent_in(w, ms, step_ms=10):
    """(board time, seq) of every event sent over the next `ms` of board time."""
    out = []
    end = w.now + ms
    while w.now < end:
        out += [(w.now, q) for q in events(w.turn(step_ms))]
    return out


def test_the_first_event_after_a_quiet_spell_goes_once_and_again_only_after_resend_ms():
    # "Resend: when nothing has been acknowledged for resend_ms while events are outstanding"
    # (docs/PROTOCOL.md 7): the wait runs from when the event went out, not from the last
    # acknowledgement before a quiet table (the host drops a duplicate, but it is one frame too many)
    w = Wire("link-quiet")
    w.turn(5000)  # five quiet seconds: everything acknowledged, heartbeats only
    [seq] = w.journal_events(1)
    sent = _sent_in(w, 2500)
    assert [q for _t, q in sent] == [seq, seq], sent
    assert sent[1][0] - sent[0][0] == RESEND_MS, sent


def test_a_hello_long_after_the_last_resend_sends_the_window_once_then_waits_resend_ms():
    w = Wire("link-late-hello", KEY)
    seqs = w.journal_events(3)
    assert events(w.turn(0)) == seqs
    times = _resend_times(w, 7100)  # +1, +3, +7 s: the back-off is at 8x, the next resend 8 s on
    assert len(times) == 3, times
    w.rig.board.rx.extend(proto.encode_frame(proto.hello()))  # 1.5 s after the last resend
    hello_at = times[-1] + 1500
    msgs = w.turn(hello_at - w.now)
    assert events(msgs) == seqs
    # once: the next copy waits resend_ms from this one, with the back-off at 1x again (then 2x)
    sent = _sent_in(w, 3500)
    assert [t for t, q in sent if q == seqs[0]] == [hello_at + RESEND_MS, hello_at + 3 * RESEND_MS], sent


def test_after_a_reboot_delivery_starts_from_the_first_unacknowledged_event():
    w = Wire("link-reboot")
    seqs = w.journal_events(6)
    events(w.turn(1))
    w.rig.boot({"host_timeout_ms": 0})
    w.app = w.rig.app
    w.link = w.app.link
    w.now = w.rig.board.now_ms()
    acked = w.app.journal.acked_seq
    assert acked < seqs[0]
    sent = []
    for _ in range(4):  # PER_TURN a turn from the first turn on
        sent += events(w.turn(1))
    assert sent == list(range(acked + 1, w.app.journal.next_seq)), (acked, sent)  # the boot's own events last


def test_an_ack_with_gap_sends_again_from_the_acknowledged_point_at_once():
    w = Wire("link-gap")
    seqs = w.journal_events(PER_TURN)
    assert events(w.turn(1)) == seqs
    w.put({"t": proto.ACK, "q": seqs[1], "gap": 1})  # the host lost a frame after seqs[1]
    assert events(w.turn(1)) == seqs[2:]


# ---- the reply caches ----------------------------------------------------------------------------
def test_the_last_16_commands_are_answered_from_the_cache_and_the_17th_back_runs_again():
    w = Wire("link-replies")
    # ids 10..26: lock, unlock, lock ... (17 commands, every one accepted); the table ends LOCKED
    for i in range(17):
        name = "lock" if i % 2 == 0 else "unlock"
        assert w.command(10 + i, name)["ok"] == 1
    assert w.app.state["base"] == "LOCKED"
    remote = w.app.journal.next_seq
    # id 11 (unlock) is the 16th newest: its first reply, and the table stays LOCKED
    assert w.command(11, "unlock")["ok"] == 1
    assert w.app.state["base"] == "LOCKED" and w.app.journal.next_seq == remote
    # id 10 (lock) is forgotten: it runs again, and a locked table refuses a lock
    rep = w.command(10, "lock")
    assert rep["ok"] == 0 and rep["err"] == proto.E_STATE, rep


def test_a_repeat_under_another_command_name_is_not_answered_from_the_cache():
    w = Wire("link-replies-name")
    assert w.command(40, "lock")["ok"] == 1
    rep = w.command(40, "unlock")  # same id, another command: a new command, run
    assert rep["ok"] == 1 and w.app.state["base"] == "OPEN"
    rep = w.command(41, "status")
    again = w.command(41, "loop_stats")
    assert "turns" in again and "turns" not in rep


def test_the_last_two_read_replies_are_kept_and_the_third_back_is_asked_again():
    w = Wire("link-read-replies")
    first = w.command(50, "status")
    w.app.record(w.now, "remote", {})  # the journal moves between the reads
    second = w.command(51, "status")
    w.app.record(w.now, "remote", {})
    third = w.command(52, "status")
    w.app.record(w.now, "remote", {})
    assert first["next_seq"] < second["next_seq"] < third["next_seq"] < w.app.journal.next_seq
    assert w.command(51, "status") == second  # kept: the first reply again
    assert w.command(52, "status") == third
    fresh = w.command(50, "status")  # forgotten: asked again, answered as it stands now
    assert fresh["next_seq"] == w.app.journal.next_seq


def test_a_read_reply_too_long_to_send_is_not_kept():
    w = Wire("link-read-long")
    link = w.link
    room = proto.MAX_BODY_BYTES - 2 - proto.MAC_BYTES - 40  # the signed frame and its stamp fit
    for size, kept in ((room, True), (room + 1, False)):
        reply = proto.reply_ok(60 + size % 7, {"x": ""})
        pad = size - len(proto.encode_payload(reply))
        reply["x"] = "a" * pad
        assert len(proto.encode_payload(reply)) == size
        link.remember(reply["id"], "status", reply)
        assert (link.cached_reply(reply["id"], "status") == reply) == kept, (size, kept)
        if kept:  # what is kept can be sent again, sealed, with a long session and counter
            proto.sealed_frame(dict(reply), KEY, "65535.ffffffff", 10 ** 9)


def test_a_read_reply_that_cannot_be_encoded_is_not_kept_and_remembering_it_does_not_raise():
    # Keeping a reply for a repeat is a convenience: a reply the encoder refuses (bytes in it on
    # CPython; MicroPython's json encodes anything) is simply not kept, and a repeat is answered
    # afresh (send() reports what is wrong).
    w = Wire("link-read-odd")
    link = w.link
    odd = {"t": "rep", "id": 61, "ok": 1, "x": b"\x00\x01"}
    try:
        proto.encode_payload(odd)
        encodable = True
    except TypeError:
        encodable = False
    link.remember(61, "status", odd)
    assert (link.cached_reply(61, "status") is not None) == encodable
    assert len(link.read_replies) == (1 if encodable else 0)


# ---- the trust rule and refusals -------------------------------------------------------------
def test_a_refused_replay_or_forgery_is_not_remembered_and_the_authentic_command_still_runs():
    w = Wire("link-forged-id", KEY)
    # a forged command (bad MAC) with an id the real host will use next
    w.rig.board.rx.extend(proto.encode_frame(proto.command(70, "lock", {}), b"\x00" * 32))
    rep = replies(w.turn(1))[70]
    assert rep["err"] == proto.E_BAD_MAC and w.app.state["base"] == "OPEN"
    assert w.command(70, "lock")["ok"] == 1  # the real one is not answered by the forgery's refusal
    assert w.app.state["base"] == "LOCKED"


def test_a_forged_or_replayed_ack_releases_nothing():
    w = Wire("link-forged-ack", KEY)
    seqs = w.journal_events(3)
    events(w.turn(1))
    acked = w.app.journal.acked_seq
    w.rig.board.rx.extend(proto.encode_frame(proto.ack(seqs[-1])))  # unsigned
    w.turn(1)
    assert w.app.journal.acked_seq == acked and w.link.frames_refused == 1
    w.put(proto.ack(seqs[0]))
    w.turn(1)
    assert w.app.journal.acked_seq == seqs[0]
    stale = proto.sealed_frame(proto.ack(seqs[-1]), KEY, w.session, w.counter)  # a counter already taken
    w.rig.board.rx.extend(stale)
    w.turn(1)
    assert w.app.journal.acked_seq == seqs[0] and w.link.frames_refused == 2


def test_refusals_beyond_4_a_minute_are_counted_into_one_event_when_the_minute_ends():
    w = Wire("link-refusal-limit", KEY)
    start = w.app.journal.next_seq
    w.link.refusal_window_ms = w.now  # the minute starts now
    opened = w.now
    for i in range(7):
        w.rig.board.rx.extend(proto.encode_frame(proto.command(100 + i, "lock", {}), b"\x01" * 32))
        w.turn(1)
    refused = [q for q in range(start, w.app.journal.next_seq)]
    assert len(refused) == REFUSALS_A_MINUTE, refused  # four journaled, one by one
    assert w.link.refusals_held == {proto.E_BAD_MAC: 3}
    w.turn(opened + 60000 - 1 - w.now)  # the minute has not ended
    assert w.app.journal.next_seq == start + REFUSALS_A_MINUTE
    w.turn(1)  # it has: the three counted are one event
    assert w.app.journal.next_seq == start + REFUSALS_A_MINUTE + 1
    assert w.link.refusals_held == {}
    last = w.app.journal.read_payload(w.app.journal.unacked_count() - 1)
    assert b'"count":{"BAD_MAC":3}' in last, last
    # the new minute journals four one by one again
    for i in range(5):
        w.rig.board.rx.extend(proto.encode_frame(proto.command(200 + i, "lock", {}), b"\x01" * 32))
        w.turn(1)
    assert w.app.journal.next_seq == start + REFUSALS_A_MINUTE + 1 + REFUSALS_A_MINUTE
    assert w.link.refusals_held == {proto.E_BAD_MAC: 1}


# ---- what the board counts as refused -------------------------------------------------------------
def test_frames_a_host_has_no_business_sending_are_refused_and_counted_one_each():
    """The board's own kinds (event, reply), a kind the protocol does not have, and anything but
    hello or a command in another version's frame: acted on by nothing, each counted once in
    status' `refused`."""
    w = Wire("link-counted")
    seqs = w.journal_events(2)
    events(w.turn(1))
    for frame in (proto.encode_frame(proto.ack(seqs[-1]), version=2),
                  proto.encode_frame(proto.heartbeat(), version=2),
                  proto.encode_frame({"t": proto.EVENT, "q": 1, "k": "coin"}),
                  proto.encode_frame(proto.reply_ok(3, {"meter": 5})),
                  proto.encode_frame({"t": "zz", "q": seqs[-1]})):  # no kind of the protocol
        w.rig.board.rx.extend(frame)
    w.turn(1)
    assert w.link.frames_refused == 5
    assert w.app.journal.unacked_count() >= 2  # the old version's ack released nothing
    assert w.command(90, "status")["refused"] == 5


def test_a_command_that_breaks_its_handler_is_journaled_as_a_frame_error_not_a_reset():
    """display_test with ms=1e400: MicroPython reads an infinite float, int() of it raises
    OverflowError, which no handler expects. The board goes on: the frame is counted as refused
    and journaled as `frame_error` (so the host's ledger shows it), and the next command runs."""
    w = Wire("link-frame-error")
    payload = b'{"t":"cmd","id":91,"c":"display_test","a":{"ms":1e400}}'
    w.rig.board.rx.extend(proto.frame_from_payload(payload))
    msgs = w.turn(1)
    assert 91 not in replies(msgs)
    assert w.link.frames_refused == 1
    last = w.app.journal.read_payload(w.app.journal.unacked_count() - 1)
    assert b'"k":"frame_error"' in last and b"OverflowError" in last and b'"t":"cmd"' in last, last
    assert w.command(92, "status")["refused"] == 1


def test_commands_that_break_their_handler_are_journaled_within_the_refusal_limit():
    """The attack: the same breaking command sent over and over. Each one used to add a
    `frame_error` record, outside the 4-a-minute limit every other refusal keeps, so a sender
    could fill the journal and the flash. Now the first 4 of a minute are journaled and the rest
    counted into one record when the minute ends, like any refusal."""
    w = Wire("link-frame-error-flood")
    before = w.app.journal.next_seq
    for cid in range(100, 130):
        payload = b'{"t":"cmd","id":%d,"c":"display_test","a":{"ms":1e400}}' % cid
        w.rig.board.rx.extend(proto.frame_from_payload(payload))
        w.turn(1)
    assert w.link.frames_refused == 30
    assert w.app.journal.next_seq - before == 4
    w.turn(61000)  # the minute is over: the 26 held back become one counted record
    w.command(131, "status")
    counted = [w.app.journal.read_payload(i) for i in range(w.app.journal.unacked_count())]
    counted = [p for p in counted if b'"k":"cmd_refused"' in p]
    assert counted and b'"frame_error":26' in counted[-1], counted


# ---- heartbeats and counters ---------------------------------------------------------------------
def test_after_power_up_the_heartbeat_goes_every_heartbeat_ms_of_board_time():
    from table.app import TableApp
    w = Wire("link-heartbeat")
    w.app = w.rig.app = TableApp(w.rig.board, 0)  # power-up: a board's clock starts at 0
    w.link = w.app.link
    w.now = 0
    beats = []
    for _ in range(3100):
        for m in w.turn(1):
            if m["t"] == proto.HEARTBEAT:
                beats.append(w.now)
                assert m["q"] == w.app.journal.next_seq - 1  # the newest event, so a host sees what it lacks
        if w.now == 1500:
            w.journal_events(3)
    assert beats == [1000, 2000, 3000], beats


def test_in_a_new_session_the_first_counter_a_host_may_use_is_0():
    """hello's `hn` is the last counter the board took in this session: none yet (-1). A frame
    numbered -1 is not above it (REPLAY); 0 is taken."""
    w = Wire("link-first-counter", KEY)
    before = w.session
    w.rig.boot({"host_timeout_ms": 0})
    w.app = w.rig.app
    w.link = w.app.link
    w.rig.board.rx.extend(proto.encode_frame(proto.hello()))
    [hello] = [m for m in w.turn(1) if m["t"] == proto.HELLO]
    assert hello["hn"] == -1 and hello[proto.SESSION] != before
    session = hello[proto.SESSION]
    w.rig.board.rx.extend(proto.sealed_frame(proto.command(93, "lock", {}), KEY, session, -1))
    assert replies(w.turn(1))[93]["err"] == proto.E_REPLAY and w.app.state["base"] == "OPEN"
    w.rig.board.rx.extend(proto.sealed_frame(proto.command(94, "lock", {}), KEY, session, 0))
    assert replies(w.turn(1))[94]["ok"] == 1 and w.app.state["base"] == "LOCKED"


# ---- what a refusal leaves in the journal ---------------------------------------------------------
def _newest_event(w):
    import json
    return json.loads(w.app.journal.read_payload(w.app.journal.unacked_count() - 1))


def test_a_refused_command_is_journaled_with_its_id_name_and_reason_cut_to_size():
    """A refusal worth a record names the command id, its name (16 characters at most) and the
    reason (80 at most): an attacker's long session value must not make the record long."""
    w = Wire("link-refusal-fields", KEY)
    name = "award_with_a_very_long_name"
    w.rig.board.rx.extend(proto.sealed_frame(proto.command(95, name, {}), KEY, "s" * 100, w.counter + 1))
    rep = replies(w.turn(1))[95]
    assert rep["err"] == proto.E_REPLAY
    ev = _newest_event(w)
    assert ev["k"] == "cmd_refused" and ev["id"] == 95 and ev["c"] == name[:16] and ev["err"] == proto.E_REPLAY
    assert ev["msg"] == rep["msg"][:80] and len(rep["msg"]) > 80, ev


def test_a_refused_frame_that_is_not_a_command_is_journaled_with_its_kind_and_reason_cut_to_size():
    w = Wire("link-refusal-frame", KEY)
    w.rig.board.rx.extend(proto.sealed_frame({"t": "ack_with_long_kind", "q": 1}, KEY, "s" * 100, w.counter + 1))
    w.turn(1)
    ev = _newest_event(w)
    assert ev["k"] == "cmd_refused" and ev["frame"] == "ack_with" and ev["err"] == proto.E_REPLAY, ev
    assert len(ev["msg"]) == 60 and ev["msg"].startswith("frame of another session"), ev


def test_a_hello_of_versions_this_board_does_not_speak_is_journaled_with_the_offer_cut_to_40():
    w = Wire("link-hello-versions")
    offered = list(range(100, 130))
    w.rig.board.rx.extend(proto.encode_frame({"t": proto.HELLO, "v": offered, "role": "host"}))
    msgs = w.turn(1)
    assert [m for m in msgs if m["t"] == proto.HELLO]  # answered all the same: the host learns ours
    ev = _newest_event(w)
    assert ev["k"] == "version_mismatch" and ev["offered"] == str(offered)[:40], ev


def test_a_command_without_an_integer_id_is_answered_under_id_minus_1_and_not_remembered():
    w = Wire("link-no-id")
    w.rig.board.rx.extend(proto.encode_frame({"t": proto.COMMAND, "id": "7", "c": "lock", "a": {}}))
    rep = replies(w.turn(1))[-1]
    assert rep["err"] == proto.E_BAD_ARGS and w.app.state["base"] == "OPEN"
    assert w.command(7, "lock")["ok"] == 1


def test_an_authentic_refusal_is_remembered_like_any_reply():
    """A host repeating a refused command gets the first refusal, even though the table has
    changed since so that it would now run: a repeat never does anything."""
    w = Wire("link-refusal-kept", KEY)
    rep = w.command(96, "unlock")
    assert rep["err"] == proto.E_STATE  # the table is OPEN
    assert w.command(97, "lock")["ok"] == 1
    again = w.command(96, "unlock")
    assert (again["err"], again["msg"]) == (rep["err"], rep["msg"]), again
    assert w.app.state["base"] == "LOCKED"


def test_provision_alone_is_taken_unsigned_and_only_as_a_command():
    """Physical presence (the service switch) stands in for the MAC for `provision` and nothing
    else: on a provisioned board an unsigned provision is judged by the switch (not BAD_MAC), and
    an unsigned ack that names c=provision is still an unsigned ack: refused, releases nothing."""
    w = Wire("link-provision", KEY)
    rep = w.command(98, "provision", {"key": (b"N" * 32).hex()}, signed=False)
    assert rep["err"] == proto.E_NEEDS_SERVICE_SWITCH, rep
    seqs = w.journal_events(2)
    events(w.turn(1))
    acked = w.app.journal.acked_seq
    w.rig.board.rx.extend(proto.encode_frame({"t": proto.ACK, "q": seqs[-1], "c": "provision"}))
    w.turn(1)
    assert w.app.journal.acked_seq == acked and w.link.frames_refused == 2


def test_an_ack_without_a_sequence_number_changes_nothing():
    w = Wire("link-ack-no-number")
    seqs = w.journal_events(2)
    events(w.turn(1))
    top = w.app.journal.next_seq
    for q in ("%d" % seqs[-1], None, [seqs[-1]]):
        w.rig.board.rx.extend(proto.encode_frame({"t": proto.ACK, "q": q}))
        w.turn(1)
    assert w.app.journal.acked_seq < seqs[0]
    assert w.app.journal.next_seq == top and w.link.frames_refused == 0  # nothing journaled, no frame error


def test_the_board_counts_its_frames_upwards_within_a_session():
    w = Wire("link-board-counter", KEY)
    counters = [w.command(100 + i, "status")[proto.COUNTER] for i in range(4)]
    assert all(b > a for a, b in zip(counters, counters[1:])), counters


def test_a_refusal_a_whole_minute_after_the_window_opened_starts_a_new_window():
    """With nothing held back, the minute is closed by the next refusal itself: one that comes
    60 s (to the millisecond) after the window opened is journaled as itself, not counted."""
    w = Wire("link-refusal-minute", KEY)
    w.link.refusal_window_ms = w.now
    opened = w.now
    for i in range(REFUSALS_A_MINUTE):
        w.rig.board.rx.extend(proto.encode_frame(proto.command(300 + i, "lock", {}), b"\x01" * 32))
        w.turn(1)
    assert w.link.refusals_held == {}
    top = w.app.journal.next_seq
    w.rig.board.rx.extend(proto.encode_frame(proto.command(310, "lock", {}), b"\x01" * 32))
    w.turn(opened + 60000 - w.now)
    assert w.app.journal.next_seq == top + 1 and w.link.refusals_held == {}
    ev = _newest_event(w)
    assert ev["k"] == "cmd_refused" and ev["id"] == 310 and "count" not in ev, ev


def test_a_board_whose_storage_cannot_be_read_still_answers_a_hello():
    """Storage it cannot read (a journal without any checkpoint): the board boots into the storage
    fault instead of crashing, says hello without an acknowledged number, and sends no events."""
    import os
    w = Wire("link-no-storage")
    data = w.rig.dir + "/data"
    for name in os.listdir(data):
        if name.startswith("ck"):
            os.remove(data + "/" + name)
    w.rig.boot({"host_timeout_ms": 0})
    w.app = w.rig.app
    w.link = w.app.link
    assert w.app.journal is None and "storage" in w.app.faults
    w.rig.board.rx.extend(proto.encode_frame(proto.hello()))
    msgs = w.turn(1) + w.turn(2000)
    [hello] = [m for m in msgs if m["t"] == proto.HELLO]
    assert "a" not in hello and events(msgs) == []
    assert w.command(320, "status")["ok"] == 1


# ---- frames of the boot before: stale until the host speaks, replays after (table/link.py _stale) --
def _rebooted(w):
    """The board restarts; the host's frames of the old session are still on their way. Returns
    that old session and the last counter the host used in it."""
    old_session, counter = w.session, w.counter
    w.rig.boot({"host_timeout_ms": 0})
    w.app = w.rig.app
    w.link = w.app.link
    w.session = None
    w.counter = -1  # a new session: the host's counters start again
    w.turn(1)
    return old_session, counter


def test_a_stale_command_without_an_integer_id_is_answered_under_id_minus_1():
    """A command sealed in the last boot's session that reaches the new boot before the host
    speaks is answered, not run; with no integer id to answer under, the answer goes under -1,
    the id no host gives a command (as for an unsealed command without one)."""
    w = Wire("link-stale-no-id", KEY)
    old_session, counter = _rebooted(w)
    w.rig.board.rx.extend(proto.sealed_frame({"t": proto.COMMAND, "id": "7", "c": "lock", "a": {}},
                                             KEY, old_session, counter + 1))
    rep = replies(w.turn(1))
    assert list(rep) == [-1] and rep[-1]["err"] == proto.E_REPLAY, rep
    assert w.link.frames_stale == 1 and w.link.frames_refused == 0 and w.app.state["base"] == "OPEN"


def test_once_the_host_has_used_counter_0_in_the_new_session_an_old_sessions_frame_is_a_replay():
    """The host has spoken in this session as soon as one counter is taken, 0 included (the first
    a host may use): the old session's frames are then refused as replays, not passed over as stale."""
    w = Wire("link-stale-after-0", KEY)
    old_session, counter = _rebooted(w)
    w.rig.board.rx.extend(proto.encode_frame(proto.hello()))
    w.turn(1)
    assert w.counter == -1
    assert w.command(330, "status")["ok"] == 1  # sealed with counter 0
    assert w.link.host_counter == 0
    w.rig.board.rx.extend(proto.sealed_frame(proto.heartbeat(), KEY, old_session, counter + 1))
    w.turn(1)
    assert w.link.frames_stale == 0 and w.link.frames_refused == 1


def test_a_frame_whose_session_is_not_text_is_refused_even_before_the_host_speaks():
    """Stale is only a session of the form an earlier boot of this board wrote; a number, a list
    or nothing in its place is refused and counted, whoever sealed it."""
    w = Wire("link-stale-session-type", KEY)
    _rebooted(w)
    for session in (1, None, [1]):
        w.rig.board.rx.extend(proto.sealed_frame(proto.heartbeat(), KEY, session, 5))
        w.turn(1)
    assert w.link.frames_stale == 0 and w.link.frames_refused == 3


if __name__ == "__main__":
    mptest.run(globals())
