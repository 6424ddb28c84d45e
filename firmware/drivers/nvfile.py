"""Non-volatile files: the board's filesystem (littlefs on the RP2040 and ESP32, a directory on
the virtual board). The record formats that make writes power-cut safe live in table/journal.py;
this class only moves bytes, so a board can subclass it (the simulator models flash-write
blackouts and power cuts here)."""
import os


class NvFiles:
    # Called after every write that reached flash: the board empties its coin counters' small
    # hardware FIFOs into RAM there, since each write may have stopped the CPU for erases.
    after_write = None

    def __init__(self, root):
        self.root = root
        self._appenders = {}
        try:
            os.mkdir(root)
        except OSError:
            pass

    def path(self, name):
        return self.root + "/" + name

    def read(self, name):
        try:
            with open(self.path(name), "rb") as f:
                return f.read()
        except OSError:
            return None

    def read_at(self, name, offset, length):
        with open(self.path(name), "rb") as f:
            f.seek(offset)
            return f.read(length)

    def write(self, name, data):
        """Replace a whole file. Not atomic by itself: callers write to one of two slots.
        data: bytes, or a tuple of parts written one after the other (no joined copy)."""
        self.close(name)
        with open(self.path(name), "wb") as f:
            if isinstance(data, tuple):
                for part in data:
                    f.write(part)
            else:
                f.write(data)
        if self.after_write is not None:
            self.after_write()

    def append(self, name, data):
        """Append and flush, so the bytes are on flash when this returns."""
        f = self._appenders.get(name)
        if f is None:
            f = open(self.path(name), "ab")
            self._appenders[name] = f
        f.write(data)
        f.flush()
        if self.after_write is not None:
            self.after_write()

    def size(self, name):
        try:
            return os.stat(self.path(name))[6]
        except OSError:
            return 0

    def close(self, name):
        f = self._appenders.pop(name, None)
        if f is not None:
            f.close()

    def remove(self, name):
        self.close(name)
        try:
            os.remove(self.path(name))
        except OSError:
            pass

    def names(self):
        try:
            return os.listdir(self.root)
        except OSError:
            return []
