"""Host side of the progressive table controller: the table's books and the technician's tool."""
import os as _os

# The firmware tree; its table/protocol.py is the one wire protocol both sides import.
REPO_ROOT = _os.path.dirname(_os.path.dirname(_os.path.dirname(_os.path.abspath(__file__))))
FIRMWARE_DIR = _os.path.join(REPO_ROOT, "firmware")
