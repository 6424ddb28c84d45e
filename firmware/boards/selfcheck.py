"""The power-up self-check and the checksums `tablectl flash` verifies: sha256 of each firmware
file on the board's filesystem, compared with the manifest.json written at deploy. File I/O, so it
lives with the boards, not in the pure table/ package."""
import json


def file_checksums(root, names=None):
    """sha256 hex of each firmware file (for the power-up self-check and `tablectl flash`)."""
    import hashlib
    import os
    out = {}  # type: dict  # name -> sha256 hex, or None for a file that cannot be read
    if names is None:
        names = []
        _walk(root, "", names, os)
    # One buffer for every read: a new bytes object a chunk was most of this check's heap churn at
    # boot, and 2 KiB reads take littlefs fewer calls than 512-byte ones.
    buf = bytearray(2048)
    view = memoryview(buf)
    for name in names:
        try:
            h = hashlib.sha256()
            with open(root + "/" + name, "rb") as f:
                while True:
                    n = f.readinto(buf)
                    if not n:
                        break
                    h.update(view[:n])
            out[name] = "".join("%02x" % b for b in h.digest())
        except OSError:
            out[name] = None
    return out


def file_macs(root, names, seed):
    """{name: [HMAC-SHA256 hex, HMAC-SHA1 hex or None]} of each firmware file, keyed with a seed
    the regulator chose just now (`tablectl verify-software`): unlike a plain checksum, no table
    of answers kept on a doctored board can give it, only the files themselves. None for a file
    that cannot be read; HMAC-SHA1 None where the build's hashlib has no sha1. seed: 1..64 bytes."""
    import hashlib
    algs = [hashlib.sha256]  # type: list
    if hasattr(hashlib, "sha1"):
        algs.append(hashlib.sha1)
    ipad = bytearray(64)  # RFC 2104 with a 64-byte block (both hashes), the seed padded with zeros
    opad = bytearray(64)
    for i in range(64):
        b = seed[i] if i < len(seed) else 0
        ipad[i] = b ^ 0x36
        opad[i] = b ^ 0x5C
    out = {}  # type: dict
    buf = bytearray(2048)
    view = memoryview(buf)
    for name in names:
        try:
            inner = [alg(ipad) for alg in algs]
            with open(root + "/" + name, "rb") as f:
                while True:
                    n = f.readinto(buf)
                    if not n:
                        break
                    for h in inner:
                        h.update(view[:n])
            macs = []  # type: list
            for alg, h in zip(algs, inner):
                outer = alg(opad)
                outer.update(h.digest())
                macs.append("".join("%02x" % b for b in outer.digest()))
            if len(macs) < 2:
                macs.append(None)
            out[name] = macs
        except OSError:
            out[name] = None
    return out


def _walk(root, prefix, names, os):
    for entry in sorted(os.listdir(root + ("/" + prefix if prefix else ""))):
        rel = prefix + "/" + entry if prefix else entry
        full = root + "/" + rel
        if os.stat(full)[0] & 0x4000:
            if entry in ("table", "drivers", "boards"):
                _walk(root, rel, names, os)
        elif entry.endswith(".py") or entry.endswith(".mpy") or entry == "pinmap.json":
            names.append(rel)


def manifest_checker(root):
    """A self-check that compares the firmware files with manifest.json written at deploy."""
    def check():
        try:
            with open(root + "/manifest.json") as f:
                manifest = json.load(f)
        except OSError:
            return "no manifest"
        except ValueError:
            return "manifest unreadable"
        actual = file_checksums(root, list(manifest))
        for name in manifest:
            if actual.get(name) != manifest[name]:
                return "checksum mismatch: %s" % name
        return "ok"
    return check
