"""Where the MicroPython unix-port interpreter is: one answer for the virtual board, the fault
campaigns, the benchmarks and the tests."""
import os
import shutil
import sys

from tablectl.errors import TablectlError


def micropython_path():
    """The `micropython` interpreter: the one `make setup` installs next to this Python first (so a
    virtual environment uses its own), else the first on PATH; a clear error when there is none."""
    here = os.path.join(os.path.dirname(sys.executable), "micropython")
    if os.path.exists(here):
        return here
    found = shutil.which("micropython")
    if not found:
        raise TablectlError("the micropython interpreter is missing: run `make setup`")
    return found
