"""Measurements as records: one JSON file per benchmark under benchmarks/results/, and the docs
rendered from them (docs/BENCHMARKS.md whole; the MUTANTS block of docs/RELIABILITY.md and the
blocks of its fault campaigns).

A record says what was measured and where: the command, the commit, the date, the machine (CPU
model, cores, load average before and after), the headline figures, the goal and the verdict, and
the source files whose code the figures measure with their git blob hashes at measurement time.
A record whose sources' blobs differ from the working tree's is *stale*: the renderer marks it so
(tests/test_figures_fresh.py holds the docs to what the renderer makes), no person does.

Verdicts: "met", "not met", "no goal", or "not judged: ..." when the figure is a timing and the
machine was loaded past its cores (the load moves a timing more than any goal's margin)."""
import glob
import json
import os
import platform
import re
import subprocess
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
RESULTS = os.path.join(ROOT, "benchmarks", "results")
BENCHMARKS_DOC = os.path.join(ROOT, "docs", "BENCHMARKS.md")
RELIABILITY_DOC = os.path.join(ROOT, "docs", "RELIABILITY.md")
MUTANTS_BEGIN = "<!-- MUTANTS BEGIN (written by `make mutants`) -->"
MUTANTS_END = "<!-- MUTANTS END -->"
# The fault campaigns' records (kind "campaign") and the block of docs/RELIABILITY.md each renders:
# its text as the campaign wrote it, then what the record says of its commit, date and staleness.
CAMPAIGNS = {
    "faults": ("<!-- FIGURES BEGIN (written by `make faults`) -->", "<!-- FIGURES END -->"),
    "pool_faults": ("<!-- POOL FAULTS BEGIN (written by `make faults-pool`) -->", "<!-- POOL FAULTS END -->"),
}

VERDICTS = ("met", "not met", "no goal")  # or a text starting "not judged"


# ------------------------------------------------------------------ the machine and the code
def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def load_average():
    return [round(x, 2) for x in os.getloadavg()]


def machine(load_before=None, load_after=None):
    return {"cpu": cpu_model(), "arch": platform.machine(), "cores": os.cpu_count(),
            "python": platform.python_version(),
            "load_average": {"before": load_before or load_average(), "after": load_after or load_average()}}


def _git(*args, check=True):
    out = subprocess.run(["git"] + list(args), cwd=ROOT, capture_output=True, text=True)
    if check and out.returncode != 0:
        raise RuntimeError("git %s: %s" % (" ".join(args), out.stderr.strip()))
    return out.stdout.strip()


# What a measurement writes (its record, the rendered docs, the kept mutation runs): edits there are
# the results of runs, not changes to what runs, and do not make a commit "+changes".
RESULT_PATHS = ("benchmarks/results/", "benchmarks/mutants-kept/", "docs/")


def commit():
    """HEAD, with '+changes' when tracked files other than results have uncommitted edits (the
    blobs say which)."""
    changed = [line.split(None, 1)[1] for line in _git("status", "--porcelain", "--untracked-files=no").splitlines()]
    dirty = [path for path in changed if not path.startswith(RESULT_PATHS)]
    return _git("rev-parse", "HEAD") + ("+changes" if dirty else "")


def expand(patterns):
    """Source patterns (paths or globs, relative to the repository) as a sorted list of files."""
    files = set()
    for p in patterns:
        hits = glob.glob(os.path.join(ROOT, p))
        if not hits:
            raise FileNotFoundError("no source file matches %r" % p)
        files.update(os.path.relpath(h, ROOT) for h in hits if os.path.isfile(h))
    return sorted(files)


def blobs_now(paths):
    """The git blob hash of each file as it is in the working tree (None: the file is gone)."""
    present = [p for p in paths if os.path.isfile(os.path.join(ROOT, p))]
    hashes = _git("hash-object", "--", *present).split() if present else []
    found = dict(zip(present, hashes))
    return {p: found.get(p) for p in paths}


def blobs_at(rev, paths):
    """The blob of each file at a commit (None where the file did not exist there)."""
    out = {}
    for p in paths:
        out[p] = _git("rev-parse", "%s:%s" % (rev, p), check=False) or None
    return out


