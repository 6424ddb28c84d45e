"""Coin pulses through the PIO back end while the Pico's CPU is stopped, on the MicroPython v1.24.1
Pico build (emulated RP2040): the state machine keeps timing pulses with nobody reading them.

drivers/pio_pulse.py: one word per pulse into an RX FIFO joined to 8 entries, so 8 pulses wait
out any stall; a 9th is lost, and never silently: the CoinDecoder reports LOST with how many.
(benchmarks/bench_pico.py decode runs 10,000 tokens through real littlefs flushes; this is the
short version with the stall made exact: interrupts off and a busy loop, as a flash erase does.)"""
import os
import sys
import threading
import time

import pytest

from picokit import needs_image, IMAGE

pytestmark = needs_image

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))),
                                "benchmarks"))

HARNESS = r'''
import time, machine, json
from boards.pico import PicoBoard
from table.pulse import CoinDecoder
b = PicoBoard()
src = b.pulse_sources[0]
dec = CoinDecoder(1, 10, 150, 300, 2000)

def stall(ms):
    # What a sector erase does to the CPU: interrupts off, nothing else runs.
    st = machine.disable_irq()
    t = time.ticks_us()
    while time.ticks_diff(time.ticks_us(), t) < ms * 1000:
        pass
    machine.enable_irq(st)

def drain(res):
    pulses = []
    out = []
    src.poll(b.now_ms(), pulses)
    for e, w in pulses:
        dec.pulse(e, w, out)
    res.append([[w for e, w in pulses], [o for o, d in out], [d for o, d in out]])

res = []
for k in range(2):
    b.led.value(1)  # stalling now: the bench plays the pulses
    stall(1500)
    b.led.value(0)
    drain(res)
    time.sleep_ms(300)  # long enough for the bench to see the LED off
t = time.ticks_ms()
while time.ticks_diff(time.ticks_ms(), t) < 1500:  # the pulse that tells how many were lost
    time.sleep_ms(10)
drain(res)
print("RESULT" + json.dumps({"polls": res, "lost": src.edges_lost()}))
'''


def _train(n, width_ms=40, gap_ms=40):
    """n pulses at the fastest an acceptor pulses (40 ms on, 40 ms off: docs/FIRMWARE.md)."""
    edges = []
    for i in range(n):
        t = i * (width_ms + gap_ms)
        edges += [[0, 1, t], [0, 0, t + width_ms]]
    return edges


@pytest.mark.timeout(1500)  # two boots (the second into the REPL) and 3 s of emulated stalls
def test_eight_pulses_wait_out_a_stall_and_a_ninth_is_reported_lost_not_miscounted(tmp_path):
    from bench_pico import EmulatedPico, last_json
    s = EmulatedPico(str(tmp_path / "stall"), IMAGE)
    try:
        s.ready()
        rig = s.rig
        led = rig.pinmap["pins"][rig.pinmap["status_led"]]["gpio"]
        result = {}
        th = threading.Thread(target=lambda: result.update(out=s.repl(HARNESS, timeout_s=1800)), daemon=True)
        th.start()

        def wait_led(value, timeout_s=900):
            deadline = time.monotonic() + timeout_s
            while rig.call_sync(lambda: rig.mcu.gpio[led].output_value) != value:
                assert time.monotonic() < deadline, "the harness did not reach its stall"
                time.sleep(0.05)

        while rig.outputs()["mode"] != "repl":
            time.sleep(0.2)
        wait_led(True)
        rig.feed_edges(_train(8))  # 640 ms of pulses inside a 1500 ms stall
        wait_led(False)
        wait_led(True)
        rig.feed_edges(_train(11))  # 3 more than the FIFO holds
        wait_led(False)
        rig.feed_edges(_train(1))
        th.join(1800)
        r = last_json(result["out"][0])
    finally:
        s.close()
    first, second, third = r["polls"]
    assert len(first[0]) == 8, first  # nothing lost
    assert all(38 <= w <= 42 for w in first[0]), first  # every width measured through the stall
    assert first[1] == ["coin"] * 8, first
    # the second stall: the 8 that fit, then the loss marked where it happened
    assert all(38 <= w <= 42 for w in second[0][:8]) and second[0][8:] == [-1], second
    assert second[1] == ["coin"] * 8 + ["lost"], second
    # the next pulse's number says two more were lost before it: 3 in all, all reported
    assert third[0][0] == -2 and 38 <= third[0][1] <= 42 and len(third[0]) == 2, third
    assert third[1] == ["lost", "coin"], third
    assert r["lost"] == 3
