"""The cost of the tables' health reports to the pool (pool/health.py; docs/POOL.md, "What only the
table knows"): N tables (default 200), each with its own credential and mutual-TLS connection, send
health reports to one `tablectl pool serve` (its own PostgreSQL in a temporary folder) as fast as
T threads (default 20) can, for S seconds.

Measured: reports recorded per second, and the latency of one report (request to reply, the first
TLS handshake of each table included) at p50 and p99. What the floor needs: N tables reporting
every --pool-lost-s / 3 (10 s by default): 200 tables send 60 reports/s.

    .venv/bin/python benchmarks/bench_pool_health.py [--tables 200] [--threads 20] [--seconds 10]
"""
import argparse
import os
import shutil
import sys
import tempfile
import threading
import time

from _common import ROOT, machine_note, table, write_section

sys.path.insert(0, os.path.join(ROOT, "host_tools"))

from tablectl.pool.client import PoolClient  # noqa: E402
from tablectl.pool.tls import issue_table_credential  # noqa: E402
from tabledev.floor import Floor  # noqa: E402


def run(tables, threads, seconds):
    folder = tempfile.mkdtemp(prefix="bench-pool-health-")
    os.chmod(folder, 0o755)  # PostgreSQL runs as its own user under it
    members = [("h%03d" % i, "caribbean_draw") for i in range(tables)]
    floor = Floor(folder, tables=(), members=members)
    floor.start()
    try:
        clients = [PoolClient("unix:" + floor.sock,
                              issue_table_credential(floor.keys, b, os.path.join(folder, "cred-" + b)), 30)
                   for b, _ in members]
        latencies, errors = [], []
        stop_at = time.monotonic() + seconds

        def worker(k):
            i = k
            while time.monotonic() < stop_at:
                board = members[i % tables][0]
                t0 = time.perf_counter()
                try:
                    clients[i % tables].request("health", board=board, state="OPEN", pool_off=False,
                                                storage_fault=False, refused_frames=i, closing=False)
                    latencies.append(time.perf_counter() - t0)
                except Exception as exc:  # noqa: counted and shown
                    errors.append(str(exc))
                i += threads
        workers = [threading.Thread(target=worker, args=(k,)) for k in range(threads)]
        began = time.monotonic()
        for w in workers:
            w.start()
        for w in workers:
            w.join()
        elapsed = time.monotonic() - began
        latencies.sort()
        for c in clients:
            c.close()
        return {"reports": len(latencies), "elapsed_s": elapsed, "per_s": len(latencies) / elapsed,
                "p50_ms": latencies[len(latencies) // 2] * 1000, "p99_ms": latencies[int(len(latencies) * 0.99)] * 1000,
                "errors": len(errors), "load": os.getloadavg()[0]}
    finally:
        floor.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _commit():
    import subprocess
    out = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
    return out.stdout.strip() or "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--threads", type=int, default=20)
    ap.add_argument("--seconds", type=float, default=10.0)
    ap.add_argument("--no-write", action="store_true", help="print only; leave docs/BENCHMARKS.md as it is")
    args = ap.parse_args()
    r = run(args.tables, args.threads, args.seconds)
    needed = args.tables / (10.0 / 3.0)
    body = table([[args.tables, args.threads, r["reports"], "%.0f" % r["per_s"], "%.1f ms" % r["p50_ms"],
                   "%.1f ms" % r["p99_ms"], r["errors"]]],
                 ["tables", "threads", "reports", "reports/s", "p50", "p99", "errors"])
    body += ("\n\nThe floor's need at the default lost window: %.0f reports/s (%d tables, one every 10 / 3 s); "
             "measured %.1f times that. Load average at the end %.1f on this machine. Each report is one "
             "upsert of one row on the pool's health connection (synchronous_commit off: a report is no money); "
             "the p99 includes each table's first TLS handshake. %.0f s measured. Machine: %s. Commit %s, %s.\n\n"
             "Reproduce: `.venv/bin/python benchmarks/bench_pool_health.py --tables %d --threads %d --seconds %g`\n"
             % (needed, args.tables, r["per_s"] / needed, r["load"], args.seconds, machine_note(), _commit(),
                time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), args.tables,
                args.threads, args.seconds))
    print(body)
    if not args.no_write:
        write_section("pool_health", "The tables' health reports to the pool: %d tables" % args.tables, body)


if __name__ == "__main__":
    main()
