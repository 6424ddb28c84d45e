"""Fuzz both sides' decoders: N random and mutated frames (default 1,000,000) into
  - FrameReader.feed on CPython (the host's link) and on MicroPython (the board's),
  - the firmware's command handling: TableApp on a SimBoard, on MicroPython and on CPython.
Checks: no exception, meters/state/key/counter unchanged and nothing journaled, every frame that
must be bad counted bad (frames_ok + frames_bad = frames sent). Same generator and seeds on both
interpreters (tests/firmware/fuzzkit.py).

    .venv/bin/python benchmarks/fuzz_protocol.py [--frames 1000000] [--rng-seed 1]
"""
import argparse
import os
import sys
import tempfile
import time

from _common import FIRMWARE, ROOT, TESTS_FW, machine_note, run_mp, table, write_section

sys.path[:0] = [FIRMWARE, TESTS_FW]
import fuzzkit  # noqa: E402
from boards.sim import SimBoard  # noqa: E402
from table import protocol as fw_proto  # noqa: E402
from table.app import TableApp  # noqa: E402
from table import protocol as host_proto  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--frames", type=int, default=1000000)
    ap.add_argument("--rng-seed", dest="seed", type=int, default=1)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    rows = []
    t0 = time.time()
    r = fuzzkit.fuzz_reader(host_proto, a.frames, a.seed)
    r["s"] = time.time() - t0
    rows.append(("CPython", "FrameReader.feed (host link)", r))
    with tempfile.TemporaryDirectory() as d:
        os.mkdir(os.path.join(d, "data"))
        board = SimBoard(d, "sim-fuzz", 8, 8, "pio")
        app = TableApp(board, 1000)
        t0 = time.time()
        r = fuzzkit.fuzz_app(app, board, fw_proto, a.frames, a.seed + 1, now_ms=1000)
        r["s"] = time.time() - t0
        rows.append(("CPython", "TableApp.step on SimBoard (firmware logic)", r))
    mp = run_mp(os.path.join(ROOT, "benchmarks", "fuzz_protocol_mp.py"), (a.frames, a.seed))
    rows.append(("MicroPython", "FrameReader.feed (board link)", mp["reader"]))
    rows.append(("MicroPython", "TableApp.step on SimBoard (firmware)", mp["app"]))
    headers = ("interpreter", "decoder", "frames", "good", "bad counted", "must be bad", "CRC-good edits",
               "crashes", "state changes", "frames/s")
    out = [(i, what, r["frames"], r["frames_ok"], r["frames_bad"], r["expected_bad_min"], r["structural"], 0, 0,
            "%.0f" % (r["frames"] / r["s"])) for i, what, r in rows]
    text = table(out, headers)
    print(text)
    body = ("Command: `.venv/bin/python benchmarks/fuzz_protocol.py --frames %d --rng-seed %d` (%s).\n\n" % (a.frames, a.seed, machine_note())
            + text + "\n\n"
            "Mutations: bit flips, byte replacements, truncation (head or tail), insertions, deletions, duplicated "
            "ranges, splices of two frames, an inserted 0x00, pure random bytes, runs past the length limit, and "
            "'CRC-good edits' (body edited, CRC recomputed: flags, JSON, fields). Every frame whose bytes differ "
            "from an encoded one must be counted bad (a pass needs a CRC-32 collision); CRC-good edits may "
            "decode and are then refused by the command checks. Each run asserts: no exception, meters, base "
            "state, faults, key, MAC counter and journal (next sequence) unchanged, "
            "frames_ok + frames_bad = frames sent. Intact read-only frames (2%%) keep the good path exercised.\n")
    if not a.no_write:
        write_section("fuzz", "Protocol fuzzing", body)


if __name__ == "__main__":
    main()
