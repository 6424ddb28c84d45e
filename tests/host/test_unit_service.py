"""`tablectl serve` in-process (tablectl.service.Service), one board on a real pseudo-terminal
speaking real protocol frames (boardside.PtyBoard), a real SQLite ledger, the real control socket.

Rules (docs/RELIABILITY.md, docs/SECURITY.md): an event is acknowledged only after its row is
committed; nothing the trust rule refuses is recorded; a command that changes anything is recorded
as an intent before it is sent and with its reply after; the control socket checks a command's
arguments before anything is recorded or signed.
"""
import json
import os
import signal
import socket
import stat
import subprocess
import sys
import threading
import time

import pytest

from boardside import PtyBoard
from table import protocol as proto
from tablectl.errors import TablectlError
from tablectl.keys import KeyStore
from tablectl.ledger import Ledger
from tablectl.service import Service, control_path

KEY = bytes(range(7, 39))
OTHER_KEY = bytes(32)


@pytest.fixture(autouse=True)
def _keys_beside_the_ledger(monkeypatch):
    monkeypatch.delenv("TABLECTL_KEYS", raising=False)


@pytest.fixture
def serve(tmp_path):
    """serve(key=..., held=...): a board holding `key` on a pty, and a running service whose key
    store holds `held` for it. Returns (service, board, ledger path), the board connected."""
    running = []

    def start(key=KEY, held=KEY):
        db = str(tmp_path / "books.db")
        if held is not None:
            KeyStore.for_ledger(db).set_table_key("b1", held)
        board = PtyBoard("b1", key)
        board.answers_hello = True
        logged = []
        svc = Service([board.port], db, log=logged.append)
        svc.logged = logged  # what the service said in its log, for the tests that read it
        running.append((svc, board))
        svc.start()
        wait(lambda: svc.loops[0].board_id == "b1" and svc.loops[0].connected, "the board to be connected")
        return svc, board, db
    yield start
    for svc, board in running:
        svc.stop()
        board.close()


def wait(predicate, what, timeout_s=10.0):
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert time.monotonic() < deadline, "timed out waiting for %s" % what
        time.sleep(0.02)


def rows(db, kinds=None):
    led = Ledger(db, readonly=True)
    try:
        return list(led.events("b1", kinds))
    finally:
        led.close()


def acks(board):
    return board.messages(proto.ACK)


def ask(svc, request):
    return ask_raw(svc, json.dumps(request).encode())


def ask_raw(svc, line):
    """One line to the control socket as given (well-formed or not), one JSON answer back."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(20)
        s.connect(control_path(svc.db_path))
        s.sendall(line + b"\n")
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            assert chunk, "the service closed the connection"
            buf += chunk
    return json.loads(buf)


# ---- events ---------------------------------------------------------------------------------------
def test_an_event_is_acknowledged_only_after_its_row_is_committed(serve):
    svc, board, db = serve()
    in_ledger_when_acked = []

    def on_message(msg):   # on the board's side, the moment each ack arrives
        if msg.get("t") == proto.ACK:
            in_ledger_when_acked.append((msg["q"], [r["seq"] for r in rows(db, ["coin"])]))
    board.on_message = on_message
    for q in (1, 2, 3):
        board.event(q, seat=q, inc=70)
    board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 3, what="an ack of #3")
    assert in_ledger_when_acked, "no ack"
    for acked, seqs in in_ledger_when_acked:
        assert seqs[:acked] == list(range(1, acked + 1)), (acked, seqs)


def test_an_event_signed_with_another_key_is_refused_not_recorded_and_not_acknowledged(serve):
    svc, board, db = serve()
    board.event(1, seat=0, inc=70_000, key=OTHER_KEY)
    board.event(1, seat=0, inc=70_000, key=None)
    wait(lambda: svc.loops[0].link.frames_refused >= 2, "the host to refuse both")
    assert rows(db, ["coin"]) == [] and acks(board) == []
    board.event(1, seat=0, inc=70)   # the board's own event, signed: taken
    board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1)
    assert [(r["seq"], r["body"]["inc"]) for r in rows(db, ["coin"])] == [(1, 70)]


def test_a_resent_event_is_recorded_once_and_acknowledged_again(serve):
    svc, board, db = serve()
    board.event(1, seat=0, inc=70)
    board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1)
    board.event(1, seat=0, inc=70)   # the ack was lost on the line: the board sends it again
    wait(lambda: len(acks(board)) >= 2, "a second ack")
    assert [a["q"] for a in acks(board)] == [1, 1]
    assert [r["seq"] for r in rows(db, ["coin"])] == [1]


def test_events_past_a_gap_are_not_recorded_and_the_ack_asks_for_the_missing_one(serve):
    svc, board, db = serve()
    board.event(1, seat=0, inc=70)
    board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1)
    board.event(3, seat=0, inc=70)   # #2 lost on the line
    gap_ack = board.wait_for(lambda m: m.get("t") == proto.ACK and m.get("gap"))
    assert gap_ack["q"] == 1
    assert [r["seq"] for r in rows(db, ["coin"])] == [1]
    board.event(2, seat=0, inc=70)
    board.event(3, seat=0, inc=70)
    board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 3)
    assert [r["seq"] for r in rows(db, ["coin"])] == [1, 2, 3]



def test_a_ledger_behind_its_board_is_an_alarm_naming_the_sign_off_and_files_nothing_until_it(serve):
    """An old copy of the books put back: they end at #2, the board says it holds #1..#6
    acknowledged and sends #7. Nothing is filed past #2 and the log says, once, what to run; after
    the technician's sign-off (`tablectl audit resync`) the board's next resend is filed."""
    svc, board, db = serve()
    for q in (1, 2):
        board.event(q, seat=0, inc=70)
    board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 2)
    board.hello(acked_seq=6)
    wait(lambda: svc.loops[0].link.board_acked == 6, "the hello to be read")
    for _resend in range(2):
        board.event(7, seat=0, inc=70)
        board.wait_for(lambda m: m.get("t") == proto.ACK and m.get("gap") and m["q"] == 2)
    alarm = ("%s: ALARM the ledger ends at event #2 of board b1, which holds events up to #6 acknowledged: if this "
             "ledger was put back from a copy, sign it off: tablectl audit resync --board b1 --from 3 --to N --reason "
             "TEXT (N: the last number the copy lost; `tablectl audit verify` names them)" % board.port)
    assert [line for line in svc.logged if "ALARM" in line] == [alarm]
    assert [r["seq"] for r in rows(db, ["coin"])] == [1, 2]
    led = Ledger(db)
    try:
        led.sign_off_resync("b1", 3, 6, "restored from Monday's backup", "tech")
    finally:
        led.close()
    board.event(7, seat=0, inc=70)
    board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 7 and not m.get("gap"))
    assert [(r["kind"], r["seq"]) for r in rows(db, ["coin", "resync"])] == [
        ("coin", 1), ("coin", 2), ("resync", None), ("coin", 7)]


# ---- commands -------------------------------------------------------------------------------------
def test_a_command_that_changes_anything_is_recorded_before_it_is_sent_and_with_its_reply(serve):
    svc, board, db = serve()
    intents_when_sent = []

    def on_command(msg):
        intents_when_sent.append([r["body"]["id"] for r in rows(db, ["intent"])])
        board.reply(msg["id"], state="LOCKED")
    board.on_command = on_command
    reply = ask(svc, {"op": "command", "cmd": "lock", "args": {}})
    assert reply["ok"] and reply["reply"]["state"] == "LOCKED"
    cid = reply["reply"]["id"]
    # a number of its own (a resend after a slow answer carries the same number; it is recorded once, below)
    assert isinstance(cid, int) and {m["id"] for m in board.messages(proto.COMMAND)} == {cid}
    assert intents_when_sent and cid in intents_when_sent[0]
    [cmd] = rows(db, ["cmd"])
    assert cmd["body"]["id"] == cid and cmd["body"]["reply"]["state"] == "LOCKED"


def test_a_read_command_is_not_recorded(serve):
    svc, board, db = serve()
    board.on_command = lambda msg: board.reply(msg["id"], meter=1000)
    assert ask(svc, {"op": "command", "cmd": "meters", "args": {}})["reply"]["meter"] == 1000
    assert rows(db, ["intent", "cmd"]) == []


def test_a_reply_sealed_in_an_earlier_session_does_not_answer_a_command(serve):
    """A board that rebooted has a new session: a recorded reply of the old one, replayed, is
    refused, so the command fails and its row says it got no reply."""
    svc, board, db = serve()

    def replay_from_the_last_boot(msg):
        board.send(proto.reply_ok(msg["id"], {"state": "LOCKED"}), session=board.session - 1, counter=999)
    board.on_command = replay_from_the_last_boot
    session = svc.loops[0]
    with pytest.raises(TablectlError, match="^board b1 did not answer lock$"):
        session.command("lock", {}, timeout_s=3)
    [cmd] = rows(db, ["cmd"])
    assert cmd["body"]["reply"] is None
    assert session.link.last_refusal.startswith("REPLAY: frame of another session")


def test_a_command_a_board_lost_to_a_reboot_goes_again_as_soon_as_its_new_session_is_known(serve, monkeypatch):
    """A board that reboots while a command waits drops it (it answers nothing of its old
    session). The service resends what waits the moment a hello names the new session, not at its
    next resend: with TABLECTL_LINK_TIMEOUT_S raised for a slow board (an emulated Pico) that is a
    tenth of it, here 60 s, longer than this test waits."""
    monkeypatch.setenv("TABLECTL_LINK_TIMEOUT_S", "600")
    svc, board, db = serve()
    seen = []

    def reboot_on_the_first_copy(msg):
        seen.append((board.session, msg["id"]))
        if len(seen) == 1:
            board.session += 1       # the power cut: a new session, its counters from the start
            board.counter = 0
            board.host_counter = -1
            board.send(proto.heartbeat(0))  # its first frame: sealed in the new session
            return
        board.reply(msg["id"], state="LOCKED")
    board.on_command = reboot_on_the_first_copy
    started = time.monotonic()
    reply = ask(svc, {"op": "command", "cmd": "lock", "args": {}})
    assert reply["ok"] and reply["reply"]["state"] == "LOCKED"
    assert [s for s, _ in seen] == [1001, 1002] and seen[0][1] == seen[1][1]  # the same command, once a session
    assert time.monotonic() - started < 60  # answered before the next resend was due



def test_a_boot_event_of_a_later_boot_ends_the_session_at_once_and_nothing_is_sealed_in_it_after(tmp_path):
    """A board's session is "<boot count>.<random>" (table.app.session_nonce). Its boot event of a
    later boot, heard before its new hello, says it restarted: the service asks hello at once and
    seals the event's ack in the new session (the board would refuse one sealed in the old)."""
    db = str(tmp_path / "books.db")
    KeyStore.for_ledger(db).set_table_key("b1", KEY)
    board = PtyBoard("b1", KEY, session="1.5eed0001")
    board.answers_hello = True
    svc = Service([board.port], db, log=lambda *a: None)
    svc.start()
    try:
        wait(lambda: svc.loops[0].link is not None and svc.loops[0].link.session == "1.5eed0001", "the session")
        board.answers_hello = False
        hellos = len(board.messages(proto.HELLO))
        board.session, board.counter, board.host_counter = "2.5eed0002", 0, -1   # the power cut
        board.event(1, kind="boot", boots=2)
        board.wait_for(lambda m: m.get("t") == proto.HELLO and len(board.messages(proto.HELLO)) > hellos,
                       what="the hello that asks for the new session")
        board.send(proto.hello("b1", "test-fw", 2, role="board", session=board.session))
        board.event(1, kind="boot", boots=2)   # a board resends what is unacknowledged after a hello
        ack = board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1, what="the boot event's ack")
        assert ack["s"] == "2.5eed0002"
        assert [m for _why, m in board.refused if m.get("t") == proto.ACK] == []
        assert [r["seq"] for r in rows(db, ["boot"])] == [1]
    finally:
        svc.stop()
        board.close()


