"""The pool's books carry their schema's version (pool_schema), as the table's ledger does: a
database of an older version is brought up step by step, in order, keeping every row and a chain
that still proves itself; one newer than this tablectl is refused by name."""
import psycopg
import pytest

from tablectl.errors import TablectlError
from tablectl.pool.store import MIGRATIONS, SCHEMA_VERSION, PoolStore

from poolkit import make_pool, pg_server, pg_url, pool_keys  # noqa: F401 (fixtures)


def tok(seq):
    return {"q": seq, "seat": 0, "round": 1, "ms": seq * 10, "raw": None, "mac": None}


def _columns(url, table):
    with psycopg.connect(url) as conn:
        return {r[0] for r in conn.execute("SELECT column_name FROM information_schema.columns "
                                           "WHERE table_schema = current_schema() AND table_name=%s", (table,))}


def _as_version_1(url, keep_discontinued=False):
    """Books as a tablectl of schema 1 left them: no version written, pools without
    `discontinued` (unless that tablectl added it unversioned, as the last ones did)."""
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("DROP TABLE pool_schema")
        conn.execute("DROP TABLE pool_health")
        if not keep_discontinued:
            conn.execute("ALTER TABLE pools DROP COLUMN discontinued")


def test_a_new_database_is_made_at_the_newest_schema_by_the_steps_in_order(pg_url, pool_keys):
    assert [v for v, _ in MIGRATIONS] == list(range(1, SCHEMA_VERSION))
    store = PoolStore(pg_url, pool_keys)
    try:
        assert store.schema_version() == SCHEMA_VERSION
        assert "discontinued" in _columns(pg_url, "pools")
        assert store.verify() == (0, [])
    finally:
        store.close()


@pytest.mark.parametrize("keep_discontinued", [False, True], ids=["plain", "column-added-unversioned"])
def test_a_version_1_database_migrates_keeping_its_rows_and_its_proof(pg_url, pool_keys, keep_discontinued):
    store = PoolStore(pg_url, pool_keys)
    make_pool(store)
    store.record_tokens([("T1", [tok(1), tok(2), tok(3)])])
    rows_before, problems = store.verify()
    assert problems == []
    store.close()
    _as_version_1(pg_url, keep_discontinued)
    old = PoolStore(pg_url, pool_keys, migrate=False)
    try:
        assert old.schema_version() == 1
        assert ("discontinued" in _columns(pg_url, "pools")) is keep_discontinued
    finally:
        old.close()

    store = PoolStore(pg_url, pool_keys)
    try:
        assert store.schema_version() == SCHEMA_VERSION == 3
        assert "discontinued" in _columns(pg_url, "pools")
        assert "refused_frames" in _columns(pg_url, "pool_health")
        assert store.verify() == (rows_before, [])
        assert store.status("floor")["tokens"] == 3
        assert store.record_tokens([("T1", [tok(4)])])[0]["new"] == 1  # and it takes new rows, chained on
        assert store.verify()[1] == []
    finally:
        store.close()


def test_books_of_a_newer_schema_are_refused_and_left_as_they_are(pg_url, pool_keys):
    PoolStore(pg_url, pool_keys).close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE pool_schema SET version = %s", (SCHEMA_VERSION + 1,))
    with pytest.raises(TablectlError, match="is schema %d, newer than this tablectl reads \\(schema %d\\)"
                       % (SCHEMA_VERSION + 1, SCHEMA_VERSION)):
        PoolStore(pg_url, pool_keys)
    with psycopg.connect(pg_url) as conn:
        assert conn.execute("SELECT version FROM pool_schema").fetchone()[0] == SCHEMA_VERSION + 1


