"""The product ships without the lab: no module of the shipped packages (tablectl, tablegames, the
board's table) imports the developer's tools (tabledev). Their verbs (`tablectl sim`, `bench`) and
hooks (`diag --bench`, the virtual boards of `ports`) reach the CLI through entry points
(tablectl/plugins.py, pyproject.toml), and without tabledev the CLI says so in one line.

Two proofs: every module's source is read (an AST scan for `import tabledev...`, `from tabledev
...`, and importlib.import_module / __import__ of a "tabledev..." string), and every tablectl
module is imported in a fresh interpreter in which importing tabledev raises."""
import ast
import os
import subprocess
import sys

import pytest

from conftest import ROOT

SHIPPED = {"tablectl": os.path.join(ROOT, "host_tools", "tablectl"),
           "tablegames": os.path.join(ROOT, "host_tools", "tablegames"),
           "table": os.path.join(ROOT, "firmware", "table")}
DEV = "tabledev"
TABLECTL = [sys.executable, "-c", "import sys; from tablectl.cli import main; sys.exit(main(sys.argv[1:]))"]

# Put before every other finder of a fresh interpreter: importing tabledev (or any module of it)
# raises, as it would where the developer's tools are not installed.
BLOCK = """
import sys
class NoLab:
    def find_spec(self, name, path=None, target=None):
        if name == "tabledev" or name.startswith("tabledev."):
            raise ModuleNotFoundError("No module named %r (blocked: the product without the lab)" % name, name=name)
        return None
sys.meta_path.insert(0, NoLab())
"""


def _modules(package, folder):
    """(dotted name, path) of every .py module of a package folder."""
    for dirpath, dirs, names in os.walk(folder):
        dirs[:] = sorted(d for d in dirs if d != "__pycache__")
        for name in sorted(names):
            if name.endswith(".py"):
                rel = os.path.relpath(os.path.join(dirpath, name), folder)[:-3].replace(os.sep, ".")
                dotted = package if rel == "__init__" else package + "." + (rel[:-len(".__init__")]
                                                                              if rel.endswith(".__init__") else rel)
                yield dotted, os.path.join(dirpath, name)


def _imports_of_dev(path):
    """The lines of a module that import tabledev, however it is spelt."""
    with open(path) as f:
        tree = ast.parse(f.read(), path)
    found = []
    for node in ast.walk(tree):
        names = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names = [node.module]
        elif isinstance(node, ast.Call) and node.args and isinstance(node.args[0], ast.Constant) \
                and isinstance(node.args[0].value, str):
            func = node.func
            called = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if called in ("import_module", "__import__"):
                names = [node.args[0].value]
        found += ["%s:%d %s" % (os.path.relpath(path, ROOT), node.lineno, n)
                  for n in names if n == DEV or n.startswith(DEV + ".")]
    return found


def test_the_scan_sees_every_spelling_of_an_import(tmp_path):
    planted = tmp_path / "planted.py"
    planted.write_text("import os, tabledev.bench\nfrom tabledev import jig\n"
                       "def f():\n    import importlib\n    importlib.import_module('tabledev.simulator')\n"
                       "    __import__('tabledev')\nfrom tablectl import errors\n")
    assert [line.split(" ", 1)[1] for line in _imports_of_dev(str(planted))] == [
        "tabledev.bench", "tabledev", "tabledev.simulator", "tabledev"]


def test_no_shipped_module_imports_the_developers_tools():
    offenders = []
    count = 0
    for package, folder in SHIPPED.items():
        for _, path in _modules(package, folder):
            count += 1
            offenders += _imports_of_dev(path)
    assert count > 80, "the scan must see the packages' modules, not an empty folder"
    assert not offenders, "shipped modules import tabledev: %s" % offenders


def _without_lab(code, *args):
    return subprocess.run([sys.executable, "-c", BLOCK + code] + list(args), capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_every_tablectl_module_imports_with_the_developers_tools_blocked():
    names = [n for n, _ in _modules("tablectl", SHIPPED["tablectl"])]
    code = ("import importlib, json\nfailed = {}\nfor n in %r:\n    try:\n        importlib.import_module(n)\n"
            "    except ImportError as exc:\n        failed[n] = str(exc)\n"
            "print(json.dumps(failed))\n" % (names,))
    # the optional extras (the pool's psycopg, ...) may be absent: only tabledev is a failure here
    proc = _without_lab(code)
    assert proc.returncode == 0, proc.stderr[-2000:]
    import json
    failed = json.loads(proc.stdout.splitlines()[-1])
    assert not {n: e for n, e in failed.items() if DEV in e}, failed
    # and the block does bite: importing tabledev in that interpreter fails
    proc = _without_lab("import tabledev.bench")
    assert proc.returncode != 0 and "blocked" in proc.stderr


CLI = "import sys\nfrom tablectl.cli import main\nsys.exit(main(sys.argv[1:]))\n"


@pytest.mark.parametrize("words, what", [
    (["sim", "--state", "/tmp/lab-nowhere"], "`tablectl sim`"),
    (["bench", "--state", "/tmp/lab-nowhere", "display"], "`tablectl bench`"),
    (["diag", "acceptor", "--bench", "/tmp/lab-nowhere", "--port", "/dev/null"], "`tablectl diag --bench`"),
])
def test_without_the_developers_tools_their_verbs_say_so(words, what):
    proc = _without_lab(CLI, *words)
    assert proc.returncode == 1, (proc.stdout, proc.stderr)
    assert proc.stderr.startswith("tablectl: %s" % what), proc.stderr
    assert "developer's tools (tabledev), which are not installed" in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1, proc.stderr


def test_without_the_developers_tools_the_product_commands_work():
    proc = _without_lab(CLI, "--help")
    assert proc.returncode == 0, proc.stderr
    assert "    serve " in proc.stdout and "    flash " in proc.stdout
    assert "    sim " not in proc.stdout, "a verb that cannot run is not offered"
    proc = _without_lab(CLI, "ports", "--json")
    assert proc.returncode == 0, proc.stderr


def test_with_the_developers_tools_their_verbs_are_registered():
    from tablectl import cli, plugins
    registered = plugins.commands()
    assert registered == {"bench": "tabledev.commands.bench", "sim": "tabledev.commands.sim"}
    assert set(plugins.DEVELOPER_VERBS) == set(registered)
    for name in registered:
        help_text, example, add_arguments, run = cli._load(name)
        assert example.startswith("tablectl %s" % name) and callable(run)
    assert plugins.hook(plugins.BENCH_GROUP, "virtual", "diag --bench").__name__ == "Bench"
    assert callable(plugins.hook(plugins.PORTS_GROUP, "virtual", "ports"))



# The wheel a casino installs, built from the repository's root as pip builds it, carries the
# product's packages and nothing of the lab, and runs alone: tests/host/test_wheel_install.py.
