"""The slow target's list (tests/conftest.py SLOW): every entry names a test that exists, and the
fast tests it names, which prove the same behaviour in `make test`, exist and are not slow
themselves, so nothing is proved only by `make test-slow`."""
import os
import re

from conftest import ROOT, SLOW, is_slow


def _exists(nodeid):
    path, _, rest = nodeid.partition("::")
    full = os.path.join(ROOT, path)
    if not os.path.isfile(full):
        return False
    if not rest:
        return True
    name = rest.split("::")[-1].split("[")[0]
    with open(full) as f:
        return re.search(r"^\s*def %s\(" % re.escape(name), f.read(), re.M) is not None


def test_every_slow_entry_names_a_test_that_exists():
    missing = [n for n in SLOW if not _exists(n)]
    assert not missing, missing


def test_every_slow_entry_names_fast_tests_of_the_same_behaviour_that_make_test_runs():
    for slow, fast in SLOW.items():
        assert fast, "%s: no fast test named" % slow
        for nodeid in fast:
            assert _exists(nodeid), "%s: %s does not exist" % (slow, nodeid)
            assert not is_slow(nodeid), "%s: %s is slow too" % (slow, nodeid)
