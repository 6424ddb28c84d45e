"""Where the host keeps its secrets: one file per key, mode 0600, in a folder of mode 0700 that is
not the ledger. The ledger may be copied, backed up and read by auditors; a table key in it would
let anyone with a copy sign awards, and a ledger key in it would let anyone who can edit the file
recompute its chain (docs/SECURITY.md).

    <keys>/table-<board id>.key   the table key shared with that board (64 hex digits)
    <keys>/table-<board id>.key.N its earlier keys (N = 1, 2, ...), for checking old MACs
    <keys>/table-<board id>.new   a key on its way to the board (provision): written, synced,
                                  before it is sent; it becomes the key when the board's first
                                  frame signed with it is heard, and goes when the board refuses it
    <keys>/ledger.key             the key of the ledger's row MACs (64 hex digits)
    <keys>/ledger.anchor          the ledger's newest row, signed (ledger.py): kept here, not beside
                                  the ledger, so an old copy of the books cannot bring its own

The folder is $TABLECTL_KEYS, else `<ledger path>.keys` beside the ledger (for a service account,
point TABLECTL_KEYS at a folder only that account can read).
"""
from __future__ import annotations

import os
import re
import secrets
import stat
from typing import Optional

from .errors import TablectlError

_BOARD_ID = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")


def keys_dir_for(db_path: str) -> str:
    return os.environ.get("TABLECTL_KEYS") or os.path.abspath(db_path) + ".keys"


class KeyStore:
    def __init__(self, folder: str) -> None:
        self.folder = folder

    @classmethod
    def for_ledger(cls, db_path: str) -> "KeyStore":
        return cls(keys_dir_for(db_path))

    def ensure_folder(self) -> None:
        self._ensure_folder()

    def _ensure_folder(self) -> None:
        try:
            os.makedirs(self.folder, mode=0o700, exist_ok=True)
            os.chmod(self.folder, 0o700)
        except OSError as exc:
            raise TablectlError("cannot make the key folder %s: %s" % (self.folder, exc.strerror or exc))

    def _path(self, name: str) -> str:
        return os.path.join(self.folder, name)

    def _read(self, name: str) -> Optional[bytes]:
        path = self._path(name)
        try:
            st = os.stat(path)
        except FileNotFoundError:
            return None
        if st.st_mode & (stat.S_IRWXG | stat.S_IRWXO):
            raise TablectlError("key file %s can be read by others (mode %o): chmod 600 it, and consider the "
                                "key disclosed" % (path, st.st_mode & 0o777))
        with open(path) as f:
            text = f.read().strip()
        if not re.fullmatch(r"[0-9a-f]{64}", text):
            raise TablectlError("key file %s does not hold a 64-hex-digit key" % path)
        return bytes.fromhex(text)

    def _write(self, name: str, key: bytes) -> None:
        self._ensure_folder()
        path = self._path(name)
        tmp = path + ".tmp"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        try:
            os.write(fd, key.hex().encode() + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        os.replace(tmp, path)
        self._sync_folder()

    def _sync_folder(self) -> None:
        """The rename itself made durable: a key the host sent must outlive a power cut."""
        fd = os.open(self.folder, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)

    @staticmethod
    def _table_name(board: str) -> str:
        if not isinstance(board, str) or not _BOARD_ID.match(board):
            raise TablectlError("board id %r is not a valid name for a key file" % (board,))
        return "table-%s.key" % board

    def table_key(self, board: str) -> Optional[bytes]:
        """The table key for this board, or None when the host holds none."""
        return self._read(self._table_name(board))

    def set_table_key(self, board: str, key: bytes) -> None:
        """A new key for the board; the old one is kept (renamed), since the ledger's older
        events carry MACs made with it and an audit must still check them."""
        name = self._table_name(board)
        old = self._read(name)
        if old is not None and old != key:
            n = 1
            while os.path.exists(self._path("%s.%d" % (name, n))):
                n += 1
            os.replace(self._path(name), self._path("%s.%d" % (name, n)))
        self._write(name, key)

    def pending_table_key(self, board: str) -> Optional[bytes]:
        """A key sent to the board (or about to be) that it has not yet been heard using."""
        return self._read(self._table_name(board)[:-4] + ".new")

    def set_pending_table_key(self, board: str, key: bytes) -> None:
        """Durably, before the key goes on the wire: whatever happens next (the board takes it
        and the host dies, the reply is lost), the host can still check what the board signs."""
        self._write(self._table_name(board)[:-4] + ".new", key)

    def promote_pending(self, board: str, key: bytes) -> None:
        """The board was heard signing with the pending key: it is the board's key now."""
        self.set_table_key(board, key)
        self.drop_pending(board)

    def drop_pending(self, board: str) -> None:
        try:
            os.remove(self._path(self._table_name(board)[:-4] + ".new"))
        except FileNotFoundError:
            return
        self._sync_folder()

    def all_table_keys(self, board: str) -> list[bytes]:
        """The board's current key and every earlier one (for checking old MACs)."""
        name = self._table_name(board)
        keys: list[bytes] = []
        current = self._read(name)
        if current is not None:
            keys.append(current)
        n = 1
        while os.path.exists(self._path("%s.%d" % (name, n))):
            earlier = self._read("%s.%d" % (name, n))
            if earlier is not None:
                keys.append(earlier)
            n += 1
        return keys

    def ledger_key(self, create: bool = False) -> Optional[bytes]:
        key = self._read("ledger.key")
        if key is None and create:
            key = secrets.token_bytes(32)
            self._write("ledger.key", key)
        return key
