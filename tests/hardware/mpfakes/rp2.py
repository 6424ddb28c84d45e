"""A stand-in `rp2` for the unix port: assembles @asm_pio programs the way the real module does
(the decorator runs the function with the PIO instruction names as its globals) and runs them
on a small cycle-by-cycle emulator of the instructions our programs use. Tests drive the jmp
pin and the clock: sm.run(cycles).

Semantics follow the RP2040 datasheet, section 3.4: JMP X-- jumps when X was non-zero and
decrements regardless; IN shifts left by n (in_shiftdir left) taking the low n bits of the
source; OUT with right shift moves OSR right; PUSH noblock on a full FIFO drops the word and
sets FDEBUG.RXSTALL.
"""
import machine


class PIO:
    JOIN_NONE = 0
    JOIN_TX = 1
    JOIN_RX = 2
    SHIFT_LEFT = 0
    SHIFT_RIGHT = 1
    IN_LOW = 0
    IN_HIGH = 1
    OUT_LOW = 2
    OUT_HIGH = 3


class _Inv:
    def __init__(self, v):
        self.v = v


class _Program:
    def __init__(self, kw):
        self.kw = kw
        self.code = []
        self.labels = {}
        self.wrap_target = 0
        self.wrap = None


def asm_pio(**kw):
    def dec(f):
        prog = _Program(kw)
        code = prog.code

        def emit(*ins):
            code.append(ins)

        names = {
            "osr": "osr", "isr": "isr", "x": "x", "y": "y", "null": "null", "pins": "pins",
            "pin": "pin", "x_dec": "x_dec", "y_dec": "y_dec", "not_x": "not_x", "not_y": "not_y",
            "block": "block", "noblock": "noblock",
            "invert": _Inv,
            "mov": lambda d, s: emit("mov", d, s),
            "out": lambda d, n: emit("out", d, n),
            "in_": lambda s, n: emit("in", s, n),
            "push": lambda mode="block": emit("push", mode),
            "set": lambda d, v: emit("set", d, v),
            "nop": lambda: emit("mov", "y", "y"),
            "jmp": lambda a, b=None: emit("jmp", a if b is not None else None, b if b is not None else a),
            "label": lambda name: prog.labels.__setitem__(name, len(code)),
            "wrap_target": lambda: setattr(prog, "wrap_target", len(code)),
            "wrap": lambda: setattr(prog, "wrap", len(code) - 1),
        }
        g = f.__globals__
        saved = {}
        for k in names:
            if k in g:
                saved[k] = g[k]
            g[k] = names[k]
        try:
            f()
        finally:
            for k in names:
                del g[k]
            g.update(saved)
        assert len(code) <= 32, "a PIO block holds 32 instructions"
        if prog.wrap is None:
            prog.wrap = len(code) - 1
        return prog

    return dec


_M32 = 0xFFFFFFFF


class StateMachine:
    instances = {}

    def __init__(self, id, prog, freq=125000000, jmp_pin=None, in_base=None, **kw):
        assert 1908 <= freq <= 125000000, "freq out of range for a 16-bit divider"
        self.id = id
        self.prog = prog
        self.freq = freq
        self.jmp_pin = jmp_pin
        join = prog.kw.get("fifo_join", PIO.JOIN_NONE)
        self.depth = 8 if join == PIO.JOIN_RX else 4
        self.fifo = []
        self.pc = 0
        self.x = self.y = self.isr = self.osr = 0
        self.running = False
        self.cycles = 0
        StateMachine.instances[id] = self

    def active(self, v=None):
        if v is not None:
            self.running = bool(v)
        return self.running

    def rx_fifo(self):
        return len(self.fifo)

    def get(self):
        return self.fifo.pop(0)

    def _src(self, s):
        if isinstance(s, _Inv):
            return ~self._src(s.v) & _M32
        if s == "null":
            return 0
        if s == "pins":
            return self.jmp_pin.value()
        return getattr(self, s)

    def run(self, cycles):
        prog = self.prog
        code = prog.code
        for _ in range(cycles):
            ins = code[self.pc]
            op = ins[0]
            nxt = self.pc + 1
            if op == "mov":
                if ins[1] != "null":
                    setattr(self, ins[1], self._src(ins[2]))
            elif op == "set":
                setattr(self, ins[1], ins[2])
            elif op == "out":
                self.osr = (self.osr >> ins[2]) & _M32
            elif op == "in":
                n = ins[2]
                self.isr = ((self.isr << n) | (self._src(ins[1]) & ((1 << n) - 1))) & _M32
            elif op == "push":
                if len(self.fifo) < self.depth:
                    self.fifo.append(self.isr)
                else:
                    base = 0x50300008 if self.id >= 4 else 0x50200008
                    machine.mem32.set_bits(base, 1 << (self.id & 3))
                self.isr = 0
            elif op == "jmp":
                cond = ins[1]
                target = prog.labels[ins[2]]
                if cond is None:
                    nxt = target
                elif cond == "pin":
                    if self.jmp_pin.value():
                        nxt = target
                elif cond == "x_dec":
                    if self.x:
                        nxt = target
                    self.x = (self.x - 1) & _M32
                elif cond == "y_dec":
                    if self.y:
                        nxt = target
                    self.y = (self.y - 1) & _M32
                else:
                    raise ValueError(cond)
            if self.pc == prog.wrap and nxt == self.pc + 1:
                nxt = prog.wrap_target
            self.pc = nxt
            self.cycles += 1


class Flash:
    """rp2.Flash on the unix port: the filesystem partition as a block device of 4 KiB blocks
    (erased blocks read 0xFF; a program only clears bits, as NOR does). Held in RAM, block by
    block as written, so a board that never provisions a raw log costs nothing."""
    BLOCK_BYTES = 4096

    def __init__(self, start=0, len=352 * 4096):
        self._blocks = {}
        self._count = len // self.BLOCK_BYTES

    def _block(self, n):
        b = self._blocks.get(n)
        if b is None:
            b = self._blocks[n] = bytearray(b"\xff" * self.BLOCK_BYTES)
        return b

    def readblocks(self, n, buf, offset=0):
        # A block never written reads erased without being stored: a provisioning search reads
        # a slot of every block, and storing each would take the whole partition's 1.4 MB of heap.
        b = self._blocks.get(n)
        for i in range(len(buf)):
            buf[i] = 0xFF if b is None else b[offset + i]

    def writeblocks(self, n, buf, offset=None):
        b = self._block(n)
        if offset is None:  # the littlefs interface: erase, then program
            self.ioctl(6, n)
            offset = 0
        for i in range(len(buf)):
            b[offset + i] &= buf[i]

    def ioctl(self, op, arg):
        if op == 4:  # block count
            return self._count
        if op == 5:  # block size
            return self.BLOCK_BYTES
        if op == 6:  # erase a block
            self._blocks[arg] = bytearray(b"\xff" * self.BLOCK_BYTES)
            return 0
        return 0
