"""The product is one installable package: a wheel built by `pip wheel` with no C compiler at hand
installs in a fresh virtual environment outside the checkout, and the operations commands work
from there: "A wheel of the host built with `pip wheel` installs in a fresh venv outside the
checkout, with no compiler on PATH, and `tablectl status --help`, `serve`, `audit verify` and
`reconcile` work from there" (docs/ARCHITECTURE.md).

What is real here: pip builds the wheel from a copy of the source tree with every compiler hidden
(PATH holds none, CC and LDSHARED are /bin/false), so the C cores are skipped as setup.py allows;
the venv is made by `python -m venv` in a temporary folder and gets the wheel and pyserial (its one
dependency) from a local folder only (--no-index); every command runs with its working folder
outside the checkout and PYTHONPATH unset, so nothing can come from the checkout. The ledger is
written by the installed package's own Ledger from events the real firmware produced on
MicroPython (tests/firmware/books_session.py, as tests/host/test_books.py uses them).
"""
import json
import os
import shutil
import subprocess
import sys
import zipfile

import pytest

from conftest import ROOT, run_micropython

SESSION = os.path.join(ROOT, "tests", "firmware", "books_session.py")
# What the wheel is built from: the tree as a fresh clone has it, without what the wheel does not
# take (tests, docs, benchmarks) and without any build output (no C core built here may slip in).
TOP_SKIP = {".git", ".venv", ".stubs", "build", "dist", "state", "out", "tests", "docs", "bench",
            ".pytest_cache", ".mypy_cache"}
ANY_SKIP = shutil.ignore_patterns("__pycache__", "*.pyc", "*.so", "*.egg-info")


def skip(folder, names):
    ignored = set(ANY_SKIP(folder, names))
    if os.path.abspath(folder) == ROOT:
        ignored |= TOP_SKIP & set(names)
    return ignored


def run(cmd, cwd, env=None, timeout=300):
    proc = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=timeout)
    return proc


def ok(proc):
    assert proc.returncode == 0, "%s\nstdout:\n%s\nstderr:\n%s" % (proc.args, proc.stdout[-3000:], proc.stderr[-3000:])
    return proc


def no_compiler_env(tmp):
    """The environment of a machine without a C compiler: PATH has an empty folder only."""
    empty = os.path.join(tmp, "empty-bin")
    os.makedirs(empty, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env.update(PATH=empty, CC="/bin/false", CXX="/bin/false", LDSHARED="/bin/false", HOME=os.environ.get("HOME", tmp))
    return env


@pytest.fixture(scope="module")
def installed(tmp_path_factory):
    tmp = str(tmp_path_factory.mktemp("wheel"))
    assert not tmp.startswith(ROOT + os.sep)
    src = os.path.join(tmp, "src")
    shutil.copytree(ROOT, src, ignore=skip, symlinks=True)
    wheels = os.path.join(tmp, "wheels")
    env = no_compiler_env(tmp)
    # the project, C cores skipped for want of a compiler (pip gets its build backend as usual)
    ok(run([sys.executable, "-m", "pip", "wheel", "--no-deps", "-w", wheels, src], cwd=tmp, env=env, timeout=240))
    # its one dependency, from pip's cache or the index, into the same local folder
    ok(run([sys.executable, "-m", "pip", "download", "--no-deps", "--only-binary", ":all:", "-d", wheels,
            "pyserial>=3.5"], cwd=tmp, env=env, timeout=120))
    venv = os.path.join(tmp, "venv")
    ok(run([sys.executable, "-m", "venv", venv], cwd=tmp, env=env))
    built = [f for f in os.listdir(wheels) if f.startswith("tablectl-")]
    assert len(built) == 1, os.listdir(wheels)
    wheel = os.path.join(wheels, built[0])
    ok(run([os.path.join(venv, "bin", "python"), "-m", "pip", "install", "--no-index", "--find-links", wheels,
            wheel], cwd=tmp, env=env, timeout=180))
    work = os.path.join(tmp, "work")
    os.makedirs(work)
    return {"tmp": tmp, "wheel": wheel, "venv": venv, "work": work, "env": env}


def tablectl(installed, *args):
    return run([os.path.join(installed["venv"], "bin", "tablectl")] + list(args), cwd=installed["work"],
               env=installed["env"], timeout=120)


def venv_python(installed, code):
    return ok(run([os.path.join(installed["venv"], "bin", "python"), "-c", code], cwd=installed["work"],
                  env=installed["env"], timeout=120))


def test_the_wheel_has_no_c_core_and_carries_the_board_files(installed):
    with zipfile.ZipFile(installed["wheel"]) as z:
        names = set(z.namelist())
    assert not [n for n in names if n.endswith(".so")], "built without a compiler: no C core"
    from tablectl.deploy import BOARDS
    for board in ("pico", "esp32"):
        assert "tablectl/firmware/package-%s.json" % board in names
    missing = sorted({n for files in BOARDS.values() for n in files} - {n[len("tablectl/firmware/"):] for n in names})
    assert not missing, "files a board carries (tablectl/deploy.py) but the wheel lacks: %s" % missing
    for pinmap in ("pinmap_pico.json", "pinmap_esp32.json"):
        assert "tablectl/hardware/" + pinmap in names
    for pkg in ("table/__init__.py", "tablectl/cli.py", "tablegames/__init__.py"):
        assert pkg in names
    assert "tablegames/paytables/caribbean-draw-co.json" in names


def test_the_wheel_is_the_product_and_carries_nothing_of_the_lab(installed):
    """The shipped wheel holds the product's packages (the board's table, tablectl, tablegames)
    and nothing of the developer's tools: tabledev is a distribution of its own (lab/), whose verbs
    reach tablectl as entry points it declares itself. No module in the wheel imports it."""
    from test_product_without_lab import _imports_of_dev
    offenders, scanned = [], 0
    with zipfile.ZipFile(installed["wheel"]) as z:
        names = z.namelist()
        for name in names:
            if name.endswith(".py"):
                path = os.path.join(installed["tmp"], "scan", name)
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "wb") as f:
                    f.write(z.read(name))
                scanned += 1
                offenders += _imports_of_dev(path)
        entry_points = z.read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    top = {n.split("/")[0] for n in names if not n.split("/")[0].endswith(".dist-info")}
    assert top == {"table", "tablectl", "tablegames"}, top
    assert not [n for n in names if "tabledev" in n], "the lab's files ride in the product's wheel"
    assert scanned > 80 and not offenders, (scanned, offenders)
    assert "tabledev" not in entry_points and "tablectl = tablectl.cli:main" in entry_points, entry_points


