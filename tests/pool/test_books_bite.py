"""`pool verify` and `pool reconcile` say what is wrong, row by row: each test here breaks the books
one way and asserts the exact problems the proof reports (and that it reports nothing else), so a
check that stops checking fails a test.

Two kinds of breakage: rows changed without the pool's ledger key (anyone with the database: the
row MACs and the chain find it) and rows changed by someone holding the key, or written wrong by
a writer with a bug, the chain made again (the MACs check; the board MACs, with the tables' keys,
and the replay of the meter in reconcile find it).
"""
import hashlib
import hmac
import json
import subprocess

import psycopg
import pytest

from tablectl.keys import KeyStore
from tablectl.ledger import GENESIS, row_mac
from tablectl.pool.store import mac_subject
from tablectl.pool.store import PoolStore

from poolkit import hit, make_pool, pg_server, pg_url, pool_keys  # noqa: F401 (fixtures)
from tabledev import procs

ROYAL = "As Ks Qs Js Ts"
SF = "9c 8c 7c 6c 5c"
SEED = 10000
INC = 70
EDITED = "was edited or forged (its MAC does not match its content)"


def tok(seq, seat=0, rnd=1):
    return {"q": seq, "seat": seat, "round": rnd, "ms": seq * 10, "raw": None, "mac": None}


@pytest.fixture
def store(pg_url, pool_keys):
    s = PoolStore(pg_url, pool_keys)
    make_pool(s, params={"seed_cents": SEED, "increment_cents": INC, "ceiling_cents": 10 ** 7, "reserve_cents": 0},
              members=(("T1", "caribbean_draw"), ("T2", "caribbean_stud")))
    yield s
    s.close()


def row_of(store, kind, board=None, seq=None, lock_no=None):
    for r in store.rows((kind,)):
        if (board is None or r["board"] == board) and (seq is None or r["seq"] == seq) \
                and (lock_no is None or r["body"].get("lock_no") == lock_no):
            return r["id"]
    raise AssertionError("no %s row %s #%s" % (kind, board, seq))


def last_row(store):
    return max(r["id"] for r in store.rows())


def sql(url, *statements):
    with psycopg.connect(url, autocommit=True) as conn:
        for s in statements:
            if isinstance(s, tuple):
                conn.execute(*s)
            else:
                conn.execute(s)


def rechain(store, url, edit):
    """Someone holding the pool's ledger key (or a writer with a bug): edit(id, kind, seq, body)
    returns a new body or None; then every row's MAC and the signed chain tip are made again with
    the key, so no row MAC and no link of the chain tells."""
    with psycopg.connect(url) as conn:
        rows = conn.execute("SELECT id, board, seq, kind, recorded_at, body, board_mac, pool FROM pool_ledger "
                            "ORDER BY id").fetchall()
        prev = GENESIS
        for row_id, board, seq, kind, at, body, bmac, pool in rows:
            new = edit(row_id, kind, seq, json.loads(body))
            if new is not None:
                body = json.dumps(new, sort_keys=True, separators=(",", ":"))
            h = row_mac(store.key, prev, row_id, mac_subject(pool, board), seq, kind, at, body, bmac)
            conn.execute("UPDATE pool_ledger SET body=%s, prev_hash=%s, hash=%s WHERE id=%s", (body, prev, h, row_id))
            prev = h
        tip_id = rows[-1][0]
        sig = hmac.new(store.key, ("tip:%d:%s" % (tip_id, prev)).encode(), hashlib.sha256).hexdigest()
        conn.execute("UPDATE pool_chain SET tip_id=%s, tip_hash=%s, sig=%s WHERE id=1", (tip_id, prev, sig))


def edit_one(row, **fields):
    def edit(row_id, _kind, _seq, body):
        return dict(body, **fields) if row_id == row else None
    return edit


def cli(*args, url, keys):
    return subprocess.run(procs.TABLECTL + ["pool"] + list(args) + ["--db", url, "--keys", keys],
                          capture_output=True, text=True, timeout=60)


# ------------------------------------------------------------------ verify: without the key

