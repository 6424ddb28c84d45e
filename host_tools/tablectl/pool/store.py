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
import hashlib
import hmac
import json
import os
import time

from ..errors import TablectlError
from ..keys import KeyStore
from ..ledger import GENESIS, row_mac
from . import engine

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
    PRIMARY KEY (board, round, seat)
);
"""
_ANCHOR_SLOT = 256
# The bytes before an event's payload that its board MAC also covers (tablectl/ledger.py).
_SIGNED_PREFIX = bytes((1, 1))


def _signed(key, text):
    return hmac.new(key, text.encode(), hashlib.sha256).hexdigest()


def admin_signature(key, op, pool, body, version):
    """The pool administrator's signature over a parameter change: the op, the pool, the change and
    the pool's parameter version it applies to (so a recorded change cannot be played again)."""
    text = json.dumps([op, pool, body, version], sort_keys=True, separators=(",", ":"))
    return _signed(key, "admin:" + text)


class PoolKeys(KeyStore):
    """The pool's key folder: ledger.key (row MACs) and admin.key (parameter changes)."""

    def admin_key(self, create=False):
        key = self._read("admin.key")
        if key is None and create:
            key = os.urandom(32)
            self._write("admin.key", key)
        return key


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


class PoolStore:
    def __init__(self, url, keys_folder, anchor=True, migrate=True, table_keys=None):
        self.url = url
        # The tables' keys (a KeyStore), when the pool is given them: a token of a keyed board is
        # taken only with the board's MAC over its exact bytes (forged tokens are refused).
        self.table_keys = table_keys
        self.keys = PoolKeys(keys_folder)
        self.key = self.keys.ledger_key(create=True)
        self.anchor_path = os.path.join(keys_folder, "pool.anchor") if anchor else None
        self._anchor_fd = None
        self.db = connect(url, autocommit=True)
        if migrate:
            self._migrate()

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

    def _migrate(self):
        with self.db.transaction():
            # Two pools starting at once on an empty database: one creates, the other waits.
            self.db.execute("SELECT pg_advisory_xact_lock(18180018)")
            for stmt in SCHEMA.split(";"):
                if stmt.strip():
                    self.db.execute(stmt)
            if self.db.execute("SELECT 1 FROM pool_chain WHERE id=1").fetchone() is None:
                self.db.execute("INSERT INTO pool_chain(id, tip_id, tip_hash, sig) VALUES (1, 0, %s, %s)",
                                (GENESIS, _signed(self.key, "tip:0:" + GENESIS)))

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
        h = row_mac(self.key, tip[1], row_id, board, seq, kind, recorded_at, text, board_mac)
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
        text = json.dumps({"row": tip[0], "mac": tip[1], "sig": _signed(self.key, "anchor:%d:%s" % tip)})
        record = text.encode().ljust(_ANCHOR_SLOT - 1) + b"\n"
        if self._anchor_fd is None:
            os.makedirs(os.path.dirname(self.anchor_path), mode=0o700, exist_ok=True)
            self._anchor_fd = os.open(self.anchor_path, os.O_RDWR | os.O_CREAT, 0o600)
        os.pwrite(self._anchor_fd, record, _ANCHOR_SLOT * (tip[0] % 2))

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
    def _check_admin(self, op, pool, body, version, sig):
        key = self.keys.admin_key()
        if key is None:
            raise TablectlError("no pool administrator key in %s: nothing can be changed" % self.keys.folder)
        if not isinstance(sig, str) or not hmac.compare_digest(sig, admin_signature(key, op, pool, body, version)):
            raise TablectlError("%s of pool %s refused: not signed with the pool administrator's key for "
                                "parameter version %s" % (op, pool, version))

    def admin(self, op, pool, body, version, sig):
        """A signed administrative change. ops: create {params}, service {enter}, params {changes},
        member {board, game, active}. Every change except `create` and `service` needs the pool in
        service mode. Returns the pool's status afterwards."""
        self._check_admin(op, pool, body, version, sig)

        def work(tip, rows):
            logged = body
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
                                 "seed_added": params["seed_cents"]})
                return tip, None
            p = self._pool_row(pool)
            if version != p["version"]:
                raise TablectlError("%s of pool %s refused: signed for parameter version %s, the pool is at %d "
                                    "(read it again and sign anew)" % (op, pool, version, p["version"]))
            if op == "service":
                enter = body.get("enter")
                if not isinstance(enter, bool):
                    raise TablectlError("service takes enter: true or false")
                p["service"] = enter
            elif not p["service"]:
                raise TablectlError("pool %s is not in service mode: parameters and members change only there "
                                    "(tablectl pool service --enter)" % pool)
            elif op == "params":
                changes = body.get("changes")
                if not isinstance(changes, dict) or not changes:
                    raise TablectlError("params takes changes: {name: whole number}")
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
                            {"op": op, "body": logged, "version": version, "sig": sig})
            return tip, None
        self._transaction(work)
        return self.status(pool)

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
            for board, tokens in batches:
                info = boards[board]
                if info is None:
                    results.append("board %s is not a member of any pool" % board)
                    continue
                pool_name, _game, active, _last = info
                if not active:
                    results.append("board %s is not an active member of pool %s" % (board, pool_name))
                    continue
                p = pools[pool_name]
                refused = self._check_tokens(board, tokens)
                if refused:
                    results.append(refused)
                    continue
                seqs = sorted({t["q"] for t in tokens})
                held = {r[0] for r in self.db.execute(
                    "SELECT seq FROM pool_ledger WHERE kind='token' AND board=%s AND seq = ANY(%s)",
                    (board, seqs))} if seqs else set()
                upd = board_updates.setdefault(board, [info[3], 0, 0])
                new = dup = 0
                done = set()
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

    def _check_tokens(self, board, tokens):
        """None, or why this board's batch is refused. A token carrying the board's signed bytes
        must say what it is (a coin of this board under this number); its seat, round and time are
        taken from those bytes, not from the fields beside them."""
        keys = self.table_keys.all_table_keys(board) if self.table_keys is not None else []
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
                if not isinstance(mac, str) or not any(
                        hmac.compare_digest(hmac.new(k, _SIGNED_PREFIX + raw.encode(), hashlib.sha256).hexdigest(),
                                            mac) for k in keys):
                    return "token %s #%s was not signed by the board (refused)" % (board, t["q"])
            t["seat"], t["round"], t["ms"] = ev.get("seat"), ev.get("round"), ev.get("ms")
        return None

    # ------------------------------------------------------------------ hits
    def hit(self, board, round_no, seat, cards, received_at=None, note=None):
        """One progressive hand at a table (see hit_hands)."""
        return self.hit_hands(board, round_no, [(seat, cards)], received_at, note)[0]

    def hit_hands(self, board, round_no, hands, received_at=None, note=None):
        """The progressive hands of one round at one table, [(seat 0-based, cards)]: locks the
        amounts for that table and round from the meter as the pool holds it when this
        transaction takes the meter row. Hits are numbered in that order (lock_no), each from the
        meter the hit before it left: the round's royals first (several divide the meter, rule
        3.2), then its straight flushes, each in seat order (rule 9: "from left to right"). A
        seat already locked in this round returns its first lock and takes nothing again."""
        received_at = received_at if received_at is not None else time.time()
        if not isinstance(hands, list) or not 1 <= len(hands) <= 8 or len({s for s, _ in hands}) != len(hands):
            raise TablectlError("a hit names 1 to 8 different seats")
        kinds = {}
        for seat, cards in hands:
            kinds[seat] = engine.hand_kind(cards)
            if kinds[seat] is None:
                try:
                    engine.hit(0, 0, engine.DEFAULTS, None)
                except TablectlError as exc:  # not a pool hand, and why, naming the seat
                    raise TablectlError("seat %d: %s" % (seat + 1, exc))

        def work(tip, rows):
            out = {}
            new = []
            for seat, cards in hands:
                prior = self.db.execute("SELECT lock_no, row_id FROM pool_hits WHERE board=%s AND round=%s AND seat=%s",
                                        (board, round_no, seat)).fetchone()
                if prior is not None:
                    body = self.db.execute("SELECT body FROM pool_ledger WHERE id=%s", (prior[1],)).fetchone()[0]
                    out[seat] = dict(json.loads(body), repeat=True)
                else:
                    new.append((seat, cards))
            if not new:
                return tip, [out[s] for s, _ in hands]
            info = self.db.execute("SELECT pool, active FROM pool_boards WHERE board=%s", (board,)).fetchone()
            if info is None or not info[1]:
                raise TablectlError("board %s is not an active member of a pool" % board)
            for seat, _cards in new:
                # Rulebook 000 rule 3.1: "A player wins a progressive jackpot award if the player has made
                # the optional wager": only a seat whose token of that round the pool holds wins.
                if self.db.execute("SELECT 1 FROM pool_ledger WHERE kind='token' AND board=%s "
                                   "AND (body::json->>'round')::bigint = %s AND (body::json->>'seat')::int = %s "
                                   "LIMIT 1", (board, round_no, seat)).fetchone() is None:
                    raise TablectlError("table %s seat %d has no progressive token of round %d in the pool: "
                                        "not eligible" % (board, seat + 1, round_no))
            p = self._pool_row(info[0])
            royal_seats = sorted(s for s, _ in new if kinds[s] == engine.ROYAL)
            sf_seats = sorted(s for s, _ in new if kinds[s] == engine.STRAIGHT_FLUSH)
            plan = list(zip(royal_seats, engine.royals(p["meter_cents"], p["over_cents"], p["params"],
                                                       len(royal_seats)))) if royal_seats else []
            cards_of = dict(new)
            locked_at = time.time()
            for seat in royal_seats + sf_seats:
                if kinds[seat] == engine.ROYAL:
                    got = dict(plan.pop(0)[1])
                else:
                    got = engine.hit(p["meter_cents"], p["over_cents"], p["params"], engine.STRAIGHT_FLUSH)
                lock_no = p["hits"] + 1
                body = {"board": board, "round": round_no, "seat": seat, "hand": kinds[seat], "cards": cards_of[seat],
                        "lock_no": lock_no, "meter_before": p["meter_cents"], "received_at": round(received_at, 6),
                        "locked_at": round(locked_at, 6), "note": note}
                body.update(got)
                p["meter_cents"] = got["meter_after"]
                p["over_cents"] = got["over_after"]
                p["awarded_cents"] += got["amount_cents"]
                p["seeded_cents"] += got["seed_added"]
                p["hits"] = lock_no
                tip = self._row(rows, tip, p["name"], board, None, "hit", body, now=locked_at)
                self.db.execute("INSERT INTO pool_hits(board, round, seat, pool, lock_no, row_id) "
                                "VALUES (%s,%s,%s,%s,%s,%s)", (board, round_no, seat, p["name"], lock_no, tip[0]))
                out[seat] = dict(body, pool=p["name"])
            self._save_pool(p)
            return tip, [out[s] for s, _ in hands]
        return self._transaction(work)

    # ------------------------------------------------------------------ reading
    def pools(self):
        return [r[0] for r in self.db.execute("SELECT name FROM pools ORDER BY name")]

    def status(self, name=None):
        with self.db.transaction():
            out = []
            for pool in ([name] if name else self.pools()):
                p = self._pool_row(pool, lock=False)
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
                           "recorded_at": r[5], "body": json.loads(r[6])}

    def hits(self, pool=None):
        return [r["body"] for r in self.rows(("hit",), pool)]

    # ------------------------------------------------------------------ proving
    def verify(self, table_keys=None):
        """Prove the books: (rows checked, problems naming rows). table_keys: a KeyStore of the
        tables' keys, to check each token's board MAC as well."""
        problems = []
        prev = GENESIS
        expected = 1
        count = 0
        with self.db.transaction():
            with self.db.cursor(name="pool_verify") as cur:
                cur.execute("SELECT id, board, seq, kind, recorded_at, body, prev_hash, hash, board_mac "
                            "FROM pool_ledger ORDER BY id")
                for row_id, board, seq, kind, recorded_at, body, prev_hash, h, board_mac in cur:
                    count += 1
                    if row_id != expected:
                        problems.append("rows %d..%d missing (deleted?) before row %d" % (expected, row_id - 1, row_id))
                    if prev_hash != prev:
                        problems.append("row %d does not follow the row before it (deleted, inserted or reordered)"
                                        % row_id)
                    if not hmac.compare_digest(row_mac(self.key, prev_hash, row_id, board, seq, kind, recorded_at,
                                                       body, board_mac), h):
                        problems.append("row %d was edited or forged (its MAC does not match its content)" % row_id)
                    if kind == "token" and table_keys is not None and board_mac is not None:
                        raw = json.loads(body).get("raw") or ""
                        tkeys = table_keys.all_table_keys(board)
                        if tkeys and not any(hmac.compare_digest(hmac.new(k, _SIGNED_PREFIX + raw.encode(),
                                                                          hashlib.sha256).hexdigest(), board_mac)
                                             for k in tkeys):
                            problems.append("row %d: token %s #%d was not signed by the board" % (row_id, board, seq))
                    prev = h
                    expected = row_id + 1
            tip_id, tip_hash, sig = self.db.execute("SELECT tip_id, tip_hash, sig FROM pool_chain WHERE id=1").fetchone()
        if not hmac.compare_digest(sig, _signed(self.key, "tip:%d:%s" % (tip_id, tip_hash))):
            problems.append("the chain tip row was edited")
        elif tip_id != expected - 1 or (tip_id and tip_hash != prev):
            problems.append("the chain tip names row %d, the ledger ends at row %d" % (tip_id, expected - 1))
        self._check_anchor(expected - 1, problems)
        return count, problems

    def _check_anchor(self, tip_id, problems):
        if self.anchor_path is None or not os.path.exists(self.anchor_path):
            return
        with open(self.anchor_path, "rb") as f:
            data = f.read()
        best = None
        for i in range(0, len(data), _ANCHOR_SLOT):
            try:
                a = json.loads(data[i:i + _ANCHOR_SLOT])
                row, mac, sig = a["row"], a["mac"], a["sig"]
            except (ValueError, KeyError, TypeError):
                continue
            if not hmac.compare_digest(sig, _signed(self.key, "anchor:%d:%s" % (row, mac))):
                problems.append("the anchor %s was edited" % self.anchor_path)
                continue
            if best is None or row > best:
                best = row
        if best is not None and best > tip_id:
            problems.append("rows %d..%d are missing from the end (the anchor names row %d)" % (tip_id + 1, best, best))

    def reconcile(self):
        """Replay the ledger and compare with the pools' rows: for each pool, contributions =
        meter + overflow + awards - seeds, and each table's contributions summed from its token
        rows equal its counter. Returns {"ok", "pools": {...}, "problems": [...]}."""
        problems = []
        replay = {}
        per_table = {}
        for r in self.rows():
            b = r["body"]
            pool = r["pool"]
            if r["kind"] == "pool_created":
                replay[pool] = {"meter": b["meter"], "over": 0, "contrib": 0, "awarded": 0, "seeded": b["seed_added"],
                                "tokens": 0, "hits": 0, "reserve": 0}
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
        out = {}
        for st in self.status():
            name = st["name"]
            s = replay.get(name)
            if s is None:
                problems.append("pool %s has no creation row" % name)
                continue
            identity = s["contrib"] == s["meter"] + s["over"] + s["awarded"] - s["seeded"]
            if not identity:
                problems.append("pool %s: contributions %d != meter %d + overflow %d + awards %d - seeds %d"
                                % (name, s["contrib"], s["meter"], s["over"], s["awarded"], s["seeded"]))
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
                         "hits": s["hits"], "reserve_cents": s["reserve"], "tables": tables}
        return {"ok": not problems, "pools": out, "problems": problems}

    def token_seqs(self, board):
        """The sequence numbers of this board's tokens the pool holds (for the floor reconcile)."""
        with self.db.transaction():
            return [r[0] for r in self.db.execute("SELECT seq FROM pool_ledger WHERE kind='token' AND board=%s "
                                                  "ORDER BY seq", (board,))]
