"""The table's books: an SQLite ledger (WAL) that can prove itself.

A row is an event from a board (unique by board and sequence number), a command with its reply,
or a note from the service (an intent, a gap, a resynchronisation). Three things make an edit
show (docs/SECURITY.md):

- every row carries a MAC chained to the row before it, keyed with the ledger key, which lives in
  the key store (keys.py), never in this file: an edited, deleted, inserted or reordered row, or a
  chain recomputed without the key, no longer checks;
- an anchor file in the key store (<keys>/ledger.anchor), not beside the ledger, names the
  newest row and its MAC, itself signed with the ledger key: rows cut from the end, or an old copy
  of the ledger put back, are missing against it (whoever can put back the ledger's files cannot
  put back the key store's); an anchor beside the ledger from earlier versions is moved there;
- an event row keeps the exact bytes the board signed and the board's MAC over them: a row forged
  by someone holding the ledger key but not the table key still fails (`verify` with the table
  keys), and the board's sequence numbers must run without a gap that no signed note explains.

`verify()` names each problem by row. The file, its WAL and the anchor are mode 0600.

The file carries its schema version (SQLite's `PRAGMA user_version`). A writer that opens an older
file keeps a copy of it first (`<db>.v<N>.bak`), then upgrades it in place through the steps of
MIGRATIONS, in order, in one transaction: a step that fails leaves the file as it was. A file newer
than this code is refused, by writers and readers alike, before anything is read or written.
"""
from __future__ import annotations

import hmac
import json
import os
import sqlite3
import time
from typing import Any, Callable, Iterable, Iterator, Optional, Sequence, TypeVar, Union

from . import hashchain
from .errors import TablectlError
from .hashchain import GENESIS, legacy_row_hash, row_mac  # noqa: F401 (the books' names, kept here)
from .keys import KeyStore

# An event as the link hands it over: the board's message, plus "_raw" (the exact bytes it signed)
# and "_mac" (its MAC, hex) when it was signed.
Event = dict[str, Any]
# (last contiguous sequence number now in the ledger, new rows, duplicates, a gap was seen)
RecordResult = tuple[int, int, int, bool]
# The newest row: (its id, its MAC); (0, GENESIS) for an empty ledger.
Tip = tuple[int, str]
# (board, events) or (board, events, the newest number the board says it holds acknowledged)
Batch = Union[tuple[str, Sequence[Event]], tuple[str, Sequence[Event], Optional[int]]]
_T = TypeVar("_T")

