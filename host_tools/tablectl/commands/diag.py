"""`tablectl diag acceptor|sensors|keypad|display|lamps [SEAT...]`: guided tests a technician
runs at the table, with PASS/FAIL per item.

The command tells the technician what to do ("drop a token in seat 3 now"), then watches the
board (the firmware's `diag` command reads the raw inputs: keys, bet spots, how long each
acceptor line is held, tokens and glitches per seat; `status` gives lamps, inhibit lines and the
display) until the expected change shows or the time runs out.

  --bench DIR   a virtual board: the command performs each physical action itself through the
                bench (and reads the virtual board's output pins for what an eye would check)
  --yes         no questions: items only an eye can judge are reported SKIP (with --bench they
                are read from the virtual board's outputs instead)
"""
from ..argtypes import ranged
import json
import re
import sys
import time

from table import vocab

from ..client import Target, add_target_arguments
from ..errors import TablectlError
from ..seats import seat_index

HELP = "guided tests at the table (acceptor, bet-spot sensors, keypad, display, lamps): PASS/FAIL per item"
EXAMPLE = "tablectl diag acceptor 3 5      (then drop a token in seat 3, then in seat 5, when asked)"

TESTS = ("acceptor", "sensors", "keypad", "display", "lamps")
SPOTS = ("ante", "bet", "bonus")
# The key test order leaves the table where a dealer expects it: SERVICE and JACKPOT act on
# nothing while OPEN, LOCK then UNLOCK lock and reopen (the next round).
KEY_ORDER = ("service", "lock", "unlock", "jackpot")
# The keypad's keys by bit, as the board numbers them (table.vocab.KEY_NAMES, bit 0 upwards).
KEY_BITS = {name: bit for bit, name in enumerate(vocab.KEY_NAMES)}
TEST_PATTERN = re.compile(r"^(8\.)+$")


def add_arguments(p):
    add_target_arguments(p)
    p.add_argument("test", choices=TESTS, help="what to test")
    p.add_argument("seats", nargs="*", type=ranged(1, 8), metavar="SEAT", help="seats to test, 1-based (default: all)")
    p.add_argument("--yes", "-y", action="store_true",
                   help="non-interactive: no questions; eye-only items are SKIP unless --bench reads them")
    p.add_argument("--bench", metavar="STATE_DIR",
                   help="virtual board: perform each physical action through the bench")
    p.add_argument("--timeout", type=ranged(0.1, 3600, float, " s"), default=20.0, help="seconds to wait for each action (default 20)")
    p.add_argument("--json", action="store_true", help="print the results as JSON")


class Result:
    def __init__(self):
        self.items = []

    def add(self, out, name, verdict, detail=""):
        self.items.append({"item": name, "result": verdict, "detail": detail})
        if out is not None:
            print("  %-4s  %s%s" % (verdict, name, "  (%s)" % detail if detail else ""), file=out, flush=True)

    def counts(self):
        c = {"PASS": 0, "FAIL": 0, "SKIP": 0}
        for i in self.items:
            c[i["result"]] += 1
        return c


