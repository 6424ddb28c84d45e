"""Figures are records, and a figure whose code changed is shown stale by this check, not by a person.

Every measurement is a record under benchmarks/results/ (command, commit, date, machine, figures,
goal, verdict, and the git blob of each source file the figures measure). docs/BENCHMARKS.md and the
MUTANTS block of docs/RELIABILITY.md are rendered from the records (benchmarks/render.py): a doc that
differs from what the records render fails here, and so does a summary row that calls a figure
current while a file it measures has changed since (or stale while none has). When this fails after
a code change: rerun the benchmark (its command is in the row) or run `benchmarks/render.py` to mark
the figure stale."""
import json
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
sys.path.insert(0, os.path.join(ROOT, "benchmarks"))
import figures  # noqa: E402


def records():
    out = []
    for name in sorted(os.listdir(RESULTS)):
        if name.endswith(".json"):
            with open(os.path.join(RESULTS, name)) as f:
                out.append(json.load(f))
    return out


def blob_of(rel):
    """The file's git blob as it is in the working tree; None when it is gone (computed here, apart from
    the renderer's own code, so that the two must agree)."""
    path = os.path.join(ROOT, rel)
    if not os.path.isfile(path):
        return None
    return subprocess.run(["git", "hash-object", path], capture_output=True, text=True, check=True).stdout.strip()


def _code_of(text):
    """The program a Python text holds, docstrings left out, written back out by ast.unparse: two texts
    that differ only in comments, docstrings or layout give the same."""
    import ast
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and \
                ast.get_docstring(node, clean=False) is not None:
            node.body = node.body[1:] or [ast.Pass()]
    return ast.unparse(tree)


def code_changed(rel, blob):
    """Whether the file's code (not its comments or docstrings) differs from the measured blob."""
    now = blob_of(rel)
    if now == blob:
        return False
    if now is None or not rel.endswith(".py"):
        return True
    old = subprocess.run(["git", "cat-file", "blob", blob], cwd=ROOT, capture_output=True, text=True)
    if old.returncode != 0:
        return True
    with open(os.path.join(ROOT, rel)) as f:
        return _code_of(old.stdout) != _code_of(f.read())


def summary_rows():
    """{record name: its summary row's cells}, from the docs as they are on disk."""
    rows = {}
    with open(os.path.join(ROOT, "docs", "BENCHMARKS.md")) as f:
        for line in f:
            m = re.match(r"\| \[(\w+)\]\(#[\w-]+\) \|", line)
            if m:
                rows[m.group(1)] = [c.strip() for c in line.strip().strip("|").split(" | ")]
    with open(os.path.join(ROOT, "docs", "RELIABILITY.md")) as f:
        reliability = f.read()
    # a fault campaign's block ends with its record's line, the stale cell its last clause
    for name, (begin, end) in figures.CAMPAIGNS.items():
        if begin in reliability:
            for line in reliability.split(begin, 1)[1].split(end, 1)[0].splitlines():
                if line.startswith("Record `benchmarks/results/%s.json`" % name):
                    rows[name] = [line.rsplit("; ", 1)[1].rstrip(".")]
    block = reliability.split(figures.MUTANTS_BEGIN, 1)[1].split(figures.MUTANTS_END, 1)[0]
    by_title = {r["title"]: r["name"] for r in records() if r["kind"] == "mutants"}
    for line in block.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
        if line.startswith("| ") and cells[0] in by_title:
            rows[by_title[cells[0]]] = cells
    return rows


RECORDS = records()


def test_there_are_records_of_benchmarks_and_of_mutation_runs():
    kinds = {r["kind"] for r in RECORDS}
    assert {"benchmark", "mutants"} <= kinds


