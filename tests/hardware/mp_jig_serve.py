"""The jig's serve loop on stdin/stdout with fake pins and a jumping clock: the far end of the
host test's pseudo-terminal (test_jig.py). Seat 5 reads as inhibited."""
import sys

from machine import Pin

from jig.main import serve
from jig.proto import JigServer


class JumpClock:
    t = 0

    def now_ms(self):
        return self.t

    def wait_until(self, t_ms):
        self.t = max(self.t, t_ms)


Pin.world[104] = 1
outs = [Pin(90 + i, Pin.OUT, value=0) for i in range(8)]
inhs = [Pin(100 + i, Pin.IN) for i in range(8)]
serve(JigServer(outs, inhs, JumpClock()), sys.stdin, sys.stdout)
