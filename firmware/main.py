"""Board entry point: pick the board by platform and run the table controller.

An unexpected exception resets the board (after printing it for the service console): a board
that stops in a REPL would leave the acceptors' inhibit lines to chance.
"""
import sys


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
        # run() returns only for the service sequence (key switch held at boot): REPL follows.
        return module.run()
    except SystemExit:
        raise
    except Exception as exc:  # noqa: any crash -> reset; the watchdog would do it anyway
        sys.print_exception(exc)
        module.hard_reset()


main()
