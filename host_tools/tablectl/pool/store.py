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
ALTER TABLE pool_hits ADD COLUMN IF NOT EXISTS amount_cents BIGINT;
ALTER TABLE pool_hits ADD COLUMN IF NOT EXISTS paid_row BIGINT;
ALTER TABLE pool_hits ADD COLUMN IF NOT EXISTS void_row BIGINT;
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
_ANCHOR_SLOT = 256


def _whole(v):
    return isinstance(v, int) and not isinstance(v, bool)

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
            if op == "void":
                # a floor act, not a parameter change: taken in or out of service mode
                tip = self._void(p, body, rows, tip)
            elif op == "service":
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
            taken = {}
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
        keys = self.table_keys.all_table_keys(board) if self.table_keys is not None else []
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
                if not isinstance(mac, str) or not any(
                        hmac.compare_digest(hmac.new(k, _SIGNED_PREFIX + raw.encode(), hashlib.sha256).hexdigest(),
                                            mac) for k in keys):
                    return "token %s #%s was not signed by the board (refused)" % (board, t["q"])
            t["seat"], t["round"], t["ms"] = ev.get("seat"), ev.get("round"), ev.get("ms")
        return None

    # ------------------------------------------------------------------ hits
    def _board_key(self, board, bench):
        """The board's current table key, or None for an unkeyed board of a bench pool. A floor pool
        takes nothing a board has not signed: no key, no statement, no payment."""
        key = self.table_keys.table_key(board) if self.table_keys is not None else None
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
            good = hmac.new(key, _SIGNED_PREFIX + signed["raw"].encode(), hashlib.sha256).hexdigest()
            if not isinstance(mac, str) or not hmac.compare_digest(good, mac):
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
                raise TablectlError("seat %d: %s" % (seat + 1, exc))
            for c in parsed:
                if c in seen:
                    raise TablectlError("card %s is in the hands of seats %d and %d: refused"
                                        % (cards_str([c]), seen[c] + 1, seat + 1))
                seen[c] = seat
            kinds[seat] = engine.hand_kind(cards)
        declared = sorted([seat, cards.split()] for seat, cards in hands)

        def work(tip, rows):
            info = self.db.execute("SELECT pool, active FROM pool_boards WHERE board=%s", (board,)).fetchone()
            if info is None or not info[1]:
                raise TablectlError("board %s is not an active member of a pool" % board)
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
                                        % (board, seat + 1, round_no))
                if self.db.execute("SELECT 1 FROM pool_ledger WHERE kind='token' AND board=%s "
                                   "AND (body::json->>'round')::bigint = %s AND (body::json->>'seat')::int = %s "
                                   "LIMIT 1", (board, round_no, seat)).fetchone() is None:
                    raise TablectlError("table %s seat %d has no progressive token of round %d in the pool: "
                                        "not eligible" % (board, seat + 1, round_no))
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
                                    "round %s seat %s" % (lock_no, row[0], row[1], row[2] + 1, board, ev.get("round"),
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
                    signed_field = {"token": "raw", "declaration": "statement", "hit_paid": "award"}.get(kind)
                    if signed_field and table_keys is not None:
                        # what a board signed (a token, a jackpot statement, an award paying a lock)
                        raw = json.loads(body).get(signed_field) or ""
                        tkeys = table_keys.all_table_keys(board)
                        if tkeys and board_mac is None:
                            problems.append("row %d: %s %s #%s of keyed board %s carries no board MAC (unsigned)"
                                            % (row_id, kind, board, seq, board))
                        elif tkeys and not any(hmac.compare_digest(hmac.new(k, _SIGNED_PREFIX + raw.encode(),
                                                                            hashlib.sha256).hexdigest(), board_mac)
                                               for k in tkeys):
                            problems.append("row %d: %s %s #%s was not signed by the board" % (row_id, kind, board, seq))
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
