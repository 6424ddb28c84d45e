"""The protocol's limits and message shapes (docs/PROTOCOL.md), on MicroPython and CPython:
the largest frame, the shortest frames, HMAC keys at the block size, the optional fields of the
messages both sides build. HMAC values were computed with CPython's hmac module (RFC 2104), an
implementation independent of table.protocol.hmac_sha256."""
import mptest
from table import protocol as P

HMAC_64 = "d397a94399b49feaf2b397bde6c1358e4194e4398fcbd76321be91cdd7362349"  # key bytes 0..63
HMAC_65 = "e87c1b425b8f309595c13eee29154d1453aacf7d6afb35a6d2b249b84bbf4d84"  # key bytes 0..64


def _message_with_body(n, signed):
    """A heartbeat padded so that its frame body (version, flags, payload[, MAC]) is n bytes."""
    base = len(P.encode_payload({"t": "hb", "pad": ""})) + 2 + (P.MAC_BYTES if signed else 0)
    return {"t": "hb", "pad": "x" * (n - base)}


def test_the_largest_frame_goes_through_and_one_byte_more_is_refused():
    for key in (None, b"k" * 32):
        msg = _message_with_body(P.MAX_BODY_BYTES, key is not None)
        wire = P.encode_frame(msg, key)
        reader = P.FrameReader()
        got = []
        for i in range(len(wire)):  # a byte at a time: the run limit is checked before the delimiter
            got += reader.feed(wire[i:i + 1])
        assert len(got) == 1 and got[0].message == msg and reader.frames_bad == 0
        assert got[0].mac_ok(key) == (key is not None)
        too_long = _message_with_body(P.MAX_BODY_BYTES + 1, key is not None)
        err = mptest.raises(P.FrameError, P.encode_frame, too_long, key)
        assert str(err) == "message too long for one frame"
    assert P.MAX_BODY_BYTES == 1024


def test_a_run_longer_than_any_frame_is_one_bad_frame_and_the_next_is_taken():
    reader = P.FrameReader()
    assert reader.feed(b"\x01" * 600) == [] and reader.feed(b"\x01" * 600) == []
    assert reader.feed(b"\x01" * 600) == []  # still the same overlong run: dropped, not buffered
    good = P.encode_frame({"t": "hb"})
    got = reader.feed(b"\x00" + good)
    assert len(got) == 1 and reader.frames_bad == 1 and reader.last_error == "frame too long"
    assert reader.bytes_in == 1800 + 1 + len(good)  # every byte counted, dropped ones too


def _raw_frame(body):
    return P.cobs_encode(body + P._le32(P.crc32(body)))


def test_the_shortest_frames():
    # version, flags and a CRC: 6 bytes, empty payload -> not JSON; one byte less -> too short
    assert str(mptest.raises(P.FrameError, P.decode_frame, _raw_frame(b"\x01\x00"))) == "payload is not JSON"
    short = P.cobs_encode(b"\x01" + P._le32(P.crc32(b"\x01")))
    assert str(mptest.raises(P.FrameError, P.decode_frame, short)) == "frame too short"
    # signed: version, flags, at least 2 payload bytes and the 32-byte MAC
    ok_len = bytes((1, P.FLAG_MAC)) + b"{}" + bytes(P.MAC_BYTES)
    assert str(mptest.raises(P.FrameError, P.decode_frame, _raw_frame(ok_len))) == "payload is not a message"
    assert str(mptest.raises(P.FrameError, P.decode_frame, _raw_frame(ok_len[:-1]))) == "signed frame too short"


def test_hmac_keys_at_and_past_the_block_size():
    assert P.hmac_sha256(bytes(range(64)), b"table") == bytes.fromhex(HMAC_64)
    assert P.hmac_sha256(bytes(range(65)), b"table") == bytes.fromhex(HMAC_65)


def test_macs_compare_equal_only_when_equal():
    a = bytes(range(32))
    assert P.macs_equal(a, bytes(range(32)))
    for i in (0, 31):
        b = bytearray(a)
        b[i] ^= 0x80
        assert not P.macs_equal(a, bytes(b))
    assert not P.macs_equal(a, a[:31])


