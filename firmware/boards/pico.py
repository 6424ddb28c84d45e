"""The Raspberry Pi Pico (RP2040) controller board, built from /pinmap.json.

Deployment copies hardware/pinmap_pico.json to /pinmap.json next to main.py; main.py does:

    from boards.pico import PicoBoard
    board = PicoBoard()            # or PicoBoard(pinmap_dict)

Coin pulses are timed by PIO state machines (drivers/pio_pulse.py): 8 seats on 2 PIO blocks x 4
state machines, counting through flash writes that stop the CPU's interrupts. The host link is
the USB CDC port (the REPL's stream) unless the pin map says "uart".
"""
import binascii

import machine

from boards.hwboard import HwBoard, load_pinmap, run_board
from drivers.edges import RingPulseSource
from drivers.pio_pulse import PioPulseSource


class PicoBoard(HwBoard):
    def __init__(self, pinmap=None, data_root="/data"):
        if pinmap is None:
            pinmap = load_pinmap()
        self.board_id = "pico-" + binascii.hexlify(machine.unique_id()).decode()
        HwBoard.__init__(self, pinmap, data_root)

    def _build_pulse_sources(self, pulse):
        active = 0 if pulse["active_low"] else 1
        sources = []  # type: list
        for i, name in enumerate(pulse["pins"]):
            pin = self.pulse_pin(name)
            if pulse["counter"] == "pio":
                # State machine i: 0-3 on PIO0, 4-7 on PIO1. Each block loads the program once.
                sources.append(PioPulseSource(i, pin, pulse.get("pio_freq_hz", 10000), active))
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
    _board = PicoBoard()
    return run_board(_board)


def hard_reset():
    # Kill the outputs first: the 595 latches outlive an MCU reset, /OE high makes them Hi-Z.
    if _board is not None:
        _board.inhibit_all()
    machine.reset()
