"""How a CLI command reaches a board (tablectl.client.Target): through the running service's
control socket, or with no service straight to the port, where it keeps the service's rules
itself: a command that changes anything recorded as an intent before it is sent and with its
reply after; a money command refused before anything when the host holds no key; one owner per
port. Real pty (boardside.PtyBoard, real protocol frames), real SQLite, the real service.
"""
import argparse
import os

import pytest

from boardside import PtyBoard
from table import protocol as proto
from tablectl.client import Target
from tablectl.errors import TablectlError
from tablectl.keys import KeyStore
from tablectl.ledger import Ledger
from tablectl.service import Service

KEY = bytes(range(3, 35))


@pytest.fixture(autouse=True)
def _keys_beside_the_ledger(monkeypatch):
    monkeypatch.delenv("TABLECTL_KEYS", raising=False)


@pytest.fixture
def board():
    b = PtyBoard("b1", KEY)
    b.answers_hello = True
    yield b
    b.close()


def target_args(tmp_path, port=None, board=None):
    return argparse.Namespace(port=port, db=str(tmp_path / "books.db"), board=board)


def rows(tmp_path, kinds):
    path = str(tmp_path / "books.db")
    if not os.path.exists(path):
        return []
    led = Ledger(path, readonly=True)
    try:
        return list(led.events("b1", kinds))
    finally:
        led.close()


def hold_key(tmp_path):
    KeyStore.for_ledger(str(tmp_path / "books.db")).set_table_key("b1", KEY)


def test_with_no_service_and_no_port_it_says_both_ways_in_one_line(tmp_path):
    with pytest.raises(TablectlError) as err:
        Target(target_args(tmp_path))
    assert str(err.value) == ("no service runs for %s (default) and no --port was given: start `tablectl serve` or say "
                              "which board with --port" % (tmp_path / "books.db"))


# ---- straight to the port --------------------------------------------------------------------------
def test_direct_a_changing_command_is_recorded_before_it_is_sent_and_with_its_reply(tmp_path, board):
    hold_key(tmp_path)
    seen_intents = []

    def on_command(msg):
        seen_intents.append([r["body"]["id"] for r in rows(tmp_path, ["intent"])])
        board.reply(msg["id"], state="LOCKED")
    board.on_command = on_command
    with Target(target_args(tmp_path, board.port)) as t:
        reply = t.command("lock")
    assert reply["state"] == "LOCKED"
    assert seen_intents and reply["id"] in seen_intents[0]
    [cmd] = rows(tmp_path, ["cmd"])
    assert cmd["body"]["id"] == reply["id"] and cmd["body"]["reply"]["state"] == "LOCKED"
    assert board.refused == []   # sealed as the trust rule says


def test_direct_a_read_command_is_not_recorded(tmp_path, board):
    hold_key(tmp_path)
    board.on_command = lambda msg: board.reply(msg["id"], meter=123)
    with Target(target_args(tmp_path, board.port)) as t:
        assert t.command("meters")["meter"] == 123
    assert rows(tmp_path, ["intent", "cmd"]) == []


def test_direct_a_board_refusal_is_a_one_line_error_and_is_on_record(tmp_path, board):
    hold_key(tmp_path)
    board.on_command = lambda msg: board.reply(msg["id"], ok=False, err=proto.E_STATE,
                                               msg="unlock needs LOCKED, table is OPEN")
    with Target(target_args(tmp_path, board.port)) as t:
        with pytest.raises(TablectlError) as err:
            t.command("unlock")
    assert str(err.value) == "board refused unlock: unlock needs LOCKED, table is OPEN (STATE)"
    [cmd] = rows(tmp_path, ["cmd"])
    assert cmd["body"]["reply"]["err"] == proto.E_STATE


