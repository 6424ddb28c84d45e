"""The board's configuration rules (table.config, the board's own module), so the host refuses
exactly what the board would refuse, before anything is sent."""
from table import config

from .errors import TablectlError


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
