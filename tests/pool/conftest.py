"""A real PostgreSQL server for the pool tests: started in a temporary folder on a unix socket
(Debian's initdb and pg_ctl; `make setup` installs them as root), stopped at the end. Each test
gets its own database in it and its own key folder."""
import itertools
import os
import tempfile

import pytest

from tabledev.pgserver import PgServer

_names = itertools.count(1)


@pytest.fixture(scope="session")
def pg_server():
    folder = tempfile.mkdtemp(prefix="pooltest-pg-")
    server = PgServer(folder).init().start()
    try:
        yield server
    finally:
        server.remove()


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
