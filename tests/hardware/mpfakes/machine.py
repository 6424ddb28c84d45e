"""A stand-in `machine` for running the board code on the MicroPython unix port in tests.

A file on MICROPYPATH shadows the unix port's own (tiny) machine module. Each fake records what
the code did to it, and the test drives inputs: Pin.drive() is a level arriving from outside.
"""
IRQ_LOG = []


class Pin:
    IN = 0
    OUT = 1
    OPEN_DRAIN = 2
    PULL_UP = 1
    PULL_DOWN = 2
    IRQ_RISING = 1
    IRQ_FALLING = 2
    by_id = {}
    world = {}  # gpio -> level the outside drives, kept across Pin() constructions

    def __init__(self, id, mode=-1, pull=-1, value=None):
        self.id = id
        self.mode = mode
        self.pull = pull
        self.outside = Pin.world.get(id, 1 if pull == Pin.PULL_UP else 0)  # what the world drives
        self.latch = value if value is not None else 0
        self.history = []  # every value the code wrote
        self.handler = None
        self.trigger = 0
        self.listeners = []  # fake Counters on this pin
        Pin.by_id[id] = self
        if value is not None:
            self.history.append(value)

    def value(self, v=None):
        if v is None:
            if self.mode == Pin.OUT:
                return self.latch
            if self.mode == Pin.OPEN_DRAIN:
                return self.outside if self.latch else 0
            return self.outside
        self.latch = 1 if v else 0
        self.history.append(self.latch)
        if len(self.history) > 4096:
            del self.history[:2048]  # long runs: keep the recent past, not every write forever
        return None

    def __call__(self, v=None):
        return self.value(v)

    def irq(self, handler=None, trigger=3, hard=False):
        self.handler = handler
        self.trigger = trigger
        self.hard = hard

    def drive(self, level):
        """The outside world sets the line (an input's level)."""
        old = self.outside
        self.outside = level
        Pin.world[self.id] = level
        if level == old:
            return
        edge = Pin.IRQ_RISING if level else Pin.IRQ_FALLING
        for c in self.listeners:
            c.edge(edge)
        if self.handler is not None and self.trigger & edge:
            self.handler(self)


class SPI:
    instances = {}

    def __init__(self, id, baudrate=1000000, polarity=0, phase=0, sck=None, mosi=None, miso=None):
        self.id = id
        self.baudrate = baudrate
        self.log = []
        self.miso = b""  # what readinto returns next (the test sets it)
        SPI.instances[id] = self

    def write(self, buf):
        self.log.append(bytes(buf))

    def readinto(self, buf, write=0):
        for i in range(len(buf)):
            buf[i] = self.miso[i] if i < len(self.miso) else 0xFF


class UART:
    instances = {}

    def __init__(self, id, baudrate=115200, tx=None, rx=None, rxbuf=256, timeout=0):
        self.id = id
        self.rx = bytearray()
        self.tx = bytearray()
        UART.instances[id] = self

    def readinto(self, buf):
        n = min(len(buf), len(self.rx))
        if not n:
            return None
        buf[:n] = self.rx[:n]
        self.rx = self.rx[n:]
        return n

    def write(self, data):
        self.tx += data
        return len(data)


class WDT:
    last = None

    def __init__(self, id=0, timeout=5000):
        self.timeout = timeout
        self.feeds = 0
        WDT.last = self

    def feed(self):
        self.feeds += 1


class Counter:
    RISING = 1
    FALLING = 2
    UP = 1
    DOWN = 2
    units = {}

    def __init__(self, id, src=None, edge=1, filter_ns=0, **kw):
        self.id = id
        self.src = src
        self.edge_kind = edge
        self.filter_ns = filter_ns
        self.count = 0
        src.listeners.append(self)
        Counter.units[id] = self

    def edge(self, kind):
        if kind == self.edge_kind:
            self.count += 1

    def value(self, v=None):
        old = self.count
        if v is not None:
            self.count = v
        return old

    def deinit(self):
        pass


class _Mem32:
    W1C = (0x50200008, 0x50300008)  # PIO FDEBUG: write 1 to clear

    def __init__(self):
        self.words = {}

    def __getitem__(self, addr):
        return self.words.get(addr, 0)

    def __setitem__(self, addr, value):
        if addr in _Mem32.W1C:
            self.words[addr] = self.words.get(addr, 0) & ~value
        else:
            self.words[addr] = value

    def set_bits(self, addr, bits):
        self.words[addr] = self.words.get(addr, 0) | bits


mem32 = _Mem32()
RESETS = []


def unique_id():
    return b"\xe6\x61\x38\x52\x83\x4a\x2b\x2c"


def reset():
    RESETS.append(1)
    raise SystemExit("machine.reset")
