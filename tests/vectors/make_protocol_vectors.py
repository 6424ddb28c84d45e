"""Writes tests/vectors/protocol_vectors.json from firmware/table/protocol.py (the one wire
protocol). Run it after a deliberate protocol change and review the diff:

    .venv/bin/python tests/vectors/make_protocol_vectors.py

The same file is checked on CPython (tests/protocol/test_vectors.py) and on MicroPython
(tests/firmware/mp_test_protocol_vectors.py). Payload JSON here is written with sorted keys so the
bytes are reproducible; a receiver never depends on key order (the MAC covers the bytes as sent).
"""
import importlib.util
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
_spec = importlib.util.spec_from_file_location("wire", os.path.join(ROOT, "firmware", "table", "protocol.py"))
proto = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(proto)

KEY = bytes(range(32))  # the test table key: 000102...1f


def payload(message):
    return json.dumps(message, separators=(",", ":"), sort_keys=True).encode()


def frame(message, key=None, version=proto.VERSION, flags=None, raw_payload=None):
    body_payload = raw_payload if raw_payload is not None else payload(message)
    if flags is None:
        flags = proto.FLAG_MAC if key is not None else 0
    body = bytes((version, flags)) + body_payload
    if key is not None:
        body += proto.hmac_sha256(key, body)
    return proto.cobs_encode(body + proto._le32(proto.crc32(body))) + b"\x00"


def wrap(body):
    """COBS + CRC around an arbitrary body (for bad-content vectors with a good CRC)."""
    return proto.cobs_encode(body + proto._le32(proto.crc32(body))) + b"\x00"


def good_frames():
    cases = [
        ("hello from the host", proto.hello(), None),
        ("hello from a board", proto.hello("sim-0001", "0.1.0", 12, "board"), None),
        ("ack up to 41", proto.ack(41), None),
        ("ack with gap: resend from 42", proto.ack(41, gap=True), None),
        ("host heartbeat", proto.heartbeat(), None),
        ("board heartbeat with newest seq", proto.heartbeat(977), None),
        ("read-only command (status)", proto.command(1001, "status"), None),
        ("signed money command (award), sealed with the board's session and a counter",
         dict(proto.command(1002, "award", {"seat": 3, "round": 12, "amount_cents": 2500, "meter_cents": 0,
                                            "hand": "flush"}), s="7.1c9e04aa", n=41), KEY),
        ("reply ok", proto.reply_ok(1001, {"state": "OPEN", "meter": 10000070}), None),
        ("reply error", proto.reply_error(1002, proto.E_REPLAY, "counter 41 not above 41"), None),
        ("event: coin credited", {"t": "ev", "b": "sim-0001", "k": "coin", "ms": 123456, "q": 42, "seat": 2,
                                  "round": 5, "inc": 70, "to_meter": 70, "to_over": 0, "reserve": 0,
                                  "p": {"meter": 10000070, "c2": 1, "t2": 1}}, None),
        ("event: late coin", {"t": "ev", "b": "sim-0001", "k": "late_coin", "ms": 123999, "q": 43, "seat": 4,
                              "state": "LOCKED", "round": 5}, None),
        ("long payload (COBS block of 254 non-zero bytes)", {"t": "hb", "pad": "x" * 300}, None),
        ("unicode text", proto.reply_error(5, proto.E_BAD_ARGS, "seat \u00e9"), None),
    ]
    out = []
    for name, message, key in cases:
        wire = frame(message, key)
        got = proto.decode_frame(wire[:-1])
        assert got.message == message
        out.append({"name": name, "wire": wire.hex(), "message": message, "signed": key is not None,
                    "mac_ok_with_test_key": bool(key is not None and got.mac_ok(KEY))})
    # A version byte the receiver does not speak still frames correctly: versions are
    # negotiated by hello, the byte is informational (see PROTOCOL.md).
    msg = proto.heartbeat()
    out.append({"name": "version byte 2 (framing is version-independent)", "wire": frame(msg, version=2).hex(),
                "message": msg, "signed": False, "mac_ok_with_test_key": False, "version": 2})
    return out


