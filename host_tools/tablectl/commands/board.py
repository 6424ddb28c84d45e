"""Technician commands that talk to one board: status, meters, events, lock, unlock, config,
provision. Through the running service when there is one, else straight to --port."""
from ..argtypes import ranged
import json
import time

from ..client import Target, add_target_arguments
from ..errors import TablectlError
from ..seats import seat_label
from ..suggest import did_you_mean


def _print(args, data, lines):
    if getattr(args, "json", False):
        print(json.dumps(data, indent=1, sort_keys=True))
    else:
        for line in lines:
            print(line)


from ..readable import dollars  # noqa: E402,F401 (monitor and jackpot import it from here)


# --- status ----------------------------------------------------------------------------------
def status_args(p):
    add_target_arguments(p)
    p.add_argument("--json", action="store_true")


def _ledger_alarms(db, board):
    import os
    if not db or not os.path.exists(db):
        return []
    from ..ledger import Ledger
    ledger = Ledger(db, readonly=True)
    try:
        return ledger.alarms(board)
    finally:
        ledger.close()


def status_run(args):
    from tablegames.progressive import board_options, options_text

    from ..readable import spots_text, status_json
    with Target(args) as t:
        r = t.command("status")
        cfg = t.command("config_get")["config"]
    # The progressive options are the table's configuration (rulebook 000 rule 9.3: chosen when the
    # game is put into play); status shows them as the board holds them.
    try:
        r["progressive"] = dict(board_options(cfg), seed_cents=cfg["seed_cents"])
        progressive = "%s; seed %s" % (options_text(r["progressive"]), dollars(cfg["seed_cents"]))
    except TablectlError as exc:
        r["progressive"] = {"error": str(exc)}
        progressive = "NOT USABLE: %s" % exc
    lines = ["board      %s (firmware %s, boot %s)" % (r["board"], r["fw"], r["boots"]),
             "runtime    %s" % r.get("runtime", "not reported (firmware before 0.1.0 status)"),
             "state      %s%s" % (r["state"], "" if not r["faults"] else "  faults: " + ", ".join(
                 "%s (%s)" % (f, r["fault_detail"].get(f, "")) for f in r["faults"])),
             # A linked table's progressive is the pool's: its own meter pays nothing (docs/POOL.md).
             ("meter      %s   round %d" % (dollars(r["meter"]), r["round"]) if not r.get("pool") else
              "meter      pool %s: %s   round %d   (linked: the table's own meter pays nothing)"
              % (r["pool"], dollars(r["pool_meter"]) if r.get("pool_meter") is not None else "not heard since boot",
                 r["round"])),
             "display    %r" % r["display"],
             "seats      " + " ".join("%d:%s%s" % (seat_label(i), "LAMP" if r["lamps"][i] else "-",
                                                    "/inh" if r["inhibit"][i] else "") for i in range(r["seats"])),
             "spots      %s" % spots_text(r.get("spots", 0)),
             "outbox     next seq %s, acknowledged %s, waiting %s" % (r["next_seq"], r["acked_seq"], r["unacked"]),
             "journal    %s" % r.get("journal", "not reported (firmware before the raw log)"),
             "link       bad frames %d, refused commands %d%s" % (
                 r["frames_bad"], r["refused"], ", the host's stale frames after a restart %d" % r["stale"]
                 if r.get("stale") else ""),
             "key        %s; service switch %s" % ("provisioned" if r["key_provisioned"] else "NONE",
                                                   "on" if r["service_switch"] else "off"),
             "progressive %s" % progressive]
    # The ledger's word on the board's history (Ledger.alarms): a boot count or sequence numbers
    # that went back are shown here, not only in an audit.
    r["alarms"] = _ledger_alarms(args.db, r["board"])
    lines += ["ALARM      %s" % line for line in r["alarms"]]
    _print(args, status_json(r), lines)
    return 0


def meters_run(args):
    with Target(args) as t:
        r = t.command("meters")
        pool = t.command("status").get("pool")
    lines = ["progressive meter   %s" % dollars(r["meter"]) if not pool else
             "progressive meter   linked to pool %s (`tablectl pool status`); the table's own meter, which "
             "pays nothing while linked: %s" % (pool, dollars(r["meter"])),
             "overflow            %s" % dollars(r["over"]),
             "reserve             %s" % dollars(r["res"]),
             "frozen at lockout   %s" % dollars(r["frozen"]),
             "contributions       %s" % dollars(r["contrib"]),
             "seeded              %s" % dollars(r["seeded"]),
             "awarded from meter  %s" % dollars(r["awarded"]),
             "all wins            %s in %d hits" % (dollars(r["wins"]), r["hits"]),
             "corrections         %s" % dollars(r["corr"]),
             "tokens per seat     " + " ".join("%d:%d" % (seat_label(i), c) for i, c in enumerate(r["seat_coins"]))]
    from ..readable import meters_json
    _print(args, meters_json(r), lines)
    return 0


