"""Two pool writers on one PostgreSQL database: a failover whose old primary's service is still up,
or a second `tablectl pool serve`, makes them. Each hit is priced from the meter as the pool holds
it when the hit's transaction takes the chain (docs/POOL.md: "hits are numbered in the order their
transactions took the meter row, each from the meter the one before left"), never from a meter
read before that: a second table's royal paid from an older reading pays money the first royal
already took.

The interleaving is forced, not hoped for: a third connection holds the chain row (the row every
writer takes FOR UPDATE first, store.py), each writer is started only once the one before it is
seen waiting on a lock (pg_stat_activity), and the chain is then let go. The first writer queued
is granted the row first. Behind it PostgreSQL keeps the order only for one more waiter: the first
writer updates the row, and the writers still waiting then race for its new version (the old
version's tuple lock is let go as each finds the row updated), so with three writers the second
and third may be granted either way round. The tests assert what must hold in any grant order.
Whatever a writer read before the chain lock is then older than the commits of the writers
granted ahead of it.
"""
import json
import subprocess
import threading
import time

import psycopg
import pytest

from tablectl.pool.store import PoolStore

from poolkit import hit, make_pool, pg_server, pg_url, pool_keys, statement  # noqa: F401 (fixtures)
from tabledev import procs

ROYAL = "As Ks Qs Js Ts"
ROYAL2 = "Ah Kh Qh Jh Th"
SF = "9c 8c 7c 6c 5c"
SEED = 10000
INC = 70
RESERVE = 5
MEMBERS = (("T1", "caribbean_draw"), ("T2", "caribbean_stud"), ("T3", "caribbean_draw"))


def tok(seq, seat=0, rnd=1):
    return {"q": seq, "seat": seat, "round": rnd, "ms": seq * 10, "raw": None, "mac": None}


def lock_waiters(conn):
    return conn.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() "
                        "AND wait_event_type = 'Lock'").fetchone()[0]


class Chain:
    """The chain row held by a connection of its own; writers queue behind it one at a time."""

    def __init__(self, url):
        self.url = url
        self.watch = psycopg.connect(url, autocommit=True)
        self.holder = None
        self.threads = []

    def hold(self):
        self.holder = psycopg.connect(self.url)
        self.holder.execute("SELECT tip_id FROM pool_chain WHERE id=1 FOR UPDATE")
        self.threads = []

    def queue(self, fn, timeout_s=20):
        """Run fn in a thread and return once it waits behind the held chain (or whoever is
        ahead of it): its slot in the queue is then fixed. fn's result or exception is kept."""
        waiting = lock_waiters(self.watch)
        box = {}

        def run():
            try:
                box["result"] = fn()
            except BaseException as exc:  # noqa: re-raised by results()
                box["error"] = exc
        t = threading.Thread(target=run, daemon=True)
        t.start()
        self.threads.append((t, box))
        deadline = time.monotonic() + timeout_s
        while lock_waiters(self.watch) <= waiting:
            assert t.is_alive(), "the writer finished without waiting for the chain: %r" % box
            assert time.monotonic() < deadline, "the writer never queued for the chain"
            time.sleep(0.01)

    def release(self, timeout_s=30):
        self.holder.rollback()
        self.holder.close()
        out = []
        for t, box in self.threads:
            t.join(timeout_s)
            assert not t.is_alive(), "a writer still waits after the chain was let go"
            if "error" in box:
                raise box["error"]
            out.append(box["result"])
        return out

    def close(self):
        if self.holder is not None and not self.holder.closed:
            self.holder.close()
        self.watch.close()


@pytest.fixture
def floor(pg_url, pool_keys):
    """A pool of three tables, the meter at SEED + 13 tokens; T2 round 4 seat 3 and T1 round 7
    seat 1 hold royals' tokens, T1 round 8 seat 2 a straight flush's."""
    setup = PoolStore(pg_url, pool_keys)
    make_pool(setup, params={"seed_cents": SEED, "increment_cents": INC, "ceiling_cents": 10 ** 7,
                             "reserve_cents": RESERVE}, members=MEMBERS)
    setup.record_tokens([("T1", [tok(q) for q in range(1, 10)] + [tok(10, seat=0, rnd=7), tok(11, seat=1, rnd=8)]),
                         ("T2", [tok(3, seat=2, rnd=4), tok(4, seat=5, rnd=4)])])
    assert setup.status("floor")["meter_cents"] == SEED + 13 * INC
    yield setup
    setup.close()


