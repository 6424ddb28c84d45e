"""The host's end of a board's link (tablectl.link.BoardLink) under the trust rule, on a real
pseudo-terminal opened with pyserial, against a board side made of real protocol frames
(boardside.PtyBoard). Rule (docs/SECURITY.md, table/protocol.py): "once a board holds a table
key, every frame either way carries the MAC ... a frame from an earlier boot, or one replayed
within this boot, is refused."
"""
import hashlib
import hmac
import os
import time

import pytest

from boardside import PtyBoard
from table import protocol as proto
from tablectl.errors import TablectlError
from tablectl.keys import KeyStore
from tablectl.link import BoardLink, key_gone_text, link_timeout_s, open_port, provision, resend_interval_s

KEY = bytes(range(1, 33))
OTHER_KEY = bytes(32)


@pytest.fixture
def keys(tmp_path):
    return KeyStore(str(tmp_path / "keys"))


@pytest.fixture
def rig(keys):
    """make(key=..., held=...): a board on a pty (holding `key`) and the host's link to it, the
    host's key store holding `held` for that board."""
    made = []

    def make(key=None, held=None, board_id="b1", session=1001):
        if held is not None:
            keys.set_table_key(board_id, held)
        board = PtyBoard(board_id, key, session)
        ser = open_port(board.port)
        made.append((board, ser))
        return board, BoardLink(ser, keys)
    yield make
    for board, ser in made:
        ser.close()
        board.close()


def read_until(link, predicate, timeout_s=3.0):
    """Read the link until a message satisfies predicate; returns (it, everything read)."""
    seen = []
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        for msg in link.read():
            seen.append(msg)
            if predicate(msg):
                return msg, seen
    return None, seen


def settle(link, seconds=0.3):
    """Everything the link passes on within `seconds` (to show that something was NOT passed)."""
    out = []
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        out.extend(link.read())
    return out


def is_hello(m):
    return m.get("t") == proto.HELLO


# ---- hello: who is on the port ------------------------------------------------------------------
def test_an_unkeyed_boards_hello_names_the_board_and_what_it_holds_acknowledged(rig):
    board, link = rig()
    board.hello(acked_seq=12)
    msg, _ = read_until(link, is_hello)
    assert msg["b"] == "b1"
    assert (link.board_id, link.key, link.board_acked) == ("b1", None, 12)


@pytest.mark.parametrize("odd", ["12", 12.0, True, [12]])
def test_what_a_board_holds_acknowledged_is_a_whole_number_or_unknown(rig, odd):
    # The ledger explains a gap by it (a board's acknowledged events the host never saw): a text,
    # a fraction or a boolean in its place is no number to explain a gap with.
    board, link = rig()
    board.hello(acked_seq=odd)
    msg, _ = read_until(link, is_hello)
    assert msg["b"] == "b1"
    assert link.board_id == "b1" and link.board_acked is None


def test_an_unsigned_hello_of_a_board_whose_key_the_host_holds_is_refused(rig):
    board, link = rig(key=KEY, held=KEY)
    board.hello(key=None)
    assert settle(link) == []
    assert link.board_id is None and link.frames_refused == 1
    assert link.last_refusal.startswith("unsigned hello of keyed board b1: the board has lost its key")
    assert link.lost_key_board == "b1"  # named, so a provision can reach it


def test_a_hello_signed_with_another_key_is_refused(rig):
    board, link = rig(key=OTHER_KEY, held=KEY)
    board.hello()
    assert settle(link) == [] and link.board_id is None and link.frames_refused == 1


def test_after_a_signed_hello_every_host_frame_is_sealed_with_the_session_and_a_rising_counter(rig):
    board, link = rig(key=KEY, held=KEY, session=5005)
    board.hello()
    read_until(link, is_hello)
    assert link.session == 5005 and link.key is not None
    link.send(proto.heartbeat())
    link.send(proto.command(1, "status"))
    first = board.wait_for(lambda m: m.get("t") == proto.HEARTBEAT)
    second = board.wait_for(lambda m: m.get("t") == proto.COMMAND)
    assert (first["s"], first["n"]) == (5005, 0) and (second["s"], second["n"]) == (5005, 1)
    assert board.refused == []   # the board's own check (MAC, session, counter) took both