def test_verify_names_the_one_row_edited_in_the_database(store, pg_url, pool_keys):
    store.record_tokens([("T1", [tok(q) for q in range(1, 6)])])
    assert store.verify()[1] == []
    r = row_of(store, "token", "T1", 3)
    sql(pg_url, ("UPDATE pool_ledger SET body = replace(body, '\"inc\":70', '\"inc\":7') WHERE id=%s", (r,)))
    count, problems = store.verify()
    assert problems == ["row %d %s" % (r, EDITED)]
    assert count == last_row(store)
    out = cli("verify", url=pg_url, keys=pool_keys)
    assert out.returncode == 2, out
    assert out.stdout.splitlines() == ["PROBLEM: row %d %s" % (r, EDITED), "%d rows checked: 1 problems" % count]


def test_verify_names_a_deleted_row_and_the_row_that_no_longer_follows(store, pg_url):
    store.record_tokens([("T1", [tok(q) for q in range(1, 6)])])
    r = row_of(store, "token", "T1", 3)
    sql(pg_url, ("DELETE FROM pool_ledger WHERE id=%s", (r,)))
    assert store.verify()[1] == ["rows %d..%d missing (deleted?) before row %d" % (r, r, r + 1),
                                 "row %d does not follow the row before it (deleted, inserted or reordered)" % (r + 1)]


def test_verify_names_two_rows_swapped(store, pg_url):
    store.record_tokens([("T1", [tok(q) for q in range(1, 6)])])
    r = row_of(store, "token", "T1", 3)
    sql(pg_url, ("UPDATE pool_ledger SET id = -1 WHERE id=%s", (r,)),
        ("UPDATE pool_ledger SET id = %s WHERE id=%s", (r, r + 1)),
        ("UPDATE pool_ledger SET id = %s WHERE id=-1", (r + 1,)))
    assert store.verify()[1] == [
        "row %d does not follow the row before it (deleted, inserted or reordered)" % r,
        "row %d %s" % (r, EDITED),
        "row %d does not follow the row before it (deleted, inserted or reordered)" % (r + 1),
        "row %d %s" % (r + 1, EDITED),
        "row %d does not follow the row before it (deleted, inserted or reordered)" % (r + 2)]


def test_verify_names_a_row_added_without_the_key_and_the_tip_it_passes(store, pg_url):
    store.record_tokens([("T1", [tok(q) for q in range(1, 4)])])
    n = last_row(store)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        tip_hash = conn.execute("SELECT tip_hash FROM pool_chain").fetchone()[0]
        conn.execute("INSERT INTO pool_ledger(id, pool, board, seq, kind, recorded_at, body, prev_hash, hash) "
                     "VALUES (%s, 'floor', 'T1', 99, 'token', 1.0, '{}', %s, %s)", (n + 1, tip_hash, "f" * 64))
    assert store.verify()[1] == ["row %d %s" % (n + 1, EDITED),
                                 "the chain tip names row %d, the ledger ends at row %d" % (n, n + 1)]


def test_verify_names_an_edited_chain_tip(store, pg_url):
    store.record_tokens([("T1", [tok(q) for q in range(1, 4)])])
    sql(pg_url, "UPDATE pool_chain SET tip_id = tip_id - 1")
    assert store.verify()[1] == ["the chain tip row was edited"]


def test_verify_names_rows_cut_from_the_end_behind_an_old_chain_tip_put_back(store, pg_url):
    """The chain row as it was (signed, from a backup), the rows after it deleted: the anchor file
    beside the keys still names the newest row."""
    store.record_tokens([("T1", [tok(q) for q in range(1, 4)])])
    with psycopg.connect(pg_url, autocommit=True) as conn:
        old = conn.execute("SELECT tip_id, tip_hash, sig FROM pool_chain").fetchone()
    store.record_tokens([("T1", [tok(q) for q in range(4, 7)])])
    n = last_row(store)
    sql(pg_url, ("DELETE FROM pool_ledger WHERE id > %s", (old[0],)),
        ("UPDATE pool_chain SET tip_id=%s, tip_hash=%s, sig=%s", old))
    assert store.verify()[1] == ["rows %d..%d are missing from the end (the anchor names row %d)" % (old[0] + 1, n, n)]


def test_verify_names_an_edited_anchor(store):
    store.record_tokens([("T1", [tok(1)])])
    with open(store.anchor_path, "r+b") as f:
        data = bytearray(f.read())
        at = data.index(b'"row": ') + len(b'"row": ')
        data[at:at + 1] = b"9"
        f.seek(0)
        f.write(data)
    problems = store.verify()[1]
    assert problems == ["the anchor %s was edited" % store.anchor_path]