def lock_run(args):
    with Target(args) as t:
        r = t.command("lock")
    print("table %s" % r["state"])
    return 0


def unlock_run(args):
    with Target(args) as t:
        r = t.command("unlock")
    print("table %s" % r["state"])
    return 0


def target_only(p):
    add_target_arguments(p)


# --- config ----------------------------------------------------------------------------------
def config_args(p):
    add_target_arguments(p)
    p.add_argument("--json", action="store_true")
    p.add_argument("action", choices=("get", "set"))
    p.add_argument("key", nargs="?")
    p.add_argument("value", nargs="?")


def config_run(args):
    from ..firmware_config import config as fw_config, validate_change
    if args.action == "set":
        # What can be checked without the board is checked before anything is opened.
        if not args.key or args.value is None:
            raise TablectlError("config set needs KEY VALUE, e.g. `tablectl config set increment_cents 70`")
        if args.key not in fw_config.SCHEMA:
            raise TablectlError("unknown setting %r%s; known: %s" % (
                args.key, did_you_mean(args.key, fw_config.SCHEMA), ", ".join(sorted(fw_config.SCHEMA))))
        try:
            int(args.value)
        except ValueError:
            raise TablectlError("%s must be a whole number (cents, ms or a count), not %r" % (args.key, args.value))
    with Target(args) as t:
        if args.action == "get":
            cfg = t.command("config_get")["config"]
            if args.key:
                if args.key not in cfg:
                    raise TablectlError("unknown setting %r%s; known: %s" % (
                        args.key, did_you_mean(args.key, cfg), ", ".join(sorted(cfg))))
                _print(args, {args.key: cfg[args.key]}, ["%s = %s" % (args.key, cfg[args.key])])
            else:
                _print(args, cfg, ["%-18s %s" % (k, cfg[k]) for k in sorted(cfg)])
            return 0
        if not args.key or args.value is None:
            raise TablectlError("config set needs KEY VALUE, e.g. `tablectl config set increment_cents 70`")
        current = t.command("config_get")["config"]
        change = validate_change(args.key, args.value, current)  # the host checks first...
        try:
            r = t.command("config_set", {"changes": change})  # ...and the board again
        except TablectlError as exc:
            if "only in SERVICE" in str(exc):
                # The board's refusal, and what to do about it.
                raise TablectlError("%s: run `tablectl service enter` (service key switch on), then this "
                                    "command, then `tablectl service exit`" % exc)
            raise
    print("%s = %s (was %s)" % (args.key, r["config"][args.key], current[args.key]))
    return 0


# --- events ----------------------------------------------------------------------------------
def events_args(p):
    import os
    p.add_argument("--db", default=os.environ.get("TABLECTL_DB", "tablectl.db"),
                   help="ledger file (default: $TABLECTL_DB or ./tablectl.db)")
    p.add_argument("--board", help="only this board's events")
    p.add_argument("--kind", action="append", help="only these kinds (repeatable)")
    p.add_argument("--since", metavar="WHEN",
                   help="recorded at or after this local time: 2024-06-01, '2024-06-01 18:00', 18:00, today, "
                        "or relative: -30m, -2h, -1d")
    p.add_argument("--until", metavar="WHEN", help="recorded before this time, same forms")
    p.add_argument("--last", type=ranged(0, None), default=None,
                   help="how many of the newest to show (default 50; every one in the period with --since/--until; 0: every one)")
    p.add_argument("--follow", action="store_true", help="keep printing new events")
    out = p.add_mutually_exclusive_group()
    out.add_argument("--json", action="store_true", help="one JSON object per line (JSON lines), for jq and scripts")
    out.add_argument("--csv", action="store_true",
                     help="CSV with a header row: id, time (ISO 8601, local), board, seq, kind, body (JSON)")


HIDDEN_FIELDS = ("t", "b", "q", "k", "p", "ms", "pe")
EVENT_HEADER = "%6s %-19s %-10s %-7s %-12s %s" % ("id", "recorded", "board", "seq", "kind", "detail")


def event_header(board_width=10):
    """EVENT_HEADER with the board column as wide as the longest board id (pico ids are 21)."""
    return "%6s %-19s %-*s %-7s %-12s %s" % ("id", "recorded", board_width, "board", "seq", "kind", "detail")


