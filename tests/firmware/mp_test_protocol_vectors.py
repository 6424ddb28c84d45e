"""tests/vectors/protocol_vectors.json on MicroPython, through the firmware's own protocol module.
The same checks run on CPython in tests/protocol/test_vectors.py."""
import mptest
import protovectors
from table import protocol as proto

# The runner's cwd is tests/firmware.
V = protovectors.load("../vectors/protocol_vectors.json")


def test_crc32():
    protovectors.check_crc32(proto, V)


def test_hmac_sha256():
    protovectors.check_hmac(proto, V)


def test_cobs():
    protovectors.check_cobs(proto, V)


def test_good_frames():
    protovectors.check_good_frames(proto, V)


def test_bad_frames_rejected_with_reason():
    protovectors.check_bad_frames(proto, V)


def test_stream_resynchronises():
    protovectors.check_stream(proto, V)


def test_version_negotiation():
    protovectors.check_versions(proto, V)


def test_tampered_signed_frame_fails_mac():
    protovectors.check_signed_frame_tamper(proto, V)


def test_every_check_is_run_here():
    names = [fn.__name__ for fn in protovectors.CHECKS]
    assert len(names) == 8, names


mptest.run(globals())
