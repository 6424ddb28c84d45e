"""Starting and stopping tablectl's long-running processes (a virtual board, the service) for the
demo, the end-to-end tests and the benchmarks: each in its own process group, so stopping one
stops everything it started (the MicroPython interpreter under a `tablectl sim` included)."""
import os
import signal
import subprocess
import sys

TABLECTL = [sys.executable, "-m", "tablectl.cli"]


def start(args, log_path):
    """Start `tablectl ARGS...`; stdout is a pipe (the first line says where it is), stderr a log.
    Returns (process, log file)."""
    log = open(log_path, "w")
    proc = subprocess.Popen(TABLECTL + [str(a) for a in args], stdout=subprocess.PIPE, stderr=log, text=True,
                            start_new_session=True)
    return proc, log


def start_sim(state, log_path, seats=7, baud=None, extra=()):
    """A virtual board; returns (process, log, port)."""
    args = ["sim", "--state", state, "--seats", str(seats)] + (["--baud", str(baud)] if baud else []) + list(extra)
    proc, log = start(args, log_path)
    line = proc.stdout.readline()
    if not line.startswith("port "):
        stop(proc)
        raise RuntimeError("tablectl sim did not start: %r (see %s)" % (line, log_path))
    return proc, log, line.split()[1]


def start_serve(port, db, log_path):
    """The service on one board's port; returns (process, log) once it is serving."""
    proc, log = start(["serve", "--port", port, "--db", db], log_path)
    line = proc.stdout.readline()
    if not line.startswith("serving"):
        stop(proc)
        raise RuntimeError("tablectl serve did not start: %r (see %s)" % (line, log_path))
    return proc, log


def stop(proc, sig=signal.SIGTERM, timeout_s=5):
    """Stop a process group politely, then firmly. Safe on a process already gone."""
    if proc is None or proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, sig)
        proc.wait(timeout=timeout_s)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        try:
            os.killpg(proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        proc.wait()


def run(args, timeout_s=120):
    """`tablectl ARGS...` to its end: the CompletedProcess (text)."""
    return subprocess.run(TABLECTL + list(args), capture_output=True, text=True, timeout=timeout_s)
