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


def run(label, func, *args, progress=None):
    """Call func(*args) (a kernel entry point) in a worker thread, drawing a bar on stderr."""
    k = kernel()
    show = _show_progress() if progress is None else progress
    if not show:
        return func(*args)
    box = {}

    def work():
        try:
            box["value"] = func(*args)
        except BaseException as exc:  # handed back to the caller's thread
            box["error"] = exc

    worker = threading.Thread(target=work, daemon=True)
    started = time.monotonic()
    worker.start()
    width = 30
    while worker.is_alive():
        worker.join(0.2)
        done, total = k.progress()
        frac = done / total if total else 0.0
        filled = int(frac * width)
        sys.stderr.write(
            "\r%-28s [%s%s] %3d%% %5.1fs" % (label[:28], "#" * filled, "." * (width - filled),
                                              int(frac * 100), time.monotonic() - started)
        )
        sys.stderr.flush()
    sys.stderr.write("\r%-28s [%s] 100%% %5.1fs\n" % (label[:28], "#" * width, time.monotonic() - started))
    sys.stderr.flush()
    if "error" in box:
        raise box["error"]
    return box["value"]
