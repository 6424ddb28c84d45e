"""The ESP32-DevKitC (classic ESP32, WROOM module) controller board, built from /pinmap.json.

Deployment copies hardware/pinmap_esp32.json to /pinmap.json next to main.py; main.py does:

    from boards.esp32 import Esp32Board
    board = Esp32Board()

Coin pulses are counted by the 8 PCNT units (drivers/pcnt_pulse.py), which keep counting while
the flash is written; the pin map may choose "irq" instead (hard-IRQ edge ring with pulse widths).
The host link is UART0, the REPL's stream, through the DevKitC's USB bridge.
"""
import binascii

import machine

from boards.hwboard import HwBoard, load_pinmap, run_board
from drivers.edges import RingPulseSource
from drivers.pcnt_pulse import PcntPulseSource


class Esp32Board(HwBoard):
    def __init__(self, pinmap=None, data_root="/data"):
        if pinmap is None:
            pinmap = load_pinmap()
        self.board_id = "esp32-" + binascii.hexlify(machine.unique_id()).decode()
        HwBoard.__init__(self, pinmap, data_root)

    def _build_pulse_sources(self, pulse):
        active = 0 if pulse["active_low"] else 1
        sources = []  # type: list
        for i, name in enumerate(pulse["pins"]):
            pin = self.pulse_pin(name)
            if pulse["counter"] == "pcnt":
                sources.append(PcntPulseSource(i, pin, active, pulse.get("filter_ns", 12000)))
            else:
                import time

                src = RingPulseSource(pin, active, time.ticks_ms, time.ticks_diff)
                src.attach(machine.Pin.IRQ_RISING | machine.Pin.IRQ_FALLING)
                sources.append(src)
        return sources


_board = None


def run():
    """main.py's entry: build the board from /pinmap.json and run the controller."""
    global _board
    _board = Esp32Board()
    return run_board(_board)


def hard_reset():
    # Kill the outputs first: the 595 latches outlive an MCU reset, /OE high makes them Hi-Z.
    if _board is not None:
        _board.inhibit_all()
    machine.reset()
