"""Board entry point: pick the board by platform, self-check, run the table controller."""
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
    # Each board's run() returns False when the service sequence asks for the REPL instead.
    return module.run()


if __name__ == "__main__":
    main()
