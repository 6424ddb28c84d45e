"""The board's configuration rules, loaded from the firmware tree (firmware/table/config.py), so
the host refuses exactly what the board would refuse, before anything is sent."""
import importlib.util
import os

from . import FIRMWARE_DIR
from .errors import TablectlError

_spec = importlib.util.spec_from_file_location("tablectl._fwconfig", os.path.join(FIRMWARE_DIR, "table", "config.py"))
config = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(config)


def validate_change(key, text, current):
    if key not in config.SCHEMA:
        raise TablectlError("unknown setting %r; known: %s" % (key, ", ".join(sorted(config.SCHEMA))))
    try:
        value = int(text)
    except ValueError:
        raise TablectlError("%s must be a whole number (cents, ms or a count), not %r" % (key, text))
    try:
        config.validate({key: value}, current)
    except config.ConfigError as exc:
        raise TablectlError("%s; the configuration is unchanged" % exc)
    return {key: value}