# ------------------------------------------------------------------ verify: the boards' MACs

def _raw(board, seq, seat, rnd):
    return json.dumps({"t": "ev", "b": board, "k": "coin", "q": seq, "seat": seat, "round": rnd, "ms": 5},
                      separators=(",", ":"))


def _signed(key, raw):
    return hmac.new(key, bytes((1, 1)) + raw.encode(), hashlib.sha256).hexdigest()


@pytest.fixture
def table_keys(tmp_path):
    keys = KeyStore(str(tmp_path / "tables"))
    keys.set_table_key("T1", b"\x07" * 32)
    keys.set_table_key("T2", b"\x09" * 32)
    return keys


def test_verify_with_the_tables_keys_names_every_token_its_board_did_not_sign(store, pg_url, pool_keys, table_keys):
    """A pool serving without --table-keys (the default today) took what it was sent: the board's
    own tokens, one whose MAC was made with another key, one whose bytes were changed after the
    board signed them. With the tables' keys, verify names the two, and only them; without them it
    cannot tell."""
    k1, k2 = b"\x07" * 32, b"\x09" * 32
    good = [{"q": q, "raw": _raw("T1", q, 0, 1), "mac": _signed(k1, _raw("T1", q, 0, 1))} for q in (1, 2)]
    forged = {"q": 3, "raw": _raw("T1", 3, 0, 1), "mac": _signed(b"\x08" * 32, _raw("T1", 3, 0, 1))}
    moved = {"q": 4, "raw": _raw("T1", 4, 5, 1), "mac": _signed(k1, _raw("T1", 4, 0, 1))}  # seat 1 -> 6
    other = {"q": 1, "raw": _raw("T2", 1, 2, 1), "mac": _signed(k2, _raw("T2", 1, 2, 1))}
    res = store.record_tokens([("T1", good + [forged, moved]), ("T2", [other])])
    assert [r["new"] for r in res] == [4, 1]
    assert store.verify()[1] == []
    problems = store.verify(table_keys)[1]
    assert problems == ["row %d: token T1 #3 was not signed by the board" % row_of(store, "token", "T1", 3),
                        "row %d: token T1 #4 was not signed by the board" % row_of(store, "token", "T1", 4)]
    # a board whose key the folder does not hold is not judged
    only_t2 = KeyStore(str(pool_keys) + ".t2")
    only_t2.set_table_key("T2", k2)
    assert store.verify(only_t2)[1] == []
    out = subprocess.run(procs.TABLECTL + ["pool", "verify", "--db", pg_url, "--keys", pool_keys,
                                           "--table-keys", table_keys.folder], capture_output=True, text=True,
                         timeout=60)
    assert out.returncode == 2, out
    assert [l for l in out.stdout.splitlines() if l.startswith("PROBLEM")] == ["PROBLEM: " + p for p in problems]


def test_verify_with_the_tables_keys_finds_a_token_rewritten_by_someone_with_the_pool_key(store, pg_url, table_keys):
    """Someone holding the pool's ledger key moves a token to another seat and makes the chain
    again: every row MAC checks; the board's MAC over the bytes it sent does not."""
    k1 = b"\x07" * 32
    store.record_tokens([("T1", [{"q": q, "raw": _raw("T1", q, 0, 1), "mac": _signed(k1, _raw("T1", q, 0, 1))}
                                 for q in (1, 2, 3)])])
    r = row_of(store, "token", "T1", 2)
    rechain(store, pg_url, edit_one(r, seat=4, raw=_raw("T1", 2, 4, 1)))
    assert store.verify()[1] == []
    assert store.verify(table_keys)[1] == ["row %d: token T1 #2 was not signed by the board" % r]
    assert store.reconcile()["ok"]  # the meter is untouched: only the board's MAC tells


# ------------------------------------------------------------------ reconcile

def _fed(store):
    store.record_tokens([("T1", [tok(q, seat=0, rnd=1) for q in range(1, 6)]),
                         ("T2", [tok(q, seat=3, rnd=2) for q in range(1, 4)])])
    hit(store, "T1", 1, 0, SF)  # 10 % of 10,560
    store.record_tokens([("T1", [tok(6, seat=1, rnd=3)])])
    hit(store, "T2", 2, 3, ROYAL)
    rec = store.reconcile()
    assert rec["ok"], rec["problems"]
    return rec


