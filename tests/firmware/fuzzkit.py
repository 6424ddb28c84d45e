"""Random and mutated frames for the protocol decoders, in the Python subset both interpreters run.

The same seed gives the same frames on MicroPython and CPython (own xorshift PRNG, not `random`).
Every generated case is a run of bytes ending in 0x00; the oracle knows, without asking the
decoder, which 0x00-delimited chunks must be rejected: a chunk that is not byte-identical to a
frame the corpus encoded can only pass by a CRC-32 collision (2^-32). Chunks whose CRC was
deliberately recomputed after a body mutation ("structural" cases: bad JSON, flags, MAC, fields)
may legitimately decode; they are counted apart as `either`.

Used by benchmarks/fuzz_protocol.py (1,000,000 frames per side), tests/firmware/mp_test_protocol_fuzz.py
and tests/protocol/test_fuzz_properties.py.
"""


class XorShift:
    def __init__(self, seed):
        self.x = (seed * 2654435761 + 1) & 0xFFFFFFFF or 1

    def next(self):
        x = self.x
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self.x = x
        return x

    def below(self, n):
        return self.next() % n

    def bytes(self, n):
        out = bytearray(n)
        for i in range(n):
            out[i] = self.next() & 0xFF
        return bytes(out)


TEST_KEY = bytes(range(32))


def corpus(proto):
    """(safe, unsafe): encoded frames without their delimiter. `safe` frames change nothing on a
    board when delivered intact (read-only commands, heartbeats); `unsafe` ones would (acks,
    signed money commands, hello, lock): they are only ever sent mutated."""
    safe_msgs = [proto.heartbeat(), proto.heartbeat(12345), proto.command(7, "status"),
                 proto.command(8, "meters"), proto.command(9, "config_get"), proto.command(10, "diag"),
                 proto.reply_ok(3, {"state": "OPEN"}), {"t": "ev", "b": "x", "k": "coin", "q": 5, "seat": 1}]
    unsafe = [proto.encode_frame(proto.ack(10 ** 6))[:-1], proto.encode_frame(proto.ack(3, True))[:-1],
              proto.encode_frame(proto.hello())[:-1], proto.encode_frame(proto.command(11, "lock"))[:-1],
              proto.sealed_frame(proto.command(12, "award", {"seat": 0, "amount_cents": 99999, "meter_cents": 99999,
                                                             "reset": True, "round": 1}), TEST_KEY, "1.00", 10 ** 9)[:-1],
              proto.sealed_frame(proto.command(13, "meter_set", {"meter_cents": 1, "reason": "x"}),
                                 TEST_KEY, "1.00", 10 ** 9)[:-1],
              proto.encode_frame(proto.command(14, "provision", {"key": "00" * 32}))[:-1],
              proto.encode_frame(proto.command(15, "display_test", {"ms": 5}))[:-1]]
    safe = [proto.encode_frame(m)[:-1] for m in safe_msgs]
    return safe, unsafe


def _wrap(proto, body):
    return proto.cobs_encode(body + proto._le32(proto.crc32(body)))


class Generator:
    """make(n) -> (stream bytes, expected dict). Counts in expected: ok (must decode), bad (must
    be rejected), either (structural: CRC good, content mutated), intact_safe (safe frames sent
    unmutated, so the decoder's good path runs too)."""

    def __init__(self, proto, seed, allow_unsafe_intact=False, hostile=False):
        self.proto = proto
        self.rng = XorShift(seed)
        self.safe, self.unsafe = corpus(proto)
        self.all = self.safe + self.unsafe
        self.valid = {}
        for f in self.all:
            self.valid[f] = True
        self.unsafe_set = {}
        for f in self.unsafe:
            self.unsafe_set[f] = True
        self.allow_unsafe_intact = allow_unsafe_intact
        # hostile: structural edits of the signed money commands too (CRC good, MAC now wrong):
        # the board must refuse them (BAD_MAC), journaling each refusal and changing nothing else.
        self.money = {}
        if hostile:
            for f in self.unsafe[4:6]:
                self.money[f] = True
        self.frames = 0

    def _mutate(self, frame):
        rng = self.rng
        n = len(frame)
        op = rng.below(12)
        b = bytearray(frame)
        if op == 0:  # 1-3 bit flips
            for _ in range(1 + rng.below(3)):
                i = rng.below(n)
                b[i] ^= 1 << rng.below(8)
        elif op == 1:  # bytes replaced
            for _ in range(1 + rng.below(4)):
                b[rng.below(n)] = rng.below(256)
        elif op == 2:  # tail lost
            b = b[:1 + rng.below(n - 1)]
        elif op == 3:  # head lost (receiver joined mid-frame)
            b = b[1 + rng.below(n - 1):]
        elif op == 4:  # bytes inserted
            i = rng.below(n + 1)
            b = b[:i] + rng.bytes(1 + rng.below(8)) + b[i:]
        elif op == 5:  # a range deleted
            i = rng.below(n)
            b = b[:i] + b[i + 1 + rng.below(8):]
        elif op == 6:  # a range duplicated
            i = rng.below(n)
            j = i + 1 + rng.below(16)
            b = b[:j] + b[i:j] + b[j:]
        elif op == 7:  # pure random bytes, maybe with zeros
            return rng.bytes(1 + rng.below(80)), False
        elif op == 8:  # two frames spliced
            other = self.all[rng.below(len(self.all))]
            b = b[:1 + rng.below(n - 1)] + other[1 + rng.below(len(other) - 1):]
        elif op == 9:  # a 0x00 inserted (splits the frame)
            i = rng.below(n + 1)
            b = b[:i] + b"\x00" + b[i:]
        elif op == 10:  # long garbage with no delimiter (lost sync), sometimes past the limit
            return bytes(rng.below(255) + 1 for _ in range(200 + rng.below(1200))), False
        else:  # structural: body edited, CRC recomputed (flags, JSON, MAC, fields)
            raw = self.proto.cobs_decode(frame)[:-4]
            body = bytearray(raw)
            i = rng.below(len(body))
            body[i] ^= 1 << rng.below(8)
            return _wrap(self.proto, bytes(body)), True
        return bytes(b), False

    def case(self):
        """One case: (bytes ending in 0x00, structural flag, intact flag)."""
        rng = self.rng
        if rng.below(50) == 0:
            f = self.safe[rng.below(len(self.safe))]
            return f + b"\x00", False, True
        pool = self.all if rng.below(3) else self.unsafe
        for _ in range(20):
            base = pool[rng.below(len(pool))]
            data, structural = self._mutate(base)
            if structural and base not in self.money and (base in self.unsafe_set or base[3:10].find(b'"hello') >= 0):
                continue  # a structurally valid edit of a money/ack frame could be acted on: skip
            if self.allow_unsafe_intact or not self._has_unsafe_chunk(data):
                return data + b"\x00", structural, False
        return b"\x01\x02\x03\x00", False, False

    def _has_unsafe_chunk(self, data):
        for chunk in data.split(b"\x00"):
            if chunk in self.unsafe_set:
                return True
        return False

    def expect(self, data, structural, expected):
        for chunk in data.split(b"\x00"):
            if not chunk:
                continue
            self.frames += 1
            if chunk in self.valid:
                expected["ok"] += 1
            elif structural:
                expected["either"] += 1
            else:
                expected["bad"] += 1

    def make(self, n_cases):
        expected = {"ok": 0, "bad": 0, "either": 0}
        parts = []
        for _ in range(n_cases):
            data, structural, intact = self.case()
            self.expect(data, structural, expected)
            parts.append(data)
        return b"".join(parts), expected


