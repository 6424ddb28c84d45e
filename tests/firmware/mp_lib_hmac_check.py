# Run by test_micropython_lib.py on MicroPython with micropython-lib's hmac on the path
# (MICROPYTHON_LIB/python-stdlib/hmac): the board's MacKey must give the same MAC as that
# independent HMAC for every key length (short, one block, longer than a block) and message.
import hashlib
import time

import hmac
from table import protocol as proto

checked = 0
for key_len in (1, 16, 32, 63, 64, 65, 100):
    key = bytes((i * 7 + key_len) & 0xFF for i in range(key_len))
    mac_key = proto.MacKey(key)
    for msg_len in (0, 1, 55, 56, 64, 150, 1024):
        msg = bytes((i * 13 + msg_len) & 0xFF for i in range(msg_len))
        ours = mac_key.mac(msg)
        theirs = hmac.new(key, msg, hashlib.sha256).digest()
        assert ours == theirs, (key_len, msg_len)
        checked += 1
key = b"k" * 32
msg = b"x" * 150
mac_key = proto.MacKey(key)
n = 2000
t0 = time.ticks_us()
for _ in range(n):
    mac_key.mac(msg)
ours_us = time.ticks_diff(time.ticks_us(), t0) / n
t0 = time.ticks_us()
for _ in range(n):
    hmac.new(key, msg, hashlib.sha256).digest()
theirs_us = time.ticks_diff(time.ticks_us(), t0) / n
print("checked %d; MacKey %.1f us, micropython-lib hmac %.1f us per 150-byte frame" % (checked, ours_us, theirs_us))