def test_a_restarted_host_goes_on_above_the_counter_the_board_last_took(rig):
    """The board's hello says the last counter it took from a host ("hn"): a new host process
    must not reuse a counter, or the board would refuse its frames as replays."""
    board, link = rig(key=KEY, held=KEY)
    board.host_counter = 41
    board.hello(host_counter=41)
    read_until(link, is_hello)
    link.send(proto.heartbeat())
    assert board.wait_for(lambda m: m.get("t") == proto.HEARTBEAT)["n"] == 42
    assert board.refused == []


def test_an_unkeyed_board_is_spoken_to_in_plain_frames(rig):
    board, link = rig()
    board.hello()
    read_until(link, is_hello)
    link.send(proto.command(3, "status"))
    msg = board.wait_for(lambda m: m.get("t") == proto.COMMAND)
    assert "s" not in msg and "n" not in msg


# ---- events: fresh by their number, signed by the board -------------------------------------------
def test_a_signed_event_is_passed_on_with_the_exact_bytes_the_board_signed(rig):
    board, link = rig(key=KEY, held=KEY)
    board.hello()
    read_until(link, is_hello)
    board.event(1, seat=2, inc=70)
    ev, _ = read_until(link, lambda m: m.get("t") == proto.EVENT)
    assert (ev["q"], ev["seat"], ev["inc"]) == (1, 2, 70)
    # what the ledger keeps lets an audit check the board's own MAC, with no help from the host
    signed = bytes((proto.VERSION, proto.FLAG_MAC)) + ev["_raw"].encode()
    assert hmac.new(KEY, signed, hashlib.sha256).hexdigest() == ev["_mac"]


def test_an_event_signed_with_another_key_is_refused_and_not_passed_on(rig):
    board, link = rig(key=KEY, held=KEY)
    board.hello()
    read_until(link, is_hello)
    board.event(1, key=OTHER_KEY)
    board.event(2, key=None)
    assert settle(link) == []
    assert link.frames_refused == 2 and link.last_refusal == "event without a valid MAC"


def test_a_signed_event_naming_another_board_is_refused(rig):
    board, link = rig(key=KEY, held=KEY)
    board.hello()
    read_until(link, is_hello)
    board.event(1, board="b2")
    assert settle(link) == []
    assert link.last_refusal == "signed event naming board 'b2' on b1's port"


def test_an_unkeyed_boards_event_naming_another_board_is_refused(rig):
    board, link = rig()
    board.hello()
    read_until(link, is_hello)
    board.event(1, board="b2")
    board.event(2)
    got = settle(link)
    assert [m["q"] for m in got if m.get("t") == proto.EVENT] == [2]
    assert link.last_refusal == "event of board 'b2' on b1's port"


def test_an_event_in_a_frame_of_another_protocol_version_is_not_taken(rig):
    """Not acknowledged, so the board sends it again in a frame the host speaks."""
    board, link = rig()
    board.hello()
    read_until(link, is_hello)
    board.write(proto.encode_frame({"t": proto.EVENT, "b": "b1", "k": "coin", "q": 1}, version=2))
    assert settle(link) == [] and link.frames_wrong_version == 1


# ---- replies: this session, a counter above the last ----------------------------------------------
def test_a_reply_from_an_earlier_boot_is_refused_and_asks_for_a_new_hello(rig):
    board, link = rig(key=KEY, held=KEY, session=2002)
    board.hello()
    read_until(link, is_hello)
    board.send(proto.reply_ok(9, {"meter": 1}), session=2001, counter=50)
    assert settle(link) == []
    assert link.last_refusal.startswith("REPLAY: frame of another session")
    assert link.stale_session_seen


def test_a_replayed_reply_is_refused_the_second_time(rig):
    board, link = rig(key=KEY, held=KEY)
    board.hello()
    read_until(link, is_hello)
    frame = board.frame(proto.reply_ok(9, {"meter": 1}))
    board.write(frame)
    board.write(frame)
    got = settle(link)
    assert [m["id"] for m in got] == [9]
    assert link.frames_refused == 1 and link.last_refusal.startswith("REPLAY: counter")
    assert not link.stale_session_seen


def test_an_unsigned_reply_from_a_keyed_board_is_refused(rig):
    board, link = rig(key=KEY, held=KEY)
    board.hello()
    read_until(link, is_hello)
    board.send(proto.reply_ok(9, {"meter": 1}), key=None)
    assert settle(link) == [] and link.last_refusal == "BAD_MAC: MAC missing or wrong"


