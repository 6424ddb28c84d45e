"""What the pool's books refuse, and that a refusal records nothing (host_tools/tablectl/pool/store.py
on a real PostgreSQL): signed administration out of turn or out of bounds, tokens of boards that
may not feed the pool or that do not say what they are, hits that name no pool hand or no member,
an edited chain tip, a database that goes away in the middle."""
import json

import psycopg
import pytest

from tablectl.errors import TablectlError
from tablectl.keys import KeyStore
from tablectl.pool.store import PoolStore

from poolkit import admin, hit, hit_hands, make_pool, pg_server, pg_url, pool_keys, sign  # noqa: F401 (fixtures)

ROYAL = "As Ks Qs Js Ts"


def tok(seq, seat=0, rnd=1, **kw):
    return dict({"q": seq, "seat": seat, "round": rnd, "ms": 0, "raw": None, "mac": None}, **kw)


@pytest.fixture
def store(pg_url, pool_keys):
    s = PoolStore(pg_url, pool_keys)
    yield s
    s.close()


def rows(store):
    return len(list(store.rows()))


def test_administration_out_of_turn_or_bounds_is_refused_and_records_nothing(store):
    make_pool(store)
    before = rows(store)
    st = store.status("floor")
    body = {"params": {}}
    with pytest.raises(TablectlError, match="^a new pool starts at parameter version 0$"):
        store.admin("create", "p2", body, 3, sign(store, "create", "p2", body, 3))
    with pytest.raises(TablectlError, match="^pool floor exists already$"):
        admin(store, "create", "floor", body)
    with pytest.raises(TablectlError, match="^service takes enter: true or false$"):
        admin(store, "service", "floor", {"enter": "yes"})
    with pytest.raises(TablectlError, match="not in service mode"):
        admin(store, "member", "floor", {"board": "T9", "game": "caribbean_draw"})
    admin(store, "service", "floor", {"enter": True})
    before = rows(store)
    for bad in ({}, {"changes": {}}, {"changes": [1]}):
        with pytest.raises(TablectlError, match=r"^params takes changes: \{name: whole number\}$"):
            admin(store, "params", "floor", bad)
    # the meter is 10,000 (its seed): a ceiling under it is refused
    with pytest.raises(TablectlError, match="^ceiling_cents 9999 is below the pool's meter 10000$"):
        admin(store, "params", "floor", {"changes": {"ceiling_cents": 9999, "seed_cents": 9999}})
    for bad in ({"game": "caribbean_draw"}, {"board": "", "game": "caribbean_draw"},
                {"board": "x" * 65, "game": "caribbean_draw"}, {"board": 7, "game": "caribbean_draw"}):
        with pytest.raises(TablectlError, match="^member needs a board id$"):
            admin(store, "member", "floor", bad)
    with pytest.raises(TablectlError, match=r"^game must be one of caribbean_draw, caribbean_stud \(rulebook 000"):
        admin(store, "member", "floor", {"board": "T9", "game": "blackjack"})
    with pytest.raises(TablectlError, match="^unknown pool change 'drain'$"):
        admin(store, "drain", "floor", {})
    sig = sign(store, "service", "nope", {"enter": True}, 1)
    with pytest.raises(TablectlError, match="^no pool named 'nope'$"):
        store.admin("service", "nope", {"enter": True}, 1, sig)
    assert rows(store) == before
    assert store.status("floor")["version"] == st["version"] + 1
    # the boundary itself is allowed: a ceiling at the meter, a board id of 64 characters
    admin(store, "params", "floor", {"changes": {"ceiling_cents": 10000}})
    admin(store, "member", "floor", {"board": "B" * 64, "game": "caribbean_stud"})
    assert rows(store) == before + 2


def test_a_board_feeds_one_pool_and_a_member_can_be_stopped_and_started_again(store):
    make_pool(store)
    make_pool(store, name="other", members=())
    admin(store, "service", "other", {"enter": True})
    with pytest.raises(TablectlError, match="^board T1 feeds pool floor already$"):
        admin(store, "member", "other", {"board": "T1", "game": "caribbean_draw"})
    admin(store, "service", "floor", {"enter": True})
    admin(store, "member", "floor", {"board": "T1", "game": "caribbean_stud", "active": False})
    admin(store, "service", "floor", {"enter": False})
    t = store.status("floor")["tables"][0]
    assert (t["board"], t["game"], t["active"]) == ("T1", "caribbean_stud", False)
    res = store.record_tokens([("T1", [tok(1)])])
    assert res == ["board T1 is not an active member of pool floor"]
    with pytest.raises(TablectlError, match="^board T1 is not an active member of a pool$"):
        hit(store, "T1", 1, 0, ROYAL)
    with pytest.raises(TablectlError, match="^board T7 is not an active member of a pool$"):
        hit(store, "T7", 1, 0, ROYAL)
    admin(store, "service", "floor", {"enter": True})
    admin(store, "member", "floor", {"board": "T1", "game": "caribbean_stud"})
    admin(store, "service", "floor", {"enter": False})
    assert store.record_tokens([("T1", [tok(1)])])[0]["new"] == 1
    assert store.status("floor")["tables"][0]["active"] is True


def test_without_the_administrator_key_nothing_changes(pg_url, tmp_path):
    s = PoolStore(pg_url, str(tmp_path / "nokeys"))
    try:
        with pytest.raises(TablectlError, match="^no administrator public key: .*nokeys has no admin.pub"):
            s.admin("create", "floor", {"params": {}}, 0, "0" * 64)
        assert s.pools() == []
    finally:
        s.close()


