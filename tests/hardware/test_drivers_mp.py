"""Drivers, boards and the bench jig on the MicroPython interpreter, over fake machine/rp2
modules (tests/hardware/mpfakes) that shadow the unix port's own."""
import os

import pytest

from conftest import FIRMWARE, run_micropython

HERE = os.path.dirname(os.path.abspath(__file__))
FAKES = os.path.join(HERE, "mpfakes")


@pytest.mark.parametrize("script", ["mp_hw_drivers.py", "mp_hw_jig.py"])
def test_on_micropython(script):
    proc = run_micropython(os.path.join(HERE, script), cwd=HERE, timeout=120,
                           env_path=FAKES + ":" + FIRMWARE)
    last = proc.stdout.strip().splitlines()[-1]
    assert last.endswith(" 0 failed"), proc.stdout
