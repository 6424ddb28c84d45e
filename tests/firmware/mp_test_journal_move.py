"""A board that journaled on littlefs files and is then given the raw flash log (a pin map with
raw_log_sectors, on firmware that has it) moves its journal there (table/app.py open_journal,
move_to_raw_log), on MicroPython.

The rule, as docs/FIRMWARE.md states it: the files stay the journal until the host has
acknowledged every event in them; then the state at that point goes into the raw log's first
checkpoint, numbered on from the files' next event, and the files are removed. The raw
checkpoint, written last, is what makes the move: a cut before it leaves the files as the
journal, a cut after it leaves files that the next boot removes. So a move cut at any flash
operation loses no event, numbers none twice and never lowers a meter."""
import json

import mptest
from boards.sim import SimBoard, SimNv
from boards.simflash import PowerCut, SimNorFlash
from simkit import Rig
from table import protocol as proto
from table.journal import Journal
from table.rawjournal import RawJournal


class CutNv(SimNv):
    """littlefs files that lose power at the `left`-th flash operation from now (a write or
    append keeps half its bytes; a remove does not happen). `ops` counts the operations."""

    def __init__(self, root, board, left):
        SimNv.__init__(self, root, board)
        self.left = left
        self.ops = 0
        self.dead = False

    def spend(self):
        if self.dead:
            raise PowerCut("off")
        self.ops += 1
        if self.left is not None:
            self.left -= 1
            if self.left < 0:
                self.dead = True
                return True
        return False

    def write(self, name, data):
        if isinstance(data, tuple):
            data = b"".join(data)
        if self.spend():
            self.close(name)
            with open(self.path(name), "wb") as f:
                f.write(data[:len(data) // 2])
            raise PowerCut(name)
        SimNv.write(self, name, data)

    def append(self, name, data):
        if self.spend():
            SimNv.append(self, name, data[:len(data) // 2])
            raise PowerCut(name)
        SimNv.append(self, name, data)

    def remove(self, name):
        if self.spend():
            raise PowerCut(name)
        SimNv.remove(self, name)


class CutNor(SimNorFlash):
    """The raw log's chip on the same power as CutNv: a program keeps half its bytes (the byte at
    the cut half programmed), an erase half the sector."""

    def __init__(self, path, sectors, nv):
        SimNorFlash.__init__(self, path, sectors)
        self.nv = nv

    def program(self, sector, offset, data):
        if self.nv.spend():
            self.arm_cut(program_bytes=len(data) // 2)
        SimNorFlash.program(self, sector, offset, data)

    def erase(self, sector):
        if self.nv.spend():
            self.arm_cut(erase_bytes=2048)
            SimNorFlash.erase(self, sector)
            raise PowerCut("erase")
        SimNorFlash.erase(self, sector)


class MoveRig(Rig):
    """A board journaling on files (raw=False), or given a raw log of 8 sectors (raw=True); with
    `cut_after`, its flash loses power at that operation. Every event the host end receives is
    kept (`heard`: seq -> what identifies it), to find a number used twice."""
    raw = False
    cut_after = None

    def boot(self, config=None):
        self.session = None
        self.board = SimBoard(self.dir, "sim-move", 8, 8, "pio")
        self.board.nv = CutNv(self.dir + "/data", self.board, self.cut_after)
        if self.raw:
            self.board.log_device = CutNor(self.dir + "/data/rawlog.bin", 8, self.board.nv)
        self.board.warp_ms = getattr(self, "now", 0) + 1000
        self.app = None
        self.app = TableAppOf(self.board)

    def _host_read(self):
        if not hasattr(self, "heard"):
            self.heard = {}
            self.twice = []
            self.every = proto.FrameReader()
        if self.board.tx:
            for frame in self.every.feed(bytes(self.board.tx)):
                msg = frame.message
                if msg["t"] == proto.EVENT:
                    what = (msg["k"], msg["ms"], msg.get("seat"))
                    old = self.heard.get(msg["q"])
                    if old is None:
                        self.heard[msg["q"]] = what
                    elif old != what:
                        self.twice.append((msg["q"], old, what))
        Rig._host_read(self)

    def step_until_moved(self, ms=400):
        self.hello()
        for _ in range(ms // 20):
            self.ack_all()
            self.run_ms(20)
            if isinstance(self.app.journal, RawJournal):
                return True
        return False


def TableAppOf(board):
    from table.app import TableApp
    return TableApp(board, board.now_ms())


def _files_board_with_tokens(name):
    """A board on files: tokens on four seats, a round closed, everything acknowledged."""
    rig = MoveRig(name)
    rig.hello()
    for seat in (0, 2, 3, 6):
        rig.coin(seat)
    rig.run_ms(300)
    now = rig.board.now_ms()
    rig.app.key_pressed(now, "lock")
    rig.app.key_pressed(now, "unlock")
    rig.coin(1)
    rig.run_ms(300)
    rig.ack_all()
    rig.run_ms(20)
    assert isinstance(rig.app.journal, Journal)
    return rig


def _meters(app):
    return json.dumps(app.meters())


def test_a_files_journal_moves_to_the_raw_log_once_the_host_has_every_event():
    rig = _files_board_with_tokens("mv_plain")
    before = _meters(rig.app)
    next_seq = rig.app.journal.next_seq
    rig.raw = True
    rig.boot()
    # Booted on the files: the boot event is not acknowledged yet, so nothing has moved.
    assert isinstance(rig.app.journal, Journal)
    assert rig.command("status")["journal"] == "files, moving to the raw log"
    assert rig.step_until_moved()
    assert "storage" not in rig.app.faults
    names = rig.board.nv.names()
    assert not [n for n in names if n in ("ck_a", "ck_b") or n.endswith(".log")], names
    assert _meters(rig.app) == before
    assert rig.command("status")["journal"] == "raw log"
    # Numbers go on from the files' (the boot event took next_seq, the snapshot the one after).
    rig.coin(4)
    rig.run_ms(300)
    coin = rig.kinds("coin")[-1]
    assert coin["q"] > next_seq
    assert sorted(rig.heard) == list(range(1, max(rig.heard) + 1))
    assert not rig.twice
    # And the raw log is the journal after a boot, with the same meters.
    after = _meters(rig.app)
    rig.boot()
    assert isinstance(rig.app.journal, RawJournal)
    assert _meters(rig.app) == after and "storage" not in rig.app.faults


def test_unacknowledged_events_stay_on_the_files_until_the_host_has_them():
    rig = _files_board_with_tokens("mv_unacked")
    rig.coin(5)
    rig.run_ms(300)
    waiting = rig.app.journal.unacked_count()
    assert waiting >= 1
    rig.raw = True
    rig.boot()
    rig.run_ms(500)  # no host: nothing acknowledged, nothing moves
    assert isinstance(rig.app.journal, Journal)
    assert rig.app.journal.unacked_count() >= waiting
    rig.events = []
    rig.seen = {}
    assert rig.step_until_moved()
    # The token made before the boot reached the host, from the files, before the move.
    assert [e for e in rig.kinds("coin") if e["seat"] == 5]
    assert rig.app.meters()["seat_coins"][5] == 1


def test_a_board_without_the_raw_log_keeps_its_files_journal():
    rig = _files_board_with_tokens("mv_none")
    rig.step_until_moved(200)
    assert isinstance(rig.app.journal, Journal) and not rig.app.journal_moves
    assert rig.command("status")["journal"] == "files"


def test_a_move_the_flash_refuses_leaves_the_files_as_the_journal():
    rig = _files_board_with_tokens("mv_refused")
    before = _meters(rig.app)
    rig.raw = True
    rig.boot()

    def refuse(*args):
        raise OSError(5)
    rig.board.log_device.erase = refuse
    rig.board.log_device.program = refuse
    assert not rig.step_until_moved(200)
    assert isinstance(rig.app.journal, Journal) and "storage" not in rig.app.faults
    assert "move to the raw log failed" in rig.command("status")["journal"]
    rig.coin(2)
    rig.run_ms(300)
    assert rig.app.meters()["seat_coins"][2] == 2
    rig.boot()  # a boot tries again, with a flash that works
    assert rig.step_until_moved()
    assert _meters(rig.app) != before and rig.app.meters()["seat_coins"][2] == 2


def _operations_of_a_move():
    rig = _files_board_with_tokens("mv_count")
    rig.raw = True
    rig.boot()
    start = rig.board.nv.ops
    assert rig.step_until_moved()
    return start, rig.board.nv.ops + 4  # and a few of the boot after it


def test_a_move_cut_at_any_flash_operation_loses_nothing_and_numbers_nothing_twice():
    start, end = _operations_of_a_move()
    assert end - start >= 8  # raw checkpoints cleared, the log formatted, its checkpoint, the files removed
    kinds = {}
    print("move: flash operations %d..%d" % (start, end))
    for k in range(0, end):
        rig = _files_board_with_tokens("mv_cut")
        before = _meters(rig.app)
        heard = max(rig.heard)
        rig.raw = True
        rig.cut_after = k
        try:
            rig.boot()
            rig.step_until_moved()
            rig.boot()
            rig.step_until_moved()
        except PowerCut:
            pass
        rig.cut_after = None
        rig.boot()
        assert "storage" not in rig.app.faults, (k, rig.app.fault_detail)
        assert _meters(rig.app) == before, k
        assert rig.step_until_moved(), k
        kinds[k] = rig.board.nv.ops
        assert _meters(rig.app) == before, k
        rig.coin(4)
        rig.run_ms(300)
        rig.ack_all()
        rig.run_ms(20)
        assert rig.app.meters()["seat_coins"][4] == 1, k
        assert not rig.twice, (k, rig.twice)
        assert sorted(rig.heard) == list(range(1, max(rig.heard) + 1)), k
        assert max(rig.heard) > heard
        rig.boot()
        assert isinstance(rig.app.journal, RawJournal) and "storage" not in rig.app.faults, k
        assert rig.app.meters()["seat_coins"][4] == 1, k
    assert len(kinds) == end


mptest.run(globals())