def test_a_session_that_names_no_boot_count_is_not_ended_by_a_boot_event(tmp_path):
    # not a session the firmware makes: the service cannot tell a later boot from it, and goes on
    # in it (a new session is learned from a hello) rather than stopping the port's loop
    db = str(tmp_path / "books.db")
    KeyStore.for_ledger(db).set_table_key("b1", KEY)
    board = PtyBoard("b1", KEY, session="bench")
    board.answers_hello = True
    svc = Service([board.port], db, log=lambda *a: None)
    svc.start()
    try:
        wait(lambda: svc.loops[0].link is not None and svc.loops[0].link.session == "bench", "the session")
        hellos = len(board.messages(proto.HELLO))
        board.event(1, kind="boot", boots=7)
        ack = board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1, what="the boot event's ack")
        assert ack["s"] == "bench" and board.refused == []
        assert len(board.messages(proto.HELLO)) == hellos and svc.loops[0].is_alive()
    finally:
        svc.stop()
        board.close()


def test_a_rebooted_board_is_asked_hello_at_once_then_at_the_repeat_interval_not_every_half_second(serve, monkeypatch):
    """A board answers each hello by resending everything unacknowledged. A slow board (an
    emulated Pico, for which TABLECTL_LINK_TIMEOUT_S is raised) sent a hello every 0.5 s while it
    booted read them all, one full resend each. The first hello goes at once; repeats wait a tenth
    of the raised timeout (here 60 s), as a command's resends do."""
    monkeypatch.setenv("TABLECTL_LINK_TIMEOUT_S", "600")
    svc, board, db = serve()
    hellos_before = len(board.messages(proto.HELLO))
    board.answers_hello = False  # still booting: it answers nothing yet
    board.session += 1
    board.counter = 0
    board.host_counter = -1
    board.send(proto.heartbeat(0))  # its first frame after the reboot: sealed in the new session
    board.wait_for(lambda m: m.get("t") == proto.HELLO and len(board.messages(proto.HELLO)) > hellos_before,
                   what="the hello that asks for the new session")
    time.sleep(3.0)  # six hellos at the old half-second repeat
    assert len(board.messages(proto.HELLO)) == hellos_before + 1
    board.hello()  # the board is up: its hello names the session
    wait(lambda: svc.loops[0].link.session == board.session, "the new session to be learned")


def test_serve_with_a_link_timeout_that_is_not_a_number_of_seconds_stops_at_its_start(tmp_path, monkeypatch):
    monkeypatch.setenv("TABLECTL_LINK_TIMEOUT_S", "soon")
    with pytest.raises(TablectlError, match="TABLECTL_LINK_TIMEOUT_S='soon'"):
        Service(["/dev/null"], str(tmp_path / "books.db"))


def test_a_lowered_link_timeout_does_not_ask_hello_more_often_than_every_half_second(tmp_path, monkeypatch):
    # a raised one spaces them out (a tenth of it); a lowered one keeps the 0.5 s floor
    for raw, every_s in (("1", 0.5), ("5", 0.5), ("20", 2.0)):
        monkeypatch.setenv("TABLECTL_LINK_TIMEOUT_S", raw)
        assert Service([str(tmp_path / "tty")], str(tmp_path / "books.db")).loops[0].hello_every_s == every_s