# ---- commands ---------------------------------------------------------------------------------------
def test_a_command_is_repeated_under_the_same_id_until_the_board_answers(rig):
    board, link = rig(key=KEY, held=KEY)
    board.hello()
    read_until(link, is_hello)
    heard = []

    def answer_the_second_time(msg):
        heard.append(msg)
        if len(heard) == 1:
            board.event(1)  # something else arrives meanwhile
        else:
            board.reply(msg["id"], state="LOCKED")
    board.on_command = answer_the_second_time
    others = []
    reply = link.command("lock", timeout_s=5, on_message=others.append)
    assert reply["state"] == "LOCKED"
    assert len(heard) == 2 and heard[0]["id"] == heard[1]["id"] == reply["id"]
    assert heard[1]["n"] > heard[0]["n"]   # each repeat sealed afresh
    assert [m["q"] for m in others] == [1]


def test_a_command_nobody_answers_fails_in_one_line(rig):
    board, link = rig()
    board.hello()
    read_until(link, is_hello)
    with pytest.raises(TablectlError, match=r"^the board did not answer 'status' within 1 s$"):
        link.command("status", timeout_s=1)


# ---- how long the host waits: today's defaults, or TABLECTL_LINK_TIMEOUT_S for a slow board -----
def test_the_wait_for_a_board_is_the_default_unless_the_environment_says_otherwise(monkeypatch):
    monkeypatch.delenv("TABLECTL_LINK_TIMEOUT_S", raising=False)
    assert (link_timeout_s(3.0), link_timeout_s(5.0)) == (3.0, 5.0)
    monkeypatch.setenv("TABLECTL_LINK_TIMEOUT_S", "120")
    assert (link_timeout_s(3.0), link_timeout_s(5.0)) == (120.0, 120.0)


@pytest.mark.parametrize("raw, seconds", [("0.5", 0.5), ("86400", 86400.0), (" 7 ", 7.0), ("1e-3", 0.001)])
def test_a_wait_above_0_and_up_to_a_day_is_taken(monkeypatch, raw, seconds):
    monkeypatch.setenv("TABLECTL_LINK_TIMEOUT_S", raw)
    assert link_timeout_s(3.0) == seconds


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_wait_is_the_default(monkeypatch, blank):
    monkeypatch.setenv("TABLECTL_LINK_TIMEOUT_S", blank)
    assert link_timeout_s(3.0) == 3.0


@pytest.mark.parametrize("bad", ["soon", "0", "-5", "nan", "1e9", "86400.5", "inf", "-0.5"])
def test_a_wait_that_is_not_a_number_of_seconds_is_a_one_line_error(monkeypatch, bad):
    monkeypatch.setenv("TABLECTL_LINK_TIMEOUT_S", bad)
    with pytest.raises(TablectlError, match=r"^TABLECTL_LINK_TIMEOUT_S=.*number above 0"):
        link_timeout_s(3.0)


def test_a_long_wait_repeats_a_command_a_tenth_as_often_and_the_defaults_as_before():
    assert (resend_interval_s(3.0, 0.5), resend_interval_s(5.0, 0.7)) == (0.5, 0.7)
    assert resend_interval_s(120.0, 0.5) == 12.0


def test_a_command_nobody_answers_waits_as_long_as_the_environment_says(rig, monkeypatch):
    board, link = rig()
    board.hello()
    read_until(link, is_hello)
    monkeypatch.setenv("TABLECTL_LINK_TIMEOUT_S", "1.5")
    with pytest.raises(TablectlError, match=r"^the board did not answer 'status' within 2 s$"):
        link.command("status")  # 1.5 s, as the message says (rounded)


def test_hello_with_no_board_on_the_port_says_so(rig):
    _board, link = rig()
    with pytest.raises(TablectlError, match="^no board answered on the port within 0.4 s: is it powered"):
        link.hello(timeout_s=0.4)


def test_hello_and_a_command_wait_3_s_by_default(rig, monkeypatch):
    monkeypatch.delenv("TABLECTL_LINK_TIMEOUT_S", raising=False)
    _board, link = rig()
    with pytest.raises(TablectlError, match="^no board answered on the port within 3 s"):
        link.hello()
    board, link = rig(board_id="b2")
    board.hello()
    read_until(link, is_hello)
    with pytest.raises(TablectlError, match=r"^the board did not answer 'status' within 3 s$"):
        link.command("status")


