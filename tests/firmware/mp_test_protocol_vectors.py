"""tests/vectors/protocol_vectors.json on MicroPython, through the firmware's own protocol module.
The same checks run on CPython in tests/protocol/test_vectors.py: one test per entry of
protovectors.CHECKS."""
import mptest
import protovectors
from table import protocol as proto

# The runner's cwd is tests/firmware.
V = protovectors.load("../vectors/protocol_vectors.json")



def _test(check):
    return lambda: check(proto, V)


# One test per check in the shared list, so this module cannot fall behind it.
for _check in protovectors.CHECKS:
    globals()["test_" + _check.__name__[len("check_"):]] = _test(_check)


def test_every_check_is_in_the_shared_list():
    """A check_* written in protovectors.py but left out of CHECKS would run on neither
    interpreter; and every check in CHECKS got its test here."""
    defined = sorted(n for n in dir(protovectors) if n.startswith("check_"))
    listed = sorted(fn.__name__ for fn in protovectors.CHECKS)
    assert defined == listed, (defined, listed)
    for name in listed:
        assert ("test_" + name[len("check_"):]) in globals(), name


mptest.run(globals())
