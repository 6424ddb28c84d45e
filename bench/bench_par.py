"""Benchmark: the time of each game's full PAR enumeration (issue 7).

    .venv/bin/python bench/bench_par.py [--markdown] [--no-write] [GAME ...]

Prints, per game and pay table, the wall time of the complete enumeration, the number of
deals it weighed and the house edge, against the issue's targets (Caribbean Stud and
Colorado Hold'em under 60 s, every other game under 10 minutes). Each game runs in a fresh
process so that no cache from an earlier game helps it. The table goes into docs/BENCHMARKS.md
(section par) unless --no-write; it names the games that ran.
"""
import argparse
import json
import os
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TARGETS = {"caribbean-stud": 60, "colorado-holdem": 60}
DEFAULT_TARGET = 600
RUNS = [
    ("three-card-poker", "1-4-6-30-40"),
    ("progressive", "seed000-10pct"),
    ("caribbean-stud", "us-common"),
    ("caribbean-stud", "seed002-european"),
    ("colorado-holdem", "required"),
    ("colorado-holdem", "permissible"),
    ("california-draw", "action-75"),
    ("clear-bet", "seed004"),
    ("clear-bet", "seed004-buy-then-pass"),
    ("caribbean-draw", "seed000"),
]

CHILD = """
import json, sys, time
sys.path.insert(0, %r)
t0 = time.perf_counter()
from tablectl.par import games, kernel
kernel.kernel()
t1 = time.perf_counter()
sheets = games.build(%r, %r, progress=False)
t2 = time.perf_counter()
print(json.dumps({"tables_s": t1 - t0, "enumerate_s": t2 - t1,
                  "sheets": [[s.title, s.total, float(s.house_edge)] for s in sheets]}))
"""


def run_one(game, paytable):
    code = CHILD % (os.path.join(ROOT, "host_tools"), game, paytable)
    started = time.perf_counter()
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    wall = time.perf_counter() - started
    if out.returncode != 0:
        return {"game": game, "paytable": paytable, "error": out.stderr.strip().splitlines()[-1:]}
    res = json.loads(out.stdout.strip().splitlines()[-1])
    res.update(game=game, paytable=paytable, wall_s=wall)
    return res


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("games", nargs="*", help="only these games")
    ap.add_argument("--markdown", action="store_true", help="print the table for docs/BENCHMARKS.md")
    ap.add_argument("--no-write", action="store_true", help="do not write the table into docs/BENCHMARKS.md")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    from_games = set(args.games)
    rows = []
    for game, paytable in RUNS:
        if from_games and game not in from_games:
            continue
        r = run_one(game, paytable)
        rows.append(r)
        target = TARGETS.get(game, DEFAULT_TARGET)
        if "error" in r:
            print("%-18s %-18s FAILED %s" % (game, paytable, r["error"]), flush=True)
            continue
        verdict = "met" if r["wall_s"] < target else "NOT MET"
        print("%-18s %-18s %8.2f s (tables %.2f s)  target < %d s: %s" % (
            game, paytable, r["wall_s"], r["tables_s"], target, verdict), flush=True)
        for title, total, edge in r["sheets"]:
            print("    %-62s %26s deals  house edge %8.4f %%" % (title[:62], "{:,}".format(total), 100 * edge))
    lines = ["| game | pay table | wall time (s) | target | met | deals enumerated | house edge |",
             "| --- | --- | ---: | --- | --- | ---: | ---: |"]
    for r in rows:
        if "error" in r:
            lines.append("| %s | %s | FAILED | | | | %s |" % (r["game"], r["paytable"], " ".join(r["error"])[:80]))
            continue
        target = TARGETS.get(r["game"], DEFAULT_TARGET)
        title, total, edge = r["sheets"][0]
        lines.append("| %s | %s | %.1f | < %d s | %s | %s | %.4f %% |" % (
            r["game"], r["paytable"], r["wall_s"], target, "yes" if r["wall_s"] < target else "**NO**",
            "{:,}".format(total), 100 * edge))
    if args.markdown:
        print()
        print("\n".join(lines))
    if not args.no_write:
        from _common import machine_note, write_section
        load_after = os.getloadavg()
        body = ("Command: `.venv/bin/python bench/bench_par.py%s` (%s; load average %.1f before, %.1f after: "
                "other jobs shared the machine when these are above 0). Wall time of each game's complete "
                "enumeration, each in a fresh process (rank tables included); targets: Caribbean Stud and "
                "Colorado Hold'em under 60 s, every other game under 10 minutes.\n\n"
                % ("".join(" " + g for g in args.games), machine_note(), load_before[0], load_after[0])
                + "\n".join(lines) + "\n")
        write_section("par", "PAR sheets (issue 7)", body)
    return 0 if all("error" not in r and r["wall_s"] < TARGETS.get(r["game"], DEFAULT_TARGET) for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