@pytest.mark.parametrize("record", RECORDS, ids=[r["name"] for r in RECORDS])
def test_a_record_says_what_where_when_and_which_code(record):
    figures.check(record)
    assert record["command"] and record["commit"] and re.match(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", record["date"])
    assert record["sources"], "a record names the files its figures measure"
    assert os.path.basename(figures.path_of(record["name"])) in os.listdir(RESULTS)
    assert {"cpu", "cores", "load_average"} <= set(record["machine"])


@pytest.mark.parametrize("record", RECORDS, ids=[r["name"] for r in RECORDS])
def test_the_summary_marks_a_record_stale_exactly_when_its_measured_code_changed(record):
    changed = sorted(p for p, blob in record["sources"].items() if code_changed(p, blob))
    row = summary_rows().get(record["name"])
    assert row is not None, "%s has no row in the rendered summary" % record["name"]
    stale_cell = row[-1]
    if changed:
        assert stale_cell.startswith("**stale**"), "%s: %s changed since it was measured, the summary says %r" % (
            record["name"], ", ".join(changed), stale_cell)
        assert os.path.basename(changed[0]) in stale_cell
    else:
        assert stale_cell == "current", "%s: no measured file changed, the summary says %r" % (record["name"], stale_cell)


def test_the_docs_are_what_the_records_render():
    for path, text in figures.render_all(write=False).items():
        with open(path) as f:
            on_disk = f.read()
        assert on_disk == text, "%s differs from what benchmarks/results/ renders: run benchmarks/render.py" % (
            os.path.relpath(path, ROOT))


def test_a_changed_blob_turns_a_current_record_stale():
    rel = "benchmarks/figures.py"
    record = {"sources": {rel: blob_of(rel)}}
    assert figures.stale_cell(record) == "current"
    record["sources"][rel] = "0" * 40
    assert figures.stale_cell(record) == "**stale**: figures.py changed"
    record["sources"] = {"benchmarks/no_such_file.py": "0" * 40}
    assert figures.stale_cell(record).startswith("**stale**: no_such_file.py")


def test_a_comment_or_docstring_edit_leaves_a_figure_current_and_a_code_edit_makes_it_stale(tmp_path):
    """Staleness is about the code a figure measured: the file as it was at the record's blob, with a
    comment and a docstring rewritten, is the same code; with one constant changed it is not."""
    rel = "benchmarks/figures.py"
    with open(os.path.join(ROOT, rel)) as f:
        text = f.read()
    same = text.replace('"""What of a Python file runs', '"""Rewritten: what of a Python file runs', 1)
    same = same.replace("# What a measurement writes", "# Rewritten: what a measurement writes", 1)
    assert same != text
    assert figures.python_code(same) == figures.python_code(text)
    other = text.replace('RESULT_PATHS = ("benchmarks/results/"', 'RESULT_PATHS = ("benchmarks/result/"', 1)
    assert other != text and figures.python_code(other) != figures.python_code(text)
    # and through the blobs: the working tree's file against a blob of its rewritten text
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=ROOT, input=same, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert figures.stale_cell({"sources": {rel: blob}}) == "current"
    blob = subprocess.run(["git", "hash-object", "-w", "--stdin"], cwd=ROOT, input=other, capture_output=True,
                          text=True, check=True).stdout.strip()
    assert figures.stale_cell({"sources": {rel: blob}}) == "**stale**: figures.py changed"


def test_no_record_holds_a_blob_whose_code_is_the_files_now():
    """render.py moves such a record's blob on (restamp), so that a clone without the old blob, as a
    shallow one is, sees the figure current as this one does."""
    kept = []
    for r in RECORDS:
        for rel, blob in r["sources"].items():
            if blob_of(rel) not in (None, blob) and not code_changed(rel, blob):
                kept.append("%s: %s" % (r["name"], rel))
    assert not kept, "run benchmarks/render.py: " + "; ".join(kept)


def test_a_timing_measured_on_a_loaded_machine_is_not_judged():
    quiet = {"cores": 2, "load_average": {"before": [0.5, 0.5, 0.5], "after": [1.2, 0.6, 0.5]}}
    loaded = {"cores": 2, "load_average": {"before": [6.0, 3.0, 1.0], "after": [6.5, 3.2, 1.1]}}
    # a run that keeps both cores busy leaves a high load after it: its own, not other work's
    own_load = {"cores": 2, "load_average": {"before": [0.4, 0.5, 0.5], "after": [4.6, 3.1, 2.5]}}
    assert figures.judge("under 50 ms", True, True, quiet) == "met"
    assert figures.judge("under 50 ms", False, True, quiet) == "not met"
    assert figures.judge("under 50 ms", True, True, loaded).startswith("not judged: load average 6.0 on 2 cores")
    assert figures.judge("under 50 ms", True, True, own_load) == "met"
    assert figures.judge("under 50 ms", True, True, {"cores": 2, "load_average": {"before": [], "after": [6.0]}}
                         ).startswith("not judged: load average 6.0")  # no load before: the one after counts
    assert figures.judge("0 miscounts", False, False, loaded) == "not met"  # a count does not move with load
    assert figures.judge(None, None, True, quiet) == "no goal"


def test_a_record_without_its_fields_or_with_an_unknown_verdict_is_refused():
    good = dict(RECORDS[0])
    with pytest.raises(ValueError, match="lacks sources"):
        figures.check({k: v for k, v in good.items() if k != "sources"})
    with pytest.raises(ValueError, match="verdict"):
        figures.check(dict(good, verdict="fine"))


def test_every_benchmark_command_writes_a_record_the_specs_know():
    """A command's write_section name has its sources, timing flag and headline reading (figure_specs.py):
    without them its record could not say which code it measured."""
    from figure_specs import SPECS
    names = set()
    bench = os.path.join(ROOT, "benchmarks")
    for name in os.listdir(bench):
        if name.endswith(".py"):
            with open(os.path.join(bench, name)) as f:
                names.update(re.findall(r'write_section\(\s*"(\w+)"', f.read()))
    assert len(names) > 20
    assert sorted(names - set(SPECS)) == []
