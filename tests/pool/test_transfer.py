"""Discontinuing a jackpot: `tablectl pool transfer`.

Rulebook 000 rule 3.4: "A retail licensee may not discontinue offering a Caribbean Draw jackpot
until the highest progressive jackpot award has been won by a qualified player or players. If a
licensee wishes to discontinue offering a progressive jackpot award, the licensee may petition the
Director for permission to either reduce the qualifications or criteria for winning the award,
allowing the award to be paid more quickly, or to transfer the award liability to the jackpot
offered by a different game. If a retail licensee intends to close its business while having a
progressive jackpot award liability, the licensee may petition the Director for permission to
transfer the award liability, together with the award fund, to another retail licensee offering a
comparable jackpot award."

So a pool's meter never just disappears: its whole liability (meter + overflow) and its fund (the
reserve) move, signed, to another game's pool in the same books (a transfer_out row and a
transfer_in row in one transaction) or to a named licensee; the pool is then discontinued, and
reconcile proves both sides."""
import json
import subprocess

import psycopg
import pytest
from poolkit import admin, make_pool, pg_server, pg_url, pool_keys, sign, statement  # noqa: F401 (fixtures)

from tabledev import procs
from tablectl.errors import TablectlError
from tablectl.pool.store import PoolStore

ROYAL = "As Ks Qs Js Ts"
REASON = "Director's permission 2026-114: Caribbean Draw withdrawn"


def tok(seq, seat=0, rnd=1):
    return {"q": seq, "seat": seat, "round": rnd, "ms": seq * 10, "raw": None, "mac": None}


@pytest.fixture
def store(pg_url, pool_keys):
    s = PoolStore(pg_url, pool_keys)
    yield s
    s.close()


def two_pools(store, draw_ceiling=10000000):
    """`draw` (Caribbean Draw, tables D1 D2) with tokens, a royal and overflow; `stud` (table S1)."""
    make_pool(store, "draw", params={"seed_cents": 10000, "increment_cents": 70, "ceiling_cents": 10500,
                                     "reserve_cents": 5},
              members=(("D1", "caribbean_draw"), ("D2", "caribbean_draw")))
    make_pool(store, "stud", params={"seed_cents": 20000, "increment_cents": 50, "ceiling_cents": draw_ceiling,
                                     "reserve_cents": 3},
              members=(("S1", "caribbean_stud"),))
    store.record_tokens([("D1", [tok(q, rnd=q) for q in range(1, 6)]), ("D2", [tok(q, seat=2) for q in range(1, 4)]),
                         ("S1", [tok(q) for q in range(1, 5)])])
    lock_and_pay(store, "draw", "D1", 3, 0, ROYAL)
    store.record_tokens([("D1", [tok(q, rnd=q) for q in range(6, 16)])])  # past the ceiling: overflow
    d = store.status("draw")
    assert d["over_cents"] > 0 and d["reserve_cents"] > 0
    return d, store.status("stud")


def lock_and_pay(store, pool, board, round_no, seat, cards):
    """A royal declared with the board's statement, locked, and paid by the board's award event."""
    hit = store.hit(board, round_no, seat, cards, statement=statement(board, round_no, pool=pool))
    raw = json.dumps({"t": "e", "b": board, "k": "award", "q": 900000 + hit["lock_no"], "lock": hit["lock_no"],
                      "round": round_no, "seat": seat, "pool_cents": hit["amount_cents"]}, separators=(",", ":"))
    store.paid(board, {"q": 900000 + hit["lock_no"], "raw": raw, "mac": None})
    return hit


def ledger_rows(store, kinds):
    return list(store.rows(kinds))