def python_code(text):
    """What of a Python file runs: its syntax tree without comments, docstrings or layout (None when
    it does not parse: such a file is compared byte for byte)."""
    import ast
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return None
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if (isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body
                and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)):
            node.body = body[1:] or [ast.Pass()]
    return ast.dump(tree, include_attributes=False)


def _same_code(path, old_blob):
    """True when a Python file differs from the blob it was measured at only in comments, docstrings or
    layout: a comment that points to a record instead of quoting it changes no figure."""
    if not path.endswith(".py") or not old_blob:
        return False
    old = subprocess.run(["git", "cat-file", "blob", old_blob], cwd=ROOT, capture_output=True)
    if old.returncode != 0:
        return False  # the measured blob is not in this clone: cannot tell, so stale
    with open(os.path.join(ROOT, path), "rb") as f:
        new = f.read()
    try:
        before, after = python_code(old.stdout.decode("utf-8")), python_code(new.decode("utf-8"))
    except UnicodeDecodeError:
        return False
    return before is not None and before == after


def changed_sources(record):
    """The measured files whose code differs now from when the record was measured (a file whose
    blob changed in its comments, docstrings or layout alone is not one)."""
    now = blobs_now(list(record["sources"]))
    return sorted(p for p, blob in record["sources"].items()
                  if now[p] != blob and not (now[p] is not None and _same_code(p, blob)))


# ------------------------------------------------------------------ records
def path_of(name):
    return os.path.join(RESULTS, name + ".json")


def save(record):
    check(record)
    os.makedirs(RESULTS, exist_ok=True)
    with open(path_of(record["name"]), "w") as f:
        json.dump(record, f, indent=1, sort_keys=True, ensure_ascii=False)
        f.write("\n")
    print("wrote %s" % os.path.relpath(path_of(record["name"]), ROOT))


def load_all():
    records = []
    for p in sorted(glob.glob(os.path.join(RESULTS, "*.json"))):
        with open(p) as f:
            records.append(json.load(f))
    return records


FIELDS = ("name", "kind", "title", "command", "commit", "date", "machine", "figures", "goal", "verdict",
          "sources", "detail")


def check(record):
    missing = [k for k in FIELDS if k not in record]
    if missing:
        raise ValueError("record %s lacks %s" % (record.get("name"), ", ".join(missing)))
    v = record["verdict"]
    if v not in VERDICTS and not v.startswith("not judged"):
        raise ValueError("record %s: verdict %r is not one of %s or 'not judged: ...'" % (record["name"], v, VERDICTS))
    if record["goal"] is None and v != "no goal":
        raise ValueError("record %s: a verdict without a goal" % record["name"])
    for f in record["figures"]:
        if set(f) - {"figure", "value"}:
            raise ValueError("record %s: a figure is {figure, value}" % record["name"])


def judge(goal, met, timing, mach):
    """The verdict of a goal: met True/False (None: the run said nothing about it); a timing figure
    on a machine loaded past its cores when the run began is not judged (the 1-minute load average
    before it; without one, after it). The load after a run that keeps every core busy is the run's
    own, so it alone says nothing of other work."""
    if goal is None:
        return "no goal"
    if met is None:
        return "not judged: the run's text gives no outcome"
    before, after = mach["load_average"]["before"], mach["load_average"]["after"]
    load = before[0] if before else (after[0] if after else None)
    if timing and load is not None and load > mach["cores"]:
        return ("not judged: load average %.1f on %d cores (measured %s)"
                % (load, mach["cores"], "within the goal" if met else "outside the goal"))
    return "met" if met else "not met"


def make(name, title, command, figures, goal, met, sources, detail, timing, kind="benchmark",
         load_before=None, notes=""):
    """A record of a run that has just ended on this checkout."""
    mach = machine(load_before=load_before)
    files = expand(sources)
    return {"name": name, "kind": kind, "title": title, "command": command, "commit": commit(),
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "machine": mach,
            "figures": [{"figure": k, "value": v} for k, v in figures],
            "goal": goal, "verdict": judge(goal, met, timing, mach), "sources": blobs_now(files),
            "detail": detail.strip() + "\n", "notes": notes}


