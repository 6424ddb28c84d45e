"""The wire protocol, loaded from the firmware tree: firmware/table/protocol.py is the one copy
that both the board (MicroPython) and the host (CPython) run."""
import importlib.util
import os

from . import FIRMWARE_DIR

_PATH = os.path.join(FIRMWARE_DIR, "table", "protocol.py")
_spec = importlib.util.spec_from_file_location("tablectl._wire", _PATH)
_module = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_module)

globals().update({k: v for k, v in vars(_module).items() if not k.startswith("__")})
