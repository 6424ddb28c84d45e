"""`tablectl monitor`: a live view of one table in the terminal (plain ANSI redraw, no curses, so
it also works over a serial console and in a pipe): seats with lamps, coin-in inhibit, bet spots
and jams, the lock state, the meter and the display, faults, the dealer keys, and the ledger's
newest events. `--once` prints one frame and exits (for scripts and tests)."""
from ..argtypes import ranged
import json
import os
import shutil
import sys
import time

from table import vocab

from ..client import Target, add_target_arguments
from ..errors import TablectlError, WrongTarget
from ..readable import status_json
from ..seats import seat_label
from .board import dollars, event_json, format_event

HELP = "live view of the table: seats, lamps, spots, lock state, meter, fault, event feed"
EXAMPLE = "tablectl monitor --db casino.db        (Ctrl-C to leave; --once for a single frame)"

SPOTS = ("ante", "bet", "bonus")
KEYS = ("lock", "unlock", "jackpot", "service")
# Commands the monitor and other readers send all the time: not news for the event feed.
QUIET_COMMANDS = set(vocab.READ_COMMANDS)
CLEAR = "\x1b[H\x1b[2J"
HIDE_CURSOR = "\x1b[?25l"
SHOW_CURSOR = "\x1b[?25h"
BOLD, RED, GREEN, YELLOW, DIM, RESET = "\x1b[1m", "\x1b[31m", "\x1b[32m", "\x1b[33m", "\x1b[2m", "\x1b[0m"


def add_arguments(p):
    add_target_arguments(p)
    p.add_argument("--once", action="store_true", help="print one frame and exit")
    p.add_argument("--interval", type=ranged(0.05, 3600, float, " s"), default=0.5, help="seconds between redraws (default 0.5)")
    p.add_argument("--events", type=ranged(0, 1000), default=8, help="how many of the newest events to show")
    p.add_argument("--no-color", action="store_true", help="no ANSI colours")
    p.add_argument("--json", action="store_true",
                   help="the frame's data as JSON (with --once: one document; without: one JSON line per poll)")


class Palette:
    def __init__(self, on):
        self.on = on

    def __call__(self, code, text):
        return "%s%s%s" % (code, text, RESET) if self.on else text


def newest_events(ledger, board, count):
    """The newest `count` events worth a technician's eye (no read-only command chatter)."""
    if ledger is None or count <= 0:
        return []
    out = []
    last = ledger.db.execute("SELECT COALESCE(MAX(id), 0) FROM ledger").fetchone()[0]
    # Walk back in windows until enough interesting rows are found (a busy ledger is long).
    window = max(50, count * 10)
    start = last
    while start > 0 and len(out) < count:
        lo = max(0, start - window)
        chunk = [e for e in ledger.events(board, None, after_id=lo, limit=start - lo) if not _quiet(e)]
        out = chunk + out
        start = lo
    return out[-count:]


def _quiet(e):
    return e["kind"] == "cmd" and e["body"].get("cmd") in QUIET_COMMANDS


def render(status, events, color=False, error=None, now=None):
    """One frame of text from a `status` reply and a list of ledger events."""
    c = Palette(color)
    now = now or time.time()
    lines = []
    if status is None:
        lines.append(c(BOLD, "TABLE ?") + "   " + time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now)))
        lines.append(c(RED, "no answer from the board: %s" % (error or "unknown")))
    else:
        s = status
        state = s["state"]
        state_col = {"OPEN": GREEN, "LOCKED": YELLOW, "FAULT": RED}.get(state, BOLD)
        lines.append("%s  fw %s  boot %s  %s" % (c(BOLD, "TABLE %s" % s["board"]), s["fw"], s["boots"],
                                                  time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(now))))
        lines.append("state   %s%s   round %d" % (c(state_col, state),
                                                 "" if s.get("base") == state else " (underneath: %s)" % s.get("base"),
                                                 s["round"]))
        lines.append("meter   %s   display [%s]" % (c(BOLD, dollars(s["meter"])), s.get("display", "")))
        faults = s.get("faults") or []
        if faults:
            detail = s.get("fault_detail") or {}
            lines.append("fault   " + c(RED, "; ".join("%s: %s" % (f, detail.get(f, "")) for f in faults)))
        else:
            lines.append("fault   none")
        keys = s.get("keys", 0) or 0
        held = [k for i, k in enumerate(KEYS) if keys & (1 << i)]
        lines.append("keys    %s   service switch %s   table key %s" % (
            ", ".join(held) + " held" if held else "none held", "ON" if s.get("service_switch") else "off",
            "provisioned" if s.get("key_provisioned") else c(RED, "NONE")))
        lines.append("")
        lines.append("seat  lamp  coin-in    ante bet  bonus  jam")
        spots = s.get("spots", 0) or 0
        jammed = s.get("jammed") or []
        for i in range(s["seats"]):
            lamp = c(YELLOW, "ON  ") if s["lamps"][i] else "-   "
            inhibited = s["inhibit"][i]
            accept = c(DIM, "inhibit  ") if inhibited else c(GREEN, "accepting")
            cells = []
            for j, _ in enumerate(SPOTS):
                cells.append("[x]" if spots & (1 << (i * 3 + j)) else "[ ]")
            jam = c(RED, "JAM") if i < len(jammed) and jammed[i] else ""
            lines.append(" %d    %s  %s  %s  %s  %s   %s" % (seat_label(i), lamp, accept, cells[0], cells[1], cells[2], jam))
        lines.append("")
        lines.append("outbox  next %s, acknowledged %s, waiting %s   link: bad frames %s, refused %s" % (
            s.get("next_seq"), s.get("acked_seq"), s.get("unacked"), s.get("frames_bad"), s.get("refused")))
        if error:
            lines.append(c(RED, "last poll failed: %s" % error))
    lines.append("")
    lines.append(c(BOLD, "events") if events else c(BOLD, "events") + "  (none in the ledger yet)")
    for e in events:
        lines.append("  " + format_event(e, date=False))
    return lines


