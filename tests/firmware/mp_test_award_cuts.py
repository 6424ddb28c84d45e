"""An award cut by a power failure at every byte, on MicroPython: paid exactly once.

The award, its command id and the meter change are one journal record (app.py: cmd_award). This
sweep takes a table with one eligible seat in JACKPOT_PENDING, then for every k from 0 to the
number of bytes the award writes, lets the flash take k bytes and cuts the power. After the
reboot the award either happened (the whole record is on flash) or did not (a torn tail, dropped),
never half; then the host retries the same award (same command id, as `tablectl jackpot` does)
and afterwards exactly one payment exists: never two, never none. k = the whole record is the
cut after the write and before the reply left: the retry gets the first payment's reply.

(The unix port has no sys.settrace, so "every statement" of the award path is covered by what a
statement can leave behind on flash: nothing, any prefix of the record, or all of it.)
"""
import os

import mptest
from mp_test_faults_power import PowerCut, TornNv, VirtualClockBoard
from simkit import Rig, fresh_dir
from table import protocol as proto
from table.app import TableApp

KEY = bytes(range(32))
LOCK, JACKPOT = 0, 2


def _copy_dir(src, dst):
    try:
        os.mkdir(dst)
    except OSError:
        pass
    for name in os.listdir(dst):
        os.remove(dst + "/" + name)
    for name in os.listdir(src):
        if os.stat(src + "/" + name)[0] & 0x4000:
            continue
        with open(src + "/" + name, "rb") as f:
            data = f.read()
        with open(dst + "/" + name, "wb") as f:
            f.write(data)


class CutRig(Rig):
    """A Rig whose board writes through TornNv and keeps a virtual clock."""

    def boot(self, config=None, budget=None):
        self.session = None
        self.board = VirtualClockBoard(self.dir, "sim-cut", 8, 8, "pio")
        self.board.warp_ms = getattr(self, "now", 0) + 1000
        self.board.nv = TornNv(self.dir + "/data", self.board)
        self.board.nv.budget = budget
        if self.board.log_device is not None:  # the raw log's chip on the same power
            self.board.log_device = self.board.nv.torn_nor(self.board.log_device)
        self.app = TableApp(self.board, self.board.now_ms())


def _ready_table():
    rig = CutRig("awardcut", key=KEY)
    rig.board.switch = True
    assert rig.command("provision", {"key": KEY.hex()})["ok"] == 1
    rig.board.switch = False
    rig.coin(0)
    rig.run_ms(200)
    rig.press(LOCK)
    rig.press(JACKPOT)
    rig.ack_all()
    rig.run_ms(20)
    assert rig.app.state["base"] == "JACKPOT_PENDING"
    rig.app.journal.checkpoint(rig.app.state)  # a clean start for every cut
    return rig


def _award_args(rig):
    meter = rig.app.state["meter"]
    return {"seat": 0, "round": rig.app.state["round"], "amount_cents": meter // 10,
            "meter_cents": meter // 10, "hand": "straight flush"}


def test_an_award_cut_at_any_byte_is_paid_exactly_once_after_a_retry():
    rig = _ready_table()
    saved = fresh_dir("awardcut-saved")
    _copy_dir(rig.dir + "/data", saved)
    meter = rig.app.state["meter"]
    args = _award_args(rig)
    paid = meter // 10
    # How many bytes the award writes, measured with a budget too large to cut.
    rig.boot()
    rig.hello()
    rig.board.nv.budget = 10 ** 9
    rig.send(proto.command(4242, "award", args), KEY)  # the same id as below: the same bytes
    rig.run_ms(20)
    total = 10 ** 9 - rig.board.nv.budget
    assert rig.app.state["hits"] == 1 and total > 100, total
    outcomes = {"not on flash": 0, "on flash": 0}
    for k in range(total + 1):
        _copy_dir(saved, rig.dir + "/data")
        rig.boot()
        rig.hello()
        rig.board.nv.budget = k  # the power fails after k more bytes reach the flash
        rig.send(proto.command(4242, "award", args), KEY)
        try:
            rig.run_ms(20)
            assert k >= total, "the award wrote more than %d bytes at k=%d" % (total, k)
        except PowerCut:
            pass
        rig.board.nv.close_all()
        rig.boot()  # power back
        hits = rig.app.state["hits"]
        assert hits in (0, 1), (k, hits)
        assert "storage" not in rig.app.faults, (k, rig.app.fault_detail)
        outcomes["on flash" if hits else "not on flash"] += 1
        if hits:
            assert rig.app.state["meter"] == meter - paid and rig.app.state["paid"] == 1, k
        else:
            assert rig.app.state["meter"] == meter, k
        # the host retries with the same command id: one payment in the end, whatever k was
        rig.replies = {}
        rig.send(proto.command(4242, "award", args), KEY)
        rig.run_ms(20)
        reply = rig.replies[4242]
        assert reply["ok"] == 1, (k, reply)
        assert rig.app.state["hits"] == 1 and rig.app.state["meter"] == meter - paid, k
        assert reply["meter"] == meter - paid
        # and another id for the same seat in the same round is refused
        rig.send(proto.command(4343, "award", args), KEY)
        rig.run_ms(20)
        assert rig.replies[4343]["err"] == proto.E_PAID, (k, rig.replies[4343])
    assert outcomes["on flash"] >= 1 and outcomes["not on flash"] >= total - 1, outcomes
    print("award cuts: %d byte offsets, %r" % (total + 1, outcomes))


if __name__ == "__main__":
    mptest.run(globals())