def test_optional_fields_are_sent_only_when_given():
    assert P.hello() == {"t": "hello", "v": list(P.SUPPORTED_VERSIONS), "role": "host"}
    h = P.hello("sim-1", "1.2", 0, role="board")
    assert (h["b"], h["fw"], h["boot"], h["role"]) == ("sim-1", "1.2", 0, "board")  # boot 0 is a value
    assert P.ack(5) == {"t": "ack", "q": 5}
    assert P.ack(5, gap=True) == {"t": "ack", "q": 5, "gap": 1}
    assert P.heartbeat() == {"t": "hb"} and P.heartbeat(0) == {"t": "hb", "q": 0}
    assert P.command(3, "status") == {"t": "cmd", "id": 3, "c": "status", "a": {}}
    h = P.hello("sim-1", "1.2", 0, "board", "0.ab", -1, 0)  # session, host counter, acked: 0 and -1 are values
    assert (h["s"], h["hn"], h["a"]) == ("0.ab", -1, 0)
    sealed = P.decode_frame(P.sealed_frame(P.command(3, "award", {"seat": 1}), b"k" * 32, "0.ab", 0)[:-1])
    assert sealed.message["s"] == "0.ab" and sealed.message["n"] == 0 and sealed.mac_ok(b"k" * 32)
    assert P.check_sealed(sealed, b"k" * 32, "0.ab", -1) == (None, 0)
    assert P.check_sealed(sealed, b"k" * 32, "0.ab", 0)[0] == P.E_REPLAY      # not above the last
    assert P.check_sealed(sealed, b"k" * 32, "1.cd", -1)[0] == P.E_REPLAY     # another session
    assert P.check_sealed(sealed, b"j" * 32, "0.ab", -1)[0] == P.E_BAD_MAC    # another key
    # A counter must be a whole number above the last: not a fraction, a string or a boolean,
    # whatever its value (a replayed frame cannot dodge the check by a type its comparison allows).
    for odd in (1.5, "5", True, None, [7]):
        odd_frame = P.decode_frame(P.sealed_frame(P.command(3, "award", {"seat": 1}), b"k" * 32, "0.ab", odd)[:-1])
        assert odd_frame.mac_ok(b"k" * 32)
        assert P.check_sealed(odd_frame, b"k" * 32, "0.ab", -1)[0] == P.E_REPLAY, odd
    assert P.reply_ok(3) == {"t": "rep", "id": 3, "ok": 1}
    assert P.reply_ok(3, {"meter": 7}) == {"t": "rep", "id": 3, "ok": 1, "meter": 7}
    assert P.reply_error(3, P.E_STATE, "no") == {"t": "rep", "id": 3, "ok": 0, "err": "STATE", "msg": "no"}


def test_version_choice():
    assert P.choose_version([1]) == 1 and P.choose_version([2, 1, 0]) == 1
    assert P.choose_version([2]) is None and P.choose_version([]) is None
    assert P.choose_version(7) is None and P.choose_version("1") is None


def test_a_key_made_from_a_key_signs_the_same_and_no_key_seals_nothing():
    key = P.MacKey(bytes(range(32)))
    again = P.MacKey(key)
    assert again.raw == key.raw and again.mac(b"abc") == key.mac(b"abc")
    [frame] = P.FrameReader().feed(P.sealed_frame({"t": "hb"}, None, "1.ab", 5))
    assert frame.mac is None and frame.message == {"t": "hb"}  # unsigned and unstamped (no key yet)


def test_cobs_output_is_exactly_the_encoding_and_decodes_back():
    # The encoder allocates its output once: that size must hold the worst case (no zeros: one
    # code byte per 254 data bytes, plus one) at every length, up to a run far past one frame.
    for n in (0, 1, 253, 254, 255, 508, 509, 64769, 64770, 64771):
        data = bytes(1 + i % 255 for i in range(n))  # no zero byte anywhere
        enc = P.cobs_encode(data)
        assert len(enc) == n + n // 254 + 1, n
        assert 0 not in enc and P.cobs_decode(enc) == data, n
        framed = P.cobs_encode(data, True)
        assert framed == enc + b"\x00", n
    for data in (b"\x00", b"\x00\x00", b"\x11\x00\x22", bytes(300)):
        enc = P.cobs_encode(data)
        assert len(enc) == len(data) + 1 and P.cobs_decode(enc) == data
    # Shorter than the worst case when zeros break the runs: the frame ends at the delimiter, with
    # nothing of the spare room after it.
    data = bytes(range(3, 256)) + b"\x00\x01"
    assert P.cobs_encode(data, True) == b"\xfe" + bytes(range(3, 256)) + b"\x02\x01\x00"



def _cobs_byte_by_byte(data):
    # The encoding as Cheshire and Baker define it, one byte at a time: the reference the
    # block-copying encoder must match exactly.
    out = bytearray([0])
    code_at = 0
    code = 1
    for b in data:
        if b == 0:
            out[code_at] = code
            code_at = len(out)
            out.append(0)
            code = 1
        else:
            out.append(b)
            code += 1
            if code == 0xFF:
                out[code_at] = code
                code_at = len(out)
                out.append(0)
                code = 1
    out[code_at] = code
    return bytes(out)


def test_cobs_matches_the_byte_by_byte_encoding_at_every_block_boundary():
    # Zeros at every distance from a block's end, runs of exactly 253, 254 and 255 non-zero
    # bytes, zeros first and last, and random data with zeros sparse and dense.
    import random
    random.seed(20261125)
    cases = [b"", b"\x00", b"\x01", bytes(2)]
    for run in (252, 253, 254, 255, 256, 507, 508, 509):
        body = bytes(1 + i % 255 for i in range(run))
        cases += [body, body + b"\x00", b"\x00" + body, body + b"\x00" + body, body + bytes(3)]
    for _ in range(300):
        n = random.getrandbits(10)
        dense = random.getrandbits(3) + 1  # a zero about one byte in 2**dense
        cases.append(bytes(0 if random.getrandbits(dense) == 0 else random.getrandbits(8) | 1 for _ in range(n)))
    for data in cases:
        expect = _cobs_byte_by_byte(data)
        assert P.cobs_encode(data) == expect, data
        assert P.cobs_encode(bytearray(data), True) == expect + b"\x00", data
        assert P.cobs_encode(memoryview(data)) == expect, data
        assert P.cobs_decode(expect) == data

mptest.run(globals())