def test_hello_is_said_again_every_0_3_s_until_a_board_answers(rig):
    # a board that missed the first hello (still booting) is found by the next one, within 1 s
    board, link = rig()
    heard = []

    def on_message(msg):
        if msg.get("t") == proto.HELLO:
            heard.append(time.monotonic())
            if len(heard) == 2:
                board.hello()
    board.on_message = on_message
    assert link.hello(timeout_s=1.0)["b"] == "b1"
    assert len(heard) == 2 and heard[1] - heard[0] >= 0.3, heard  # not more often than that


def test_a_command_is_said_again_every_0_5_s_with_its_arguments(rig):
    board, link = rig()
    board.hello()
    read_until(link, is_hello)
    heard = []

    def answer_the_second_time(msg):
        heard.append((time.monotonic(), msg))
        if len(heard) == 2:
            board.reply(msg["id"], ok=True)
    board.on_command = answer_the_second_time
    assert link.command("lock", {"reason": "count"}, timeout_s=1.0)["ok"] == 1
    (t0, first), (t1, second) = heard[:2]
    assert first["a"] == second["a"] == {"reason": "count"} and first["id"] == second["id"]
    assert t1 - t0 >= 0.5, heard  # not more often than that


@pytest.mark.timeout(30)
def test_a_command_to_a_rebooted_board_that_no_longer_answers_fails_within_its_wait(rig):
    # the hello the command says first (a reply of a new session was heard) waits only for what
    # is left of the command's own wait, at least 0.5 s; then the command fails in one line
    board, link = rig(key=KEY, held=KEY, session=3003)
    board.hello()
    read_until(link, is_hello)
    board.session = 3004
    board.send(proto.reply_ok(9, {"meter": 1}))
    settle(link)
    assert link.stale_session_seen
    with pytest.raises(TablectlError, match=r"^the board on the port did not pass the host's checks \(REPLAY: frame "
                                            "of another session"):
        link.command("meters", timeout_s=1.0)


def test_hello_from_a_board_that_fails_the_checks_says_which_check(rig):
    board, link = rig(key=OTHER_KEY, held=KEY)
    board.hello()
    with pytest.raises(TablectlError, match="did not pass the host's checks \\(hello of keyed board b1 "
                                            "without a valid MAC\\)"):
        link.hello(timeout_s=0.5)


def test_a_board_being_provisioned_is_trusted_only_with_the_key_the_host_sent(rig, keys):
    board, link = rig()
    board.hello()
    read_until(link, is_hello)
    new_key = bytes(range(100, 132))
    link.expect_key(new_key)
    board.key = proto.as_key(OTHER_KEY)        # a frame signed with some other key: no key taken
    board.send(proto.reply_ok(4, {}))
    settle(link)
    assert link.key is None
    board.key = proto.as_key(new_key)          # the board took the key the host sent
    board.send(proto.reply_ok(5, {}))
    msg, _ = read_until(link, lambda m: m.get("id") == 5)
    assert msg is not None and link.key.raw == new_key


def test_a_port_that_is_not_there_is_a_one_line_error(tmp_path):
    with pytest.raises(TablectlError, match="^cannot open %s: " % (tmp_path / "ttyNONE")):
        open_port(str(tmp_path / "ttyNONE"))
    with pytest.raises(TablectlError, match="^say which board: --port PORT"):
        open_port(None)


# ---- what else the link refuses or ignores ------------------------------------------------------------
def test_a_board_hello_without_a_board_id_is_refused(rig):
    board, link = rig()
    board.send({"t": proto.HELLO, "role": "board", "v": [proto.VERSION]})
    assert settle(link) == [] and link.last_refusal == "board hello without a board id"
    assert link.board_id is None


def test_an_unsigned_hello_naming_another_board_on_a_keyed_boards_port_is_not_a_swap(rig):
    board, link = rig(key=KEY, held=KEY)
    board.hello()
    read_until(link, is_hello)
    board.send(proto.hello("b2", "test-fw", 1, role="board", session=5), key=None)
    assert settle(link) == [] and link.last_refusal == "unsigned hello naming b2 on b1's port"
    assert (link.board_id, link.key.raw) == ("b1", KEY)


def test_a_hello_of_another_host_on_the_line_is_ignored(rig):
    board, link = rig()
    board.send(proto.hello())  # role "host": not a board saying who it is
    assert settle(link) == [] and link.board_id is None and link.frames_refused == 0


def test_an_unsigned_event_of_a_board_whose_key_the_host_holds_is_refused_before_its_hello(rig):
    board, link = rig(key=None, held=KEY)  # the host holds b1's key; this frame is not signed
    board.event(1, seat=0, inc=70)
    assert settle(link) == [] and link.last_refusal == "event of keyed board b1 before its hello"
    assert link.board_id is None


