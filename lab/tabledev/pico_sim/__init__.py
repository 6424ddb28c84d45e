"""`tablectl sim --board pico`: the real firmware on the real MicroPython Pico build, on an
emulated RP2040 (rp2040py, PyPI) wired to a model of the interface board.

What is real here: the MicroPython v1.24.1 image a technician drags onto a Pico (its UF2, from
$PICO_UF2), the RP2040's cores, PIO state machines, timers, watchdog, USB CDC and QSPI flash as
rp2040py emulates them, littlefs on that flash, and the firmware deployed as `tablectl flash`
would deploy it (the same files, the same pin map, the same manifest.json).

What is modelled, at the Pico's pins (hardware/pinmap_pico.json says which):
  - the H11L1 optocoupler outputs on the acceptor pins (driven at times on the emulator's own
    clock, never with wall-clock sleeps: a pulse is as long as the bench says, whatever the host);
  - the 74HC595 output chain (inhibits, lamps) and the 74HC165 input chain (bet spots, keys,
    service key switch) on the I/O SPI bus, with their latch, load and /OE lines;
  - the MAX7219 on the display SPI bus: the bytes the driver clocks out are decoded back into the
    digits a player sees;
  - the flash chip's unique id (the emulator answers all FF, so every board would have the same
    board id): each state directory gets its own, kept in DIR/board_uid.

A power cut stops the chip wherever it is (between two instructions, at a random emulated time if
asked) and boots it cold; flash keeps what was programmed, RAM and the 595 latches do not.

The package, one concept a module: image (the UF2), timing (clock and flash timings), fsimage
(the deployed firmware as a littlefs image), interface (the interface board model), tuning (PIO
stepping and GIL hand-over), rig (one emulated Pico), supervisor (the pty and the bench socket).
Callers import from here (`from tabledev.pico_sim import PicoRig`).
"""
from tabledev.pico_sim.image import (  # noqa: F401 (the package's names)
    FETCHED, HOW_TO_GET_IMAGE, UF2_NAME, UF2_SHA256, UF2_URL, UF2_VERSION, fetch_image, image_path,
    sha256_of)
from tabledev.pico_sim.timing import (  # noqa: F401 (the package's names)
    BLOCK_ERASE_NS, CPU_HZ, EDGE_LEAD_MS, NS_PER_MS, PACE_STEP_NS, PAGE_PROGRAM_NS, SECTOR_ERASE_NS)
from tabledev.pico_sim.fsimage import (  # noqa: F401 (the package's names)
    PINMAP, _provision_reserve, _rawflash_module, build_fs_image, deploy_files, read_fs_files,
    write_fs_files)
from tabledev.pico_sim.interface import (  # noqa: F401 (the package's names)
    InterfaceBoard, _font, _from_max, decode_segments, meter_from_display)
from tabledev.pico_sim.tuning import (  # noqa: F401 (the package's names)
    FJOIN_RX, GIL_SWITCH_INTERVAL_S, _PioRegisters, _advance_pio, _join_rx_fifos, _pio_step_ns,
    gil_switch_interval_s)
from tabledev.pico_sim.rig import (  # noqa: F401 (the package's names)
    PicoRig, board_uid)
from tabledev.pico_sim.supervisor import (  # noqa: F401 (the package's names)
    PicoSupervisor, run_pico_sim)