def test_two_writers_price_each_hit_from_the_meter_the_one_before_left(floor, pg_url, pool_keys):
    """Two PoolStore connections: a royal at T2 and one at T1 queued together, then a token
    batch and a straight flush queued together, then the same board's tokens sent by both
    (a table that resends to the other server after a failover)."""
    a = PoolStore(pg_url, pool_keys)
    b = PoolStore(pg_url, pool_keys)
    chain = Chain(pg_url)
    try:
        meter = SEED + 13 * INC  # 10,910
        chain.hold()
        chain.queue(lambda: hit(a, "T2", 4, 2, ROYAL))
        chain.queue(lambda: hit(b, "T1", 7, 0, ROYAL2))
        first, second = chain.release()
        assert (first["lock_no"], first["amount_cents"], first["meter_before"]) == (1, meter, meter)
        # the second royal gets what the first left: the reset meter, not the 10,910 it could
        # have read before it queued
        assert (second["lock_no"], second["meter_before"], second["amount_cents"]) == (2, SEED, SEED)
        assert second["meter_after"] == SEED

        chain.hold()
        chain.queue(lambda: a.record_tokens([("T3", [tok(q, seat=3, rnd=2) for q in range(1, 4)])]))
        chain.queue(lambda: hit(b, "T1", 8, 1, SF))
        (batch,), sf = chain.release()
        assert (batch["new"], batch["meter_cents"]) == (3, SEED + 3 * INC)
        # 10 % of the meter with T3's three tokens on it (10,210), not of the 10,000 before them
        assert (sf["lock_no"], sf["meter_before"], sf["amount_cents"]) == (3, SEED + 3 * INC, (SEED + 3 * INC) // 10)
        left = SEED + 3 * INC - (SEED + 3 * INC) // 10

        chain.hold()
        chain.queue(lambda: a.record_tokens([("T1", [tok(q, seat=4, rnd=9) for q in range(20, 30)])]))
        chain.queue(lambda: b.record_tokens([("T1", [tok(q, seat=4, rnd=9) for q in range(25, 35)]),
                                             ("T2", [tok(q, seat=1, rnd=5) for q in range(5, 8)])]))
        (ra,), (rb, rb2) = chain.release()
        assert (ra["new"], ra["dup"]) == (10, 0)
        assert (rb["new"], rb["dup"], rb["last_seq"]) == (5, 5, 34)
        assert (rb2["new"], rb2["meter_cents"]) == (3, left + 18 * INC)
    finally:
        chain.close()
        a.close()
        b.close()
    st = floor.status("floor")
    paid = meter + SEED + (SEED + 3 * INC) // 10
    tokens = 13 + 3 + 15 + 3
    assert (st["hits"], st["awarded_cents"], st["tokens"]) == (3, paid, tokens)
    assert st["meter_cents"] == left + 18 * INC
    assert st["reserve_cents"] == tokens * RESERVE
    assert floor.token_seqs("T1") == list(range(1, 12)) + list(range(20, 35))
    rec = floor.reconcile()
    assert rec["ok"], rec["problems"]
    # what came in is what is on the meter and what was paid, less the seeds
    assert rec["pools"]["floor"]["contrib_cents"] == tokens * INC
    assert tokens * INC == st["meter_cents"] + st["over_cents"] + paid - st["seeded_cents"]
    assert floor.verify()[1] == []


def test_a_royal_queued_behind_another_tables_royal_takes_what_that_one_left(floor, pg_url, pool_keys):
    """Three tables' royals queued on three connections in one turn: the first granted the chain
    (T3, queued first) takes the meter with its token on it, 10,980; the other two, in whichever
    order PostgreSQL grants them (see the module's note), each take the reset meter the one before
    left, never the 10,980 either could have read while it waited."""
    stores = [PoolStore(pg_url, pool_keys) for _ in range(3)]
    floor.record_tokens([("T3", [tok(1, seat=6, rnd=3)])])
    chain = Chain(pg_url)
    try:
        chain.hold()
        chain.queue(lambda: hit(stores[0], "T3", 3, 6, ROYAL))
        chain.queue(lambda: hit(stores[1], "T2", 4, 5, ROYAL2))
        chain.queue(lambda: hit(stores[2], "T1", 7, 0, ROYAL))
        got = chain.release()
    finally:
        chain.close()
        for s in stores:
            s.close()
    t3, t2, t1 = got
    assert (t3["lock_no"], t3["meter_before"], t3["amount_cents"]) == (1, SEED + 14 * INC, SEED + 14 * INC)
    assert sorted([t2["lock_no"], t1["lock_no"]]) == [2, 3]
    for later in (t2, t1):
        assert (later["meter_before"], later["amount_cents"], later["meter_after"]) == (SEED, SEED, SEED)
    assert [(h["board"], h["amount_cents"]) for h in got] == [("T3", SEED + 14 * INC), ("T2", SEED), ("T1", SEED)]
    st = floor.status("floor")
    assert (st["meter_cents"], st["awarded_cents"]) == (SEED, SEED + 14 * INC + 2 * SEED)
    rec = floor.reconcile()
    assert rec["ok"], rec["problems"]


# ---------------------------------------------------------------------------------------------
# The same with two `tablectl pool serve` processes on the one database, each table on its own.

def _serve(pg_url, keys, sock, log):
    proc, _ = procs.start(["pool", "serve", "--db", pg_url, "--keys", keys, "--listen", "unix:" + sock], log)
    line = proc.stdout.readline()
    if not line.startswith("pool serving"):
        procs.stop(proc)
        raise AssertionError("tablectl pool serve did not start: %r (see %s)" % (line, log))
    return proc


def test_two_pool_services_on_one_database_pay_each_hit_once_from_what_is_left(floor, pg_url, pool_keys, tmp_path):
    from tablectl.pool.client import PoolClient
    from tablectl.pool.tls import issue_table_credential
    socks = [str(tmp_path / ("pool%d.sock" % i)) for i in (1, 2)]
    servers = [_serve(pg_url, pool_keys, s, str(tmp_path / ("pool%d.log" % i))) for i, s in enumerate(socks)]
    # one credential per table (the pool's key folder is the two services'); a connection speaks for its table
    creds = {b: issue_table_credential(pool_keys, b, str(tmp_path / ("cred-" + b))) for b, _ in MEMBERS}

    def client(board, server):
        return PoolClient("unix:" + socks[server], creds[board], timeout_s=60)
    clients = {(b, i): client(b, i) for b, _ in MEMBERS for i in (0, 1)}

    def declare(board, server, rnd, seat, cards):
        return clients[board, server].request("hit", board=board, round=rnd, statement=statement(board, rnd),
                                              hands=[[seat, cards]])
    chain = Chain(pg_url)
    try:
        # each service has connected its writer (a first batch through each)
        assert clients["T3", 0].request("tokens", board="T3", tokens=[tok(1, seat=0, rnd=1)])["new"] == 1
        assert clients["T3", 1].request("tokens", board="T3", tokens=[tok(2, seat=0, rnd=1)])["new"] == 1
        meter = SEED + 15 * INC
        chain.hold()
        chain.queue(lambda: declare("T2", 0, 4, 2, ROYAL))
        chain.queue(lambda: declare("T1", 1, 7, 0, ROYAL2))
        first, second = chain.release()
        assert (first["board"], first["lock_no"], first["amount_cents"]) == ("T2", 1, meter)
        assert (second["board"], second["lock_no"], second["meter_before"], second["amount_cents"]) == \
            ("T1", 2, SEED, SEED)

        chain.hold()
        chain.queue(lambda: clients["T3", 0].request("tokens", board="T3",
                                                     tokens=[tok(q, seat=1, rnd=2) for q in range(3, 8)]))
        chain.queue(lambda: declare("T1", 1, 8, 1, SF))
        batch, sf = chain.release()
        assert (batch["new"], batch["meter_cents"]) == (5, SEED + 5 * INC)
        assert (sf["lock_no"], sf["meter_before"], sf["amount_cents"]) == (3, SEED + 5 * INC, (SEED + 5 * INC) // 10)
        # the declaration repeated at the other service returns its lock and pays nothing again
        again = declare("T1", 0, 8, 1, SF)
        assert again["repeat"] and again["lock_no"] == 3
    finally:
        chain.close()
        for c in clients.values():
            c.close()
        for p in servers:
            procs.stop(p)
    out = subprocess.run(procs.TABLECTL + ["pool", "reconcile", "--json", "--db", pg_url, "--keys", pool_keys],
                         capture_output=True, text=True, timeout=60)
    rec = json.loads(out.stdout)
    assert out.returncode == 0 and rec["ok"], out
    p = rec["pools"]["floor"]
    assert (p["hits"], p["awarded_cents"], p["tokens"]) == (3, meter + SEED + (SEED + 5 * INC) // 10, 20)
    assert p["meter_cents"] == SEED + 5 * INC - (SEED + 5 * INC) // 10
    out = subprocess.run(procs.TABLECTL + ["pool", "verify", "--db", pg_url, "--keys", pool_keys],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and "OK" in out.stdout, out
