"""A minimal test runner for the MicroPython interpreter: runs every test_* function of the
calling module, prints one line per test and a closing 'N passed, N failed' line."""
import sys


def run(namespace):
    passed = 0
    failed = 0
    names = sorted(k for k in namespace if k.startswith("test_"))
    only = sys.argv[1] if len(sys.argv) > 1 else None
    for name in names:
        if only and only != name:
            continue
        try:
            namespace[name]()
            passed += 1
            print("PASS", name)
        except Exception as exc:
            failed += 1
            print("FAIL", name, repr(exc))
            sys.print_exception(exc)
    print("%d passed, %d failed" % (passed, failed))
    if failed:
        sys.exit(1)


def raises(exc_type, fn, *args):
    try:
        fn(*args)
    except exc_type as exc:
        return exc
    raise AssertionError("%s not raised" % exc_type.__name__)
