"""The project's version is written once, firmware/table/vocab.py FIRMWARE_VERSION (what the board
says in its hello): the installed host package, `tablectl --version` and the boards' mip lists
carry that one, and no other file writes a version of its own."""
import json
import os
import re
import subprocess
import sys

from conftest import ROOT
from table.vocab import FIRMWARE_VERSION


def test_the_installed_package_is_the_firmwares_version():
    from importlib.metadata import version
    assert version("tablectl") == FIRMWARE_VERSION, "run `make setup`: the install is older than vocab.py"
    p = subprocess.run([sys.executable, "-c", "import sys; from tablectl.cli import main; sys.exit(main())",
                        "--version"], capture_output=True, text=True, timeout=60)
    assert p.stdout.strip() == "tablectl %s" % FIRMWARE_VERSION, p.stderr


def test_the_boards_lists_carry_it():
    for board in ("pico", "esp32"):
        with open(os.path.join(ROOT, "firmware", "package-%s.json" % board)) as f:
            assert json.load(f)["version"] == FIRMWARE_VERSION


def test_no_other_file_writes_a_version():
    with open(os.path.join(ROOT, "pyproject.toml")) as f:
        pyproject = f.read()
    project = pyproject.split("[project]", 1)[1].split("\n[", 1)[0]
    assert not re.search(r"^version\s*=", project, re.M), "pyproject.toml: the version is dynamic (setup.py)"
    assert re.search(r'^dynamic = \["version"\]', project, re.M)
    with open(os.path.join(ROOT, "setup.py")) as f:
        assert not re.search(r"version\s*=\s*['\"]", f.read()), "setup.py reads the version from vocab.py"