def test_direct_a_money_command_without_the_boards_key_is_refused_before_anything(tmp_path):
    unkeyed = PtyBoard("b1", None)
    unkeyed.answers_hello = True
    try:
        with Target(target_args(tmp_path, unkeyed.port)) as t:
            with pytest.raises(TablectlError, match="^no table key for board b1 in .*: run `tablectl provision`$"):
                t.command("meter_set", {"meter_cents": 100, "reason": "test"})
        assert unkeyed.messages(proto.COMMAND) == []
        assert rows(tmp_path, ["intent", "cmd"]) == []
    finally:
        unkeyed.close()


def test_direct_the_port_has_one_owner_and_is_given_back_on_close(tmp_path, board):
    hold_key(tmp_path)
    first = Target(target_args(tmp_path, board.port))
    try:
        with pytest.raises(TablectlError) as err:
            Target(target_args(tmp_path, board.port))
        assert "port %s is already in use by pid %d" % (board.port, os.getpid()) in str(err.value)
    finally:
        first.close()
    Target(target_args(tmp_path, board.port)).close()   # free again


def test_direct_a_board_that_never_answers_gives_the_port_back(tmp_path, board):
    board.answers_hello = False
    with pytest.raises(TablectlError, match="no board answered on the port"):
        Target(target_args(tmp_path, board.port))
    board.answers_hello = True
    Target(target_args(tmp_path, board.port)).close()   # a retry in the same process takes it


# ---- through the service ---------------------------------------------------------------------------
@pytest.fixture
def service(tmp_path, board):
    hold_key(tmp_path)
    svc = Service([board.port], str(tmp_path / "books.db"), log=lambda *a: None)
    svc.start()
    import time
    deadline = time.monotonic() + 10
    while not (svc.loops[0].connected and svc.loops[0].board_id):
        assert time.monotonic() < deadline, "the board never connected"
        time.sleep(0.02)
    yield svc
    svc.stop()


def test_with_a_service_running_commands_go_through_it_not_to_the_port(tmp_path, board, service):
    board.on_command = lambda msg: board.reply(msg["id"], state="LOCKED")
    with Target(target_args(tmp_path, port=None)) as t:   # no --port needed: the socket is found
        assert t.sock is not None and t.link is None
        assert t.command("lock")["state"] == "LOCKED"
    assert [r["body"]["cmd"] for r in rows(tmp_path, ["cmd"])] == ["lock"]   # recorded by the service


def test_a_service_refusal_comes_back_in_its_own_words(tmp_path, board, service):
    with Target(target_args(tmp_path)) as t:
        with pytest.raises(TablectlError) as err:
            t.command("meter_set", {"meter_cents": -5, "reason": "x"})
        assert str(err.value) == "meter_set: argument meter_cents=-5 is not allowed"
        with pytest.raises(TablectlError) as err:
            Target(target_args(tmp_path, board="b9")).command("status")
        assert str(err.value).startswith("this service has no board b9 (it has b1 on /dev/pts/")


def test_a_lock_file_holding_other_bytes_than_a_pid_is_named_as_an_unknown_holder(tmp_path):
    """The lock files live in /tmp, where anyone can write: a refusal never shows their bytes as
    a pid (stale text after a shorter pid, or a forged note), it says the holder is unknown."""
    import subprocess
    import sys
    from tablectl import owner
    lock = str(tmp_path / "port.lock")
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl,os,sys\nfd=os.open(sys.argv[1],os.O_RDWR|os.O_CREAT)\n"
         "fcntl.flock(fd,fcntl.LOCK_EX)\nos.write(fd,b'123/tmp/x; rm -rf ~\\n')\nprint('held',flush=True)\n"
         "sys.stdin.readline()\n", lock], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        with pytest.raises(TablectlError) as err:
            owner.take(lock, "port /dev/ttyX")
        assert str(err.value) == ("port /dev/ttyX is already in use by pid ? (lock %s): stop that process first" % lock)
    finally:
        holder.stdin.write("go\n")
        holder.stdin.flush()
        holder.wait(10)
    owner.release(owner.take(lock, "port /dev/ttyX"))