class DiagDialog:
    """One `tablectl diag` run with the technician: the checks in order, the prompts (unless --yes,
    a bench or no terminal) and the result of each."""

    def __init__(self, args, target, bench, out):
        self.args = args
        self.t = target
        self.bench = bench
        self.out = out  # None with --json: the prompts still go to stderr
        self.say_to = out or sys.stderr
        self.result = Result()
        self.interactive = not args.yes and bench is None and sys.stdin.isatty()

    # --- talking to the technician ------------------------------------------------------------
    def say(self, text):
        print(text, file=self.say_to, flush=True)

    def instruct(self, text):
        self.say("  -> %s%s" % (text, "  [bench does it]" if self.bench else ""))

    def ask(self, question):
        """An item only an eye can judge: True/False from the technician, None when not asked."""
        if not self.interactive:
            return None
        while True:
            self.say_to.write("  ?  %s [y/n] " % question)
            self.say_to.flush()
            answer = sys.stdin.readline()
            if not answer:
                return None
            answer = answer.strip().lower()
            if answer in ("y", "yes"):
                return True
            if answer in ("n", "no"):
                return False

    def item(self, name, ok, detail=""):
        self.result.add(self.out, name, "PASS" if ok else "FAIL", detail)
        return ok

    def skip(self, name, detail):
        self.result.add(self.out, name, "SKIP", detail)

    # --- watching the board -------------------------------------------------------------------
    def diag(self):
        return self.t.command("diag")

    def status(self):
        return self.t.command("status")

    def wait(self, read, predicate, timeout=None):
        """Poll read() until predicate(value) holds; returns (held, last value)."""
        deadline = time.monotonic() + (timeout or self.args.timeout)
        value = read()
        while not predicate(value):
            if time.monotonic() > deadline:
                return False, value
            time.sleep(0.08)
            value = read()
        return True, value

    # --- the tests ----------------------------------------------------------------------------
    def acceptor(self, seats):
        state = self.status()["state"]
        if state == "OPEN":
            self.say("  note: the table is OPEN, so each test token is played like any other (meter + increment, "
                     "lamp on); lock the table first to test without crediting")
        for seat in seats:
            i = seat_index(seat)
            before = self.diag()
            self.say("seat %d acceptor" % seat)
            self.instruct("drop one token in seat %d now" % seat)
            if self.bench:
                self.bench.coin(i, wait=False)
            ok, d = self.wait(self.diag, lambda d: d["coins"][i] > before["coins"][i])
            self.item("seat %d: token counted" % seat, ok and d["coins"][i] == before["coins"][i] + 1,
                      "tokens %d -> %d" % (before["coins"][i], d["coins"][i]) if ok else
                      "no token within %.0f s: check the acceptor's pulse wire and its inhibit line" % self.args.timeout)
            if not ok:
                continue
            # the line must go idle again (a stuck line is a jam) and the pulses be clean
            idle, d = self.wait(self.diag, lambda d: d["held_ms"][i] == 0, timeout=3.0)
            self.item("seat %d: pulse line released" % seat, idle,
                      "" if idle else "line held active %d ms: jam or wiring short" % d["held_ms"][i])
            glitches = d["glitches"][i] - before["glitches"][i]
            self.item("seat %d: clean pulses" % seat, glitches == 0,
                      "" if glitches == 0 else "%d glitch(es): check the ground and the cable's shield" % glitches)
            lost = d["edges_lost"][i] - before["edges_lost"][i]
            if lost:
                self.item("seat %d: no edges lost" % seat, False, "%d edges lost by the input buffer" % lost)

    def sensors(self, seats):
        for seat in seats:
            i = seat_index(seat)
            self.say("seat %d bet-spot sensors" % seat)
            for j, spot in enumerate(SPOTS):
                bit = 1 << (i * 3 + j)
                if self.diag()["spots"] & bit:
                    self.instruct("clear the %s spot at seat %d" % (spot.upper(), seat))
                    if self.bench:
                        self.bench.spot(i, spot, False)
                    self.wait(self.diag, lambda d: not d["spots"] & bit)
                self.instruct("cover the %s spot at seat %d" % (spot.upper(), seat))
                if self.bench:
                    self.bench.spot(i, spot, True)
                on, d = self.wait(self.diag, lambda d: bool(d["spots"] & bit))
                others = d["spots"] & ~bit & _seat_mask(i)
                if on and others:
                    self.item("seat %d %s: sees the chip" % (seat, spot), False,
                              "another spot of this seat also reads covered: crossed wires?")
                else:
                    self.item("seat %d %s: sees the chip" % (seat, spot), on,
                              "" if on else "not seen within %.0f s" % self.args.timeout)
                self.instruct("uncover the %s spot at seat %d" % (spot.upper(), seat))
                if self.bench:
                    self.bench.spot(i, spot, False)
                off, _ = self.wait(self.diag, lambda d: not d["spots"] & bit)
                self.item("seat %d %s: sees it cleared" % (seat, spot), off,
                          "" if off else "still reads covered: sensor stuck or shorted")

    def keypad(self, seats):
        self.say("dealer keypad (the keys act as at the table: LOCK locks, UNLOCK opens the next round)")
        for name in KEY_ORDER:
            bit = 1 << KEY_BITS[name]
            self.instruct("press and hold %s" % name.upper())
            if self.bench:
                self.bench.hold_keys(bit)
            down, d = self.wait(self.diag, lambda d: bool(d["keys"] & bit))
            stray = d["keys"] & ~bit
            self.item("key %s: pressed" % name, down and not stray,
                      ("other keys read pressed too (mask %#x)" % d["keys"]) if down and stray else
                      ("" if down else "not seen within %.0f s: check the keypad row/column" % self.args.timeout))
            self.instruct("release %s" % name.upper())
            if self.bench:
                self.bench.hold_keys(0)
            up, _ = self.wait(self.diag, lambda d: not d["keys"] & bit)
            self.item("key %s: released" % name, up, "" if up else "still reads pressed: stuck key")

    def display(self, seats):
        self.say("meter display")
        test_ms = 2000
        self.t.command("display_test", {"ms": test_ms})
        on, s = self.wait(self.status, lambda s: bool(TEST_PATTERN.match(s.get("display") or "")), timeout=3.0)
        self.item("display: board drives every segment", on, "shows %r" % s.get("display"))
        if self.bench:
            shown = self.bench.display()
            self.item("display: all segments lit at the digits", bool(TEST_PATTERN.match(shown or "")),
                      "virtual display shows %r" % shown)
        else:
            seen = self.ask("are all digits showing 8. with every segment and dot lit?")
            if seen is None:
                self.skip("display: all segments lit at the digits", "needs an eye (run without --yes)")
            else:
                self.item("display: all segments lit at the digits", seen, "" if seen else "reported by the technician")
        back, s = self.wait(self.status, lambda s: not TEST_PATTERN.match(s.get("display") or ""),
                            timeout=test_ms / 1000.0 + 3)
        self.item("display: back to the table's view", back, "shows %r" % s.get("display"))

    def lamps(self, seats):
        st = self.status()
        if st["state"] != "OPEN":
            raise TablectlError("the lamp test plays a token per seat and needs the table OPEN (it is %s): "
                                 "`tablectl unlock` first" % st["state"])
        self.say("  note: a seat's lamp lights when its token is in for the round; the test plays one token per seat")
        for seat in seats:
            i = seat_index(seat)
            self.say("seat %d lamp" % seat)
            lit_before = self.status()["lamps"][i]
            if not lit_before:
                self.instruct("drop one token in seat %d now" % seat)
                if self.bench:
                    self.bench.coin(i, wait=False)
            on, s = self.wait(self.status, lambda s: s["lamps"][i])
            self.item("seat %d: board lights the lamp" % seat, on,
                      "already lit: token in this round" if lit_before else
                      ("" if on else "no token seen within %.0f s" % self.args.timeout))
            if not on:
                continue
            self.item("seat %d: coin-in inhibited after its token" % seat, s["inhibit"][i],
                      "" if s["inhibit"][i] else "acceptor still enabled (tokens per round > 1?)")
            if self.bench:
                pins = self.bench.lamps()
                self.item("seat %d: lamp output on" % seat, i < len(pins) and bool(pins[i]),
                          "virtual board's lamp pin")
            else:
                seen = self.ask("is the lamp at seat %d lit?" % seat)
                if seen is None:
                    self.skip("seat %d: lamp seen lit" % seat, "needs an eye (run without --yes)")
                else:
                    self.item("seat %d: lamp seen lit" % seat, seen, "" if seen else "bulb, LED or wiring")