def test_an_event_signed_with_a_key_the_host_does_not_hold_is_not_filed(rig):
    # A host files nothing it cannot verify. A board keyed by someone else (or
    # whose key this host lost) is refused; one signing with the key this host sent it is taken,
    # the MAC it made kept with the event so an audit can check it.
    board, link = rig()
    board.hello()
    read_until(link, is_hello)
    board.key = proto.as_key(OTHER_KEY)
    board.event(1, seat=0, inc=70)
    msg, _ = read_until(link, lambda m: m.get("t") == proto.EVENT)
    assert msg is None and link.key is None and link.frames_refused >= 1
    link.expect_key(KEY)
    board.key = proto.as_key(KEY)
    board.event(1, seat=0, inc=70)
    msg, _ = read_until(link, lambda m: m.get("t") == proto.EVENT)
    assert msg is not None and link.key is not None and link.key.raw == KEY
    # the MAC the board made: HMAC-SHA256 over the frame's version bytes and the exact payload
    assert msg["_mac"] == hmac.new(KEY, bytes((1, 1)) + msg["_raw"].encode(), hashlib.sha256).hexdigest()
    # an event names no session: the one its hello named still holds, and the host seals for it
    assert link.session == 1001
    link.send(proto.heartbeat())
    assert board.wait_for(lambda m: m.get("t") == proto.HEARTBEAT)["s"] == 1001 and board.refused == []


def test_a_keyed_link_with_no_session_refuses_to_send_in_one_line(rig, keys):
    # The board was learned from its event (its hello missed), then its key reached the key store
    # (another host provisioned it): nothing can be sealed until a hello names the session.
    board, link = rig()
    board.event(1, seat=0, inc=70)
    read_until(link, lambda m: m.get("t") == proto.EVENT)
    keys.set_table_key("b1", KEY)
    board.key = proto.as_key(KEY)
    board.send(proto.heartbeat())
    settle(link)
    assert link.key is not None and link.session is None
    with pytest.raises(TablectlError) as err:
        link.send(proto.command(1, "status", {}))
    assert str(err.value) == "board b1: no session yet (its hello was not heard)"


def test_a_command_after_the_board_rebooted_says_hello_first(rig):
    board, link = rig(key=KEY, held=KEY, session=3003)
    board.answers_hello = True
    board.hello()
    read_until(link, is_hello)
    link.send(proto.heartbeat())
    assert board.wait_for(lambda m: m.get("t") == proto.HEARTBEAT)["n"] == 0
    board.session = 3004  # the board rebooted: its frames are of a new session
    board.counter = 0
    board.host_counter = -1
    board.send(proto.reply_ok(9, {"meter": 1}))
    settle(link)
    assert link.stale_session_seen
    counters = []

    def answer(msg):
        counters.append(msg["n"])
        board.reply(msg["id"], meter=7)
    board.on_command = answer
    assert link.command("meters", timeout_s=5)["meter"] == 7
    assert link.session == 3004 and not link.stale_session_seen
    assert counters[0] == 0  # counters are per session: the new one starts again from 0


def test_the_key_verified_at_hello_holds_until_the_next_hello(rig, keys):
    # the board's key in the store changes (a key change under way): the link goes on with the key
    # it verified the board's hello with; the next hello takes the new one
    board, link = rig(key=KEY, held=KEY)
    board.hello()
    read_until(link, is_hello)
    keys.set_table_key("b1", OTHER_KEY)
    board.event(1, seat=0, inc=70)
    ev, _ = read_until(link, lambda m: m.get("t") == proto.EVENT)
    assert ev is not None and ev["q"] == 1 and link.key.raw == KEY
    board.key = proto.as_key(OTHER_KEY)
    board.hello()
    read_until(link, is_hello)
    assert link.key.raw == OTHER_KEY


def test_a_board_saying_hello_again_in_the_same_session_does_not_rewind_the_hosts_counter(rig):
    board, link = rig(key=KEY, held=KEY)
    board.hello()
    read_until(link, is_hello)
    for _ in range(3):
        link.send(proto.heartbeat())
    board.wait_for(lambda m: m.get("t") == proto.HEARTBEAT and m["n"] == 2)
    board.hello(host_counter=0)  # the same session, an older view of the host's counter
    read_until(link, is_hello)
    link.send(proto.heartbeat())
    assert board.wait_for(lambda m: m.get("t") == proto.HEARTBEAT and m["n"] > 2)["n"] == 3
    assert board.refused == []