def test_a_command_to_a_board_that_lost_its_key_is_refused_before_anything_but_a_provision(serve):
    # its key fault: it comes back from a reboot saying hello unsigned. Nothing but a provision
    # is sent to it, and nothing recorded: a command sealed with the old key would be refused
    # by the board, or worse, obeyed by whatever now answers on the port.
    svc, board, db = serve()
    board.key = None
    board.session = 2002
    board.hello()
    wait(lambda: svc.loops[0].link.lost_key_board == "b1", "the host to name the board")
    reply = ask(svc, {"op": "command", "cmd": "lock", "args": {}})
    assert reply["ok"] is False and reply["error"].startswith("board b1 has lost its key (its key fault)")
    assert rows(db, ["intent", "cmd"]) == [] and board.messages(proto.COMMAND) == []


def test_a_keyed_board_back_at_a_boot_count_below_the_ledgers_is_an_alarm(serve):
    # its flash went back (an old copy of its journal): the signed hello says so
    svc, board, db = serve()
    board.event(1, kind="boot", boots=5)
    board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1)
    board.send(proto.hello("b1", "test-fw", 3, role="board", session=board.session))
    wait(lambda: rows(db, ["rollback"]), "the rollback row")
    assert [r["body"] for r in rows(db, ["rollback"])] == [{"boots": 3, "ledger_boots": 5}]
    assert "%s: ALARM board b1 came back as boot 3, the ledger holds boot 5: its flash went back" % board.port \
        in svc.logged


def test_a_money_command_to_a_board_whose_key_the_host_lacks_is_refused_before_anything(serve):
    svc, board, db = serve(key=None, held=None)
    reply = ask(svc, {"op": "command", "cmd": "meter_set", "args": {"meter_cents": 500, "reason": "test"}})
    assert reply["ok"] is False and reply["error"].startswith("no table key for board b1")
    assert rows(db, ["intent", "cmd"]) == [] and board.messages(proto.COMMAND) == []



def test_a_signing_board_whose_key_the_host_lacks_is_said_once_and_nothing_of_it_is_filed(serve):
    svc, board, db = serve(key=KEY, held=None)
    folder = svc.loops[0].keys.folder
    said = ("%s: board b1 is keyed, and this host holds no key for it in %s: nothing of it is filed or sent. "
            "Restore the key store from its backup, or provision a new key (service key switch on; "
            "docs/SECURITY.md \"A lost key store\")" % (board.port, folder))
    wait(lambda: said in svc.logged, "the log line")
    hellos = len(board.messages(proto.HELLO))
    board.event(1, seat=0, inc=70)
    board.wait_for(lambda m: m.get("t") == proto.HELLO and len(board.messages(proto.HELLO)) >= hellos + 2,
                   what="two more hellos (each answered)")
    assert svc.logged.count(said) == 1
    assert rows(db) == [] and acks(board) == []


# ---- the control socket ------------------------------------------------------------------------------
@pytest.mark.parametrize("args,error", [
    ({"meter_cents": -1, "reason": "fix"}, "meter_set: argument meter_cents=-1 is not allowed"),
    ({"meter_cents": 500, "reason": "fix", "extra": 1}, "meter_set takes no argument 'extra'"),
    ({"meter_cents": 1.5, "reason": "fix"}, "meter_set: argument meter_cents=1.5 is not allowed"),
    ({"meter_cents": True, "reason": "fix"}, "meter_set: argument meter_cents=True is not allowed"),
])
def test_the_control_socket_refuses_an_argument_out_of_range_before_anything_is_recorded(serve, args, error):
    svc, board, db = serve()
    reply = ask(svc, {"op": "command", "cmd": "meter_set", "args": args})
    assert reply == {"ok": False, "error": error}
    assert rows(db, ["intent", "cmd"]) == []
    time.sleep(0.3)
    assert board.messages(proto.COMMAND) == []


@pytest.mark.parametrize("name,path", [("award", "tablectl jackpot"), ("provision", "tablectl provision")])
def test_an_award_or_a_key_cannot_be_sent_as_a_plain_command(serve, name, path):
    svc, board, db = serve()
    reply = ask(svc, {"op": "command", "cmd": name, "args": {"seat": 0}})
    assert reply["ok"] is False and path in reply["error"]
    assert rows(db, ["intent", "cmd"]) == [] and board.messages(proto.COMMAND) == []


def test_provisioning_stores_the_key_and_never_shows_or_records_it(serve):
    svc, board, db = serve(key=None, held=None)

    def take_the_key(msg):
        if msg.get("c") == "provision":
            board.key = proto.as_key(bytes.fromhex(msg["a"]["key"]))
            board.reply(msg["id"])
    board.on_command = take_the_key
    reply = ask(svc, {"op": "provision"})
    assert reply["ok"] and reply["board"] == "b1"
    stored = KeyStore.for_ledger(db).table_key("b1")
    assert stored == board.key.raw
    assert stored.hex() not in json.dumps(reply)
    books = json.dumps(rows(db))
    assert stored.hex() not in books and "(withheld)" in books
    # from now on the host seals every frame with that key (the board's own check takes them)
    board.on_command = lambda msg: board.reply(msg["id"], meter=5)
    assert ask(svc, {"op": "command", "cmd": "meters", "args": {}})["reply"]["meter"] == 5
    assert board.refused == []
    assert board.messages(proto.COMMAND)[-1]["s"] == board.session


def test_a_request_for_a_board_that_is_not_connected_is_a_one_line_answer(tmp_path):
    svc = Service([str(tmp_path / "no-tty")], str(tmp_path / "books.db"), log=lambda *a: None)
    svc.start()
    try:
        for op in ("provision", "jackpot"):
            request = {"op": op, "hands": [[1, "As Ks Qs Js Ts"]]}
            assert ask(svc, request) == {"ok": False, "error": "board on %s is not connected" % (tmp_path / "no-tty")}
    finally:
        svc.stop()


def test_batches_of_several_tables_commit_together_and_each_gets_its_own_result(tmp_path):
    """The group commit (LedgerWriter): sessions waiting at once share one transaction."""
    from tablectl.service import LedgerWriter
    from boardside import signed_event
    writer = LedgerWriter(str(tmp_path / "books.db"))
    writer.start()
    results = {}
    go = threading.Barrier(3)

    def table(board):
        go.wait()
        results[board] = writer.submit(board, [signed_event(None, q, "coin", board, inc=70) for q in (1, 2)])
    threads = [threading.Thread(target=table, args=(b,)) for b in ("t1", "t2", "t3")]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert results == {b: (2, 2, 0, False) for b in ("t1", "t2", "t3")}
    assert 1 <= writer.commits <= 3
    led = Ledger(str(tmp_path / "books.db"), readonly=True)
    assert led.verify() == (6, [])
    led.close()


def test_a_batch_that_cannot_be_committed_is_not_acknowledged_and_its_session_hears_why(tmp_path):
    from tablectl.service import LedgerWriter
    writer = LedgerWriter(str(tmp_path / "books.db"))
    writer.start()
    with pytest.raises(KeyError):
        writer.submit("t1", [{"t": "ev", "k": "coin"}])   # no sequence number: the transaction fails
    assert writer.submit("t1", [{"t": "ev", "b": "t1", "k": "coin", "q": 1}]) == (1, 1, 0, False)
    assert writer.commits == 2   # one transaction each, the failed one counted too


