"""The C enumeration kernel, loaded once, and a progress bar for its long calls.

The kernel (tablegames/par/_kernel.c) is built by `make setup` (optional: without it every
sheet says so in one line, CoreMissing). Its long calls
release the GIL and count their progress in a global the bar polls.
"""
import os
import sys
import threading
import time

from tablegames.errors import CoreMissing, GameError

_kernel = None


def kernel():
    """The initialised kernel module (rank tables built on first use, about 0.2 s)."""
    global _kernel
    if _kernel is None:
        # Threads that wait at a barrier sleep instead of spinning (read when the OpenMP runtime
        # loads with the kernel; the caller's own setting wins): on a machine shared with other
        # jobs a spinning thread takes the core its partner needs to reach the barrier.
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
        try:
            from . import _kernel as k
        except ImportError:
            raise CoreMissing("the PAR enumeration", "tablegames.par._kernel") from None
        k.init()
        _kernel = k
    return _kernel


def numpy():
    """numpy, for the sheets that read the kernel's counts as arrays; without it, one line."""
    try:
        import numpy as np
    except ImportError:
        raise GameError("this PAR sheet needs numpy: pip install 'tablectl[math]'") from None
    return np


def _show_progress():
    forced = os.environ.get("TABLECTL_PROGRESS")
    if forced is not None:
        return forced not in ("", "0")
    return sys.stderr.isatty()


def duration(seconds):
    """1h02m, 3m05s, 42s: how long, as a person reads it."""
    seconds = int(round(seconds))
    if seconds >= 3600:
        return "%dh%02dm" % (seconds // 3600, seconds % 3600 // 60)
    if seconds >= 60:
        return "%dm%02ds" % (seconds // 60, seconds % 60)
    return "%ds" % seconds


class Progress:
    """What the progress line says: the phase the kernel is in (phases: [(fraction of the
    kernel's counter where it starts, name)], in order), how far, the time so far, and the time
    left, estimated from this phase's own pace (the phases of one kernel run at very different
    speeds, so the run's average pace would mislead)."""

    def __init__(self, label, phases=None):
        self.label = label
        self.phases = list(phases or [(0.0, "enumerating")])
        self.index = -1
        self.phase_started = None
        self.phase_frac_at_start = 0.0

    def phase_of(self, frac):
        i = 0
        while i + 1 < len(self.phases) and frac >= self.phases[i + 1][0]:
            i += 1
        return i

    def line(self, frac, now, started):
        """The line for `frac` (0..1) of the work done at monotonic time `now`."""
        i = self.phase_of(frac)
        if i != self.index:
            self.index, self.phase_started, self.phase_frac_at_start = i, now, frac
        lo = self.phases[i][0]
        hi = self.phases[i + 1][0] if i + 1 < len(self.phases) else 1.0
        done_in_phase = (frac - self.phase_frac_at_start) / (hi - lo) if hi > lo else 0.0
        left_in_phase = (hi - frac) / (hi - lo) if hi > lo else 0.0
        spent = now - self.phase_started
        last = i + 1 == len(self.phases)
        if done_in_phase >= 0.02 and spent >= 0.5:
            left_s = spent * left_in_phase / done_in_phase
            eta = ("about %s left" % duration(left_s)) if left_s >= 1 else "under a second left"
            left = eta if last else "this phase: " + eta
        else:
            left = "estimating the time left"
        phase = self.phases[i][1] + (" (phase %d of %d)" % (i + 1, len(self.phases)) if len(self.phases) > 1 else "")
        width = 20
        filled = int(frac * width)
        return "%s: %s [%s%s] %3d%%  %s so far, %s" % (self.label, phase, "#" * filled, "." * (width - filled),
                                                     int(frac * 100), duration(now - started), left)


def run(label, func, *args, progress=None, phases=None):
    """Call func(*args) (a kernel entry point) in a worker thread, showing its progress on
    stderr: one line redrawn in a terminal; into a file or pipe (TABLECTL_PROGRESS=1), a plain
    line at each phase and every 5 % or 30 s, so a log reads as a history."""
    k = kernel()
    show = _show_progress() if progress is None else progress
    box = {}

    def work():
        try:
            box["value"] = func(*args)
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc

    bar = Progress(label, phases)
    tty = sys.stderr.isatty()
    # The kernel runs in a worker thread even without a bar, so that Ctrl-C reaches this thread
    # at once (a signal is handled between Python instructions, never inside the C call).
    worker = threading.Thread(target=work, daemon=True)
    started = time.monotonic()
    worker.start()
    if not show:
        while worker.is_alive():
            worker.join(0.2)
        if "error" in box:
            raise box["error"]
        return box["value"]
    shown = (-1, -1.0, -1)  # (phase, fraction, time) of the last plain line
    while worker.is_alive():
        worker.join(0.2)
        done, total = k.progress()
        frac = min(1.0, done / total) if total else 0.0
        now = time.monotonic()
        text = bar.line(frac, now, started)
        if tty:
            import shutil
            sys.stderr.write("\r\x1b[K" + text[:shutil.get_terminal_size().columns - 1])
        elif bar.index != shown[0] or frac - shown[1] >= 0.05 or now - shown[2] >= 30:
            sys.stderr.write(text + "\n")
            shown = (bar.index, frac, now)
        sys.stderr.flush()
    end = "%s: done in %s" % (label, duration(time.monotonic() - started))
    sys.stderr.write(("\r\x1b[K" if tty else "") + end + "\n")
    sys.stderr.flush()
    if "error" in box:
        raise box["error"]
    return box["value"]
