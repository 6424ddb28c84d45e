"""The board's file set, read from the one list that declares it: firmware/package.json (the mip
package format; firmware/manifest.py names the same files for a frozen build). `tablectl flash`,
the virtual boards and the emulated Pico all deploy exactly this list."""
import json
import os

from . import FIRMWARE_DIR
from .errors import TablectlError

PACKAGE_JSON = "package.json"


def board_names(source=FIRMWARE_DIR):
    """The names of the board's files (main.py first), as package.json lists them."""
    path = os.path.join(source, PACKAGE_JSON)
    try:
        with open(path) as f:
            package = json.load(f)
        names = [target for target, _url in package["urls"]]
    except OSError as exc:
        raise TablectlError("no firmware file list at %s (%s): give a firmware tree with its package.json"
                            % (path, exc.strerror or exc))
    except (ValueError, KeyError, TypeError):
        raise TablectlError("%s is not a mip package.json with a \"urls\" list" % path)
    for name in names:
        if not isinstance(name, str) or name.startswith("/") or ".." in name.split("/"):
            raise TablectlError("%s lists %r, which is not a path inside the firmware tree" % (path, name))
    return names


def board_files(source=FIRMWARE_DIR):
    """[(name on the board, local path)] of the firmware tree `source`. A tree compiled to .mpy
    (make mpy, the Pico's deploy) holds name.mpy where the list says name.py: that is the file."""
    files = []
    for name in board_names(source):
        path = os.path.join(source, *name.split("/"))
        if not os.path.exists(path) and name.endswith(".py") and name != "main.py":
            compiled = path[:-3] + ".mpy"
            if os.path.exists(compiled):
                name, path = name[:-3] + ".mpy", compiled
        if not os.path.exists(path):
            raise TablectlError("the firmware tree %s has no %s, which package.json lists" % (source, name))
        files.append((name, path))
    return files