# ------------------------------------------------------------------ rendering
def _cell(text):
    return str(text).replace("|", "\\|").replace("\n", " ")


def _short(rev):
    base, plus, rest = rev.partition("+")
    return base[:10] + plus + rest


def stale_cell(record):
    changed = changed_sources(record)
    if not changed:
        return "current"
    names = [os.path.basename(p) for p in changed]
    return "**stale**: %s changed" % ", ".join(names[:4] + (["%d more" % (len(names) - 4)] if len(names) > 4 else []))


def _figures_text(record):
    return "; ".join("%s %s" % (f["figure"], f["value"]) for f in record["figures"]) or "-"


def _verdict_cell(record, stale):
    """The verdict; a stale record's is what its run found then ('was met'), not a claim about today."""
    v = record["verdict"]
    v = "**not met**" if v == "not met" else v
    return ("was " + v) if stale and v != "no goal" else v


HEAD = """# Benchmarks

Generated by `python benchmarks/render.py` from the records in `benchmarks/results/` (one JSON file
a benchmark: command, commit, date, machine with its load average, the figures, the goal and its
verdict, and the blob of every source file the figures measure). Do not edit this page: a
benchmark's command writes its record and renders the page; tests/test_figures_fresh.py fails when
the page differs from what the records render.

- **stale**: the code of a source file the figure measures has changed since it was measured (git
  blob hashes compared at render time; a Python file whose syntax tree, docstrings left out, is the
  same is not changed: an edit of its comments alone moves no figure); the figure is history until its
  command is run again.
- **not judged**: a timing figure measured while the machine's 1-minute load average was above its
  core count; other work moved it more than the goal's margin.
- A record's full tables: `python benchmarks/render.py --show NAME`.

## Summary

"""


def render_benchmarks(records=None):
    records = [r for r in (records if records is not None else load_all()) if r["kind"] == "benchmark"]
    out = [HEAD]
    out.append("| benchmark | figure | goal | verdict | commit | date | command | stale? |")
    out.append("|---|---|---|---|---|---|---|---|")
    for r in records:
        out.append("| [%s](#%s) | %s | %s | %s | %s | %s | `%s` | %s |" % (
            r["name"], r["name"].replace("_", "-"), _cell(_figures_text(r)), _cell(r["goal"] or "-"),
            _cell(_verdict_cell(r, bool(changed_sources(r)))), _short(r["commit"]), r["date"], _cell(r["command"]),
            stale_cell(r)))
    out.append("")
    out.append("## Details")
    for r in records:
        m = r["machine"]
        la = m["load_average"]
        out.append("")
        out.append("### %s" % r["name"].replace("_", "-"))
        out.append("")
        out.append("%s. `%s` at %s, %s; %s, %s cores; load average %s before, %s after (1 / 5 / 15 min)." % (
            r["title"], r["command"], _short(r["commit"]), r["date"], m["cpu"], m["cores"],
            " / ".join("%g" % x for x in la["before"]) if la["before"] else "not recorded",
            " / ".join("%g" % x for x in la["after"]) if la["after"] else "not recorded"))
        out.append("")
        for f in r["figures"]:
            out.append("- %s: %s" % (f["figure"], f["value"]))
        out.append("- goal: %s; verdict: %s" % (r["goal"] or "none", r["verdict"]))
        files = sorted(r["sources"])
        out.append("- measures: %s%s" % (", ".join("`%s`" % p for p in files[:6]),
                                         " and %d more (the record lists them)" % (len(files) - 6) if len(files) > 6 else ""))
        if r.get("origin"):
            out.append("- record: %s" % r["origin"])
    return "\n".join(out) + "\n"


