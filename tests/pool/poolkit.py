"""What the pool tests share: a real PostgreSQL server, started once per test run in a temporary
folder on a unix socket (Debian's initdb and pg_ctl; `make setup` installs them as root) and
stopped when the run ends; a fresh database and key folder per test; signed administration.

Not a conftest.py: a second module named `conftest` would shadow tests/conftest.py for the test
modules that import from it. Test modules import the fixtures from here."""
import atexit
import itertools
import os
import tempfile

import pytest

from tabledev.pgserver import PgServer

_names = itertools.count(1)
_server = []


def shared_server():
    """The run's server: one started here (removed when the run ends), or the one already
    running in the folder TABLE_POOLTEST_PG names (benchmarks/mutants.py starts one for all its
    runs), left running."""
    if not _server:
        running = os.environ.get("TABLE_POOLTEST_PG")
        if running:
            _server.append(PgServer(running))
        else:
            folder = tempfile.mkdtemp(prefix="pooltest-pg-")
            server = PgServer(folder).init().start()
            atexit.register(server.remove)
            _server.append(server)
    return _server[0]


@pytest.fixture(scope="session")
def pg_server():
    return shared_server()


@pytest.fixture
def pg_url(pg_server):
    """A fresh, empty database on the session's server."""
    import psycopg
    name = "t%d_%d" % (os.getpid(), next(_names))
    with psycopg.connect(pg_server.admin_url(), autocommit=True) as conn:
        conn.execute('CREATE DATABASE "%s"' % name)
    yield pg_server.admin_url(name)
    # dropped when the test ends: a server shared by many runs (TABLE_POOLTEST_PG) would fill the disk
    with psycopg.connect(pg_server.admin_url(), autocommit=True) as conn:
        conn.execute('DROP DATABASE IF EXISTS "%s" WITH (FORCE)' % name)


def admin_key_path(keys_folder):
    """The administrator's private key of a test: beside the pool's key folder, never in it."""
    return os.path.join(os.path.dirname(os.path.abspath(keys_folder)), "admin", "pool-admin.key")


@pytest.fixture
def pool_keys(tmp_path):
    """The pool's key folder holding admin.pub only; the private key in tmp_path/admin/."""
    from tablectl.pool import adminkey
    from tablectl.pool.store import PoolKeys
    folder = str(tmp_path / "pool.keys")
    PoolKeys(folder).install_admin_pub(adminkey.generate(admin_key_path(folder)))
    return folder


def sign(store, op, pool, body, version):
    """The test administrator's Ed25519 signature over a change to these books."""
    from tablectl.pool import adminkey
    from tablectl.pool.store import admin_signature
    return admin_signature(adminkey.load_private(admin_key_path(store.keys.folder)), op, pool, body, version,
                           store.books_id())


def admin(store, op, pool, body):
    """Sign a change with the administrator's key for the pool's current parameter version."""
    version = 0 if op == "create" else store.status(pool)["version"]
    return store.admin(op, pool, body, version, sign(store, op, pool, body, version))


def make_pool(store, name="floor", params=None, members=(("T1", "caribbean_draw"),), bench=True):
    """A pool with members. bench: a bench pool, whose unkeyed boards' tokens and statements the
    store's arithmetic tests use; a floor pool (bench=False) takes only what a keyed board signs."""
    params = dict(params or {"seed_cents": 10000, "increment_cents": 70, "ceiling_cents": 10000000,
                             "reserve_cents": 5})
    if bench:
        params.setdefault("bench", 1)
    admin(store, "create", name, {"params": params})
    for board, game in members:
        admin(store, "member", name, {"board": board, "game": game})
    return admin(store, "service", name, {"enter": False})


_statement_q = itertools.count(10 ** 6)
_statements = {}


def statement(board, round_no, elig=0xFF, pool="floor", key=None, q=None, **fields):
    """A board's jackpot statement as the firmware makes it (table/app.py `_jackpot`): the state
    event of the dealer's jackpot key, {q, raw, mac}; signed with `key` (a table key) if given.
    The same (board, round) gets the same statement again unless fields differ."""
    import hashlib
    import hmac
    import json
    cache = (board, round_no, elig, pool, key, q, tuple(sorted(fields.items())))
    if cache not in _statements:
        number = q if q is not None else next(_statement_q)
        ev = {"t": "e", "b": board, "k": "state", "ms": 1000, "q": number, "from": "LOCKED",
              "to": "JACKPOT_PENDING", "reason": "jackpot key", "round": round_no, "meter": 0, "elig": elig,
              "pool": pool}
        ev.update(fields)
        raw = json.dumps(ev, separators=(",", ":"))
        mac = hmac.new(key, bytes((1, 1)) + raw.encode(), hashlib.sha256).hexdigest() if key else None
        _statements[cache] = {"q": number, "raw": raw, "mac": mac}
    return _statements[cache]


def hit(store, board, round_no, seat, cards, **kw):
    """One hand declared with a bench board's statement for that round."""
    return store.hit(board, round_no, seat, cards, statement=statement(board, round_no), **kw)


def hit_hands(store, board, round_no, hands, **kw):
    return store.hit_hands(board, round_no, hands, statement=statement(board, round_no), **kw)
