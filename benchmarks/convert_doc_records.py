"""One-off: the figures docs/BENCHMARKS.md and the MUTANTS block of docs/RELIABILITY.md held before
records existed, turned into records under benchmarks/results/. Each record keeps the commit and
date of the commit that last wrote its block (git blame), and its sources' blobs at that commit, so
that a figure measured on code that has changed since is stale, not current."""
import os
import re
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402
from figure_specs import SPECS, command_of, headline, sources_of  # noqa: E402

ROOT = figures.ROOT


def blame_newest(path, first_line, last_line, rev):
    """(commit, date) of the newest commit among the lines first_line..last_line of path at rev."""
    out = subprocess.run(["git", "blame", "--line-porcelain", "-L", "%d,%d" % (first_line, last_line), rev, "--", path],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    best = (0, None)
    commit = None
    for line in out.splitlines():
        if re.match(r"^[0-9a-f]{40} ", line):
            commit = line.split()[0]
        elif line.startswith("committer-time "):
            t = int(line.split()[1])
            if t > best[0]:
                best = (t, commit)
    return best[1], time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(best[0]))


def legacy_machine(body):
    la = re.findall(r"load average ([\d.]+)(?: / ([\d.]+) / ([\d.]+))?", body)
    def triple(m):
        return [float(x) for x in m if x] if m else []
    cores = re.search(r"(\d+) (?:CPUs|cores)", body)
    return {"cpu": "not recorded", "arch": "x86_64", "cores": int(cores.group(1)) if cores else 2, "python": "3.11.7",
            "load_average": {"before": triple(la[0]) if la else [], "after": triple(la[-1]) if len(la) > 1 else []}}


def convert_benchmarks(rev, only=None):
    text = subprocess.run(["git", "show", "%s:docs/BENCHMARKS.md" % rev], cwd=ROOT, capture_output=True, text=True,
                          check=True).stdout
    lines = text.splitlines()
    blocks = []
    for i, line in enumerate(lines):
        m = re.match(r"<!-- bench:(\w+) begin -->", line)
        if m:
            end = next(j for j in range(i, len(lines)) if lines[j] == "<!-- bench:%s end -->" % m.group(1))
            blocks.append((m.group(1), i, end))
    for k, (name, begin, end) in enumerate(blocks):
        if only and name not in only:
            continue
        title = lines[begin + 1][3:].strip()
        body = "\n".join(lines[begin + 2:end]).strip()
        after = blocks[k + 1][1] if k + 1 < len(blocks) else len(lines)
        notes = "\n".join(lines[end + 1:after]).strip()
        commit, date = blame_newest("docs/BENCHMARKS.md", begin + 1, end + 1, rev)
        said = re.search(r"[Cc]ommit ([0-9a-f]{7,40}), (\d{4}-\d\d-\d\d \d\d:\d\d UTC)", body)
        if said:  # the text names the commit it measured: a later commit may have only annotated the block
            commit = subprocess.run(["git", "rev-parse", said.group(1)], cwd=ROOT, capture_output=True, text=True,
                                    check=True).stdout.strip()
            date = said.group(2)
        _, timing, _ = SPECS[name]
        sources = sources_of(name, body)
        figs, goal, met = headline(name, body)
        mach = legacy_machine(body)
        if goal is not None and met is None:
            verdict = "not judged: " + (re.search(r"not judged: ([^*]*?(?: on \d+ cores|$))", body, re.M).group(1).strip()
                                        if "not judged" in body else "the run did not say")
        else:
            verdict = figures.judge(goal, met, timing and bool(mach["load_average"]["before"]), mach)
        files = figures.expand(sources)
        record = {"name": name, "kind": "benchmark", "title": title, "command": command_of(name, body),
                  "commit": commit, "date": date, "machine": mach,
                  "figures": [{"figure": a, "value": b} for a, b in figs], "goal": goal, "verdict": verdict,
                  "sources": figures.blobs_at(commit, files), "detail": body + "\n", "notes": notes,
                  "origin": "converted from docs/BENCHMARKS.md (%s); commit: the one its text names, else the "
                            "newest that wrote its block; machine details as that text gave them" % rev}
        figures.save(record)


def convert_mutants(rev):
    import mutants
    doc = subprocess.run(["git", "show", "%s:docs/RELIABILITY.md" % rev], cwd=ROOT, capture_output=True, text=True,
                         check=True).stdout
    block = doc.split(figures.MUTANTS_BEGIN, 1)[1].split(figures.MUTANTS_END, 1)[0]
    kept = mutants.load_results()
    for name in list(mutants.HOST) + list(mutants.FIRMWARE):
        if name in kept:
            figures.save(mutants.record_of(name, kept[name]))
            continue
        row = next((l for l in block.splitlines() if l.startswith("| %s (`" % name)), None)
        if row is None:
            continue
        cells = [c.strip() for c in row.strip("|").split("|")]
        rel = re.search(r"`([^`]+)`", cells[0]).group(1)
        m = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d UTC), ([0-9a-f]+)", cells[2])
        date, short = m.group(1), m.group(2)
        full = subprocess.run(["git", "rev-parse", short], cwd=ROOT, capture_output=True, text=True).stdout.strip()
        killed, timeouts = re.match(r"(\d+) \((\d+)\)", cells[4]).groups()
        score = cells[8]
        tests = next((l for l in block.splitlines() if l.startswith("- %s: `" % name)), "")
        survivors = []
        lines = block.splitlines()
        for i, l in enumerate(lines):
            if l.startswith("Survivors in `") and l.endswith("(%s):" % name):
                survivors = [x for x in lines[i + 2:] if x.startswith("- line ")]
        paths = [rel] + re.findall(r"`(tests/[^`:]+)", tests)
        record = {"name": "mutants_" + mutants._slug(name), "kind": "mutants", "title": "%s (`%s`)" % (name, rel),
                  "command": "make mutants ONLY=%s" % name, "commit": full or short, "date": date,
                  "machine": {"cpu": "not recorded", "arch": "x86_64", "cores": 2, "python": "3.11.7",
                              "load_average": {"before": [], "after": []}},
                  "figures": [{"figure": "mutants", "value": cells[3]}, {"figure": "killed", "value": int(killed)},
                              {"figure": "of them time limit", "value": int(timeouts)},
                              {"figure": "survived", "value": int(cells[5])},
                              {"figure": "equivalent", "value": int(cells[6])},
                              {"figure": "not built", "value": int(cells[7])}, {"figure": "score", "value": score}],
                  "goal": "score >= 95 %", "verdict": "met" if cells[9] == "met" else "not met",
                  "sources": figures.blobs_at(full or short, paths),
                  "detail": "Tool: %s. Tests run against each mutant: %s\n\nSurvivors:\n\n%s\n" % (
                      cells[1], tests[len("- %s: " % name):], "\n".join(survivors) or "(none listed)"),
                  "notes": "",
                  "origin": "converted from docs/RELIABILITY.md: a run from before its results were kept in "
                            "benchmarks/mutants-kept (carried in the doc since)"}
        figures.save(record)


if __name__ == "__main__":
    # convert_doc_records.py REV [NAME ...]: the blocks of docs/BENCHMARKS.md at REV (only the NAMEs
    # given), and with no NAME the MUTANTS block too. REV is a commit from before the docs were rendered.
    rev = sys.argv[1] if len(sys.argv) > 1 else "HEAD"
    convert_benchmarks(rev, set(sys.argv[2:]))
    if not sys.argv[2:]:
        convert_mutants(rev)
