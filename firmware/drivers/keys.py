"""Dealer keypad as raw levels: direct inputs, or a small matrix scanned on demand.

Raw only: the logic (table/debounce.py) debounces. The interface board reads the keypad through
the 74HC165 chain; these classes serve a build that wires keys straight to spare GPIOs instead.
"""
import time


class DirectKeys:
    """One Pin per key, switch to GND, pulled up: bit i of read() is set while key i is held."""

    def __init__(self, pins, active_low=True):
        self.pins = pins
        self.active = 0 if active_low else 1

    def read(self):
        mask = 0
        for i in range(len(self.pins)):
            if self.pins[i].value() == self.active:
                mask |= 1 << i
        return mask


class MatrixKeys:
    """rows: output Pins (driven low one at a time, others open drain released); cols: input Pins
    with pull-ups. Key (r, c) is bit r * len(cols) + c. Diodes on the keys stop ghosting when two
    are held; without them, three held keys can show a fourth."""

    def __init__(self, rows, cols, settle_us=10):
        self.rows = rows
        self.cols = cols
        self.settle_us = settle_us
        for r in rows:
            r.value(1)

    def read(self):
        mask = 0
        ncols = len(self.cols)
        for ri in range(len(self.rows)):
            row = self.rows[ri]
            row.value(0)
            time.sleep_us(self.settle_us)  # let the column line's capacitance discharge
            for ci in range(ncols):
                if self.cols[ci].value() == 0:
                    mask |= 1 << (ri * ncols + ci)
            row.value(1)
        return mask
