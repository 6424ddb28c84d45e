"""The checks of tests/vectors/protocol_vectors.json, in the Python subset both interpreters run.

Used by tests/protocol/test_vectors.py (CPython, through the host's table.protocol) and by
tests/firmware/mp_test_protocol_vectors.py (MicroPython, through the firmware's table.protocol):
one list of checks, one data file, two interpreters.
"""
import json


def load(path):
    with open(path) as f:
        return json.load(f)


def unhex(text):
    return bytes.fromhex(text)


def check_crc32(proto, v):
    for case in v["crc32"]:
        assert "%08x" % proto.crc32(unhex(case["data"])) == case["crc"], case


def check_hmac(proto, v):
    for case in v["hmac_sha256"]:
        mac = proto.hmac_sha256(unhex(case["key"]), unhex(case["data"]))
        assert mac == unhex(case["mac"]), case["name"]


def check_cobs(proto, v):
    for case in v["cobs"]:
        raw = unhex(case["raw"])
        enc = unhex(case["encoded"])
        assert proto.cobs_encode(raw) == enc, case
        assert proto.cobs_decode(enc) == raw, case
        assert 0 not in enc, case


def _hex(text):
    """Hex with spaces allowed (MicroPython's bytes.fromhex takes none)."""
    return bytes.fromhex(text.replace(" ", ""))


def _run(first, last):
    """The bytes first, first+1, ..., last: the long examples below are runs like 01 02 ... FE."""
    return bytes(range(first, last + 1))


# COBS vectors that do not come from our code: worked by hand from the algorithm as Cheshire and
# Baker define it ("Consistent Overhead Byte Stuffing", IEEE/ACM Transactions on Networking 7(2),
# 1999) and from the table of examples in Wikipedia's "Consistent Overhead Byte Stuffing" article.
# The rule: every zero ends a block; a block's code byte is 1 + the number of non-zero bytes in
# it; a block of 254 non-zero bytes gets code FF and ends without a zero; the end of the packet
# ends the last block. Encodings here leave out the frame's 0x00 delimiter.
# (name, raw, encoded as the paper's StuffData writes it, another encoding a decoder must take)
COBS_ANCHORS = (
    # Blocks: [45]0 []0 [2C 4C 79]0 []0 [40 06 4F 37]end -> codes 02, 01, 04, 01, 05.
    ("paper: start of an IPv4 header", _hex("45 00 00 2C 4C 79 00 00 40 06 4F 37"),
     _hex("02 45 01 04 2C 4C 79 01 05 40 06 4F 37"), None),
    # StuffData ends with FinishBlock(code) and code starts at 1: nothing in, one code byte out.
    ("paper: an empty packet", b"", _hex("01"), None),
    ("wikipedia: 00", _hex("00"), _hex("01 01"), None),
    ("wikipedia: 00 00", _hex("00 00"), _hex("01 01 01"), None),
    ("wikipedia: 00 11 00", _hex("00 11 00"), _hex("01 02 11 01"), None),
    ("wikipedia: 11 22 00 33", _hex("11 22 00 33"), _hex("03 11 22 02 33"), None),
    ("wikipedia: 11 22 33 44", _hex("11 22 33 44"), _hex("05 11 22 33 44"), None),
    ("wikipedia: 11 00 00 00", _hex("11 00 00 00"), _hex("02 11 01 01 01"), None),
    # 254 non-zero bytes fill one block (FF). The paper's StuffData then closes an empty last
    # block (01); Wikipedia's table shows the form without it. Both decode to the same bytes.
    ("wikipedia: 01 .. FE", _run(1, 254), b"\xff" + _run(1, 254) + b"\x01", b"\xff" + _run(1, 254)),
    ("wikipedia: 00 01 .. FE", b"\x00" + _run(1, 254), b"\x01\xff" + _run(1, 254) + b"\x01",
     b"\x01\xff" + _run(1, 254)),
    # [01..FE] fills a block (FF); [FF]end -> 02 FF.
    ("wikipedia: 01 .. FF", _run(1, 255), b"\xff" + _run(1, 254) + _hex("02 FF"), None),
    # [02..FF] fills a block (FF, no zero); []0 -> 01; []end -> 01.
    ("wikipedia: 02 .. FF 00", _run(2, 255) + b"\x00", b"\xff" + _run(2, 255) + _hex("01 01"), None),
    # [03..FF]0 is 253 bytes -> FE; [01]end -> 02 01.
    ("wikipedia: 03 .. FF 00 01", _run(3, 255) + _hex("00 01"), b"\xfe" + _run(3, 255) + _hex("02 01"), None),
)


