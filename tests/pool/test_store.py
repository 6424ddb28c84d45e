"""The pool's books on a real PostgreSQL (docs/POOL.md): every token raises the common meter exactly
once, hits are paid in the order the pool locked them, parameters change only in service mode,
signed, and the books prove themselves.

Rulebook 000, rule 3.1: "Multiple Caribbean Stud Poker games and/or Caribbean Draw Poker games may be
linked together with a common progressive jackpot."
"""
import threading

import psycopg
import pytest

from tablectl.errors import TablectlError
from tablectl.pool import engine
from tablectl.pool.store import PoolStore, admin_signature

from poolkit import admin, hit, hit_hands, make_pool, pg_server, pg_url, pool_keys, sign  # noqa: F401 (fixtures)

ROYAL = "As Ks Qs Js Ts"
ROYAL2 = "Ah Kh Qh Jh Th"
SF = "9c 8c 7c 6c 5c"


def tok(seq, seat=0, rnd=1):
    return {"q": seq, "seat": seat, "round": rnd, "ms": seq * 10, "raw": None, "mac": None}


@pytest.fixture
def store(pg_url, pool_keys):
    s = PoolStore(pg_url, pool_keys)
    yield s
    s.close()


def test_tokens_from_every_member_table_raise_one_meter(store):
    make_pool(store, members=(("T1", "caribbean_draw"), ("T2", "caribbean_draw"), ("T3", "caribbean_stud")))
    res = store.record_tokens([("T1", [tok(1), tok(2)]), ("T2", [tok(5)]), ("T3", [tok(9)])])
    assert [r["new"] for r in res] == [2, 1, 1]
    st = store.status("floor")
    assert st["meter_cents"] == 10000 + 4 * 70
    assert st["reserve_cents"] == 4 * 5
    assert {t["board"]: t["tokens"] for t in st["tables"]} == {"T1": 2, "T2": 1, "T3": 1}


def test_a_token_is_counted_once_by_board_and_sequence_number(store):
    make_pool(store)
    store.record_tokens([("T1", [tok(1), tok(2)])])
    again = store.record_tokens([("T1", [tok(2), tok(2), tok(1), tok(3)])])[0]
    assert (again["new"], again["dup"], again["last_seq"]) == (1, 3, 3)
    assert store.status("floor")["tokens"] == 3
    assert store.token_seqs("T1") == [1, 2, 3]


