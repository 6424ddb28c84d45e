"""`tablectl loop`: how fast the board's main loop turns, from two readings of its own counter
and clock (the `loop_stats` command), so a technician sees a board that is falling behind."""
from ..argtypes import ranged
import json
import time

from ..client import Target, add_target_arguments
from ..errors import TablectlError

HELP = "the board's main-loop rate (turns per second of its own clock)"
EXAMPLE = "tablectl loop --db casino.db --seconds 2"


def add_arguments(p):
    add_target_arguments(p)
    p.add_argument("--seconds", type=ranged(0.01, 3600, float, " s"), default=1.0, help="time between the two readings (default 1)")
    p.add_argument("--json", action="store_true", help="print the figures as JSON")


def run(args):
    if not 0.1 <= args.seconds <= 60:
        raise TablectlError("--seconds must be between 0.1 and 60, not %s" % args.seconds)
    with Target(args) as t:
        first = t.command("loop_stats")
        time.sleep(args.seconds)
        second = t.command("loop_stats")
    board_ms = second["board_ms"] - first["board_ms"]
    turns = second["turns"] - first["turns"]
    rate = turns * 1000 // board_ms if board_ms > 0 else 0
    if args.json:
        print(json.dumps({"turns": turns, "board_ms": board_ms, "turns_per_s": rate}))
    else:
        print("main loop: %d turns/s (%d turns in %d ms of the board's clock)" % (rate, turns, board_ms))
    return 0
