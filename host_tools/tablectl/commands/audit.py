"""`tablectl audit verify` and `tablectl reconcile`."""
import json
import os

from ..errors import TablectlError


def _ledger(args):
    from ..ledger import Ledger
    if not os.path.exists(args.db):
        raise TablectlError("no ledger at %s: give --db" % args.db)
    if os.path.isdir(args.db):
        raise TablectlError("%s is a folder: give --db the ledger file" % args.db)
    with open(args.db, "rb") as f:
        header = f.read(16)
    # Checked before the key store: a file that is not SQLite is not "a broken chain".
    if header and header != b"SQLite format 3\x00":
        raise TablectlError("%s is not an SQLite ledger: give --db the file `tablectl serve --db` writes" % args.db)
    return Ledger(args.db, readonly=True)


def audit_args(p):
    p.add_argument("action", choices=("verify", "archive", "resync"),
                   help="verify: prove the ledger and its archives; archive: move the rows recorded before "
                        "--before to an archive file the live ledger's chain stays anchored to; resync: sign off "
                        "that this ledger is behind --board for events --from..--to (an old copy put back)")
    p.add_argument("--db", default=os.environ.get("TABLECTL_DB", "tablectl.db"),
                   help="ledger file (default: $TABLECTL_DB or ./tablectl.db)")
    p.add_argument("--before", metavar="WHEN",
                   help="archive: rows recorded before this local time (2024-06-01, '2024-06-01 18:00', -30d)")
    p.add_argument("--board", default=os.environ.get("TABLECTL_BOARD"),
                   help="resync: the board whose events the ledger lacks; verify --online: which board to ask")
    p.add_argument("--online", action="store_true",
                   help="verify: also ask the board (through the service, or --port) for its signed numbers and "
                        "boot count, and name a ledger or a board that went back")
    p.add_argument("--port", default=os.environ.get("TABLECTL_PORT"),
                   help="verify --online with no service running: the board's port")
    p.add_argument("--from", dest="first", type=int, metavar="N", help="resync: the first event number it covers")
    p.add_argument("--to", dest="last", type=int, metavar="M", help="resync: the last event number it covers")
    p.add_argument("--reason", default="", help="resync: what happened to the books (kept in the ledger)")
    p.add_argument("--json", action="store_true")


def _resync(args):
    """The technician's sign-off: recorded in the ledger (its keyed chain signs it, with who and
    why); the service then records the gap it covers as a resync, and nothing wider."""
    import getpass
    from ..ledger import Ledger
    if not args.board or args.first is None or args.last is None:
        raise TablectlError("audit resync needs --board ID --from N --to M --reason TEXT (the service's log names them)")
    _ledger(args).close()
    by = os.environ.get("SUDO_USER") or getpass.getuser()
    ledger = Ledger(args.db)
    try:
        ledger.sign_off_resync(args.board, args.first, args.last, args.reason, by)
    finally:
        ledger.close()
    msg = ("signed off: board %s events #%d..#%d may be recorded as acknowledged already (by %s: %s)"
           % (args.board, args.first, args.last, by, args.reason))
    print(json.dumps({"signed_off": [args.first, args.last], "board": args.board, "by": by}) if args.json else msg)
    return 0


