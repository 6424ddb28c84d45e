"""What the pool's books refuse, and that a refusal records nothing (host_tools/tablectl/pool/store.py
on a real PostgreSQL): signed administration out of turn or out of bounds, tokens of boards that
may not feed the pool or that do not say what they are, hits that name no pool hand or no member,
an edited chain tip, a database that goes away in the middle."""
import hashlib
import hmac
import json

import psycopg
import pytest

from tablectl.errors import TablectlError
from tablectl.keys import KeyStore
from tablectl.pool.store import PoolStore

from poolkit import (admin, hit, hit_hands, make_pool, pg_server, pg_url, pool_keys, sign,  # noqa: F401 (fixtures)
                     statement)

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


# ---------------------------------------------------------------------- hits the books refuse
def books(store):
    """What a refused hit must leave as it was: the pool's locks, meter and overflow, its rows."""
    st = store.status("floor")
    return st["hits"], st["meter_cents"], st["over_cents"], st["awarded_cents"], rows(store), store.unpaid()


def test_a_change_that_is_not_an_object_is_refused_even_signed(store):
    make_pool(store)
    before = rows(store), store.status("floor")
    version = before[1]["version"]
    for body in ([["enter", True]], "enter", None, 1, ["changes", {"increment_cents": 1}]):
        with pytest.raises(TablectlError, match="^a pool change is a JSON object$"):
            store.admin("service", "floor", body, version, sign(store, "service", "floor", body, version))
    assert (rows(store), store.status("floor")) == before


def test_a_hit_names_its_round_as_a_whole_number_and_each_hand_as_five_cards_of_one_deck(store):
    make_pool(store)
    store.record_tokens([("T1", [tok(1, seat=0), tok(2, seat=2)])])
    before = books(store)
    for rnd in ("1", 1.0, True, None):
        with pytest.raises(TablectlError, match=r"^a hit names its round \(a whole number\)$"):
            store.hit_hands("T1", rnd, [(0, ROYAL)], statement=statement("T1", 1))
    for cards, why in (("As Ks Qs Js", "progressive hand: expected 5 cards, got 4 (As Ks Qs Js)"),
                       ("As Ks Qs Js Ts 9s", "progressive hand: expected 5 cards, got 6"),
                       ("Zs Ks Qs Js Ts", "bad card 'Zs' in progressive hand"),
                       ("As As Qs Js Ts", "duplicate card As in progressive hand")):
        with pytest.raises(TablectlError) as exc:
            hit_hands(store, "T1", 1, [(2, "2d 3d 4d 5d 6d"), (0, cards)])
        assert str(exc.value).startswith("seat 1: " + why), str(exc.value)
    # one card in two hands: one of them is not what was dealt
    with pytest.raises(TablectlError, match=r"^card As is in the hands of seats 1 and 3: refused$"):
        hit_hands(store, "T1", 1, [(0, ROYAL), (2, "As 2d 3d 4d 5d")])
    with pytest.raises(TablectlError, match=r"^card 9c is in the hands of seats 3 and 1: refused$"):
        hit_hands(store, "T1", 1, [(2, "9c 8c 7c 6c 5c"), (0, "Ah Kh Qh Jh 9c")])
    assert books(store) == before


@pytest.mark.parametrize("signed", [None, {}, "text", {"q": 1}, {"raw": "{}"}, {"q": "7", "raw": "{}"},
                                    {"q": True, "raw": "{}"}, {"q": 7, "raw": b"{}"}, {"q": 7.0, "raw": "{}"}])
def test_a_hit_without_the_boards_statement_is_refused(store, signed):
    make_pool(store)
    store.record_tokens([("T1", [tok(1)])])
    before = books(store)
    with pytest.raises(TablectlError, match=r"^hit needs the board's signed state event \{q, raw, mac\}$"):
        store.hit("T1", 1, 0, ROYAL, statement=signed)
    assert books(store) == before


def test_a_statement_that_is_not_the_boards_state_event_under_its_number_is_refused(store):
    make_pool(store)
    store.record_tokens([("T1", [tok(1)])])
    before = books(store)
    with pytest.raises(TablectlError, match=r"^hit refused: the state event is not JSON$"):
        store.hit("T1", 1, 0, ROYAL, statement={"q": 9, "raw": "{not json", "mac": None})
    own = statement("T1", 1)
    for signed in (statement("T1", 1, k="coin"), statement("T2", 1), statement("T1", 1, b=None),
                   dict(own, q=own["q"] + 1), {"q": 9, "raw": "[9]", "mac": None}):
        with pytest.raises(TablectlError) as exc:
            store.hit("T1", 1, 0, ROYAL, statement=signed)
        assert str(exc.value) == "hit refused: the event is not board T1's state under number %s" % signed["q"]
    assert books(store) == before


