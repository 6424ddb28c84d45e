"""A minimal test runner for the MicroPython interpreter: runs every test_* function of the
calling module, prints one line per test (after the test's own output) and a closing
'N passed, N failed' line.

The same modules also run on CPython (benchmarks/coverage_money.py measures firmware/table/'s
branch coverage that way: MicroPython's unix build has no sys.settrace). A test whose subject
exists only on MicroPython (its heap, say) calls only_on_micropython(reason): on CPython it is
reported as "SKIP name: reason" and counted apart, never as passed."""
import sys

ON_MICROPYTHON = sys.implementation.name == "micropython"


class Skipped(Exception):
    pass


def only_on_micropython(reason):
    """Skip the calling test unless the interpreter is MicroPython; reason says why."""
    if not ON_MICROPYTHON:
        raise Skipped(reason)


def _print_exception(exc):
    if hasattr(sys, "print_exception"):
        sys.print_exception(exc)  # MicroPython
    else:
        import traceback
        traceback.print_exception(type(exc), exc, exc.__traceback__)


def run(namespace):
    passed = 0
    failed = 0
    skipped = 0
    names = sorted(k for k in namespace if k.startswith("test_"))
    import os
    if hasattr(os, "getenv") and os.getenv("TABLE_RAWLOG_SECTORS"):
        # The virtual board journals on the raw flash log (boards/sim.py reads the same variable).
        print("journal on the raw log (%s sectors)" % os.getenv("TABLE_RAWLOG_SECTORS"))
    # Which tests to run: MPTEST_ONLY="test_a,test_b" (tests/firmware/mprunner.py, one pytest item
    # a test), or one name as the first argument (by hand); else all of them.
    only = None
    if hasattr(os, "getenv") and os.getenv("MPTEST_ONLY"):
        only = os.getenv("MPTEST_ONLY").split(",")
    elif len(sys.argv) > 1:
        only = [sys.argv[1]]
    for name in names:
        if only and name not in only:
            continue
        try:
            namespace[name]()
            passed += 1
            print("PASS", name)
        except Skipped as exc:
            skipped += 1
            print("SKIP %s: %s" % (name, exc.args[0]))
        except Exception as exc:
            failed += 1
            # the traceback first, then the result line: everything a test prints comes before its
            # result line, so a reader of the output (mprunner.py) gives each test its own
            _print_exception(exc)
            print("FAIL", name, repr(exc))
    print("%d passed, %d failed" % (passed, failed) + (", %d skipped" % skipped if skipped else ""))
    if failed:
        sys.exit(1)


def raises(exc_type, fn, *args):
    try:
        fn(*args)
    except exc_type as exc:
        return exc
    raise AssertionError("%s not raised" % exc_type.__name__)
