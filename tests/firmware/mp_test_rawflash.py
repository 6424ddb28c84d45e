"""The raw log's reserve files (firmware/drivers/rawflash.py) on a real littlefs: MicroPython's own
VfsLfs2 mounted over a NOR flash model with rp2.Flash's interface (readblocks / writeblocks with
an offset / ioctl), which, as the RP2040 boot ROM, programs only whole 256-byte pages.

Provisioning finds each file's block by its tag; the journal's log runs in those blocks while
littlefs allocates and frees others beside them; and the attacks on the reserve through the
filesystem (a file deleted, rewritten, made again) are storage faults at boot, not a log written
into blocks littlefs owns again."""
import json
import os

import mptest
from drivers import rawflash as RF
from simkit import fresh_dir
from table import rawlog as L
from table.journal import StorageError
from table.rawjournal import RawJournal
from drivers.nvfile import NvFiles

BLOCKS = 48  # 192 KiB of littlefs


class PicoFlash:
    """rp2.Flash as the reserve uses it: NOR (program ANDs, erase sets 0xFF), page programs."""

    def __init__(self, nblocks):
        self.data = bytearray(b"\xff" * (nblocks * 4096))
        self.nblocks = nblocks
        self.erases = 0

    def readblocks(self, block, buf, offset=0):
        start = block * 4096 + offset
        buf[:] = self.data[start:start + len(buf)]

    def writeblocks(self, block, buf, offset=None):
        if offset is None:  # the basic interface: erase, then program
            self.ioctl(6, block)
            offset = 0
        # The boot ROM's page program takes whole 256-byte pages: anything else would program
        # the RAM after the buffer too (docs/FIRMWARE.md).
        assert offset % 256 == 0 and len(buf) % 256 == 0, (offset, len(buf))
        start = block * 4096 + offset
        for i in range(len(buf)):
            self.data[start + i] &= buf[i]

    def ioctl(self, op, arg):
        if op == 4:
            return self.nblocks
        if op == 5:
            return 4096
        if op == 6:
            self.erases += 1
            start = arg * 4096
            self.data[start:start + 4096] = b"\xff" * 4096
            return 0
        return 0


_mounts = []


def _mount(flash):
    """Mount a fresh littlefs on flash (the previous test's is unmounted: its RAM freed)."""
    mptest.only_on_micropython("littlefs (os.VfsLfs2, os.mount) is MicroPython's own; CPython has neither")
    import gc
    while _mounts:
        os.umount(_mounts.pop())
    gc.collect()
    os.VfsLfs2.mkfs(flash, progsize=256)  # as the rp2 port's _boot.py
    mount = "/rlfs-%s" % "".join("%02x" % b for b in os.urandom(3))
    os.mount(os.VfsLfs2(flash, progsize=256), mount)
    _mounts.append(mount)
    return mount


def _fs(name, reserve=8):
    """A fresh littlefs on a PicoFlash, mounted; the reserve provisioned. -> (flash, root)."""
    import gc
    while _mounts:
        os.umount(_mounts.pop())
    gc.collect()
    flash = PicoFlash(BLOCKS)
    mount = _mount(flash)
    root = mount + "/data/rawlog"
    RF.provision(os, json, flash, reserve, root)
    return flash, root, mount


def _coins(log, count, start=0):
    for i in range(start, start + count):
        log.append(L.encode_coin(i % 7, 1000 + i, 990 + i, 70 * (i + 1)), True, 10 ** 6)


def test_provisioning_finds_every_reserve_block_and_the_check_passes():
    flash, root, _m = _fs("rfprov")
    blocks = json.load(open(root + "/map.json"))["blocks"]
    assert len(blocks) == 8 and len(set(blocks)) == 8
    dev = RF.open_reserve(os, json, flash, root)
    assert isinstance(dev, RF.ReserveFlash) and dev.blocks == blocks and dev.slots == 255
    mptest.raises(OSError, RF.provision, os, json, flash, 8, root)  # never twice over a log