def format_event(e, date=True, board_width=10):
    """One event as a line of the `events` table (EVENT_HEADER names its columns); date=False
    gives the clock time only (the monitor's narrow feed)."""
    from ..readable import detail_text, person_seats
    detail = detail_text(person_seats(e["body"]), HIDDEN_FIELDS)
    when = time.strftime("%Y-%m-%d %H:%M:%S" if date else "%H:%M:%S", time.localtime(e["recorded_at"]))
    return "%6d %s %-*s #%-6s %-12s %s" % (e["id"], when, board_width, e["board"],
                                           e["seq"] if e["seq"] is not None else "-", e["kind"], detail)


def event_json(e):
    """An event of the ledger as `events --json`, `--csv` and `monitor --json` print it: seats in its
    body counted from 1, as the text shows them (docs/CLI-JSON.md); the ledger keeps the board's."""
    from ..readable import person_seats
    return dict(e, body=person_seats(e["body"]))


def events_run(args):
    import csv
    import datetime
    import os
    import sys

    from ..ledger import Ledger
    from .report import parse_when
    if not os.path.exists(args.db):
        raise TablectlError("no ledger at %s: give --db, or start `tablectl serve --db %s`" % (args.db, args.db))
    since = parse_when(args.since) if args.since else None
    until = parse_when(args.until) if args.until else None
    if since is not None and until is not None and until <= since:
        raise TablectlError("--until must be after --since")
    last = args.last if args.last is not None else (None if since or until else 50)

    def wanted(e):
        return (since is None or e["recorded_at"] >= since) and (until is None or e["recorded_at"] < until)

    ledger = Ledger(args.db, readonly=True)
    _check_filters(args, ledger)
    width = max([10] + [len(b) for b in ledger.boards()])
    if args.csv:
        writer = csv.writer(sys.stdout, lineterminator="\n")
        writer.writerow(["id", "time", "board", "seq", "kind", "body"])

        def show(e):
            writer.writerow([e["id"], datetime.datetime.fromtimestamp(e["recorded_at"]).isoformat(timespec="seconds"),
                             e["board"], "" if e["seq"] is None else e["seq"], e["kind"],
                             json.dumps(event_json(e)["body"], sort_keys=True)])
            sys.stdout.flush()
    elif args.json:
        def show(e):
            print(json.dumps(event_json(e)), flush=True)
    else:
        print(event_header(width))

        def show(e):
            print(format_event(e, board_width=width), flush=True)
    rows = [e for e in ledger.events(args.board, args.kind) if wanted(e)]
    rows = rows[-last:] if last else rows
    last_id = rows[-1]["id"] if rows else 0
    for e in rows:
        show(e)
    while args.follow:
        time.sleep(0.3)
        for e in ledger.events(args.board, args.kind, after_id=last_id):
            last_id = e["id"]
            if until is not None and e["recorded_at"] >= until:
                return 0
            show(e)
    return 0


def _check_filters(args, ledger):
    """A --board or --kind that matches nothing this ledger could hold is a typo, said in one
    line, not an empty table and exit 0."""
    from table import schema
    boards = ledger.boards()
    if args.board and args.board not in boards:
        raise TablectlError("no board %r in the ledger %s%s; its boards: %s" % (
            args.board, args.db, did_you_mean(args.board, boards), ", ".join(boards) or "none yet"))
    known = set(schema.EVENTS) | {"intent", "cmd"} | {r[0] for r in ledger.db.execute("SELECT DISTINCT kind FROM ledger")}
    for kind in args.kind or ():
        if kind not in known:
            raise TablectlError("unknown event kind %r%s; kinds: %s" % (kind, did_you_mean(kind, known),
                                                                       ", ".join(sorted(known))))


# --- provision -------------------------------------------------------------------------------
def provision_run(args):
    from ..keys import keys_dir_for
    with Target(args) as t:
        board = t.provision()  # the board refuses unless its service switch is on
    print("table key provisioned on board %s and stored in %s (never shown, never sent back)"
          % (board, keys_dir_for(args.db)))
    return 0


COMMANDS = {
    "status": ("board state, faults, meter, seats, outbox", "tablectl status --port /dev/ttyACM0", status_args, status_run),
    "meters": ("every meter of the board, in dollars and cents", "tablectl meters --json", status_args, meters_run),
    "events": ("the ledger's events, newest last", "tablectl events --db casino.db --follow", events_args, events_run),
    "lock": ("lock coin-in (as the dealer's lock key)", "tablectl lock", target_only, lock_run),
    "unlock": ("unlock coin-in and start the next round", "tablectl unlock", target_only, unlock_run),
    "config": ("read or change the board's configuration (changes need SERVICE)",
               "tablectl config set increment_cents 70", config_args, config_run),
    "provision": ("give the board a new table key (service key switch on)", "tablectl provision --port /dev/ttyACM0",
                  target_only, provision_run),
}