# ---- the control socket: requests it does not understand ------------------------------------------
def test_a_request_the_service_does_not_understand_gets_a_one_line_error_and_changes_nothing(serve):
    svc, board, db = serve()
    assert ask_raw(svc, b"[1, 2]") == {"ok": False, "error": "a request is a JSON object"}
    assert ask_raw(svc, b"{not json")["ok"] is False
    for request, error in (
            ({"op": "command", "cmd": 5}, "say which command: \"cmd\" must be a command's name"),
            ({"op": "frobnicate"}, "unknown request 'frobnicate'"),
            ({"op": "jackpot", "hands": "1 As Ks Qs Js Ts"}, "hands must be a list of [seat, cards] (1 to 8)"),
            ({"op": "jackpot", "hands": [[1, "As Ks Qs Js Ts"]] * 9}, "hands must be a list of [seat, cards] (1 to 8)"),
            ({"op": "jackpot", "hands": []}, "hands must be a list of [seat, cards] (1 to 8)"),
            # eight hands are allowed (one a seat): these get as far as reading the cards
            ({"op": "jackpot", "hands": [[seat, "As Ks Qs Js Ts"] for seat in range(1, 9)]},
             "card As is in the hands of seats 1 and 2"),
            ({"op": "pool_hit", "seat": 1, "cards": "As Ks Qs Js Ts"},
             "this service feeds no pool (start it with --pool URL)"),
            ):
        assert ask(svc, request) == {"ok": False, "error": error}, request
    # a board it does not hold: asking again cannot help, and the reply says so (a monitor stops)
    assert ask(svc, {"op": "command", "board": "b9", "cmd": "meters"}) == {
        "ok": False, "wrong_target": True,
        "error": "this service has no board b9 (it has b1 on %s)" % svc.loops[0].port}
    assert rows(db, ["intent", "cmd"]) == [] and board.messages(proto.COMMAND) == []



def test_a_request_naming_a_board_and_a_port_the_service_does_not_hold_together_names_both(serve):
    svc, board, db = serve()
    for target in ({"board": "b9", "port": board.port}, {"board": "b1", "port": "/dev/ttyNONE"}):
        reply = ask(svc, dict({"op": "command", "cmd": "meters", "args": {}}, **target))
        assert reply == {"ok": False, "wrong_target": True,
                         "error": "this service has no board %s on %s (it has b1 on %s)"
                                  % (target["board"], target["port"], board.port)}
    assert board.messages(proto.COMMAND) == []


def test_the_service_answers_what_it_holds(serve):
    svc, board, db = serve()
    board.event(1, seat=0, inc=70)
    board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1)
    assert ask(svc, {"op": "sessions"}) == {"ok": True, "sessions": [
        {"port": board.port, "board": "b1", "connected": True, "events_recorded": 1}]}
    committed = ask(svc, {"op": "commit_times"})
    assert committed["board"] == "b1" and [seq for seq, _t in committed["committed"]] == [1]
    assert ask(svc, {"op": "pool_link"}) == {"ok": True, "pool": None}


def test_a_jackpot_the_board_refuses_is_an_error_naming_the_boards_reason(serve):
    svc, board, db = serve()
    board.on_command = lambda msg: board.reply(msg["id"], ok=False, err=proto.E_STATE, msg="no status today")
    reply = ask(svc, {"op": "jackpot", "hands": [[1, "As Ks Qs Js Ts"]]})
    assert reply == {"ok": False, "error": "board refused status: no status today (STATE)"}
    assert [m["c"] for m in board.messages(proto.COMMAND)][-1] == "status"
    assert all(m["c"] != "award" for m in board.messages(proto.COMMAND))


def test_a_provision_the_board_refuses_stores_no_key(serve):
    svc, board, db = serve(key=None, held=None)
    board.on_command = lambda msg: board.reply(msg["id"], ok=False, err=proto.E_NEEDS_SERVICE_SWITCH,
                                               msg="turn the service key switch on")
    reply = ask(svc, {"op": "provision"})
    assert reply == {"ok": False, "error": "board refused provision: turn the service key switch on "
                                           "(NEEDS_SERVICE_SWITCH)"}
    assert KeyStore.for_ledger(db).table_key("b1") is None and svc.loops[0].link.key is None


def test_a_reply_that_answers_no_waiting_command_is_dropped(serve):
    svc, board, db = serve()
    board.reply(424242, state="LOCKED")  # late (its command gave up) or never asked for
    board.on_command = lambda msg: board.reply(msg["id"], meter=5)
    assert ask(svc, {"op": "command", "cmd": "meters", "args": {}})["reply"]["meter"] == 5
    assert rows(db, ["intent", "cmd"]) == []


# ---- a board whose hello was not heard ---------------------------------------------------------------
def test_an_unkeyed_boards_events_are_filed_only_once_the_board_is_named(tmp_path):
    # An event naming no board, before any hello, has nowhere to go: not filed, not acknowledged
    # (the board sends it again). An unkeyed bench board's event that names it is filed under it.
    board = PtyBoard("b1", None)
    db = str(tmp_path / "books.db")
    lines = []
    svc = Service([board.port], db, log=lines.append)
    svc.start()
    try:
        board.wait_for(lambda m: m.get("t") == proto.HELLO)  # the port is open
        board.send({"t": proto.EVENT, "k": "coin", "q": 1, "seat": 0})
        time.sleep(0.5)
        assert acks(board) == [] and svc.loops[0].board_id is None
        board.event(1, seat=0, inc=70)
        board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1)
        assert svc.loops[0].board_id == "b1" and [r["seq"] for r in rows(db, ["coin"])] == [1]
        assert not [line for line in lines if "link lost" in line], lines  # dropped quietly, the link kept
    finally:
        svc.stop()
        board.close()


def test_a_port_where_no_board_speaks_is_said_once_in_the_log(tmp_path, monkeypatch):
    import tablectl.service as service_mod
    monkeypatch.setattr(service_mod, "NO_BOARD_S", 0.3)
    board = PtyBoard("b1", None)  # answers no hello
    lines = []
    svc = Service([board.port], str(tmp_path / "books.db"), log=lines.append)
    svc.start()
    try:
        wait(lambda: lines, "the log line")
        time.sleep(1.0)  # two more hellos at least: still one line
        assert len(board.messages(proto.HELLO)) >= 2
        assert lines == ["%s: no board answers (no hello in 0 s): is it powered and cabled, and running the "
                         "controller (not at its REPL)? still asking" % board.port]
    finally:
        svc.stop()
        board.close()


def test_a_port_that_goes_away_is_logged_and_the_session_says_it_is_not_connected(tmp_path):
    lines = []
    board = PtyBoard("b1", KEY)
    board.answers_hello = True
    db = str(tmp_path / "lost.db")
    KeyStore.for_ledger(db).set_table_key("b1", KEY)
    svc = Service([board.port], db, log=lines.append)
    svc.start()
    try:
        wait(lambda: svc.loops[0].connected and svc.loops[0].board_id == "b1", "the board")
        board.close()  # the cable pulled: the port's other end is gone
        wait(lambda: any("link lost" in line for line in lines), "the link-lost line")
        wait(lambda: not svc.loops[0].connected, "the session to say so")
        reply = ask(svc, {"op": "command", "cmd": "meters", "args": {}})
        assert reply == {"ok": False, "error": "board on %s is not connected" % board.port}
    finally:
        svc.stop()


# ---- lending a port to `tablectl flash` --------------------------------------------------------------
def test_a_port_is_lent_to_flash_and_taken_back_and_only_a_port_the_service_holds(serve):
    from tablectl import owner
    svc, board, db = serve()
    session = svc.loops[0]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(20)
            s.connect(control_path(svc.db_path))
            f = s.makefile("rwb")

            def say(request):
                f.write(json.dumps(request).encode() + b"\n")
                f.flush()
                return json.loads(f.readline())
            assert say({"op": "hand_over", "port": "/dev/no-such-port"}) == {
                "ok": False, "error": "this service does not hold /dev/no-such-port"}
            assert say({"op": "hand_over", "port": board.port, "pid": 1}) == {"ok": True, "port": board.port}
            assert session.port_closed.is_set() and not session.connected
            assert say({"op": "hand_over", "port": board.port}) == {"ok": True, "port": board.port}  # lent already
            assert say({"op": "take_back"}) == {"ok": True}
        wait(lambda: session.connected and not session.handed_over.is_set(), "the link to reopen")
        board.on_command = lambda msg: board.reply(msg["id"], meter=5)
        assert ask(svc, {"op": "command", "cmd": "meters", "args": {}})["reply"]["meter"] == 5
    finally:
        owner.release_port(board.port)