def _archive(args):
    from .. import owner
    from ..archive import archive
    from ..ledger import Ledger
    from .report import parse_when, stamp
    if not args.before:
        raise TablectlError("audit archive needs --before WHEN, e.g. --before 2024-06-01 or --before -90d")
    before = parse_when(args.before)
    _ledger(args).close()  # the same checks as verify: a file, SQLite, a schema we read
    # The rows leave the ledger: no service may be writing it meanwhile.
    owner.take(os.path.abspath(args.db) + ".lock", "ledger %s" % args.db, busy=lambda pid, program: (
        "ledger %s is held by pid %s (%s): stop tablectl serve first, archive, then start it again"
        % (args.db, pid, program or "another tablectl")))
    ledger = Ledger(args.db)
    try:
        done = archive(ledger, before)
    finally:
        ledger.close()
    if done is None:
        msg = "nothing to archive: no row of %s was recorded before %s (the newest row stays live)" % (
            args.db, stamp(before))
        print(json.dumps({"archived": None}) if args.json else msg)
        return 0
    if args.json:
        print(json.dumps({"archived": done}))
    else:
        print("archived rows %d..%d (%d rows, recorded before %s) to %s; the live ledger goes on from row %d; "
              "`tablectl audit verify` proves both" % (done["first"], done["last"], done["rows"], stamp(before),
                                                       done["file"], done["live_from"]))
    return 0


def _ask_board(args):
    """The board's own signed status (its numbers and boot count), through the service or --port."""
    from ..client import Target
    with Target(args) as t:
        return t.command("status")


def online_problems(ledger, status):
    """What the board's signed status says about the ledger's history: a board whose newest event
    number or boot count is below the ledger's went back (an old copy of its flash)."""
    board = status["board"]
    out = []
    last = ledger.board(board)["last_seq"] if board in ledger.boards() else 0
    newest = status["next_seq"] - 1
    if newest < last:
        out.append("board %s's newest event is #%d, the ledger holds up to #%d: the board's journal went back "
                   "(an old copy of its flash?)" % (board, newest, last))
    filed = ledger.last_boot(board)
    if filed is not None and status["boots"] < filed:
        out.append("board %s is at boot %d, the ledger holds boot %d: the board's flash went back"
                   % (board, status["boots"], filed))
    return out


def audit_run(args):
    if args.action == "archive":
        return _archive(args)
    if args.action == "resync":
        return _resync(args)
    from ..archive import verify_archives
    ledger = _ledger(args)
    online = _ask_board(args) if args.online else None
    count, problems = ledger.verify(board_acked={online["board"]: online["acked_seq"]} if online else None)
    if online:
        problems += online_problems(ledger, online)
    archives, more = verify_archives(ledger)
    problems += more
    if args.json:
        print(json.dumps({"rows": count, "problems": problems, "ok": not problems,
                          "archives": [{"file": f, "rows": n} for f, n in archives]}))
    elif problems:
        for p in problems:
            print("TAMPERED: " + p)
    else:
        print("ledger %s: %d rows, hash chain intact" % (args.db, count)
              + "".join("; archive %s: %d rows, chained" % (f, n) for f, n in archives))
    if problems:
        raise TablectlError("the ledger's hash chain is broken at %d place(s): see above" % len(problems))
    return 0


def reconcile_args(p):
    from ..client import add_target_arguments
    add_target_arguments(p)
    p.add_argument("--offline", action="store_true", help="ledger only; do not ask the board for its meters")
    p.add_argument("--json", action="store_true")


def reconcile_run(args):
    from ..client import Target
    from ..reconcile import reconcile
    ledger = _ledger(args)
    meters = None
    board = args.board
    if not args.offline:
        with Target(args) as t:
            meters = t.command("meters")
            board = board or t.board_id()
    if not board:
        boards = ledger.boards()
        if len(boards) != 1:
            raise TablectlError("say which board: --board (ledger has %s)" % ", ".join(boards) or "none")
        board = boards[0]
    ok, figures, lines = reconcile(ledger, board, meters)
    print(json.dumps(figures) if args.json else "\n".join(lines))
    if not ok:
        raise TablectlError("reconciliation of board %s does not balance" % board)
    return 0


COMMANDS = {
    "audit": ("check the ledger's hash chain: any edited, deleted or reordered row is named",
              "tablectl audit verify --db casino.db", audit_args, audit_run),
    "reconcile": ("seeds + contributions - awards against the board's meters; exit 1 on mismatch",
                  "tablectl reconcile --db casino.db --port /dev/ttyACM0", reconcile_args, reconcile_run),
}