def test_the_log_runs_in_the_reserve_beside_a_busy_littlefs():
    flash, root, mount = _fs("rflog")
    dev = RF.open_reserve(os, json, flash, root)
    log = L.RawLog(dev)
    log.format(1)
    ck = 0
    start = (0, 0, 1)
    for i in range(8 * 255 * 2 // 100):  # two laps, checkpointing as the journal does
        for k in range(i * 100, i * 100 + 100):
            if log.must_open_sector(1) and ck < log.cover_needed():
                ck = log.head_n
                start = (log.head_n, log.head_slot, log.next_seq)
            log.append(L.encode_coin(k % 7, 1000 + k, 990 + k, 70 * (k + 1)), True, ck)
        # littlefs allocates and frees blocks beside the reserve all along
        with open(mount + "/filler", "wb") as f:
            for _ in range(8):
                f.write(b"x" * 1024)
        os.remove(mount + "/filler")
    seen = []
    log2 = L.RawLog(RF.open_reserve(os, json, flash, root))
    status = log2.scan(start[0], start[1], start[2], lambda k, b, q, n, s: seen.append(q))
    assert status == L.END and log2.corrupt is None, log2.corrupt
    assert seen == list(range(start[2], log.next_seq)) and len(seen) > 255
    # Every erase re-tagged its block: the reserve still checks, and littlefs still reads it.
    dev2 = RF.open_reserve(os, json, flash, root)
    assert isinstance(dev2, RF.ReserveFlash), getattr(dev2, "reason", None)
    assert sorted(os.listdir(root)) == ["map.json"] + ["r%03d" % i for i in range(8)]


def _journal_on(dev, name):
    nv = NvFiles(fresh_dir(name))
    return RawJournal(nv, dev, "pico-test"), nv


def test_a_reserve_file_deleted_through_the_filesystem_is_a_storage_fault():
    flash, root, _m = _fs("rfrm")
    dev = RF.open_reserve(os, json, flash, root)
    j, nv = _journal_on(dev, "rfrmj")
    j.load({"meter": 0, "cfg": {}})
    os.remove(root + "/r003")  # mpremote fs rm
    bad = RF.open_reserve(os, json, flash, root)
    assert isinstance(bad, RF.BrokenReserve) and "missing" in bad.reason, bad
    j2 = RawJournal(nv, bad, "pico-test")
    mptest.raises(OSError, j2.load, {"meter": 0})  # the app's storage fault


def test_a_reserve_file_rewritten_or_made_again_is_a_storage_fault():
    for how in ("rewrite", "remake"):
        flash, root, _m = _fs("rfrw")
        dev = RF.open_reserve(os, json, flash, root)
        log = L.RawLog(dev)
        log.format(1)
        _coins(log, 20)
        if how == "remake":
            os.remove(root + "/r000")
        with open(root + "/r000", "wb") as f:  # the same size, through littlefs
            f.write(b"\xff" * 4096)
        again = RF.open_reserve(os, json, flash, root)
        if isinstance(again, RF.BrokenReserve):
            # littlefs already wrote over the freed block: its tag is gone
            assert "lost its tag" in again.reason, (how, again.reason)
            continue
        # The boot's pass (files listed, sizes, tags) cannot see it: the file's bytes are checked
        # against its block before the log first programs or erases it, which is refused.
        err = mptest.raises(OSError, again.program, 0, 1024, b"\x00" * 16)
        assert "file 0 is no longer block" in str(err), (how, err)
        err = mptest.raises(OSError, again.erase, 0)
        assert "no longer block" in str(err), (how, err)
        # The other sectors are still the log's.
        again.program(1, 1024, b"\x00" * 16)
        # And the journal on it: the app's storage fault at its first write there, no byte written.
        before = bytearray(4096)
        flash.readblocks(dev.blocks[0], before, 0)
        log2 = L.RawLog(again)
        log2.head_n, log2.head_slot, log2.next_seq, log2.needs_open = 0, 100, 500, False
        mptest.raises(OSError, log2.append, L.encode_coin(1, 5000, 4990, 70), True, 10 ** 6)
        after = bytearray(4096)
        flash.readblocks(dev.blocks[0], after, 0)
        assert before == after, how


def test_the_boot_check_reads_the_folder_once_and_opens_no_reserve_file():
    # Every reserve file opened through littlefs at every boot takes seconds of the Pico's time
    # (docs/FIRMWARE.md, "The Pico's reserve"): the boot's check lists the folder once; a file is
    # opened only before the log first writes into it.
    flash, root, _m = _fs("rfopen")
    touched = []

    def watched_open(path, mode="r"):
        touched.append(path)
        return open(path, mode)

    class WatchedOs:
        def __getattr__(self, name):
            return getattr(os, name)

        def stat(self, path):
            touched.append(path)
            return os.stat(path)
    RF.open = watched_open  # the module's name for the builtin, for this test
    try:
        dev = RF.open_reserve(WatchedOs(), json, flash, root)
        assert isinstance(dev, RF.ReserveFlash)
        assert [p for p in touched if "/r0" in p] == [], touched
        assert not any(dev._checked)
        dev.program(2, 1024, b"\x00" * 16)
        assert [p for p in touched if "/r0" in p] == [root + "/r002"], touched
        dev.erase(2)
        dev.program(2, 1040, b"\x00" * 16)
        assert [p for p in touched if "/r0" in p] == [root + "/r002"], touched  # once a boot
    finally:
        del RF.open


def test_a_cut_between_an_erase_and_its_tag_is_not_a_fault():
    flash, root, _m = _fs("rftag")
    dev = RF.open_reserve(os, json, flash, root)
    flash.ioctl(6, dev.blocks[5])  # erased, the tag not yet programmed again
    again = RF.open_reserve(os, json, flash, root)
    assert isinstance(again, RF.ReserveFlash), getattr(again, "reason", None)
    buf = bytearray(16)
    flash.readblocks(dev.blocks[5], buf, 4080)
    assert bytes(buf[:8]) == RF.TAG


def test_without_a_reserve_the_board_keeps_the_littlefs_journal():
    while _mounts:
        os.umount(_mounts.pop())
    flash = PicoFlash(BLOCKS)
    mount = _mount(flash)
    assert RF.open_reserve(os, json, flash, mount + "/data/rawlog") is None


def test_the_littlefs_journal_refuses_to_start_over_a_raw_logs_checkpoints():
    # The reserve's map gone (so the board would use the files), a raw journal's checkpoint there:
    # never start from zero.
    from table.journal import Journal
    nv = NvFiles(fresh_dir("rfck"))
    nv.write("rl_a", b"TC1 whatever")
    mptest.raises(StorageError, Journal(nv).load, {"meter": 0})


if __name__ == "__main__":
    mptest.run(globals())
