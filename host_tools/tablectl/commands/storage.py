"""`tablectl storage repair`: clear the board's storage fault (a journal record that is bad, not
torn). Signed; the board also wants its service key switch on. The board rewrites its journal from
the state before the bad record, skips every sequence number the bad bytes could have held, and
journals the repair with what it skipped, so the ledger records the gap (docs/SECURITY.md)."""
from ..client import Target, add_target_arguments

HELP = "clear a storage fault: signed, service key switch on, with a reason for the books"
EXAMPLE = 'tablectl storage repair --reason "flash bit error, meters checked against the ledger"'


def add_arguments(p):
    add_target_arguments(p)
    p.add_argument("action", choices=("repair",))
    p.add_argument("--reason", required=True, help="why, for the books (shown in the ledger)")


def run(args):
    with Target(args) as t:
        r = t.command("storage_repair", {"reason": args.reason})
    print("storage repaired: sequence numbers %d..%d skipped; meter %s cents"
          % (r["skipped_from"], r["skipped_to"], r["meter"]))
    print("now reconcile (tablectl reconcile) and correct the meter if the ledger says so")
    return 0
