"""micropython-lib, taken from the path in MICROPYTHON_LIB (never copied into this repository):
its hmac is the independent reference the board's own HMAC (table.protocol.MacKey) is checked
against, on MicroPython. The board keeps MacKey on the link because it computes the key's padded
blocks once: micropython-lib's hmac rebuilds them for every frame, several times slower (the test
prints both figures; docs/SECURITY.md quotes them)."""
import os

import pytest

from conftest import FIRMWARE, ROOT, run_micropython

LIB = os.environ.get("MICROPYTHON_LIB") or os.path.join(os.path.dirname(ROOT), "shared", "micropython-lib")
HMAC_DIR = os.path.join(LIB, "python-stdlib", "hmac")
HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.mark.skipif(not os.path.isfile(os.path.join(HMAC_DIR, "hmac.py")),
                    reason="micropython-lib not found: set MICROPYTHON_LIB to a micropython-lib checkout")
def test_the_boards_hmac_equals_micropython_libs_on_micropython():
    proc = run_micropython(os.path.join(HERE, "mp_lib_hmac_check.py"), cwd=HERE,
                           env_path=FIRMWARE + ":" + HMAC_DIR)
    line = proc.stdout.strip().splitlines()[-1]
    assert line.startswith("checked 49;"), proc.stdout
    print(line)
