"""Shared by the bench commands: paths, running MicroPython, and writing one's own section of
docs/BENCHMARKS.md (other commands own other sections; only the marked block is replaced)."""
import json
import os
import subprocess

from tabledev.interpreter import micropython_path  # noqa: F401 (bench_decoder takes it from here)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")
TESTS_FW = os.path.join(ROOT, "tests", "firmware")
BENCHMARKS = os.path.join(ROOT, "docs", "BENCHMARKS.md")


def run_mp(script, args=(), heap=None, timeout=3600):
    """Run a script on MicroPython with firmware/ and tests/firmware importable; returns the
    JSON object printed on its last line starting with '{'."""
    cmd = [micropython_path()]
    if heap:
        cmd += ["-X", "heapsize=%s" % heap]
    cmd += [script] + [str(a) for a in args]
    env = dict(os.environ, MICROPYPATH="%s:%s:.frozen" % (FIRMWARE, TESTS_FW))
    proc = subprocess.run(cmd, cwd=ROOT, env=env, capture_output=True, text=True, timeout=timeout)
    if proc.returncode != 0:
        raise RuntimeError("micropython %s failed:\n%s\n%s" % (script, proc.stdout[-3000:], proc.stderr[-3000:]))
    lines = [l for l in proc.stdout.splitlines() if l.startswith("{")]
    return json.loads(lines[-1])


def table(rows, headers):
    widths = [max(len(str(h)), *(len(str(r[i])) for r in rows)) for i, h in enumerate(headers)]
    out = ["| " + " | ".join(str(h).ljust(w) for h, w in zip(headers, widths)) + " |",
           "|" + "|".join("-" * (w + 2) for w in widths) + "|"]
    for r in rows:
        out.append("| " + " | ".join(str(c).ljust(w) for c, w in zip(r, widths)) + " |")
    return "\n".join(out)


def write_section(name, title, body):
    """Replace (or append) the block between this command's markers in docs/BENCHMARKS.md."""
    begin = "<!-- bench:%s begin -->" % name
    end = "<!-- bench:%s end -->" % name
    block = "%s\n## %s\n\n%s\n%s" % (begin, title, body.rstrip() + "\n", end)
    text = "# Benchmarks\n"
    if os.path.exists(BENCHMARKS):
        with open(BENCHMARKS) as f:
            text = f.read()
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        tail = rest.split(end, 1)[1]
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    os.makedirs(os.path.dirname(BENCHMARKS), exist_ok=True)
    with open(BENCHMARKS, "w") as f:
        f.write(text)
    print("wrote section %r of %s" % (name, os.path.relpath(BENCHMARKS, ROOT)))


def machine_note():
    import platform
    return "%s, %s, Python %s; %s" % (platform.machine(), platform.processor() or "cpu?",
                                       platform.python_version(), os.cpu_count()) + " CPUs"
