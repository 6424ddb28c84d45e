"""Which batch loop ranks rank_batch's rows: the fastest one on this CPU, measured, not guessed.

The C core has several loops for a batch of rows (`_fastpoker.loops()`: one row a step, four or
eight rows a step with vector instructions). Which is fastest depends on the CPU model, not only
on its flags: the AVX-512 VBMI loop was 1.9x the one-row loop on the Intel core it was written on
and 0.8x on an AMD core with the same flags. So the first rank_batch of a process times every loop
the CPU runs on the same random rows (`_fastpoker.time_loops`, a few milliseconds) and keeps the
fastest for each row size. The choice and its figures are cached per CPU model and build of the
core in the user's cache directory ($XDG_CACHE_HOME/tablegames/eval-loops.json, else
~/.cache/tablegames/eval-loops.json), so a later process only reads them.

TABLEGAMES_FASTPOKER_LOOP=<name> in the environment forces one loop for the row sizes it ranks
(the vector loops rank rows of 5 to 7 cards; 3- and 4-card rows keep the measured choice); a name
this CPU cannot run is refused in one line.
"""
import hashlib
import json
import os
import platform
import tempfile
import time

from ..errors import GameError

ENV = "TABLEGAMES_FASTPOKER_LOOP"
CACHE_FILE = "eval-loops.json"
SIZES = (3, 4, 5, 6, 7)
# 8,192 random rows of each size, every loop in turn, best of 5 rounds: milliseconds, once per CPU
# model and build (the calibration's cost and figures: docs/BENCHMARKS.md, `bench_eval.py`).
ROWS, ROUNDS = 8192, 5
KEEP = 32          # cache entries kept (one per CPU model and build), the newest


def cpu_model():
    """The CPU as /proc/cpuinfo names it: model name, vendor, family, model and stepping (two
    steppings of one model name can differ in what they run fast)."""
    fields = {}
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if not line.strip():
                    break                      # the first processor is enough
                k, _, v = line.partition(":")
                fields[k.strip()] = v.strip()
    except OSError:
        pass
    if "model name" in fields:
        return "%s (%s family %s model %s stepping %s)" % (
            fields["model name"], fields.get("vendor_id", "?"), fields.get("cpu family", "?"),
            fields.get("model", "?"), fields.get("stepping", "?"))
    return platform.processor() or platform.machine() or "unknown CPU"


def cache_path(environ=None):
    environ = os.environ if environ is None else environ
    base = environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tablegames", CACHE_FILE)


def build_id(core):
    """A digest of the built core: a rebuild (another compiler, other flags, changed loops) is
    measured afresh."""
    h = hashlib.sha256()
    with open(core.__file__, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()[:16]


def _read(path):
    try:
        with open(path) as f:
            data = json.load(f)
        return data if isinstance(data, dict) else {}
    except (OSError, ValueError):
        return {}


def _write(path, key, entry):
    """Add one entry to the cache file, atomically; a cache that cannot be written only means
    the next process measures again."""
    data = _read(path)
    data[key] = entry
    def when(item):
        return item[1].get("when", "") if isinstance(item[1], dict) else ""
    keep = sorted(data.items(), key=when)[-KEEP:]
    tmp = None
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), prefix=".eval-loops.")
        with os.fdopen(fd, "w") as f:
            json.dump(dict(keep), f, indent=1, sort_keys=True)
        os.replace(tmp, path)
    except OSError:
        if tmp is not None and os.path.exists(tmp):
            os.unlink(tmp)


def fastest(ns_per_hand):
    """{n: name of the loop with the fewest ns per hand}."""
    return {n: min(by_loop, key=by_loop.get) for n, by_loop in ns_per_hand.items()}


def measure(core, rows=ROWS, rounds=ROUNDS):
    """(ns per hand {n: {loop: ns}}, milliseconds the measurement took)."""
    t0 = time.perf_counter()
    figures = {n: {name: round(ns, 3) for name, ns in by_loop.items()}
               for n, by_loop in core.time_loops(rows, rounds).items()}
    return figures, (time.perf_counter() - t0) * 1e3


def choose(core, environ=None, use_cache=True):
    """Set the batch loop of every row size in `core` and say which and why:
    {"loops": {n: name}, "why": "forced" | "measured" | "cached", "ns_per_hand": {n: {name: ns}},
     "calibration_ms": ms, "cpu": model, "cache": path, "available": [names]}.
    A forced name this CPU does not run raises GameError (one line)."""
    environ = os.environ if environ is None else environ
    runs = {name: tuple(sizes) for name, _, sizes in core.loops()}
    forced = environ.get(ENV, "")
    if forced and forced.strip() not in runs:
        raise GameError("%s=%s: not a batch loop this CPU runs; it runs %s" % (ENV, forced, ", ".join(runs)))
    cpu, path = cpu_model(), cache_path(environ)
    key = "%s | %s | %s" % (cpu, build_id(core), ",".join(runs))
    entry = _read(path).get(key) if use_cache else None
    try:
        figures = {int(n): {str(k): float(v) for k, v in d.items()} for n, d in entry["ns_per_hand"].items()}
        chosen = {int(n): str(v) for n, v in entry["loops"].items()}
        ok = set(chosen) == set(SIZES) and all(n in runs.get(v, ()) for n, v in chosen.items())
        ms, why = float(entry["calibration_ms"]), "cached"
    except (TypeError, KeyError, ValueError, AttributeError):
        ok = False
    if not ok:
        figures, ms = measure(core)
        chosen, why = fastest(figures), "measured"
        if use_cache:
            _write(path, key, {"loops": chosen, "ns_per_hand": figures, "calibration_ms": round(ms, 2),
                               "when": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())})
    if forced:
        forced = forced.strip()
        chosen = {n: forced if n in runs[forced] else name for n, name in chosen.items()}
        why = "forced"
    for n, name in chosen.items():
        core.set_loop(n, name)
    return {"loops": chosen, "why": why, "ns_per_hand": figures, "calibration_ms": ms, "cpu": cpu,
            "cache": path if use_cache else None, "available": list(runs)}
