"""The raw flash log's sectors on the Pico (docs/FIRMWARE.md, "The raw flash log"): reserve files.

The official MicroPython image mounts littlefs over the whole flash partition, so the log lives
inside it: `count` files of exactly one 4 KiB block each (/data/rawlog/r000 ...). Such a file's
only block holds no CTZ pointers, so littlefs neither reads nor moves it while nothing writes the
file through the filesystem; the log then programs and erases those blocks itself through
rp2.Flash (the partition as a block device). Each block is found once, at provisioning, by a tag
written into its last 16 bytes, and the block numbers are kept in /data/rawlog/map.json.

The last slot of every block keeps the tag: TAG (8) | index (2 LE) | count (2 LE) | CRC-32 (4),
programmed again right after each erase. So the log has 255 slots a sector, and at boot each
block must still say which reserve it is (or be wholly erased: a cut between an erase and the tag).
A reserve file deleted or rewritten through the filesystem (mpremote `fs rm`, a reformat) hands
its block back to littlefs: boot finds a file missing or of the wrong size, or a block without its
tag, and the board reports a storage fault instead of logging into a block littlefs owns.

rp2.Flash programs whole 256-byte pages from the buffer it is given, so a record is programmed
as its page: 0xFF everywhere but the record (programming 0xFF leaves a NOR cell as it is).
"""
import binascii

SECTOR_BYTES = 4096
PAGE_BYTES = 256
SLOT_BYTES = 16
TAG = b"TCRAWLOG"
_ERASED_PAGE = b"\xff" * PAGE_BYTES
ROOT = "/data/rawlog"


def _tag(index, count):
    body = TAG + bytes((index & 0xFF, index >> 8, count & 0xFF, count >> 8))
    crc = binascii.crc32(body) & 0xFFFFFFFF
    return body + bytes(((crc >> (8 * i)) & 0xFF for i in range(4)))


class ReserveFlash:
    """The block device table/rawlog.py takes: sectors, readinto, program, erase."""

    slots = SECTOR_BYTES // SLOT_BYTES - 1  # the last slot keeps the tag

    def __init__(self, flash, blocks, after_write=None, still_its_block=None):
        self.flash = flash
        self.blocks = blocks
        self.sectors = len(blocks)
        self.after_write = after_write  # the board empties its PIO FIFOs (the CPU stopped)
        self._page = bytearray(b"\xff" * PAGE_BYTES)
        self.erases = 0
        self.page_programs = 0
        # still_its_block(i) -> None or why not: checked before the first program or erase of a
        # sector in this boot (opening every file through littlefs at every boot takes seconds of a
        # Pico's time, docs/FIRMWARE.md; the filesystem can only change between boots: its REPL
        # stops the app).
        self.still_its_block = still_its_block
        self._checked = bytearray(len(blocks))

    def _before_write(self, sector):
        if self.still_its_block is not None and not self._checked[sector]:
            why = self.still_its_block(sector)
            if why:
                raise OSError("raw log reserve: " + why)
            self._checked[sector] = 1

    def readinto(self, sector, offset, buf):
        self.flash.readblocks(self.blocks[sector], buf, offset)

    def program(self, sector, offset, data):
        self._before_write(sector)
        blk = self.blocks[sector]
        page = self._page
        done = 0
        n = len(data)
        while done < n:
            at = offset + done
            start = at - at % PAGE_BYTES
            take = min(n - done, start + PAGE_BYTES - at)
            page[:] = _ERASED_PAGE  # (a copy, not a loop of 256 stores)
            page[at - start:at - start + take] = data[done:done + take]
            self.flash.writeblocks(blk, page, start)
            self.page_programs += 1
            done += take
        if self.after_write is not None:
            self.after_write()

    def erase(self, sector):
        self._before_write(sector)
        self.flash.ioctl(6, self.blocks[sector])
        self.erases += 1
        self.program(sector, SECTOR_BYTES - SLOT_BYTES, _tag(sector, self.sectors))


class BrokenReserve:
    """What the board hands over when the reserve check fails: every access raises, so the
    journal cannot load and the app reports a storage fault with the reason."""

    slots = SECTOR_BYTES // SLOT_BYTES - 1

    def __init__(self, reason, sectors=1):
        self.reason = reason
        self.sectors = sectors

    def _fail(self, *args):
        raise OSError("raw log reserve: " + self.reason)

    readinto = program = erase = _fail


def _name(root, i):
    return "%s/r%03d" % (root, i)


