# MicroPython side of benchmarks/fuzz_protocol.py: argv = frames seed. Prints one JSON line.
import json
import sys
import time

import fuzzkit
from table import protocol as proto
from simkit import Rig

n = int(sys.argv[1])
seed = int(sys.argv[2])
out = {}
t0 = time.ticks_ms()
out["reader"] = fuzzkit.fuzz_reader(proto, n, seed)
out["reader"]["s"] = time.ticks_diff(time.ticks_ms(), t0) / 1000
rig = Rig("fuzzbench")
rig.run_ms(50)
t0 = time.ticks_ms()
out["app"] = fuzzkit.fuzz_app(rig.app, rig.board, proto, n, seed + 1, now_ms=rig.board.now_ms())
out["app"]["s"] = time.ticks_diff(time.ticks_ms(), t0) / 1000
print(json.dumps(out))