def test_a_transfer_moves_the_whole_liability_to_another_game_and_reconciles_on_both(store):
    draw, stud = two_pools(store)
    admin(store, "service", "draw", {"enter": True})
    liability = draw["meter_cents"] + draw["over_cents"]
    admin(store, "transfer", "draw", {"to": "stud", "reason": REASON})
    d, s = store.status("draw"), store.status("stud")
    assert (d["meter_cents"], d["over_cents"], d["reserve_cents"]) == (0, 0, 0)
    assert s["meter_cents"] == stud["meter_cents"] + liability and s["over_cents"] == 0
    assert s["reserve_cents"] == stud["reserve_cents"] + draw["reserve_cents"]
    out, = ledger_rows(store, ("transfer_out",))
    into, = ledger_rows(store, ("transfer_in",))
    assert (out["pool"], into["pool"], into["id"]) == ("draw", "stud", out["id"] + 1)  # one transaction
    assert out["body"]["amount_cents"] == liability + draw["reserve_cents"] == into["body"]["amount_cents"]
    assert out["body"]["reason"] == REASON and into["body"]["out_row"] == out["id"]
    rec = store.reconcile()
    assert rec["ok"], rec["problems"]
    assert rec["pools"]["draw"]["transfer_out_cents"] == liability
    assert rec["pools"]["stud"]["transfer_in_cents"] == liability
    assert store.verify() == (store.verify()[0], [])
    # The discontinued pool takes no token, no hit and no change, and says where its fund went.
    where = "pool draw was discontinued (rulebook 000 rule 3.4): its fund of $%d.%02d went to pool stud (ledger row %d)" \
        % (divmod(liability + draw["reserve_cents"], 100) + (out["id"],))
    res = store.record_tokens([("D1", [tok(40, rnd=40)]), ("S1", [tok(5)])])
    assert isinstance(res[0], str) and where in res[0], res
    assert res[1]["new"] == 1  # the other game's table in the same batch is not held up
    with pytest.raises(TablectlError, match="went to pool stud"):
        store.hit("D1", 14, 0, ROYAL, statement=statement("D1", 14, pool="draw"))
    for op, body in (("member", {"board": "D1", "game": "caribbean_draw"}), ("service", {"enter": False}),
                     ("transfer", {"to": "stud", "reason": REASON}), ("params", {"changes": {"seed_cents": 1}})):
        with pytest.raises(TablectlError, match="went to pool stud"):
            admin(store, op, "draw", body)
    assert store.status("draw")["discontinued"] == where
    assert store.reconcile()["ok"]


def test_a_liability_past_the_other_games_ceiling_goes_to_its_overflow(store):
    draw, stud = two_pools(store, draw_ceiling=20500)
    admin(store, "service", "draw", {"enter": True})
    admin(store, "transfer", "draw", {"to": "stud", "reason": REASON})
    s = store.status("stud")
    liability = draw["meter_cents"] + draw["over_cents"]
    assert s["meter_cents"] == 20500 and s["over_cents"] == stud["meter_cents"] + liability - 20500
    assert store.reconcile()["ok"]


def test_a_transfer_to_another_licensee_leaves_the_books_recorded(store):
    draw, _ = two_pools(store)
    admin(store, "service", "draw", {"enter": True})
    admin(store, "transfer", "draw", {"licensee": "Golden Mile Casino, Black Hawk (licence 44-1021)",
                                      "reason": REASON})
    out, = ledger_rows(store, ("transfer_out",))
    assert out["body"]["to_licensee"].startswith("Golden Mile") and out["body"]["to_pool"] is None
    assert out["body"]["amount_cents"] == draw["meter_cents"] + draw["over_cents"] + draw["reserve_cents"]
    assert not ledger_rows(store, ("transfer_in",))
    rec = store.reconcile()
    assert rec["ok"], rec["problems"]
    assert "went to licensee Golden Mile" in store.status("draw")["discontinued"]
    res = store.record_tokens([("D2", [tok(9, seat=2)])])
    assert "went to licensee Golden Mile" in res[0]


def test_a_transfer_is_refused_unless_signed_in_service_mode_with_one_destination_and_a_reason(store):
    two_pools(store)
    with pytest.raises(TablectlError, match="not in service mode"):
        admin(store, "transfer", "draw", {"to": "stud", "reason": REASON})
    admin(store, "service", "draw", {"enter": True})
    for body, why in (({"reason": REASON}, "one destination"),
                      ({"to": "stud", "licensee": "X", "reason": REASON}, "one destination"),
                      ({"to": "stud"}, "reason must be printable text"),
                      ({"to": "stud", "reason": " "}, "reason must be printable text"),
                      ({"to": "stud", "reason": "ok\nforged line"}, "reason must be printable text"),
                      ({"licensee": "", "reason": REASON}, "licensee must be printable"),
                      ({"to": "draw", "reason": REASON}, "to itself"),
                      ({"to": "nowhere", "reason": REASON}, "no pool named")):
        with pytest.raises(TablectlError, match=why):
            admin(store, "transfer", "draw", body)
    make_pool(store, "floorpool", members=(("F1", "caribbean_draw"),), bench=False)
    with pytest.raises(TablectlError, match="a floor's liability goes only to a floor pool"):
        admin(store, "transfer", "draw", {"to": "floorpool", "reason": REASON})
    body = {"to": "stud", "reason": REASON}
    version = store.status("draw")["version"]
    with pytest.raises(TablectlError, match="not signed"):  # signed for another destination
        store.admin("transfer", "draw", body, version, sign(store, "transfer", "draw", {"licensee": "X",
                                                                                        "reason": REASON}, version))
    sig = sign(store, "transfer", "draw", body, version)
    store.admin("transfer", "draw", body, version, sig)
    with pytest.raises(TablectlError, match="version|discontinued"):
        store.admin("transfer", "draw", body, version, sig)  # played again
    assert len(ledger_rows(store, ("transfer_out",))) == 1
    # Nothing goes into a discontinued pool either.
    make_pool(store, "third", members=(("T3", "caribbean_draw"),))
    admin(store, "service", "third", {"enter": True})
    with pytest.raises(TablectlError, match="pool draw was discontinued"):
        admin(store, "transfer", "third", {"to": "draw", "reason": REASON})
    assert store.reconcile()["ok"]


