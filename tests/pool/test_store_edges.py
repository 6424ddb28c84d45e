"""Edges of the pool's books found by planting bugs (mutation testing, benchmarks/mutants.py) and by
breaking the books: each test here kills a change to host_tools/tablectl/pool/store.py that the
other pool tests let through, or pins a behaviour a broken ledger showed."""
import hashlib
import hmac

import psycopg
import pytest

from tablectl.errors import TablectlError
from tablectl.pool.store import PoolStore

from poolkit import hit_hands, make_pool, pg_server, pg_url, pool_keys  # noqa: F401 (fixtures)


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


def test_an_empty_batch_from_a_board_that_never_sent_a_token_answers_last_seq_0(store):
    """The service drops from its outbox every token at or below the pool's last_seq: a pool that
    answered 1 to a board it holds nothing of would have the board's first token dropped unsent."""
    assert store.record_tokens([("T1", [])])[0]["last_seq"] == 0
    store.record_tokens([("T1", [tok(1), tok(2)])])
    assert store.record_tokens([("T1", [])])[0]["last_seq"] == 2


def test_every_token_of_a_bench_batch_is_checked_not_only_those_before_an_unsigned_one(store):
    """A bench board may send tokens without its event bytes; one that carries bytes must still be
    its coin under its number, wherever it stands in the batch."""
    forged = dict(tok(2), raw="not json")
    assert store.record_tokens([("T1", [tok(1), forged])]) == ["token T1 #2: its event is not JSON"]
    assert store.status("floor")["tokens"] == 0


@pytest.mark.parametrize("seat", [-1, 8, 9])
def test_a_hand_on_a_seat_the_table_does_not_have_is_refused_as_a_malformed_hand(store, seat):
    """Seats are 0..7 on the wire: seat -1 would be a shift by a negative count (a ValueError, a
    traceback for the technician), seat 8 a seat no board has."""
    store.record_tokens([("T1", [tok(1)])])
    with pytest.raises(TablectlError, match=r"a hand is \[seat 0\.\.7"):
        hit_hands(store, "T1", 1, [(seat, "As Ks Qs Js Ts")])
    assert store.status("floor")["hits"] == 0


def test_a_declaration_repeated_says_again_which_hands_are_not_the_pools(store):
    """A repeat is answered from the locks the first declaration made; a seat that made no lock (a
    fixed award the table's house pays) is named as no pool hand again, never as one."""
    store.record_tokens([("T1", [tok(1, seat=0), tok(2, seat=1)])])
    first = hit_hands(store, "T1", 1, [(0, "As Ks Qs Js Ts"), (1, "2d 2c 2h 2s 3s")])
    again = hit_hands(store, "T1", 1, [(0, "As Ks Qs Js Ts"), (1, "2d 2c 2h 2s 3s")])
    assert first[1]["pool_hand"] is False and "lock_no" not in first[1]
    assert again[1] == {"seat": 1, "pool_hand": False, "repeat": True}
    assert again[0]["lock_no"] == first[0]["lock_no"] and store.status("floor")["hits"] == 1


def test_the_time_a_hit_was_received_is_kept_to_the_microsecond(store):
    """The gaming commission's record of when a jackpot was declared, and the lock order of two
    hits within a millisecond, rest on it."""
    store.record_tokens([("T1", [tok(1)])])
    h = hit_hands(store, "T1", 1, [(0, "As Ks Qs Js Ts")], received_at=1790000000.123456)[0]
    assert h["received_at"] == 1790000000.123456
    [row] = [r for r in store.rows(("hit",))]
    assert row["body"]["received_at"] == 1790000000.123456


def test_the_books_id_is_the_ledger_keys_signature_of_books_id_in_32_hex_digits(store):
    """Every administrator's signature names the books by this id and verify checks each signed row
    against it: a different id (another length) would call every change signed before it forged."""
    assert store.books_id() == hmac.new(store.key, b"books-id", hashlib.sha256).hexdigest()[:32]
    assert store.check_admin_rows() == []



def test_a_hand_on_the_eighth_seat_seat_7_on_the_wire_is_the_pools(store):
    """Seats are 0..7 on the wire: a table has eight seats, and the last one's royal is locked like
    any other seat's (a bound of 0..6 would refuse it as a malformed hand)."""
    store.record_tokens([("T1", [tok(1, seat=7)])])
    [h] = hit_hands(store, "T1", 1, [(7, "As Ks Qs Js Ts")])
    assert h["seat"] == 7 and h["lock_no"] >= 1 and h.get("pool_hand") is not False
    assert store.status("floor")["hits"] == 1


def test_an_unpaid_lock_shows_when_it_was_locked_not_another_column(store):
    """The floor page and `pool unpaid` show each unpaid lock's time (how long a royal has waited
    for its board to pay): it is the lock row's recorded time."""
    import time
    store.record_tokens([("T1", [tok(1)])])
    before = time.time()
    hit_hands(store, "T1", 1, [(0, "As Ks Qs Js Ts")])
    after = time.time()
    [u] = store.unpaid()
    [row] = list(store.rows(("hit",)))
    assert u["locked_at"] == row["recorded_at"]
    assert before - 1 <= u["locked_at"] <= after + 1
