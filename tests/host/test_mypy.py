"""The host's money path (ledger, service, link, reconcile, client, keys, awards, and the JSON it
prints: readable) is typed, and
mypy checks it as the root pyproject.toml says ([tool.mypy] and its override for these modules:
every function annotated, no Any returned where a type is promised, no stale `type: ignore`).
Modules these import (the game math, the board's protocol) are read for their types but judged
by their own owners' checks, so only findings in the money path fail this test."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
MONEY_PATH = ("ledger", "service", "link", "reconcile", "client", "keys", "awards", "readable")


def run_mypy(*extra):
    cmd = [sys.executable, "-m", "mypy", "--config-file", os.path.join(ROOT, "pyproject.toml"),
           "--no-incremental", "--cache-dir", os.devnull, "--follow-imports=silent", "--show-error-codes"]
    for name in MONEY_PATH:
        cmd += ["-m", "tablectl." + name]
    return subprocess.run(cmd + list(extra), cwd=ROOT, capture_output=True, text=True, timeout=300)


def test_the_money_path_type_checks():
    proc = run_mypy()
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Success: no issues found in %d source files" % len(MONEY_PATH) in proc.stdout


def test_the_check_is_strict_an_unannotated_function_fails_it(tmp_path):
    """The override really applies to these modules: a copy of the package with one function's
    annotations taken off is refused (so the test above cannot pass by checking nothing)."""
    import shutil
    copy = tmp_path / "host_tools"
    shutil.copytree(os.path.join(ROOT, "host_tools", "tablectl"), copy / "tablectl",
                    ignore=shutil.ignore_patterns("__pycache__", "commands", "pool"))
    keys = copy / "tablectl" / "keys.py"
    text = keys.read_text()
    assert "def keys_dir_for(db_path: str) -> str:" in text
    keys.write_text(text.replace("def keys_dir_for(db_path: str) -> str:", "def keys_dir_for(db_path):"))
    config = tmp_path / "pyproject.toml"
    config.write_text(open(os.path.join(ROOT, "pyproject.toml")).read().replace(
        'mypy_path = "host_tools:firmware"', 'mypy_path = "%s:%s"' % (copy, os.path.join(ROOT, "firmware"))))
    cmd = [sys.executable, "-m", "mypy", "--config-file", str(config), "--no-incremental", "--cache-dir",
           os.devnull, "--follow-imports=silent", "-m", "tablectl.keys"]
    proc = subprocess.run(cmd, cwd=str(tmp_path), capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert "keys.py:" in proc.stdout and "[no-untyped-def]" in proc.stdout, proc.stdout
