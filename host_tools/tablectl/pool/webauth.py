"""Who may read the floor page and the API: per-user tokens, made by `tablectl pool token create
NAME`, kept only as their SHA-256 in the pool's key folder (`web-tokens.json`, mode 0600).

A token is 256 random bits (`secrets.token_bytes(32)`), shown once when it is made and never
stored: the file holds its hash, so a copy of the key folder's token file lets no one in. A token
presented is hashed and compared with every stored hash with `hmac.compare_digest` (constant time,
and every entry is compared whatever matched, so the time taken does not tell which user or how
much of a hash matched). Revoking a user removes the entry; the web service reads the file again
when it changes, so a revoked token stops working at its next request.

Nothing here writes a token to a log or an error message: a refusal names no secret.
"""
import hashlib
import hmac
import json
import os
import re
import secrets
import stat
import threading
import time

from ..errors import TablectlError

TOKENS_FILE = "web-tokens.json"
PREFIX = "tpw1_"  # says what a token is for (a pool web token) when one turns up where it should not
_NAME = re.compile(r"^[A-Za-z0-9_.@-]{1,64}$")
_TOKEN = re.compile(r"^%s[A-Za-z0-9_-]{43}$" % PREFIX)


def _hash(token):
    return hashlib.sha256(token.encode("ascii", "replace")).hexdigest()


def _path(keys_folder):
    return os.path.join(keys_folder, TOKENS_FILE)


def _load(keys_folder):
    path = _path(keys_folder)
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return {}
    if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise TablectlError("token file %s can be read by others (mode %o): chmod 600 it" % (path, st.st_mode & 0o777))
    try:
        with open(path) as f:
            data = json.load(f)
        users = data["users"]
        if not isinstance(users, dict) or not all(isinstance(u, dict) and re.fullmatch(r"[0-9a-f]{64}",
                                                                                       str(u.get("sha256")))
                                                   for u in users.values()):
            raise ValueError("entries")
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TablectlError("token file %s is not readable as web tokens (%s): remove it and make the tokens again"
                            % (path, type(exc).__name__))
    return users


def _save(keys_folder, users):
    os.makedirs(keys_folder, mode=0o700, exist_ok=True)
    path = _path(keys_folder)
    tmp = path + ".tmp"
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        os.write(fd, json.dumps({"version": 1, "users": users}, indent=1, sort_keys=True).encode() + b"\n")
        os.fsync(fd)
    finally:
        os.close(fd)
    os.chmod(tmp, 0o600)
    os.replace(tmp, path)


def create(keys_folder, name):
    """A new token for user NAME: returned once, stored only as its hash. A name in use is refused
    (revoke it first), so a token cannot be replaced silently."""
    if not isinstance(name, str) or not _NAME.match(name):
        raise TablectlError("user name %r: 1 to 64 letters, digits and . _ - @" % (name,))
    users = _load(keys_folder)
    if name in users:
        raise TablectlError("user %s has a token already: `tablectl pool token revoke %s` first" % (name, name))
    token = PREFIX + secrets.token_urlsafe(32)  # 32 random bytes -> 43 base64url characters
    users[name] = {"sha256": _hash(token), "created": int(time.time())}
    _save(keys_folder, users)
    return token


def revoke(keys_folder, name):
    users = _load(keys_folder)
    if name not in users:
        raise TablectlError("no web token for user %r" % (name,))
    del users[name]
    _save(keys_folder, users)


def names(keys_folder):
    return [{"name": n, "created": u.get("created")} for n, u in sorted(_load(keys_folder).items())]


class Tokens:
    """The web service's view of the token file: read again when it changes (mtime, size, inode)."""

    def __init__(self, keys_folder):
        self.keys_folder = keys_folder
        self._lock = threading.Lock()
        self._sig = None
        self._hashes = []  # [(sha256 hex, name)]

    def _refresh(self):
        path = _path(self.keys_folder)
        try:
            st = os.stat(path)
            sig = (st.st_mtime_ns, st.st_size, st.st_ino)
        except FileNotFoundError:
            sig = None
        if sig == self._sig:
            return
        try:
            users = _load(self.keys_folder)
        except TablectlError:
            users = {}  # an unreadable or loose file lets nobody in (the command says why)
        self._hashes = [(u["sha256"], n) for n, u in users.items()]
        self._sig = sig

    def user(self, token):
        """The user whose token this is, or None. Constant time in the token's content: every
        stored hash is compared, and the comparison itself is compare_digest."""
        if not isinstance(token, str) or len(token) > 256:
            return None
        with self._lock:
            self._refresh()
            hashes = list(self._hashes)
        presented = _hash(token)
        found = None
        for h, name in hashes:
            if hmac.compare_digest(h, presented):
                found = name
        # A well-formed token is the only kind that can match; the shape check is after the
        # comparisons so that a malformed token costs the same time.
        return found if _TOKEN.match(token) else None


class Sessions:
    """Signed-in browsers of the floor page: a random session id (256 bits) in an HttpOnly,
    SameSite=Strict cookie, held here only as its hash, for `ttl_s`. In memory: a restart of the
    web service signs everyone out. A session ends at its time or when its user's token is revoked."""

    def __init__(self, tokens, ttl_s=12 * 3600):
        self.tokens = tokens
        self.ttl_s = ttl_s
        self._lock = threading.Lock()
        self._by_hash = {}  # sha256(session id) -> (user, token hash, expires)

    def open(self, token):
        user = self.tokens.user(token)
        if user is None:
            return None, None
        sid = secrets.token_urlsafe(32)
        with self._lock:
            now = time.time()
            self._by_hash = {k: v for k, v in self._by_hash.items() if v[2] > now}
            self._by_hash[_hash(sid)] = (user, _hash(token), now + self.ttl_s)
        return sid, user

    def user(self, sid):
        if not isinstance(sid, str) or not 20 <= len(sid) <= 100:
            return None
        key = _hash(sid)
        with self._lock:
            got = self._by_hash.get(key)
        if got is None or got[2] < time.time():
            return None
        with self.tokens._lock:
            self.tokens._refresh()
            still = any(hmac.compare_digest(h, got[1]) for h, _ in self.tokens._hashes)
        return got[0] if still else None

    def close(self, sid):
        if isinstance(sid, str):
            with self._lock:
                self._by_hash.pop(_hash(sid), None)


class Throttle:
    """Failed sign-ins and bearer tokens per client address: more than `limit` in `window_s` and
    that address is answered 429 until the window passes (guessing a 256-bit token is hopeless;
    this keeps a guesser from loading the service and the log)."""

    def __init__(self, limit=20, window_s=60.0):
        self.limit = limit
        self.window_s = window_s
        self._lock = threading.Lock()
        self._fails = {}

    def blocked(self, addr):
        now = time.monotonic()
        with self._lock:
            times = [t for t in self._fails.get(addr, ()) if now - t < self.window_s]
            if times:
                self._fails[addr] = times
            else:
                self._fails.pop(addr, None)
            return len(times) >= self.limit

    def failed(self, addr):
        with self._lock:
            if len(self._fails) > 10000:  # a flood of addresses: forget the oldest half
                for k in list(self._fails)[:5000]:
                    del self._fails[k]
            self._fails.setdefault(addr, []).append(time.monotonic())
