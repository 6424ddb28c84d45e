"""The table key on the board's flash: two slots, `kA` and `kB`, written alternately.

A slot is b"TK1", a generation (4 bytes, little-endian), the key (32 bytes), and the CRC-32 of
all that. A new key goes into the slot that does not hold the newest good key, with the next
generation, and is read back before it counts; so a power cut during the write leaves the other
slot, and the key the host still holds, as they were. The newest good slot is the key.

What is never a downgrade: a slot that is there but does not check (bit rot, a torn write) is
a problem the board raises as the `key` fault (coin-in off until a new key is provisioned); the
board still signs with the good slot, if one is left. With no good slot at all, a board that was
keyed (a slot file is there, or its journal says so) stays a keyed board without a key: it takes
nothing but hello and a provision (docs/SECURITY.md "Keys").

`key.bin` (the key and its CRC-32) is the one-file store of earlier firmware: read as
generation 0, removed once a slot holds a newer key.
"""
from table import protocol as proto

SLOTS = ("kA", "kB")
LEGACY = "key.bin"
_MAGIC = b"TK1"
_SIZE = 43  # magic 3 + generation 4 + key 32 + CRC 4


def encode(gen, key):
    body = _MAGIC + gen.to_bytes(4, "little") + key
    return body + proto.crc32(body).to_bytes(4, "little")


def decode(data):
    """(generation, key), or None for bytes that are not a whole, checked slot."""
    if data is None or len(data) != _SIZE or bytes(data[:3]) != _MAGIC:
        return None
    if proto.crc32(data[:39]).to_bytes(4, "little") != bytes(data[39:]):
        return None
    return int.from_bytes(data[3:7], "little"), bytes(data[7:39])


def load(nv):
    """(key or None, generation, slot index or -1, problem or None, a key file is there)."""
    best = None
    problem = None
    present = False
    for index in range(2):
        data = nv.read(SLOTS[index])
        if data is None:
            continue
        present = True
        got = decode(data)
        if got is None:
            problem = "key slot %s damaged" % SLOTS[index]
        elif best is None or got[0] > best[0]:
            best = (got[0], index, got[1])
    data = nv.read(LEGACY)
    if data is not None:
        present = True
        if len(data) == 36 and proto.crc32(data[:32]).to_bytes(4, "little") == bytes(data[32:]):
            if best is None:
                best = (0, -1, bytes(data[:32]))
        elif best is None:
            problem = "key.bin damaged"
    if best is None:
        return None, 0, -1, problem, present
    return best[2], best[0], best[1], problem, present


def store(nv, key, gen, slot):
    """Write `key` with generation gen + 1 into the slot other than `slot` (the newest good one,
    or -1), read it back, then drop the legacy file. Returns (generation, slot). Raises OSError
    when the flash did not keep it."""
    target = 0 if slot == 1 else 1 if slot == 0 else 0
    data = encode(gen + 1, key)
    nv.write(SLOTS[target], data)
    if nv.read(SLOTS[target]) != data:
        raise OSError(5)  # EIO: the slot did not keep what was written
    nv.remove(LEGACY)
    return gen + 1, target