def test_reconcile_names_a_token_that_does_not_follow_the_meter_before_it(store, pg_url):
    """A token row whose meter is 5 cents high, the chain made again with the key: the row MACs
    check, the pool's totals agree (the next token's meter is right again), and only the replay of
    the meter token by token tells: that row, and the one after it."""
    _fed(store)
    r = row_of(store, "token", "T1", 3)
    meter = list(store.rows(("token",)))[2]["body"]["meter"]
    assert meter == SEED + 3 * INC
    rechain(store, pg_url, edit_one(r, meter=meter + 5))
    assert store.verify()[1] == []
    rec = store.reconcile()
    assert rec["problems"] == ["row %d: token T1 #3 does not follow the meter before it" % r,
                               "row %d: token T1 #4 does not follow the meter before it" % (r + 1)]
    assert not rec["ok"]


def test_reconcile_names_a_token_whose_parts_are_not_its_increment(store, pg_url):
    _fed(store)
    r = row_of(store, "token", "T2", 2)
    rechain(store, pg_url, edit_one(r, to_meter=INC - 10))  # 10 cents of the increment nowhere
    rec = store.reconcile()
    assert rec["problems"] == ["row %d: token T2 #2 does not follow the meter before it" % r]


def test_reconcile_names_a_hit_taken_from_a_meter_that_was_not_there(store, pg_url):
    rec = _fed(store)
    r = row_of(store, "hit", lock_no=2)
    body = next(x["body"] for x in store.rows(("hit",)) if x["id"] == r)
    rechain(store, pg_url, edit_one(r, meter_before=body["meter_before"] + 770))
    assert store.reconcile()["problems"] == ["row %d: hit 2 of T2 was taken from %d, the meter stood at %d"
                                             % (r, body["meter_before"] + 770, body["meter_before"])]
    assert rec["pools"]["floor"]["hits"] == 2


def test_reconcile_names_hits_out_of_order(store, pg_url):
    _fed(store)
    r1, r2 = row_of(store, "hit", lock_no=1), row_of(store, "hit", lock_no=2)
    rechain(store, pg_url, lambda row_id, _k, _s, body: dict(body, lock_no=3 - body["lock_no"])
            if row_id in (r1, r2) else None)
    assert store.reconcile()["problems"] == ["row %d: hit number 2 out of order (after 0)" % r1,
                                             "row %d: hit number 1 out of order (after 1)" % r2]


def test_reconcile_names_a_hit_paid_more_than_the_meter_gave(store, pg_url):
    rec = _fed(store)
    p = rec["pools"]["floor"]
    r = row_of(store, "hit", lock_no=2)
    amount = next(x["body"]["amount_cents"] for x in store.rows(("hit",)) if x["id"] == r)
    rechain(store, pg_url, edit_one(r, amount_cents=amount + 100))
    assert store.reconcile()["problems"] == [
        "pool floor: contributions %d + transfers in 0 != meter %d + overflow 0 + awards %d - seeds %d "
        "+ transfers out 0" % (p["contrib_cents"], p["meter_cents"], p["awarded_cents"] + 100, p["seeded_cents"]),
        "pool floor: awarded_cents is %d in its row, %d by its ledger" % (p["awarded_cents"], p["awarded_cents"] + 100)]


def test_reconcile_names_every_counter_of_the_pool_row_that_its_ledger_does_not_give(store, pg_url):
    rec = _fed(store)
    p = rec["pools"]["floor"]
    sql(pg_url, "UPDATE pools SET meter_cents = meter_cents + 1, over_cents = 2, contrib_cents = contrib_cents - 3, "
                "awarded_cents = awarded_cents + 4, seeded_cents = seeded_cents + 5, tokens = tokens + 6, "
                "reserve_cents = 7")
    assert store.reconcile()["problems"] == [
        "pool floor: meter_cents is %d in its row, %d by its ledger" % (p["meter_cents"] + 1, p["meter_cents"]),
        "pool floor: over_cents is 2 in its row, 0 by its ledger",
        "pool floor: contrib_cents is %d in its row, %d by its ledger" % (p["contrib_cents"] - 3, p["contrib_cents"]),
        "pool floor: awarded_cents is %d in its row, %d by its ledger" % (p["awarded_cents"] + 4, p["awarded_cents"]),
        "pool floor: seeded_cents is %d in its row, %d by its ledger" % (p["seeded_cents"] + 5, p["seeded_cents"]),
        "pool floor: tokens is %d in its row, %d by its ledger" % (p["tokens"] + 6, p["tokens"]),
        "pool floor: reserve_cents is 7 in its row, 0 by its ledger"]


