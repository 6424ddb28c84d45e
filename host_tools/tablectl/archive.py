"""Ledger archiving that keeps the chain provable: `tablectl audit archive --before DATE`.

The oldest rows (recorded before DATE) move, unchanged, to an archive file beside the ledger,
`<db>.archive-<first row>-<last row>.db`, an SQLite file of the same schema. Nothing is
recomputed: every row keeps its id, its MAC and the MAC of the row before it, so the chain runs on
from the archive's last row into the live ledger's first. Two signed records (keyed with the
ledger key, like the rows) tie the files together:

- in the archive, "sealed": its last row and that row's MAC (rows cut from its end show), and
  "archived" as the live ledger had it before (where the archive's own chain starts);
- in the live ledger, "archived": the last archived row, its MAC, the archive files in order, and
  what the verifier needs to go on from there (each board's last sequence number, where its signed
  events began).

`tablectl audit verify` proves the live ledger from that point and every archive it names, each
against its neighbours. The newest row always stays live: the next row is chained to it.
The archive is written and synced before a row leaves the ledger; a crash in between leaves an
archive file nobody names and the rows still live (the next archive run writes it again).
"""
from __future__ import annotations

import json
import os
import sqlite3
from typing import Any, Optional

from .errors import TablectlError
from .ledger import ARCHIVED, GENESIS, SCHEMA, SCHEMA_VERSION, SEALED, Ledger, _create_private, _signed


def _signed_record(key: bytes, name: str, state: dict[str, Any]) -> str:
    text = json.dumps(state, sort_keys=True)
    return json.dumps([state, _signed(key, "%s:%s" % (name, text))])


def archive_path(db_path: str, first: int, last: int) -> str:
    return "%s.archive-%d-%d.db" % (db_path, first, last)


def archive(ledger: Ledger, before: float) -> Optional[dict[str, Any]]:
    """Move the rows recorded before `before` (epoch seconds) to a new archive file. Returns what
    was done ({"file", "first", "last", "rows", "live_from"}), or None when no row qualifies.
    The caller holds the ledger's owner lock (no service is writing)."""
    key = ledger.key
    if key is None:
        raise TablectlError("no ledger key in %s: the archive could not be signed" % ledger.keys.folder)
    problems: list[str] = []
    start = ledger.signed_meta(key, ARCHIVED, problems) or {}
    if problems:
        raise TablectlError("%s: %s; run `tablectl audit verify` first" % (ledger.path, problems[0]))
    newest = ledger.db.execute("SELECT MAX(id) FROM ledger").fetchone()[0] or 0
    through = ledger.db.execute("SELECT MAX(id) FROM ledger WHERE recorded_at < ? AND id < ?",
                                (before, newest)).fetchone()[0]
    # A resync note explains the gap before the event that follows it: they stay together.
    while through:
        kind = ledger.db.execute("SELECT kind FROM ledger WHERE id=?", (through,)).fetchone()[0]
        if kind != "resync":
            break
        through -= 1
    first = int(start.get("through", 0)) + 1
    if not through or through < first:
        return None
    rows = ledger.db.execute("SELECT id, board, seq, kind, recorded_at, body, prev_hash, hash, board_mac "
                             "FROM ledger WHERE id <= ? ORDER BY id", (through,)).fetchall()
    last_seq: dict[str, int] = dict(start.get("last_seq", {}))
    keyed_from: dict[str, int] = dict(start.get("keyed_from", {}))
    for _, board, seq, kind, *_rest in rows:
        if seq is not None:
            last_seq[board] = seq
            if kind == "key_provisioned":
                keyed_from.setdefault(board, seq)
    end = {"through": through, "mac": rows[-1][7], "last_seq": last_seq, "keyed_from": keyed_from,
           "archives": list(start.get("archives", [])) + [os.path.basename(archive_path(ledger.path, first, through))]}
    path = archive_path(ledger.path, first, through)
    _write_archive(path, rows, key, start, end, ledger)
    ledger.db.execute("BEGIN IMMEDIATE")
    try:
        ledger.db.execute("DELETE FROM ledger WHERE id <= ?", (through,))
        ledger.db.execute("INSERT OR REPLACE INTO meta(name, value) VALUES (?, ?)",
                          (ARCHIVED, _signed_record(key, ARCHIVED, end)))
        ledger.db.execute("COMMIT")
    except BaseException:
        if ledger.db.in_transaction:
            ledger.db.execute("ROLLBACK")
        raise
    return {"file": path, "first": first, "last": through, "rows": len(rows), "live_from": through + 1}