def test_hello_and_command_pass_over_other_frames_while_they_wait(rig):
    board, link = rig()

    def on_message(msg):
        if msg.get("t") == proto.HELLO:
            board.event(1, seat=0, inc=70)  # something else first
            board.hello()
        elif msg.get("t") == proto.COMMAND:
            board.event(2, seat=0, inc=70)
            board.reply(msg["id"], meter=9)
    board.on_message = on_message
    assert link.hello(timeout_s=5)["b"] == "b1"
    assert link.command("meters", timeout_s=5)["meter"] == 9  # no on_message: the event is passed over


# ---- the key's life on the host (docs/SECURITY.md "Keys") ----------------------------------------
def test_a_key_sent_before_the_host_stopped_is_taken_when_the_board_signs_with_it(rig, keys):
    # The host stored the new key (pending), sent the provision, and stopped before the answer;
    # the board took it. The next host hears a hello signed with the new key: the key store
    # makes it the board's key, the old one kept for old MACs.
    new = bytes(range(100, 132))
    keys.set_table_key("b1", KEY)
    keys.set_pending_table_key("b1", new)
    board, link = rig(key=new)
    board.hello()
    msg, _ = read_until(link, is_hello)
    assert msg is not None and link.key.raw == new
    assert keys.table_key("b1") == new and keys.pending_table_key("b1") is None
    assert KEY in keys.all_table_keys("b1")


def test_a_pending_key_the_board_never_took_changes_nothing(rig, keys):
    keys.set_table_key("b1", KEY)
    keys.set_pending_table_key("b1", bytes(range(100, 132)))
    board, link = rig(key=KEY)
    board.hello()
    msg, _ = read_until(link, is_hello)
    assert msg is not None and link.key.raw == KEY and keys.table_key("b1") == KEY


def test_a_board_the_ledger_knows_as_keyed_is_refused_without_its_key(keys, tmp_path):
    # The key store lost: the board's hello names it, nothing else of it is taken, even unsigned.
    board = PtyBoard("b1", None, 1001)
    ser = open_port(board.port)
    try:
        link = BoardLink(ser, keys, lambda b: b == "b1")
        board.hello()
        msg, _ = read_until(link, is_hello)
        assert msg is not None and link.key_missing and link.board_id == "b1"
        board.event(1, seat=0, inc=70)
        assert settle(link) == [] and "keyed" in link.last_refusal
    finally:
        ser.close()
        board.close()


NEW_KEY = bytes(range(100, 132))


def answers_provision(board, take=True, sign_with="new"):
    """The board's side of a provision command: it takes the key sent (or refuses it) and
    answers signed with the key it then holds (sign_with="old": with the one it had)."""
    def on_command(msg):
        if msg.get("c") != "provision":
            return
        if not take:
            board.reply(msg["id"], ok=False, err=proto.E_STATE, msg="service key switch off")
            return
        old = board.key
        board.key = proto.as_key(bytes.fromhex(msg["a"]["key"]))
        if sign_with == "old":
            board.send(proto.reply_ok(msg["id"], {}), key=old)
        else:
            board.reply(msg["id"])
    board.on_command = on_command


def command_over(link):
    return lambda name, args: link.command(name, args, timeout_s=3)


def test_a_key_on_its_way_is_in_the_key_store_before_it_is_sent(rig, keys):
    # Stored durably first: if the host dies once the board took it, the next host still
    # checks what the board signs. Filed under the board named, or the board on the port.
    board, link = rig()
    link.expect_key(NEW_KEY, "b1")          # the board on the port not yet heard
    assert keys.pending_table_key("b1") == NEW_KEY and link.pending_key.raw == NEW_KEY
    board.hello()
    read_until(link, is_hello)
    link.expect_key(KEY)                    # no board named: the one on the port
    assert keys.pending_table_key("b1") == KEY


def test_a_key_the_board_refused_leaves_the_key_store(rig, keys):
    _board, link = rig()
    link.expect_key(NEW_KEY, "b1")
    link.drop_pending("b1")
    assert keys.pending_table_key("b1") is None and link.pending_key is None


