"""`make coverage`: branch coverage of the money paths, written into docs/BENCHMARKS.md.

    .venv/bin/python benchmarks/coverage_money.py [--no-write]

Host: the host's money modules (ledger, reconcile, service, link, awards, progressive awards) under
coverage.py with branch coverage, while their tests run, the services and CLIs those tests start
as subprocesses included (coverage's subprocess patch).
Firmware: firmware/table/ under coverage.py while the MicroPython test modules
(tests/firmware/mp_test_*.py) run on CPython: MicroPython's unix build has no sys.settrace, and
the tests use only the subset both interpreters run, so the same tests drive the same code.
"""
import argparse
import glob
import json
import os
import subprocess
import sys
import time

from _common import ROOT, machine_note, table, write_section

OUT = os.path.join(ROOT, "build", "coverage")
HOST_FILES = (["host_tools/tablectl/%s.py" % m for m in ("ledger", "reconcile", "service", "link", "awards")]
              + ["host_tools/tablegames/progressive.py"])
HOST_TESTS = ["tests/host/test_books.py", "tests/host/test_unit_awards.py", "tests/host/test_progressive_awards.py", "tests/host/test_report.py",
              "tests/host/test_unit_ledger.py", "tests/host/test_ledger_api.py", "tests/host/test_unit_service.py", "tests/host/test_unit_link.py",
              "tests/host/test_unit_reconcile.py", "tests/host/test_unit_client.py",
              "tests/protocol/test_link_versions.py", "tests/e2e/test_two_tables.py",
              "tests/e2e/test_service_kill.py", "tests/e2e/test_progressive_options.py", "tests/e2e/test_cli_e2e.py"]
FW_GLOB = "firmware/table/*.py"


def _rc(path, include, data):
    with open(path, "w") as f:
        f.write("[run]\nbranch = True\nparallel = True\npatch = subprocess\ndata_file = %s\nrelative_files = True\n"
                "include =\n%s\n" % (data, "\n".join("    " + os.path.join(ROOT, i) for i in include)))


def _coverage(*args, rc, cwd=ROOT, env=None, check=True):
    cmd = [sys.executable, "-m", "coverage"] + list(args) + ["--rcfile", rc]
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True)
    if check and proc.returncode != 0:
        raise SystemExit("coverage %s failed:\n%s\n%s" % (args[0], proc.stdout[-3000:], proc.stderr[-3000:]))
    return proc


def measure(name, include, runs):
    """runs: [(argv after `coverage run`, cwd, extra env)]. Returns coverage's JSON report."""
    os.makedirs(OUT, exist_ok=True)
    data = os.path.join(OUT, name + ".data")
    for old in glob.glob(data + "*"):
        os.remove(old)
    rc = os.path.join(OUT, name + ".rc")
    _rc(rc, include, data)
    failures = []
    for argv, cwd, extra in runs:
        env = dict(os.environ, **extra)
        proc = subprocess.run([sys.executable, "-m", "coverage", "run", "--rcfile", rc] + argv, cwd=cwd, env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            # the firmware runner prints "FAIL name ..." per failed test; pytest "FAILED ..."
            failed = [l.split()[1] if l.startswith("FAIL ") else l for l in proc.stdout.splitlines()
                      if l.startswith(("FAIL ", "FAILED "))]
            failures.append("%s: %s" % (" ".join(argv), ", ".join(failed) or "exit %d" % proc.returncode))
    _coverage("combine", rc=rc)
    js = os.path.join(OUT, name + ".json")
    _coverage("json", "-o", js, rc=rc)
    with open(js) as f:
        return json.load(f), failures


def rows_of(report):
    rows = []
    for path, f in sorted(report["files"].items()):
        s = f["summary"]
        rel = os.path.relpath(os.path.join(ROOT, path), ROOT) if not os.path.isabs(path) else os.path.relpath(path, ROOT)
        branches, partial, missing_b = s["num_branches"], s["num_partial_branches"], s["missing_branches"]
        covered_b = s["covered_branches"]
        missing_lines = _ranges(f["missing_lines"])
        rows.append((rel, s["num_statements"], s["missing_lines"], branches, covered_b, partial,
                     "%.1f %%" % (100.0 * covered_b / branches) if branches else "-",
                     "%.1f %%" % s["percent_covered"], missing_lines or "-"))
    return rows


def _ranges(lines):
    out = []
    for n in sorted(lines):
        if out and n == out[-1][1] + 1:
            out[-1][1] = n
        else:
            out.append([n, n])
    text = ", ".join(str(a) if a == b else "%d-%d" % (a, b) for a, b in out)
    return text if len(text) < 160 else text[:157] + "..."


def totals(report):
    t = report["totals"]
    return t["covered_branches"], t["num_branches"]


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args(argv)
    t0 = time.monotonic()
    # test_monitor_live_leaves_on_ctrl_c sends SIGINT 1.5 s after start: under coverage on a busy
    # machine the monitor may not have started by then. It covers no money module.
    host, host_fail = measure("host", HOST_FILES, [(["-m", "pytest", "-q", "-p", "no:cacheprovider", "-k",
                                                      "not test_monitor_live_leaves_on_ctrl_c"] + HOST_TESTS,
                                                     ROOT, {})])
    fw_dir = os.path.join(ROOT, "tests", "firmware")
    fw_env = {"PYTHONPATH": os.path.join(ROOT, "firmware") + os.pathsep + fw_dir}
    fw_runs = [([os.path.basename(p)], fw_dir, fw_env) for p in sorted(glob.glob(os.path.join(fw_dir, "mp_test_*.py")))]
    fw, fw_fail = measure("firmware", [FW_GLOB], fw_runs)
    headers = ("file", "statements", "missed", "branches", "branches taken", "partial", "branch coverage",
               "line+branch", "lines not run")
    hb, hn = totals(host)
    fb, fn = totals(fw)
    text = table(rows_of(host), headers)
    text2 = table(rows_of(fw), headers)
    print(text)
    print(text2)
    fails = host_fail + fw_fail
    body = ("Command: `make coverage` (`.venv/bin/python benchmarks/coverage_money.py`, coverage.py 7.17.3 with branch "
            "coverage; %s), %.0f s.\n\n" % (machine_note(), time.monotonic() - t0)
            + "Host money modules, while %s run (the services and CLIs they start included):\n\n" % ", ".join(
                "`%s`" % os.path.basename(t) for t in HOST_TESTS)
            + text + "\n\nBranches taken, host: %d of %d (%.1f %%).\n\n" % (hb, hn, 100.0 * hb / hn if hn else 0)
            + "firmware/table/, while every tests/firmware/mp_test_*.py runs on CPython (MicroPython's unix build has "
              "no sys.settrace; the tests are written in the subset both interpreters run and pass on both):\n\n"
            + text2 + "\n\nBranches taken, firmware/table/: %d of %d (%.1f %%). Goal: 100 %% of the branches on the "
              "money paths, or a reason per line; the 'lines not run' column is the list still to be tested or "
              "explained.\n" % (fb, fn, 100.0 * fb / fn if fn else 0))
    if fails:
        body += ("\nTests that failed during the measurement (what they would have run is missing from the "
                 "figures above; a test that asserts it runs on MicroPython fails on CPython by design):\n\n"
                 + "\n".join("- " + f for f in fails) + "\n")
        print("\n".join(fails), file=sys.stderr)
    if not a.no_write:
        write_section("coverage", "Branch coverage of the money paths", body)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