def test_a_licensee_is_named_in_at_most_200_characters_and_the_reason_in_500(store):
    """The limits the books keep a transfer's words to (a row the commission reads, not a dump): at
    the limit taken, one past it refused before anything moves."""
    two_pools(store)
    admin(store, "service", "draw", {"enter": True})
    for body, why in (({"licensee": "L" * 201, "reason": REASON}, "licensee must be printable text of 1 to 200"),
                      ({"licensee": "L", "reason": "R" * 501}, "reason must be printable text of 1 to 500")):
        with pytest.raises(TablectlError, match=why):
            admin(store, "transfer", "draw", body)
    assert ledger_rows(store, ("transfer_out",)) == []
    admin(store, "transfer", "draw", {"licensee": "L" * 200, "reason": "R" * 500})
    assert ledger_rows(store, ("transfer_out",))[0]["body"]["to_licensee"] == "L" * 200


def test_an_unpaid_lock_is_paid_or_voided_before_the_fund_moves(store):
    two_pools(store)
    store.record_tokens([("D2", [tok(20, seat=2, rnd=20)])])
    lock = store.hit("D2", 20, 2, ROYAL, statement=statement("D2", 20, pool="draw"))
    admin(store, "service", "draw", {"enter": True})
    with pytest.raises(TablectlError, match="unpaid locks #%d" % lock["lock_no"]):
        admin(store, "transfer", "draw", {"to": "stud", "reason": REASON})
    admin(store, "void", "draw", {"lock_no": lock["lock_no"], "reason": "the hand was misread"})
    admin(store, "transfer", "draw", {"to": "stud", "reason": REASON})
    rec = store.reconcile()
    assert rec["ok"], rec["problems"]
    assert store.verify()[1] == []


def doctor(store, sql, *args):
    with psycopg.connect(store.url, autocommit=True) as conn:
        conn.execute(sql, args)


def test_a_doctored_transfer_in_row_is_caught(store):
    """Someone with the database takes 1,000 cents off the liability that arrived, and the
    destination's meter with it, so the pool's row and its ledger still agree."""
    two_pools(store)
    admin(store, "service", "draw", {"enter": True})
    admin(store, "transfer", "draw", {"to": "stud", "reason": REASON})
    into, = ledger_rows(store, ("transfer_in",))
    b = dict(into["body"])
    for k in ("liability_cents", "amount_cents", "to_meter", "meter_after"):
        b[k] -= 1000
    doctor(store, "UPDATE pool_ledger SET body=%s WHERE id=%s", json.dumps(b, sort_keys=True), into["id"])
    doctor(store, "UPDATE pools SET meter_cents = meter_cents - 1000 WHERE name='stud'")
    rec = store.reconcile()
    assert not rec["ok"]
    assert any("row %d: transfer into pool stud" % into["id"] in p and "does not match a transfer out of pool draw"
               in p for p in rec["problems"]), rec["problems"]
    assert "row %d was edited or forged (its MAC does not match its content)" % into["id"] in store.verify()[1]