def check_counts(reader, expected, label=""):
    total = expected["ok"] + expected["bad"] + expected["either"]
    got = reader.frames_ok + reader.frames_bad
    assert got == total, "%s: decoder saw %d frames, stream had %d" % (label, got, total)
    assert reader.frames_bad >= expected["bad"], "%s: %d bad counted, at least %d expected" % (
        label, reader.frames_bad, expected["bad"])
    assert reader.frames_ok >= expected["ok"], "%s: %d good, at least %d expected" % (
        label, reader.frames_ok, expected["ok"])


def fuzz_reader(proto, n_frames, seed=1, batch=64, split_every=7):
    """Frames into a FrameReader, in batches cut at random points. Returns stats."""
    gen = Generator(proto, seed, allow_unsafe_intact=True)
    reader = proto.FrameReader()
    expected = {"ok": 0, "bad": 0, "either": 0}
    rng = XorShift(seed + 99)
    batches = 0
    while gen.frames < n_frames:
        stream, exp = gen.make(batch)
        for k in exp:
            expected[k] += exp[k]
        if batches % split_every == 0 and len(stream) > 2:
            cut = 1 + rng.below(len(stream) - 1)
            reader.feed(stream[:cut])
            reader.feed(stream[cut:])
        else:
            reader.feed(stream)
        batches += 1
    check_counts(reader, expected, "FrameReader")
    return {"frames": gen.frames, "frames_ok": reader.frames_ok, "frames_bad": reader.frames_bad,
            "expected_bad_min": expected["bad"], "structural": expected["either"]}


def snapshot(app, hostile=False):
    snap = {"meters": app.meters(), "base": app.state["base"], "faults": list(app.faults),
            "host_counter": app.link.host_counter, "key": app.key.raw if app.key else None,
            "round": app.state["round"]}
    if not hostile:  # hostile runs journal a cmd_refused event per refused frame, by design
        snap["next_seq"] = app.journal.next_seq
        snap["acked"] = app.journal.acked_seq
    return snap


def fuzz_app(app, board, proto, n_frames, seed=1, batch=32, now_ms=None, progress=None, hostile=False):
    """Frames into the firmware's TableApp on a SimBoard: its link buffer, then step().
    Asserts no exception, meters/state/key/counter unchanged, counts exact; unless hostile, nothing
    journaled. hostile: re-CRC'd signed commands too, and the fuzzer acks like a host (the ack is
    counted as a good frame) so refusals do not fill the outbox."""
    gen = Generator(proto, seed, hostile=hostile)
    before = snapshot(app, hostile)
    bad0 = app.link.reader.frames_bad
    ok0 = app.link.reader.frames_ok
    expected = {"ok": 0, "bad": 0, "either": 0}
    now = now_ms if now_ms is not None else board.now_ms()
    steps = 0
    while gen.frames < n_frames:
        stream, exp = gen.make(batch)
        for k in exp:
            expected[k] += exp[k]
        board.rx.extend(stream)
        if hostile:
            board.rx.extend(proto.encode_frame(proto.ack(app.journal.next_seq - 1)))
            expected["ok"] += 1
        app.step(now)
        steps += 1
        now += 1
        board.tx = bytearray()  # replies and heartbeats: the fuzzer's host does not read them
        if progress and steps % 2000 == 0:
            progress(gen.frames)
    after = snapshot(app, hostile)
    assert after == before, "state changed: %r -> %r" % (before, after)

    class _Delta:
        pass
    d = _Delta()
    d.frames_ok = app.link.reader.frames_ok - ok0
    d.frames_bad = app.link.reader.frames_bad - bad0
    check_counts(d, expected, "TableApp")
    return {"frames": gen.frames, "frames_ok": d.frames_ok, "frames_bad": d.frames_bad,
            "expected_bad_min": expected["bad"], "structural": expected["either"],
            "refused": app.link.frames_refused, "steps": steps}