def test_a_port_lent_to_a_caller_that_goes_away_is_taken_back(serve):
    from tablectl import owner
    svc, board, db = serve()
    session = svc.loops[0]
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(20)
            s.connect(control_path(svc.db_path))
            s.sendall(json.dumps({"op": "hand_over", "port": board.port}).encode() + b"\n")
            assert json.loads(s.makefile("rb").readline())["ok"] is True
        # the caller (a flash that crashed) closed its connection without take_back
        wait(lambda: session.connected and not session.handed_over.is_set(), "the port to come back")
    finally:
        owner.release_port(board.port)



def test_a_caller_that_goes_away_before_its_answer_leaves_the_command_recorded_and_the_service_serving(
        serve, monkeypatch):
    # a command killed (Ctrl-C) while the board answers: the service finishes it, records its
    # reply, finds nobody to tell, and goes on; nothing fails in any of its threads
    failed = []
    monkeypatch.setattr(threading, "excepthook", failed.append)
    svc, board, db = serve()

    def answer_late(msg):
        threading.Timer(0.3, board.reply, (msg["id"],), {"state": "LOCKED"}).start()
    board.on_command = answer_late
    threads = threading.active_count()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(control_path(svc.db_path))
        s.sendall(json.dumps({"op": "command", "cmd": "lock", "args": {}}).encode() + b"\n")
        board.wait_for(lambda m: m.get("t") == proto.COMMAND and m["c"] == "lock")
    wait(lambda: rows(db, ["cmd"]), "the command's reply row")
    wait(lambda: threading.active_count() <= threads, "the caller's thread to end")
    [cmd] = rows(db, ["cmd"])
    assert cmd["body"]["reply"]["state"] == "LOCKED" and [r["body"]["id"] for r in rows(db, ["intent"])] == \
        [cmd["body"]["id"]]
    assert failed == [] and svc.logged == ["%s: board b1 (fw test-fw)" % board.port]
    assert ask(svc, {"op": "sessions"})["ok"] is True


def test_a_stale_control_socket_file_is_replaced_and_stop_is_safe_twice(tmp_path):
    db = str(tmp_path / "books.db")
    with open(control_path(db), "w") as f:
        f.write("left by a service that was killed")
    svc = Service([], db, log=lambda *a: None)
    svc.start()
    try:
        assert ask(svc, {"op": "sessions"}) == {"ok": True, "sessions": []}
        assert stat.S_IMODE(os.stat(control_path(db)).st_mode) == 0o600   # this user's alone
    finally:
        svc.stop()
    svc.stop()
    assert not os.path.exists(control_path(db))
    Service([], str(tmp_path / "never.db"), log=lambda *a: None).stop()  # never started: nothing to close


def test_other_frames_from_the_board_are_not_filed_and_the_pool_forwarder_is_woken_after_each_commit(serve):
    svc, board, db = serve()
    session = svc.loops[0]
    woken = []
    session.on_recorded = lambda: woken.append([r["seq"] for r in rows(db, ["coin"])])
    board.send(proto.heartbeat())  # a board's heartbeat: alive, nothing to file or answer
    board.event(1, seat=0, inc=70)
    board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1)
    wait(lambda: woken, "the forwarder to be woken")
    assert woken == [[1]]  # after the row was committed, once per batch
    assert [(r["seq"], r["kind"]) for r in rows(db)] == [(1, "coin")]  # the heartbeat is not a row


def test_the_service_stop_ends_its_control_socket_thread(tmp_path, monkeypatch):
    crashed = []
    monkeypatch.setattr(threading, "excepthook", crashed.append)
    svc = Service([], str(tmp_path / "books.db"), log=lambda *a: None)
    before = threading.active_count()
    svc.start()
    svc.stop()
    wait(lambda: threading.active_count() <= before + 1, "the accept thread to end")  # + the writer
    assert crashed == []   # it ended as stop() meant it to, not on an exception


def test_a_caller_of_another_user_is_refused_even_if_the_socket_file_lets_it_connect(tmp_path):
    # docs/SECURITY.md: the control socket is the service owner's alone; the file mode (0600) says
    # so, and the kernel's word on the caller (SO_PEERCRED) is checked too. Here the mode is opened
    # up on purpose, so only the second check stands between another user and the boards.
    import tempfile
    if os.getuid() != 0:
        pytest.skip("needs root to run a caller as another user (nobody); run as root to check SO_PEERCRED")
    folder = tempfile.mkdtemp(prefix="tablectl-peercred-")
    os.chmod(folder, 0o755)
    lines = []
    svc = Service([], os.path.join(folder, "books.db"), log=lines.append)
    svc.start()
    try:
        os.chmod(control_path(svc.db_path), 0o666)
        # A forked child that becomes nobody (no exec: nobody may not run this venv's interpreter).
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the other user's process: only system calls until _exit
            try:
                os.setgid(65534)
                os.setuid(65534)
                c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                c.settimeout(10)
                c.connect(control_path(svc.db_path))
                try:
                    c.sendall(b'{"op": "sessions"}\n')
                    answer = c.recv(100)
                except (BrokenPipeError, ConnectionResetError):  # closed before or after the request
                    answer = b""
                os.write(write_end, b"answer:" + answer if answer else b"closed")
            except BaseException as exc:
                os.write(write_end, repr(exc).encode()[:200])
            os._exit(0)
        os.close(write_end)
        os.waitpid(pid, 0)
        got = os.read(read_end, 300)
        os.close(read_end)
        assert got == b"closed", got  # connected (the mode let it), then closed without an answer
        wait(lambda: lines, "the log line")
        assert lines == ["control socket: refused a caller of another user"]
    finally:
        svc.stop()
        import shutil
        shutil.rmtree(folder, ignore_errors=True)


def test_a_port_still_locked_by_its_borrower_is_taken_back_once_the_borrower_lets_go(serve):
    # `tablectl flash` may still hold the port's lock when it says take_back (or dies): the service
    # waits for the lock instead of opening a port someone else is writing to.
    import subprocess
    import sys
    from tablectl import owner
    svc, board, db = serve()
    session = svc.loops[0]
    holder = None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(20)
            s.connect(control_path(svc.db_path))
            f = s.makefile("rwb")
            f.write(json.dumps({"op": "hand_over", "port": board.port}).encode() + b"\n")
            f.flush()
            assert json.loads(f.readline())["ok"] is True
            holder = subprocess.Popen(
                [sys.executable, "-c", "import fcntl,os,sys,time\nfd=os.open(sys.argv[1],os.O_RDWR|os.O_CREAT)\n"
                 "fcntl.flock(fd,fcntl.LOCK_EX)\nprint('held',flush=True)\ntime.sleep(1.5)\n"
                 "open(sys.argv[2],'w').close()\nos.close(fd)\n",
                 owner.port_lock_path(board.port), db + ".released"], stdout=subprocess.PIPE, text=True)
            assert holder.stdout.readline().strip() == "held"
            f.write(json.dumps({"op": "take_back"}).encode() + b"\n")
            f.flush()
            assert json.loads(f.readline()) == {"ok": True}
            assert os.path.exists(db + ".released")  # answered only after the borrower let go
        wait(lambda: session.connected and not session.handed_over.is_set(), "the link to reopen")
        # a borrower that lets go within the service's patience (30 s) is no trouble worth a log line
        assert not [line for line in svc.logged if "cannot take the port back" in line], svc.logged
    finally:
        if holder is not None:
            holder.wait(10)
        owner.release_port(board.port)