def test_concurrent_writers_never_lose_or_double_a_token(pg_url, pool_keys):
    """Four connections commit overlapping batches at once: the meter row lock serialises them."""
    first = PoolStore(pg_url, pool_keys)
    make_pool(first, members=[("T%d" % i, "caribbean_draw") for i in range(4)])
    errors = []

    def feed(i):
        s = PoolStore(pg_url, pool_keys)
        try:
            for start in range(1, 200, 10):
                # every batch sent twice: the second is all duplicates
                for _ in range(2):
                    s.record_tokens([("T%d" % i, [tok(q) for q in range(start, start + 10)]),
                                     ("T%d" % ((i + 1) % 4), [tok(q) for q in range(start, start + 10)])])
        except Exception as exc:  # noqa: reported below
            errors.append(exc)
        finally:
            s.close()
    threads = [threading.Thread(target=feed, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    st = first.status("floor")
    assert st["tokens"] == 4 * 200
    assert st["meter_cents"] == 10000 + 4 * 200 * 70
    rec = first.reconcile()
    assert rec["ok"], rec["problems"]
    assert first.verify() == (first.verify()[0], [])
    first.close()


def test_overflow_above_the_ceiling_and_back_after_a_royal(store):
    make_pool(store, params={"seed_cents": 1000, "increment_cents": 70, "ceiling_cents": 1100})
    store.record_tokens([("T1", [tok(q) for q in range(1, 4)])])  # 1070, 1100, 1100 (+70 over +40 over)
    st = store.status("floor")
    assert (st["meter_cents"], st["over_cents"]) == (1100, 110)
    got = hit(store, "T1", 1, 0, ROYAL)
    assert (got["amount_cents"], got["meter_after"], got["over_after"]) == (1100, 1100, 10)
    assert store.reconcile()["ok"]


def test_two_hits_are_paid_in_lock_order_each_from_the_meter_the_one_before_left(store):
    """The linked pool's rule: "two hits from different tables are paid in the order the pool received their
    locks, each from the meter the previous one left, with the order and the times on record"."""
    make_pool(store, members=(("T1", "caribbean_draw"), ("T2", "caribbean_stud")))
    store.record_tokens([("T1", [tok(q) for q in range(1, 10)] + [tok(10, seat=0, rnd=7)]),
                         ("T2", [tok(3, seat=2, rnd=4)])])
    first = hit(store, "T2", 4, 2, ROYAL, received_at=100.0)
    second = hit(store, "T1", 7, 0, ROYAL2, received_at=100.02)
    assert (first["lock_no"], second["lock_no"]) == (1, 2)
    assert first["amount_cents"] == 10000 + 11 * 70
    assert second["meter_before"] == first["meter_after"] == 10000
    assert second["amount_cents"] == 10000  # the reset meter
    hits = store.hits("floor")
    assert [(h["board"], h["lock_no"]) for h in hits] == [("T2", 1), ("T1", 2)]
    assert all(h["locked_at"] >= h["received_at"] for h in hits)
    rec = store.reconcile()
    assert rec["ok"], rec["problems"]
    assert rec["pools"]["floor"]["awarded_cents"] == 10770 + 10000


def test_a_hit_repeated_returns_the_first_lock_and_takes_nothing(store):
    make_pool(store)
    store.record_tokens([("T1", [tok(1, seat=3)])])
    a = hit(store, "T1", 1, 3, ROYAL)
    b = hit(store, "T1", 1, 3, ROYAL)
    assert b["repeat"] and b["lock_no"] == a["lock_no"] and b["amount_cents"] == a["amount_cents"]
    assert store.status("floor")["hits"] == 1


def test_straight_flush_takes_ten_percent_rounded_down_without_reset(store):
    """Rulebook 000 rule 9.3: "Straight flush pays either 10% of the displayed progressive jackpot or
    pays $5,000"."""
    make_pool(store, params={"seed_cents": 10005, "increment_cents": 70, "ceiling_cents": 10 ** 7})
    store.record_tokens([("T1", [tok(1)])])
    h = hit(store, "T1", 1, 0, SF)
    assert (h["amount_cents"], h["reset"], h["meter_after"]) == (1007, False, 9068)
    store.record_tokens([("T1", [tok(2, seat=1, rnd=2)])])
    quads = hit(store, "T1", 2, 1, "As Ad Ac Ah 2s")  # a fixed award: the table's house pays it
    assert quads["pool_hand"] is False and store.status("floor")["hits"] == 1


def test_only_a_seat_whose_token_of_that_round_the_pool_holds_can_hit(store):
    """Rulebook 000 rule 3.1: "A player wins a progressive jackpot award if the player has made the
    optional wager and holds a hand having a value of flush or better"."""
    make_pool(store)
    store.record_tokens([("T1", [tok(1, seat=0, rnd=5)])])
    for rnd, seat in ((5, 1), (4, 0), (6, 0)):
        with pytest.raises(TablectlError, match="not eligible"):
            hit(store, "T1", rnd, seat, ROYAL)
    assert store.status("floor")["hits"] == 0
    assert hit(store, "T1", 5, 0, ROYAL)["lock_no"] == 1


def test_parameters_change_only_in_service_mode_signed_and_logged(store):
    make_pool(store)
    with pytest.raises(TablectlError, match="not in service mode"):
        admin(store, "params", "floor", {"changes": {"increment_cents": 80}})
    admin(store, "service", "floor", {"enter": True})
    version = store.status("floor")["version"]
    body = {"changes": {"increment_cents": 80}}
    with pytest.raises(TablectlError, match="not signed"):
        store.admin("params", "floor", body, version, admin_signature(b"x" * 32, "params", "floor", body, version))
    sig = sign(store, "params", "floor", body, version)
    store.admin("params", "floor", body, version, sig)
    with pytest.raises(TablectlError, match="version"):  # the same signed change, played again
        store.admin("params", "floor", body, version, sig)
    admin(store, "service", "floor", {"enter": False})
    store.record_tokens([("T1", [tok(1)])])
    assert store.status("floor")["meter_cents"] == 10000 + 80
    logged = [r for r in store.rows(("admin_params",))]
    assert logged[0]["body"]["body"]["old"]["increment_cents"] == 70
    assert logged[0]["body"]["sig"] == sig


def test_bad_parameters_are_refused_with_the_reason(store):
    with pytest.raises(TablectlError, match="seed_cents 5000 is above ceiling_cents 100"):
        admin(store, "create", "p", {"params": {"seed_cents": 5000, "ceiling_cents": 100}})
    with pytest.raises(TablectlError, match="no pool parameter 'inc'"):
        admin(store, "create", "p", {"params": {"inc": 1}})
    with pytest.raises(TablectlError, match="whole number"):
        admin(store, "create", "p", {"params": {"increment_cents": 0.5}})
    assert store.pools() == []


def test_tokens_of_a_board_not_in_the_pool_are_refused_not_counted(store):
    make_pool(store)
    res = store.record_tokens([("X9", [tok(1)]), ("T1", [tok(1)])])
    assert "not a member" in res[0]
    assert res[1]["new"] == 1
    assert store.status("floor")["tokens"] == 1


def test_an_edited_row_or_meter_is_found(store, pg_url):
    make_pool(store)
    store.record_tokens([("T1", [tok(q) for q in range(1, 6)])])
    assert store.verify()[1] == []
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE pool_ledger SET body = replace(body, '\"inc\":70', '\"inc\":7') WHERE seq=3")
        conn.execute("UPDATE pools SET meter_cents = meter_cents + 500")
    problems = store.verify()[1]
    assert any("row" in p and "edited" in p for p in problems)
    rec = store.reconcile()
    assert not rec["ok"]
    assert any("meter_cents" in p for p in rec["problems"])


def test_rows_cut_from_the_end_are_missing_against_the_anchor(store, pg_url):
    make_pool(store)
    store.record_tokens([("T1", [tok(q) for q in range(1, 6)])])
    with psycopg.connect(pg_url, autocommit=True) as conn:
        tip = conn.execute("SELECT tip_id, tip_hash, sig FROM pool_chain").fetchone()
        conn.execute("DELETE FROM pool_ledger WHERE id > %s", (tip[0] - 2,))
    assert any("missing from the end" in p or "chain tip" in p for p in store.verify()[1])


def test_engine_credit_and_hit_are_whole_cents():
    p = engine.check_params({"seed_cents": 100, "increment_cents": 3, "ceiling_cents": 101})
    assert engine.credit(100, p) == (1, 2, 0)
    assert engine.hit(101, 7, p, engine.ROYAL) == {"amount_cents": 101, "reset": True, "seed_added": 100,
                                                    "meter_after": 101, "over_after": 6, "split": 1}


def test_a_token_is_taken_from_the_boards_signed_bytes_and_a_forged_one_is_refused(pg_url, pool_keys, tmp_path):
    """A keyed board's token is taken only with the board's MAC over its exact bytes (the table
    ledger's rule, docs/SECURITY.md); seat and round come from those bytes."""
    import hashlib
    import hmac
    import json

    from tablectl.keys import KeyStore
    tkeys = KeyStore(str(tmp_path / "tables"))
    key = b"\x07" * 32
    tkeys.set_table_key("T1", key)
    store = PoolStore(pg_url, pool_keys, table_keys=tkeys)
    make_pool(store)

    def signed(seq, seat, rnd, k=key):
        raw = json.dumps({"t": "ev", "b": "T1", "k": "coin", "q": seq, "seat": seat, "round": rnd, "ms": 5},
                         separators=(",", ":"))
        return {"q": seq, "seat": 7, "round": 99, "raw": raw,
                "mac": hmac.new(k, bytes((1, 1)) + raw.encode(), hashlib.sha256).hexdigest()}
    assert store.record_tokens([("T1", [signed(1, 2, 3)])])[0]["new"] == 1
    body = list(store.rows(("token",)))[0]["body"]
    assert (body["seat"], body["round"]) == (2, 3)  # from the signed bytes, not the fields beside them
    forged = signed(2, 0, 3, k=b"\x08" * 32)
    assert "not signed by the board" in store.record_tokens([("T1", [forged])])[0]
    unsigned = dict(signed(3, 0, 3), mac=None)
    assert "not signed" in store.record_tokens([("T1", [unsigned])])[0]
    other = signed(4, 0, 3)
    other["q"] = 5  # the bytes say #4
    assert "not that board's coin" in store.record_tokens([("T1", [other])])[0]
    assert store.status("floor")["tokens"] == 1
    store.close()


def test_royals_in_one_hand_at_one_table_divide_the_meter_and_no_cent_is_lost(store):
    """Rulebook 000 rule 3.2: "In the event that two or more players qualified to receive progressive
    jackpot payments hold royal flushes in the same hand, the royal flush progressive jackpot may
    be divided equally between or among the qualified players." The cents that do not divide stay
    on the meter, above the seed."""
    make_pool(store, params={"seed_cents": 10000, "increment_cents": 70, "ceiling_cents": 10 ** 7})
    store.record_tokens([("T1", [tok(1, seat=0), tok(2, seat=2), tok(3, seat=5), tok(4, seat=6)])])
    store.record_tokens([("T1", [tok(5, seat=1)])])  # the meter: 10000 + 5 * 70 = 10350
    got = hit_hands(store, "T1", 1, [(5, "Ah Kh Qh Jh Th"), (1, "9c 8c 7c 6c 5c"), (2, ROYAL),
                                    (6, "Ad Kd Qd Jd Td")])
    by_seat = {h["seat"]: h for h in got}
    royals = [by_seat[s] for s in (2, 5, 6)]
    assert [h["amount_cents"] for h in royals] == [3450, 3450, 3450]
    assert [h["lock_no"] for h in royals] == [1, 2, 3]  # left to right
    assert royals[-1]["meter_after"] == 10000 + 0 and royals[-1]["reset"]
    sf = by_seat[1]
    assert sf["lock_no"] == 4 and sf["meter_before"] == 10000 and sf["amount_cents"] == 1000
    rec = store.reconcile()
    assert rec["ok"], rec["problems"]


def test_a_split_that_does_not_divide_leaves_the_odd_cents_on_the_meter(store):
    make_pool(store, params={"seed_cents": 10001, "increment_cents": 70, "ceiling_cents": 10 ** 7})
    store.record_tokens([("T1", [tok(1, seat=0), tok(2, seat=1)])])  # 10141
    a, b = hit_hands(store, "T1", 1, [(0, ROYAL), (1, ROYAL2)])
    assert (a["amount_cents"], b["amount_cents"]) == (5070, 5070)
    assert b["meter_after"] == 10001 + 1
    assert store.reconcile()["ok"]
    again = hit_hands(store, "T1", 1, [(1, ROYAL2), (0, ROYAL)])
    assert all(h["repeat"] for h in again) and store.status("floor")["hits"] == 2


def test_verify_names_the_unsigned_rows_of_a_keyed_board(pg_url, pool_keys, tmp_path):
    """docs/POOL.md, board MACs by default: `pool verify --table-keys` names every row of a keyed board
    that carries no board MAC (here taken by a bench pool before the board was keyed)."""
    from tablectl.keys import KeyStore
    table_keys = KeyStore(str(tmp_path / "table.keys"))
    store = PoolStore(pg_url, pool_keys, table_keys=table_keys)
    try:
        make_pool(store)
        store.record_tokens([("T1", [tok(1), tok(2)])])
        count, problems = store.verify(table_keys)
        assert problems == []  # an unkeyed board's rows are what a bench pool takes
        table_keys.set_table_key("T1", b"k" * 32)
        count, problems = store.verify(table_keys)
        rows_of = {r["seq"]: r["id"] for r in store.rows(("token",))}
        assert [p for p in problems if "carries no board MAC" in p] == [
            "row %d: token T1 #%d of keyed board T1 carries no board MAC (unsigned)" % (rows_of[seq], seq)
            for seq in (1, 2)], problems
        # and a keyed board's unsigned token is no longer taken at all
        assert "carries no signed event" in store.record_tokens([("T1", [tok(3)])])[0]
    finally:
        store.close()


def test_a_floor_pool_takes_nothing_unsigned_and_never_becomes_a_bench(store):
    """A pool created for the floor refuses every token its boards did not sign, and `bench` is fixed
    at creation (a floor pool made a bench pool would take forged tokens)."""
    make_pool(store, bench=False)
    assert "no table key for board T1" in store.record_tokens([("T1", [tok(1)])])[0]
    admin(store, "service", "floor", {"enter": True})
    with pytest.raises(TablectlError, match="when it is created, never after"):
        admin(store, "params", "floor", {"changes": {"bench": 1}})
    assert store.status("floor")["tokens"] == 0


def test_two_resends_of_one_board_in_one_group_commit_are_duplicates_not_a_rollback(store):
    """Two batches of one board with the same numbers in one transaction (its resend arrived while
    the first was waiting): before, the unique index rolled back every table's batch."""
    make_pool(store, members=(("T1", "caribbean_draw"), ("T2", "caribbean_draw")))
    res = store.record_tokens([("T1", [tok(1), tok(2)]), ("T1", [tok(2), tok(3)]), ("T2", [tok(7)])])
    assert [(r["new"], r["dup"]) for r in res] == [(2, 0), (1, 1), (1, 0)]
    assert store.status("floor")["tokens"] == 4
    assert store.reconcile()["ok"]


def test_a_row_moved_to_another_pool_is_named_by_verify(store, pg_url):
    """A row's MAC covers its pool: someone with only the database cannot move a token (or a hit)
    from one pool's books to another's unseen."""
    make_pool(store)
    store.record_tokens([("T1", [tok(1)])])
    with psycopg.connect(pg_url, autocommit=True) as conn:
        row = conn.execute("SELECT id FROM pool_ledger WHERE kind='token'").fetchone()[0]
        conn.execute("UPDATE pool_ledger SET pool='elsewhere' WHERE id=%s", (row,))
    assert "row %d was edited or forged (its MAC does not match its content)" % row in store.verify()[1]
