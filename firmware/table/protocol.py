"""The wire protocol between the board and the host: the one copy, run by both interpreters.

Written in the subset of Python that MicroPython and CPython share (no f-strings with
expressions MicroPython lacks, no dataclasses, no typing). docs/PROTOCOL.md is its prose form.

A frame on the wire:  COBS( body + CRC-32(body) as 4 bytes little-endian ) + 0x00
body:                 version (1 byte) | flags (1 byte) | payload (UTF-8 JSON object) [| MAC]
MAC (flags bit 0):    HMAC-SHA256(table key, version | flags | payload), 32 bytes

COBS keeps 0x00 out of the frame, so a receiver that lost sync waits for the next 0x00 and
starts again; the CRC drops anything damaged on the way. Nothing that fails either is acted on.

The trust rule (docs/SECURITY.md): once a board holds a table key, every frame either way carries
the MAC, except `hello` and the `provision` command (which needs the board's service key switch
turned by hand). A MAC proves who sent a frame, not that it is new, so each signed frame also
names something that never repeats:
  - an event: its sequence number "q" (persistent on the board; the host keeps one row per
    (board, q), so a replayed event changes nothing);
  - every other frame: the board's session "s" (a fresh value at every boot: the persistent boot
    count and random bits, announced in the board's hello) and a counter "n" that rises with each
    frame sent in that direction in that session. A receiver takes a frame only if "s" is the
    current session and "n" is above the last "n" it took; so a frame from an earlier boot, or one
    replayed within this boot, is refused. (The boot count is what is persisted: no flash write is
    spent per frame.)
"""
import binascii
import hashlib
import json

VERSION = 1
SUPPORTED_VERSIONS = (1,)
FLAG_MAC = 0x01
MAC_BYTES = 32
# The longest body either side accepts; a frame past this is garbage (lost delimiter).
MAX_BODY_BYTES = 1024

# Message types (payload key "t").
HELLO = "hello"      # both ways: who I am, which versions I speak
EVENT = "ev"         # board -> host: one outbox event, sequence-numbered, persistent
ACK = "ack"          # host -> board: every event up to and including seq "q" is in the ledger
HEARTBEAT = "hb"     # both ways; the board's carries its newest sequence number
COMMAND = "cmd"      # host -> board: {"id", "c", "a": args}
REPLY = "rep"        # board -> host: {"id", "ok", ...} or {"id", "ok": 0, "err", "msg"}

# Fields of the trust rule (see the module text).
SESSION = "s"
COUNTER = "n"

# Which commands exist and who may send them: table/vocab.py (COMMANDS).

# Error codes in a refused command's reply ("err").
E_BAD_MAC = "BAD_MAC"            # MAC missing or wrong
E_REPLAY = "REPLAY"              # counter not above the last accepted one
E_STATE = "STATE"                # the table's state forbids this command now
E_BAD_ARGS = "BAD_ARGS"          # arguments missing, of the wrong type or out of range
E_UNKNOWN = "UNKNOWN_COMMAND"
E_NO_KEY = "NO_KEY"              # no table key provisioned yet
E_NEEDS_SERVICE_SWITCH = "NEEDS_SERVICE_SWITCH"  # physical presence required
E_VERSION = "VERSION"
E_PAID = "ALREADY_PAID"          # this seat was paid in this round already
E_NOT_ELIGIBLE = "NOT_ELIGIBLE"  # the seat had no progressive token when the table locked
E_STORAGE = "STORAGE"            # the board's storage is faulted: nothing can be made durable
ERROR_CODES = (E_BAD_MAC, E_REPLAY, E_STATE, E_BAD_ARGS, E_UNKNOWN, E_NO_KEY,
               E_NEEDS_SERVICE_SWITCH, E_VERSION, E_PAID, E_NOT_ELIGIBLE, E_STORAGE)


class FrameError(ValueError):
    pass


# --- COBS ------------------------------------------------------------------------------------