def test_a_statement_that_is_not_the_jackpot_key_of_this_round_and_pool_is_refused(store):
    make_pool(store)
    make_pool(store, name="other", members=(("T2", "caribbean_draw"),))
    store.record_tokens([("T1", [tok(1)])])
    before = books(store)
    for signed in (statement("T1", 1, to="PLAYING"), statement("T1", 1, reason="pay key"),
                   statement("T1", 1, to="JACKPOT_PENDING", reason=None)):
        with pytest.raises(TablectlError) as exc:
            store.hit("T1", 1, 0, ROYAL, statement=signed)
        assert str(exc.value) == ("hit refused: event #%d is not the dealer's jackpot key opening JACKPOT_PENDING"
                                  % signed["q"])
    other_round = statement("T1", 2)
    with pytest.raises(TablectlError) as exc:
        store.hit("T1", 1, 0, ROYAL, statement=other_round)
    assert str(exc.value) == "hit refused: the board's statement #%d is of round 2, not round 1" % other_round["q"]
    other_pool = statement("T1", 1, pool="other")
    with pytest.raises(TablectlError) as exc:
        store.hit("T1", 1, 0, ROYAL, statement=other_pool)
    assert str(exc.value) == "hit refused: the board's statement #%d names pool other, not floor" % other_pool["q"]
    assert books(store) == before
    # a bench board's statement may name no pool (a board of before the pool was named in it)
    assert store.hit("T1", 1, 0, ROYAL, statement=statement("T1", 1, pool=None))["lock_no"] == 1


def test_a_round_is_declared_once_all_its_hands_together(store):
    make_pool(store)
    store.record_tokens([("T1", [tok(1, seat=0), tok(2, seat=1)])])
    first = statement("T1", 1)
    lock = store.hit("T1", 1, 0, ROYAL, statement=first)
    [row] = [r["id"] for r in store.rows(("declaration",))]
    before = books(store)
    for hands, signed in (([(0, ROYAL), (1, "9c 8c 7c 6c 5c")], first),   # a hand added afterwards
                          ([(1, "Ah Kh Qh Jh Th")], first),                 # another seat instead
                          ([(0, ROYAL)], statement("T1", 1, q=first["q"] + 5))):  # the same, a newer statement
        with pytest.raises(TablectlError) as exc:
            store.hit_hands("T1", 1, hands, statement=signed)
        assert str(exc.value).startswith("table T1 round 1 was declared already (ledger row %d, " % row), str(exc.value)
        assert str(exc.value).endswith("): all winning hands of a round are declared together (rulebook 000 rules "
                                       "3.2 and 9)"), str(exc.value)
    assert books(store) == before
    assert store.hit("T1", 1, 0, ROYAL, statement=first)["lock_no"] == lock["lock_no"]  # the same again: its lock


def test_a_statement_is_used_once_and_only_before_the_table_plays_on(store):
    make_pool(store)
    store.record_tokens([("T1", [tok(1, rnd=1), tok(2, rnd=2), tok(3, rnd=3)])])
    # round 2's statement came before token #3: the table has played on since, round 2 is over
    late = statement("T1", 2, q=2)
    before = books(store)
    with pytest.raises(TablectlError, match=r"^hit refused: table T1 has played on since its statement #2 "
                                            r"\(token #3\): round 2 is over$"):
        store.hit("T1", 2, 0, ROYAL, statement=late)
    assert books(store) == before
    store.hit("T1", 3, 0, ROYAL, statement=statement("T1", 3, q=9))
    before = books(store)
    # an older statement (or the one used) for another round
    for q in (9, 8):
        with pytest.raises(TablectlError, match=r"^hit refused: statement #%d is not newer than #9, used already$" % q):
            store.hit("T1", 4, 0, ROYAL, statement=statement("T1", 4, q=q))
    assert books(store) == before


def test_a_seat_the_statement_does_not_name_eligible_is_refused(store):
    make_pool(store)
    store.record_tokens([("T1", [tok(1, seat=0), tok(2, seat=3)])])
    before = books(store)
    for q, elig in enumerate((None, True, "255"), 100):  # (a q of its own: poolkit keeps one statement per value)
        with pytest.raises(TablectlError, match="^hit refused: the statement names no eligible seats$"):
            store.hit("T1", 1, 0, ROYAL, statement=statement("T1", 1, elig=elig, q=q))
    # seats 1 and 4 (bits 0 and 3) had tokens the pool holds; the statement names seat 4 only
    with pytest.raises(TablectlError, match="^table T1 seat 1 had no progressive token when round 1 locked: "
                                            "not eligible$"):
        store.hit_hands("T1", 1, [(3, "9c 8c 7c 6c 5c"), (0, ROYAL)], statement=statement("T1", 1, elig=0b1000))
    assert books(store) == before
    got = store.hit_hands("T1", 1, [(3, ROYAL)], statement=statement("T1", 1, elig=0b1000))
    assert got[0]["seat"] == 3 and got[0]["lock_no"] == 1


