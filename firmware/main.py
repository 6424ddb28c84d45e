"""Board entry point: pick the board by platform and run the table controller.

An unexpected exception resets the board (after printing it for the service console): a board
that stops in a REPL would leave the acceptors' inhibit lines to chance.
"""
import micropython
import sys

# Ctrl-C is off from the first line. On a Pico the USB serial port is the REPL's stream until the
# controller claims it, and a host goes on sending while the board boots (a heartbeat, a command
# resent after a power cut): a 0x03 byte in a frame raised KeyboardInterrupt in the middle of
# building the board and left it at the REPL, coin-in dead, until the next power cut (found by
# bench_pico.py cuts, cut 10). The service sequence gives Ctrl-C back for the REPL.
micropython.kbd_intr(-1)


def _board_module():
    if sys.platform == "rp2":
        import boards.pico as module
    elif sys.platform == "esp32":
        import boards.esp32 as module
    else:
        import boards.sim as module
    return module


def main():
    module = _board_module()
    try:
        # run() returns only for the service sequence (key switch held at boot): REPL follows,
        # and mpremote's Ctrl-C must work there.
        result = module.run()
        micropython.kbd_intr(3)
        return result
    except SystemExit:
        raise
    except Exception as exc:  # noqa: any crash -> reset; the watchdog would do it anyway
        sys.print_exception(exc)
        module.hard_reset()


main()
