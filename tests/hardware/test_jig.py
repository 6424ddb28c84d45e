"""The host's Jig class against the jig firmware's own serve loop, running on MicroPython at the
far end of a pseudo-terminal (as a real jig sits behind /dev/ttyACMn)."""
import os
import subprocess

import pytest
import serial

from conftest import FIRMWARE, ROOT, micropython_path
from tabledev.jig import Jig, JigError

HERE = os.path.dirname(os.path.abspath(__file__))


@pytest.fixture
def jig():
    master, slave = os.openpty()
    env = dict(os.environ, MICROPYPATH=":".join([os.path.join(HERE, "mpfakes"), FIRMWARE,
                                                   os.path.join(ROOT, "tests", "firmware")]))
    proc = subprocess.Popen([micropython_path(), os.path.join(HERE, "mp_jig_serve.py")],
                            stdin=master, stdout=master, cwd=HERE, env=env)
    port = serial.Serial(os.ttyname(slave), 115200, timeout=0.2)
    try:
        yield Jig(port, timeout_s=5.0)
    finally:
        port.close()
        proc.kill()
        proc.wait()
        os.close(master)
        os.close(slave)


def test_ping_coin_inhibits(jig):
    assert jig.ping() == {"version": 1, "seats": 8}
    assert jig.coin(3, count=2, width_ms=50, gap_ms=50) == {"sent": 2, "refused": 0}
    assert jig.coin("*", count=1, width_ms=30, gap_ms=30, glitches=2, pulses=3) == {"sent": 7, "refused": 1}
    assert jig.coin(5, force=True) == {"sent": 1, "refused": 0}
    assert jig.inhibits() == [False] * 4 + [True] + [False] * 3
    jig.hold(2, 2500)


def test_refusal_becomes_an_error(jig):
    with pytest.raises(JigError, match="seat out of range"):
        jig.coin(9)


def test_silence_is_an_error():
    port = serial.serial_for_url("loop://", timeout=0.05)
    port.write(b"")  # nobody answers but our own echo: loop:// returns what we send
    j = Jig(port, timeout_s=0.3)
    with pytest.raises(JigError, match="jig sent"):
        j.ping()
