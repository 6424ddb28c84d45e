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
    if not _server:
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
    return pg_server.admin_url(name)


@pytest.fixture
def pool_keys(tmp_path):
    from tablectl.pool.store import PoolKeys
    folder = str(tmp_path / "pool.keys")
    PoolKeys(folder).admin_key(create=True)
    return folder


def admin(store, op, pool, body):
    """Sign a change with the administrator's key for the pool's current parameter version."""
    from tablectl.pool.store import admin_signature
    version = 0 if op == "create" else store.status(pool)["version"]
    sig = admin_signature(store.keys.admin_key(), op, pool, body, version)
    return store.admin(op, pool, body, version, sig)


def make_pool(store, name="floor", params=None, members=(("T1", "caribbean_draw"),)):
    admin(store, "create", name, {"params": params or {"seed_cents": 10000, "increment_cents": 70,
                                                      "ceiling_cents": 10000000, "reserve_cents": 5}})
    for board, game in members:
        admin(store, "member", name, {"board": board, "game": game})
    return admin(store, "service", name, {"enter": False})