def test_a_borrower_holding_the_port_past_the_services_patience_is_named_in_the_log(serve, monkeypatch):
    import tablectl.service as service_mod
    from tablectl import owner
    monkeypatch.setattr(service_mod, "TAKE_BACK_PATIENCE_S", 0.0)   # say it at the first refusal
    svc, board, db = serve()
    holder = None
    try:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(20)
            s.connect(control_path(svc.db_path))
            f = s.makefile("rwb")
            f.write(json.dumps({"op": "hand_over", "port": board.port}).encode() + b"\n")
            f.flush()
            assert json.loads(f.readline())["ok"] is True
            holder = subprocess.Popen(   # holds the port's lock until it is told to let go
                [sys.executable, "-c", "import fcntl,os,sys\nfd=os.open(sys.argv[1],os.O_RDWR|os.O_CREAT)\n"
                 "fcntl.flock(fd,fcntl.LOCK_EX)\nos.ftruncate(fd,0)\nos.write(fd,b'%d\\n' % os.getpid())\n"
                     "print('held',flush=True)\n"
                 "sys.stdin.readline()\n", owner.port_lock_path(board.port)],
                stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
            assert holder.stdout.readline().strip() == "held"
            f.write(json.dumps({"op": "take_back"}).encode() + b"\n")
            f.flush()
            wait(lambda: any("cannot take the port back" in line for line in svc.logged), "the log line")
            holder.stdin.write("go\n")
            holder.stdin.flush()
            assert json.loads(f.readline()) == {"ok": True}
        said = [line for line in svc.logged if "cannot take the port back" in line][0]
        assert said == ("%s: cannot take the port back (port %s is already in use by pid %d (lock %s): stop that "
                        "process first); still trying" % (board.port, board.port, holder.pid,
                                                          owner.port_lock_path(board.port)))
        wait(lambda: svc.loops[0].connected and not svc.loops[0].handed_over.is_set(), "the link to reopen")
    finally:
        if holder is not None:
            holder.kill()
            holder.wait(10)
        owner.release_port(board.port)


def test_a_pool_hit_is_checked_before_the_pool_is_asked_and_needs_the_jackpot_key(tmp_path):
    # docs/POOL.md: a hit locks the pool's amount only for a table in JACKPOT_PENDING (the dealer's
    # key: physical presence). The pool here is not running: every refusal comes before it is asked.
    from tablectl.pool.client import default_credentials
    from tablectl.pool.tls import issue_table_credential
    db = str(tmp_path / "books.db")
    KeyStore.for_ledger(db).set_table_key("b1", KEY)
    issue_table_credential(str(tmp_path / "pool.keys"), "b1", default_credentials(db))
    board = PtyBoard("b1", KEY)
    board.answers_hello = True
    board.on_command = lambda msg: board.reply(msg["id"], base="OPEN", round=3, pool="floor", seats=7)
    svc = Service([board.port], db, log=lambda *a: None, pool="unix:%s" % (tmp_path / "no-pool.sock"))
    svc.start()
    try:
        wait(lambda: svc.loops[0].connected and svc.loops[0].board_id == "b1", "the board")
        assert svc.loops[0].on_recorded == svc.pool_link.wake  # each commit wakes the forwarder
        for request, error in (
                ({"op": "pool_hit", "hands": [[1, "As Ks Qs Js Ts", "x"]]}, "hands must be a list of [seat, cards] (1 to 8)"),
                ({"op": "pool_hit", "hands": []}, "hands must be a list of [seat, cards] (1 to 8)"),
                ({"op": "pool_hit", "hands": [[1, "As Ks Qs Js Ts"]] * 9}, "hands must be a list of [seat, cards] (1 to 8)"),
                ({"op": "pool_hit", "hands": [[seat, "As Ks Qs Js Ts"] for seat in range(1, 9)]},
                 "card As is in the hands of seats 1 and 2"),   # eight hands pass the count
                ({"op": "pool_hit", "seat": 9, "cards": "As Ks Qs Js Ts"}, "seat 9 is not a seat number 1..8"),
                ({"op": "pool_hit", "seat": 0, "cards": "As Ks Qs Js Ts"}, "seat 0 is not a seat number 1..8"),
                ({"op": "pool_hit", "seat": 8, "cards": "As Ks Qs Js Ts"},
                 "the table is OPEN: a jackpot is paid only after the dealer turns the jackpot key "
                 "(table locked, then JACKPOT_PENDING)"),
                ({"op": "pool_hit", "seat": 1, "cards": "As Ks Qs Js Ts"},
                 "the table is OPEN: a jackpot is paid only after the dealer turns the jackpot key "
                 "(table locked, then JACKPOT_PENDING)")):
            assert ask(svc, request) == {"ok": False, "error": error}, request
        # only the last two got that far (the board's status: linked? then: in JACKPOT_PENDING?)
        assert [m["c"] for m in board.messages(proto.COMMAND)] == ["status"] * 4
        assert ask(svc, {"op": "pool_link"})["pool"] is not None
    finally:
        svc.stop()
        svc.pool_link.stop_event.set()
        board.close()



@pytest.fixture
def pooled(tmp_path):
    """pooled(answers): a service that feeds a linked pool (not running here: anything that asks
    it fails) and a board that answers each command by name from `answers` (a dict of reply
    fields, or an exception-like ("refuse", message)). Returns (service, board, ledger path)."""
    from tablectl.pool.client import default_credentials
    from tablectl.pool.tls import issue_table_credential
    running = []

    def start(answers):
        db = str(tmp_path / "books.db")
        KeyStore.for_ledger(db).set_table_key("b1", KEY)
        issue_table_credential(str(tmp_path / "pool.keys"), "b1", default_credentials(db))
        board = PtyBoard("b1", KEY)
        board.answers_hello = True

        def on_command(msg):
            answer = answers.get(msg["c"], {})
            if isinstance(answer, tuple):
                board.reply(msg["id"], ok=False, err=proto.E_STATE, msg=answer[1])
            else:
                board.reply(msg["id"], **answer)
        board.on_command = on_command
        svc = Service([board.port], db, log=lambda *a: None, pool="unix:%s" % (tmp_path / "no-pool.sock"))
        running.append((svc, board))
        svc.start()
        wait(lambda: svc.loops[0].connected and svc.loops[0].board_id == "b1", "the board")
        return svc, board, db
    yield start
    for svc, board in running:
        svc.stop()
        svc.pool_link.stop_event.set()
        board.close()


def first_copies(board):
    """The commands the board was sent, each once (a copy the service repeated has its id)."""
    seen = {}
    for m in board.messages(proto.COMMAND):
        seen.setdefault(m["id"], m["c"])
    return list(seen.values())


def test_a_table_that_has_joined_no_pool_is_paid_from_its_own_meter_by_a_service_that_feeds_one(pooled):
    from table import config
    svc, board, db = pooled({"status": {"base": "LOCKED", "seats": 7, "eligible": 1, "paid": 0},
                             "meters": {"round": 3, "meter": 20_000_000, "over": 0},
                             "config_get": {"config": config.defaults()}})
    reply = ask(svc, {"op": "jackpot", "hands": [[1, "As Ks Qs Js Ts"]], "dry_run": True})
    assert (reply["ok"], reply["board"], reply["result"]["round"]) == (True, "b1", 3)
    [pay] = reply["result"]["payments"]
    assert (pay["seat"], pay["amount_cents"], pay["meter_cents"]) == (1, 20_000_000, 20_000_000)
    assert "linked" not in reply["result"]
    # linked? (no: the status names no pool), then the own meter's dry run: no award
    assert first_copies(board) == ["status", "status", "meters", "config_get"]


def test_a_linked_table_has_no_dry_run(pooled):
    svc, board, db = pooled({"status": {"base": "JACKPOT_PENDING", "round": 3, "seats": 7, "eligible": 1,
                                        "pool": "floor"}})
    reply = ask(svc, {"op": "jackpot", "hands": [[1, "As Ks Qs Js Ts"]], "dry_run": True})
    assert reply == {"ok": False, "error": "a linked table has no dry run: the pool locks its amounts when the "
                                           "round is declared"}
    assert first_copies(board) == ["status"]


@pytest.mark.parametrize("status, error", [
    ({"base": "JACKPOT_PENDING", "round": 3, "seats": 7, "eligible": 1},
     "board b1 has not joined a pool yet (its service has not reached the pool): see `tablectl status` and the "
     "service's log"),
    (("refuse", "busy"), "board refused status: busy (STATE)"),
])
def test_a_pool_hit_for_a_table_the_pool_does_not_pay_is_refused_before_the_pool_is_asked(pooled, status, error):
    svc, board, db = pooled({"status": status})
    assert ask(svc, {"op": "pool_hit", "seat": 1, "cards": "As Ks Qs Js Ts"}) == {"ok": False, "error": error}
    assert first_copies(board) == ["status"]
    assert rows(db, ["intent", "cmd"]) == []


def test_a_board_whose_key_arrives_before_its_session_is_asked_for_its_hello_and_then_acknowledged(tmp_path):
    # The bench board was learned from an event (its hello missed); then it was provisioned by
    # another host (its key reached the key store) and signs. Nothing can be sealed without its
    # session, so the service sends nothing signed (no crash), asks for a hello, and then
    # acknowledges, sealed, what it recorded.
    db = str(tmp_path / "books.db")
    board = PtyBoard("b1", None)
    lines = []
    svc = Service([board.port], db, log=lines.append)
    svc.start()
    try:
        # (the port is open once the host's hello arrives: a frame written before that is lost)
        board.wait_for(lambda m: m.get("t") == proto.HELLO)
        board.event(1, seat=0, inc=70)
        board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1)
        KeyStore.for_ledger(db).set_table_key("b1", KEY)
        board.key = proto.as_key(KEY)
        board.answers_hello = True
        hellos = len(board.messages(proto.HELLO))
        board.event(2, seat=0, inc=70)  # signed now: recorded, but no ack can be sealed yet
        board.wait_for(lambda m: m.get("t") == proto.HELLO and len(board.messages(proto.HELLO)) > hellos,
                       what="the host's hello")
        board.wait_for(lambda m: m.get("s") == board.session, what="a frame sealed in the board's session")
        board.event(2, seat=0, inc=70)  # a board resends what is unacknowledged after a hello
        ack = board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 2)
        assert ack.get("s") == board.session and board.refused == []
        assert [r["seq"] for r in rows(db, ["coin"])] == [1, 2]
        assert not [line for line in lines if "link lost" in line], lines  # nothing unsealable was tried
    finally:
        svc.stop()
        board.close()