def test_a_boards_batches_in_one_commit_are_counted_together(store):
    """(Two batches of one board that overlap, in one commit: test_store.py, resends in one group
    commit.)"""
    make_pool(store, members=(("T1", "caribbean_draw"), ("T2", "caribbean_draw")))
    res = store.record_tokens([("T1", [tok(1), tok(2)]), ("T2", [tok(1)]), ("T1", [tok(3), tok(4)])])
    assert [(r["new"], r["dup"]) for r in res] == [(2, 0), (1, 0), (2, 0)]
    st = store.status("floor")
    assert {t["board"]: (t["tokens"], t["last_seq"]) for t in st["tables"]} == {"T1": (4, 4), "T2": (1, 1)}
    assert store.reconcile()["ok"]


def test_tokens_that_do_not_say_what_they_are_are_refused(store, tmp_path):
    make_pool(store)
    assert store.record_tokens([("T1", [tok(1, raw="{not json")])]) == ["token T1 #1: its event is not JSON"]
    for ev in ([1], {"q": 2, "k": "coin"}, {"q": 1, "b": "T2", "k": "coin"}, {"q": 1, "b": "T1", "k": "award"}):
        assert store.record_tokens([("T1", [tok(1, raw=json.dumps(ev))])]) == [
            "token T1 #1: its event is not that board's coin under that number"]
    assert store.status("floor")["tokens"] == 0
    # a board with no id in its bytes (b absent) is taken as the batch's board
    assert store.record_tokens([("T1", [tok(1, raw=json.dumps({"q": 1, "k": "coin", "seat": 4, "round": 2}))])
                                ])[0]["new"] == 1
    body = list(store.rows(("token",)))[0]["body"]
    assert (body["seat"], body["round"]) == (4, 2)


def test_a_keyed_boards_token_without_its_signed_event_is_refused(pg_url, pool_keys, tmp_path):
    tkeys = KeyStore(str(tmp_path / "tables"))
    tkeys.set_table_key("T1", b"\x07" * 32)
    s = PoolStore(pg_url, pool_keys, table_keys=tkeys)
    try:
        make_pool(s, members=(("T1", "caribbean_draw"), ("T2", "caribbean_draw")))
        assert s.record_tokens([("T1", [tok(1)]), ("T2", [tok(1)])])[0] == \
            "token T1 #1 carries no signed event of keyed board T1"
        assert s.status("floor")["tokens"] == 1  # T2 has no key: taken
    finally:
        s.close()


def test_a_hit_names_one_to_eight_different_seats(store):
    make_pool(store)
    store.record_tokens([("T1", [tok(1)])])
    for hands in ([], [(s, ROYAL) for s in range(9)], [(0, ROYAL), (0, ROYAL)], ((0, ROYAL),)):
        with pytest.raises(TablectlError, match="^a hit names 1 to 8 different seats$"):
            hit_hands(store, "T1", 1, hands)
    assert store.status("floor")["hits"] == 0
    assert len(hit_hands(store, "T1", 1, [(0, ROYAL)])) == 1


def test_an_edited_chain_tip_stops_every_write(store, pg_url):
    make_pool(store)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE pool_chain SET tip_hash = repeat('0', 64)")
    with pytest.raises(TablectlError, match=r"^the pool's chain tip was edited \(its signature does not match\): "
                                            r"run `tablectl pool verify`; nothing was recorded$"):
        store.record_tokens([("T1", [tok(1)])])
    assert store.status("floor")["tokens"] == 0


def test_a_database_error_rolls_the_batch_back_and_a_lost_connection_says_so(store, pg_url):
    make_pool(store)
    before = rows(store)
    with pytest.raises(psycopg.Error):
        store.record_tokens([("T1", [tok(1)]), ("T1", [tok("x")])])
    assert store.status("floor")["tokens"] == 0 and rows(store) == before
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() "
                     "AND pid <> pg_backend_pid()")
    with pytest.raises(ConnectionError, match="^pool database connection lost: "):
        store.record_tokens([("T1", [tok(1)])])
    store.reconnect()
    assert store.record_tokens([("T1", [tok(1)])])[0]["new"] == 1
    store.close()
    store.close()  # twice: nothing left to close


def test_a_store_without_an_anchor_writes_and_checks_none(pg_url, pool_keys):
    s = PoolStore(pg_url, pool_keys, anchor=False)
    try:
        make_pool(s)
        s.record_tokens([("T1", [tok(1)])])
        assert s.anchor_path is None
        assert s.verify()[1] == []
    finally:
        s.close()
    s = PoolStore(pg_url, pool_keys)
    try:
        assert not __import__("os").path.exists(s.anchor_path)
        assert s.verify()[1] == []  # no anchor file yet: nothing to compare
    finally:
        s.close()


def test_an_anchor_slot_that_is_not_a_record_is_passed_over(store):
    make_pool(store)
    store.record_tokens([("T1", [tok(1)])])  # row 5: slot 1; row 4 in slot 0
    with open(store.anchor_path, "r+b") as f:
        f.write(b"\x00garbage".ljust(255) + b"\n")
    assert store.verify()[1] == []
    with open(store.anchor_path, "r+b") as f:
        f.write(json.dumps({"row": 4}).encode().ljust(255) + b"\n")
    assert store.verify()[1] == []
