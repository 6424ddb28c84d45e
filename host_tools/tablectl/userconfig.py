"""The technician's defaults in a file: ~/.config/tablectl/config.toml (or $XDG_CONFIG_HOME's, or
the file $TABLECTL_CONFIG names), read with tomllib. It may say

    db = "/var/lib/tablectl/casino.db"   # every --db
    port = "/dev/ttyACM0"                # every --port
    board = "pico-1a2b3c4d"              # every --board, when a service runs several tables

A flag on the command line wins over the environment (TABLECTL_DB, TABLECTL_PORT, TABLECTL_BOARD),
which wins over the file: the file only fills in environment variables that are not set, and
every command already reads its defaults from them.
"""
import os

from .errors import TablectlError

SETTINGS = {"db": "TABLECTL_DB", "port": "TABLECTL_PORT", "board": "TABLECTL_BOARD"}

# The variables apply() filled in from the file (variable -> the file's path): `tablectl where` and
# the refusals name where a value came from.
FILLED = {}


def path():
    """(the config file's path, whether the user named it with $TABLECTL_CONFIG)."""
    named = os.environ.get("TABLECTL_CONFIG")
    if named:
        return named, True
    home = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(home, "tablectl", "config.toml"), False


def read(file_path):
    """The file's settings as {name: text}; a TablectlError in one line naming the file and what
    is wrong with it."""
    import tomllib
    try:
        with open(file_path, "rb") as f:
            data = tomllib.load(f)
    except tomllib.TOMLDecodeError as exc:
        raise TablectlError("config file %s is not valid TOML (%s): fix it, or point TABLECTL_CONFIG "
                            "at another file" % (file_path, exc))
    except IsADirectoryError:
        raise TablectlError("config file %s is a folder; give a file" % file_path)
    except OSError as exc:
        raise TablectlError("cannot read the config file %s: %s" % (file_path, exc.strerror or exc))
    for name, value in data.items():
        if name not in SETTINGS:
            from .suggest import did_you_mean
            raise TablectlError("config file %s: unknown setting %r%s; known: %s"
                                % (file_path, name, did_you_mean(name, SETTINGS), ", ".join(SETTINGS)))
        if not isinstance(value, str) or not value:
            raise TablectlError("config file %s: %s must be a quoted text, e.g. %s = \"%s\""
                                % (file_path, name, name, {"db": "casino.db", "port": "/dev/ttyACM0",
                                                           "board": "pico-1a2b3c4d"}[name]))
    return data


def apply(environ=os.environ):
    """Fill in the unset TABLECTL_* variables from the config file, if there is one. A file named
    by $TABLECTL_CONFIG must exist; the default one may be absent."""
    file_path, named = path()
    if not named and not os.path.exists(file_path):
        return None
    if named and not os.path.exists(file_path):
        raise TablectlError("TABLECTL_CONFIG names %s, which does not exist" % file_path)
    for name, value in read(file_path).items():
        if SETTINGS[name] not in environ:
            environ[SETTINGS[name]] = os.path.expanduser(value) if name == "db" else value
            FILLED[SETTINGS[name]] = file_path
    return file_path
