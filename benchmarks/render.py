"""Render docs/BENCHMARKS.md and the MUTANTS block of docs/RELIABILITY.md from the records in
benchmarks/results/ (benchmarks/figures.py); a record whose measured sources changed is shown stale.

    .venv/bin/python benchmarks/render.py            # write the docs
    .venv/bin/python benchmarks/render.py --check    # exit 1 when the docs differ from the records
    .venv/bin/python benchmarks/render.py --show NAME  # one record's full text (its tables)"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import figures  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="compare only; exit 1 when a doc differs")
    ap.add_argument("--show", metavar="NAME", help="print one record's full text")
    a = ap.parse_args(argv)
    if a.show:
        if not os.path.exists(figures.path_of(a.show)):
            names = sorted(os.path.basename(p)[:-5] for p in os.listdir(figures.RESULTS) if p.endswith(".json"))
            ap.error("no record %r (one of: %s)" % (a.show, ", ".join(names)))
        print(figures.show(a.show))
        return 0
    docs = figures.render_all(write=not a.check)
    differ = []
    for path, text in docs.items():
        with open(path) as f:
            if f.read() != text:
                differ.append(os.path.relpath(path, figures.ROOT))
    if a.check and differ:
        print("differ from the records: %s (run benchmarks/render.py)" % ", ".join(differ))
        return 1
    print("%s: %s" % ("checked" if a.check else "rendered", ", ".join(os.path.relpath(p, figures.ROOT) for p in docs)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
