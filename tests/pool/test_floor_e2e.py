"""The linked pool, end to end: three virtual boards (two Caribbean Draw, one Caribbean Stud) on one pool
through the real services (`tablectl sim`, `tablectl serve --pool`, `tablectl pool serve`) and a
real PostgreSQL.

Rulebook 000, rule 3.1: "Multiple Caribbean Stud Poker games and/or Caribbean Draw Poker games may be
linked together with a common progressive jackpot." Rule 9.3: "Royal flush pays 100% of the
displayed progressive jackpot"."""
import json
import subprocess
import threading

import pytest

from poolkit import pg_server, pg_url  # noqa: F401 (fixtures)

from tabledev import procs
from tabledev.floor import Floor

SEED = 1000000


def _money(c):
    return "%d.%02d" % divmod(c, 100)


@pytest.fixture
def floor(tmp_path, pg_server):
    # The default lost window: with 3 s a loaded machine's slow answer (the table waits a third of it)
    # turned a table POOL OFF while its tokens were dropped, and the acceptor refused them.
    f = Floor(str(tmp_path / "floor"), pg=pg_server, params={"seed_cents": SEED, "increment_cents": 70}, lost_s=10.0)
    f.start()
    try:
        yield f
    finally:
        f.stop()


def test_three_tables_one_meter_two_royals_in_order_and_the_floor_reconciles(floor):
    benches = {b: floor.bench(b) for b, _ in floor.tables}
    # Tokens at every table raise the one meter.
    benches["cd-1"].coins({0: 1, 1: 1, 2: 1})
    benches["cd-2"].coins({0: 1, 3: 1})
    benches["stud-1"].coins({5: 1})
    st = floor.wait_tokens(6)
    assert st["meter_cents"] == SEED + 6 * 70
    assert {t["board"]: t["tokens"] for t in st["tables"]} == {"cd-1": 3, "cd-2": 2, "stud-1": 1}
    # Every linked display shows the pool's amount, not its own meter.
    for b, bench in benches.items():
        bench.wait_for(lambda out, _: out["display"].strip() == _money(SEED + 6 * 70), 10,
                       "%s showing the pool's amount" % b)

    # Both tables lock and the dealers turn the jackpot key (physical presence) ...
    for b in ("cd-1", "stud-1"):
        benches[b].key("lock")
        benches[b].key("jackpot")
    socks = {b: floor.control(b) for b in ("cd-1", "stud-1")}
    for b in socks:  # the table services see JACKPOT_PENDING before the hits are sent
        status = Floor.ask(socks[b], {"op": "command", "cmd": "status", "args": {}, "board": b})["reply"]
        assert status["base"] == "JACKPOT_PENDING", status
    # ... and two royals are declared at two tables at the same moment (well within 50 ms).
    replies = {}
    go = threading.Barrier(2)

    def declare(board, seat, cards):
        go.wait()
        replies[board] = Floor.ask(socks[board], {"op": "pool_hit", "board": board, "seat": seat, "cards": cards})
    threads = [threading.Thread(target=declare, args=("cd-1", 2, "As Ks Qs Js Ts")),
               threading.Thread(target=declare, args=("stud-1", 6, "Ah Kh Qh Jh Th"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    hits = sorted((r["hit"] for r in replies.values()), key=lambda h: h["lock_no"])
    assert [h["lock_no"] for h in hits] == [1, 2]
    # The two declarations leave together (a barrier); the pool pays in the order it received them.
    assert hits[0]["received_at"] <= hits[1]["received_at"]
    assert hits[0]["amount_cents"] == SEED + 6 * 70
    assert hits[1]["meter_before"] == hits[0]["meter_after"] == SEED  # the second from the reset meter
    assert hits[1]["amount_cents"] == SEED
    recorded = floor.store().hits("floor")
    assert [(h["board"], h["lock_no"], h["amount_cents"]) for h in recorded] == \
        [(h["board"], h["lock_no"], h["amount_cents"]) for h in hits]
    # All linked displays show the new amount (the seed again).
    for b, bench in benches.items():
        if b == "cd-2":
            bench.wait_for(lambda out, _: out["display"].strip() == _money(SEED), 10, "%s showing the reset" % b)
    # The same hand declared again through the CLI is the first lock, not a second payment.
    again = subprocess.run(procs.TABLECTL + ["pool", "hit", "--table-db", floor.ledger("cd-1"), "--seat", "2",
                                             "--cards", "As Ks Qs Js Ts", "--json"],
                           capture_output=True, text=True, timeout=60)
    assert again.returncode == 0, again.stderr
    repeat = json.loads(again.stdout)[0]
    assert repeat["repeat"] and repeat["lock_no"] == replies["cd-1"]["hit"]["lock_no"]
    rec = floor.reconcile()
    assert rec["ok"], rec["problems"]
    assert rec["pools"]["floor"]["awarded_cents"] == 2 * SEED + 6 * 70
    out = subprocess.run(procs.TABLECTL + ["pool", "reconcile", "--db", floor.db_url, "--keys", floor.keys]
                         + sum([["--ledger", floor.ledger(b)] for b, _ in floor.tables], []),
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "reconcile: OK" in out.stdout
    for s in socks.values():
        s.close()


def test_a_table_that_loses_the_pool_stops_taking_tokens_and_replays_its_journal_on_return(tmp_path, pg_server,
                                                                                         pg_url):
    """The linked pool's rule: "If a table loses the pool for longer than a configured time it inhibits
    progressive coin-in and shows it ...; on return it replays its journal and resumes"."""
    f = Floor(str(tmp_path / "floor"), tables=(("cd-9", "caribbean_draw"),), pg=pg_server,
              params={"seed_cents": SEED, "increment_cents": 70}, lost_s=2.0, url=pg_url)
    f.start()
    try:
        bench = f.bench("cd-9")
        bench.coins({0: 1})
        f.wait_tokens(1)
        f.stop_pool()
        bench.coins({1: 1, 2: 1})  # counted by the board and its ledger while the pool is away
        bench.wait_for(lambda out, _: out["display"].strip() == "POOL OFF", 30, "POOL OFF")
        assert all(bench.inhibit())
        f.start_pool()
        bench.wait_for(lambda out, _: out["display"].strip() == _money(SEED + 3 * 70), 30, "the pool's amount")
        assert not bench.inhibit()[3]
        rec = f.reconcile()
        assert rec["ok"], rec["problems"]
        assert rec["pools"]["floor"]["tokens"] == 3
    finally:
        f.stop()