def test_reconcile_names_a_tables_counters_that_its_tokens_do_not_give(store, pg_url):
    _fed(store)
    sql(pg_url, "UPDATE pool_boards SET tokens = tokens + 1, contrib_cents = contrib_cents + 70 WHERE board='T2'")
    assert store.reconcile()["problems"] == ["table T2: 4 tokens / %d cents in its row, 3 / %d by the ledger"
                                             % (4 * INC, 3 * INC)]


def test_reconcile_names_tokens_of_a_table_the_pool_no_longer_lists(store, pg_url):
    _fed(store)
    sql(pg_url, "DELETE FROM pool_boards WHERE board='T2'")
    assert store.reconcile()["problems"] == ["pool floor: the tables' contributions do not sum to the pool's"]


def test_reconcile_names_a_pool_without_its_creation_row(store, pg_url):
    _fed(store)
    sql(pg_url, "INSERT INTO pools(name, params, version, service, meter_cents, over_cents, reserve_cents) "
                "SELECT 'ghost', params, 1, TRUE, 500, 0, 0 FROM pools WHERE name = 'floor'")
    assert store.reconcile()["problems"] == ["pool ghost has no creation row"]


def test_reconcile_cli_prints_each_problem_and_exits_2(store, pg_url, pool_keys):
    _fed(store)
    r = row_of(store, "token", "T1", 3)
    meter = SEED + 3 * INC
    rechain(store, pg_url, edit_one(r, meter=meter + 5))
    out = cli("reconcile", url=pg_url, keys=pool_keys)
    assert out.returncode == 2, out
    assert [l for l in out.stdout.splitlines() if l.startswith(("PROBLEM", "reconcile:"))] == [
        "PROBLEM: row %d: token T1 #3 does not follow the meter before it" % r,
        "PROBLEM: row %d: token T1 #4 does not follow the meter before it" % (r + 1),
        "reconcile: 2 problems"]


# --- a body replaced by something that is not a record: named, never a traceback -------------------
@pytest.mark.parametrize("body", ["{not json", "null", "[]", "7"])
def test_verify_names_a_signed_row_whose_body_was_replaced_by_something_not_an_object(pg_url, pool_keys, body):
    # Someone with the database (not the key folder) replaces the key row's body: verify's report,
    # which names the edited row, must come out whole (docs/SECURITY.md).
    s = PoolStore(pg_url, pool_keys)
    make_pool(s)
    s.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE pool_ledger SET body=%s WHERE kind='admin_key'", (body,))
    out = subprocess.run(procs.TABLECTL + ["pool", "verify", "--db", pg_url, "--keys", pool_keys],
                         capture_output=True, text=True, timeout=60)
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 2 and "row 1 was edited or forged" in out.stdout, out
    assert "row 1: its body is not a record (edited or forged)" in out.stdout, out


@pytest.mark.parametrize("body", ["{not json", "null", '{"inc": 5}'])
def test_reconcile_names_a_token_row_whose_body_was_replaced(pg_url, pool_keys, body):
    s = PoolStore(pg_url, pool_keys)
    make_pool(s)
    s.record_tokens([("T1", [{"q": 1, "seat": 0, "round": 1, "ms": 0, "raw": None, "mac": None}])])
    s.close()
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE pool_ledger SET body=%s WHERE kind='token'", (body,))
    out = subprocess.run(procs.TABLECTL + ["pool", "reconcile", "--db", pg_url, "--keys", pool_keys],
                         capture_output=True, text=True, timeout=60)
    assert "Traceback" not in out.stderr, out.stderr
    assert out.returncode == 2, out
    assert "PROBLEM: row 5: its body is not a record" in out.stdout or "PROBLEM: row 5: its token lacks" in out.stdout, \
        out.stdout
    report = subprocess.run(procs.TABLECTL + ["pool", "report", "--db", pg_url, "--keys", pool_keys],
                            capture_output=True, text=True, timeout=60)
    assert "Traceback" not in report.stderr, report.stderr
