"""Edges of the pool's books found by planting bugs (mutation testing, benchmarks/mutants.py) and by
breaking the books: each test here kills a change to host_tools/tablectl/pool/store.py that the
other pool tests let through, or pins a behaviour a broken ledger showed."""
import psycopg
import pytest

from tablectl.pool.store import PoolStore

from poolkit import make_pool, pg_server, pg_url, pool_keys  # noqa: F401 (fixtures)


def tok(seq, seat=0, rnd=1):
    return {"q": seq, "seat": seat, "round": rnd, "ms": 0, "raw": None, "mac": None}


@pytest.fixture
def store(pg_url, pool_keys):
    s = PoolStore(pg_url, pool_keys)
    make_pool(s)
    yield s
    s.close()


def test_reconcile_names_a_row_of_a_pool_no_row_created(store, pg_url):
    """A token row moved to a pool the ledger never created: verify names the edit (a row's MAC
    covers its pool) and reconcile names the row (it raised KeyError, a traceback from `pool
    reconcile`)."""
    store.record_tokens([("T1", [tok(q) for q in range(1, 4)])])
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute("UPDATE pool_ledger SET pool = 'elsewhere' WHERE kind = 'token' AND seq = 2 "
                           "RETURNING id").fetchone()[0]
    assert "row %d %s" % (row, "was edited or forged (its MAC does not match its content)") in store.verify()[1]
    problems = store.reconcile()["problems"]
    assert problems[0] == "row %d: a token of pool elsewhere, which has no creation row before it" % row
    assert "pool floor: tokens is 3 in its row, 2 by its ledger" in problems