def _write_archive(path: str, rows: list[Any], key: bytes, start: dict[str, Any], end: dict[str, Any],
                   ledger: Ledger) -> None:
    tmp = path + ".tmp"
    if os.path.exists(tmp):
        os.unlink(tmp)
    _create_private(tmp)
    db = sqlite3.connect(tmp, isolation_level=None)
    try:
        db.executescript(SCHEMA)
        db.execute("BEGIN")
        db.executemany("INSERT INTO ledger(id, board, seq, kind, recorded_at, body, prev_hash, hash, board_mac) "
                       "VALUES (?,?,?,?,?,?,?,?,?)", rows)
        if start:
            db.execute("INSERT INTO meta(name, value) VALUES (?, ?)", (ARCHIVED, _signed_record(key, ARCHIVED, start)))
        db.execute("INSERT INTO meta(name, value) VALUES (?, ?)",
                   (SEALED, _signed_record(key, SEALED, {"through": end["through"], "mac": end["mac"]})))
        legacy = ledger.db.execute("SELECT value FROM meta WHERE name='legacy_rows'").fetchone()
        if legacy is not None:
            db.execute("INSERT INTO meta(name, value) VALUES ('legacy_rows', ?)", legacy)
        db.execute("COMMIT")
        db.execute("PRAGMA user_version=%d" % SCHEMA_VERSION)
    finally:
        db.close()
    with open(tmp, "rb+") as f:
        os.fsync(f.fileno())
    os.replace(tmp, path)
    folder = os.open(os.path.dirname(os.path.abspath(path)), os.O_RDONLY)
    try:
        os.fsync(folder)
    finally:
        os.close(folder)


def verify_archives(ledger: Ledger) -> tuple[list[tuple[str, int]], list[str]]:
    """Every archive the live ledger names, proved with the ledger's key, each one's seal equal to
    where the next file's chain starts. Returns ([(file, rows)], problems naming the file)."""
    key = ledger.key
    problems: list[str] = []
    if key is None:
        return [], []
    start = ledger.signed_meta(key, ARCHIVED, problems)
    if not start:
        return [], problems
    folder = os.path.dirname(os.path.abspath(ledger.path))
    checked: list[tuple[str, int]] = []
    expected_start: dict[str, Any] = {}
    names = list(start.get("archives", []))
    for i, name in enumerate(names):
        path = os.path.join(folder, name)
        if not os.path.exists(path):
            problems.append("archive %s is missing: rows %s can no longer be proved" % (path, name.split("archive-")[-1][:-3]))
            expected_start = {}
            continue
        try:
            arch = Ledger(path, readonly=True, keys=ledger.keys)
        except (TablectlError, sqlite3.DatabaseError) as exc:
            problems.append("archive %s cannot be read: %s" % (path, exc))
            continue
        try:
            count, found = arch.verify()
            problems += ["archive %s: %s" % (path, p) for p in found]
            arch_start = arch.signed_meta(key, ARCHIVED, []) or {}
            seal = arch.signed_meta(key, SEALED, []) or {}
        finally:
            arch.close()
        if i and (arch_start.get("through"), arch_start.get("mac")) != (expected_start.get("through"),
                                                                           expected_start.get("mac", GENESIS)):
            problems.append("archive %s does not start where the archive before it ends" % path)
        expected_start = seal
        checked.append((path, count))
    if names and expected_start and (expected_start.get("through"), expected_start.get("mac")) != \
            (start.get("through"), start.get("mac")):
        problems.append("the live ledger does not start where its last archive %s ends" % names[-1])
    return checked, problems
