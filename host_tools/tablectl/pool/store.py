"""The pool's books: a PostgreSQL database that can prove itself, the table ledger's design
(tablectl/ledger.py, docs/SECURITY.md) on a server many tables feed.

- Every row of `pool_ledger` carries a MAC chained to the row before it, keyed with the pool's
  ledger key (the key store, never the database): an edited, deleted, inserted or reordered row,
  or a chain recomputed without the key, no longer checks. The chain's tip is one row
  (`pool_chain`) holding the newest row's id and MAC, signed; every writer takes it FOR UPDATE, so
  rows are chained in commit order whatever the number of writers.
- An anchor file beside the keys names the newest row and its MAC, signed: rows cut from the end
  (with the chain row put back as it was) are missing against it.
- A token row keeps the exact bytes its board signed and the board's MAC over them.

The rules (pool/engine.py) are applied here, in one transaction per batch of tokens: a pool's
meter row is read and written under SELECT ... FOR UPDATE, a token is credited once (unique by
board and sequence number), and hits are numbered in the order their transactions took the meter
row, each from the meter the one before left.
"""
import hmac
import json
import os
import time

from ..errors import TablectlError
from ..keys import KeyStore
from ..hashchain import GENESIS, row_mac, signed as _signed, signed_by_board, write_anchor, anchor_slots
from ..seats import seat_label
from . import adminkey, engine

# The books' schema: version 1 is SCHEMA as it was before the version was written down (a database
# without pool_schema holding pool_ledger is version 1); each later version is one step of
# MIGRATIONS, applied in order in one transaction. A new database is made at version 1 and
# brought up by the same steps, so there is one way to every version.
SCHEMA_VERSION = 3
SCHEMA = """
CREATE TABLE IF NOT EXISTS pool_ledger (
    id BIGINT PRIMARY KEY,
    pool TEXT,
    board TEXT NOT NULL,
    seq BIGINT,
    kind TEXT NOT NULL,
    recorded_at DOUBLE PRECISION NOT NULL,
    body TEXT NOT NULL,
    prev_hash TEXT NOT NULL,
    hash TEXT NOT NULL,
    board_mac TEXT
);
CREATE UNIQUE INDEX IF NOT EXISTS pool_token ON pool_ledger(board, seq) WHERE kind = 'token';
CREATE INDEX IF NOT EXISTS pool_ledger_kind ON pool_ledger(kind, pool);
CREATE TABLE IF NOT EXISTS pool_chain (
    id INT PRIMARY KEY CHECK (id = 1),
    tip_id BIGINT NOT NULL,
    tip_hash TEXT NOT NULL,
    sig TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS pools (
    name TEXT PRIMARY KEY,
    params TEXT NOT NULL,
    version INT NOT NULL,
    service BOOLEAN NOT NULL,
    meter_cents BIGINT NOT NULL,
    over_cents BIGINT NOT NULL,
    reserve_cents BIGINT NOT NULL,
    tokens BIGINT NOT NULL DEFAULT 0,
    contrib_cents BIGINT NOT NULL DEFAULT 0,
    awarded_cents BIGINT NOT NULL DEFAULT 0,
    seeded_cents BIGINT NOT NULL DEFAULT 0,
    hits BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS pool_boards (
    board TEXT PRIMARY KEY,
    pool TEXT NOT NULL REFERENCES pools(name),
    game TEXT NOT NULL,
    active BOOLEAN NOT NULL DEFAULT TRUE,
    last_seq BIGINT NOT NULL DEFAULT 0,
    tokens BIGINT NOT NULL DEFAULT 0,
    contrib_cents BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE IF NOT EXISTS pool_hits (
    board TEXT NOT NULL,
    round BIGINT NOT NULL,
    seat INT NOT NULL,
    pool TEXT NOT NULL,
    lock_no BIGINT NOT NULL,
    row_id BIGINT NOT NULL,
    amount_cents BIGINT,
    paid_row BIGINT,
    void_row BIGINT,
    PRIMARY KEY (board, round, seat)
);
CREATE TABLE IF NOT EXISTS pool_declarations (
    board TEXT NOT NULL,
    round BIGINT NOT NULL,
    statement_q BIGINT NOT NULL,
    pool TEXT NOT NULL,
    hands TEXT NOT NULL,
    row_id BIGINT NOT NULL,
    declared_at DOUBLE PRECISION NOT NULL,
    PRIMARY KEY (board, round)
);
"""

# Schema 3: each table's newest health report (pool/health.py), not part of the chained books.
HEALTH_SCHEMA = """
CREATE TABLE IF NOT EXISTS pool_health (
    board TEXT PRIMARY KEY,
    pool TEXT NOT NULL,
    last_heard DOUBLE PRECISION NOT NULL,
    state TEXT NOT NULL,
    pool_off BOOLEAN NOT NULL,
    storage_fault BOOLEAN NOT NULL,
    refused_frames BIGINT NOT NULL,
    refused_rose_at DOUBLE PRECISION,
    closed BOOLEAN NOT NULL
);
"""


def mac_subject(pool, board):
    """What a pool row's MAC names besides its content: its pool and its board (a row moved to
    another pool no longer checks)."""
    return json.dumps([pool, board], separators=(",", ":"))


def _whole(v):
    return isinstance(v, int) and not isinstance(v, bool)


def _cents(c):
    return "$%d.%02d" % divmod(c, 100)


def admin_signature(key, op, pool, body, version, books=""):
    """The pool administrator's Ed25519 signature (pool/adminkey.py) over a change: the books it is
    for, the op, the pool, the change and the pool's parameter version it applies to (so a recorded
    change can be played neither again nor on other books). key: the private key, or its 32-byte seed."""
    if isinstance(key, (bytes, bytearray)):
        key = adminkey.private_from_seed(key)
    return adminkey.sign(key, books, op, pool, body, version)


class PoolKeys(KeyStore):
    """The pool's key folder: ledger.key (row MACs) and admin.pub, the administrator's public key.
    The administrator's private key is never here: the pool server reads this folder."""

    def admin_pub(self):
        path = self._path("admin.pub")
        try:
            with open(path) as f:
                text = f.read()
        except FileNotFoundError:
            return None
        return adminkey.parse_public(text, path)

    def install_admin_pub(self, pub):
        """Write admin.pub once. The same key again changes nothing; another key is refused: a
        replaced admin.pub would let whoever replaced it sign changes (the books' key decides)."""
        pub = adminkey.parse_public(pub)
        have = self.admin_pub()
        if have == pub:
            return False
        if have is not None:
            raise TablectlError("%s holds another administrator key already: it is never replaced this way "
                                "(a signed `tablectl pool admin-key --rotate` changes the books' key)"
                                % self._path("admin.pub"))
        self._ensure_folder()
        try:
            fd = os.open(self._path("admin.pub"), os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            raise TablectlError("%s appeared meanwhile: run the command again" % self._path("admin.pub"))
        try:
            os.write(fd, pub.encode() + b"\n")
            os.fsync(fd)
        finally:
            os.close(fd)
        return True

    def replace_admin_pub(self, pub):
        """After the books recorded a signed key change: admin.pub follows them."""
        self._ensure_folder()
        tmp = self._path("admin.pub.tmp")
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
            f.write(adminkey.parse_public(pub) + "\n")
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, self._path("admin.pub"))


def connect(url, autocommit=False):
    import psycopg
    try:
        return psycopg.connect(url, autocommit=autocommit, connect_timeout=5)
    except psycopg.Error as exc:
        raise TablectlError("cannot reach the pool database %s: %s" % (_safe_url(url), str(exc).strip().splitlines()[0]
                                                                       if str(exc).strip() else exc))


def _safe_url(url):
    """A password in the URL never goes into a message."""
    import re
    return re.sub(r"://([^:/@]*):[^@/]*@", r"://\1:***@", url)


def _record(body):
    """A row's body as the dict it was written as, or None when it is not one (edited by someone
    with the database: verify names the row by its MAC; reading it must not stop the check)."""
    try:
        read = json.loads(body)
    except (TypeError, ValueError):
        return None
    return read if isinstance(read, dict) else None


