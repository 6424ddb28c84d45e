"""Operations: the table's books and the technician's tool (CLI, service, ledger, link, reconcile).

The board's own logic is the `table` package (firmware/table), imported here as it is; the board's
file set for `tablectl flash` is found by FIRMWARE_DIR: inside an installed wheel it is packaged
data (tablectl/firmware), in a checkout it is the repository's firmware/ folder.
"""
import os as _os

_HERE = _os.path.dirname(_os.path.abspath(__file__))
_CHECKOUT = _os.path.dirname(_os.path.dirname(_HERE))  # the repository, when run from one


def _data_dir(name):
    packaged = _os.path.join(_HERE, name)
    return packaged if _os.path.isdir(packaged) else _os.path.join(_CHECKOUT, name)


FIRMWARE_DIR = _data_dir("firmware")  # the boards' files (which board carries which: deploy.py)
HARDWARE_DIR = _data_dir("hardware")  # pin maps (pinmap_pico.json, pinmap_esp32.json)
# The checkout's root, for the developer's tools that write build output or read tests/.
REPO_ROOT = _CHECKOUT