def test_a_version_2_database_gains_the_tables_health_reports_and_keeps_its_books(pg_url, pool_keys):
    store = PoolStore(pg_url, pool_keys)
    make_pool(store)
    store.record_tokens([("T1", [tok(1), tok(2)])])
    rows_before, problems = store.verify()
    assert problems == []
    store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as the schema-2 tablectl left it
        conn.execute("DROP TABLE pool_health")
        conn.execute("UPDATE pool_schema SET version = 2")
    store = PoolStore(pg_url, pool_keys)
    try:
        assert store.schema_version() == 3
        assert "closed" in _columns(pg_url, "pool_health")
        assert store.verify() == (rows_before, [])
    finally:
        store.close()


def test_a_database_with_no_books_in_it_is_schema_0_until_a_pool_opens_it(pg_url, pool_keys):
    """Version 0 is what tells an opening pool to make the books from the start (schema 1's
    tables), not to migrate tables that are not there."""
    bare = PoolStore(pg_url, pool_keys, migrate=False)
    try:
        assert bare.schema_version() == 0
    finally:
        bare.close()



def _open_at_once(pg_url, pool_keys):
    """Two PoolStores opened on the same books at once: both find them below this schema and wait
    on the upgrade's lock (held here until both wait: the lock PoolStore takes,
    pg_advisory_xact_lock(18180018)), then go on one after the other. Returns both."""
    import threading
    import time
    holder = psycopg.connect(pg_url)
    holder.execute("SELECT pg_advisory_xact_lock(18180018)")
    opened = []

    def open_books():
        try:
            opened.append(PoolStore(pg_url, pool_keys))
        except Exception as exc:  # noqa: reported below
            opened.append(exc)
    threads = [threading.Thread(target=open_books) for _ in range(2)]
    try:
        for t in threads:
            t.start()
        deadline = time.time() + 20
        while holder.execute("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND NOT granted "
                             "AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
                             ).fetchone()[0] < 2:
            assert time.time() < deadline, "the two pools never waited on the upgrade's lock"
            time.sleep(0.02)
        assert opened == []
    finally:
        holder.rollback()  # the lock goes: one upgrades, then the other looks again
        holder.close()
        for t in threads:
            t.join(30)
    assert len(opened) == 2 and all(isinstance(s, PoolStore) for s in opened), opened
    return opened


def test_two_pools_opening_an_empty_database_at_once_make_its_books_once(pg_url, pool_keys):
    from tablectl.pool.store import PoolKeys
    PoolKeys(pool_keys).ledger_key(create=True)  # one key folder, its ledger key made before
    a, b = _open_at_once(pg_url, pool_keys)
    try:
        with psycopg.connect(pg_url) as conn:
            assert conn.execute("SELECT count(*) FROM pool_chain").fetchone()[0] == 1
            assert conn.execute("SELECT id, version FROM pool_schema").fetchall() == [(1, SCHEMA_VERSION)]
        make_pool(a)
        assert b.record_tokens([("T1", [tok(1)])])[0]["new"] == 1
        assert a.verify()[1] == [] and b.status("floor")["tokens"] == 1
    finally:
        a.close()
        b.close()


def test_two_pools_upgrading_the_same_books_at_once_upgrade_them_once(pg_url, pool_keys):
    """The second to take the lock reads the version the first wrote and runs no step again."""
    store = PoolStore(pg_url, pool_keys)
    make_pool(store)
    store.record_tokens([("T1", [tok(1), tok(2)])])
    rows_before, problems = store.verify()
    assert problems == []
    store.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:  # as the schema-2 tablectl left it
        conn.execute("DROP TABLE pool_health")
        conn.execute("UPDATE pool_schema SET version = 2")
    a, b = _open_at_once(pg_url, pool_keys)
    try:
        assert a.schema_version() == b.schema_version() == SCHEMA_VERSION
        assert "closed" in _columns(pg_url, "pool_health")
        assert a.verify() == (rows_before, []) and b.verify() == (rows_before, [])
        assert b.record_tokens([("T1", [tok(3)])])[0]["new"] == 1
        assert a.status("floor")["tokens"] == 3
    finally:
        a.close()
        b.close()
