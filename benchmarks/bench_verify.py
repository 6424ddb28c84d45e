"""How long the regulator's check of the board's program takes: `tablectl verify-software --seed HEX`
(the board's keyed HMAC-SHA256 and HMAC-SHA1 of every program file, docs/SECURITY.md) against the
plain `checksums` of the same files, both passes in each run of the command (its `seconds` field).
On the virtual board (`tablectl sim`, unix MicroPython), and with --pico on the emulated Pico too
(`tablectl sim --board pico`, the official image). Writes its record, benchmarks/results/verify.json.

    .venv/bin/python benchmarks/bench_verify.py [--runs N] [--pico] [--no-write]

Each run is the command as a technician types it, straight to the board's port (no service), with a
fresh seed: what the regulator waits for. Medians over --runs; the Pico (minutes a run here) once.
"""
import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

from _common import machine_note, table, write_section  # noqa: E402  (puts host_tools on sys.path)

from tabledev import procs


def verify_once(port, db, env=None, timeout_s=1800, source=None):
    seed = os.urandom(16).hex()
    extra = ["--source", source] if source else []
    proc = subprocess.run(procs.TABLECTL + ["verify-software", "--seed", seed, "--port", port, "--db", db, "--json"] + extra,
                          capture_output=True, text=True, timeout=timeout_s, env=env)
    if proc.returncode != 0:
        raise SystemExit("verify-software failed (exit %d): %s" % (proc.returncode, (proc.stderr or proc.stdout).strip()[-400:]))
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    if not got["ok"]:
        raise SystemExit("verify-software: the board's files differ from the release: %s" % got["mismatched"])
    return got["files"], got["seconds"]["verify_software"], got["seconds"]["checksums"]


def virtual_board(work, runs):
    state = os.path.join(work, "sim")
    sim, log, port = procs.start_sim(state, os.path.join(work, "sim.log"))
    try:
        db = os.path.join(work, "virtual.db")
        verify_once(port, db)  # warm-up: the board's files in its page cache, not counted
        got = [verify_once(port, db) for _ in range(runs)]
    finally:
        procs.stop(sim)
        log.close()
    return got


def emulated_pico(work):
    from tabledev.bench import Bench
    from tablectl import FIRMWARE_DIR
    from tablectl.deploy import compile_tree
    from tabledev.pico_sim import HOW_TO_GET_IMAGE, UF2_VERSION, image_path
    image = image_path(required=False)
    if image is None:
        raise SystemExit("--pico: " + HOW_TO_GET_IMAGE)
    # the release as the emulated board carries it: the same sources compiled as its deployment
    # compiles them (the .mpy files carry their sources' paths), the host's side of the check
    source = compile_tree("pico", FIRMWARE_DIR, os.path.join(work, "mpy"), micropython=UF2_VERSION)
    state = os.path.join(work, "pico")
    env = dict(os.environ, TABLECTL_LINK_TIMEOUT_S="600")  # the emulated core is 15-50x slower than a Pico
    sim, log = procs.start(["sim", "--board", "pico", "--state", state, "--image", image], os.path.join(work, "pico.log"))
    try:
        port = sim.stdout.readline().split()[1]
        bench = Bench(state, timeout_s=600)
        deadline = time.monotonic() + 1800
        while True:
            out = bench.request("outputs")["outputs"]
            if out["mode"] == "app" and out["meter"] is not None:
                break
            if time.monotonic() > deadline:
                raise SystemExit("the emulated Pico did not reach its controller within 30 minutes (see %s)"
                                 % os.path.join(work, "pico.log"))
            time.sleep(1.0)
        return [verify_once(port, os.path.join(work, "pico.db"), env=env, timeout_s=3600, source=source)]
    finally:
        procs.stop(sim)
        log.close()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--runs", type=int, default=5, help="measured runs on the virtual board (median reported)")
    ap.add_argument("--pico", action="store_true", help="also the emulated Pico, once (minutes)")
    ap.add_argument("--no-write", action="store_true", help="print only; write no record")
    args = ap.parse_args(argv)
    load_before = os.getloadavg()
    work = tempfile.mkdtemp(prefix="bench-verify-")
    try:
        boards = [("virtual board (`tablectl sim`, unix MicroPython)", virtual_board(work, args.runs))]
        if args.pico:
            boards.append(("emulated Pico (`tablectl sim --board pico`, the official image, its .mpy tree, "
                           "`TABLECTL_LINK_TIMEOUT_S=600`)", emulated_pico(work)))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    rows = []
    for label, got in boards:
        files = sorted(set(g[0] for g in got))
        keyed = statistics.median(g[1] for g in got)
        plain = statistics.median(g[2] for g in got)
        rows.append((label, ", ".join(str(f) for f in files), str(len(got)), "%.3f" % keyed, "%.3f" % plain,
                     "%.2f" % (keyed / plain) if plain else "-"))
    load = os.getloadavg()
    command = ".venv/bin/python benchmarks/bench_verify.py --runs %d%s" % (args.runs, " --pico" if args.pico else "")
    body = "\n".join([
        "`%s`: `tablectl verify-software --seed <fresh 16 bytes> --port PORT --json` straight to the "
        "board, its `seconds` field: the board's keyed pass over every program file and the plain "
        "`checksums` pass over the same files, one after the other in each run (median of the runs; "
        "one warm-up run on the virtual board first, not counted). Load average %.2f / %.2f / %.2f at "
        "the start, %.2f / %.2f / %.2f at the end. %s." % ((command,) + load_before + load + (machine_note(),)),
        "",
        table(rows, ["board", "files", "runs", "verify_software s (HMAC-SHA256 and HMAC-SHA1)",
                     "checksums s (SHA-256)", "keyed / plain"]),
        "",
        "`keyed / plain`: what the regulator's fresh seed costs over the plain checksums a doctored board "
        "could answer from a table (docs/SECURITY.md \"The regulator's check\"), measured in the same run.",
    ])
    print(body)
    if not args.no_write:
        write_section("verify", "The regulator's check of the board's program: `verify-software` against plain "
                      "checksums", body)
    return 0


if __name__ == "__main__":
    sys.exit(main())
