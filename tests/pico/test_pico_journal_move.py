"""The raw flash log on the real MicroPython Pico build (emulated RP2040): a board that journaled on
littlefs files is given a pin map that asks for the raw log (as `tablectl flash` of a new pin map
leaves it), makes its reserve itself at the next boot (drivers/rawflash.py provision, on the real
littlefs), keeps the files until the host has acknowledged every event in them, moves, and boots
again on the raw log with the same meters. The unix-port proofs (a cut at each of the move's
flash operations) are tests/firmware/mp_test_journal_move.py; this is the same move on the
Pico's own filesystem and flash."""
import json
import os
import time

import pytest

from picokit import IMAGE, needs_image
from table import protocol as proto
from tabledev.emulated_pico import EmulatedPico
from tabledev.pico_sim import PINMAP, read_fs_files, write_fs_files

pytestmark = needs_image

SECTORS = 8  # a small reserve: the board writes it through littlefs at its boot (192 would take minutes here)


class Board(EmulatedPico):
    """An emulated Pico in this process on a kept state directory; the board makes its reserve
    itself (not the host's image), and a host end that acknowledges what it receives."""

    top = 0

    def __init__(self, state, pinmap_path):
        EmulatedPico.__init__(self, state, IMAGE, pinmap_path=pinmap_path, host_provisions=False)

    def ready(self, timeout_s=900):
        EmulatedPico.ready(self, timeout_s=timeout_s)
        self.connect()

    def command(self, name, args=None):
        return self.link.command(name, args, timeout_s=300, on_message=self._heard)

    def meters(self):
        """The board's meters (the reply without its envelope: id, type, ok)."""
        reply = self.command("meters")
        return {k: v for k, v in reply.items() if k not in ("id", "t", "ok")}

    def _heard(self, msg):
        if msg.get("t") == proto.EVENT and isinstance(msg.get("q"), int):
            self.top = max(self.top, msg["q"])

    def ack_everything(self, timeout_s=900):
        """As the service does: acknowledge the events it has received, until the board holds
        none unacknowledged (what the host missed, the board sends again)."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            for msg in self.link.read():
                self._heard(msg)
            if self.top:
                self.link.send(proto.ack(self.top))
            status = self.command("status")
            if status["unacked"] == 0:
                return status
        raise AssertionError("events still unacknowledged")


@pytest.mark.timeout(3600)  # three boots of the emulated Pico (the second makes the reserve), about 10 minutes here
def test_a_pico_journaling_on_files_moves_to_the_raw_log_after_a_new_pin_map(tmp_path):
    state = str(tmp_path / "pico")
    with open(PINMAP) as f:
        pinmap = json.load(f)
    on_files = dict(pinmap)
    on_files.pop("raw_log_sectors", None)
    files_path = str(tmp_path / "pinmap_files.json")
    with open(files_path, "w") as f:
        json.dump(on_files, f)
    raw = dict(pinmap, raw_log_sectors=SECTORS)
    raw_bytes = json.dumps(raw).encode()
    raw_path = str(tmp_path / "pinmap_raw.json")
    with open(raw_path, "wb") as f:
        f.write(raw_bytes)

    # Life 1: the files journal, a token, everything acknowledged.
    board = Board(state, files_path)
    try:
        board.ready()
        assert board.command("status")["journal"] == "files"
        board.bench.coins({0: 1, 3: 1}, width_ms=50, coin_gap_ms=400)
        board.ack_everything()
        before = board.meters()
        assert before["seat_coins"][0] == 1 and before["seat_coins"][3] == 1
        next_seq = board.command("status")["next_seq"]
    finally:
        board.close()

    # The technician flashes the pin map that asks for the raw log (the kept flash, rewritten).
    fs_path = os.path.join(state, "flash_fs.img")
    with open(fs_path, "rb") as f:
        image = f.read()
    with open(fs_path, "wb") as f:
        f.write(write_fs_files(board.rig.layout, image, {"pinmap.json": raw_bytes}))

    # Life 2: the board makes its reserve, boots on the files, and moves once all is acknowledged.
    board = Board(state, raw_path)
    try:
        board.ready()
        status = board.command("status")
        assert status["faults"] == [], status["fault_detail"]
        assert status["journal"] in ("files, moving to the raw log", "raw log")
        status = board.ack_everything()
        for _ in range(20):
            if status["journal"] == "raw log":
                break
            status = board.ack_everything()
        assert status["journal"] == "raw log", status["journal"]
        assert status["next_seq"] > next_seq
        moved = board.meters()
        assert moved == before
        board.bench.coins({5: 1}, width_ms=50, coin_gap_ms=400)
        board.ack_everything()
        after = board.meters()
        assert after["seat_coins"][5] == 1
    finally:
        board.close()
    files = read_fs_files(board.rig.layout, open(fs_path, "rb").read())
    assert "data/rawlog/map.json" in files and len(json.loads(files["data/rawlog/map.json"])["blocks"]) == SECTORS
    assert not [n for n in files if n in ("data/ck_a", "data/ck_b") or (n.startswith("data/j") and n.endswith(".log"))]

    # Life 3: a cold boot on the raw log alone, the meters as they were.
    board = Board(state, raw_path)
    try:
        board.ready()
        status = board.command("status")
        assert status["journal"] == "raw log" and status["faults"] == []
        assert board.meters() == after
    finally:
        board.close()