def _seat_mask(i):
    return 0b111 << (i * 3)


def run(args):
    bench = None
    if args.bench:
        # The bench that moves a virtual board's pins is the developer's tools', registered as an
        # entry point (tablectl/plugins.py): a shipped tablectl has no virtual board to drive.
        from .. import plugins
        Bench = plugins.hook(plugins.BENCH_GROUP, "virtual", "`tablectl diag --bench` (it drives a virtual board)")
        bench = Bench(args.bench)
    out = None if args.json else sys.stdout
    try:
        with Target(args) as target:
            dialog = DiagDialog(args, target, bench, out)
            seats_on_table = dialog.status()["seats"]
            seats = args.seats or list(range(1, seats_on_table + 1))
            for seat in seats:
                if not 1 <= seat <= seats_on_table:
                    raise TablectlError("seat %d is not on this table: seats are 1 to %d" % (seat, seats_on_table))
            if args.test in ("keypad", "display") and args.seats:
                dialog.say("  note: the %s test is for the whole table; seats are ignored" % args.test)
            if out is not None:
                print("diag %s on board %s%s" % (args.test, target.board_id(),
                                                 " (virtual board %s, bench acts)" % args.bench if bench else ""))
            getattr(dialog, args.test)(seats)
    finally:
        if bench is not None:
            bench.close()
    counts = dialog.result.counts()
    if args.json:
        print(json.dumps({"test": args.test, "items": dialog.result.items, "summary": counts}, indent=1))
    else:
        print("%s: %d passed, %d failed, %d skipped" % ("PASS" if not counts["FAIL"] else "FAIL",
                                                       counts["PASS"], counts["FAIL"], counts["SKIP"]))
    return 1 if counts["FAIL"] else 0