def test_a_port_the_link_cannot_close_is_not_lent_and_the_link_goes_on(serve):
    """hand_over waits 5 s for the link thread to let go of the port; a link that does not (here:
    busy, its session's lock held) keeps the port: the caller hears so in one line, and nothing is
    left half lent."""
    svc, board, db = serve()
    session = svc.loops[0]
    with session.lock:   # the link thread stops at its next turn, before it sees the request
        reply = ask(svc, {"op": "hand_over", "port": board.port})
    assert reply == {"ok": False, "error": "the service could not close %s within 5 s" % board.port}
    assert not session.handed_over.is_set() and session.connected
    board.on_command = lambda msg: board.reply(msg["id"], meter=5)
    assert ask(svc, {"op": "command", "cmd": "meters", "args": {}})["reply"]["meter"] == 5


def test_a_board_cabled_after_the_service_started_is_served_once_its_port_appears(tmp_path, monkeypatch):
    """A port that is not there yet (the cable not in: /dev/serial/by-id/... absent) is tried
    again until it is, then served like any other."""
    import tablectl.service as service_mod
    tries = []

    def open_port(port):   # the real one, counted
        tries.append(port)
        return real_open_port(port)
    real_open_port = service_mod.open_port
    monkeypatch.setattr(service_mod, "open_port", open_port)
    port = str(tmp_path / "ttyTABLE")
    db = str(tmp_path / "books.db")
    KeyStore.for_ledger(db).set_table_key("b1", KEY)
    board = PtyBoard("b1", KEY)
    board.answers_hello = True
    logged = []
    svc = Service([port], db, log=logged.append)
    svc.start()
    try:
        wait(lambda: len(tries) >= 3, "three tries of the absent port")
        assert not svc.loops[0].connected
        os.symlink(board.port, port)   # the cable goes in
        wait(lambda: svc.loops[0].connected and svc.loops[0].board_id == "b1", "the board")
        # said once each, not a line every half second while the cable is out
        absent = [line for line in logged if "cannot open the port" in line]
        assert len(absent) == 1 and absent[0].endswith("trying again every 0.5 s"), logged
        assert logged.count("%s: the port is back" % port) == 1
        board.event(1, seat=0, inc=70)
        board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1)
    finally:
        svc.stop()
        board.close()



def network_port(board):
    """socket://127.0.0.1:N: a network serial server in front of the board's pty, relaying
    bytes both ways for one connection. Returns (the URL, a function that stops it)."""
    import select
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(1)
    device = os.open(board.port, os.O_RDWR | os.O_NOCTTY)
    stop = threading.Event()

    def relay():
        try:
            conn, _ = listener.accept()
        except OSError:
            return
        with conn:
            while not stop.is_set():
                ready, _, _ = select.select([conn, device], [], [], 0.05)
                if conn in ready:
                    data = conn.recv(4096)
                    if not data:
                        return
                    os.write(device, data)
                if device in ready:
                    conn.sendall(os.read(device, 4096))
    thread = threading.Thread(target=relay, daemon=True)
    thread.start()

    def close():
        stop.set()
        listener.close()
        thread.join(5)
        os.close(device)
    return "socket://127.0.0.1:%d" % listener.getsockname()[1], close


def test_a_board_on_a_network_port_is_served_and_its_url_is_no_device_to_follow(tmp_path):
    db = str(tmp_path / "books.db")
    KeyStore.for_ledger(db).set_table_key("b1", KEY)
    board = PtyBoard("b1", KEY)
    board.answers_hello = True
    url, close = network_port(board)
    logged = []
    svc = Service([url], db, log=logged.append)
    svc.start()
    try:
        wait(lambda: svc.loops[0].connected and svc.loops[0].board_id == "b1", "the board")
        board.event(1, seat=0, inc=70)
        board.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1)
        board.on_command = lambda msg: board.reply(msg["id"], meter=5)
        assert ask(svc, {"op": "command", "port": url, "cmd": "meters", "args": {}})["reply"]["meter"] == 5
        assert [r["seq"] for r in rows(db, ["coin"])] == [1]
        assert logged == ["%s: board b1 (fw test-fw)" % url]   # (no "now <path>": a URL is not a link)
    finally:
        svc.stop()
        close()
        board.close()