def test_the_installed_product_runs_without_the_lab(installed):
    proc = venv_python(installed, "import importlib.util; print(importlib.util.find_spec('tabledev'))")
    assert proc.stdout.strip() == "None", "the lab is importable where only the product was installed"
    proc = ok(tablectl(installed, "--help"))
    assert "    serve " in proc.stdout and "    flash " in proc.stdout
    assert "    sim " not in proc.stdout and "    bench " not in proc.stdout, "a verb that cannot run is not offered"
    proc = tablectl(installed, "sim", "--state", os.path.join(installed["work"], "nowhere"))
    assert proc.returncode == 1 and proc.stderr.startswith("tablectl: `tablectl sim`"), (proc.stdout, proc.stderr)
    assert "developer's tools (tabledev), which are not installed" in proc.stderr


def test_the_installed_package_is_the_wheels_not_the_checkouts(installed):
    out = venv_python(installed, "import tablectl, tablegames, table; "
                                 "print(tablectl.__file__); print(tablegames.__file__); print(table.__file__)")
    site = os.path.join(installed["venv"], "lib")
    for path in out.stdout.split():
        assert path.startswith(site) and not path.startswith(ROOT + os.sep), path


@pytest.mark.parametrize("command", ["status", "serve", "audit", "reconcile", "jackpot", "par"])
def test_help_of_the_operations_commands(installed, command):
    proc = ok(tablectl(installed, command, "--help"))
    assert proc.stdout.startswith("usage: tablectl %s" % command)


def test_flash_finds_its_packaged_firmware(installed):
    ok(tablectl(installed, "flash", "--help"))
    # the file set `tablectl flash` deploys by default: every file there, from the installed package
    out = venv_python(installed, "\n".join([
        "import json, os",
        "from tablectl import FIRMWARE_DIR, HARDWARE_DIR",
        "from tablectl.commands.flash import firmware_files",
        "files = firmware_files(FIRMWARE_DIR, os.path.join(HARDWARE_DIR, 'pinmap_pico.json'), 'pico')",
        "print(json.dumps({'dir': FIRMWARE_DIR, 'files': [[n, p, os.path.isfile(p)] for n, p in files]}))",
    ]))
    found = json.loads(out.stdout)
    assert found["dir"].startswith(installed["venv"])
    assert found["files"] and all(exists for _, _, exists in found["files"])
    assert [n for n, _, _ in found["files"]][0] == "main.py"
    assert any(n == "pinmap.json" for n, _, _ in found["files"])


def test_audit_and_reconcile_a_ledger_written_by_the_installed_package(installed):
    session = json.loads(run_micropython(SESSION, cwd=os.path.dirname(SESSION), timeout=120).stdout.splitlines()[-1])
    session_file = os.path.join(installed["work"], "session.json")
    with open(session_file, "w") as f:
        json.dump(session, f)
    venv_python(installed, "\n".join([
        "import json",
        "from tablectl.ledger import Ledger",
        "s = json.load(open('session.json'))",
        "led = Ledger('casino.db')",
        "for e in s['events']:",
        "    if e['k'] == 'award':",
        "        led.note(s['board'], 'intent', {'cmd': 'award', 'id': e['id'], 'args': {}})",
        "led.record_events(s['board'], s['events'])",
        "led.close()",
    ]))
    proc = ok(tablectl(installed, "audit", "verify", "--db", "casino.db"))
    assert "hash chain intact" in proc.stdout
    proc = ok(tablectl(installed, "reconcile", "--db", "casino.db", "--offline", "--json"))
    figures = json.loads(proc.stdout)
    # the books reproduce the board's own meters: expected meter = meter + overflow, and the
    # reserve its contributions
    meters = session["meters"]
    assert figures["ok"] is True and figures["board"] == session["board"]
    assert figures["expected"] == meters["meter"] + meters["over"]
    assert figures["expected_reserve"] == meters["res"]
    assert figures["awards_without_intent"] == []


def test_eval_says_in_one_line_that_it_needs_the_c_core(installed):
    proc = tablectl(installed, "eval", "As", "Ks", "Qs", "Js", "Ts")
    assert proc.returncode == 1
    assert proc.stderr.count("\n") == 1, proc.stderr
    assert proc.stderr.startswith("tablectl: eval")
    assert "needs the C core tablegames.poker._fastpoker" in proc.stderr
    assert "install a C compiler and run make setup" in proc.stderr
