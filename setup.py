"""The packages of the project and their folders, and the optional C cores.

This is the product, the distribution a casino installs: its packages are the architecture
(docs/ARCHITECTURE.md):
  table       firmware/table: the board's pure logic, the same files the board runs
  tablectl    host_tools/tablectl: operations (CLI, service, ledger, link, reconcile)
  tablegames  host_tools/tablegames: game math (cards, games, pay tables, PAR)
The developer's tools (tabledev: virtual boards, bench, jig, faults, demo) are a distribution of
their own, lab/ (lab/setup.py), which adds its verbs to tablectl through entry points; this wheel
carries none of it (tests/host/test_product_without_lab.py builds the wheel and looks).
The board's files (firmware/; which board carries which is tablectl/deploy.py) and the pin maps ride
in the wheel as data of tablectl, so `tablectl flash` works from an installed wheel.

Every C extension is optional: without a compiler the project still installs, and the commands
that need a C core say so in one line. OpenMP is used where the compiler has it.
"""
import os
import re
import shutil
import tempfile

from setuptools import Extension, find_packages, setup
from setuptools.command.build_ext import build_ext

PACKAGE_DIRS = {"": "host_tools", "table": "firmware/table",
                "tablectl.firmware": "firmware", "tablectl.hardware": "hardware"}
BOARD_FOLDERS = ("table", "boards", "drivers", "jig")
PACKAGES = (find_packages("host_tools") + ["table", "tablegames.paytables", "tablectl.firmware",
                                           "tablectl.hardware"]
            + ["tablectl.firmware." + folder for folder in BOARD_FOLDERS])
PACKAGE_DATA = {
    "tablegames.paytables": ["*.json"],
    "tablectl.firmware": ["main.py", "manifest_*.py", "package-*.json"],
    "tablectl.hardware": ["pinmap_*.json"],
}
PACKAGE_DATA.update({"tablectl.firmware." + folder: ["*.py"] for folder in BOARD_FOLDERS})



def _version():
    """The one version of the project: the firmware's (firmware/table/vocab.py FIRMWARE_VERSION),
    which the board reports in its hello; the host package (and the lab, lab/setup.py) is
    released with it."""
    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "firmware", "table", "vocab.py")) as f:
        found = re.search(r'^FIRMWARE_VERSION = "([0-9][0-9A-Za-z.+-]*)"', f.read(), re.M)
    if not found:
        raise RuntimeError("firmware/table/vocab.py has no FIRMWARE_VERSION = \"X.Y.Z\" line")
    return found.group(1)


EXTENSIONS = [
    # exact PAR sheets by enumeration (tablegames/par/); _cdraw.c is included by _kernel.c
    Extension("tablegames.par._kernel", ["host_tools/tablegames/par/_kernel.c"],
              depends=["host_tools/tablegames/par/_cdraw.c"],
              extra_compile_args=["-O3"], optional=True),
    # hand evaluation: lookup tables, batch evaluation, exhaustive enumeration
    Extension("tablegames.poker._fastpoker", ["host_tools/tablegames/poker/_fastpoker.c"],
              depends=["host_tools/tablegames/poker/_fastpoker_offsets.h"],
              extra_compile_args=["-O3", "-std=gnu99", "-Wall"], extra_link_args=["-lpthread"],
              optional=True),
]
OPENMP_EXTENSIONS = {"tablegames.par._kernel"}


def _compiler_has_openmp(compiler):
    """True when this compiler builds and links a file with -fopenmp."""
    folder = tempfile.mkdtemp()
    try:
        src = os.path.join(folder, "omp.c")
        with open(src, "w") as f:
            f.write("#include <omp.h>\nint main(void){return omp_get_max_threads() > 0 ? 0 : 1;}\n")
        objects = compiler.compile([src], output_dir=folder, extra_postargs=["-fopenmp"])
        compiler.link_executable(objects, os.path.join(folder, "omp"), extra_postargs=["-fopenmp"])
        return True
    except Exception:  # noqa: any failure means "no OpenMP here", which is allowed
        return False
    finally:
        shutil.rmtree(folder, ignore_errors=True)


class BuildExt(build_ext):
    def build_extensions(self):
        if self.compiler is not None and _compiler_has_openmp(self.compiler):
            for ext in self.extensions:
                if ext.name in OPENMP_EXTENSIONS:
                    ext.extra_compile_args.append("-fopenmp")
                    ext.extra_link_args.append("-fopenmp")
        super().build_extensions()

    def run(self):
        try:
            super().run()
        except Exception as exc:  # noqa: no compiler at all: install without the C cores
            self.warn("C cores not built (%s): eval, settle and par will say so" % exc)


setup(version=_version(), package_dir=PACKAGE_DIRS, packages=PACKAGES, package_data=PACKAGE_DATA,
      ext_modules=EXTENSIONS, cmdclass={"build_ext": BuildExt})