def test_a_doctored_transfer_out_row_is_caught(store):
    """The source's row says less left it than the pool held (the rest quietly kept), with the
    destination's row and meter made to agree: reconcile replays the pool and names it."""
    draw, _ = two_pools(store)
    admin(store, "service", "draw", {"enter": True})
    admin(store, "transfer", "draw", {"to": "stud", "reason": REASON})
    out, = ledger_rows(store, ("transfer_out",))
    into, = ledger_rows(store, ("transfer_in",))
    bo, bi = dict(out["body"]), dict(into["body"])
    bo["meter_cents"] -= 500
    bo["liability_cents"] -= 500
    bo["amount_cents"] -= 500
    for k in ("liability_cents", "amount_cents", "to_meter", "meter_after"):
        bi[k] -= 500
    doctor(store, "UPDATE pool_ledger SET body=%s WHERE id=%s", json.dumps(bo, sort_keys=True), out["id"])
    doctor(store, "UPDATE pool_ledger SET body=%s WHERE id=%s", json.dumps(bi, sort_keys=True), into["id"])
    doctor(store, "UPDATE pools SET meter_cents = meter_cents - 500 WHERE name='stud'")
    problems = store.reconcile()["problems"]
    assert "row %d: transfer out of pool draw moved meter %d + overflow %d + reserve %d, the pool held %d + %d + %d" % (
        out["id"], draw["meter_cents"] - 500, draw["over_cents"], draw["reserve_cents"], draw["meter_cents"],
        draw["over_cents"], draw["reserve_cents"]) in problems, problems
    assert any(p.startswith("pool draw: contributions ") and "+ transfers out %d" % (
        draw["meter_cents"] + draw["over_cents"] - 500) in p for p in problems), problems
    # verify's signature check names it too: the signed transfer is the row's own record.
    _, vproblems = store.verify()
    assert "row %d was edited or forged (its MAC does not match its content)" % out["id"] in vproblems


def test_a_transfer_whose_arrival_is_deleted_or_a_pool_reopened_is_caught(store):
    two_pools(store)
    admin(store, "service", "draw", {"enter": True})
    admin(store, "transfer", "draw", {"to": "stud", "reason": REASON})
    out, = ledger_rows(store, ("transfer_out",))
    into, = ledger_rows(store, ("transfer_in",))
    doctor(store, "DELETE FROM pool_ledger WHERE id=%s", into["id"])
    doctor(store, "UPDATE pools SET meter_cents=%s, over_cents=0, reserve_cents=reserve_cents-%s WHERE name='stud'",
           into["body"]["meter_before"], into["body"]["reserve_cents"])
    doctor(store, "UPDATE pools SET discontinued=NULL WHERE name='draw'")
    problems = store.reconcile()["problems"]
    assert "row %d: pool draw's transfer out of %d to pool stud has no transfer in: the liability left the books" % (
        out["id"], out["body"]["liability_cents"]) in problems, problems
    assert "pool draw is open in its row, discontinued (row %d) by its ledger" % out["id"] in problems, problems


def test_a_token_written_into_a_discontinued_pool_past_its_refusal_is_named_by_reconcile(store):
    """The pool server's account holds the ledger key: it can write a token row for a discontinued
    pool that chains and checks (verify passes it), past the refusal every table meets. The
    liability left with the transfer: reconcile names the row."""
    two_pools(store)
    admin(store, "service", "draw", {"enter": True})
    admin(store, "transfer", "draw", {"licensee": "Harbour Casino", "reason": REASON})
    out, = ledger_rows(store, ("transfer_out",))

    def forge(tip, rows):
        return store._row(rows, tip, "draw", "D1", 40, "token",
                          {"inc": 70, "to_meter": 70, "to_over": 0, "reserve": 5, "meter": 70, "seat": 0,
                           "round": 40, "board_ms": 0, "raw": None}), None
    store._transaction(forge)
    forged = ledger_rows(store, ("token",))[-1]
    assert store.verify()[1] == []
    problems = store.reconcile()["problems"]
    assert problems[0] == "row %d: a token of pool draw after it was discontinued (row %d)" % (forged["id"], out["id"])


