"""`tablectl service enter|exit`: put the table in SERVICE (configuration changes, meter
corrections) and back. Signed with the table key; the board also wants its service key switch on."""
from ..client import Target, add_target_arguments

HELP = "enter or leave SERVICE (signed; the board's service key switch must be on to enter)"
EXAMPLE = "tablectl service enter --db casino.db   (then `tablectl config set ...`, then `tablectl service exit`)"


def add_arguments(p):
    add_target_arguments(p)
    p.add_argument("action", choices=("enter", "exit"))


def run(args):
    with Target(args) as t:
        r = t.command("service", {"enter": args.action == "enter"})
    print("table %s" % r["state"])
    return 0
