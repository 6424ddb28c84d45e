"""Bench jig firmware (a second Pico): pulse trains on command over its USB serial port.

Deploy: copy this file (as main.py), firmware/jig/proto.py (as jig/proto.py) and
hardware/pinmap_jig.json (as pinmap.json) to the jig Pico's filesystem root:

    mpremote mkdir :jig + cp firmware/jig/proto.py :jig/proto.py + cp firmware/jig/main.py :main.py \
             + cp hardware/pinmap_jig.json :pinmap.json + reset

Then talk to it one line at a time (hardware/BENCH.md; host side: tabledev.jig.Jig).
"""
import json
import sys
import time

from machine import Pin

from jig.proto import JigServer


class TicksClock:
    """Milliseconds from ticks_ms, waits by spinning: the jig has nothing else to do, and a spin
    keeps edges within tens of microseconds of their planned times."""

    def __init__(self):
        self._t0 = time.ticks_ms()

    def now_ms(self):
        return time.ticks_diff(time.ticks_ms(), self._t0)

    def wait_until(self, t_ms):
        while time.ticks_diff(t_ms, self.now_ms()) > 0:
            pass


def build(pinmap):
    pins = pinmap["pins"]
    jig = pinmap["jig"]
    # value=0 before the pin becomes an output: no stray pulse at boot. The ULN2803 inputs
    # also have pull-downs, so a jig in reset pulls no COIN line.
    outs = [Pin(pins[n]["gpio"], Pin.OUT, value=0) for n in jig["pulse"]]
    inhs = [Pin(pins[n]["gpio"], Pin.IN) for n in jig["inhibit"]]
    led = Pin(pins[jig["led"]]["gpio"], Pin.OUT, value=0) if jig.get("led") else None
    return JigServer(outs, inhs, TicksClock(), led, jig.get("inhibit_level", 1))


def serve(server, stdin=None, stdout=None):
    stdin = stdin or sys.stdin
    stdout = stdout or sys.stdout
    while True:
        line = stdin.readline()
        if not line:
            return
        line = line.strip()
        if not line:
            continue
        stdout.write(server.handle(line) + "\n")


def main():
    with open("pinmap.json") as f:
        pinmap = json.load(f)
    serve(build(pinmap))


if __name__ == "__main__":
    main()
