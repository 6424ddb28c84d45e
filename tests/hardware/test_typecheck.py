"""The board code type-checks against the MicroPython port stubs (pico: rp2, esp32: esp32).

Installs nothing: `make setup` puts micropython-rp2-stubs and micropython-esp32-stubs into
.stubs/rp2 and .stubs/esp32. The stubs replace typeshed (MicroPython's stdlib is smaller), and
mypy's complaints about the stub files themselves are not ours to fix, so only findings in
firmware/ count. Unannotated bodies are checked too (--check-untyped-defs).
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIRMWARE = os.path.join(ROOT, "firmware")
SHARED = ["drivers/edges.py", "drivers/seg7.py", "drivers/max7219.py", "drivers/tm1637.py",
          "drivers/chain.py", "drivers/keys.py", "boards/hwboard.py"]
PORTS = {
    "rp2": SHARED + ["drivers/pio_pulse.py", "boards/pico.py", "jig/proto.py", "jig/main.py"],
    "esp32": SHARED + ["drivers/pcnt_pulse.py", "boards/esp32.py"],
}


@pytest.mark.parametrize("port", sorted(PORTS))
def test_board_code_typechecks(port):
    stubs = os.path.join(ROOT, ".stubs", port)
    if not os.path.exists(os.path.join(stubs, "machine.pyi")):
        pytest.fail("no stubs in %s: run `make setup`" % stubs)
    env = dict(os.environ, MYPYPATH=stubs)
    cmd = [sys.executable, "-m", "mypy", "--no-incremental", "--cache-dir", os.devnull,
           "--custom-typeshed-dir", stubs, "--no-site-packages", "--follow-imports=silent",
           "--check-untyped-defs", "--show-error-codes", "--no-error-summary"] + PORTS[port]
    proc = subprocess.run(cmd, cwd=FIRMWARE, env=env, capture_output=True, text=True, timeout=300)
    ours = [line for line in proc.stdout.splitlines()
            if line.startswith(("drivers/", "boards/")) and ": error:" in line]
    assert not ours, "\n".join(ours)
    # mypy must have run at all (a crash would also leave `ours` empty)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
