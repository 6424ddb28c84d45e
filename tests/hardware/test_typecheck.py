"""The board code type-checks against the MicroPython port stubs (pico: rp2, esp32: esp32).

Installs nothing: `make setup` puts micropython-rp2-stubs and micropython-esp32-stubs into
.stubs/rp2 and .stubs/esp32. The stubs replace typeshed (MicroPython's stdlib is smaller), and
mypy's complaints about the stub files themselves are not ours to fix, so only findings in
firmware/ count: every file under it (drivers/, boards/, jig/, anything added later), decided by
where the reported path resolves, not by a list of prefixes. Unannotated bodies are checked too (--check-untyped-defs).
"""
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIRMWARE = os.path.join(ROOT, "firmware")
SHARED = ["boards/contract.py", "boards/selfcheck.py", "drivers/nvfile.py", "drivers/edges.py", "drivers/seg7.py", "drivers/max7219.py", "drivers/tm1637.py",
          "drivers/chain.py", "drivers/keys.py", "boards/hwboard.py"]
# Firmware files no port list names, each with the reason.
UNCHECKED = {
    "boards/sim.py": "the virtual board: runs on the unix port, whose modules the rp2/esp32 stubs do not "
                     "describe; it is exercised on the MicroPython interpreter by every firmware test",
    "drivers/heldpin.py": "a mix-in whose pin/active attributes its host classes set; mypy cannot type them "
                          "without `typing`, which MicroPython lacks; checked through pio_pulse/pcnt_pulse "
                          "on the hardware driver tests (tests/hardware/mp_hw_drivers.py)",
    "boards/simflash.py": "the virtual board's NOR chip in a file: unix port only, like boards/sim.py; exercised "
                          "on the MicroPython interpreter by mp_test_rawlog.py and the raw-log runs of the journal's proofs",
}
PORTS = {
    "rp2": SHARED + ["drivers/pio_pulse.py", "drivers/rawflash.py", "boards/pico.py", "jig/proto.py", "jig/main.py"],
    "esp32": SHARED + ["drivers/pcnt_pulse.py", "boards/esp32.py"],
}


def _in_firmware(line):
    """True when mypy's finding is about a file of ours (under firmware/), not a stub."""
    path = os.path.realpath(os.path.join(FIRMWARE, line.split(":", 1)[0]))
    return path.startswith(os.path.realpath(FIRMWARE) + os.sep)


def test_every_board_file_is_checked():
    """A firmware file outside table/ (pure logic, run on MicroPython by the tests) that no port
    lists would never be type-checked: every one must be in some port's list."""
    listed = {p for files in PORTS.values() for p in files}
    for sub in ("drivers", "boards", "jig"):
        for name in sorted(os.listdir(os.path.join(FIRMWARE, sub))):
            rel = "%s/%s" % (sub, name)
            if name.endswith(".py") and name != "__init__.py" and rel not in UNCHECKED:
                assert rel in listed, "%s is type-checked for no port (add it to PORTS)" % rel


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
    ours = [line for line in proc.stdout.splitlines() if ": error:" in line and _in_firmware(line)]
    assert not ours, "\n".join(ours)
    # mypy must have run at all (a crash would also leave `ours` empty)
    assert proc.returncode in (0, 1), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