# Schema 1: the ledger and boards tables, rows chained by unkeyed SHA-256, table keys in the file
#           (user_version 0: it predates the version number).
# Schema 2: rows chained by keyed MACs (the key in the key store), the board's MAC kept with each
#           event, table keys moved out to the key store, a meta table.
SCHEMA_VERSION = 2
SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger (
    id INTEGER PRIMARY KEY,
    board TEXT NOT NULL,
    seq INTEGER,
    kind TEXT NOT NULL,
    recorded_at REAL NOT NULL,
    body TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    board_mac TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS ledger_event ON ledger(board, seq) WHERE seq IS NOT NULL;
CREATE INDEX IF NOT EXISTS ledger_kind ON ledger(board, kind);
CREATE TABLE IF NOT EXISTS boards (
    board TEXT PRIMARY KEY,
    last_seq INTEGER NOT NULL DEFAULT 0,
    port TEXT,
    table_key TEXT,
    counter INTEGER NOT NULL DEFAULT 0,
    duplicates INTEGER NOT NULL DEFAULT 0,
    gaps INTEGER NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS meta (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""
# meta names of archiving (archive.py): where this file's chain starts (rows moved to an archive
# before it) and, in an archive file, where its chain ends
ARCHIVED, SEALED = "archived", "sealed"

# json.dumps with sort_keys builds a new encoder on every call: on the ledger's write path (a body
# per event) that was a tenth of the time. One, made once; the text it writes is json.dumps's to
# the byte (the chain of every existing ledger depends on it).
_COMPACT_SORTED = json.JSONEncoder(sort_keys=True, separators=(",", ":"))
_signed = hashchain.signed


def _whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _create_private(path: str) -> None:
    """Create the file mode 0600 before SQLite opens it (SQLite gives its WAL the same mode)."""
    if not os.path.exists(path):
        fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)
        os.close(fd)
    os.chmod(path, 0o600)


def _schema_of(db: sqlite3.Connection) -> int:
    """The schema a file holds: its user_version, or 1 for a ledger from before the version
    number, 0 for a file with no ledger in it yet."""
    version = int(db.execute("PRAGMA user_version").fetchone()[0])
    if version == 0 and db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='ledger'").fetchone():
        return 1
    return version


def _backup_path(path: str, version: int) -> str:
    """Where the copy of a schema-`version` file goes: <db>.v<N>.bak, or the first
    <db>.v<N>.<k>.bak free (a copy kept by an earlier upgrade is never overwritten)."""
    base = os.path.abspath(path)
    candidate = "%s.v%d.bak" % (base, version)
    k = 2
    while os.path.exists(candidate):
        candidate = "%s.v%d.%d.bak" % (base, version, k)
        k += 1
    return candidate


def anchor_path_for(db_path: str, keys: KeyStore) -> str:
    """The ledger's anchor: in its key store, beside the ledger key (one ledger a key store, as
    the ledger key is one), so a copy of the books and their key store verifies as a pair."""
    return os.path.join(keys.folder, "ledger.anchor")


class Ledger:
    def __init__(self, path: str, synchronous: str = "FULL", readonly: bool = False,
                 keys: Optional[KeyStore] = None) -> None:
        self.path = path
        self.keys = keys if keys is not None else KeyStore.for_ledger(path)
        self.anchor_path = anchor_path_for(path, self.keys)
        self.legacy_anchor_path = os.path.abspath(path) + ".anchor"  # where earlier versions kept it
        self._anchor_fd: Optional[int] = None
        self.key: Optional[bytes]
        self.upgraded_from: Optional[int] = None   # the schema this open upgraded the file from
        self.backup_path: Optional[str] = None     # the copy kept before that upgrade
        if readonly:
            # Readers (events, monitor, reports, audit) never take the write lock, so a busy
            # service cannot keep them waiting inside SQLite (where Ctrl-C cannot reach them).
            self.db = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=5,
                                      isolation_level=None, check_same_thread=False)
            try:
                self._check_readable()
            except BaseException:
                self.db.close()
                raise
            self.key = self.keys.ledger_key()
            return
        folder = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(folder):
            raise TablectlError("cannot open the ledger %s: folder %s does not exist" % (path, folder))
        if os.path.isdir(path):
            raise TablectlError("cannot open the ledger %s: it is a folder" % path)
        _create_private(path)
        self.key = self.keys.ledger_key(create=True)
        self.db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        try:
            self._refuse_newer(_schema_of(self.db))
            self.db.execute("PRAGMA journal_mode=WAL")
            # FULL: a committed row survives a power cut of the host too, before the board is acked.
            self.db.execute("PRAGMA synchronous=%s" % synchronous)
            self._migrate()
        except sqlite3.DatabaseError as exc:
            self.db.close()
            raise TablectlError("%s is not a tablectl ledger (%s)" % (path, exc))
        except BaseException:
            self.db.close()
            raise

    # ------------------------------------------------------------------ schema
    def _refuse_newer(self, version: int) -> None:
        if version > SCHEMA_VERSION:
            raise TablectlError("the ledger %s is schema %d, newer than this tablectl reads (schema %d): "
                                "use the tablectl that wrote it, or a newer one" % (self.path, version,
                                                                                    SCHEMA_VERSION))

    def _check_readable(self) -> None:
        """A reader takes only the schema it knows: it may not upgrade (it never writes)."""
        try:
            version = _schema_of(self.db)
        except sqlite3.DatabaseError as exc:
            raise TablectlError("%s is not a tablectl ledger (%s)" % (self.path, exc))
        self._refuse_newer(version)
        if version == 0:
            # an SQLite file with no ledger in it (or one a writer is creating this instant): said
            # here in one line, not as "no such table" at the first read
            raise TablectlError("%s is not a tablectl ledger (it holds no ledger table)" % self.path)
        if version < SCHEMA_VERSION:
            raise TablectlError("the ledger %s is schema %d, older than this tablectl reads (schema %d): open "
                                "it once for writing (`tablectl serve --db %s`) to upgrade it (a copy is kept "
                                "first)" % (self.path, version, SCHEMA_VERSION, self.path))

    def _migrate(self) -> None:
        """Bring the file to SCHEMA_VERSION: a new file gets the schema at once; an older one is
        copied first, then upgraded step by step in one transaction."""
        if _schema_of(self.db) == SCHEMA_VERSION:
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            version = _schema_of(self.db)  # again, under the write lock: another writer may have done it
            self._refuse_newer(version)
            if version == 0:
                self._create_schema()
            elif version < SCHEMA_VERSION:
                self.backup_path = self._keep_copy(version)
                for step_from, step in MIGRATIONS:
                    if step_from >= version:
                        try:
                            step(self)
                        except (sqlite3.DatabaseError, ValueError, KeyError, TypeError) as exc:
                            raise TablectlError("cannot upgrade the ledger %s from schema %d to %d: %s; the file "
                                                "is unchanged (a copy is in %s)" % (self.path, step_from,
                                                                                    step_from + 1, exc,
                                                                                    self.backup_path))
                self.upgraded_from = version
            if version != SCHEMA_VERSION:
                self.db.execute("PRAGMA user_version=%d" % SCHEMA_VERSION)
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:  # SQLite has rolled back by itself on some errors (disk full)
                self.db.execute("ROLLBACK")
            raise
        if self.upgraded_from is not None:
            # Schema 1 had no anchor: name the newest row now, or verify finds the anchor missing
            # (and rows cut from the end unseen) until the next row is written.
            self._write_anchor(self._tip())

    def _create_schema(self) -> None:
        for stmt in SCHEMA.split(";"):
            if stmt.strip():
                self.db.execute(stmt)

    def _keep_copy(self, version: int) -> str:
        """A consistent copy of the file as it is (its WAL included), mode 0600, before any step."""
        target = _backup_path(self.path, version)
        _create_private(target)
        # Read through a connection of its own: this one holds the write lock (nothing can change
        # the file under the copy), and in WAL mode a reader is not kept out by it.
        source = sqlite3.connect(self.path)
        copy = sqlite3.connect(target)
        try:
            source.backup(copy)
        finally:
            copy.close()
            source.close()
        return target

    def _schema_1_to_2(self) -> None:
        """Keyed row MACs, board MACs kept, table keys out of the file."""
        cols = [r[1] for r in self.db.execute("PRAGMA table_info(ledger)")]
        if "board_mac" not in cols:
            self.db.execute("ALTER TABLE ledger ADD COLUMN board_mac TEXT")
        self._create_schema()
        # Schema 1 kept table keys in this file: move them to the key store, then forget them.
        for board, key_hex in self.db.execute("SELECT board, table_key FROM boards "
                                              "WHERE table_key IS NOT NULL").fetchall():
            if self.keys.table_key(board) is None:
                self.keys.set_table_key(board, bytes.fromhex(key_hex))
        self.db.execute("UPDATE boards SET table_key=NULL")
        legacy = self.db.execute("SELECT MAX(id) FROM ledger").fetchone()[0] or 0
        if legacy:
            # Rows written under the unkeyed chain: how many, signed so it cannot be widened.
            assert self.key is not None  # a writer always has the ledger key (created if absent)
            self.db.execute("INSERT OR REPLACE INTO meta(name, value) VALUES ('legacy_rows', ?)",
                            (json.dumps([legacy, _signed(self.key, "legacy:%d" % legacy)]),))

    def _writing_key(self) -> bytes:
        if self.key is None:
            raise TablectlError("no ledger key in %s: this ledger cannot be written" % self.keys.folder)
        return self.key

    def close(self) -> None:
        if self._anchor_fd is not None:
            os.close(self._anchor_fd)
            self._anchor_fd = None
        self.db.close()

    # ------------------------------------------------------------------ writing
    def _tip(self) -> Tip:
        row = self.db.execute("SELECT id, hash FROM ledger ORDER BY id DESC LIMIT 1").fetchone()
        return (row[0], row[1]) if row else (0, GENESIS)

    _INSERT_ROW = ("INSERT INTO ledger(id, board, seq, kind, recorded_at, body, prev_hash, hash, board_mac) "
                   "VALUES (?,?,?,?,?,?,?,?,?)")

    def _insert(self, tip: Tip, board: str, seq: Optional[int], kind: str, body: Union[str, dict[str, Any]],
                board_mac: Optional[str] = None, pending: Optional[list[tuple[Any, ...]]] = None) -> Tip:
        """Chain one row onto tip. With `pending`, the row is kept there for one executemany (the
        batch path: a statement per row was a third of a batch's time); the caller writes them
        before anything reads the ledger table."""
        row_id = tip[0] + 1
        recorded_at = round(time.time(), 6)
        text = body if isinstance(body, str) else _COMPACT_SORTED.encode(body)
        h = row_mac(self._writing_key(), tip[1], row_id, board, seq, kind, recorded_at, text, board_mac)
        row = (row_id, board, seq, kind, recorded_at, text, tip[1], h, board_mac)
        if pending is None:
            self.db.execute(self._INSERT_ROW, row)
        else:
            pending.append(row)
        return (row_id, h)

    def _write_pending(self, pending: list[tuple[Any, ...]]) -> None:
        if pending:
            self.db.executemany(self._INSERT_ROW, pending)
            pending.clear()

    def _write_anchor(self, tip: Tip) -> None:
        """The newest row and its MAC, signed: rows cut from the end are missing against it.
        Two fixed slots written in turn in place (one pwrite, no rename, no fsync of its own: it
        costs a commit almost nothing). A host crash tears at most the slot being written; the
        other still names a committed row, so verify never blames the books for a crash."""
        if self._anchor_fd is None:
            self._anchor_fd = self._open_anchor()
        hashchain.write_anchor(self._anchor_fd, self._writing_key(), tip)

    def _open_anchor(self) -> int:
        """The anchor in the key store; one an earlier version left beside the ledger is moved
        there first (its two slots as they are), then removed, so no copy beside the books counts."""
        self.keys.ensure_folder()
        flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0)
        try:
            return os.open(self.anchor_path, flags)
        except FileNotFoundError:
            pass
        try:
            with open(self.legacy_anchor_path, "rb") as f:
                old: Optional[bytes] = f.read()
        except FileNotFoundError:
            old = None
        fd = os.open(self.anchor_path, flags | os.O_CREAT | os.O_EXCL, 0o600)
        if old:
            os.pwrite(fd, old, 0)
            os.fsync(fd)
            os.remove(self.legacy_anchor_path)
        return fd

    def _transaction(self, work: Callable[[Tip], tuple[Tip, _T]]) -> _T:
        self.db.execute("BEGIN IMMEDIATE")
        try:
            tip, result = work(self._tip())
            self.db.execute("COMMIT")
        except BaseException:
            if self.db.in_transaction:  # SQLite has rolled back by itself on some errors (disk full)
                self.db.execute("ROLLBACK")
            raise
        self._write_anchor(tip)
        return result

    def board(self, board: str) -> dict[str, Any]:
        row = self.db.execute("SELECT last_seq, duplicates, gaps, port FROM boards "
                              "WHERE board=?", (board,)).fetchone()
        if row is None:
            self.db.execute("INSERT OR IGNORE INTO boards(board) VALUES (?)", (board,))
            return {"last_seq": 0, "duplicates": 0, "gaps": 0, "port": None}
        return {"last_seq": row[0], "duplicates": row[1], "gaps": row[2], "port": row[3]}

    def record_events(self, board: str, events: Sequence[Event], board_acked: Optional[int] = None) -> RecordResult:
        """Commit a batch of events from one board, in sequence order, each once.

        Returns (last contiguous seq now in the ledger, new rows, duplicates, gap_seen). Events
        past a gap are not recorded: the board still holds them and sends them again in order,
        unless the board itself says the missing ones are gone (see _record_in_transaction).
        """
        return self.record_batches([(board, events, board_acked)])[0]

    def record_batches(self, batches: Sequence[Batch]) -> list[RecordResult]:
        """Several boards' batches in one transaction: one fsync for all (group commit).
        A batch is (board, events) or (board, events, board_acked). Returns one
        (last, new, dup, gap) per batch, in order."""
        def work(tip: Tip) -> tuple[Tip, list[RecordResult]]:
            results: list[RecordResult] = []
            for batch in batches:
                board, events = batch[0], batch[1]
                acked = batch[2] if len(batch) > 2 else None
                tip, result = self._record_in_transaction(tip, board, events, acked)
                results.append(result)
            return tip, results
        return self._transaction(work)

    def _record_in_transaction(self, tip: Tip, board: str, events: Sequence[Event],
                               board_acked: Optional[int]) -> tuple[Tip, RecordResult]:
        last = self.board(board)["last_seq"]
        new = dup = 0
        gap = False
        pending: list[tuple[Any, ...]] = []
        for ev in sorted(events, key=lambda e: e["q"]):
            seq = ev["q"]
            raw = ev.get("_raw")
            mac = ev.get("_mac")
            if seq <= last:
                self._write_pending(pending)  # _duplicate reads the rows this batch added too
                tip, conflict = self._duplicate(tip, board, ev)
                dup += 0 if conflict else 1
                continue
            if seq != last + 1:
                skipped = self._explained_gap(board, ev, last, board_acked)
                if skipped is None:
                    gap = True
                    break
                # Never silent: the gap and the signed reason for it are a row of their own.
                tip = self._insert(tip, board, None, "resync", {"missing_from": last + 1, "missing_to": seq - 1,
                                                                "reason": skipped, "signed_by_board": mac is not None},
                                   pending=pending)
            body = raw if raw is not None else {k: v for k, v in ev.items() if not k.startswith("_")}
            tip = self._insert(tip, board, seq, ev.get("k", "?"), body, mac, pending=pending)
            last = seq
            new += 1
        self._write_pending(pending)
        self.db.execute("UPDATE boards SET last_seq=?, duplicates=duplicates+?, gaps=gaps+? WHERE board=?",
                        (last, dup, 1 if gap else 0, board))
        return tip, (last, new, dup, gap)

    def _explained_gap(self, board: str, ev: Event, last: int, board_acked: Optional[int]) -> Optional[str]:
        """Why numbers last+1 .. seq-1 will never come, when the board says so; else None. A
        ledger behind the board (numbers the board holds acknowledged) that holds events of it is
        taken only with a technician's sign-off row that covers them (`tablectl audit resync`): an
        old copy of the books put back must not make its own excuse for what it lost."""
        seq = ev["q"]
        skipped_from: Any = ev.get("skipped_from", seq)
        skipped_to: Any = ev.get("skipped_to")
        if ev.get("k") == "storage_repaired" and _whole(skipped_from) and _whole(skipped_to) \
                and skipped_from <= last + 1 and skipped_to == seq - 1:
            return "the board repaired its storage and skipped these numbers"
        if isinstance(board_acked, int) and board_acked >= seq - 1:
            if last == 0:
                # new books for a board that has a history (its first hearing here): nothing of
                # this ledger's own can have been lost, and the anchor holds the books' length
                return "the board had these acknowledged before this ledger first heard it"
            signed = self.signoff_for(board, last + 1, seq - 1)
            if signed is not None:
                return ("the board had these acknowledged already (this ledger is behind it); signed off in row %d "
                        "by %s: %s" % signed)
        return None

    def signoff_for(self, board: Optional[str], first: int, last: int) -> Optional[tuple[int, str, str]]:
        """(row, by, reason) of a resync_signoff row naming this board and covering first..last."""
        if not board:
            return None
        for row_id, body in self.db.execute("SELECT id, body FROM ledger WHERE board = ? AND kind = 'resync_signoff' "
                                            "ORDER BY id DESC", (board,)):
            try:
                b = json.loads(body)
                if _whole(b["from"]) and _whole(b["to"]) and b["from"] <= first and last <= b["to"]:
                    return row_id, str(b.get("by")), str(b.get("reason"))
            except (ValueError, KeyError, TypeError):
                continue
        return None

    def sign_off_resync(self, board: str, first: int, last: int, reason: str, by: str) -> None:
        """A technician's word that this ledger is behind the board for events first..last (an
        old copy put back): the one thing that lets those numbers be recorded as a resync."""
        if not (_whole(first) and _whole(last) and 1 <= first <= last):
            raise TablectlError("a resync sign-off names the events it covers: --from N --to M, 1 <= N <= M")
        if not reason.strip():
            raise TablectlError("a resync sign-off needs --reason: what happened to the books")
        self.note(board, "resync_signoff", {"from": first, "to": last, "reason": reason, "by": by})

    def _duplicate(self, tip: Tip, board: str, ev: Event) -> tuple[Tip, bool]:
        """A number the ledger holds already: a resend (the same event), or a different event
        under a used number (a board that lost its storage): the latter is kept as a conflict."""
        row = self.db.execute("SELECT body, board_mac FROM ledger WHERE board=? AND seq=?", (board, ev["q"])).fetchone()
        if row is None:
            return tip, False  # before this ledger began (a board older than its books)
        raw = ev.get("_raw")
        try:
            stored = json.loads(row[0])
            sent = json.loads(raw) if raw is not None else {k: v for k, v in ev.items() if not k.startswith("_")}
        except ValueError:
            stored, sent = row[0], raw
        if stored == sent:
            return tip, False  # the same event again (resent; perhaps signed now, unsigned then)
        body = {"seq": ev["q"], "event": raw if raw is not None else {k: v for k, v in ev.items()
                                                                      if not k.startswith("_")},
                "board_mac": ev.get("_mac")}
        tip = self._insert(tip, board, None, "seq_conflict", body)
        return tip, True

    def note(self, board: str, kind: str, body: dict[str, Any]) -> None:
        def work(tip: Tip) -> tuple[Tip, None]:
            self.board(board)
            return self._insert(tip, board, None, kind, body), None
        self._transaction(work)

    def last_boot(self, board: str) -> Optional[int]:
        """The newest boot count the ledger has filed for this board (its boot events)."""
        row = self.db.execute("SELECT body FROM ledger WHERE board = ? AND kind = 'boot' AND seq IS NOT NULL "
                              "ORDER BY id DESC LIMIT 1", (board,)).fetchone()
        try:
            boots = json.loads(row[0]).get("boots") if row else None
        except (ValueError, AttributeError):
            return None
        return boots if _whole(boots) else None

    def alarms(self, board: Optional[str] = None) -> list[str]:
        """History that went backwards, one line each: a boot count that falls or repeats, events
        under numbers the ledger already holds (seq_conflict: their money is counted by
        reconcile, see conflict_events), a board that came back behind the ledger (rollback)."""
        out: list[str] = []
        for b in ([board] if board else self.boards()):
            top = 0
            conflicts: list[Any] = []
            for row_id, kind, body in self.db.execute(
                    "SELECT id, kind, body FROM ledger WHERE board = ? AND kind IN ('boot', 'seq_conflict', 'rollback') "
                    "ORDER BY id", (b,)):
                try:
                    read = json.loads(body)
                except ValueError:
                    read = None
                # A body edited by hand (verify names the row) reads as an empty one: the row's kind
                # still says the board's history went back, so it stays an alarm.
                data: dict[str, Any] = read if isinstance(read, dict) else {}
                event: Any = data
                if kind == "seq_conflict":
                    conflicts.append(data.get("seq"))
                    event = data.get("event")
                    try:
                        event = json.loads(event) if isinstance(event, str) else event
                    except ValueError:
                        event = None
                    if not isinstance(event, dict) or event.get("k") != "boot":
                        continue
                elif kind == "rollback":
                    out.append("row %d: board %s came back as boot %s, the ledger holds boot %s: its flash went back "
                               "(an old copy of its journal put back?)" % (row_id, b, data.get("boots", "?"),
                                                                            data.get("ledger_boots", "?")))
                    continue
                boots = event.get("boots") if isinstance(event, dict) else None
                if isinstance(boots, int) and not isinstance(boots, bool):
                    if boots <= top:
                        out.append("row %d: board %s boot count went back from %d to %d (its flash went back?)"
                                   % (row_id, b, top, boots))
                    top = max(top, boots)
            if conflicts:
                nums = [c for c in conflicts if isinstance(c, int) and not isinstance(c, bool)]
                out.append("board %s: %d events under numbers the ledger already holds (seq_conflict, %s): its "
                           "journal went back or was replaced; reconcile counts their money"
                           % (b, len(conflicts), "#%d..#%d" % (min(nums), max(nums)) if nums else "?"))
        return out

    def conflict_events(self, board: str) -> list[dict[str, Any]]:
        """The events kept in seq_conflict rows, as the board sent them (kind in "k")."""
        out: list[dict[str, Any]] = []
        for (body,) in self.db.execute("SELECT body FROM ledger WHERE board = ? AND kind = 'seq_conflict' ORDER BY id",
                                       (board,)):
            try:
                event = json.loads(body).get("event")
                event = json.loads(event) if isinstance(event, str) else event
            except (ValueError, AttributeError):
                continue
            if isinstance(event, dict):
                out.append(event)
        return out

    def knows_keyed(self, board: str) -> bool:
        """The ledger has heard this board keyed: a key event of it, or an event it signed. Such a
        board's frames are checked with its key or not filed at all (link.BoardLink)."""
        row = self.db.execute("SELECT 1 FROM ledger WHERE board = ? AND (kind IN ('key_provisioned', 'key_changed') "
                              "OR board_mac IS NOT NULL) LIMIT 1", (board,)).fetchone()
        return row is not None

    def boards(self) -> list[str]:
        return [r[0] for r in self.db.execute("SELECT board FROM boards ORDER BY board")]

    def events(self, board: Optional[str] = None, kinds: Optional[Iterable[str]] = None, after_id: int = 0,
               limit: Optional[int] = None) -> Iterator[dict[str, Any]]:
        sql = "SELECT id, board, seq, kind, recorded_at, body FROM ledger WHERE id > ?"
        params: list[Any] = [after_id]
        if board:
            sql += " AND board = ?"
            params.append(board)
        if kinds:
            kinds = list(kinds)
            sql += " AND kind IN (%s)" % ",".join("?" * len(kinds))
            params.extend(kinds)
        sql += " ORDER BY id"
        if limit:
            sql += " LIMIT %d" % int(limit)
        for row in self.db.execute(sql, params):
            yield {"id": row[0], "board": row[1], "seq": row[2], "kind": row[3], "recorded_at": row[4],
                   "body": json.loads(row[5])}

    # ------------------------------------------------------------------ proving
    def _legacy_rows(self, key: bytes, problems: list[str]) -> int:
        try:
            row = self.db.execute("SELECT value FROM meta WHERE name='legacy_rows'").fetchone()
        except sqlite3.OperationalError:
            return 0
        if row is None:
            return 0
        count, sig = json.loads(row[0])
        if not hmac.compare_digest(sig, _signed(key, "legacy:%d" % count)):
            problems.append("the count of rows from before keyed MACs was edited")
            return 0
        return int(count)

    def verify(self, board_acked: Optional[dict[str, Optional[int]]] = None) -> tuple[int, list[str]]:
        """Prove the books. Returns (rows checked, problems naming rows). board_acked: {board:
        the newest sequence number the board itself says was acknowledged}, when asked online."""
        problems: list[str] = []
        if self.key is None:
            return 0, ["no ledger key in %s: the rows' MACs cannot be checked" % self.keys.folder]
        key = self.key
        legacy = self._legacy_rows(key, problems)
        # Rows moved to an archive (archive.py): the chain goes on from the archive's last row.
        start = self.signed_meta(key, ARCHIVED, problems) or {}
        prev = str(start.get("mac", GENESIS))
        expected_id = int(start.get("through", 0)) + 1
        count = 0
        last_seq: dict[str, int] = dict(start.get("last_seq", {}))
        explained: dict[str, list[tuple[int, int]]] = {}
        table_keys: dict[str, list[bytes]] = {}
        keyed_from: dict[str, int] = dict(start.get("keyed_from", {}))
        for row in self.db.execute("SELECT id, board, seq, kind, recorded_at, body, prev_hash, hash, board_mac "
                                   "FROM ledger ORDER BY id"):
            row_id, board, seq, kind, recorded_at, body, prev_hash, h, board_mac = row
            count += 1
            if row_id != expected_id:
                gone = ("row %d" % expected_id) if row_id - 1 == expected_id else \
                    ("rows %d..%d" % (expected_id, row_id - 1))
                problems.append("%s missing (deleted?) before row %d" % (gone, row_id))
            if prev_hash != prev:
                problems.append("row %d does not follow the row before it (deleted, inserted or reordered)" % row_id)
            if row_id <= legacy:
                good = legacy_row_hash(prev_hash, row_id, board, seq, kind, recorded_at, body) == h
            else:
                good = hmac.compare_digest(row_mac(key, prev_hash, row_id, board, seq, kind, recorded_at,
                                                   body, board_mac), h)
            if not good:
                problems.append("row %d was edited or forged (its MAC does not match its content)" % row_id)
            prev = h
            expected_id = row_id + 1
            if kind == "resync":
                try:
                    b = json.loads(body)
                    explained.setdefault(board, []).append((b["missing_from"], b["missing_to"]))
                except (ValueError, KeyError, TypeError):
                    problems.append("row %d: a resync note that does not say what it skipped" % row_id)
            if seq is None:
                continue
            if board not in table_keys:
                table_keys[board] = self.keys.all_table_keys(board)
            tkeys = table_keys[board]
            if kind == "key_provisioned":
                keyed_from.setdefault(board, seq)
            if tkeys and row_id > legacy:
                if board_mac is None:
                    # Events a board made before it had a key went out unsigned; from its
                    # key_provisioned event on, every one is signed.
                    if seq >= keyed_from.get(board, seq + 1):
                        problems.append("row %d: event %s #%d of a keyed board carries no board MAC (forged?)"
                                        % (row_id, board, seq))
                elif not hashchain.signed_by_board(tkeys, body, board_mac):
                    problems.append("row %d: event %s #%d was not signed by the board (forged or edited)"
                                    % (row_id, board, seq))
            try:
                inner = json.loads(body)
                if inner.get("q") != seq or inner.get("b") not in (None, board) or inner.get("k") != kind:
                    problems.append("row %d: board, number or kind differ from the event's own" % row_id)
            except (ValueError, AttributeError):
                problems.append("row %d: the event body is not JSON" % row_id)
            before = last_seq.get(board, 0)
            if before and seq != before + 1:
                if (before + 1, seq - 1) not in explained.get(board, []):
                    problems.append("events %s #%d..#%d are missing (no signed resync explains them)"
                                    % (board, before + 1, seq - 1))
            last_seq[board] = seq
        sealed = self.signed_meta(key, SEALED, problems)
        if sealed is not None:
            # An archive: its signed seal, not an anchor file, names its last row.
            if (sealed.get("through"), sealed.get("mac")) != (expected_id - 1, prev):
                problems.append("the archive's rows do not end where its seal says (row %s): rows cut or added"
                                % sealed.get("through"))
        else:
            self._check_anchor(key, count, prev, expected_id - 1, problems)
        if sealed is None:
            problems.extend(self.alarms())  # (an archive's are the live ledger's to tell)
        for board, acked in (board_acked or {}).items():
            if acked is not None and acked > last_seq.get(board, 0):
                problems.append("board %s says events up to #%d were acknowledged, the ledger ends at #%d "
                                "(rows cut from the end?)" % (board, acked, last_seq.get(board, 0)))
        return count, problems

    def signed_meta(self, key: bytes, name: str, problems: list[str]) -> Optional[dict[str, Any]]:
        """A meta entry written as [state, MAC of its JSON] (archive.py): the state, or None when
        absent; an edited one is a problem, and is not used."""
        try:
            row = self.db.execute("SELECT value FROM meta WHERE name=?", (name,)).fetchone()
        except sqlite3.OperationalError:
            return None
        if row is None:
            return None
        try:
            state, sig = json.loads(row[0])
            text = json.dumps(state, sort_keys=True)
        except (ValueError, TypeError):
            problems.append("the ledger's %s record is unreadable" % name)
            return None
        if not isinstance(state, dict) or not hmac.compare_digest(str(sig), _signed(key, "%s:%s" % (name, text))):
            problems.append("the ledger's %s record was edited" % name)
            return None
        return state

    def _check_anchor(self, key: bytes, count: int, tip_mac: str, tip_id: int, problems: list[str]) -> None:
        path = self.anchor_path
        if not os.path.exists(path) and os.path.exists(self.legacy_anchor_path):
            path = self.legacy_anchor_path  # a ledger no writer of this version has opened yet
        try:
            with open(path, "rb") as f:
                data = f.read()
        except FileNotFoundError:
            if count:
                problems.append("the anchor %s is missing: rows cut from the end could not be seen"
                                % path)
            return
        slots = hashchain.anchor_slots(key, data)
        edited = any(not good for _, _, good in slots)
        best: Optional[tuple[int, str]] = max(((row, mac) for row, mac, good in slots if good), default=None)
        if edited:
            problems.append("the anchor %s was edited" % path)
        if best is None:
            if count and not edited:
                problems.append("the anchor %s is unreadable" % path)
            return
        row, mac = best
        if row > tip_id:
            problems.append("rows %d..%d are missing from the end (the anchor names row %d)" % (tip_id + 1, row, row))
            return
        found = self.db.execute("SELECT hash FROM ledger WHERE id=?", (row,)).fetchone()
        if row and (found is None or found[0] != mac):
            problems.append("row %d is not the row the anchor names (replaced?)" % row)


# The upgrade steps, in order: (the schema a step starts from, the step). A step runs inside the
# upgrade's transaction and raises to abandon it; the next schema gets the next entry.
MIGRATIONS: list[tuple[int, Callable[[Ledger], None]]] = [
    (1, Ledger._schema_1_to_2),
]
assert [v for v, _ in MIGRATIONS] == list(range(1, SCHEMA_VERSION)), "one step per schema, in order"
