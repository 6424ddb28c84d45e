"""Many tables into one ledger: the service's group commit against a commit per table.

The floor is 200 tables with 7 seats each dropping a token every second. Here every
table is a thread that hands the ledger its batch of 7 token events and waits for the commit
(as a PortLoop does before it may acknowledge), as fast as commits come back, for a fixed
time. Two ways, measured in the same run on the same disk:
  group commit  one LedgerWriter (what `tablectl serve` uses): all waiting batches, one fsync
  per table     each table commits its own batch on its own connection (one fsync each)
SQLite WAL, synchronous=FULL. Target: >= 20,000 durable events per second.

    .venv/bin/python benchmarks/bench_ledger_tables.py [--tables 200] [--seconds 5]
"""
import argparse
import os
import tempfile
import threading
import time

from _common import ROOT, machine_note, table, write_section
from bench_ledger import coin_event

from tablectl.ledger import Ledger
from tablectl.service import LedgerWriter

TARGET = 20000
TOKENS_PER_BATCH = 7


def drive(tables, seconds, record_for_table):
    """record_for_table(i) -> a function(board, events) committing them; returns events/s."""
    stop = time.perf_counter() + seconds
    counts = [0] * tables
    errors = []

    def table_thread(i):
        board = "table-%03d" % i
        record = record_for_table(i)
        seq = 1
        try:
            while time.perf_counter() < stop:
                evs = [coin_event(board, q) for q in range(seq, seq + TOKENS_PER_BATCH)]
                last, new, dup, gap = record(board, evs)
                assert new == TOKENS_PER_BATCH and not gap, (new, gap)
                seq += TOKENS_PER_BATCH
                counts[i] += new
        except Exception as exc:  # noqa: reported below
            errors.append(repr(exc))

    t0 = time.perf_counter()
    threads = [threading.Thread(target=table_thread, args=(i,)) for i in range(tables)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter() - t0
    if errors:
        raise RuntimeError("%d table threads failed, first: %s" % (len(errors), errors[0]))
    return sum(counts) / elapsed, sum(counts)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=5.0)
    ap.add_argument("--dir", default=os.path.join(ROOT, "build"))
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    os.makedirs(a.dir, exist_ok=True)
    rows = []
    with tempfile.TemporaryDirectory(dir=a.dir) as work:
        db = os.path.join(work, "group.db")
        Ledger(db).close()
        writer = LedgerWriter(db)
        writer.start()
        rate_group, n_group = drive(a.tables, a.seconds, lambda i: writer.submit)
        commits = writer.commits
        led = Ledger(db)
        count, problems = led.verify()
        assert count == n_group and not problems, problems[:3]
        rows.append(("group commit (tablectl serve)", n_group, "%.0f" % rate_group, commits,
                     "%.1f" % (n_group / max(1, commits)), "%.2f" % (rate_group / TARGET)))

        db2 = os.path.join(work, "per_table.db")
        Ledger(db2).close()
        connections = {}

        def own_connection(i):
            connections[i] = Ledger(db2)
            return connections[i].record_events
        rate_each, n_each = drive(a.tables, a.seconds, own_connection)
        for c in connections.values():
            c.close()
        rows.append(("a commit per table (peer)", n_each, "%.0f" % rate_each, n_each // TOKENS_PER_BATCH,
                     "%d" % TOKENS_PER_BATCH, "%.2f" % (rate_each / TARGET)))
    text = table(rows, ("way", "events", "events/s", "commits", "events/commit", "vs target 20,000"))
    verdict = "met" if rate_group >= TARGET else "NOT met"
    print(text)
    print("group commit / commit per table: %.1fx; target %s (%.0f events/s)"
          % (rate_group / rate_each, verdict, rate_group))
    if not a.no_write:
        body = ("Command: `.venv/bin/python benchmarks/bench_ledger_tables.py --tables %d --seconds %g` (%s).\n"
                "%d tables, each a thread handing over 7 token events and waiting for the commit before "
                "the next (as a session must before it acknowledges), SQLite WAL, synchronous=FULL.\n\n%s\n\n"
                "Group commit is %.1fx a commit per table in this run. Target >= 20,000 events/s through "
                "the service's writer: **%s** (%.0f events/s).\n"
                % (a.tables, a.seconds, machine_note(), a.tables, text, rate_group / rate_each, verdict, rate_group))
        write_section("ledger_tables", "Many tables, one ledger: group commit", body)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
