"""Property tests (hypothesis) of the wire protocol on CPython, and a reduced run of the fuzzer
that benchmarks/fuzz_protocol.py runs at 1,000,000 frames."""
import importlib.util
import os
import sys

from hypothesis import assume, given, settings, strategies as st

from table import protocol as proto

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
_spec = importlib.util.spec_from_file_location("fuzzkit", os.path.join(ROOT, "tests", "firmware", "fuzzkit.py"))
fuzzkit = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(fuzzkit)

json_scalars = st.one_of(st.none(), st.booleans(), st.integers(-10 ** 15, 10 ** 15), st.text(max_size=20))
json_values = st.recursive(json_scalars, lambda inner: st.one_of(
    st.lists(inner, max_size=4), st.dictionaries(st.text(max_size=8), inner, max_size=4)), max_leaves=12)
messages = st.builds(lambda t, rest: dict(rest, t=t), st.text(min_size=1, max_size=8),
                     st.dictionaries(st.text(max_size=8).filter(lambda k: k != "t"), json_values, max_size=6))
keys = st.binary(min_size=1, max_size=80)


def _fits(message, key=None):
    """The message's frame, or None for one too long for a frame (the tests then assume() it away:
    Hypothesis counts it as rejected, and fails a test whose examples are mostly rejected)."""
    try:
        return proto.encode_frame(message, key)
    except proto.FrameError:
        return None


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=2000))
def test_cobs_round_trip(data):
    enc = proto.cobs_encode(data)
    assert 0 not in enc
    assert len(enc) <= len(data) + len(data) // 254 + 1
    assert proto.cobs_decode(enc) == data


@settings(max_examples=300, deadline=None)
@given(messages, st.one_of(st.none(), keys))
def test_frame_round_trip(message, key):
    wire = _fits(message, key)
    assume(wire is not None)
    assert wire.endswith(b"\x00") and 0 not in wire[:-1]
    frame = proto.decode_frame(wire[:-1])
    assert frame.message == message
    if key is not None:
        assert frame.mac_ok(key)
        assert not frame.mac_ok(key + b"x")
    else:
        assert frame.mac is None and not frame.mac_ok(b"k")


@settings(max_examples=300, deadline=None)
@given(messages, st.data())
def test_any_single_bit_flip_is_rejected(message, data):
    wire = _fits(message)
    assume(wire is not None)
    i = data.draw(st.integers(0, len(wire) - 2))
    bit = data.draw(st.integers(0, 7))
    bad = bytearray(wire)
    bad[i] ^= 1 << bit
    reader = proto.FrameReader()
    got = reader.feed(bytes(bad))
    assert got == [] and reader.frames_bad >= 1 and reader.frames_ok == 0


@settings(max_examples=200, deadline=None)
@given(st.lists(messages, min_size=1, max_size=6), st.lists(st.integers(1, 64), max_size=20),
       st.binary(max_size=40))
def test_stream_in_any_pieces_gives_the_same_messages(msgs, cuts, garbage):
    frames = [w for w in (_fits(m) for m in msgs) if w is not None]
    assume(frames)  # a stream of garbage alone says nothing of the pieces
    stream = garbage + b"\x00" + b"".join(frames)
    reader = proto.FrameReader()
    got, pos, k = [], 0, 0
    while pos < len(stream):
        step = cuts[k % len(cuts)] if cuts else len(stream)
        got += reader.feed(stream[pos:pos + step])
        pos += step
        k += 1
    expect = [proto.decode_frame(w[:-1]).message for w in frames]
    assert [f.message for f in got][-len(expect):] == expect


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=3000))
def test_arbitrary_bytes_never_raise_and_are_counted(data):
    reader = proto.FrameReader()
    good = reader.feed(data + b"\x00")
    chunks = [c for c in data.split(b"\x00") if c]
    assert reader.frames_ok + reader.frames_bad == len(chunks)
    assert len(good) == reader.frames_ok


def test_fuzz_frame_reader_reduced():
    stats = fuzzkit.fuzz_reader(proto, 50000, seed=21)
    assert stats["frames_bad"] >= stats["expected_bad_min"] > 40000


def test_fuzz_table_app_on_cpython_reduced(tmp_path):
    """The firmware's TableApp also runs on CPython (pure logic): the same fuzz as on MicroPython."""
    sys.path[:0] = [os.path.join(ROOT, "firmware")]
    try:
        from boards.sim import SimBoard
        from table.app import TableApp
        from table import protocol as fw_proto
        os.mkdir(tmp_path / "data")
        board = SimBoard(str(tmp_path), "sim-fuzz", 8, 8, "pio")
        app = TableApp(board, 1000)
        stats = fuzzkit.fuzz_app(app, board, fw_proto, 20000, seed=22, now_ms=1000)
        assert stats["frames_bad"] >= stats["expected_bad_min"]
    finally:
        del sys.path[0]