def test_the_cli_transfers_signed_and_reports_it(pg_url, tmp_path):
    import os
    keys = str(tmp_path / "k")
    env = dict(os.environ, TABLECTL_POOL_ADMIN_KEY=str(tmp_path / "admin" / "pool-admin.key"))

    def pool(*args):
        return subprocess.run(procs.TABLECTL + ["pool"] + list(args) + ["--db", pg_url, "--keys", keys],
                              capture_output=True, text=True, timeout=60, env=env)
    assert pool("admin-key", "--new").returncode == 0
    for args in (("create", "a", "seed_cents=10000"), ("create", "b", "seed_cents=20000"),
                 ("member", "a", "--board", "T1", "--game", "caribbean_draw")):
        assert pool(*args).returncode == 0
    out = pool("transfer", "a", "--to", "b", "--reason", REASON)
    assert out.returncode == 0, out
    assert "DISCONTINUED: pool a was discontinued (rulebook 000 rule 3.4): its fund of $100.00 went to pool b" \
        in out.stdout, out.stdout
    out = pool("reconcile")
    assert out.returncode == 0 and "transfers: in $0.00, out $100.00" in out.stdout \
        and "transfers: in $100.00, out $0.00" in out.stdout, out.stdout
    out = pool("transfer", "b", "--reason", REASON)
    assert out.returncode == 1 and "one of the arguments --to --to-licensee is required" in out.stderr, out
    out = pool("service", "b", "--leave")
    assert out.returncode == 0
    out = pool("transfer", "b", "--to-licensee", "Golden Mile", "--reason", REASON)
    assert out.returncode == 1 and out.stderr.count("\n") == 1 and "not in service mode" in out.stderr, out
    out = pool("verify")
    assert out.returncode == 0 and "OK" in out.stdout, out


def test_on_a_real_floor_the_fund_moves_and_the_discontinued_tables_stop(tmp_path, pg_server, pg_url):
    """The real services: provisioned boards (`tablectl sim`), their `tablectl serve --pool`,
    `tablectl pool serve`, and the administrator's signed `tablectl pool transfer` as a process of
    its own. After it, a coin at a table of the discontinued pool is refused by the pool, naming
    where the fund went, and the table inhibits progressive coin-in (POOL OFF)."""
    import os

    from tabledev.floor import Floor
    f = Floor(str(tmp_path / "floor"), tables=(("cd-1", "caribbean_draw"),), pg=pg_server,
              params={"seed_cents": 100000, "increment_cents": 70}, lost_s=2.0, url=pg_url)  # books of its own
    f.start()
    try:
        bench = f.bench("cd-1")
        bench.coins({0: 1, 1: 1})
        before = f.wait_tokens(2)

        def pool(*args):
            out = subprocess.run(procs.TABLECTL + ["pool"] + list(args) + ["--db", f.db_url, "--keys", f.keys,
                                                                           "--admin-key", f.admin_key],
                                 capture_output=True, text=True, timeout=60)
            assert out.returncode == 0, out
            return out.stdout
        pool("create", "stud-jackpot", "seed_cents=50000")
        pool("service", "floor", "--enter")
        out = pool("transfer", "floor", "--to", "stud-jackpot", "--reason", REASON)
        assert "DISCONTINUED" in out, out
        store = f.store()
        try:
            assert store.status("stud-jackpot")["meter_cents"] == 50000 + before["meter_cents"] + before["over_cents"]
            rec = store.reconcile()
            assert rec["ok"], rec["problems"]
            assert rec["pools"]["floor"]["transfer_out_cents"] == before["meter_cents"] + before["over_cents"]
        finally:
            store.close()
        bench.coins({2: 1})
        bench.wait_for(lambda out, _: out["display"].strip() == "POOL OFF", 30, "POOL OFF")
        assert all(bench.inhibit())
        log = open(os.path.join(f.folder, "cd-1.serve.log")).read()
        assert "went to pool stud-jackpot" in log, log[-2000:]
        assert f.status()["tokens"] == 2
        out = subprocess.run(procs.TABLECTL + ["pool", "verify", "--db", f.db_url, "--keys", f.keys, "--table-keys",
                                               f.table_keys, "--admin-key", f.admin_key],
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0 and "OK" in out.stdout, out
    finally:
        f.stop()


def test_a_transfer_in_row_whose_meter_after_is_not_the_meter_plus_what_it_added_is_caught(store):
    """Only the arrival's meter_after is doctored (its meter before and its parts agree): the
    replay of the destination's meter names the row."""
    two_pools(store)
    admin(store, "service", "draw", {"enter": True})
    admin(store, "transfer", "draw", {"to": "stud", "reason": REASON})
    into, = ledger_rows(store, ("transfer_in",))
    b = dict(into["body"])
    b["meter_after"] += 1000
    doctor(store, "UPDATE pool_ledger SET body=%s WHERE id=%s", json.dumps(b, sort_keys=True), into["id"])
    rec = store.reconcile()
    assert "row %d: transfer into pool stud does not follow its meter (%d before it)" % (
        into["id"], b["meter_before"]) in rec["problems"], rec["problems"]