class PoolStore:
    def __init__(self, url, keys_folder, anchor=True, migrate=True, table_keys=None):
        self.url = url
        # The tables' keys (a KeyStore), when the pool is given them: a token of a keyed board is
        # taken only with the board's MAC over its exact bytes (forged tokens are refused).
        self.table_keys = table_keys
        self._key_cache = {}  # board -> (the key file's stamp, (all keys, current key))
        self.keys = PoolKeys(keys_folder)
        self.key = self.keys.ledger_key(create=True)
        self.anchor_path = os.path.join(keys_folder, "pool.anchor") if anchor else None
        self._anchor_fd = None
        self.db = connect(url, autocommit=True)
        if migrate:
            try:
                self._migrate()
            except BaseException:
                self.db.close()
                raise

    def close(self):
        if self._anchor_fd is not None:
            os.close(self._anchor_fd)
            self._anchor_fd = None
        try:
            self.db.close()
        except Exception:  # noqa: a connection already broken by a server that went away
            pass

    def reconnect(self):
        self.close()
        self.db = connect(self.url, autocommit=True)

    def schema_version(self):
        """The schema the database holds: pool_schema's version, 1 for books from before the version
        was written down, 0 for a database with no books in it yet."""
        if self.db.execute("SELECT to_regclass('pool_schema')").fetchone()[0] is not None:
            return int(self.db.execute("SELECT version FROM pool_schema WHERE id=1").fetchone()[0])
        if self.db.execute("SELECT to_regclass('pool_ledger')").fetchone()[0] is not None:
            return 1
        return 0

    def _migrate(self):
        """Bring the database to SCHEMA_VERSION, step by step, in one transaction. Books already
        there take no lock: an upgrade's ALTER TABLE takes one every writer would wait on."""
        if self.schema_version() == SCHEMA_VERSION:
            return
        with self.db.transaction():
            # Two pools starting at once on an empty database: one creates, the other waits.
            self.db.execute("SELECT pg_advisory_xact_lock(18180018)")
            version = self.schema_version()  # again, under the lock: another pool may have done it
            if version > SCHEMA_VERSION:
                raise TablectlError("the pool database %s is schema %d, newer than this tablectl reads (schema %d): "
                                    "use the tablectl that wrote it, or a newer one"
                                    % (_safe_url(self.url), version, SCHEMA_VERSION))
            if version == 0:
                self._schema_1()
                version = 1
            for step_from, step in MIGRATIONS:
                if step_from >= version:
                    step(self)
            if version < SCHEMA_VERSION:
                self.db.execute("CREATE TABLE IF NOT EXISTS pool_schema (id INT PRIMARY KEY CHECK (id = 1), "
                                "version INT NOT NULL)")
                self.db.execute("INSERT INTO pool_schema(id, version) VALUES (1, %s) "
                                "ON CONFLICT (id) DO UPDATE SET version = EXCLUDED.version", (SCHEMA_VERSION,))

    def _schema_1(self):
        """The books of schema 1, their chain at GENESIS when they are new. Every statement is
        IF NOT EXISTS: books from before the version was written down were brought up to SCHEMA
        at every open, and an old one lacking a table of it gets the table here."""
        for stmt in SCHEMA.split(";"):
            if stmt.strip():
                self.db.execute(stmt)
        self.db.execute("INSERT INTO pool_chain(id, tip_id, tip_hash, sig) VALUES (1, 0, %s, %s) "
                        "ON CONFLICT (id) DO NOTHING", (GENESIS, _signed(self.key, "tip:0:" + GENESIS)))

    def _schema_1_to_2(self):
        """pools.discontinued: where a pool's fund went when it was discontinued (rulebook 000 rule
        3.4). Books of schema 1 written by a tablectl that added it unversioned have it already."""
        self._schema_1()
        self.db.execute("ALTER TABLE pools ADD COLUMN IF NOT EXISTS discontinued TEXT")

    def _schema_2_to_3(self):
        """pool_health: the tables' health reports (the floor page's link-lost, closed and fault
        alarms). A report is no money: the chained books are untouched."""
        self.db.execute(HEALTH_SCHEMA)

    # ------------------------------------------------------------------ a table's health
    def record_health(self, board, report, heard_at):
        """The newest health report of a board (pool/health.py: checked before), heard at
        `heard_at` by the pool's clock. Not a row of the chained books: a report is no money and
        changes none. refused_rose_at: when the board's refused-frame count last went up (a
        service that restarted counts from 0 again: no rise). Returns the row as stored."""
        row = self.db.execute(
            "INSERT INTO pool_health(board, pool, last_heard, state, pool_off, storage_fault, refused_frames, "
            "refused_rose_at, closed) SELECT board, pool, %s, %s, %s, %s, %s, "
            "CASE WHEN %s > 0 THEN %s END, %s FROM pool_boards WHERE board=%s "
            "ON CONFLICT (board) DO UPDATE SET pool=EXCLUDED.pool, last_heard=EXCLUDED.last_heard, "
            "state=EXCLUDED.state, pool_off=EXCLUDED.pool_off, storage_fault=EXCLUDED.storage_fault, "
            "refused_frames=EXCLUDED.refused_frames, closed=EXCLUDED.closed, refused_rose_at=CASE WHEN "
            "EXCLUDED.refused_frames > pool_health.refused_frames THEN EXCLUDED.last_heard ELSE "
            "pool_health.refused_rose_at END "
            "RETURNING pool, last_heard, state, pool_off, storage_fault, refused_frames, refused_rose_at, closed",
            (heard_at, report["state"], report["pool_off"], report["storage_fault"], report["refused_frames"],
             report["refused_frames"], heard_at, report["closing"], board)).fetchone()
        if row is None:
            raise TablectlError("board %s is not a member of any pool" % board)
        return dict(zip(("pool", "last_heard", "state", "pool_off", "storage_fault", "refused_frames",
                         "refused_rose_at", "closed"), row))

    # ------------------------------------------------------------------ writing
    def _tip(self):
        tip_id, tip_hash, sig = self.db.execute(
            "SELECT tip_id, tip_hash, sig FROM pool_chain WHERE id=1 FOR UPDATE").fetchone()
        if not hmac.compare_digest(sig, _signed(self.key, "tip:%d:%s" % (tip_id, tip_hash))):
            raise TablectlError("the pool's chain tip was edited (its signature does not match): "
                                "run `tablectl pool verify`; nothing was recorded")
        return tip_id, tip_hash

    def _set_tip(self, tip):
        self.db.execute("UPDATE pool_chain SET tip_id=%s, tip_hash=%s, sig=%s WHERE id=1",
                        (tip[0], tip[1], _signed(self.key, "tip:%d:%s" % tip)))

    def _row(self, rows, tip, pool, board, seq, kind, body, board_mac=None, now=None):
        row_id = tip[0] + 1
        recorded_at = round(now if now is not None else time.time(), 6)
        text = body if isinstance(body, str) else json.dumps(body, sort_keys=True, separators=(",", ":"))
        h = row_mac(self.key, tip[1], row_id, mac_subject(pool, board), seq, kind, recorded_at, text, board_mac)
        rows.append((row_id, pool, board, seq, kind, recorded_at, text, tip[1], h, board_mac))
        return row_id, h

    def _flush_rows(self, rows):
        if rows:
            with self.db.cursor() as cur:
                cur.executemany("INSERT INTO pool_ledger(id, pool, board, seq, kind, recorded_at, body, prev_hash, "
                                "hash, board_mac) VALUES (%s,%s,%s,%s,%s,%s,%s,%s,%s,%s)", rows)

    def _transaction(self, work):
        """work(tip, rows) -> (tip, result): runs inside one transaction holding the chain row."""
        try:
            with self.db.transaction():
                rows = []
                tip, result = work(self._tip(), rows)
                self._flush_rows(rows)
                self._set_tip(tip)
        except TablectlError:
            raise
        except Exception as exc:
            if self.db.closed or self.db.broken:
                raise ConnectionError("pool database connection lost: %s" % exc)
            raise
        self._write_anchor(tip)
        return result

    def _write_anchor(self, tip):
        if self.anchor_path is None:
            return
        if self._anchor_fd is None:
            os.makedirs(os.path.dirname(self.anchor_path), mode=0o700, exist_ok=True)
            self._anchor_fd = os.open(self.anchor_path, os.O_RDWR | os.O_CREAT, 0o600)
        write_anchor(self._anchor_fd, self.key, tip)

    def _pool_row(self, name, lock=True):
        row = self.db.execute("SELECT name, params, version, service, meter_cents, over_cents, reserve_cents, tokens, "
                              "contrib_cents, awarded_cents, seeded_cents, hits FROM pools WHERE name=%s"
                              + (" FOR UPDATE" if lock else ""), (name,)).fetchone()
        if row is None:
            raise TablectlError("no pool named %r" % name)
        keys = ("name", "params", "version", "service", "meter_cents", "over_cents", "reserve_cents", "tokens",
                "contrib_cents", "awarded_cents", "seeded_cents", "hits")
        out = dict(zip(keys, row))
        out["params"] = json.loads(out["params"])
        return out

    def _save_pool(self, p):
        self.db.execute("UPDATE pools SET params=%s, version=%s, service=%s, meter_cents=%s, over_cents=%s, "
                        "reserve_cents=%s, tokens=%s, contrib_cents=%s, awarded_cents=%s, seeded_cents=%s, hits=%s "
                        "WHERE name=%s",
                        (json.dumps(p["params"], sort_keys=True), p["version"], p["service"], p["meter_cents"],
                         p["over_cents"], p["reserve_cents"], p["tokens"], p["contrib_cents"], p["awarded_cents"],
                         p["seeded_cents"], p["hits"], p["name"]))

    # ------------------------------------------------------------------ administration (signed)
    def books_id(self):
        """What names these books in an administrator's signature, so a change signed for one
        floor's books cannot be played on another's: derived from the ledger key, which is theirs."""
        return _signed(self.key, "books-id")[:32]

    def _books_admin_key(self):
        """(public key, row id) of the books' newest `admin_key` row, its row MAC checked (a key
        written into the database by someone without the ledger key is refused); None if none."""
        row = self.db.execute("SELECT id, board, seq, kind, recorded_at, body, prev_hash, hash, board_mac, pool "
                              "FROM pool_ledger WHERE kind='admin_key' ORDER BY id DESC LIMIT 1").fetchone()
        if row is None:
            return None
        row_id, board, seq, kind, recorded_at, body, prev_hash, h, board_mac, pool = row
        if not hmac.compare_digest(row_mac(self.key, prev_hash, row_id, mac_subject(pool, board), seq, kind,
                                           recorded_at, body, board_mac), h):
            raise TablectlError("the books' administrator key row %d was edited: nothing is changed "
                                "(run `tablectl pool verify`)" % row_id)
        try:
            return adminkey.parse_public(json.loads(body).get("pub"), "row %d" % row_id), row_id
        except (ValueError, AttributeError):
            raise TablectlError("the books' administrator key row %d does not hold a key" % row_id)

    def admin_key_in_books(self):
        """The administrator's public key the books hold (hex), or None."""
        with self.db.transaction():
            got = self._books_admin_key()
        return got[0] if got else None

    def _check_admin(self, op, pool, body, version, sig):
        """Checked inside the change's transaction (holding the chain row). A change is verified
        against the public key the books hold (their newest `admin_key` row); admin.pub in the key
        folder brings the key in only at the first change of new books, and an admin.pub that is
        not the books' key stops every change (it was replaced: someone wants a key of theirs
        trusted). Returns (public key, the books had none yet)."""
        books = self._books_admin_key()
        folder = self.keys.admin_pub()
        if books is None:
            if self.db.execute("SELECT 1 FROM pool_ledger LIMIT 1").fetchone() is not None:
                raise TablectlError("the pool's books hold rows but no administrator key row (books from before "
                                    "Ed25519 administration, or the row was deleted): nothing is changed "
                                    "(run `tablectl pool verify`)")
            if folder is None:
                raise TablectlError("no administrator public key: %s has no admin.pub (the first `tablectl pool "
                                    "create` puts it there, or `tablectl pool admin-key --install`)"
                                    % self.keys.folder)
            pub, fresh = folder, True
        else:
            pub, fresh = books[0], False
            if folder is not None and folder != pub:
                raise TablectlError("%s is not the administrator key the books hold (row %d): it was replaced; "
                                    "nothing is changed (put back the key %s, or change it with a signed "
                                    "`tablectl pool admin-key --rotate`)"
                                    % (self.keys._path("admin.pub"), books[1], pub))
        if not adminkey.verify(pub, sig, self.books_id(), op, pool, body, version):
            raise TablectlError("%s of pool %s refused: not signed with the pool administrator's key for "
                                "parameter version %s" % (op, pool, version))
        return pub, fresh

    def _discontinued(self, pool):
        """None, or where a discontinued pool's fund went, in words."""
        row = self.db.execute("SELECT discontinued FROM pools WHERE name=%s", (pool,)).fetchone()
        if row is None or row[0] is None:
            return None
        d = json.loads(row[0])
        where = "pool %s" % d["to_pool"] if d.get("to_pool") is not None else "licensee %s" % d["to_licensee"]
        return ("pool %s was discontinued (rulebook 000 rule 3.4): its fund of %s went to %s (ledger row %d)"
                % (pool, _cents(d["amount_cents"]), where, d["row"]))

    def _closed_note(self, pool):
        """': <why>' for a discontinued pool's refusals, else ''."""
        why = self._discontinued(pool) if pool else None
        return ": " + why if why else ""

    def admin(self, op, pool, body, version, sig):
        """A signed administrative change. ops: create {params}, service {enter}, params {changes},
        member {board, game, active}, transfer {to | licensee, reason}, rekey {pub} (pool "-").
        Every change except `create` and `service` needs the pool in service mode; a discontinued
        pool takes none. Returns the pool's status afterwards (rekey: None)."""
        if not isinstance(body, dict):
            raise TablectlError("a pool change is a JSON object")

        def work(tip, rows):
            pub, fresh = self._check_admin(op, pool, body, version, sig)
            if fresh:
                tip = self._row(rows, tip, None, "-", None, "admin_key", {"pub": pub, "from": "admin.pub"})
            logged = body
            if op == "rekey":
                return self._rekey(body, version, sig, tip, rows), None
            if op == "create":
                if version != 0:
                    raise TablectlError("a new pool starts at parameter version 0")
                if self.db.execute("SELECT 1 FROM pools WHERE name=%s", (pool,)).fetchone():
                    raise TablectlError("pool %s exists already" % pool)
                params = engine.check_params(body.get("params", {}))
                self.db.execute("INSERT INTO pools(name, params, version, service, meter_cents, over_cents, "
                                "reserve_cents, seeded_cents) VALUES (%s,%s,1,TRUE,%s,0,0,%s)",
                                (pool, json.dumps(params, sort_keys=True), params["seed_cents"], params["seed_cents"]))
                tip = self._row(rows, tip, pool, "-", None, "pool_created",
                                {"params": params, "sig": sig, "meter": params["seed_cents"],
                                 "seed_added": params["seed_cents"], "signed": body, "version": 0})
                return tip, None
            p = self._pool_row(pool)
            if version != p["version"]:
                raise TablectlError("%s of pool %s refused: signed for parameter version %s, the pool is at %d "
                                    "(read it again and sign anew)" % (op, pool, version, p["version"]))
            if self._discontinued(pool):
                raise TablectlError("%s refused: %s" % (op, self._discontinued(pool)))
            if op == "void":
                # a floor act, not a parameter change: taken in or out of service mode
                tip = self._void(p, body, rows, tip)
            elif op == "service":
                enter = body.get("enter")
                if not isinstance(enter, bool):
                    raise TablectlError("service takes enter: true or false")
                p["service"] = enter
            elif not p["service"]:
                raise TablectlError("pool %s is not in service mode: parameters, members and transfers change only "
                                    "there (tablectl pool service --enter)" % pool)
            elif op == "transfer":
                return self._transfer(p, body, version, sig, tip, rows), None
            elif op == "params":
                changes = body.get("changes")
                if not isinstance(changes, dict) or not changes:
                    raise TablectlError("params takes changes: {name: whole number}")
                if "bench" in changes and changes["bench"] != p["params"].get("bench", 0):
                    raise TablectlError("a pool is made a bench pool or a floor pool when it is created, never after")
                new = engine.check_params(dict(p["params"], **changes))
                if new["ceiling_cents"] < p["meter_cents"]:
                    raise TablectlError("ceiling_cents %d is below the pool's meter %d"
                                        % (new["ceiling_cents"], p["meter_cents"]))
                logged = {"changes": changes, "old": p["params"], "new": new}
                p["params"] = new
            elif op == "member":
                board, game, active = body.get("board"), body.get("game"), body.get("active", True)
                if not isinstance(board, str) or not 0 < len(board) <= 64:
                    raise TablectlError("member needs a board id")
                if game not in engine.GAMES:
                    raise TablectlError("game must be one of %s (rulebook 000 rule 3.1)" % ", ".join(engine.GAMES))
                row = self.db.execute("SELECT pool FROM pool_boards WHERE board=%s", (board,)).fetchone()
                if row is not None and row[0] != pool:
                    raise TablectlError("board %s feeds pool %s already" % (board, row[0]))
                if row is None:
                    self.db.execute("INSERT INTO pool_boards(board, pool, game, active) VALUES (%s,%s,%s,%s)",
                                    (board, pool, game, bool(active)))
                else:
                    self.db.execute("UPDATE pool_boards SET game=%s, active=%s WHERE board=%s",
                                    (game, bool(active), board))
            else:
                raise TablectlError("unknown pool change %r" % op)
            p["version"] += 1
            self._save_pool(p)
            tip = self._row(rows, tip, pool, "-", None, "admin_" + op,
                            {"op": op, "body": logged, "version": version, "sig": sig, "signed": body})
            return tip, None
        self._transaction(work)
        return self.status(pool) if op != "rekey" else None

    def _rekey(self, body, version, sig, tip, rows):
        """A new administrator key, signed with the key the books hold now; `version` is the row id
        of that key's row (so the signed change cannot be played again after the next one)."""
        current = self._books_admin_key()
        if current is None:
            raise TablectlError("the books hold no administrator key yet: the first change records admin.pub")
        if version != current[1]:
            raise TablectlError("rekey refused: signed for key row %s, the books' key is row %d" % (version, current[1]))
        new = adminkey.parse_public(body.get("pub"), "the new administrator key")
        if new == current[0]:
            raise TablectlError("the new administrator key is the one the books hold already")
        return self._row(rows, tip, None, "-", None, "admin_key",
                         {"pub": new, "from": "rekey", "old": current[0], "version": version, "sig": sig,
                          "signed": body})

    def _transfer(self, p, body, version, sig, tip, rows):
        """Rulebook 000 rule 3.4: a jackpot is discontinued only by transferring its liability
        (meter and overflow) with its fund (the reserve) to another game's jackpot (a pool in these
        books, in this transaction) or to another licensee. The pool is then discontinued: its
        tables are inactive, its tokens and hits refused, saying where the fund went."""
        to, licensee, reason = body.get("to"), body.get("licensee"), body.get("reason")
        if (to is None) == (licensee is None):
            raise TablectlError("a transfer names one destination: another pool (--to) or another licensee "
                                "(--to-licensee)")
        for what, text, limit in (("to", to, 64), ("licensee", licensee, 200), ("reason", reason, 500)):
            if text is None and what != "reason":
                continue
            if not isinstance(text, str) or not text.strip() or len(text) > limit or not text.isprintable():
                raise TablectlError("transfer: %s must be printable text of 1 to %d characters%s"
                                    % (what, limit, " (the Director's permission, rulebook 000 rule 3.4)"
                                       if what == "reason" else ""))
        name = p["name"]
        # A lock is a hit not yet paid by its board: its amount is neither the meter nor paid, and a
        # void would put it back on a meter that is gone. Each is paid or voided first.
        open_locks = [r[0] for r in self.db.execute("SELECT lock_no FROM pool_hits WHERE pool=%s AND paid_row IS NULL "
                                                    "AND void_row IS NULL ORDER BY lock_no", (name,))]
        if open_locks:
            raise TablectlError("pool %s has unpaid locks %s: each is paid by its board or voided (tablectl pool "
                                "void) before its fund can be transferred" % (name, ", ".join("#%d" % n
                                                                                             for n in open_locks)))
        dest = None
        if to is not None:
            if to == name:
                raise TablectlError("pool %s cannot transfer its fund to itself" % name)
            dest = self._pool_row(to)
            if self._discontinued(to):
                raise TablectlError("transfer refused: %s" % self._discontinued(to))
            if bool(dest["params"].get("bench")) != bool(p["params"].get("bench")):
                raise TablectlError("transfer refused: pool %s is a %s pool, %s a %s pool: a floor's liability goes "
                                    "only to a floor pool" % (name, "bench" if p["params"].get("bench") else "floor",
                                                              to, "bench" if dest["params"].get("bench") else "floor"))
        liability = p["meter_cents"] + p["over_cents"]
        reserve = p["reserve_cents"]
        out_row = tip[0] + 1
        tip = self._row(rows, tip, name, "-", None, "transfer_out",
                        {"op": "transfer", "signed": body, "version": version, "sig": sig, "pool": name,
                         "to_pool": to, "to_licensee": licensee, "reason": reason,
                         "meter_cents": p["meter_cents"], "over_cents": p["over_cents"], "reserve_cents": reserve,
                         "liability_cents": liability, "amount_cents": liability + reserve})
        if dest is not None:
            # The liability joins the other game's meter up to its ceiling, the rest its overflow
            # (which a royal there takes back up to the ceiling, as a token's would be).
            to_meter = min(liability, max(0, dest["params"]["ceiling_cents"] - dest["meter_cents"]))
            body_in = {"pool": to, "from_pool": name, "out_row": out_row, "liability_cents": liability,
                       "reserve_cents": reserve, "amount_cents": liability + reserve, "to_meter": to_meter,
                       "to_over": liability - to_meter, "meter_before": dest["meter_cents"],
                       "meter_after": dest["meter_cents"] + to_meter, "reason": reason}
            dest["meter_cents"] += to_meter
            dest["over_cents"] += liability - to_meter
            dest["reserve_cents"] += reserve
            tip = self._row(rows, tip, to, "-", None, "transfer_in", body_in)
            self._save_pool(dest)
        p["meter_cents"] = p["over_cents"] = p["reserve_cents"] = 0
        p["version"] += 1
        self._save_pool(p)
        self.db.execute("UPDATE pools SET discontinued=%s WHERE name=%s",
                        (json.dumps({"row": out_row, "to_pool": to, "to_licensee": licensee,
                                     "amount_cents": liability + reserve}), name))
        self.db.execute("UPDATE pool_boards SET active=FALSE WHERE pool=%s", (name,))
        return tip

    # ------------------------------------------------------------------ tokens
    def record_tokens(self, batches):
        """batches: [(board, [token, ...])], a token {"q": seq, "raw": the board's signed JSON text
        or None, "mac": its board MAC or None, "seat", "round", "ms"}. One transaction for all.
        Returns per batch {"last_seq", "new", "dup", "pool", "meter_cents"} or an error string."""
        def work(tip, rows):
            results = []
            boards = {}
            for board, _tokens in batches:
                if board not in boards:
                    r = self.db.execute("SELECT pool, game, active, last_seq FROM pool_boards WHERE board=%s",
                                        (board,)).fetchone()
                    boards[board] = r
            pools = {}
            # The meter rows in name order, so two writers can never wait on each other in a circle.
            for name in sorted({r[0] for r in boards.values() if r is not None}):
                pools[name] = self._pool_row(name)
            now = time.time()
            board_updates = {}
            taken = {}
            for board, tokens in batches:
                info = boards[board]
                if info is None:
                    results.append("board %s is not a member of any pool" % board)
                    continue
                pool_name, _game, active, _last = info
                if not active:
                    results.append("board %s is not an active member of pool %s%s" % (board, pool_name,
                                                                                      self._closed_note(pool_name)))
                    continue
                p = pools[pool_name]
                refused = self._check_tokens(board, tokens, bool(p["params"].get("bench")))
                if refused:
                    results.append(refused)
                    continue
                seqs = sorted({t["q"] for t in tokens})
                held = {r[0] for r in self.db.execute(
                    "SELECT seq FROM pool_ledger WHERE kind='token' AND board=%s AND seq = ANY(%s)",
                    (board, seqs))} if seqs else set()
                upd = board_updates.setdefault(board, [info[3], 0, 0])
                new = dup = 0
                # One board's resends can share a group commit: a number taken by an earlier batch
                # of this transaction is a duplicate too, not a unique-index failure that would roll
                # back every table's batch.
                done = taken.setdefault(board, set())
                for t in sorted(tokens, key=lambda t: t["q"]):
                    seq = t["q"]
                    if seq in held or seq in done:
                        dup += 1
                        continue
                    done.add(seq)
                    to_meter, to_over, to_res = engine.credit(p["meter_cents"], p["params"])
                    inc = to_meter + to_over
                    p["meter_cents"] += to_meter
                    p["over_cents"] += to_over
                    p["reserve_cents"] += to_res
                    p["tokens"] += 1
                    p["contrib_cents"] += inc
                    body = {"inc": inc, "to_meter": to_meter, "to_over": to_over, "reserve": to_res,
                            "meter": p["meter_cents"], "seat": t.get("seat"), "round": t.get("round"),
                            "board_ms": t.get("ms"), "raw": t.get("raw")}
                    tip = self._row(rows, tip, pool_name, board, seq, "token", body, t.get("mac"), now)
                    upd[0] = max(upd[0], seq)
                    upd[1] += 1
                    upd[2] += inc
                    new += 1
                results.append({"last_seq": max(upd[0], seqs[-1] if seqs else 0), "new": new, "dup": dup,
                                "pool": pool_name, "meter_cents": p["meter_cents"]})
            for p in pools.values():
                self._save_pool(p)
            for board, (last, n, cents) in board_updates.items():
                if n:
                    self.db.execute("UPDATE pool_boards SET last_seq=GREATEST(last_seq, %s), tokens=tokens+%s, "
                                    "contrib_cents=contrib_cents+%s WHERE board=%s", (last, n, cents, board))
            return tip, results
        return self._transaction(work)

    def _check_tokens(self, board, tokens, bench=False):
        """None, or why this board's batch is refused. A token carrying the board's signed bytes
        must say what it is (a coin of this board under this number); its seat, round and time are
        taken from those bytes, not from the fields beside them."""
        keys = self._board_keys(board)[0]
        if not keys and not bench:
            return ("token %s #%s refused: the pool holds no table key for board %s, and a floor pool takes only "
                    "tokens the board signed (pool serve --table-keys DIR)" % (board, tokens[0].get("q"), board))
        for t in tokens:
            raw = t.get("raw")
            if raw is None:
                if keys:
                    return "token %s #%s carries no signed event of keyed board %s" % (board, t.get("q"), board)
                continue
            try:
                ev = json.loads(raw)
            except (TypeError, ValueError):
                return "token %s #%s: its event is not JSON" % (board, t.get("q"))
            if not isinstance(ev, dict) or ev.get("q") != t["q"] or ev.get("b") not in (None, board) \
                    or ev.get("k") != "coin":
                return "token %s #%s: its event is not that board's coin under that number" % (board, t["q"])
            if keys:
                mac = t.get("mac")
                if not signed_by_board(keys, raw, mac):
                    return "token %s #%s was not signed by the board (refused)" % (board, t["q"])
            t["seat"], t["round"], t["ms"] = ev.get("seat"), ev.get("round"), ev.get("ms")
        return None

    # ------------------------------------------------------------------ hits
    def _board_keys(self, board):
        """(every key of the board, its current key) from the table-key folder, read again only when
        the board's key file changes (a new key replaces the file): the one writer checks every
        batch's MACs and would otherwise read the files for each."""
        if self.table_keys is None:
            return [], None
        try:
            st = os.stat(os.path.join(self.table_keys.folder, self.table_keys._table_name(board)))
            stamp = (st.st_ino, st.st_mtime_ns, st.st_size)
        except FileNotFoundError:
            stamp = None
        except OSError:
            return self.table_keys.all_table_keys(board), self.table_keys.table_key(board)
        got = self._key_cache.get(board)
        if got is None or got[0] != stamp or stamp is None:
            got = (stamp, (self.table_keys.all_table_keys(board), self.table_keys.table_key(board)))
            self._key_cache[board] = got
        return got[1]

    def _board_key(self, board, bench):
        """The board's current table key, or None for an unkeyed board of a bench pool. A floor pool
        takes nothing a board has not signed: no key, no statement, no payment."""
        key = self._board_keys(board)[1]
        if key is None and not bench:
            raise TablectlError("the pool holds no table key for board %s: a floor pool pays only what the board "
                                "signs (start pool serve with --table-keys DIR holding table-%s.key)" % (board, board))
        return key

    def _signed_event(self, board, signed, kind, bench, what):
        """The board's own event from {q, raw, mac}: its exact bytes, checked against the board's
        current key (a bench pool's unkeyed board: unchecked). Returns the event."""
        if not isinstance(signed, dict) or not isinstance(signed.get("raw"), str) or not _whole(signed.get("q")):
            raise TablectlError("%s needs the board's signed %s event {q, raw, mac}" % (what, kind))
        key = self._board_key(board, bench)
        if key is not None:
            mac = signed.get("mac")
            if not signed_by_board([key], signed["raw"], mac):
                raise TablectlError("%s refused: the %s event #%s was not signed by board %s"
                                    % (what, kind, signed.get("q"), board))
        try:
            ev = json.loads(signed["raw"])
        except ValueError:
            raise TablectlError("%s refused: the %s event is not JSON" % (what, kind))
        if not isinstance(ev, dict) or ev.get("k") != kind or ev.get("b") != board or ev.get("q") != signed["q"]:
            raise TablectlError("%s refused: the event is not board %s's %s under number %s"
                                % (what, board, kind, signed.get("q")))
        return ev

    def hit(self, board, round_no, seat, cards, received_at=None, note=None, statement=None):
        """One progressive hand at a table (see hit_hands)."""
        return self.hit_hands(board, round_no, [(seat, cards)], received_at, note, statement)[0]

    def hit_hands(self, board, round_no, hands, received_at=None, note=None, statement=None):
        """The declaration of one round at one table: its winning hands [(seat 0-based, cards)],
        with the board's signed statement (the state event the dealer's jackpot key made:
        JACKPOT_PENDING, its round, its eligible seats). Locks the pool hands' amounts from the
        meter as the pool holds it when this transaction takes the meter row, numbered in that
        order (lock_no), each from the meter the lock before it left: the round's royals first
        (several divide the meter, rule 3.2), then its straight flushes, each in seat order (rule 9:
        "from left to right"). A lock is paid when the board's signed award naming it comes back
        (paid()); until then it is listed as unpaid.

        Refused, with the reason: a statement the board did not sign, of another round or board, or
        older than one used already; a table that has played on since (a token after it); a seat
        not eligible at that lockout, or with no token of that round in the pool; a card in two
        hands; a second declaration of the round (all winning hands of a round go together, rule
        3.2 and 9), which names the first. The same declaration again returns its locks."""
        received_at = received_at if received_at is not None else time.time()
        if not isinstance(hands, list) or not 1 <= len(hands) <= 8 or len({s for s, _ in hands}) != len(hands):
            raise TablectlError("a hit names 1 to 8 different seats")
        if not _whole(round_no):
            raise TablectlError("a hit names its round (a whole number)")
        kinds = {}
        seen = {}
        from tablegames.errors import GameError
        from tablegames.poker import cards_str
        from tablegames.progressive import parse_hand
        for seat, cards in hands:
            if not _whole(seat) or not 0 <= seat <= 7 or not isinstance(cards, str):
                raise TablectlError("a hand is [seat 0..7, \"As Ks Qs Js Ts\"] (the initial five cards)")
            try:
                parsed = parse_hand(cards)
            except GameError as exc:
                raise TablectlError("seat %d: %s" % (seat_label(seat), exc))
            for c in parsed:
                if c in seen:
                    raise TablectlError("card %s is in the hands of seats %d and %d: refused"
                                        % (cards_str([c]), seat_label(seen[c]), seat_label(seat)))
                seen[c] = seat
            kinds[seat] = engine.hand_kind(cards)
        declared = sorted([seat, cards.split()] for seat, cards in hands)

        def work(tip, rows):
            info = self.db.execute("SELECT pool, active FROM pool_boards WHERE board=%s", (board,)).fetchone()
            if info is None or not info[1]:
                raise TablectlError("board %s is not an active member of a pool%s"
                                    % (board, self._closed_note(info and info[0])))
            p = self._pool_row(info[0])
            bench = bool(p["params"].get("bench"))
            ev = self._signed_event(board, statement, "state", bench, "hit")
            if ev.get("to") != "JACKPOT_PENDING" or ev.get("reason") != "jackpot key":
                raise TablectlError("hit refused: event #%s is not the dealer's jackpot key opening JACKPOT_PENDING"
                                    % ev.get("q"))
            if ev.get("round") != round_no:
                raise TablectlError("hit refused: the board's statement #%s is of round %s, not round %s"
                                    % (ev.get("q"), ev.get("round"), round_no))
            if ev.get("pool") not in (None, p["name"]) or (ev.get("pool") is None and not bench):
                raise TablectlError("hit refused: the board's statement #%s names pool %s, not %s"
                                    % (ev.get("q"), ev.get("pool"), p["name"]))
            prior = self.db.execute("SELECT statement_q, hands, row_id, declared_at FROM pool_declarations "
                                    "WHERE board=%s AND round=%s", (board, round_no)).fetchone()
            if prior is not None:
                if json.loads(prior[1]) == declared and prior[0] == ev["q"]:
                    locks = self.db.execute("SELECT row_id FROM pool_hits WHERE board=%s AND round=%s ORDER BY seat",
                                            (board, round_no)).fetchall()
                    out = {}
                    for (row_id,) in locks:
                        body = json.loads(self.db.execute("SELECT body FROM pool_ledger WHERE id=%s",
                                                          (row_id,)).fetchone()[0])
                        out[body["seat"]] = dict(body, pool=p["name"], repeat=True)
                    return tip, [out.get(seat) or {"seat": seat, "pool_hand": False, "repeat": True}
                                 for seat, _ in hands]
                raise TablectlError("table %s round %d was declared already (ledger row %d, %s): all winning hands "
                                    "of a round are declared together (rulebook 000 rules 3.2 and 9)"
                                    % (board, round_no, prior[2], time.strftime("%Y-%m-%d %H:%M:%S",
                                                                                 time.localtime(prior[3]))))
            newest = self.db.execute("SELECT max(statement_q) FROM pool_declarations WHERE board=%s",
                                     (board,)).fetchone()[0]
            if newest is not None and ev["q"] <= newest:
                raise TablectlError("hit refused: statement #%d is not newer than #%d, used already"
                                    % (ev["q"], newest))
            later = self.db.execute("SELECT seq FROM pool_ledger WHERE kind='token' AND board=%s AND seq > %s "
                                    "ORDER BY seq LIMIT 1", (board, ev["q"])).fetchone()
            if later is not None:
                raise TablectlError("hit refused: table %s has played on since its statement #%d (token #%d): "
                                    "round %d is over" % (board, ev["q"], later[0], round_no))
            elig = ev.get("elig")
            if not _whole(elig):
                raise TablectlError("hit refused: the statement names no eligible seats")
            for seat, _cards in hands:
                # Rulebook 000 rule 3.1: "A player wins a progressive jackpot award if the player has made
                # the optional wager": the seat had a token when the round locked (the board says so) and
                # the pool holds that token.
                if not elig & (1 << seat):
                    raise TablectlError("table %s seat %d had no progressive token when round %d locked: not eligible"
                                        % (board, seat_label(seat), round_no))
                if self.db.execute("SELECT 1 FROM pool_ledger WHERE kind='token' AND board=%s "
                                   "AND (body::json->>'round')::bigint = %s AND (body::json->>'seat')::int = %s "
                                   "LIMIT 1", (board, round_no, seat)).fetchone() is None:
                    raise TablectlError("table %s seat %d has no progressive token of round %d in the pool: "
                                        "not eligible" % (board, seat_label(seat), round_no))
            royal_seats = sorted(s for s, _ in hands if kinds[s] == engine.ROYAL)
            sf_seats = sorted(s for s, _ in hands if kinds[s] == engine.STRAIGHT_FLUSH and p["params"]["sf_percent"])
            plan = list(zip(royal_seats, engine.royals(p["meter_cents"], p["over_cents"], p["params"],
                                                       len(royal_seats)))) if royal_seats else []
            cards_of = dict(hands)
            locked_at = time.time()
            out = {}
            for seat in royal_seats + sf_seats:
                if kinds[seat] == engine.ROYAL:
                    got = dict(plan.pop(0)[1])
                else:
                    got = engine.hit(p["meter_cents"], p["over_cents"], p["params"], engine.STRAIGHT_FLUSH)
                lock_no = p["hits"] + 1
                body = {"board": board, "round": round_no, "seat": seat, "hand": kinds[seat], "cards": cards_of[seat],
                        "lock_no": lock_no, "meter_before": p["meter_cents"], "over_before": p["over_cents"],
                        "received_at": round(received_at, 6),
                        "locked_at": round(locked_at, 6), "note": note, "statement_q": ev["q"]}
                body.update(got)
                p["meter_cents"] = got["meter_after"]
                p["over_cents"] = got["over_after"]
                p["awarded_cents"] += got["amount_cents"]
                p["seeded_cents"] += got["seed_added"]
                p["hits"] = lock_no
                tip = self._row(rows, tip, p["name"], board, None, "hit", body, now=locked_at)
                self.db.execute("INSERT INTO pool_hits(board, round, seat, pool, lock_no, row_id, amount_cents) "
                                "VALUES (%s,%s,%s,%s,%s,%s,%s)", (board, round_no, seat, p["name"], lock_no, tip[0],
                                                                  got["amount_cents"]))
                out[seat] = dict(body, pool=p["name"])
            tip = self._row(rows, tip, p["name"], board, ev["q"], "declaration",
                            {"round": round_no, "hands": declared, "statement": statement["raw"],
                             "locks": [out[s]["lock_no"] for s in sorted(out)]}, statement.get("mac"), locked_at)
            self.db.execute("INSERT INTO pool_declarations(board, round, statement_q, pool, hands, row_id, declared_at) "
                            "VALUES (%s,%s,%s,%s,%s,%s,%s)", (board, round_no, ev["q"], p["name"],
                                                              json.dumps(declared), tip[0], locked_at))
            self._save_pool(p)
            return tip, [out.get(seat) or {"seat": seat, "pool_hand": False, "hand": kinds[seat],
                                            "board": board, "round": round_no} for seat, _ in hands]
        return self._transaction(work)

    def paid(self, board, award):
        """The board's signed award event for a pool lock: the lock is paid. Refused unless the
        event is the board's, names the lock, its table, round and seat, and pays exactly the
        amount locked. The same award again is answered as before."""
        def work(tip, rows):
            info = self.db.execute("SELECT pool FROM pool_boards WHERE board=%s", (board,)).fetchone()
            if info is None:
                raise TablectlError("board %s is not a member of any pool" % board)
            p = self._pool_row(info[0])
            ev = self._signed_event(board, award, "award", bool(p["params"].get("bench")), "payment")
            lock_no = ev.get("lock")
            row = self.db.execute("SELECT board, round, seat, amount_cents, paid_row, void_row, row_id FROM pool_hits "
                                  "WHERE pool=%s AND lock_no=%s", (p["name"], lock_no)).fetchone()
            if row is None:
                raise TablectlError("payment refused: pool %s has no lock #%s" % (p["name"], lock_no))
            if (row[0], row[1], row[2]) != (board, ev.get("round"), ev.get("seat")):
                raise TablectlError("payment refused: lock #%s is table %s round %s seat %d, the award is table %s "
                                    "round %s seat %s" % (lock_no, row[0], row[1], seat_label(row[2]), board, ev.get("round"),
                                                          (ev.get("seat") or 0) + 1))
            if ev.get("pool_cents") != row[3]:
                raise TablectlError("payment refused: lock #%s is %d cents, the board paid %s"
                                    % (lock_no, row[3], ev.get("pool_cents")))
            if row[5] is not None:
                raise TablectlError("payment refused: lock #%s was voided (ledger row %d)" % (lock_no, row[5]))
            if row[4] is not None:
                return tip, {"lock_no": lock_no, "paid_row": row[4], "repeat": True}
            tip = self._row(rows, tip, p["name"], board, award["q"], "hit_paid",
                            {"lock_no": lock_no, "round": row[1], "seat": row[2], "amount_cents": row[3],
                             "award": award["raw"], "hit_row": row[6]}, award.get("mac"))
            self.db.execute("UPDATE pool_hits SET paid_row=%s WHERE pool=%s AND lock_no=%s",
                            (tip[0], p["name"], lock_no))
            return tip, {"lock_no": lock_no, "paid_row": tip[0]}
        return self._transaction(work)

    def unpaid(self, pool=None):
        """Locks no board has paid yet and nobody voided: each stays in view until it is."""
        sql = ("SELECT h.pool, h.lock_no, h.board, h.round, h.seat, h.amount_cents, l.recorded_at FROM pool_hits h "
               "JOIN pool_ledger l ON l.id = h.row_id WHERE h.paid_row IS NULL AND h.void_row IS NULL")
        args = ()
        if pool:
            sql += " AND h.pool=%s"
            args = (pool,)
        with self.db.transaction():
            return [{"pool": r[0], "lock_no": r[1], "board": r[2], "round": r[3], "seat": r[4], "amount_cents": r[5],
                     "locked_at": r[6]} for r in self.db.execute(sql + " ORDER BY h.lock_no", args)]

    def _void(self, p, body, rows, tip):
        """A signed act: a lock the board never paid is voided, its amount back on the meter (above
        the ceiling to the overflow), with the reason in the books."""
        lock_no, reason = body.get("lock_no"), body.get("reason")
        if not _whole(lock_no) or not isinstance(reason, str) or not reason.strip():
            raise TablectlError("void takes lock_no (a whole number) and a reason")
        row = self.db.execute("SELECT amount_cents, paid_row, void_row, board, round, seat, row_id FROM pool_hits "
                              "WHERE pool=%s AND lock_no=%s", (p["name"], lock_no)).fetchone()
        if row is None:
            raise TablectlError("pool %s has no lock #%s" % (p["name"], lock_no))
        if row[1] is not None:
            raise TablectlError("lock #%d was paid by the board (ledger row %d): it cannot be voided" % (lock_no, row[1]))
        if row[2] is not None:
            raise TablectlError("lock #%d was voided already (ledger row %d)" % (lock_no, row[2]))
        amount = row[0]
        hit = json.loads(self.db.execute("SELECT body FROM pool_ledger WHERE id=%s", (row[6],)).fetchone()[0])
        # The lock undone: its amount back, less the seed its reset added and the overflow the reset
        # took back onto the meter (both returned where they came from); above the ceiling, overflow.
        seed_back = hit.get("seed_added", 0)
        over_back = hit.get("over_before", hit["over_after"]) - hit["over_after"]
        back = amount - seed_back
        to_meter = max(min(back - over_back, p["params"]["ceiling_cents"] - p["meter_cents"]), -p["meter_cents"])
        to_over = back - to_meter
        if p["over_cents"] + to_over < 0:
            raise TablectlError("lock #%d cannot be voided: the overflow it took back is gone" % lock_no)
        p["meter_cents"] += to_meter
        p["over_cents"] += to_over
        p["awarded_cents"] -= amount
        p["seeded_cents"] -= seed_back
        tip = self._row(rows, tip, p["name"], row[3], None, "hit_void",
                        {"lock_no": lock_no, "amount_cents": amount, "to_meter": to_meter, "to_over": to_over,
                         "seed_back": seed_back, "reason": reason, "round": row[4], "seat": row[5]})
        self.db.execute("UPDATE pool_hits SET void_row=%s WHERE pool=%s AND lock_no=%s", (tip[0], p["name"], lock_no))
        return tip

    # ------------------------------------------------------------------ reading
    def pools(self):
        return [r[0] for r in self.db.execute("SELECT name FROM pools ORDER BY name")]

    def status(self, name=None):
        with self.db.transaction():
            out = []
            for pool in ([name] if name else self.pools()):
                p = self._pool_row(pool, lock=False)
                p["discontinued"] = self._discontinued(pool)
                p["tables"] = [{"board": b, "game": g, "active": a, "last_seq": q, "tokens": n, "contrib_cents": c}
                               for b, g, a, q, n, c in self.db.execute(
                                   "SELECT board, game, active, last_seq, tokens, contrib_cents FROM pool_boards "
                                   "WHERE pool=%s ORDER BY board", (pool,))]
                out.append(p)
        return out[0] if name else out

    def board_last_seq(self, board):
        row = self.db.execute("SELECT last_seq, pool FROM pool_boards WHERE board=%s", (board,)).fetchone()
        return (row[0], row[1]) if row else (None, None)

    def rows(self, kinds=None, pool=None):
        sql = "SELECT id, pool, board, seq, kind, recorded_at, body FROM pool_ledger"
        cond, params = [], []
        if kinds:
            cond.append("kind = ANY(%s)")
            params.append(list(kinds))
        if pool:
            cond.append("pool = %s")
            params.append(pool)
        if cond:
            sql += " WHERE " + " AND ".join(cond)
        with self.db.transaction():
            with self.db.cursor(name="pool_rows") as cur:
                cur.execute(sql + " ORDER BY id", params)
                for r in cur:
                    yield {"id": r[0], "pool": r[1], "board": r[2], "seq": r[3], "kind": r[4],
                           "recorded_at": r[5], "body": _record(r[6])}

    def hits(self, pool=None):
        return [r["body"] for r in self.rows(("hit",), pool) if r["body"] is not None]

    # ------------------------------------------------------------------ proving
    def verify(self, table_keys=None, admin_pub=None):
        """Prove the books: (rows checked, problems naming rows). table_keys: a KeyStore of the
        tables' keys, to check each token's board MAC as well. Every administrative row is checked
        against the administrator's public key (check_admin_rows); admin_pub: the key the
        administrator holds, which the books' key must be."""
        problems = []
        prev = GENESIS
        expected = 1
        count = 0
        with self.db.transaction():
            with self.db.cursor(name="pool_verify") as cur:
                cur.execute("SELECT id, board, seq, kind, recorded_at, body, prev_hash, hash, board_mac, pool "
                            "FROM pool_ledger ORDER BY id")
                for row_id, board, seq, kind, recorded_at, body, prev_hash, h, board_mac, pool in cur:
                    count += 1
                    if row_id != expected:
                        problems.append("rows %d..%d missing (deleted?) before row %d" % (expected, row_id - 1, row_id))
                    if prev_hash != prev:
                        problems.append("row %d does not follow the row before it (deleted, inserted or reordered)"
                                        % row_id)
                    if not hmac.compare_digest(row_mac(self.key, prev_hash, row_id, mac_subject(pool, board), seq,
                                                       kind, recorded_at, body, board_mac), h):
                        problems.append("row %d was edited or forged (its MAC does not match its content)" % row_id)
                    signed_field = {"token": "raw", "declaration": "statement", "hit_paid": "award"}.get(kind)
                    if signed_field and table_keys is not None:
                        # what a board signed (a token, a jackpot statement, an award paying a lock)
                        raw = (_record(body) or {}).get(signed_field) or ""
                        tkeys = table_keys.all_table_keys(board)
                        if tkeys and board_mac is None:
                            problems.append("row %d: %s %s #%s of keyed board %s carries no board MAC (unsigned)"
                                            % (row_id, kind, board, seq, board))
                        elif tkeys and not signed_by_board(tkeys, raw, board_mac):
                            problems.append("row %d: %s %s #%s was not signed by the board" % (row_id, kind, board, seq))
                    prev = h
                    expected = row_id + 1
            tip_id, tip_hash, sig = self.db.execute("SELECT tip_id, tip_hash, sig FROM pool_chain WHERE id=1").fetchone()
        if not hmac.compare_digest(sig, _signed(self.key, "tip:%d:%s" % (tip_id, tip_hash))):
            problems.append("the chain tip row was edited")
        elif tip_id != expected - 1 or (tip_id and tip_hash != prev):
            problems.append("the chain tip names row %d, the ledger ends at row %d" % (tip_id, expected - 1))
        self._check_anchor(expected - 1, problems)
        problems.extend(self.check_admin_rows(admin_pub))
        return count, problems

    def check_admin_rows(self, admin_pub=None):
        """Every signed row (a pool's creation, each change, each transfer, each key change) checked
        against the administrator's public key in force at that row, as the books hold it; with
        admin_pub (the key the administrator holds, from outside these books and this folder) the
        books' keys must be that one. A row written with the ledger key alone (by whoever holds the
        pool server's folder) has no valid signature and is named here."""
        problems = []
        books = self.books_id()
        try:
            folder = self.keys.admin_pub()
        except TablectlError as exc:
            problems.append(str(exc))
            folder = None
        key = None
        with self.db.transaction():
            # The signed rows only (a floor's books are mostly tokens), in chain order.
            signed_rows = [{"id": i, "pool": pool, "kind": kind, "body": _record(body)} for i, pool, kind, body
                           in self.db.execute("SELECT id, pool, kind, body FROM pool_ledger WHERE kind IN "
                                              "('admin_key', 'pool_created', 'transfer_out') OR left(kind, 6) = 'admin_' "
                                              "ORDER BY id")]
        for r in signed_rows:
            kind, b, row_id = r["kind"], r["body"], r["id"]
            if b is None:
                problems.append("row %d: its body is not a record (edited or forged): its %s cannot be checked"
                                % (row_id, kind))
                continue
            if kind == "admin_key":
                if key is not None and not (b.get("old") == key and (b.get("signed") or {}).get("pub") == b.get("pub")
                                            and adminkey.verify(key, b.get("sig"), books, "rekey", "-",
                                                                b.get("signed"), b.get("version"))):
                    problems.append("row %d: the administrator key was changed without the signature of the key "
                                    "before it" % row_id)
                    continue  # later changes are checked against the key the books held before
                if admin_pub is not None and b.get("pub") != admin_pub:
                    problems.append("row %d: the books' administrator key %s is not the key you hold (%s)"
                                    % (row_id, b.get("pub"), admin_pub))
                key = b.get("pub")
                continue
            if kind == "pool_created":
                op, version = "create", 0
            elif kind == "transfer_out":
                op, version = "transfer", b.get("version")
            elif kind.startswith("admin_"):
                op, version = kind[len("admin_"):], b.get("version")
            else:
                continue
            what = "row %d: %s of pool %s" % (row_id, op, r["pool"])
            if key is None:
                problems.append("%s comes before any administrator key row" % what)
            elif "signed" not in b:
                problems.append("%s carries no signed change (made before Ed25519 administration?)" % what)
            elif not adminkey.verify(key, b.get("sig"), books, op, r["pool"], b["signed"], version):
                problems.append("%s is not signed by the pool administrator's key" % what)
        if folder is not None and key is not None and folder != key:
            problems.append("%s is not the administrator key the books hold (%s): it was replaced"
                            % (self.keys._path("admin.pub"), key))
        if os.path.exists(self.keys._path("admin.key")):
            problems.append("%s, the shared administrator key of old, is still in the pool's key folder, which the "
                            "pool server reads: delete it" % self.keys._path("admin.key"))
        return problems

    def _check_anchor(self, tip_id, problems):
        if self.anchor_path is None or not os.path.exists(self.anchor_path):
            return
        with open(self.anchor_path, "rb") as f:
            data = f.read()
        best = None
        for row, _mac, good in anchor_slots(self.key, data):
            if not good:
                problems.append("the anchor %s was edited" % self.anchor_path)
                continue
            if best is None or row > best:
                best = row
        if best is not None and best > tip_id:
            problems.append("rows %d..%d are missing from the end (the anchor names row %d)" % (tip_id + 1, best, best))

    def reconcile(self):
        """Replay the ledger and compare with the pools' rows: for each pool, contributions +
        transfers in = meter + overflow + awards - seeds + transfers out (rulebook 000 rule 3.4: a
        liability moves, it never disappears), and each table's contributions summed from its token
        rows equal its counter. A transfer into a pool must match the transfer out of the other
        (same row, same amounts), and a transfer out to a pool must have its transfer in.
        Returns {"ok", "pools": {...}, "problems": [...]}."""
        problems = []
        replay = {}
        per_table = {}
        outs = {}     # transfer_out row id -> (pool, body), until its transfer_in is seen
        closed = {}   # discontinued pool -> its transfer_out row id
        for r in self.rows():
            b = r["body"]
            if b is None:
                problems.append("row %d: its body is not a record (edited or forged: `tablectl pool verify` names it); "
                                "its %s is not counted" % (r["id"], r["kind"]))
                continue
            try:
                pool = r["pool"]
                if pool in closed and r["kind"] in ("token", "hit"):
                    problems.append("row %d: a %s of pool %s after it was discontinued (row %d)"
                                    % (r["id"], r["kind"], pool, closed[pool]))
                if r["kind"] == "pool_created":
                    replay[pool] = {"meter": b["meter"], "over": 0, "contrib": 0, "awarded": 0, "seeded": b["seed_added"],
                                    "tokens": 0, "hits": 0, "reserve": 0, "in": 0, "out": 0}
                elif r["kind"] in ("transfer_out", "transfer_in", "token", "hit", "hit_void") and pool not in replay:
                    # (a row moved to a pool never created, which verify names too: named here, not a KeyError)
                    problems.append("row %d: a %s of pool %s, which has no creation row before it" % (r["id"], r["kind"],
                                                                                                    pool))
                elif r["kind"] == "transfer_out":
                    s = replay[pool]
                    if (b.get("pool"), b["meter_cents"], b["over_cents"], b["reserve_cents"]) != (
                            pool, s["meter"], s["over"], s["reserve"]) \
                            or b["liability_cents"] != b["meter_cents"] + b["over_cents"] \
                            or b["amount_cents"] != b["liability_cents"] + b["reserve_cents"]:
                        problems.append("row %d: transfer out of pool %s moved meter %d + overflow %d + reserve %d, the "
                                        "pool held %d + %d + %d" % (r["id"], pool, b["meter_cents"], b["over_cents"],
                                                                    b["reserve_cents"], s["meter"], s["over"],
                                                                    s["reserve"]))
                    s["out"] += b["liability_cents"]
                    s["reserve"] -= b["reserve_cents"]
                    s["meter"] = s["over"] = 0
                    closed[pool] = r["id"]
                    if b.get("to_pool") is not None:
                        outs[r["id"]] = (pool, b)
                elif r["kind"] == "transfer_in":
                    s = replay[pool]
                    src = outs.pop(b.get("out_row"), None)
                    if src is None or src[0] != b.get("from_pool") or src[1].get("to_pool") != pool \
                            or src[1]["liability_cents"] != b["liability_cents"] \
                            or src[1]["reserve_cents"] != b["reserve_cents"]:
                        problems.append("row %d: transfer into pool %s of %d + reserve %d does not match a transfer out "
                                        "of pool %s (row %s)" % (r["id"], pool, b["liability_cents"], b["reserve_cents"],
                                                                 b.get("from_pool"), b.get("out_row")))
                    if b["meter_before"] != s["meter"] or b["to_meter"] + b["to_over"] != b["liability_cents"] \
                            or b["meter_after"] != s["meter"] + b["to_meter"]:
                        problems.append("row %d: transfer into pool %s does not follow its meter (%d before it)"
                                        % (r["id"], pool, s["meter"]))
                    s["in"] += b["liability_cents"]
                    s["meter"] += b["to_meter"]
                    s["over"] += b["to_over"]
                    s["reserve"] += b["reserve_cents"]
                elif r["kind"] == "token":
                    s = replay[pool]
                    if b["to_meter"] + b["to_over"] != b["inc"] or s["meter"] + b["to_meter"] != b["meter"]:
                        problems.append("row %d: token %s #%d does not follow the meter before it" % (r["id"], r["board"],
                                                                                                     r["seq"]))
                    s["meter"] = b["meter"]
                    s["over"] += b["to_over"]
                    s["contrib"] += b["inc"]
                    s["reserve"] += b["reserve"]
                    s["tokens"] += 1
                    t = per_table.setdefault((pool, r["board"]), [0, 0])
                    t[0] += 1
                    t[1] += b["inc"]
                elif r["kind"] == "hit_void":
                    s = replay[pool]
                    if b["to_meter"] + b["to_over"] != b["amount_cents"] - b["seed_back"]:
                        problems.append("row %d: void of lock %d does not return its amount" % (r["id"], b["lock_no"]))
                    s["meter"] += b["to_meter"]
                    s["over"] += b["to_over"]
                    s["awarded"] -= b["amount_cents"]
                    s["seeded"] -= b["seed_back"]
                elif r["kind"] == "hit":
                    s = replay[pool]
                    if b["meter_before"] != s["meter"]:
                        problems.append("row %d: hit %d of %s was taken from %d, the meter stood at %d"
                                        % (r["id"], b["lock_no"], r["board"], b["meter_before"], s["meter"]))
                    if b["lock_no"] != s["hits"] + 1:
                        problems.append("row %d: hit number %d out of order (after %d)" % (r["id"], b["lock_no"], s["hits"]))
                    s["hits"] += 1
                    s["meter"] = b["meter_after"]
                    s["over"] = b["over_after"]
                    s["awarded"] += b["amount_cents"]
                    s["seeded"] += b["seed_added"]
            except (KeyError, TypeError) as exc:
                # An object without the fields its kind writes: edited by someone with the database.
                problems.append("row %d: its %s lacks or garbles %s (edited or forged: `tablectl pool verify` names "
                                "it); the replay after it may be off by its amounts" % (r["id"], r["kind"], exc))

        for row_id, (pool, b) in sorted(outs.items()):
            problems.append("row %d: pool %s's transfer out of %d to pool %s has no transfer in: the liability "
                            "left the books" % (row_id, pool, b["liability_cents"], b["to_pool"]))
        out = {}
        for st in self.status():
            name = st["name"]
            s = replay.get(name)
            if s is None:
                problems.append("pool %s has no creation row" % name)
                continue
            if (name in closed) != bool(st["discontinued"]):
                problems.append("pool %s is %s in its row, %s by its ledger" % (
                    name, "discontinued" if st["discontinued"] else "open", "discontinued (row %d)" % closed[name]
                    if name in closed else "open"))
            identity = s["contrib"] + s["in"] == s["meter"] + s["over"] + s["awarded"] - s["seeded"] + s["out"]
            if not identity:
                problems.append("pool %s: contributions %d + transfers in %d != meter %d + overflow %d + awards %d "
                                "- seeds %d + transfers out %d" % (name, s["contrib"], s["in"], s["meter"], s["over"],
                                                                   s["awarded"], s["seeded"], s["out"]))
            for field, col in (("meter", "meter_cents"), ("over", "over_cents"), ("contrib", "contrib_cents"),
                               ("awarded", "awarded_cents"), ("seeded", "seeded_cents"), ("tokens", "tokens"),
                               ("reserve", "reserve_cents")):
                if s[field] != st[col]:
                    problems.append("pool %s: %s is %d in its row, %d by its ledger" % (name, col, st[col], s[field]))
            tables = []
            for t in st["tables"]:
                n, cents = per_table.get((name, t["board"]), [0, 0])
                if (n, cents) != (t["tokens"], t["contrib_cents"]):
                    problems.append("table %s: %d tokens / %d cents in its row, %d / %d by the ledger"
                                    % (t["board"], t["tokens"], t["contrib_cents"], n, cents))
                tables.append({"board": t["board"], "game": t["game"], "tokens": n, "contrib_cents": cents})
            if sum(t["contrib_cents"] for t in tables) != s["contrib"]:
                problems.append("pool %s: the tables' contributions do not sum to the pool's" % name)
            out[name] = {"contrib_cents": s["contrib"], "meter_cents": s["meter"], "over_cents": s["over"],
                         "awarded_cents": s["awarded"], "seeded_cents": s["seeded"], "tokens": s["tokens"],
                         "hits": s["hits"], "reserve_cents": s["reserve"], "tables": tables,
                         "transfer_in_cents": s["in"], "transfer_out_cents": s["out"],
                         "discontinued": st["discontinued"]}
        return {"ok": not problems, "pools": out, "problems": problems}

    def token_seqs(self, board):
        """The sequence numbers of this board's tokens the pool holds (for the floor reconcile)."""
        with self.db.transaction():
            return [r[0] for r in self.db.execute("SELECT seq FROM pool_ledger WHERE kind='token' AND board=%s "
                                                  "ORDER BY seq", (board,))]


# The upgrade steps, in order: (the schema a step starts from, the step). A step runs inside the
# upgrade's transaction and raises to abandon it; the next schema gets the next entry.
MIGRATIONS = [
    (1, PoolStore._schema_1_to_2),
    (2, PoolStore._schema_2_to_3),
]
assert [v for v, _ in MIGRATIONS] == list(range(1, SCHEMA_VERSION)), "one step per schema, in order"
