"""Seat numbers: 1 first where people read and type them, 0 first on the board, the wire and the
ledger, and one pair of functions between the two."""
import pytest

from tablectl.errors import TablectlError
from tablectl.seats import MAX_SEATS, seat_index, seat_label


def test_the_first_and_last_seats_cross_both_ways():
    assert seat_label(0) == 1 and seat_index(1) == 0
    assert seat_label(MAX_SEATS - 1) == MAX_SEATS and seat_index(MAX_SEATS) == MAX_SEATS - 1
    assert [seat_index(seat_label(i)) for i in range(MAX_SEATS)] == list(range(MAX_SEATS))


def test_a_table_with_fewer_seats_refuses_the_ones_it_has_not():
    assert seat_index(7, seats=7) == 6
    with pytest.raises(TablectlError, match="seat must be 1 to 7, not 8"):
        seat_index(8, seats=7)
    with pytest.raises(TablectlError, match="seat index must be a whole number from 0 to 6, not 7"):
        seat_label(7, seats=7)


@pytest.mark.parametrize("label", [0, -1, MAX_SEATS + 1, True, 1.0, "1", None])
def test_a_seat_outside_the_table_or_not_a_whole_number_is_refused_by_name(label):
    with pytest.raises(TablectlError, match="seat must be 1 to 8, not"):
        seat_index(label)


@pytest.mark.parametrize("index", [-1, MAX_SEATS, False, 0.0, "0", None])
def test_an_index_outside_the_board_is_refused_by_name(index):
    with pytest.raises(TablectlError, match="seat index must be a whole number from 0 to 7, not"):
        seat_label(index)
