"""What the bench says happened on the emulated Pico, happened.

A token dropped right after a power cut, while the Pico boots, fell on pins nobody counted yet:
the bench said "sent: 1" and exited 0, the meter never moved. The bench now waits (saying so)
until the firmware's counters run, then drops the token, which the service records."""
import json
import os
import subprocess
import sys
import time

import pytest

from picokit import PicoBoard, needs_image
from tabledev import procs

pytestmark = needs_image

TABLECTL = [sys.executable, "-m", "tablectl.cli"]
SLOW = {"TABLECTL_LINK_TIMEOUT_S": "300"}


def _tablectl(*args, timeout=900):
    env = dict(os.environ, **SLOW)
    return subprocess.run(TABLECTL + [str(a) for a in args], capture_output=True, text=True, timeout=timeout, env=env)


def _meters(db, deadline_s=600):
    deadline = time.monotonic() + deadline_s
    while True:
        p = _tablectl("meters", "--json", "--db", db)
        if p.returncode == 0:
            return json.loads(p.stdout)
        assert time.monotonic() < deadline, p.stderr
        time.sleep(2)


@pytest.mark.timeout(3600)  # two boots of the emulated Pico: minutes each on a shared machine
def test_a_coin_right_after_a_power_cut_waits_for_the_boot_and_is_credited(tmp_path):
    board = PicoBoard(tmp_path)
    serve = log = None
    try:
        board.wait_ready(timeout_s=1500)
        os.environ.update(SLOW)  # the service below reads it
        try:
            serve, log = procs.start_serve(board.port, str(tmp_path / "pico.db"), str(tmp_path / "serve.log"))
        finally:
            os.environ.pop("TABLECTL_LINK_TIMEOUT_S")
        db = str(tmp_path / "pico.db")
        before = _meters(db)
        board.bench.power_cut()
        coin = _tablectl("bench", "--json", "--state", board.state, "coin", "2")
        assert coin.returncode == 0, coin.stderr
        assert "booting" in coin.stderr  # the wait was said, not silent
        board.wait_ready(timeout_s=1500, after_boots=2)
        deadline = time.monotonic() + 600
        while True:
            after = _meters(db)
            if after["tokens_per_seat"][1] == before["tokens_per_seat"][1] + 1 or time.monotonic() > deadline:
                break
            time.sleep(2)
        assert after["tokens_per_seat"][1] == before["tokens_per_seat"][1] + 1, (before, after, coin.stderr)
        assert after["meter_cents"] > before["meter_cents"]
    finally:
        procs.stop(serve)
        if log is not None:
            log.close()
        board.close()
