"""Start-up benchmark of the technician's CLI: how long `tablectl eval "As Ks Qs Js Ts"` takes to
answer, from the shell, with the C core (target: under 0.2 s, median of 10 runs), and the help of
two commands (`status --help`, `par --help`), against the bare interpreter (`python -c pass`, the
floor every command pays) measured in the same run. Writes its record, benchmarks/results/cli_start.json.

    .venv/bin/python benchmarks/bench_cli_start.py [--runs N] [--no-write]

Each command runs as its own process (the installed console script, what a technician types),
one warm-up run first so that every measured run finds the files in the page cache; runs of the
commands are interleaved, so a burst of load on the shared machine hits them all alike. Wall
time, because start-up is what the user waits for.
"""
import argparse
import os
import statistics
import subprocess
import sys
import time

from _common import machine_note, table, write_section  # noqa: E402  (puts host_tools on sys.path)

TARGET_EVAL_S = 0.2
BIN = os.path.dirname(sys.executable)
TABLECTL = os.path.join(BIN, "tablectl")
SEARCH = dict(os.environ, TABLEGAMES_FASTPOKER_SEARCH="1")
CASES = [
    # (label, argv, the first line of stdout that proves it answered, target seconds or None, env)
    ("python -c pass (the floor)", [sys.executable, "-c", "pass"], None, None, None),
    ('tablectl eval "As Ks Qs Js Ts"', [TABLECTL, "eval", "As Ks Qs Js Ts"], "royal flush", TARGET_EVAL_S, None),
    # the same with the evaluator's hash offsets searched at import, as before they were
    # precomputed (_fastpoker_offsets.h): what the header saves
    ("... offsets searched at import", [TABLECTL, "eval", "As Ks Qs Js Ts"], "royal flush", None, SEARCH),
    ("tablectl status --help", [TABLECTL, "status", "--help"], "usage: tablectl status", None, None),
    ("tablectl par --help", [TABLECTL, "par", "--help"], "usage: tablectl par", None, None),
]


def once(argv, expect, env=None):
    started = time.perf_counter()
    proc = subprocess.run(argv, capture_output=True, text=True, cwd="/", env=env)
    wall = time.perf_counter() - started
    if proc.returncode != 0 or (expect and not proc.stdout.startswith(expect)):
        raise SystemExit("%s did not answer as expected (exit %d): %s" % (
            " ".join(argv), proc.returncode, (proc.stderr or proc.stdout).strip()[:300]))
    return wall


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=10, help="measured runs per command (median reported)")
    ap.add_argument("--no-write", action="store_true", help="print only; write no record")
    args = ap.parse_args(argv)
    try:
        from tablegames.poker import _fastpoker  # noqa: F401
    except ImportError:
        raise SystemExit("bench_cli_start: the C core tablegames.poker._fastpoker is not built: the "
                         "target is with the core (run make setup)")
    times = {label: [] for label, _, _, _, _ in CASES}
    for label, cmd, expect, _, env in CASES:
        once(cmd, expect, env)  # warm-up, not counted
    for _ in range(args.runs):
        for label, cmd, expect, _, env in CASES:
            times[label].append(once(cmd, expect, env))
    floor = statistics.median(times[CASES[0][0]])
    rows = []
    for label, _, _, target, _ in CASES:
        ts = times[label]
        med = statistics.median(ts)
        rows.append((label, "%.3f" % med, "%.3f" % min(ts), "%.3f" % max(ts), "%.1f" % (med / floor),
                     "< %.1f s" % target if target else "-",
                     ("yes" if med < target else "NO") if target else "-"))
    headers = ["command", "median s", "min s", "max s", "x the floor", "target", "met"]
    load = os.getloadavg()
    body = "\n".join([
        "`.venv/bin/python benchmarks/bench_cli_start.py`: each command as its own process, %d runs "
        "interleaved after one warm-up, wall time; C core built. Load average %.2f / %.2f / %.2f at the "
        "end. %s." % (args.runs, load[0], load[1], load[2], machine_note()),
        "",
        table(rows, headers),
        "",
        "`x the floor`: the median over the bare interpreter's (`python -c pass`), measured in the same "
        "run. `tablectl eval` imports only its own command and the C evaluator, not numpy.",
    ])
    print(body)
    if not args.no_write:
        write_section("cli_start", "CLI start-up: `tablectl eval` and two commands' help (median of %d runs)"
                      % args.runs, body)
    met = statistics.median(times[CASES[1][0]]) < TARGET_EVAL_S
    return 0 if met else 1


if __name__ == "__main__":
    sys.exit(main())