def test_a_key_on_its_way_to_no_named_board_or_without_a_key_store_is_held_in_memory_only(rig, keys):
    board, link = rig()
    link.expect_key(NEW_KEY)                # nobody to file it under
    assert link.pending_key.raw == NEW_KEY
    assert not os.path.exists(keys.folder) or os.listdir(keys.folder) == []
    bare = BoardLink(link.ser, None)        # a link with no key store (a bench board)
    bare.expect_key(NEW_KEY, "b1")
    assert bare.pending_key.raw == NEW_KEY
    bare.drop_pending("b1")
    assert bare.pending_key is None


def test_a_keyed_board_answering_with_the_key_sent_to_it_has_that_key_on_both_sides(rig, keys):
    # a key change: the host sends a new key to a board holding the old one; its answer signed
    # with the new key makes the new key the board's, and the old key's frames are refused after
    board, link = rig(key=KEY, held=KEY)
    board.hello()
    read_until(link, is_hello)
    link.expect_key(NEW_KEY)
    board.key = proto.as_key(NEW_KEY)
    board.reply(5)
    msg, _ = read_until(link, lambda m: m.get("id") == 5)
    assert msg is not None and link.key.raw == NEW_KEY
    assert keys.table_key("b1") == NEW_KEY and keys.pending_table_key("b1") is None
    board.key = proto.as_key(KEY)
    board.reply(6)
    assert settle(link) == [] and link.key.raw == NEW_KEY


def test_provision_gives_the_board_a_new_32_byte_key_kept_by_the_host(rig, keys):
    board, link = rig()
    board.hello()
    read_until(link, is_hello)
    answers_provision(board)
    assert provision(link, command_over(link)) == "b1"
    held = keys.table_key("b1")
    assert len(held) == 32 and link.key.raw == held and board.key.raw == held
    assert keys.pending_table_key("b1") is None


def test_provision_a_board_refuses_keeps_the_old_key_and_says_why(rig, keys):
    board, link = rig(key=KEY, held=KEY)
    board.hello()
    read_until(link, is_hello)
    answers_provision(board, take=False)
    with pytest.raises(TablectlError) as err:
        provision(link, command_over(link))
    assert str(err.value) == "board refused provision: service key switch off (%s)" % proto.E_STATE
    assert link.key.raw == KEY and keys.table_key("b1") == KEY and keys.pending_table_key("b1") is None


def test_provision_whose_answer_is_not_signed_with_the_new_key_is_an_error(rig, keys):
    board, link = rig()
    board.hello()
    read_until(link, is_hello)
    answers_provision(board, sign_with="old")   # unsigned: the board held no key before
    with pytest.raises(TablectlError) as err:
        provision(link, command_over(link))
    assert str(err.value) == "board b1 took the key but its answer was not signed with it"
    assert link.key is None and keys.table_key("b1") is None


def test_provision_before_a_board_said_who_it_is_is_refused(rig):
    _board, link = rig()
    with pytest.raises(TablectlError) as err:
        provision(link, command_over(link))
    assert str(err.value) == "the board on the port has not said who it is"


def test_a_board_that_lost_its_key_is_refused_by_name_until_it_is_provisioned_again(rig, keys):
    # its key fault: the hello comes unsigned from a board whose key the host holds. Nothing of
    # it is taken; the refusal names it; a provision (service key switch on) brings it back.
    board, link = rig(key=None, held=KEY)
    board.hello()
    assert settle(link) == [] and link.lost_key_board == "b1" and link.board_id is None
    board.event(1, seat=0, inc=70)
    assert settle(link) == []
    assert link.last_refusal == "frame of board b1, which is keyed: its key is not on both sides"
    assert key_gone_text(link, "b1", keys.folder) == (
        "board b1 has lost its key (its key fault): nothing of it is filed or sent. Provision a new key "
        "(service key switch on): `tablectl provision`")
    answers_provision(board)
    refused = link.frames_refused
    assert provision(link, command_over(link)) == "b1"
    assert link.key.raw == keys.table_key("b1") != KEY and link.lost_key_board is None
    assert link.frames_refused == refused  # its first answer taken, not a repeat's
    board.event(1, seat=0, inc=70)
    ev, _ = read_until(link, lambda m: m.get("t") == proto.EVENT)
    assert ev is not None and ev["q"] == 1
    # the session its answer named is the one the host seals for: a command goes and is answered
    # at once (no hello first), its counter above any the board took
    assert link.session == board.session and not link.stale_session_seen
    board.on_command = lambda msg: board.reply(msg["id"], meter=5)
    assert link.command("meters", timeout_s=3)["meter"] == 5
    assert board.refused == [] and board.messages(proto.HELLO) == []