def render_mutants(records=None):
    records = [r for r in (records if records is not None else load_all()) if r["kind"] == "mutants"]
    out = [MUTANTS_BEGIN,
           "Rendered by `python benchmarks/render.py` from `benchmarks/results/mutants_*.json`, which "
           "`make mutants` writes (benchmarks/mutants.py). Score = (killed + equivalent) / mutants; goal >= 95 % a "
           "module. Stale: the code of the module or of a test file it runs changed since its run (blob hashes "
           "compared; an edit of comments or docstrings alone is not a change). "
           "Survivors and their reasons: `python benchmarks/render.py --show NAME`.",
           "",
           "| module | mutants | killed | survived (equivalent) | score | verdict | commit | date | stale? |",
           "|---|---:|---:|---:|---:|---|---|---|---|"]
    for r in records:
        f = {x["figure"]: x["value"] for x in r["figures"]}
        out.append("| %s | %s | %s | %s (%s) | %s | %s | %s | %s | %s |" % (
            _cell(r["title"]), _cell(f.get("mutants", "-")), f.get("killed", "-"), f.get("survived", "-"),
            f.get("equivalent", "-"), f.get("score", "-"), _cell(_verdict_cell(r, bool(changed_sources(r)))), _short(r["commit"]), r["date"],
            stale_cell(r)))
    out.append(MUTANTS_END)
    return "\n".join(out)


def with_mutants_block(doc_text, block):
    return with_block(doc_text, MUTANTS_BEGIN, MUTANTS_END, block)


def with_block(doc_text, begin, end, block):
    if begin not in doc_text or end not in doc_text:
        raise ValueError("docs/RELIABILITY.md has no %s ... %s markers" % (begin, end))
    head, rest = doc_text.split(begin, 1)
    return head + block + rest.split(end, 1)[1]


def render_campaign(record):
    begin, end = CAMPAIGNS[record["name"]]
    stale = bool(changed_sources(record))
    return "\n".join([begin, record["detail"].rstrip("\n"), "",
                      "Record `benchmarks/results/%s.json`: `%s` at %s, %s; goal: %s; verdict: %s; %s." % (
                          record["name"], record["command"], _short(record["commit"]), record["date"],
                          record["goal"] or "none", _verdict_cell(record, stale), stale_cell(record)),
                      end])


def restamp(record):
    """Move the record's blob of each measured file whose code is unchanged (an edit of comments,
    docstrings or layout alone) to the file's blob now; True when any moved. The stale check then
    needs no history: a clone without the old blobs would otherwise call such a figure stale."""
    paths = list(record["sources"])
    now = blobs_now(paths)
    moved = False
    for p in paths:
        if now[p] is not None and now[p] != record["sources"][p] and _same_code(p, record["sources"][p]):
            record["sources"][p] = now[p]
            moved = True
    return moved


def render_all(write=True):
    """The docs as the records make them: {path: text}; written when write (and then each record's
    blobs of files changed in comments alone are moved on first: restamp)."""
    records = load_all()
    if write:
        for r in records:
            if restamp(r):
                save(r)
    with open(RELIABILITY_DOC) as f:
        reliability = f.read()
    reliability = with_mutants_block(reliability, render_mutants(records))
    for r in records:
        if r["kind"] == "campaign":
            reliability = with_block(reliability, CAMPAIGNS[r["name"]][0], CAMPAIGNS[r["name"]][1], render_campaign(r))
    docs = {BENCHMARKS_DOC: render_benchmarks(records), RELIABILITY_DOC: reliability}
    if write:
        for path, text in docs.items():
            with open(path, "w") as f:
                f.write(text)
    return docs


def show(name):
    with open(path_of(name)) as f:
        r = json.load(f)
    text = ["# %s: %s" % (r["name"], r["title"]), "", "`%s` at %s, %s; %s" % (
        r["command"], r["commit"], r["date"], json.dumps(r["machine"])), "", r["detail"]]
    if r.get("notes"):
        text += ["", r["notes"]]
    return "\n".join(text)


def table_rows(md):
    """The rows of the markdown tables in a text, as lists of cells (header and rule rows left out)."""
    rows, previous_rule = [], False
    lines = md.splitlines()
    for i, line in enumerate(lines):
        if not line.startswith("|"):
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if all(re.fullmatch(r":?-{3,}:?", c) for c in cells):
            continue
        nxt = lines[i + 1] if i + 1 < len(lines) else ""
        if re.fullmatch(r"\|[\s:|-]+\|", nxt.strip() or "x"):
            continue  # a header row
        rows.append(cells)
    return rows
