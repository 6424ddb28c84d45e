"""What the pool's web service reads: the pool's books in PostgreSQL, through a connection of its
own that cannot write (every transaction read-only, `default_transaction_read_only`, and a
statement timeout), with its own SELECTs over the store's tables (pool/store.py is the writer;
nothing here changes a row).

Money is integer cents everywhere here; `dollars()` makes the text a screen shows.
"""
import json
import threading
import time

from ..errors import TablectlError
from ..seats import seat_label
from .store import _safe_url

HIT_HOLD_S = 30.0  # a hit stays on the sign this long after its lock (Arkansas: shown within 30 s)
LAST_HITS = 25     # 9 NYCRR 5321.18: the controller keeps the last 25 hits
MAX_EVENTS = 1000  # one page of the event feed at most
MAX_CURSOR = 2 ** 63 - 1


def dollars(cents):
    """Integer cents as "$1,234.56" (no float anywhere)."""
    if cents is None:
        return "-"
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(int(cents)), 100)
    return "%s$%s.%02d" % (sign, "{:,}".format(whole), frac)


def plain_dollars(cents):
    """Integer cents as "1234.56", for CSV."""
    sign = "-" if cents < 0 else ""
    whole, frac = divmod(abs(int(cents)), 100)
    return "%s%d.%02d" % (sign, whole, frac)


def connect_readonly(url):
    import psycopg
    try:
        return psycopg.connect(url, autocommit=True, connect_timeout=5, application_name="tablectl-pool-web",
                               options="-c default_transaction_read_only=on -c statement_timeout=5000")
    except psycopg.Error as exc:
        first = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
        raise TablectlError("cannot reach the pool database %s: %s" % (_safe_url(url), first))


class Reader:
    """One read-only connection; reconnects on the next call after the database went away."""

    def __init__(self, url):
        self.url = url
        self.db = None
        self.lock = threading.Lock()

    def close(self):
        with self.lock:
            self._drop()

    def _drop(self):
        if self.db is not None:
            try:
                self.db.close()
            except Exception:  # noqa: a connection already broken
                pass
            self.db = None

    def _q(self, sql, args=()):
        if self.db is None:
            self.db = connect_readonly(self.url)
        try:
            cur = self.db.execute(sql, args)
            return cur.fetchall() if cur.description is not None else []
        except Exception:
            if self.db is not None and (self.db.closed or self.db.broken):
                self._drop()
            raise

    def run(self, fn, *args):
        """fn(q, *args) with this connection's query function, one caller at a time."""
        with self.lock:
            return fn(self._q, *args)

    # ------------------------------------------------------------------ the ledger's tip
    def tip(self):
        return self.run(_tip)

    def heard(self, after_id, boards_last_seq):
        return self.run(_heard, after_id, boards_last_seq)

    def snapshot(self, prev=None):
        return self.run(_snapshot, prev)

    def events(self, after, limit, pool=None):
        return self.run(_events, after, limit, pool)

    def hits(self, pool=None, board=None, limit=LAST_HITS):
        return self.run(_hits, pool, board, limit)

    def health(self):
        return self.run(_health)


def _tip(q):
    try:
        rows = q("SELECT tip_id FROM pool_chain WHERE id=1")
    except Exception as exc:
        if type(exc).__name__ == "UndefinedTable":
            return 0
        raise
    return rows[0][0] if rows else 0


def _heard(q, after_id, boards_last_seq):
    """({board: (newest row id, its time)}, whether a row other than a token came, the newest row
    id seen) for rows after `after_id`; at the start (after_id None) each board's newest token
    through the (board, seq) index, then the newest rows of any kind."""
    out = {}
    other = after_id is None
    if after_id is None:
        for board, seq in boards_last_seq.items():
            if seq:
                for rid, at in q("SELECT id, recorded_at FROM pool_ledger WHERE kind='token' AND board=%s AND seq=%s",
                                 (board, seq)):
                    out[board] = (rid, at)
        tip = _tip(q)
        after_id = max(0, tip - 5000)
    newest = after_id
    for board, rid, at, not_token in q("SELECT board, max(id), max(recorded_at), bool_or(kind <> 'token') "
                                       "FROM pool_ledger WHERE id > %s GROUP BY board", (after_id,)):
        other = other or bool(not_token)
        newest = max(newest, rid)
        if board != "-" and (board not in out or out[board][0] < rid):
            out[board] = (rid, at)
    return out, other, newest


_HEALTH_COLS = ("board", "pool", "last_heard", "state", "pool_off", "storage_fault", "refused_frames",
                "refused_rose_at", "closed")