def provision(os, json, flash, count, root=ROOT):
    """Create the reserve files and find their blocks (a service action on an empty board: it
    refuses when a map exists). Returns the block numbers."""
    try:
        os.stat(root + "/map.json")
        raise OSError("raw log reserve already provisioned")
    except OSError as exc:
        if exc.args and exc.args[0] == "raw log reserve already provisioned":
            raise
    for d in (root[:root.rfind("/")], root):
        try:
            os.mkdir(d)
        except OSError:
            pass
    body = bytearray(b"\xff" * SECTOR_BYTES)
    for i in range(count):
        body[SECTOR_BYTES - SLOT_BYTES:] = _tag(i, count)
        with open(_name(root, i), "wb") as f:
            f.write(body)
    del body
    blocks = [-1] * count
    buf = bytearray(SLOT_BYTES)
    for blk in range(flash.ioctl(4, 0)):
        flash.readblocks(blk, buf, SECTOR_BYTES - SLOT_BYTES)
        if buf[:8] == TAG:
            i = buf[8] | (buf[9] << 8)
            if i < count and bytes(buf) == _tag(i, count):
                blocks[i] = blk
    if -1 in blocks:
        raise OSError("raw log reserve: a block not found by its tag")
    with open(root + "/map.json", "w") as f:
        json.dump({"blocks": blocks}, f)
    return blocks


def remove_reserve(os, root=ROOT):
    """The reserve's files removed (a provisioning that failed part way), map.json first so that
    no boot takes a half-removed reserve for one."""
    try:
        names = os.listdir(root)
    except OSError:
        return
    if "map.json" in names:
        os.remove(root + "/map.json")
    for name in names:
        if name != "map.json":
            try:
                os.remove(root + "/" + name)
            except OSError:
                pass


def open_reserve(os, json, flash, root=ROOT, after_write=None):
    """The reserve as a ReserveFlash; None when the board has none (not provisioned: the journal
    stays on littlefs files); a BrokenReserve when the check fails (storage fault).

    At boot: every file listed, 4,096 bytes (one pass over the folder), and every block carrying
    its tag (or wholly erased). That a file's bytes are still its block's is checked before the
    log first writes into it (ReserveFlash.still_its_block)."""
    try:
        with open(root + "/map.json") as f:
            blocks = json.load(f)["blocks"]
    except OSError:
        return None
    except (ValueError, KeyError, TypeError):
        return BrokenReserve("map unreadable")
    count = len(blocks)
    nblk = flash.ioctl(4, 0)
    if not count or len(set(blocks)) != count:
        return BrokenReserve("map lists %d blocks, %d distinct" % (count, len(set(blocks))))
    sizes = {}
    for entry in os.ilistdir(root):
        sizes[entry[0]] = entry[3] if len(entry) > 3 else os.stat(root + "/" + entry[0])[6]

    def still_its_block(i):
        # littlefs reads a one-block file's data straight from its block, so its bytes are the
        # block's. A file rewritten or made again through the filesystem sits in another block
        # (copy on write), and its bytes differ.
        with open(_name(root, i), "rb") as f:
            head = f.read(2 * SLOT_BYTES)
            f.seek(SECTOR_BYTES - SLOT_BYTES)
            tail = f.read(SLOT_BYTES)
        raw = bytearray(2 * SLOT_BYTES)
        flash.readblocks(blocks[i], raw, 0)
        end = bytearray(SLOT_BYTES)
        flash.readblocks(blocks[i], end, SECTOR_BYTES - SLOT_BYTES)
        if head != bytes(raw) or tail != bytes(end):
            return "file %d is no longer block %d" % (i, blocks[i])
        return None

    dev = ReserveFlash(flash, blocks, after_write, still_its_block)
    buf = bytearray(SLOT_BYTES)
    whole = bytearray(SECTOR_BYTES)
    for i in range(count):
        size = sizes.get(_name(root, i)[len(root) + 1:])
        if size is None:
            return BrokenReserve("file %d missing" % i, count)
        if size != SECTOR_BYTES:
            return BrokenReserve("file %d is %d bytes" % (i, size), count)
        if not (0 <= blocks[i] < nblk):
            return BrokenReserve("block %d out of range" % i, count)
        flash.readblocks(blocks[i], buf, SECTOR_BYTES - SLOT_BYTES)
        if bytes(buf) != _tag(i, count):
            flash.readblocks(blocks[i], whole, 0)
            for b in whole:
                if b != 0xFF:
                    return BrokenReserve("block %d of file %d lost its tag" % (blocks[i], i), count)
            # Wholly erased: the power went between an erase and its tag. Tag it again (its
            # file is checked first, as before any write).
            dev.program(i, SECTOR_BYTES - SLOT_BYTES, _tag(i, count))
    return dev
