"""tests/vectors/protocol_vectors.json on CPython, through the host's table.protocol (which loads
the firmware's protocol.py). The same checks run on MicroPython: tests/firmware/mp_test_protocol_vectors.py."""
import importlib.util
import json
import os

import pytest

from table import protocol as proto

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
VECTORS = os.path.join(ROOT, "tests", "vectors", "protocol_vectors.json")

_spec = importlib.util.spec_from_file_location("protovectors", os.path.join(ROOT, "tests", "firmware", "protovectors.py"))
protovectors = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(protovectors)
V = protovectors.load(VECTORS)


@pytest.mark.parametrize("check", protovectors.CHECKS, ids=lambda f: f.__name__)
def test_vectors(check):
    check(proto, V)


def test_host_encodes_the_exact_vector_bytes():
    """CPython keeps insertion order, so the host's encoder reproduces the vector bytes exactly
    (MicroPython's dicts are unordered: there only the decoded message is compared)."""
    key = bytes.fromhex(V["test_key"])
    for case in V["good_frames"]:
        if case.get("version", 1) != proto.VERSION:
            continue
        wire = proto.encode_frame(case["message"], key if case["signed"] else None)
        assert wire.hex() == case["wire"], case["name"]


def test_vectors_file_is_what_the_generator_writes(tmp_path):
    """The data file is generated, never hand-edited: regenerate and compare."""
    gen = os.path.join(ROOT, "tests", "vectors", "make_protocol_vectors.py")
    spec = importlib.util.spec_from_file_location("make_vectors", gen)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    assert json.loads(json.dumps({"good": mod.good_frames(), "bad": mod.bad_frames(), "cobs": mod.cobs_vectors()})) \
        == {"good": V["good_frames"], "bad": V["bad_frames"], "cobs": V["cobs"]}


def test_every_check_is_in_the_shared_list():
    """A check_* left out of protovectors.CHECKS would run on neither interpreter."""
    defined = sorted(n for n in dir(protovectors) if n.startswith("check_"))
    assert defined == sorted(fn.__name__ for fn in protovectors.CHECKS)
