"""`tablectl sim`: run a virtual board in the foreground."""
from tablectl.argtypes import ranged
HELP = "run a virtual board (the real firmware on MicroPython) behind a pseudo-terminal"
EXAMPLE = ("tablectl sim --state /tmp/table1   # prints 'port /dev/pts/N'; Ctrl-C stops it\n"
           "  tablectl sim --board pico --state /tmp/pico1   # the MicroPython Pico build on an emulated RP2040")


def add_arguments(p):
    p.add_argument("--board", choices=("unix", "pico"), default="unix",
                   help="unix: the firmware on the MicroPython unix port (fast, the default); pico: the "
                   "MicroPython Pico image ($PICO_UF2) on an emulated RP2040, the firmware deployed to its "
                   "flash as `tablectl flash` would")
    p.add_argument("--image", help="--board pico: the MicroPython UF2 (default: $PICO_UF2)")
    p.add_argument("--py", action="store_true",
                   help="--board pico: deploy the .py sources instead of .mpy (slower boot)")
    p.add_argument("--fast", action="store_true",
                   help="--board pico: let emulated time run ahead of the wall clock when the board idles")
    p.add_argument("--state", required=True, help="state directory: the board's filesystem and sockets")
    p.add_argument("--heap", help="MicroPython heap size, e.g. 128K (as on a board)")
    p.add_argument("--seats", type=ranged(1, 8), default=8, help="acceptor inputs the virtual board wires (1-8)")
    p.add_argument("--backend", choices=("pio", "irq"), default="pio",
                   help="counter back end: pio (RP2040 state machines) or irq (GPIO interrupts)")
    p.add_argument("--board-id", help="board id (default: derived from the state directory)")
    p.add_argument("--baud", type=ranged(300, 10000000), help="limit the port to this line rate (8N1: baud/10 bytes/s each way), "
                   "e.g. 115200; default: no limit")


def run(args):
    import os

    from tablectl import owner
    from tablectl.errors import TablectlError
    if os.path.exists(args.state) and not os.path.isdir(args.state):
        raise TablectlError("--state %s is a file; give a folder for the board's state" % args.state)
    # The board's folder holds its table key (fs/data/kA, kB): a secret, so the folder is 0700
    # and everything the board and its interpreter make in it 0600 (umask), as the host's keys.
    os.umask(0o077)
    try:
        os.makedirs(args.state, mode=0o700, exist_ok=True)
        os.chmod(args.state, 0o700)
        for name in ("kA", "kB", "key.bin"):
            path = os.path.join(args.state, "fs", "data", name)
            if os.path.exists(path):
                os.chmod(path, 0o600)
    except OSError as exc:
        raise TablectlError("cannot create the board folder %s: %s" % (args.state, exc.strerror or exc))
    # One virtual board per folder: a second would take over its sockets and files.
    owner.take_state(args.state)
    if args.board == "pico":
        from tabledev.pico_sim import image_path, run_pico_sim
        if args.image and not __import__("os").path.exists(args.image):
            raise TablectlError("no such image %s: give the MicroPython Pico UF2" % args.image)
        run_pico_sim(args.state, args.image or image_path(), realtime=not args.fast, mpy=not args.py)
        return 0
    from tabledev.simulator import run_sim
    if args.heap is not None:
        import re
        # MicroPython's -X heapsize=: a whole number of bytes, or of K or M (128K, 2M).
        if not re.fullmatch(r"[1-9][0-9]*[KkMm]?", args.heap):
            raise TablectlError("--heap %r: give the heap size as bytes or with K or M, e.g. 128K or 2M" % args.heap)
    if not 1 <= args.seats <= 8:
        raise TablectlError("--seats must be 1 to 8, not %d" % args.seats)
    if args.baud is not None and args.baud <= 0:
        raise TablectlError("--baud must be positive, not %d" % args.baud)
    run_sim(args.state, args.heap, args.seats, args.backend, args.board_id, baud=args.baud)
    return 0
