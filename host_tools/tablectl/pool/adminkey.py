"""The pool administrator's key: Ed25519 (the `cryptography` package), so that the pool server holds
only the public half and cannot sign a change itself (docs/POOL.md, docs/SECURITY.md).

    the administrator's account   ~/.config/tablectl/pool-admin.key   (or $TABLECTL_POOL_ADMIN_KEY,
                                   or --admin-key FILE): the private key, 64 hex digits, mode 0600
                                   in a folder of mode 0700; never on the pool server
    the pool's key folder          admin.pub: the public key, 64 hex digits; written once, at the
                                   first set-up, never replaced silently
    the pool's books               an `admin_key` row naming the public key every change since is
                                   checked against (pool/store.py)

A signature covers the books it is meant for, the op, the pool, the change and the pool's
parameter version, so a signed change can be played neither again nor on other books.
"""
import json
import os
import re
import stat

from ..errors import TablectlError

DOMAIN = "tablectl-pool-admin-ed25519-v1"
_HEX64 = re.compile(r"[0-9a-f]{64}")


def default_path():
    return os.environ.get("TABLECTL_POOL_ADMIN_KEY") or os.path.join(
        os.path.expanduser("~"), ".config", "tablectl", "pool-admin.key")


def _ed25519():
    try:
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError:
        raise TablectlError("the pool's administration needs the `cryptography` package (pip install "
                            "cryptography; `make setup` installs it)")
    return ed25519


def _raw_public(private):
    from cryptography.hazmat.primitives import serialization
    return private.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)


def private_from_seed(seed):
    """An Ed25519 private key from its 32-byte seed."""
    if not isinstance(seed, (bytes, bytearray)) or len(seed) != 32:
        raise TablectlError("an administrator key is 32 bytes")
    return _ed25519().Ed25519PrivateKey.from_private_bytes(bytes(seed))


def public_hex(private):
    return _raw_public(private).hex()


def generate(path):
    """Make a new private key at path (never over an existing one); returns its public key (hex)."""
    ed = _ed25519()
    folder = os.path.dirname(os.path.abspath(path))
    existed = os.path.isdir(folder)
    try:
        os.makedirs(folder, mode=0o700, exist_ok=True)
        if not existed:
            os.chmod(folder, 0o700)  # makedirs' mode goes through the umask
    except OSError as exc:
        raise TablectlError("cannot make the folder %s: %s" % (folder, exc.strerror or exc))
    if existed and os.stat(folder).st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        # A folder of someone else's (/tmp, a shared drive) is never changed: a key made there
        # could be swapped by whoever else writes it, so none is made.
        raise TablectlError("the folder %s can be written by others: a key made there could be swapped; "
                            "make it in a folder of your own (chmod 700)" % folder)
    from cryptography.hazmat.primitives import serialization
    private = ed.Ed25519PrivateKey.generate()
    seed = private.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                                 serialization.NoEncryption())
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        raise TablectlError("%s exists already: a key is never overwritten (move it away first, and "
                            "change the books' key with a signed change if it is to be replaced)" % path)
    except OSError as exc:
        raise TablectlError("cannot write %s: %s" % (path, exc.strerror or exc))
    try:
        os.write(fd, seed.hex().encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    return public_hex(private)


def load_private(path):
    """The private key at path; refused if others can read it or its folder is open to them."""
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise TablectlError("no pool administrator key at %s: make one with `tablectl pool admin-key --new` "
                            "(or say --admin-key FILE, or set TABLECTL_POOL_ADMIN_KEY)" % path)
    except OSError as exc:
        raise TablectlError("cannot read %s: %s" % (path, exc.strerror or exc))
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TablectlError("administrator key %s can be read by others (mode %o): chmod 600 it, and consider "
                            "the key disclosed" % (path, st.st_mode & 0o777))
    # The folder the path names and, through a link, the folder the key really is in: whoever can
    # write either can put their own key in its place.
    real = os.path.realpath(path)
    for folder_path in dict.fromkeys((os.path.dirname(os.path.abspath(path)), os.path.dirname(real))):
        folder = os.stat(folder_path)
        if folder.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
            raise TablectlError("the folder of administrator key %s can be written by others: chmod 700 it"
                                % (path if folder_path == os.path.dirname(os.path.abspath(path))
                                   else "%s (a link to %s)" % (path, real)))
    with open(real) as f:
        text = f.read().strip()
    if not _HEX64.fullmatch(text):
        raise TablectlError("%s does not hold an administrator key (64 hex digits)" % path)
    return private_from_seed(bytes.fromhex(text))


def parse_public(text, where="a public key"):
    """A public key as 64 hex digits (a file's content or the text itself); refused otherwise."""
    text = (text or "").strip().lower()
    if not _HEX64.fullmatch(text):
        raise TablectlError("%s is not an Ed25519 public key (64 hex digits)" % where)
    return text


def message(books, op, pool, body, version):
    """The exact bytes signed: canonical JSON, so the signer and every checker agree."""
    return json.dumps([DOMAIN, books, op, pool, body, version], sort_keys=True, separators=(",", ":"),
                      ensure_ascii=True).encode()


def sign(private, books, op, pool, body, version):
    return private.sign(message(books, op, pool, body, version)).hex()


def verify(public, sig, books, op, pool, body, version):
    """True only for a signature by that public key over exactly this change."""
    ed = _ed25519()
    from cryptography.exceptions import InvalidSignature
    if not isinstance(sig, str) or not re.fullmatch(r"[0-9a-f]{128}", sig) or not isinstance(public, str) \
            or not _HEX64.fullmatch(public):
        return False
    try:
        ed.Ed25519PublicKey.from_public_bytes(bytes.fromhex(public)).verify(
            bytes.fromhex(sig), message(books, op, pool, body, version))
    except (InvalidSignature, ValueError, TypeError):
        return False
    return True