def cobs_encode(data, delimit=False):
    """COBS of data; delimit=True appends the 0x00 that ends a frame. The output is allocated
    once at its largest size (one code byte per 254, plus one), not grown byte by byte: on a
    board, a growing buffer is a heap fragmented by every frame sent. Each block is found with
    find() and copied as a slice: a loop over every byte in Python was most of the cost of
    sending an event on an emulated Pico (what sending costs now: docs/BENCHMARKS.md, pico_boot)."""
    if type(data) is not bytes:
        data = bytes(data)  # find() on every port; one copy, in C
    n = len(data)
    # The longest the encoding can be, with no byte to spare: a code byte for each zero and one
    # more, and one for each run of 254 non-zero bytes (at most n // 254, when there are no zeros).
    out = bytearray(n + n // 254 + 1 + (1 if delimit else 0))
    view = memoryview(data)
    i = 0  # the first byte of this block
    o = 0  # where this block's code byte goes
    while True:
        limit = i + 254 if i + 254 < n else n
        zero = data.find(b"\x00", i, limit)
        end = zero if zero >= 0 else limit
        length = end - i
        out[o] = length + 1  # at most 0xFF: a block holds up to 254 bytes
        out[o + 1:o + 1 + length] = view[i:end]
        o += 1 + length
        if zero >= 0:
            i = zero + 1  # that zero is what the code byte stands for
        elif length == 254:
            i = end  # a full block (0xFF) stands for no zero; another block follows, maybe empty
        else:
            break  # the end of the data
    if delimit:
        out[o] = 0
        o += 1
    return bytes(memoryview(out)[:o])


def cobs_decode(data):
    out = bytearray()
    i = 0
    n = len(data)
    while i < n:
        code = data[i]
        if code == 0:
            raise FrameError("zero byte inside a COBS block")
        i += 1
        end = i + code - 1
        if end > n:
            raise FrameError("COBS block runs past the frame")
        out.extend(data[i:end])
        i = end
        if code != 0xFF and i < n:
            out.append(0)
    return bytes(out)


# --- CRC and MAC -----------------------------------------------------------------------------

def crc32(data):
    return binascii.crc32(data) & 0xFFFFFFFF


def _le32(value):
    return bytes((value & 0xFF, (value >> 8) & 0xFF, (value >> 16) & 0xFF, (value >> 24) & 0xFF))


def _from_le32(b):
    return b[0] | (b[1] << 8) | (b[2] << 16) | (b[3] << 24)


class MacKey:
    """A key for HMAC-SHA256 (RFC 2104) with its two padded blocks computed once: MicroPython's
    hashlib has sha256 but no hmac module, and xoring the key in Python for every frame would
    cost a board more than the hashing."""

    def __init__(self, key):
        if isinstance(key, MacKey):
            key = key.raw
        self.raw = bytes(key)
        block = 64
        if len(key) > block:
            key = hashlib.sha256(key).digest()
        key = key + bytes(block - len(key))
        self._inner = bytes(b ^ 0x36 for b in key)
        self._outer = bytes(b ^ 0x5C for b in key)

    def mac(self, message):
        inner = hashlib.sha256(self._inner)
        inner.update(message)
        outer = hashlib.sha256(self._outer)
        outer.update(inner.digest())
        return outer.digest()


def as_key(key):
    """None, raw key bytes or a MacKey -> None or a MacKey."""
    if key is None or isinstance(key, MacKey):
        return key
    return MacKey(key)


def hmac_sha256(key, message):
    """HMAC (RFC 2104) over SHA-256."""
    return as_key(key).mac(message)


def macs_equal(a, b):
    """Compare in time independent of where they differ, so timing tells an attacker nothing."""
    if len(a) != len(b):
        return False
    diff = 0
    for i in range(len(a)):
        diff |= a[i] ^ b[i]
    return diff == 0


# --- frames ----------------------------------------------------------------------------------

def encode_payload(message):
    return json.dumps(message, separators=(",", ":")).encode()  # MicroPython 1.24 takes separators


def encode_frame(message, key=None, version=VERSION):
    """Message dict -> bytes for the wire, with the 0x00 delimiter. A key adds the MAC.
    (Another version than ours only for tests and for a hello to a peer of that version.)"""
    return frame_from_payload(encode_payload(message), key, version)


def frame_from_payload(payload, key=None, version=VERSION):
    """A frame around payload bytes already encoded (the outbox stores payloads); a key signs it.
    The body is built in one buffer (no copy per part: a board's heap is small)."""
    key = as_key(key)
    n = len(payload)
    signed_end = 2 + n
    end = signed_end + (MAC_BYTES if key is not None else 0)
    if end > MAX_BODY_BYTES:
        raise FrameError("message too long for one frame")
    body = bytearray(end + 4)
    body[0] = version
    body[1] = FLAG_MAC if key is not None else 0
    body[2:signed_end] = payload
    view = memoryview(body)
    if key is not None:
        body[signed_end:end] = key.mac(view[:signed_end])
    body[end:end + 4] = _le32(crc32(view[:end]))
    return cobs_encode(body, True)


def sealed_frame(message, key, session, counter):
    """A frame under the trust rule: the message names the session and its counter, and is signed.
    With no key (a board not provisioned yet) the frame goes unsigned and unstamped."""
    if key is None:
        return encode_frame(message)
    message[SESSION] = session
    message[COUNTER] = counter
    return encode_frame(message, key)


def check_sealed(frame, key, session, last_counter):
    """The receiving end of the trust rule for frames other than events and hellos.
    Returns (None, counter) when the frame is authentic and new, else (error code, reason)."""
    if not frame.mac_ok(key):
        return E_BAD_MAC, "MAC missing or wrong"
    msg = frame.message
    counter = msg.get(COUNTER)
    if msg.get(SESSION) != session:
        return E_REPLAY, "frame of another session (%r; this one is %r)" % (msg.get(SESSION), session)
    if not isinstance(counter, int) or isinstance(counter, bool) or counter <= last_counter:
        return E_REPLAY, "counter %r not above %d" % (counter, last_counter)
    return None, counter


class Frame:
    """A received frame whose CRC checked out. `mac_ok(key)` authenticates it."""

    def __init__(self, version, flags, payload, signed, mac, message):
        self.version = version
        self.flags = flags
        self.payload = payload
        self.signed = signed
        self.mac = mac
        self.message = message

    def mac_ok(self, key):
        if not key or self.mac is None:
            return False
        return macs_equal(as_key(key).mac(self.signed), self.mac)


def decode_frame(encoded):
    """One frame without its delimiter -> Frame. Raises FrameError on anything wrong."""
    raw = cobs_decode(encoded)
    if len(raw) < 6:
        raise FrameError("frame too short")
    body = raw[:-4]
    if crc32(body) != _from_le32(raw[-4:]):
        raise FrameError("CRC mismatch")
    version = body[0]
    flags = body[1]
    if flags & ~FLAG_MAC:
        raise FrameError("unknown flags")
    mac = None
    signed = body
    if flags & FLAG_MAC:
        if len(body) < 2 + MAC_BYTES + 2:
            raise FrameError("signed frame too short")
        mac = body[-MAC_BYTES:]
        signed = body[:-MAC_BYTES]
    payload = signed[2:]
    try:
        message = json.loads(payload)
    except (ValueError, UnicodeError):
        raise FrameError("payload is not JSON")
    if not isinstance(message, dict) or not isinstance(message.get("t"), str):
        raise FrameError("payload is not a message")
    return Frame(version, flags, payload, signed, mac, message)


class FrameReader:
    """Turns a byte stream into frames. Resynchronises on 0x00; counts what it drops.

    feed(data) returns the list of good Frames completed by data. Never raises on bad input.
    """

    def __init__(self, max_body_bytes=MAX_BODY_BYTES):
        self._buf = bytearray()
        # COBS adds one byte per 254 and the CRC 4: a longer run without 0x00 is garbage.
        self._max_encoded = max_body_bytes + max_body_bytes // 254 + 8
        self._overrun = False
        self.frames_ok = 0
        self.frames_bad = 0
        self.bytes_in = 0
        self.last_error = None

    def feed(self, data):
        frames = []
        if not isinstance(data, bytes):
            data = bytes(data)
        self.bytes_in += len(data)
        start = 0
        n = len(data)
        while start < n:
            end = data.find(b"\x00", start)
            if end < 0:
                chunk = data[start:]
                if not self._overrun:
                    self._buf.extend(chunk)
                    if len(self._buf) > self._max_encoded:
                        self._buf = bytearray()
                        self._overrun = True
                break
            if not self._overrun:
                self._buf.extend(data[start:end])
            start = end + 1
            if self._overrun:
                self._overrun = False
                self.frames_bad += 1
                self.last_error = "frame too long"
                continue
            if not self._buf:
                continue  # idle delimiters are allowed (a sender may flush with 0x00)
            encoded = bytes(self._buf)
            self._buf = bytearray()
            try:
                frame = decode_frame(encoded)
            except FrameError as exc:
                self.frames_bad += 1
                self.last_error = str(exc)
                continue
            except Exception as exc:  # noqa: anything odd in a frame is a bad frame, never a crash
                self.frames_bad += 1
                self.last_error = "undecodable: %r" % (exc,)
                continue
            self.frames_ok += 1
            frames.append(frame)
        return frames


# --- message constructors (both sides build messages only through these) ----------------------

def hello(board_id=None, firmware=None, boot_count=None, role="host", session=None, host_counter=None,
          acked_seq=None):
    """session (board only): this boot's session; host_counter (board only): the last counter it
    took from a host in that session, so a restarted host goes on above it; acked_seq (board
    only): the newest event it holds acknowledged (a ledger behind it sees what it missed)."""
    msg = {"t": HELLO, "v": list(SUPPORTED_VERSIONS), "role": role}
    if acked_seq is not None:
        msg["a"] = acked_seq
    if session is not None:
        msg[SESSION] = session
    if host_counter is not None:
        msg["hn"] = host_counter
    if board_id is not None:
        msg["b"] = board_id
    if firmware is not None:
        msg["fw"] = firmware
    if boot_count is not None:
        msg["boot"] = boot_count
    return msg


def ack(seq, gap=False):
    """Everything up to seq is recorded. gap=True: something after seq was lost, resend from it."""
    msg = {"t": ACK, "q": seq}
    if gap:
        msg["gap"] = 1
    return msg


def heartbeat(newest_seq=None):
    msg = {"t": HEARTBEAT}
    if newest_seq is not None:
        msg["q"] = newest_seq
    return msg


def command(command_id, name, args=None):
    return {"t": COMMAND, "id": command_id, "c": name, "a": args or {}}


def reply_ok(command_id, fields=None):
    msg = {"t": REPLY, "id": command_id, "ok": 1}
    if fields:
        for k in fields:
            msg[k] = fields[k]
    return msg


def reply_error(command_id, code, text):
    return {"t": REPLY, "id": command_id, "ok": 0, "err": code, "msg": text}


def choose_version(offered):
    """The highest version both sides speak, or None."""
    best = None
    if not isinstance(offered, (list, tuple)):
        return None  # a peer's malformed hello must not take the main loop down
    for v in offered:
        if v in SUPPORTED_VERSIONS and (best is None or v > best):
            best = v
    return best
