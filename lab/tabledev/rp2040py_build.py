"""rp2040py rebuilt from its own PyPI source against CPython's full C API (`make pico-emulator`).

PyPI's rp2040py wheel for CPython 3.11 is a stable-ABI (abi3) build. Under the limited API, Cython
cannot cache its check for a Python override of a `cpdef` method, so every call the emulated core
makes into the chip (an instruction fetch, a load, a store) looks the method up by name and builds
a bound method first: in a profile of the emulator, most of the time was CPython's attribute and
call machinery, not the emulated core. The package's setup.py has no switch for it (it builds abi3
on every CPython >= 3.11), so this module takes the same version's sdist from PyPI, turns that one
condition off in the unpacked copy, builds the wheel and installs it over the stable-ABI one. Same
source, same behaviour, less CPU per emulated second than the wheel (the figure:
docs/BENCHMARKS.md, `benchmarks/bench_pico.py emulator`; lab/tabledev/EMULATOR.md).

    python -m tabledev.rp2040py_build          # build and install into this interpreter
    python -m tabledev.rp2040py_build --check  # say which build is installed
"""
import argparse
import glob
import importlib.metadata
import os
import subprocess
import sys
import tarfile
import tempfile
import time

# The one condition in rp2040py's setup.py that picks the stable ABI on CPython >= 3.11.
LIMITED_API_LINE = "USE_LIMITED_API = ("


def installed_build():
    """'full API', 'stable ABI (abi3)' or 'pure Python': how the installed rp2040py's core runs."""
    try:
        from rp2040py.native import _cortex_m0_core
    except ImportError:
        return "pure Python"
    return "stable ABI (abi3)" if ".abi3." in os.path.basename(_cortex_m0_core.__file__) else "full API"


def full_api_setup_py(text, version):
    """rp2040py's setup.py with the stable ABI turned off; refuses one that does not choose it
    the way this was written against (a new version: look before building)."""
    if text.count(LIMITED_API_LINE) != 1:
        raise SystemExit("rp2040py build: setup.py of %s does not have the line %r once; this "
                         "version chooses its ABI some other way, look before building" % (version, LIMITED_API_LINE))
    return text.replace(LIMITED_API_LINE, "USE_LIMITED_API = False and (")


def _run(cmd, cwd=None, what="working"):
    """Run a step, saying what it is and, while it runs, how long it has taken (compiling the
    emulator's C takes minutes: 8 min 48 s on a loaded 2-core machine, silent before)."""
    from tablectl.progress import Ticker
    print("rp2040py build: %s" % what, flush=True)
    ticker = Ticker("rp2040py build: %s" % what, stream=sys.stdout, pipe_every_s=30)
    with tempfile.TemporaryFile("w+") as out:
        proc = subprocess.Popen(cmd, cwd=cwd, stdout=out, stderr=subprocess.STDOUT, text=True)
        while proc.poll() is None:
            time.sleep(0.5)
            ticker.tick()
        ticker.done()
        out.seek(0)
        text = out.read()
    if proc.returncode != 0:
        raise SystemExit("rp2040py build: %s failed (exit %d):\n%s"
                         % (" ".join(cmd[:4]), proc.returncode, text[-3000:]))
    return text


def build_and_install(version=None):
    version = version or importlib.metadata.version("rp2040py")
    pip = [sys.executable, "-m", "pip"]
    with tempfile.TemporaryDirectory(prefix="rp2040py-build-") as work:
        _run(pip + ["download", "--no-deps", "--no-binary", ":all:", "-d", work, "rp2040py==%s" % version],
             what="fetching the rp2040py %s source" % version)
        sdists = glob.glob(os.path.join(work, "rp2040py-*.tar.gz"))
        if len(sdists) != 1:
            raise SystemExit("rp2040py build: expected one sdist of %s, found %r" % (version, sdists))
        with tarfile.open(sdists[0]) as tar:
            tar.extractall(work, filter="data")
        src = os.path.join(work, "rp2040py-%s" % version)
        setup_py = os.path.join(src, "setup.py")
        with open(setup_py) as f:
            text = f.read()
        with open(setup_py, "w") as f:
            f.write(full_api_setup_py(text, version))
        wheels = os.path.join(work, "wheels")
        _run(pip + ["wheel", "--no-deps", "-w", wheels, src],
             what="compiling the emulator for CPython's full API (minutes; a C compiler at work)")
        built = glob.glob(os.path.join(wheels, "rp2040py-*.whl"))
        if len(built) != 1 or "abi3" in os.path.basename(built[0]):
            raise SystemExit("rp2040py build: no full-API wheel came out: %r" % built)
        _run(pip + ["install", "--no-deps", "--force-reinstall", built[0]], what="installing the build")
    check = subprocess.run([sys.executable, "-m", "tabledev.rp2040py_build", "--check"],
                           stdout=subprocess.PIPE, text=True)
    if "full API" not in check.stdout:
        raise SystemExit("rp2040py build: installed, but the interpreter loads: %s" % check.stdout.strip())
    print("rp2040py %s: full API build installed" % version)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="say which rp2040py build this interpreter loads")
    args = ap.parse_args(argv)
    if args.check:
        print("rp2040py %s: %s" % (importlib.metadata.version("rp2040py"), installed_build()))
        return
    build_and_install()


if __name__ == "__main__":
    main()
