"""Coin decoder and firmware heap.

  1. Tokens miscounted over 100,000 tokens on 7 seats (widths 20/50/100 ms jittered +-20 %,
     glitches in the idle gaps, contact bounce at pulse edges), through CoinDecoder directly
     (completed pulses, as the PIO/PCNT back ends deliver them) and through the SimPulseSource
     edge path with all seats polled together. Target 0.
  2. Decode cost in microseconds per edge on micropython, and the same code on CPython in the same
     run (ratio reported).
  3. Peak heap of the whole firmware: TableApp on a SimBoard, 7 seats, every task of step(), an
     accelerated play period of --play-period-s seconds, 10 minutes by default (tokens, keys, bet
     spots, host acks, status commands) under `micropython -X heapsize=128K`, firmware precompiled to .mpy as a board carries it.

    .venv/bin/python benchmarks/bench_decoder.py [--coins 100000] [--play-period-s 600]
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys

from _common import FIRMWARE, ROOT, TESTS_FW, machine_note, micropython_path, run_mp, table, write_section

HEAPS = ("128K", "160K", "192K", "256K")


def cpython_peer(coins, seed):
    env = dict(os.environ, PYTHONPATH="%s:%s" % (FIRMWARE, TESTS_FW))
    proc = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", "decoder_run.py"), str(coins), str(seed)],
                          env=env, capture_output=True, text=True, check=True, cwd=ROOT)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def build_mpy(out):
    if os.path.isdir(out):
        shutil.rmtree(out)
    cross = os.path.join(os.path.dirname(micropython_path()), "mpy-cross")
    srcs = [(p, os.path.relpath(p, FIRMWARE)) for sub in ("table", "boards", "drivers")
            for p in glob.glob(os.path.join(FIRMWARE, sub, "*.py"))]
    srcs += [(os.path.join(TESTS_FW, n + ".py"), n + ".py") for n in ("fuzzkit", "pulsegen", "simkit")]
    srcs.append((os.path.join(ROOT, "benchmarks", "heap_play_period.py"), "heap_play_period.py"))
    for src, rel in srcs:
        dst = os.path.join(out, rel[:-3] + ".mpy")
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        subprocess.run([cross, "-o", dst, src], check=True)


def heap_run(mpy_dir, heap, play_period_s):
    env = dict(os.environ, MICROPYPATH=".:.frozen")
    proc = subprocess.run([micropython_path(), "-X", "heapsize=%s" % heap, "-m", "heap_play_period", str(play_period_s)],
                          cwd=mpy_dir, env=env, capture_output=True, text=True, timeout=1800)
    if proc.returncode != 0:
        last = (proc.stderr or proc.stdout).strip().splitlines()
        return None, last[-1] if last else "exit %d" % proc.returncode
    return json.loads(proc.stdout.strip().splitlines()[-1]), None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--coins", type=int, default=100000)
    ap.add_argument("--play-period-s", type=int, default=600)
    ap.add_argument("--rng-seed", dest="seed", type=int, default=1)
    ap.add_argument("--no-write", action="store_true")
    a = ap.parse_args()
    mp = run_mp(os.path.join(ROOT, "benchmarks", "decoder_run.py"), (a.coins, a.seed), heap="64M")
    cp = cpython_peer(a.coins, a.seed)
    rows = [
        ("tokens sent (7 seats)", mp["coins_sent"], cp["coins_sent"], ""),
        ("edges (incl. %d glitches/bounces)" % mp["glitches_and_bounces"], mp["edges"], cp["edges"], ""),
        ("miscounted, CoinDecoder direct", mp["miscount_direct"], cp["miscount_direct"], "target 0"),
        ("miscounted, SimPulseSource edge path", mp["miscount_edge_path"], cp["miscount_edge_path"], "target 0"),
        ("miscounted, 3 pulses/token (%d tokens)" % mp["coins_sent_ppc3"], mp["miscount_ppc3"], cp["miscount_ppc3"],
         "target 0"),
        ("us per edge, CoinDecoder direct", "%.2f" % mp["us_per_edge_direct"], "%.2f" % cp["us_per_edge_direct"],
         "MP/CPython %.1fx" % (mp["us_per_edge_direct"] / cp["us_per_edge_direct"])),
        ("us per edge, edge path (7 seats polled per edge)", "%.2f" % mp["us_per_edge_edge_path"],
         "%.2f" % cp["us_per_edge_edge_path"],
         "MP/CPython %.1fx" % (mp["us_per_edge_edge_path"] / cp["us_per_edge_edge_path"])),
    ]
    t1 = table(rows, ("figure", "micropython", "CPython (peer)", "note"))
    print(t1)
    mpy_dir = os.path.join(ROOT, "build", "bench-heap-mpy")
    build_mpy(mpy_dir)
    hrows = []
    for heap in HEAPS:
        res, err = heap_run(mpy_dir, heap, a.play_period_s)
        if res is None:
            hrows.append((heap, "FAILED", err[:90], "", "", ""))
        else:
            peak_live = res["heap_total"] - res["min_free_seen"]
            hrows.append((heap, "ok %d s, %d rounds, %d tokens" % (res["play_period_s"], res["rounds"], sum(res["seat_tokens"])),
                          res["base_alloc"], res["firmware_alloc_after_gc"], res["alloc_after_gc"], peak_live))
    # the column names the play period that was run (--play-period-s), not the default
    length = ("%d-min" % (a.play_period_s // 60)) if a.play_period_s % 60 == 0 else ("%d-s" % a.play_period_s)
    t2 = table(hrows, ("heapsize", "%s play period" % length, "code+modules (B)", "firmware data after gc (B)",
                       "live after gc (B)", "peak in use incl. garbage (B)"))
    print(t2)
    ok128 = hrows[0][1] != "FAILED"
    body = ("Command: `.venv/bin/python benchmarks/bench_decoder.py --coins %d --play-period-s %d` (%s).\n\n"
            % (a.coins, a.play_period_s, machine_note()) + t1 + "\n\n"
            "Miscount target 0: **%s** (direct %d, edge path %d). Edge-path cost counts the SimPulseSource poll of all "
            "7 seats at every edge time plus decoding, so it is per-edge work of the whole coin-in loop, not of the "
            "decoder alone.\n\n"
            "Peak heap, whole firmware (7 seats, all tasks, %d-s accelerated play period, firmware and harness as .mpy), "
            "`micropython -X heapsize=N` on the unix port (8-byte words; a board's 4-byte words need roughly half):\n\n"
            % (a.coins and ("met" if mp["miscount_direct"] == mp["miscount_edge_path"] == 0 else "NOT met"),
               mp["miscount_direct"], mp["miscount_edge_path"], a.play_period_s) + t2 + "\n\n"
            + ("Under 128K: **runs** (target met). 'code+modules' is the firmware's bytecode loaded into RAM (on a "
               "board with frozen modules it stays in flash); 'firmware data' is what the running controller holds; "
               "the host's side of the link is kept outside this heap (it acknowledges through real ack frames "
               "without decoding in the board's heap). The last column is heap total minus the least free heap "
               "seen: garbage fills the heap between collections, so it tracks the heap size, not the need.\n"
               if ok128 else
               "Under 128K: **does NOT run** (MemoryError, shown above). 'code+modules' is the heap held after "
               "importing the firmware and the bench harness (.mpy bytecode loaded into RAM; frozen into flash on a "
               "production build it would not be heap); the harness's host side (FrameReader, event bookkeeping) "
               "shares the heap. "
               "The last column is heap total minus the least free heap seen between rounds (garbage included). "
               "`micropython.mem_peak()` on this build reports the process's malloc peak, not the GC heap, so "
               "it is not used.\n"))
    if not a.no_write:
        write_section("decoder", "Coin decoder and firmware heap", body)


if __name__ == "__main__":
    main()
