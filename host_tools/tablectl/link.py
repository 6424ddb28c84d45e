"""The host end of one board's serial link. The serial object is handed in (any pyserial URL or
device: /dev/ttyACM0, a pty path, socket://, loop://), never opened deep inside."""
import os
import time

import serial

from . import protocol as proto
from .errors import TablectlError


def open_port(port, timeout=0.02):
    """Open a port by path or pyserial URL, with a message a technician can act on."""
    if not port:
        raise TablectlError("say which board: --port PORT (or set TABLECTL_PORT)")
    try:
        return serial.serial_for_url(port, baudrate=115200, timeout=timeout, write_timeout=2)
    except (serial.SerialException, ValueError, OSError) as exc:
        raise TablectlError("cannot open %s: %s" % (port, exc))


class BoardLink:
    def __init__(self, ser):
        self.ser = ser
        self.reader = proto.FrameReader()
        self.frames_wrong_version = 0
        self.board_id = None
        self.next_id = int(time.time() * 1000) % 1000000000  # unique across host restarts
        self.replies = {}

    def send(self, message, key=None):
        self.ser.write(proto.encode_frame(message, key))

    def read(self):
        """Messages that arrived since the last call (waits up to the port's timeout)."""
        n = self.ser.in_waiting if hasattr(self.ser, "in_waiting") else 0
        data = self.ser.read(max(n, 1))
        if not data:
            return []
        if self.ser.in_waiting:
            data += self.ser.read(self.ser.in_waiting)
        out = []
        for frame in self.reader.feed(data):
            msg = frame.message
            if frame.version != proto.VERSION and msg.get("t") != proto.HELLO:
                # only hello may come in another version's frame; an event not taken is
                # not acknowledged, so the board sends it again
                self.frames_wrong_version += 1
                continue
            if msg.get("t") == proto.HELLO and msg.get("b"):
                self.board_id = msg["b"]
            elif msg.get("t") == proto.EVENT and msg.get("b"):
                self.board_id = self.board_id or msg["b"]
            out.append(msg)
        return out

    def new_id(self):
        self.next_id += 1
        return self.next_id

    def hello(self, timeout_s=3.0):
        """Say hello until the board answers; returns its hello."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self.send(proto.hello())
            end = time.monotonic() + 0.3
            while time.monotonic() < end:
                for msg in self.read():
                    if msg.get("t") == proto.HELLO and msg.get("role") == "board":
                        return msg
        raise TablectlError("no board answered on the port: is it powered, flashed and running the controller?")

    def command(self, name, args=None, key=None, counter=None, timeout_s=3.0, on_message=None):
        """Send a command and wait for its reply (repeating the same id: replies are idempotent)."""
        cid = self.new_id()
        msg = proto.command(cid, name, args or {}, counter)
        deadline = time.monotonic() + timeout_s
        resend_at = 0
        while time.monotonic() < deadline:
            if time.monotonic() >= resend_at:
                self.send(msg, key)
                resend_at = time.monotonic() + 0.5
            for m in self.read():
                if m.get("t") == proto.REPLY and m.get("id") == cid:
                    return m
                if on_message:
                    on_message(m)
        raise TablectlError("the board did not answer %r within %.0f s" % (name, timeout_s))


def new_key_hex():
    return os.urandom(32).hex()