K1 = b"\x07" * 32


def _mac(key, raw):
    return hmac.new(key, bytes((1, 1)) + raw.encode(), hashlib.sha256).hexdigest()


def _coin(board, q, seat, rnd, key):
    raw = json.dumps({"t": "e", "b": board, "k": "coin", "q": q, "seat": seat, "round": rnd, "ms": 5},
                     separators=(",", ":"))
    return {"q": q, "raw": raw, "mac": _mac(key, raw)}


def _award(board, q, lock_no, rnd, seat, cents, key):
    raw = json.dumps({"t": "e", "b": board, "k": "award", "q": q, "lock": lock_no, "round": rnd, "seat": seat,
                      "pool_cents": cents}, separators=(",", ":"))
    return {"q": q, "raw": raw, "mac": _mac(key, raw)}


@pytest.fixture
def floor(pg_url, pool_keys, tmp_path):
    """A floor pool (not a bench): T1 keyed, T2 a member the pool holds no key for."""
    tkeys = KeyStore(str(tmp_path / "tables"))
    tkeys.set_table_key("T1", K1)
    s = PoolStore(pg_url, pool_keys, table_keys=tkeys)
    make_pool(s, members=(("T1", "caribbean_draw"), ("T2", "caribbean_draw")), bench=False)
    assert s.record_tokens([("T1", [_coin("T1", 1, 0, 1, K1)])])[0]["new"] == 1
    yield s
    s.close()


def test_a_floor_pool_locks_and_pays_only_what_the_board_signed(floor):
    before = books(floor)
    for signed in (statement("T1", 1, key=b"\x08" * 32), dict(statement("T1", 1, key=K1), mac=None),
                   dict(statement("T1", 1, key=K1), mac="00" * 32), dict(statement("T1", 1, key=K1), mac=7)):
        with pytest.raises(TablectlError) as exc:
            floor.hit("T1", 1, 0, ROYAL, statement=signed)
        assert str(exc.value) == "hit refused: the state event #%d was not signed by board T1" % signed["q"]
    # signed, but not JSON: the board's key does not make it a statement
    raw = "not json"
    with pytest.raises(TablectlError, match="^hit refused: the state event is not JSON$"):
        floor.hit("T1", 1, 0, ROYAL, statement={"q": 5, "raw": raw, "mac": _mac(K1, raw)})
    # signed, naming no pool: only a bench pool takes that
    bare = statement("T1", 1, key=K1, pool=None)
    with pytest.raises(TablectlError, match=r"^hit refused: the board's statement #%d names pool None, not floor$"
                       % bare["q"]):
        floor.hit("T1", 1, 0, ROYAL, statement=bare)
    # T2 is a member the pool holds no key for: nothing of it is locked or paid
    for act in (lambda: floor.hit("T2", 1, 0, ROYAL, statement=statement("T2", 1)),
                lambda: floor.paid("T2", _award("T2", 60, 1, 1, 0, 10070, b"\x09" * 32))):
        with pytest.raises(TablectlError, match=r"^the pool holds no table key for board T2: a floor pool pays "
                                                r"only what the board signs \(start pool serve with --table-keys "
                                                r"DIR holding table-T2.key\)$"):
            act()
    assert books(floor) == before
    lock = floor.hit("T1", 1, 0, ROYAL, statement=statement("T1", 1, key=K1))
    before = books(floor)
    forged = _award("T1", 60, lock["lock_no"], 1, 0, lock["amount_cents"], b"\x08" * 32)
    with pytest.raises(TablectlError, match="^payment refused: the award event #60 was not signed by board T1$"):
        floor.paid("T1", forged)
    assert books(floor) == before and [u["lock_no"] for u in floor.unpaid()] == [lock["lock_no"]]
    assert floor.paid("T1", _award("T1", 60, lock["lock_no"], 1, 0, lock["amount_cents"], K1))["lock_no"] == 1
    assert floor.unpaid() == []


def test_a_table_key_folder_the_pool_cannot_read_takes_nothing(pg_url, pool_keys, tmp_path):
    """The tables' keys are read for every keyed batch: a folder the pool cannot read (here a file
    where the folder should be) fails the batch; no token is taken unchecked."""
    blocker = tmp_path / "tables"
    blocker.write_text("not a folder\n")
    s = PoolStore(pg_url, pool_keys, table_keys=KeyStore(str(blocker)))
    try:
        make_pool(s, bench=False)
        for _ in range(2):  # and not once only (nothing cached from the failure)
            with pytest.raises(NotADirectoryError):
                s.record_tokens([("T1", [_coin("T1", 1, 0, 1, K1)])])
        assert s.status("floor")["tokens"] == 0 and s.verify()[1] == []
    finally:
        s.close()
