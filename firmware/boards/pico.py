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

from boards.hwboard import HwBoard, hard_reset, load_pinmap, ring_pulse_source, run_with  # noqa: F401 (hard_reset: main.py)
from drivers.pio_pulse import PioPulseSource


class PicoBoard(HwBoard):
    def __init__(self, pinmap=None, data_root="/data"):
        if pinmap is None:
            pinmap = load_pinmap()
        self.board_id = "pico-" + binascii.hexlify(machine.unique_id()).decode()
        HwBoard.__init__(self, pinmap, data_root)
        # The journal goes on the raw flash log when the reserve files are provisioned
        # (drivers/rawflash.py); a reserve that fails its check is a storage fault, never a
        # silent fall back to the littlefs files.
        import json
        import os

        import rp2
        from drivers.rawflash import open_reserve, provision, remove_reserve
        flash = rp2.Flash()
        drain = self.drain_pulses if self._drains else None
        self.log_device = open_reserve(os, json, flash, after_write=drain)
        sectors = pinmap.get("raw_log_sectors")
        self.reserve_note = None
        if self.log_device is None and sectors:
            # First boot of a board whose pin map asks for the raw log: make the reserve. A
            # board that journaled on files keeps them as its journal until the host has every
            # event in them, then moves (table/app.py open_journal). A cut here leaves no
            # map.json (written last): the next boot makes the reserve again.
            try:
                provision(os, json, flash, sectors)
            except OSError as exc:
                # No room (a filesystem fuller than the pin map allows for): the journal stays on
                # the files, and status says why. The part made is removed, so the room is back.
                self.reserve_note = "raw log reserve not made: %r" % (exc,)
                remove_reserve(os)
            else:
                self.log_device = open_reserve(os, json, flash, after_write=drain)

    def _build_pulse_sources(self, pulse):
        active = 0 if pulse["active_low"] else 1
        sources = []  # type: list
        for i, name in enumerate(pulse["pins"]):
            pin = self.pulse_pin(name)
            if pulse["counter"] == "pio":
                # State machine i: 0-3 on PIO0, 4-7 on PIO1. Each block loads the program once.
                sources.append(PioPulseSource(i, pin, pulse.get("pio_freq_hz", 10000), active))
            else:
                sources.append(ring_pulse_source(pin, active))
        return sources


def run():
    """main.py's entry: build the board from /pinmap.json and run the controller."""
    return run_with(PicoBoard)