def _health(q):
    """Each board's newest health report (pool/health.py): {board: row}; {} on books made before
    the pool kept them."""
    if not q("SELECT to_regclass('pool_health')")[0][0]:
        return {}
    return {r[0]: dict(zip(_HEALTH_COLS, r)) for r in q("SELECT %s FROM pool_health" % ", ".join(_HEALTH_COLS))}


_POOL_COLS = ("name", "params", "version", "service", "meter_cents", "over_cents", "reserve_cents", "tokens",
              "contrib_cents", "awarded_cents", "seeded_cents", "hits")


def _snapshot(q, prev=None):
    """Every pool, table and lock not yet paid, and per table the hits and wins (voided locks
    left out), in one read-only transaction. With `prev` (only tokens came since it was read) the
    locks are taken from it and only the meters and tables are read again."""
    q("BEGIN READ ONLY ISOLATION LEVEL REPEATABLE READ")
    try:
        tip = _tip(q)
        pools = []
        for row in q("SELECT %s FROM pools ORDER BY name" % ", ".join(_POOL_COLS)):
            p = dict(zip(_POOL_COLS, row))
            p["params"] = json.loads(p["params"])
            pools.append(p)
        tables = [{"board": b, "pool": pl, "game": g, "active": a, "last_seq": s, "tokens": n, "contrib_cents": c}
                  for b, pl, g, a, s, n, c in q("SELECT board, pool, game, active, last_seq, tokens, contrib_cents "
                                                "FROM pool_boards ORDER BY board")]
        if prev is not None:
            for p in pools:
                p["discontinued"] = prev["discontinued"].get(p["name"])
            return dict(prev, tip=tip, pools=pools, tables=tables, read_at=time.time())
        # A pool whose fund was transferred (rulebook 000 rule 3.4): books made before that column
        # existed have none.
        discontinued = {}
        if q("SELECT 1 FROM information_schema.columns WHERE table_schema = current_schema() AND table_name='pools' "
             "AND column_name='discontinued'"):
            discontinued = {n: json.loads(d) for n, d in q("SELECT name, discontinued FROM pools "
                                                            "WHERE discontinued IS NOT NULL")}
        for p in pools:
            p["discontinued"] = discontinued.get(p["name"])
        per_board = {b: {"hits": n, "wins_cents": w or 0, "paid_cents": pd or 0, "unpaid_cents": up or 0}
                     for b, n, w, pd, up in q(
                         "SELECT board, count(*), sum(amount_cents)::bigint, "
                         "(sum(amount_cents) FILTER (WHERE paid_row IS NOT NULL))::bigint, "
                         "(sum(amount_cents) FILTER (WHERE paid_row IS NULL))::bigint "
                         "FROM pool_hits WHERE void_row IS NULL GROUP BY board")}
        per_pool = {p: {"locks": n, "unpaid_cents": up or 0, "voided": v}
                    for p, n, up, v in q("SELECT pool, count(*) FILTER (WHERE void_row IS NULL), "
                                         "(sum(amount_cents) FILTER (WHERE paid_row IS NULL AND void_row IS NULL))::bigint, "
                                         "count(*) FILTER (WHERE void_row IS NOT NULL) FROM pool_hits GROUP BY pool")}
        recent = _hits(q, None, None, LAST_HITS, per_pool=True)
        unpaid = _hits(q, None, None, 1000, unpaid_only=True)
    finally:
        q("COMMIT")
    return {"tip": tip, "pools": pools, "tables": tables, "per_board": per_board, "per_pool": per_pool,
            "recent_hits": recent, "unpaid": unpaid, "discontinued": discontinued, "read_at": time.time()}


