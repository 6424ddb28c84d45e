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

from boards.hwboard import HwBoard, hard_reset, load_pinmap, ring_pulse_source, run_with  # noqa: F401 (hard_reset: main.py)

try:
    from drivers.pcnt_pulse import PcntPulseSource
except ImportError:
    # machine.Counter (the PCNT units) is not in MicroPython before 1.26: the board then counts
    # with the hard-IRQ edge ring instead, which measures widths too (docs/FIRMWARE.md).
    PcntPulseSource = None  # type: ignore[assignment,misc]


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
            if pulse["counter"] == "pcnt" and PcntPulseSource is not None:
                sources.append(PcntPulseSource(i, pin, active, pulse.get("filter_ns", 12000)))
            else:
                sources.append(ring_pulse_source(pin, active))
        return sources


def run():
    """main.py's entry: build the board from /pinmap.json and run the controller."""
    return run_with(Esp32Board)