def test_a_port_link_that_now_names_a_device_another_process_holds_is_said_and_still_served(tmp_path):
    """A restarted `tablectl sim` has a new pty its <state>/tty link names: the service holds that
    device's lock instead. When another process holds it, the log says which, and the board there
    is served all the same (its events are the books')."""
    from tablectl import owner
    db = str(tmp_path / "books.db")
    KeyStore.for_ledger(db).set_table_key("b1", KEY)
    first, second = PtyBoard("b1", KEY, 1001), PtyBoard("b1", KEY, 2002)
    for board in (first, second):
        board.answers_hello = True
    port = str(tmp_path / "tty")
    os.symlink(first.port, port)
    lock = owner.port_lock_path(second.port)
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl,os,sys\nfd=os.open(sys.argv[1],os.O_RDWR|os.O_CREAT)\n"
         "fcntl.flock(fd,fcntl.LOCK_EX)\nos.ftruncate(fd,0)\nos.write(fd,b'%d\\n' % os.getpid())\n"
         "print('held',flush=True)\nsys.stdin.readline()\n", lock],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    logged = []
    svc = Service([port], db, log=logged.append)
    try:
        assert holder.stdout.readline().strip() == "held"
        svc.start()
        wait(lambda: svc.loops[0].connected and svc.loops[0].link.session == 1001, "the first board")
        os.symlink(second.port, port + ".new")
        os.replace(port + ".new", port)   # the sim restarted: its link names the new pty
        first.close()
        first = None
        wait(lambda: svc.loops[0].connected and svc.loops[0].link is not None
             and svc.loops[0].link.session == 2002, "the board on the new pty")
        said = ("%s: now %s, which another process holds (port %s is already in use by pid %d (lock %s): stop that "
                "process first)" % (port, os.path.realpath(second.port), port, holder.pid, lock))
        assert said in logged, logged
        second.event(1, seat=0, inc=70)
        second.wait_for(lambda m: m.get("t") == proto.ACK and m["q"] == 1)
        assert [r["seq"] for r in rows(db, ["coin"])] == [1]
    finally:
        svc.stop()
        holder.kill()
        holder.wait(10)
        for board in (first, second):
            if board is not None:   # (closed once only: its descriptors' numbers are reused after)
                board.close()


def test_a_session_is_not_connected_before_its_port_is_open(tmp_path):
    svc = Service([str(tmp_path / "ttyTABLE")], str(tmp_path / "books.db"), log=lambda *a: None)
    assert [s.connected for s in svc.loops] == [False]


def test_a_command_to_a_port_where_no_board_has_said_hello_is_a_one_line_answer(tmp_path):
    board = PtyBoard("b1", None)   # the port is open, nothing on it answers a hello
    svc = Service([board.port], str(tmp_path / "books.db"), log=lambda *a: None)
    svc.start()
    try:
        wait(lambda: svc.loops[0].connected, "the port to be open")
        assert ask(svc, {"op": "command", "cmd": "meters", "args": {}}) == {
            "ok": False, "error": "board on %s is not connected" % board.port}
        assert board.messages(proto.COMMAND) == []
    finally:
        svc.stop()
        board.close()


def test_a_board_is_named_once_in_the_log_and_asked_no_more_hellos_once_its_session_is_known(serve):
    svc, board, db = serve()
    board.hello()   # the same board says hello again (same session): nothing new to say
    board.on_command = lambda msg: board.reply(msg["id"], meter=5)
    assert ask(svc, {"op": "command", "cmd": "meters", "args": {}})["reply"]["meter"] == 5   # the hello was read
    hellos = len(board.messages(proto.HELLO))
    time.sleep(1.2)   # more than two of the link's hello intervals (0.5 s)
    assert len(board.messages(proto.HELLO)) == hellos
    assert [line for line in svc.logged if ": board " in line] == ["%s: board b1 (fw test-fw)" % board.port]


def test_an_unkeyed_board_is_named_in_the_log_with_the_key_it_lacks(tmp_path):
    board = PtyBoard("b1", None)
    board.answers_hello = True
    lines = []
    svc = Service([board.port], str(tmp_path / "books.db"), log=lines.append)
    svc.start()
    try:
        wait(lambda: lines, "the log line")
        assert lines == ["%s: board b1 (fw test-fw); no table key held" % board.port]
    finally:
        svc.stop()
        board.close()


def test_root_may_use_the_control_socket_of_a_service_run_by_another_user(serve, monkeypatch):
    """The control socket takes its own user's callers and root's (an operator using sudo)."""
    if os.getuid() != 0:
        pytest.skip("needs root to be the root caller")
    svc, board, db = serve()
    monkeypatch.setattr(os, "getuid", lambda: 4242)   # the service's own user, as if it were not root
    assert ask(svc, {"op": "sessions"})["ok"] is True


SERVE_FOREVER = """
import signal, sys
from tablectl.service import Service
# Ctrl-C as a terminal delivers it, whatever this test's parent did: a shell's background job starts
# with SIGINT ignored, and Python then leaves it ignored (the mutation runs, started that way, hung here)
signal.signal(signal.SIGINT, signal.default_int_handler)
try:
    Service([], sys.argv[1], log=print).serve_forever()
except KeyboardInterrupt:
    print("stopped", flush=True)
"""


def test_serve_forever_serves_until_interrupted_then_the_process_ends_though_a_caller_is_connected(tmp_path):
    """`tablectl serve` runs until Ctrl-C; then it removes its socket and the process ends, though a
    caller (a monitor) still holds a connection and the ledger writer still waits for batches."""
    db = str(tmp_path / "books.db")
    proc = subprocess.Popen([sys.executable, "-c", SERVE_FOREVER, db], stdout=subprocess.PIPE, text=True)
    try:
        wait(lambda: os.path.exists(control_path(db)) or proc.poll() is not None, "the control socket", 30)
        held = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        held.settimeout(20)
        held.connect(control_path(db))
        with held:
            held.sendall(b'{"op": "sessions"}\n')
            assert json.loads(held.makefile("rb").readline()) == {"ok": True, "sessions": []}
            assert proc.poll() is None   # still serving
            proc.send_signal(signal.SIGINT)
            out, _ = proc.communicate(timeout=60)
        assert (proc.returncode, out.split()[-1:]) == (0, ["stopped"])
        assert not os.path.exists(control_path(db))
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_a_jackpot_dry_run_through_the_service_answers_what_would_be_paid_and_sends_no_award(serve):
    """The table locked, the key not turned: a dry run reads status, meters and the configuration
    from the board and answers the payments it would make (pay_jackpot's own figures are
    tests/host/test_unit_awards.py's)."""
    from table import config
    svc, board, db = serve()
    answers = {"status": {"base": "LOCKED", "seats": 7, "eligible": 1, "paid": 0},
               "meters": {"round": 3, "meter": 20_000_000, "over": 0},
               "config_get": {"config": config.defaults()}}
    board.on_command = lambda msg: board.reply(msg["id"], **answers[msg["c"]])
    reply = ask(svc, {"op": "jackpot", "hands": [[1, "As Ks Qs Js Ts"]], "dry_run": True})
    assert (reply["ok"], reply["board"], reply["result"]["round"]) == (True, "b1", 3)
    assert [p["seat"] for p in reply["result"]["payments"]] == [1]
    # each command once (a copy the service repeated while a busy machine delayed the reply has its id)
    first_copies = {}
    for m in board.messages(proto.COMMAND):
        first_copies.setdefault(m["id"], m["c"])
    assert list(first_copies.values()) == ["status", "meters", "config_get"]


def test_a_board_that_answers_late_but_within_the_silence_limit_is_not_said_silent(tmp_path, monkeypatch):
    import tablectl.service as service_mod
    monkeypatch.setattr(service_mod, "NO_BOARD_S", 3600.0)
    board = PtyBoard("b1", None)   # answers no hello at first
    lines = []
    svc = Service([board.port], str(tmp_path / "books.db"), log=lines.append)
    svc.start()
    try:
        board.wait_for(lambda m: m.get("t") == proto.HELLO, what="the host's hello")
        board.wait_for(lambda m: m.get("t") == proto.HELLO and len(board.messages(proto.HELLO)) >= 2,
                       what="the host asking again (a turn with no board known)")
        board.hello()
        wait(lambda: svc.loops[0].board_id == "b1", "the board")
        wait(lambda: lines, "the board named in the log")
        assert lines == ["%s: board b1 (fw test-fw); no table key held" % board.port]
    finally:
        svc.stop()
        board.close()
