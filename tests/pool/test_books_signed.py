"""A pool lock is paid by the board's signed award, or voided by a signed act, and the books say
which (host_tools/tablectl/pool/store.py on a real PostgreSQL): each refusal with its reason, each
act once; with the tables' keys `pool verify` names every row a keyed board did not sign (a token,
a jackpot statement, an award), unsigned or signed with another key; `pool reconcile` names a void
that does not return what its lock took."""
import hashlib
import hmac
import json

import pytest

from tablectl.errors import TablectlError
from tablectl.keys import KeyStore
from tablectl.pool.store import PoolStore

from poolkit import admin, hit, make_pool, pg_server, pg_url, pool_keys, statement  # noqa: F401 (fixtures)
from test_books_bite import rechain, edit_one, row_of

ROYAL = "As Ks Qs Js Ts"
SF = "9c 8c 7c 6c 5c"
SEED = 10000
INC = 70
K1 = b"\x07" * 32


def tok(seq, seat=0, rnd=1):
    return {"q": seq, "seat": seat, "round": rnd, "ms": 0, "raw": None, "mac": None}


def award(board, q, lock_no, rnd, seat, cents, key=None, mac=None):
    raw = json.dumps({"t": "e", "b": board, "k": "award", "q": q, "lock": lock_no, "round": rnd, "seat": seat,
                      "pool_cents": cents}, separators=(",", ":"))
    if key is not None:
        mac = hmac.new(key, bytes((1, 1)) + raw.encode(), hashlib.sha256).hexdigest()
    return {"q": q, "raw": raw, "mac": mac}


@pytest.fixture
def store(pg_url, pool_keys):
    s = PoolStore(pg_url, pool_keys)
    make_pool(s, params={"seed_cents": SEED, "increment_cents": INC, "ceiling_cents": 10 ** 7, "reserve_cents": 0},
              members=(("T1", "caribbean_draw"), ("T2", "caribbean_draw")))
    s.record_tokens([("T1", [tok(q, seat=q - 1) for q in range(1, 4)]), ("T2", [tok(1, seat=0, rnd=5)])])
    yield s
    s.close()


def test_a_lock_is_paid_once_by_the_boards_award_naming_it(store):
    meter = SEED + 4 * INC
    lock = hit(store, "T1", 1, 2, ROYAL)
    assert (lock["lock_no"], lock["amount_cents"]) == (1, meter)
    assert [(u["lock_no"], u["board"], u["round"], u["seat"], u["amount_cents"]) for u in store.unpaid()] == [
        (1, "T1", 1, 2, meter)]
    for bad, why in ((award("T1", 50, 1, 1, 2, meter - 1), "payment refused: lock #1 is %d cents, the board paid %d"
                      % (meter, meter - 1)),
                     (award("T1", 50, 1, 1, 1, meter), "payment refused: lock #1 is table T1 round 1 seat 3, the "
                      "award is table T1 round 1 seat 2"),
                     (award("T1", 50, 1, 2, 2, meter), "payment refused: lock #1 is table T1 round 1 seat 3, the "
                      "award is table T1 round 2 seat 3"),
                     (award("T1", 50, 9, 1, 2, meter), "payment refused: pool floor has no lock #9")):
        with pytest.raises(TablectlError) as exc:
            store.paid("T1", bad)
        assert str(exc.value) == why
    with pytest.raises(TablectlError, match="^payment refused: lock #1 is table T1 round 1 seat 3, the award is "
                                            "table T2 round 1 seat 3$"):
        store.paid("T2", award("T2", 50, 1, 1, 2, meter))
    with pytest.raises(TablectlError, match="^board T9 is not a member of any pool$"):
        store.paid("T9", award("T9", 50, 1, 1, 2, meter))
    assert len(store.unpaid()) == 1
    got = store.paid("T1", award("T1", 50, 1, 1, 2, meter))
    assert got == {"lock_no": 1, "paid_row": row_of(store, "hit_paid")}
    assert store.paid("T1", award("T1", 50, 1, 1, 2, meter)) == dict(got, repeat=True)
    assert store.unpaid() == [] and len(list(store.rows(("hit_paid",)))) == 1
    body = list(store.rows(("hit_paid",)))[0]["body"]
    assert (body["lock_no"], body["amount_cents"], body["hit_row"]) == (1, meter, row_of(store, "hit", lock_no=1))
    # paid: it cannot be voided
    admin(store, "service", "floor", {"enter": True})
    with pytest.raises(TablectlError, match=r"^lock #1 was paid by the board \(ledger row %d\): it cannot be voided$"
                       % got["paid_row"]):
        admin(store, "void", "floor", {"lock_no": 1, "reason": "test"})
    rec = store.reconcile()
    assert rec["ok"], rec["problems"]
    assert rec["pools"]["floor"]["awarded_cents"] == meter


