"""The host end of a board's serial link (tablectl.link) through pyserial's own loopback port
(loop://: what is written comes back to be read): hello waits for the board's hello, a command
waits for the reply with its id and hands everything else to on_message, a board that does not
answer is a one-line error, a port that cannot be opened says so."""
import time

import pytest
import serial

from table import protocol as proto
from tablectl.errors import TablectlError
from tablectl.link import BoardLink, new_key_hex, open_port


def loop(timeout=0.05):
    return BoardLink(serial.serial_for_url("loop://", timeout=timeout))


def test_hello_returns_the_boards_hello_not_its_own_echo():
    link = loop()
    board = proto.hello("B7", "1.0", 2, "board")
    link.ser.write(proto.encode_frame(board))
    assert link.hello(timeout_s=2) == board
    assert link.board_id == "B7"


def test_no_board_hello_is_a_clear_error():
    link = loop()
    t0 = time.monotonic()
    with pytest.raises(TablectlError, match="no board answered"):
        link.hello(timeout_s=0.5)  # only its own host hellos come back
    assert time.monotonic() - t0 < 5


def test_a_command_returns_its_reply_and_passes_the_rest_on():
    link = loop()
    cid = link.next_id + 1
    link.ser.write(proto.encode_frame(proto.reply_ok(cid - 5, {"x": 1})))  # someone else's reply
    link.ser.write(proto.encode_frame({"t": "ev", "b": "B1", "q": 1, "k": "coin"}))
    link.ser.write(proto.encode_frame(proto.reply_ok(cid, {"meter": 123})))
    seen = []
    reply = link.command("status", timeout_s=2, on_message=seen.append)
    assert reply == {"t": "rep", "id": cid, "ok": 1, "meter": 123}
    kinds = [m["t"] for m in seen]
    assert kinds == ["rep", "ev"]  # what came before the reply, in order
    assert link.board_id == "B1"  # learnt from the event


def test_a_board_that_does_not_answer_is_a_one_line_error():
    link = loop()
    with pytest.raises(TablectlError, match=r"the board did not answer 'status' within 1 s"):
        link.command("status", timeout_s=1)


def test_command_ids_are_new_each_time_and_across_restarts():
    a = loop()
    time.sleep(0.01)
    b = loop()
    assert 0 < a.next_id < 10 ** 9 and a.next_id != b.next_id
    assert a.new_id() == a.new_id() - 1


def test_a_port_that_cannot_be_opened(tmp_path):
    with pytest.raises(TablectlError, match="say which board"):
        open_port("")
    with pytest.raises(TablectlError, match="cannot open %s" % (tmp_path / "none")):
        open_port(str(tmp_path / "none"))


def test_keys_are_32_random_bytes():
    a, b = new_key_hex(), new_key_hex()
    assert len(bytes.fromhex(a)) == 32 and a != b


def test_a_command_is_sent_before_its_reply_can_come():
    # the reply is written only once the command itself has gone out (its echo is seen)
    link = loop()

    def board(m):
        if m.get("t") == "cmd" and m.get("c") == "status":
            link.ser.write(proto.encode_frame(proto.reply_ok(m["id"], {"meter": 5})))

    assert link.command("status", timeout_s=3, on_message=board)["meter"] == 5


def test_frames_after_one_in_another_version_are_still_taken():
    link = loop()
    ev1 = {"t": "ev", "b": "B1", "q": 1, "k": "coin"}
    ev2 = {"t": "ev", "b": "B1", "q": 2, "k": "coin"}
    link.ser.write(proto.encode_frame(ev1, version=2) + proto.encode_frame(ev2))
    got = []
    for _ in range(5):
        got += link.read()
    assert got == [ev2] and link.frames_wrong_version == 1


def test_messages_without_a_board_id_teach_nothing():
    link = loop()
    link.ser.write(proto.encode_frame({"t": "ev", "q": 1, "k": "coin"}) +
                   proto.encode_frame(proto.reply_ok(1, {"b": "not-a-board-id"})))
    got = []
    for _ in range(5):
        got += link.read()
    assert len(got) == 2 and link.board_id is None
