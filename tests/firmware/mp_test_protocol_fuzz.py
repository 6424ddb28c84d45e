"""Mutated and random frames on MicroPython: into the firmware's FrameReader, and into a TableApp
on a SimBoard (its link, then step()): no crash, nothing journaled, meters unchanged, every bad frame
counted. A few thousand here; benchmarks/fuzz_protocol.py runs 1,000,000 per side."""
import mptest
import fuzzkit
from simkit import Rig
from table import protocol as proto

N = 10000


def test_reader_counts_every_bad_frame():
    stats = fuzzkit.fuzz_reader(proto, N, seed=11)
    assert stats["frames"] >= N
    assert stats["frames_bad"] >= stats["expected_bad_min"] > N // 2


def test_table_app_survives_fuzz_unchanged():
    rig = Rig("fuzz")
    rig.run_ms(50)
    stats = fuzzkit.fuzz_app(rig.app, rig.board, proto, N, seed=12, now_ms=rig.board.now_ms())
    assert stats["frames_bad"] >= stats["expected_bad_min"] > N // 2
    assert stats["frames_ok"] > 0  # the intact read-only frames were answered


def test_table_app_with_key_refuses_mutated_money_commands():
    rig = Rig("fuzzkey", key=fuzzkit.TEST_KEY)
    rig.board.switch = True
    rep = rig.command("provision", {"key": fuzzkit.TEST_KEY.hex()})
    assert rep["ok"] == 1, rep
    rig.board.switch = False
    rig.run_ms(50)
    rig.ack_all()
    rig.run_ms(50)
    refused = rig.app.link.frames_refused
    stats = fuzzkit.fuzz_app(rig.app, rig.board, proto, N, seed=13, now_ms=rig.board.now_ms(), hostile=True)
    assert stats["frames_bad"] >= stats["expected_bad_min"]
    assert rig.app.link.frames_refused > refused  # re-CRC'd money commands reached the MAC check and failed


def test_generator_is_deterministic():
    a, ea = fuzzkit.Generator(proto, 5).make(50)
    b, eb = fuzzkit.Generator(proto, 5).make(50)
    assert a == b and ea == eb


mptest.run(globals())
