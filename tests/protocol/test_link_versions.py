"""The host's link takes only hello in a frame of another protocol version (docs/PROTOCOL.md:
versions are agreed in hello). Uses pyserial's own loopback port (loop://): what is written
comes back to be read, through the same BoardLink code a board's serial port goes through."""
import serial

from table import protocol as proto
from tablectl.link import BoardLink


def _read_all(link):
    out = []
    for _ in range(5):
        out += link.read()
    return out


def test_an_event_in_another_versions_frame_is_not_taken():
    link = BoardLink(serial.serial_for_url("loop://", timeout=0.05))
    event = {"t": proto.EVENT, "b": "B1", "q": 7, "k": "coin"}
    link.ser.write(proto.encode_frame(event, version=2))
    assert _read_all(link) == []
    assert link.frames_wrong_version == 1
    # the board sends it again (it was not acknowledged); in its agreed version it is taken
    link.ser.write(proto.encode_frame(event))
    assert _read_all(link) == [event]


def test_hello_is_taken_in_any_versions_frame():
    link = BoardLink(serial.serial_for_url("loop://", timeout=0.05))
    hello = proto.hello("B9", "9.9.9", 3, "board")
    link.ser.write(proto.encode_frame(hello, version=3))
    assert _read_all(link) == [hello]
    assert link.board_id == "B9"
    assert link.frames_wrong_version == 0
