"""Shared by the bench commands: paths, running MicroPython, and writing one's own record under
benchmarks/results/ (docs/BENCHMARKS.md is rendered from all of them: benchmarks/figures.py)."""
import json
import os
import subprocess

from tabledev.interpreter import micropython_path  # noqa: F401 (bench_decoder takes it from here)

# The load average when the command started (this module is imported first): a record's "before".
LOAD_AT_START = [round(x, 2) for x in os.getloadavg()]
ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
FIRMWARE = os.path.join(ROOT, "firmware")
TESTS_FW = os.path.join(ROOT, "tests", "firmware")
# What a record's command is when a bench knows it better than its text does (bench_pico.py sets
# it for each section it runs: the section, the options it was given, the settings in its
# environment that change how the emulator runs).
COMMAND = None
# Environment settings that change what an emulated-Pico bench measures or how fast: named in the
# record's command when set, so the command run again measures the same thing.
COMMAND_ENV = ("TABLE_PICO_PIO_STEP_US", "TABLE_PICO_GIL_SWITCH_US", "TABLECTL_LINK_TIMEOUT_S")


def invocation(script, section, options):
    """The command line that runs one section again as it ran here: `options` are the command's
    own (without its section names)."""
    env = ["%s=%s" % (k, os.environ[k]) for k in COMMAND_ENV if os.environ.get(k)]
    return " ".join(env + [".venv/bin/python", "benchmarks/" + script, section] + list(options))


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


def write_section(name, title, body, load_before=None):
    """Write this command's record (benchmarks/results/NAME.json: command, commit, date, machine, the
    headline figures, goal and verdict read from the text, the sources' blobs, the text itself as its
    detail) and render docs/BENCHMARKS.md from all the records."""
    import figures
    from figure_specs import SPECS, command_of, headline, sources_of
    _, timing, _ = SPECS[name]
    sources = sources_of(name, body)
    figs, goal, met = headline(name, body)
    record = figures.make(name, title, COMMAND or command_of(name, body), figs, goal, met, sources, body, timing,
                          load_before=load_before or LOAD_AT_START)
    figures.save(record)
    figures.render_all()
    print("rendered docs/BENCHMARKS.md: %s %s" % (name, record["verdict"]))


def machine_note():
    import platform
    from figures import cpu_model
    return "%s, %s, Python %s; %s" % (platform.machine(), cpu_model(),
                                       platform.python_version(), os.cpu_count()) + " CPUs"