def check_cobs_anchors(proto, v):
    for name, raw, encoded, other in COBS_ANCHORS:
        assert proto.cobs_encode(raw) == encoded, name
        assert proto.cobs_decode(encoded) == raw, name
        if other is not None:
            assert proto.cobs_decode(other) == raw, name


def check_good_frames(proto, v):
    key = unhex(v["test_key"])
    for case in v["good_frames"]:
        wire = unhex(case["wire"])
        # straight decode
        frame = proto.decode_frame(wire[:-1])
        assert frame.message == case["message"], case["name"]
        assert frame.version == case.get("version", v["protocol_version"]), case["name"]
        assert (frame.mac is not None) == case["signed"], case["name"]
        assert frame.mac_ok(key) == case["mac_ok_with_test_key"], case["name"]
        assert not frame.mac_ok(bytes(32)), case["name"]  # the wrong key never passes
        # through the stream reader, one byte at a time (the reader must not care how bytes arrive)
        reader = proto.FrameReader()
        got = []
        for i in range(len(wire)):
            got += reader.feed(wire[i:i + 1])
        assert len(got) == 1 and got[0].message == case["message"], case["name"]
        assert reader.frames_ok == 1 and reader.frames_bad == 0, case["name"]
        # encode -> decode gives the message back (key order in the JSON is not significant)
        if case.get("version", v["protocol_version"]) == v["protocol_version"]:
            enc = proto.encode_frame(case["message"], key if case["signed"] else None)
            back = proto.decode_frame(enc[:-1])
            assert back.message == case["message"], case["name"]
            assert back.mac_ok(key) == case["signed"], case["name"]


def check_bad_frames(proto, v):
    for case in v["bad_frames"]:
        wire = unhex(case["wire"])
        if case["via_reader"]:
            reader = proto.FrameReader()
            split = case.get("feed_split", len(wire))
            got = reader.feed(wire[:split]) + reader.feed(wire[split:])
            assert got == [], case["name"]
            assert reader.frames_bad == 1 and reader.frames_ok == 0, case["name"]
            assert reader.last_error == case["reason"], (case["name"], reader.last_error)
            # the reader is in sync again: a good frame right after is taken
            after = reader.feed(proto.encode_frame({"t": "hb"}))
            assert len(after) == 1 and reader.frames_ok == 1, case["name"]
        else:
            try:
                proto.decode_frame(wire)
            except proto.FrameError as exc:
                assert str(exc) == case["reason"], (case["name"], str(exc))
            else:
                raise AssertionError("decoded a bad frame: " + case["name"])


def check_stream(proto, v):
    s = v["stream"]
    reader = proto.FrameReader()
    msgs = [f.message for f in reader.feed(unhex(s["wire"]))]
    assert msgs == s["messages"], msgs
    assert reader.frames_ok == s["frames_ok"] and reader.frames_bad == s["frames_bad"]


def check_versions(proto, v):
    for case in v["versions"]:
        assert proto.choose_version(case["offered"]) == case["chosen"], case
    assert v["protocol_version"] == proto.VERSION


def check_signed_frame_tamper(proto, v):
    """A signed frame re-CRC'd after a payload edit passes the CRC and fails the MAC."""
    key = unhex(v["test_key"])
    for case in v["good_frames"]:
        if not case["signed"]:
            continue
        frame = proto.decode_frame(unhex(case["wire"])[:-1])
        body = bytearray(frame.signed + frame.mac)
        body[10] ^= 0x01
        wire = proto.cobs_encode(bytes(body) + proto._le32(proto.crc32(bytes(body))))
        try:
            tampered = proto.decode_frame(wire)
        except proto.FrameError:
            continue  # the edit broke the JSON: dropped before any MAC check
        assert not tampered.mac_ok(key), case["name"]


CHECKS = (check_crc32, check_hmac, check_cobs, check_cobs_anchors, check_good_frames, check_bad_frames, check_stream,
          check_versions, check_signed_frame_tamper)
