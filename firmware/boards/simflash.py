"""A NOR flash chip in a file, for the raw flash log (table/rawlog.py) on the unix port: the
virtual board's log and the power-cut tests. File-backed, so it outlives the virtual board's
restarts as the Pico's flash does.

What it models, as the W25Q16JV and the RP2040 boot ROM behave:
- program only turns bits from 1 to 0 (the stored byte becomes old AND new); programming is by
  whole 256-byte pages, the bytes around the data 0xFF (which leaves cells as they are);
- erase sets a whole 4 KiB sector to 0xFF;
- a power cut armed with arm_cut(): after `program_bytes` more bytes of programs the byte being
  programmed gets only some of its 0 bits and PowerCut is raised; after `erase_bytes` bytes of an
  erase the rest of the sector keeps its old bytes (one of them half erased). After a cut every
  operation raises PowerCut until the next power_on(), as a board that lost power does nothing.
"""

SECTOR_BYTES = 4096
PAGE_BYTES = 256


class PowerCut(Exception):
    pass


class SimNorFlash:
    def __init__(self, path, sectors, on_write=None):
        self.path = path
        self.on_write = on_write  # called after each program and erase (the board's blackouts)
        self.sectors = sectors
        self.program_budget = None
        self.erase_budget = None
        self.off = False
        self.cut_at = None      # ("program"|"erase", sector, offset) of the last cut
        self.pages_programmed = 0
        self.bytes_over_qspi = 0  # whole pages, as the boot ROM sends them
        self.erases = 0
        size = sectors * SECTOR_BYTES
        try:
            f = open(path, "r+b")
            f.seek(0, 2)
            have = f.tell()
        except OSError:
            f = open(path, "wb")
            have = 0
        if have < size:
            f.seek(have)
            chunk = b"\xff" * SECTOR_BYTES
            while have < size:
                f.write(chunk[:min(SECTOR_BYTES, size - have)])
                have += min(SECTOR_BYTES, size - have)
        f.close()

    def arm_cut(self, program_bytes=None, erase_bytes=None):
        self.program_budget = program_bytes
        self.erase_budget = erase_bytes

    def power_on(self):
        self.off = False
        self.program_budget = None
        self.erase_budget = None

    def _check(self, sector, offset, n):
        if self.off:
            raise PowerCut("off")
        if not (0 <= sector < self.sectors and 0 <= offset and offset + n <= SECTOR_BYTES):
            raise OSError(22)

    def readinto(self, sector, offset, buf):
        self._check(sector, offset, len(buf))
        with open(self.path, "rb") as f:
            f.seek(sector * SECTOR_BYTES + offset)
            f.readinto(buf)

    def read(self, sector, offset, n):
        buf = bytearray(n)
        self.readinto(sector, offset, buf)
        return bytes(buf)

    def program(self, sector, offset, data):
        self._check(sector, offset, len(data))
        first_page = offset // PAGE_BYTES
        last_page = (offset + len(data) - 1) // PAGE_BYTES
        self.pages_programmed += last_page - first_page + 1
        self.bytes_over_qspi += (last_page - first_page + 1) * PAGE_BYTES
        with open(self.path, "r+b") as f:
            base = sector * SECTOR_BYTES + offset
            f.seek(base)
            old = f.read(len(data))
            new = bytearray(len(data))
            cut = None
            for i in range(len(data)):
                if self.program_budget is not None and self.program_budget <= 0:
                    # The byte being programmed when the power went: only its low bits made it.
                    new[i] = old[i] & (data[i] | 0xF0)
                    cut = i
                    new = new[:i + 1]
                    break
                new[i] = old[i] & data[i]
                if self.program_budget is not None:
                    self.program_budget -= 1
            f.seek(base)
            f.write(new)
        if cut is not None:
            self.off = True
            self.cut_at = ("program", sector, offset + cut)
            raise PowerCut("program")
        if self.on_write is not None:
            self.on_write()

    def erase(self, sector):
        self._check(sector, 0, SECTOR_BYTES)
        self.erases += 1
        with open(self.path, "r+b") as f:
            f.seek(sector * SECTOR_BYTES)
            if self.erase_budget is None:
                f.write(b"\xff" * SECTOR_BYTES)
                if self.on_write is not None:
                    self.on_write()
                return
            keep = max(0, min(self.erase_budget, SECTOR_BYTES))
            f.write(b"\xff" * keep)
            if keep < SECTOR_BYTES:
                old = f.read(1)
                f.seek(sector * SECTOR_BYTES + keep)
                f.write(bytes((old[0] | 0x0F,)))
        self.off = True
        self.cut_at = ("erase", sector, keep)
        raise PowerCut("erase")
