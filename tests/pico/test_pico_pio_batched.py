"""The emulated Pico with its PIO stepped in batches (TABLE_PICO_PIO_STEP_US, what the long
campaigns in benchmarks/bench_pico.py run with): the rig runs the coin counters' blocks itself and
keeps them out of the list rp2040py's batch loop walks after every instruction
(PicoRig._keep_stopped_blocks_out_of_the_batch_loop), and the board still counts every token.

CI's other tests/pico run the PIO instruction by instruction; this module boots one board the
batched way, in this process, so the rig's state can be read."""
import sys

import pytest

from picokit import IMAGE, needs_image
from tabledev.pico_sim import GIL_SWITCH_INTERVAL_S, gil_switch_interval_s
from tabledev.emulated_pico import EmulatedPico


@needs_image
def test_batched_pio_blocks_leave_the_batch_loop_the_bus_still_reaches_them_and_tokens_count(tmp_path, monkeypatch):
    monkeypatch.setenv("TABLE_PICO_PIO_STEP_US", "50")
    s = EmulatedPico(str(tmp_path / "board"), IMAGE)
    try:
        s.ready()
        rig = s.rig
        assert rig.pio_step_ns == 50000
        # the board's process hands the GIL to its relay and control socket every 0.5 ms, not every
        # 5 ms (CPython's default), at which make flash runs past its limit (lab/tabledev/EMULATOR.md)
        assert sys.getswitchinterval() == pytest.approx(GIL_SWITCH_INTERVAL_S)
        loop, pio, stopped = rig.call_sync(lambda: (list(rig._pio_loop), list(rig.mcu.pio),
                                                    [block.stopped for block in rig._pio_blocks]))
        # the firmware's eight counters run, hidden from the batch loop; everything else that asks
        # for the chip's PIO blocks (GPIO in a PIO function, a reset) still finds both
        assert loop == [], "stopped blocks left in the batch loop's list"
        assert pio == rig._pio_blocks and len(pio) == 2
        assert stopped == [True, True]
        assert rig.call_sync(lambda: sum(m.enabled for block in rig._pio_blocks for m in block.machines)) == 8

        s.connect()
        before = s.command("meters")
        s.bench.coins({0: 1, 4: 1}, width_ms=40, coin_gap_ms=400, glitches=1)
        after = s.command("meters")
        assert after["seat_coins"][0] - before["seat_coins"][0] == 1
        assert after["seat_coins"][4] - before["seat_coins"][4] == 1
        diag = s.command("diag")
        assert diag["glitches"][0] >= 1, "the 2 ms spike after the token was seen and refused"
        assert diag["edges_lost"] == [0] * len(diag["edges_lost"])
    finally:
        s.close()


@pytest.mark.parametrize("started", [False, True])
def test_a_write_that_starts_a_block_puts_it_back_into_the_batch_loop_at_once(started):
    from tabledev.pico_sim import PicoRig, _PioRegisters

    class Block:
        stopped = True

        def write_uint32_atomic(self, offset, value, atomic_type):
            self.stopped = not started  # a CTRL write with enable bits clears `stopped`

    rig = PicoRig.__new__(PicoRig)
    block = Block()
    rig._pio_loop = []
    window = _PioRegisters(block, rig._pio_started)
    window.write_uint32_atomic(0, 1, 0)
    assert rig._pio_loop == ([block] if started else [])
    window.write_uint32_atomic(0, 1, 0)
    assert rig._pio_loop == ([block] if started else []), "never listed twice"


def test_the_emulator_build_turns_off_only_the_stable_abi_choice_and_refuses_a_setup_py_it_does_not_know():
    from tabledev.rp2040py_build import full_api_setup_py, installed_build
    setup_py = "X = 1\nUSE_LIMITED_API = (\n    sys.version_info >= (3, 11)\n)\nY = USE_LIMITED_API\n"
    patched = full_api_setup_py(setup_py, "0.3.6")
    assert patched == setup_py.replace("USE_LIMITED_API = (", "USE_LIMITED_API = False and (")
    for unknown in ("USE_LIMITED_API = True\n", setup_py + setup_py):
        with pytest.raises(SystemExit, match="look before building"):
            full_api_setup_py(unknown, "9.9")
    assert installed_build() in ("full API", "stable ABI (abi3)", "pure Python")


def test_the_gil_switch_interval_is_the_rigs_unless_the_bench_asks_for_another_and_nonsense_is_refused(monkeypatch):
    monkeypatch.delenv("TABLE_PICO_GIL_SWITCH_US", raising=False)
    assert gil_switch_interval_s() == GIL_SWITCH_INTERVAL_S == 0.0005
    monkeypatch.setenv("TABLE_PICO_GIL_SWITCH_US", "5000")
    assert gil_switch_interval_s() == pytest.approx(0.005)
    for bad in ("0", "-5", "fast", "nan"):
        monkeypatch.setenv("TABLE_PICO_GIL_SWITCH_US", bad)
        with pytest.raises(SystemExit, match="TABLE_PICO_GIL_SWITCH_US must be a positive number"):
            gil_switch_interval_s()
