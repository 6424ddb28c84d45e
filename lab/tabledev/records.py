"""A fault campaign's result as a record (benchmarks/figures.py: command, commit, date, machine, the
source files it exercised with their blobs), and docs/RELIABILITY.md's block of it rendered from the
record, so that a campaign run on code that has changed since is marked stale like any benchmark.
From a checkout only: an installed tabledev has no benchmarks/ to keep records in."""
import os
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BENCHMARKS = os.path.join(ROOT, "benchmarks")

FIRMWARE_TABLE = ["firmware/table/*.py"]
HOST_BOOKS = ["host_tools/tablectl/ledger.py", "host_tools/tablectl/service.py", "host_tools/tablectl/link.py"]
POOL = ["host_tools/tablectl/pool/server.py", "host_tools/tablectl/pool/store.py",
        "host_tools/tablectl/pool/engine.py", "host_tools/tablectl/pool/client.py", "host_tools/tablectl/pool/tls.py"]


def save_campaign(name, title, command, figures, goal, met, sources, detail):
    """Write benchmarks/results/NAME.json (kind "campaign") and render the docs from the records."""
    if not os.path.isdir(BENCHMARKS):
        print("no benchmarks/ folder beside this tabledev: the campaign's record is not kept")
        return None
    if BENCHMARKS not in sys.path:
        sys.path.insert(0, BENCHMARKS)
    import figures as records
    record = records.make(name, title, command, figures, goal, met, sources, detail, timing=False, kind="campaign")
    records.save(record)
    records.render_all()
    print("rendered docs/RELIABILITY.md: %s %s" % (name, record["verdict"]))
    return record