def test_hello_to_a_board_that_lost_its_key_names_it_so_it_can_be_provisioned(rig, keys):
    # `tablectl provision --port` to a board with its key fault: its unsigned hello is refused,
    # yet hello answers with the board's name (nothing of the board taken) instead of failing on
    # the refusal once its wait is out, so the provision that brings the board back can go to it
    board, link = rig(key=None, held=KEY)
    board.answers_hello = True
    assert link.hello(timeout_s=3) == {"t": proto.HELLO, "role": "board", "b": "b1"}
    assert link.board_id is None and link.key is None and link.lost_key_board == "b1"
    assert link.last_refusal == ("unsigned hello of keyed board b1: the board has lost its key (provision it "
                                 "again, service key switch on)")
    answers_provision(board)
    assert provision(link, command_over(link)) == "b1"
    assert link.key.raw == keys.table_key("b1") == board.key.raw != KEY


def test_a_link_with_no_key_store_takes_the_key_its_board_answers_with_in_memory_only(rig, keys):
    # a bench board's link (no key store): the key the board took is the link's, nothing is
    # filed, and the link's frames are sealed with it from then on
    board, link = rig()
    bare = BoardLink(link.ser, None)
    board.hello()
    read_until(bare, is_hello)
    answers_provision(board)
    assert provision(bare, command_over(bare)) == "b1"
    assert bare.key.raw == board.key.raw and bare.pending_key is None
    assert keys.table_key("b1") is None and keys.pending_table_key("b1") is None
    board.on_command = lambda msg: board.reply(msg["id"], meter=5)
    assert bare.command("meters", timeout_s=3)["meter"] == 5
    assert board.refused == []


def test_a_keyed_board_whose_key_the_host_lacks_is_named_once_with_the_key_store(rig, keys):
    board, link = rig(key=KEY)               # it signs; this host holds no key for it
    board.hello()
    settle(link)
    assert link.key_missing and link.frames_refused == 1
    assert link.last_refusal == ("board b1 is keyed but this host holds no key for it in %s: restore the key store, "
                                 "or provision it again (docs/SECURITY.md)" % keys.folder)
    assert key_gone_text(link, "b1", keys.folder) == (
        "board b1 is keyed, and this host holds no key for it in %s: nothing of it is filed or sent. "
        "Restore the key store from its backup, or provision a new key (service key switch on; "
        "docs/SECURITY.md \"A lost key store\")" % keys.folder)
    board.hello()                            # said again: not refused again
    settle(link)
    assert link.frames_refused == 1
    other = PtyBoard("b2", OTHER_KEY, 2002)  # another keyed board on the same host's port
    try:
        board.write(other.frame(proto.hello("b2", "test-fw", 1, role="board", session=2002)))
        settle(link)
        assert link.frames_refused == 2 and "board b2 is keyed" in link.last_refusal
    finally:
        other.close()


def test_a_restored_key_store_lets_the_boards_frames_in_without_a_new_hello(rig, keys):
    board, link = rig(key=KEY)
    board.hello()
    settle(link)
    assert link.key_missing
    keys.set_table_key("b1", KEY)            # the key store back from its backup
    board.event(1, seat=0, inc=70)
    ev, _ = read_until(link, lambda m: m.get("t") == proto.EVENT)
    assert ev is not None and not link.key_missing and link.key.raw == KEY


def test_a_frame_signed_with_another_key_does_not_make_the_stores_key_the_boards(rig, keys):
    # another host provisioned the board (its key reached this store after its unsigned hello):
    # a frame signed with some third key is refused, and the link still holds no key
    board, link = rig()
    board.hello()
    read_until(link, is_hello)
    keys.set_table_key("b1", KEY)
    board.key = proto.as_key(OTHER_KEY)
    board.reply(3)
    assert settle(link) == [] and link.key is None
    assert link.last_refusal == "signed frame of board b1, whose key this host does not hold"


def test_a_signed_event_of_a_board_not_yet_named_whose_key_the_host_lacks_is_refused(rig, keys):
    # its hello missed; it signs with a key this host does not hold: nothing is filed that this
    # host cannot verify (an unsigned bench board's event is learned; a signed one is not)
    board, link = rig(key=OTHER_KEY)
    board.event(1, seat=0, inc=70)
    assert settle(link) == [] and link.board_id is None
    assert link.last_refusal == "signed frame of board b1, whose key this host does not hold"