def test_a_lock_never_paid_is_voided_by_a_signed_act_and_its_amount_goes_back(store):
    meter = SEED + 4 * INC
    hit(store, "T1", 1, 2, ROYAL)
    store.record_tokens([("T2", [tok(2, seat=1, rnd=6)])])
    sf = hit(store, "T2", 6, 1, SF)
    assert (sf["lock_no"], sf["meter_before"], sf["amount_cents"]) == (2, SEED + INC, (SEED + INC) // 10)
    for body, why in (({"lock_no": 1}, "void takes lock_no (a whole number) and a reason"),
                      ({"lock_no": "1", "reason": "x"}, "void takes lock_no (a whole number) and a reason"),
                      ({"lock_no": 1, "reason": "  "}, "void takes lock_no (a whole number) and a reason"),
                      ({"lock_no": 9, "reason": "x"}, "pool floor has no lock #9")):
        with pytest.raises(TablectlError) as exc:
            admin(store, "void", "floor", body)
        assert str(exc.value) == why
    st = admin(store, "void", "floor", {"lock_no": 1, "reason": "the board died before paying"})
    # the royal's meter back, on top of what the straight flush left: the seed it added taken out
    left = SEED + INC - (SEED + INC) // 10
    assert (st["meter_cents"], st["awarded_cents"], st["seeded_cents"]) == (
        left + meter - SEED, (SEED + INC) // 10, SEED)
    void_row = row_of(store, "hit_void")
    with pytest.raises(TablectlError, match=r"^lock #1 was voided already \(ledger row %d\)$" % void_row):
        admin(store, "void", "floor", {"lock_no": 1, "reason": "again"})
    with pytest.raises(TablectlError, match=r"^payment refused: lock #1 was voided \(ledger row %d\)$" % void_row):
        store.paid("T1", award("T1", 50, 1, 1, 2, meter))
    assert [u["lock_no"] for u in store.unpaid()] == [2]
    rec = store.reconcile()
    assert rec["ok"], rec["problems"]
    assert store.verify()[1] == []


def test_a_void_that_would_take_back_a_seed_given_away_since_is_refused_until_the_lock_after_it_is_voided(store):
    """A royal that took less than the seed it put back on the meter: voiding it takes the
    difference off the meter again. If a later royal has taken that meter away (and the pool's
    seed is now 0), the cents are in nobody's pool: the void is refused, nothing moves, until the
    later lock is voided first and its meter is back."""
    meter = SEED + 4 * INC
    sf = hit(store, "T1", 1, 0, SF)                      # lock 1: the meter goes under the seed
    royal = hit(store, "T2", 5, 0, ROYAL)                # lock 2: takes less than the seed it adds back
    assert (sf["lock_no"], royal["lock_no"], royal["amount_cents"], royal["seed_added"]) == (
        1, 2, meter - meter // 10, SEED)
    admin(store, "service", "floor", {"enter": True})
    admin(store, "params", "floor", {"changes": {"seed_cents": 0}})
    store.record_tokens([("T1", [tok(4, seat=0, rnd=2)])])
    last = hit(store, "T1", 2, 0, ROYAL)                 # lock 3: takes that seed; the meter restarts at 0
    assert (last["lock_no"], last["meter_after"], last["over_after"]) == (3, 0, 0)
    before = store.status("floor"), len(list(store.rows())), store.unpaid()
    with pytest.raises(TablectlError, match=r"^lock #2 cannot be voided: the overflow it took back is gone$"):
        admin(store, "void", "floor", {"lock_no": 2, "reason": "the board died before paying"})
    after = store.status("floor")
    assert (after["meter_cents"], after["over_cents"], after["awarded_cents"]) == (
        before[0]["meter_cents"], before[0]["over_cents"], before[0]["awarded_cents"])
    assert (len(list(store.rows())), store.unpaid()) == before[1:]
    admin(store, "void", "floor", {"lock_no": 3, "reason": "voided first: the meter it took goes back"})
    st = admin(store, "void", "floor", {"lock_no": 2, "reason": "the board died before paying"})
    assert (st["meter_cents"], st["over_cents"]) == (meter - meter // 10 + INC, 0)
    assert [u["lock_no"] for u in store.unpaid()] == [1]
    rec = store.reconcile()
    assert rec["ok"], rec["problems"]


def test_reconcile_names_a_void_that_does_not_return_its_lock(store, pg_url):
    hit(store, "T1", 1, 2, ROYAL)
    st = admin(store, "void", "floor", {"lock_no": 1, "reason": "never paid"})
    r = row_of(store, "hit_void")
    to_meter = list(store.rows(("hit_void",)))[0]["body"]["to_meter"]
    rechain(store, pg_url, edit_one(r, to_meter=to_meter + 5))
    assert store.verify()[1] == []
    assert store.reconcile()["problems"] == [
        "row %d: void of lock 1 does not return its amount" % r,
        "pool floor: contributions %d + transfers in 0 != meter %d + overflow 0 + awards 0 - seeds %d "
        "+ transfers out 0" % (4 * INC, st["meter_cents"] + 5, SEED),
        "pool floor: meter_cents is %d in its row, %d by its ledger" % (st["meter_cents"], st["meter_cents"] + 5)]


def test_verify_with_the_tables_keys_names_each_row_a_keyed_board_did_not_sign(store, pool_keys, tmp_path):
    """A bench pool (no table keys) took T1's unsigned tokens, its statement signed with another
    key and an award without a MAC; T1 is a keyed board in the tables' folder: each row is named,
    T2's (no key there) are not."""
    store.record_tokens([("T1", [tok(q, seat=0, rnd=2) for q in (4, 5)])])
    lock = store.hit("T1", 2, 0, ROYAL, statement=statement("T1", 2, key=b"\x08" * 32))
    store.paid("T1", award("T1", 10 ** 7, lock["lock_no"], 2, 0, lock["amount_cents"]))
    tables = KeyStore(str(tmp_path / "tables"))
    tables.set_table_key("T1", K1)
    unsigned = ["row %d: token T1 #%d of keyed board T1 carries no board MAC (unsigned)"
                % (row_of(store, "token", "T1", q), q) for q in (1, 2, 3, 4, 5)]
    decl = row_of(store, "declaration", "T1")
    paid = row_of(store, "hit_paid", "T1")
    assert store.verify()[1] == []
    assert store.verify(tables)[1] == unsigned + [
        "row %d: declaration T1 #%d was not signed by the board" % (decl, statement("T1", 2, key=b"\x08" * 32)["q"]),
        "row %d: hit_paid T1 #%d of keyed board T1 carries no board MAC (unsigned)" % (paid, 10 ** 7)]


def test_verify_with_the_tables_keys_passes_what_the_board_signed(pg_url, pool_keys, tmp_path):
    tables = KeyStore(str(tmp_path / "tables"))
    tables.set_table_key("T1", K1)
    s = PoolStore(pg_url, pool_keys, table_keys=tables)
    try:
        make_pool(s, params={"seed_cents": SEED, "increment_cents": INC, "ceiling_cents": 10 ** 7}, bench=False)
        raw = json.dumps({"t": "e", "b": "T1", "k": "coin", "q": 1, "seat": 0, "round": 3}, separators=(",", ":"))
        mac = hmac.new(K1, bytes((1, 1)) + raw.encode(), hashlib.sha256).hexdigest()
        assert s.record_tokens([("T1", [{"q": 1, "raw": raw, "mac": mac}])])[0]["new"] == 1
        lock = s.hit("T1", 3, 0, ROYAL, statement=statement("T1", 3, key=K1))
        s.paid("T1", award("T1", 2 * 10 ** 7, lock["lock_no"], 3, 0, lock["amount_cents"], key=K1))
        assert s.verify(tables)[1] == []
        assert s.unpaid() == [] and s.reconcile()["ok"]
    finally:
        s.close()