class Monitor:
    def __init__(self, args):
        self.args = args
        self.target = None
        self.ledger = None
        if args.db and os.path.exists(args.db):
            from ..ledger import Ledger
            self.ledger = Ledger(args.db, readonly=True)

    def close(self):
        if self.target is not None:
            self.target.close()
            self.target = None
        if self.ledger is not None:
            self.ledger.close()

    def poll(self):
        """(status or None, error text or None)."""
        try:
            if self.target is None:
                self.args.quiet_waits = True
                self.target = Target(self.args)
            return self.target.command("status"), None
        except WrongTarget:
            raise  # the options name the wrong board: asking again shows "TABLE ?" forever
        except (TablectlError, OSError, ValueError) as exc:
            if self.target is not None:
                self.target.close()
                self.target = None
            return None, str(exc)

    def events(self, board):
        return newest_events(self.ledger, board, self.args.events)

    def frame(self, color):
        status, error = self.poll()
        board = self.args.board or (status or {}).get("board")
        return status, error, self.events(board)


def run(args):
    mon = Monitor(args)
    try:
        if args.once:
            status, error, events = mon.frame(False)
            if status is None:
                raise TablectlError(error)
            if args.json:
                print(json.dumps({"status": status_json(status), "events": [event_json(e) for e in events]},
                                 indent=1, sort_keys=True))
            else:
                print("\n".join(render(status, events, color=False)))
            return 0
        if args.json:
            return _json_lines(mon, args)
        return _live(mon, args)
    finally:
        mon.close()


def fit(status, events, color, error, rows):
    """The frame in `rows` lines: the event feed gives up its oldest events first, so the newest
    stays on screen however small the terminal (in 80x24 a 7-seat table leaves room for 7)."""
    lines = render(status, events, color=color, error=error)
    over = len(lines) - rows
    if over > 0 and events:
        events = events[min(len(events), over):]
        lines = render(status, events, color=color, error=error)
    return lines[:rows]


def _clip(line, width):
    """Cut a line to the terminal's width (colour codes take no columns)."""
    if len(line) <= width:
        return line
    visible = 0
    out = []
    i = 0
    while i < len(line) and visible < width - 1:
        if line[i] == "\x1b":
            end = line.find("m", i)
            end = len(line) - 1 if end < 0 else end
            out.append(line[i:end + 1])
            i = end + 1
            continue
        out.append(line[i])
        visible += 1
        i += 1
    return "".join(out) + (RESET if "\x1b" in line else "") + "~"


def _json_lines(mon, args):
    """`monitor --json` without --once: one JSON object per line and poll, never screen codes,
    so a pipe (jq, a log file) gets data it can read. A failed poll is a line with "error"."""
    import signal
    signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        while True:
            status, error, events = mon.frame(False)
            line = {"time": time.time(), "status": status_json(status) if status is not None else None,
                    "events": [event_json(e) for e in events]}
            if status is None:
                line["error"] = error
            sys.stdout.write(json.dumps(line, sort_keys=True) + "\n")
            sys.stdout.flush()
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0


def _live(mon, args):
    # Ctrl-C must leave the view even when the shell started us with SIGINT ignored (a
    # background job, nohup, CI): Python keeps an inherited SIG_IGN, so set the handler here.
    import signal
    signal.signal(signal.SIGINT, signal.default_int_handler)
    out = sys.stdout
    color = out.isatty() and not args.no_color
    out.write(HIDE_CURSOR)
    try:
        while True:
            status, error, events = mon.frame(color)
            width, height = shutil.get_terminal_size((100, 40))
            lines = fit(status, events, color, error if status is None else None, max(1, height - 2))
            footer = "(Ctrl-C to leave)"
            body = [_clip(line, width) for line in lines]
            out.write(CLEAR + "\n".join(body) + "\n" + footer + "\n")
            out.flush()
            time.sleep(args.interval)
    except KeyboardInterrupt:
        return 0
    finally:
        out.write(SHOW_CURSOR + "\n")
        out.flush()
