"""Seat numbers: people count seats from 1 (the harness labels, the dealer, the CLI, the pool's web
pages and API, every JSON a person reads); the board, the wire and the ledger count from 0. These
two functions are the only crossing between the two counts, used at the edge where a number comes
in from a person or goes out to one."""
from typing import Any

from .errors import TablectlError

# The most seats a controller wires (firmware table.config.MAX_SEATS).
MAX_SEATS = 8


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def seat_label(index: Any, seats: int = MAX_SEATS) -> int:
    """A seat index as the board sends it (0 first) -> the seat as people count it (1 first)."""
    if not _whole(index) or not 0 <= index < seats:
        raise TablectlError("seat index must be a whole number from 0 to %d, not %r" % (seats - 1, index))
    return index + 1


def seat_index(label: Any, seats: int = MAX_SEATS) -> int:
    """A seat as a person gives it (1 first) -> the index the board and the ledger use (0 first)."""
    if not _whole(label) or not 1 <= label <= seats:
        raise TablectlError("seat must be 1 to %d, not %r" % (seats, label))
    return label - 1
