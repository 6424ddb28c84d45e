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
