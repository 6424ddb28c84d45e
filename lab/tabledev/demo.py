"""`make demo`: a virtual board and the host play a scripted bench session, with a transcript.

Everything here is the real thing: the firmware runs on the MicroPython interpreter behind a
pseudo-terminal, `tablectl serve` keeps the ledger in SQLite, and every step is a tablectl
command a technician could type. The demo ends by itself and leaves no process behind.
"""
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time

from . import procs
from tablegames.progressive import hand_name, parse_hand, qualifies

RANKS = "23456789TJQKA"
SUITS = "cdhs"

TABLECTL = procs.TABLECTL
SHOE_SEED = 20261123


def say(text):
    print("\n== %s" % text, flush=True)



def shell_word(arg):
    """An argument as the reader would type it into a shell: `--cards 'As Ks Qs Js Ts'` (five
    words unquoted would be five arguments); $DEMO stays unquoted so the shell expands it."""
    if re.fullmatch(r"[\w@%+=:,./$-]+", arg):
        return arg
    import shlex
    return shlex.quote(arg)

class Demo:
    def __init__(self, work):
        self.work = work
        self.state = os.path.join(work, "board")
        self.db = os.path.join(work, "ledger.db")
        self.procs = []

    def start(self, args, name):
        proc, _ = procs.start(args, os.path.join(self.work, name + ".log"))
        self.procs.append(proc)
        return proc

    def tablectl(self, *args, show=True, check=True):
        cmd = ["tablectl"] + [a.replace(self.work, "$DEMO") for a in args]
        if show:
            print("$ " + " ".join(shell_word(a) for a in cmd), flush=True)
        proc = subprocess.run(TABLECTL + list(args), capture_output=True, text=True)
        out = (proc.stdout + proc.stderr).rstrip()
        if show and out:
            print("  " + out.replace("\n", "\n  "), flush=True)
        if check and proc.returncode != 0:
            raise SystemExit("demo step failed: %s" % " ".join(cmd))
        return out

    def bench(self, *args, show=True):
        return self.tablectl("bench", "--state", self.state, *args, show=show)

    def stop(self):
        for proc in reversed(self.procs):
            procs.stop(proc)

    def run(self):
        say("A virtual board: the real firmware on MicroPython, its serial port a pseudo-terminal")
        sim = self.start(["sim", "--state", self.state, "--seats", "7"], "sim")
        port = sim.stdout.readline().split()[1]
        print("$ tablectl sim --state $DEMO/board --seats 7\n  port %s" % port, flush=True)
        say("The host service keeps the books in SQLite (WAL, hash-chained)")
        serve = self.start(["serve", "--port", port, "--db", self.db], "serve")
        print("$ tablectl serve --port %s --db $DEMO/ledger.db\n  %s" % (port, serve.stdout.readline().strip()),
              flush=True)
        time.sleep(0.5)
        self.tablectl("status", "--db", self.db)

        say("Provision the table key (technician turns the service key switch on)")
        self.bench("switch", "on", show=False)
        print("$ tablectl bench --state $DEMO/board switch on")
        self.tablectl("provision", "--db", self.db)
        self.bench("switch", "off", show=False)

        say("Seven seats drop a progressive token each: the meter climbs")
        for seat in range(1, 8):
            out = self.bench("coin", str(seat), show=False)
            display = [l for l in out.splitlines() if l.startswith("display")][0]
            print("  seat %d token in -> meter display %s" % (seat, display.split(": ", 1)[1]), flush=True)
        self.bench("lamps")

        say("The dealer locks coin-in before the deal; a late token is refused")
        self.bench("key", "lock")
        self.bench("coin", "3")
        self.bench("inhibit")
        time.sleep(0.3)
        self.tablectl("events", "--db", self.db, "--kind", "late_coin", "--last", "1")

        say("A round from a seeded virtual shoe (seed %d; the bench's test deck puts a royal at seat 4)" % SHOE_SEED)
        hands = deal_round(SHOE_SEED, seats=7, royal_seat=4)
        for seat in range(1, 8):
            cards = parse_hand(" ".join(hands[seat]))
            verdict = "progressive hand" if qualifies(cards) else "no progressive award"
            print("  seat %d  %s  %-16s %s" % (seat, " ".join(hands[seat]), hand_name(cards), verdict), flush=True)
        winners = [s for s in hands if qualifies(parse_hand(" ".join(hands[s])))]

        say("The dealer presses the jackpot key; the host verifies the hands and pays, authenticated")
        self.bench("key", "jackpot")
        args = ["jackpot", "--db", self.db]
        for s in winners:
            args += ["--seat", str(s), "--cards", " ".join(hands[s])]
        self.tablectl(*args)
        self.bench("display")
        self.tablectl("meters", "--db", self.db)

        say("The dealer clears the lockout for the next round")
        self.bench("key", "unlock")
        self.bench("lamps")

        say("The ledger: every increment, the late coin, the award, the meter reset")
        time.sleep(0.5)
        self.tablectl("events", "--db", self.db, "--kind", "coin", "--kind", "late_coin", "--kind", "award",
                      "--last", "20")
        self.tablectl("reconcile", "--db", self.db)
        self.tablectl("audit", "verify", "--db", self.db)
        say("Demo complete: board and service stopped, nothing left running")


def deal_round(seed, seats, royal_seat=None):
    """Five cards to each seat from a shuffled 52-card shoe; optionally stack a royal flush."""
    deck = [r + s for s in SUITS for r in RANKS]
    random.Random(seed).shuffle(deck)
    if royal_seat is not None:
        royal = ["As", "Ks", "Qs", "Js", "Ts"]
        rest = [c for c in deck if c not in royal]
        deck = rest[:(royal_seat - 1) * 5] + royal + rest[(royal_seat - 1) * 5:]
    return {seat: deck[(seat - 1) * 5: seat * 5] for seat in range(1, seats + 1)}


def main():
    work = tempfile.mkdtemp(prefix="tablectl-demo-")
    demo = Demo(work)
    try:
        demo.run()
    finally:
        demo.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
