"""The table's books: an SQLite ledger (WAL), every row hash-chained to the one before.

A row is an event from a board (unique by board and sequence number), a command with its reply,
or a note from the service (a gap, a reconnect). `verify()` recomputes the chain and names the
first row that was edited, deleted or moved.
"""
import hashlib
import json
import sqlite3
import time

SCHEMA = """
CREATE TABLE IF NOT EXISTS ledger (
    id INTEGER PRIMARY KEY,
    board TEXT NOT NULL,
    seq INTEGER,
    kind TEXT NOT NULL,
    recorded_at REAL NOT NULL,
    body TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL
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
"""
GENESIS = "0" * 64


def row_hash(prev_hash, row_id, board, seq, kind, recorded_at, body):
    text = json.dumps([prev_hash, row_id, board, seq, kind, repr(recorded_at), body], separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


class Ledger:
    def __init__(self, path, synchronous="FULL", readonly=False):
        self.path = path
        if readonly:
            # Readers (events, monitor, reports, audit) never take the write lock, so a busy
            # service cannot keep them waiting inside SQLite (where Ctrl-C cannot reach them).
            self.db = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=5,
                                      isolation_level=None, check_same_thread=False)
            return
        self.db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)
        self.db.execute("PRAGMA journal_mode=WAL")
        # FULL: a committed row survives a power cut of the host too, before the board is acked.
        self.db.execute("PRAGMA synchronous=%s" % synchronous)
        self.db.executescript(SCHEMA)

    def close(self):
        self.db.close()

    def _tip(self):
        row = self.db.execute("SELECT id, hash FROM ledger ORDER BY id DESC LIMIT 1").fetchone()
        return (row[0], row[1]) if row else (0, GENESIS)

    def _insert(self, tip, board, seq, kind, body):
        row_id = tip[0] + 1
        recorded_at = round(time.time(), 6)
        text = body if isinstance(body, str) else json.dumps(body, sort_keys=True, separators=(",", ":"))
        h = row_hash(tip[1], row_id, board, seq, kind, recorded_at, text)
        self.db.execute("INSERT INTO ledger(id, board, seq, kind, recorded_at, body, prev_hash, hash) "
                        "VALUES (?,?,?,?,?,?,?,?)", (row_id, board, seq, kind, recorded_at, text, tip[1], h))
        return (row_id, h)

    def board(self, board):
        row = self.db.execute("SELECT last_seq, table_key, counter, duplicates, gaps, port FROM boards "
                              "WHERE board=?", (board,)).fetchone()
        if row is None:
            self.db.execute("INSERT OR IGNORE INTO boards(board) VALUES (?)", (board,))
            return {"last_seq": 0, "table_key": None, "counter": 0, "duplicates": 0, "gaps": 0, "port": None}
        return {"last_seq": row[0], "table_key": row[1], "counter": row[2], "duplicates": row[3],
                "gaps": row[4], "port": row[5]}

    def record_events(self, board, events):
        """Commit a batch of events from one board, in sequence order, each once.

        Returns (last contiguous seq now in the ledger, new rows, duplicates, gap_seen). Events
        past a gap are not recorded: the board still holds them and sends them again in order.
        """
        return self.record_batches([(board, events)])[0]

    def record_batches(self, batches):
        """Several boards' batches in one transaction: one fsync for all (group commit).
        Returns one (last, new, dup, gap) per batch, in order."""
        self.db.execute("BEGIN IMMEDIATE")
        try:
            tip = self._tip()
            results = []
            for board, events in batches:
                tip, result = self._record_in_transaction(tip, board, events)
                results.append(result)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        return results

    def _record_in_transaction(self, tip, board, events):
        last = self.board(board)["last_seq"]
        new = dup = 0
        gap = False
        for ev in sorted(events, key=lambda e: e["q"]):
            seq = ev["q"]
            if seq <= last:
                dup += 1
                continue
            if seq != last + 1:
                gap = True
                break
            tip = self._insert(tip, board, seq, ev.get("k", "?"), ev)
            last = seq
            new += 1
        self.db.execute("UPDATE boards SET last_seq=?, duplicates=duplicates+?, gaps=gaps+? WHERE board=?",
                        (last, dup, 1 if gap else 0, board))
        return tip, (last, new, dup, gap)

    def note(self, board, kind, body):
        self.db.execute("BEGIN IMMEDIATE")
        try:
            self.board(board)
            self._insert(self._tip(), board, None, kind, body)
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def set_key(self, board, key_hex):
        self.board(board)
        self.db.execute("UPDATE boards SET table_key=?, counter=0 WHERE board=?", (key_hex, board))

    def next_counter(self, board, at_least=0):
        self.db.execute("BEGIN IMMEDIATE")
        info = self.board(board)
        counter = max(info["counter"], at_least) + 1
        self.db.execute("UPDATE boards SET counter=? WHERE board=?", (counter, board))
        self.db.execute("COMMIT")
        return counter

    def boards(self):
        return [r[0] for r in self.db.execute("SELECT board FROM boards ORDER BY board")]

    def events(self, board=None, kinds=None, after_id=0, limit=None):
        sql = "SELECT id, board, seq, kind, recorded_at, body FROM ledger WHERE id > ?"
        params = [after_id]
        if board:
            sql += " AND board = ?"
            params.append(board)
        if kinds:
            sql += " AND kind IN (%s)" % ",".join("?" * len(kinds))
            params.extend(kinds)
        sql += " ORDER BY id"
        if limit:
            sql += " LIMIT %d" % int(limit)
        for row in self.db.execute(sql, params):
            yield {"id": row[0], "board": row[1], "seq": row[2], "kind": row[3], "recorded_at": row[4],
                   "body": json.loads(row[5])}

    def verify(self):
        """Recompute the chain. Returns (rows checked, list of problems naming row ids)."""
        problems = []
        prev = GENESIS
        expected_id = 1
        count = 0
        for row in self.db.execute("SELECT id, board, seq, kind, recorded_at, body, prev_hash, hash "
                                   "FROM ledger ORDER BY id"):
            row_id, board, seq, kind, recorded_at, body, prev_hash, h = row
            count += 1
            if row_id != expected_id:
                problems.append("row %d missing (deleted?) before row %d" % (expected_id, row_id))
            if prev_hash != prev:
                problems.append("row %d does not follow the row before it (deleted, inserted or reordered)" % row_id)
            if row_hash(prev_hash, row_id, board, seq, kind, recorded_at, body) != h:
                problems.append("row %d was edited (its hash does not match its content)" % row_id)
            prev = h
            expected_id = row_id + 1
        return count, problems
