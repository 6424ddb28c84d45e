"""`make demo-floor`: a floor of linked tables for a person to watch (docs/POOL.md).

Starts its own PostgreSQL server in a temporary folder (unix socket), creates a pool, starts
`tablectl pool serve`, three virtual boards (two Caribbean Draw, one Caribbean Stud) and their
`tablectl serve --pool`, then plays a scripted session: tokens at every table raise the one meter
(every display shows it), the pool goes away (the tables show POOL OFF and stop taking tokens)
and comes back, two royals hit at two tables at once and are paid in order, and the floor
reconciles. `tablectl pool web` runs beside it from the start: the sign's address (and the floor
page's, with a token made for the demo) is printed first, and the pages stay up after the script
until Ctrl-C (when run from a terminal). Everything it started is stopped at the end; nothing is
left behind.

    .venv/bin/python -m tabledev.demo_floor [--keep FOLDER]
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import threading
import time

from . import procs
from .floor import Floor


def say(text):
    print(text, flush=True)


def displays(floor):
    out = []
    for board, game in floor.tables:
        b = floor.bench(board)
        try:
            out.append("%s (%s): [%s]" % (board, game, b.display().strip()))
        finally:
            b.close()
    return "   ".join(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description="a scripted floor of three linked tables")
    ap.add_argument("--keep", help="work in this folder and leave it (default: a temporary folder, removed)")
    args = ap.parse_args(argv)
    folder = os.path.abspath(args.keep) if args.keep else tempfile.mkdtemp(prefix="demo-floor-")
    os.chmod(folder, 0o755)
    floor = Floor(os.path.join(folder, "floor"), lost_s=3.0)
    web = None
    try:
        say("== starting PostgreSQL in %s, the pool service and three tables" % floor.folder)
        floor.start()
        from tablectl.pool import webauth
        token = webauth.create(floor.keys, "demo")
        web, _ = procs.start(["pool", "web", "--db", floor.db_url, "--keys", floor.keys, "--listen", "127.0.0.1:0"],
                             os.path.join(floor.folder, "web.log"))
        line = web.stdout.readline()
        base = line.split()[1].rstrip("/") if line.startswith("web ") else None
        if base:
            say("the sign: %s/sign/%s   the floor page: %s/floor (token %s)" % (base, floor.pool, base, token))
        st = floor.status()
        say("pool %s: meter $%d.%02d, %d tables: %s" % (st["name"], *divmod(st["meter_cents"], 100), len(st["tables"]),
                                                       ", ".join("%s (%s)" % (t["board"], t["game"])
                                                                 for t in st["tables"])))
        time.sleep(2)
        say("\n== tokens at every table raise the one meter")
        for board, _ in floor.tables:
            b = floor.bench(board)
            b.coins({0: 1, 1: 1, 2: 1})
            b.close()
        floor.wait_tokens(9)
        time.sleep(1.0)
        say("displays: " + displays(floor))

        say("\n== the pool service stops: after 3 s the tables inhibit progressive coin-in")
        floor.stop_pool()
        time.sleep(5)
        say("displays: " + displays(floor))
        say("== the pool service is back: the tables replay their journals and play on")
        floor.start_pool()
        time.sleep(3)
        say("displays: " + displays(floor))

        say("\n== two royals declared at two tables at the same moment")
        socks = {}
        for board in ("cd-1", "stud-1"):
            b = floor.bench(board)
            b.key("lock")
            b.key("jackpot")
            b.close()
            socks[board] = floor.control(board)
        replies = {}
        go = threading.Barrier(2)

        def declare(board, seat, cards):
            go.wait()
            replies[board] = Floor.ask(socks[board], {"op": "pool_hit", "board": board, "seat": seat, "cards": cards})
        threads = [threading.Thread(target=declare, args=("cd-1", 1, "As Ks Qs Js Ts")),
                   threading.Thread(target=declare, args=("stud-1", 3, "Ah Kh Qh Jh Th"))]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        for hit in sorted((r["hit"] for r in replies.values()), key=lambda h: h["lock_no"]):
            say("hit #%d: %s seat %d royal: $%d.%02d (meter $%d.%02d -> $%d.%02d), received %.3f, locked %.3f" % (
                hit["lock_no"], hit["board"], hit["seat"] + 1, *divmod(hit["amount_cents"], 100),
                *divmod(hit["meter_before"], 100), *divmod(hit["meter_after"], 100), hit["received_at"] % 1000,
                hit["locked_at"] % 1000))
        for s in socks.values():
            s.close()
        time.sleep(1.0)
        say("displays: " + displays(floor))

        say("\n== tablectl pool status / reconcile / report")
        base = ["--db", floor.db_url, "--keys", floor.keys]
        for cmd in (["pool", "status"], ["pool", "reconcile"] + sum([["--ledger", floor.ledger(b)]
                                                                      for b, _ in floor.tables], []),
                    ["pool", "report", "--plot", os.path.join(folder, "pool-report.png")]):
            say("$ tablectl " + " ".join(cmd[:2]))
            out = subprocess.run(procs.TABLECTL + cmd + base, capture_output=True, text=True, timeout=60)
            sys.stdout.write(out.stdout + out.stderr)
        if base and sys.stdin.isatty():
            say("\n== the sign stays up at %s/sign/%s (the floor page at %s/floor): Ctrl-C stops everything"
                % (base, floor.pool, base))
            try:
                while web.poll() is None:
                    time.sleep(0.5)
            except KeyboardInterrupt:
                pass
        return 0
    finally:
        procs.stop(web)
        floor.stop()
        if not args.keep:
            shutil.rmtree(folder, ignore_errors=True)
        say("\n== stopped; %s" % ("left in %s" % folder if args.keep else "temporary folder removed"))


if __name__ == "__main__":
    sys.exit(main())