def bad_frames():
    ok = frame(proto.heartbeat(5))
    body = bytes((1, 0)) + payload(proto.heartbeat(5))
    cases = []

    def add(name, wire, reason, reader=True, split=None):
        case = {"name": name, "wire": wire.hex(), "reason": reason, "via_reader": reader}
        if split is not None:
            case["feed_split"] = split  # fed to the reader as wire[:split], then wire[split:]
        cases.append(case)

    flipped = bytearray(ok)
    flipped[5] ^= 0x01
    add("one bit flipped in the payload", bytes(flipped), "CRC mismatch")
    crc_flip = bytearray(ok)
    crc_flip[-2] ^= 0x80
    add("one bit flipped in the CRC", bytes(crc_flip), "CRC mismatch")
    add("truncated (last 3 bytes before the delimiter lost)", ok[:-4] + b"\x00", "COBS block runs past the frame")
    add("truncated inside the CRC", proto.cobs_encode((body + proto._le32(proto.crc32(body)))[:-1]) + b"\x00",
        "CRC mismatch")
    add("COBS code byte points past the end", b"\x09\x01\x02\x00", "COBS block runs past the frame")
    add("too short for version, flags and CRC", proto.cobs_encode(b"\x01\x00\x7b") + b"\x00", "frame too short")
    add("unknown flag bit", wrap(bytes((1, 0x02)) + payload(proto.heartbeat())), "unknown flags")
    add("MAC flag without room for a MAC", wrap(bytes((1, proto.FLAG_MAC)) + b'{"t":"hb"}'),
        "signed frame too short")
    add("payload is not JSON", wrap(bytes((1, 0)) + b'{"t":"hb"'), "payload is not JSON")
    add("payload is JSON but not an object", wrap(bytes((1, 0)) + b'[1,2,3]'), "payload is not a message")
    add("object without a string t", wrap(bytes((1, 0)) + b'{"t":5}'), "payload is not a message")
    add("random garbage", bytes.fromhex("0a17c3e80b9902ff41ab") + b"\x00", "CRC mismatch")
    too_long = b"\x01" + bytes([0x41]) * 1300  # no delimiter for 1301 bytes: lost sync
    add("longer than any frame (lost delimiter), arriving in two reads", too_long + b"\x00", "frame too long",
        split=len(too_long))
    # decode_frame() alone (a reader never passes it a 0x00: it splits the stream there)
    add("a 0x00 where a COBS code byte belongs", b"\x02\x01\x00\x05", "zero byte inside a COBS block", reader=False)
    for c in cases:
        if c["via_reader"]:
            r = proto.FrameReader()
            wire = bytes.fromhex(c["wire"])
            split = c.get("feed_split", len(wire))
            assert r.feed(wire[:split]) + r.feed(wire[split:]) == [] and r.frames_bad == 1, c
            assert r.last_error == c["reason"], (c, r.last_error)
        else:
            try:
                proto.decode_frame(bytes.fromhex(c["wire"]))
                raise AssertionError(c)
            except proto.FrameError as exc:
                assert str(exc) == c["reason"], (c, exc)
    return cases


def cobs_vectors():
    cases = [b"", b"\x00", b"\x00\x00", b"\x11\x22\x00\x33", b"\x11\x22\x33\x44", b"\x11\x00\x00\x00",
             bytes(range(1, 255)), bytes(range(1, 256)), bytes(range(0, 256)), bytes(range(2, 256)) + b"\x00\x01"]
    return [{"raw": c.hex(), "encoded": proto.cobs_encode(c).hex()} for c in cases]


def stream_vector():
    """Garbage, two good frames glued together, idle delimiters, a bad frame, a good frame."""
    parts = [b"\xde\xad\xbe\xef", b"\x00", frame(proto.ack(1)), frame(proto.ack(2)), b"\x00\x00",
             bytes.fromhex("0301020304") + b"\x00", frame(proto.heartbeat())]
    wire = b"".join(parts)
    r = proto.FrameReader()
    msgs = [f.message for f in r.feed(wire)]
    return {"wire": wire.hex(), "messages": msgs, "frames_ok": r.frames_ok, "frames_bad": r.frames_bad}


def main():
    hmac_msg = bytes((1, 1)) + payload(dict(proto.command(1002, "award", {"seat": 3, "round": 12, "amount_cents": 2500,
                                                                           "meter_cents": 0, "hand": "flush"}),
                                            s="7.1c9e04aa", n=41))
    vectors = {
        "about": "Generated by tests/vectors/make_protocol_vectors.py from firmware/table/protocol.py; "
                 "see docs/PROTOCOL.md. Hex strings; 'wire' includes the trailing 0x00 delimiter.",
        "protocol_version": proto.VERSION,
        "test_key": KEY.hex(),
        "crc32": [{"data": b"123456789".hex(), "crc": "%08x" % proto.crc32(b"123456789")},
                  {"data": "", "crc": "%08x" % proto.crc32(b"")}],
        "hmac_sha256": [
            {"name": "RFC 4231 test case 2", "key": b"Jefe".hex(),
             "data": b"what do ya want for nothing?".hex(),
             "mac": proto.hmac_sha256(b"Jefe", b"what do ya want for nothing?").hex()},
            {"name": "RFC 4231 test case 6 (key longer than a block)", "key": (b"\xaa" * 131).hex(),
             "data": b"Test Using Larger Than Block-Size Key - Hash Key First".hex(),
             "mac": proto.hmac_sha256(b"\xaa" * 131, b"Test Using Larger Than Block-Size Key - Hash Key First").hex()},
            {"name": "award command body (version|flags|payload) under the test key", "key": KEY.hex(),
             "data": hmac_msg.hex(), "mac": proto.hmac_sha256(KEY, hmac_msg).hex()},
        ],
        "cobs": cobs_vectors(),
        "good_frames": good_frames(),
        "bad_frames": bad_frames(),
        "stream": stream_vector(),
        "versions": [{"offered": [1], "chosen": 1}, {"offered": [1, 2, 3], "chosen": 1},
                     {"offered": [2], "chosen": None}, {"offered": [], "chosen": None}],
    }
    assert vectors["hmac_sha256"][0]["mac"] == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843"
    assert vectors["hmac_sha256"][1]["mac"] == "60e431591ee0b67f0d8a26aacbf5b77f8e0bc6213728c5140546040f0ee37f54"
    assert vectors["crc32"][0]["crc"] == "cbf43926"
    path = os.path.join(HERE, "protocol_vectors.json")
    with open(path, "w") as f:
        json.dump(vectors, f, indent=1, sort_keys=True)
        f.write("\n")
    print("wrote %s: %d good frames, %d bad frames, %d COBS, %d HMAC" % (
        path, len(vectors["good_frames"]), len(vectors["bad_frames"]), len(vectors["cobs"]),
        len(vectors["hmac_sha256"])))


if __name__ == "__main__":
    main()
