"""`tablectl sim`: run a virtual board in the foreground."""
HELP = "run a virtual board (the real firmware on MicroPython) behind a pseudo-terminal"
EXAMPLE = "tablectl sim --state /tmp/table1   # prints 'port /dev/pts/N'; Ctrl-C stops it"


def add_arguments(p):
    p.add_argument("--state", required=True, help="state directory: the board's filesystem and sockets")
    p.add_argument("--heap", help="MicroPython heap size, e.g. 128K (as on a board)")
    p.add_argument("--seats", type=int, default=8, help="acceptor inputs the virtual board wires (1-8)")
    p.add_argument("--backend", choices=("pio", "irq"), default="pio",
                   help="counter back end: pio (RP2040 state machines) or irq (GPIO interrupts)")
    p.add_argument("--board-id", help="board id (default: derived from the state directory)")
    p.add_argument("--baud", type=int, help="limit the port to this line rate (8N1: baud/10 bytes/s each way), "
                   "e.g. 115200; default: no limit")


def run(args):
    from ..errors import TablectlError
    from ..simulator import run_sim
    if not 1 <= args.seats <= 8:
        raise TablectlError("--seats must be 1 to 8, not %d" % args.seats)
    if args.baud is not None and args.baud <= 0:
        raise TablectlError("--baud must be positive, not %d" % args.baud)
    run_sim(args.state, args.heap, args.seats, args.backend, args.board_id, baud=args.baud)
    return 0
