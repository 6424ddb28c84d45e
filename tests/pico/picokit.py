"""Helpers for tests/pico: the emulated Pico (tablectl sim --board pico), the MicroPython v1.24.1 Pico build on rp2040py.

Without the image ($PICO_UF2, or `make pico-image`) every test here is skipped with one line
saying how to get it. One board boots per module (a boot is about 30 s of wall time: the emulated
core runs some 20 times slower than a Pico), and the tests in a module share it in order."""
import os
import sys
import time

import pytest

from tabledev import procs
from tabledev.bench import Bench
from tablectl.link import BoardLink, open_port
from tabledev.pico_sim import HOW_TO_GET_IMAGE, image_path

IMAGE = image_path(required=False)
needs_image = pytest.mark.skipif(IMAGE is None, reason=HOW_TO_GET_IMAGE)


class PicoBoard:
    """A `tablectl sim --board pico` process, its bench and a link on its port."""

    def __init__(self, tmp, name="pico"):
        self.state = str(tmp / name)
        self.proc, self.log = procs.start(["sim", "--board", "pico", "--state", self.state, "--image", IMAGE],
                                          str(tmp / (name + ".log")))
        line = self.proc.stdout.readline()
        assert line.startswith("port "), "tablectl sim --board pico did not start: %r" % line
        self.port = line.split()[1]
        self.bench = Bench(self.state, timeout_s=120)
        self.ser = None
        self.link = None

    def wait_ready(self, timeout_s=300, after_boots=1):
        """Until the controller shows its meter (booted, journal replayed, outputs driven)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            reply = self.bench.request("outputs")
            out = reply["outputs"]
            if reply["boots"] >= after_boots and out["mode"] == "app" and out["meter"] is not None:
                return out
            time.sleep(0.3)
        raise AssertionError("the emulated Pico did not become ready within %d s" % timeout_s)

    def connect(self):
        if self.ser is not None:
            self.ser.close()
        self.ser = open_port(self.port)
        self.link = BoardLink(self.ser)
        self.link.hello(timeout_s=60)
        return self.link

    def command(self, name, args=None, timeout_s=60):
        return self.link.command(name, args, timeout_s=timeout_s)

    def close(self):
        if self.ser is not None:
            self.ser.close()
        self.bench.close()
        procs.stop(self.proc, timeout_s=20)
        self.log.close()