def _hits(q, pool, board, limit, per_pool=False, unpaid_only=False):
    """Locks with their times: received (the declaration reached the pool), locked, paid or voided;
    newest first. per_pool: the newest `limit` of each pool."""
    cond, args = [], []
    if pool is not None:
        cond.append("h.pool = %s")
        args.append(pool)
    if board is not None:
        cond.append("h.board = %s")
        args.append(board)
    if unpaid_only:
        cond.append("h.paid_row IS NULL AND h.void_row IS NULL")
    where = (" WHERE " + " AND ".join(cond)) if cond else ""
    inner = ("SELECT h.pool, h.lock_no, h.board, h.round, h.seat, h.amount_cents, h.paid_row, h.void_row, l.body, "
             "p.recorded_at AS paid_at, v.recorded_at AS void_at, "
             "row_number() OVER (PARTITION BY h.pool ORDER BY h.lock_no DESC) AS rn "
             "FROM pool_hits h JOIN pool_ledger l ON l.id = h.row_id "
             "LEFT JOIN pool_ledger p ON p.id = h.paid_row LEFT JOIN pool_ledger v ON v.id = h.void_row" + where)
    if per_pool:
        sql = "SELECT * FROM (%s) x WHERE rn <= %%s ORDER BY (x.body::json->>'locked_at')::float8 DESC, pool, lock_no " \
              "DESC" % inner
    else:
        sql = "SELECT * FROM (%s) x ORDER BY (x.body::json->>'locked_at')::float8 DESC, pool, lock_no DESC LIMIT %%s" \
              % inner
    out = []
    for (pl, lock_no, b, rnd, seat, amount, paid_row, void_row, body, paid_at, void_at, _rn) in q(sql, args + [limit]):
        body = json.loads(body)
        out.append({"pool": pl, "lock_no": lock_no, "board": b, "round": rnd, "seat": seat_label(seat),
                    "hand": body.get("hand"), "amount_cents": amount, "meter_before_cents": body.get("meter_before"),
                    "meter_after_cents": body.get("meter_after"), "received_at": body.get("received_at"),
                    "locked_at": body.get("locked_at"), "paid_at": paid_at, "voided_at": void_at,
                    "state": "paid" if paid_row is not None else "voided" if void_row is not None else "unpaid"})
    return out


# What a ledger row is, to a system reading the feed: the kind, and the fields it may read (the
# board's signed bytes, MACs and the administrator's signatures stay in the books).
_FIELDS = {
    "token": ("seat", "round", "inc", "to_meter", "to_over", "reserve", "meter"),
    "hit": ("lock_no", "round", "seat", "hand", "amount_cents", "meter_before", "meter_after", "over_before",
            "over_after", "seed_added", "received_at", "locked_at"),
    "declaration": ("round", "locks"),
    "hit_paid": ("lock_no", "round", "seat", "amount_cents"),
    "hit_void": ("lock_no", "amount_cents", "to_meter", "to_over", "seed_back", "reason", "round", "seat"),
    "pool_created": ("params", "meter"),
    "transfer_out": ("to_pool", "to_licensee", "reason", "meter_cents", "over_cents", "reserve_cents",
                     "liability_cents", "amount_cents"),
    "transfer_in": ("from_pool", "out_row", "liability_cents", "reserve_cents", "amount_cents", "to_meter",
                    "to_over", "meter_before", "meter_after", "reason"),
}
EVENT_NAMES = {"token": "contribution", "hit": "hit_locked", "declaration": "jackpot_declared",
               "hit_paid": "hit_paid", "hit_void": "hit_voided", "pool_created": "pool_created",
               "transfer_out": "fund_transferred_out", "transfer_in": "fund_transferred_in"}
_RENAME = {"inc": "contribution_cents", "to_meter": "to_meter_cents", "to_over": "to_overflow_cents",
           "reserve": "to_reserve_cents", "meter": "meter_cents", "meter_before": "meter_before_cents",
           "meter_after": "meter_after_cents", "over_before": "overflow_before_cents",
           "over_after": "overflow_after_cents", "seed_added": "seed_added_cents", "seed_back": "seed_back_cents",
           "over_cents": "overflow_cents"}


def event_of(row):
    rid, pool, board, seq, kind, at, body = row
    body = json.loads(body)
    if kind.startswith("admin_"):
        name = "pool_changed"
        data = {"op": kind[6:], "version": body.get("version")}
        inner = body.get("body")
        if kind == "admin_params" and isinstance(inner, dict):
            data["new"] = inner.get("new")
        elif kind == "admin_service" and isinstance(inner, dict):
            data["service"] = inner.get("enter")
        elif kind == "admin_member" and isinstance(inner, dict):
            data.update({k: inner.get(k) for k in ("board", "game", "active")})
    else:
        name = EVENT_NAMES.get(kind, kind)
        data = {_RENAME.get(k, k): body.get(k) for k in _FIELDS.get(kind, ()) if k in body}
    if "seat" in data and isinstance(data["seat"], int):
        data["seat"] = seat_label(data["seat"])  # seats from 1, as on the floor (docs/CLI-JSON.md)
    return {"id": rid, "event": name, "pool": pool, "table": None if board == "-" else board, "seq": seq,
            "at": at, "data": data}


def _events(q, after, limit, pool):
    sql = "SELECT id, pool, board, seq, kind, recorded_at, body FROM pool_ledger WHERE id > %s"
    args = [after]
    if pool is not None:
        sql += " AND pool = %s"
        args.append(pool)
    rows = q(sql + " ORDER BY id LIMIT %s", args + [limit])
    return [event_of(r) for r in rows]
