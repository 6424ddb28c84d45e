"""The pool's database fails over as docs/POOL.md says, word for word ("The database: three
servers"): three real PostgreSQL servers (a primary, two standbys, `ANY 1 (a, b, c)`) made by the
doc's commands, the real `tablectl pool serve` on them, a virtual board through its real
`tablectl serve --pool`, and link-level tables that know exactly which tokens the pool
acknowledged (tabledev.pool_faults.Feeder).

The old procedure (one standby, named in the copied `synchronous_standby_names`) froze the floor
in POOL OFF after the promotion: the promoted server waited for a standby that was itself. Here
commits go on after the primary dies and after a standby dies."""
import shutil
import tempfile
import threading
import time

import pytest

from tabledev.floor import Floor
from tabledev.pgfailover import Trio
from tabledev.pool_faults import Feeder, missing_acked

FEEDERS = 4


@pytest.fixture
def trio():
    # Not under tmp_path: its parents are closed to the postgres user the servers run as under root.
    folder = tempfile.mkdtemp(prefix="pool-failover-")
    t = Trio(folder, port=5442)
    try:
        t.start()
        t.server("a").create_database()
        yield t
    finally:
        t.stop()
        shutil.rmtree(folder, ignore_errors=True)


def _floor(tmp_path, trio, tables=()):
    members = [("lf-%d" % i, "caribbean_draw") for i in range(FEEDERS)]
    floor = Floor(str(tmp_path / "floor"), tables=tables, pg=trio.server("a"), url=trio.url(), lost_s=3.0,
                  members=members)
    floor.start()
    feeders = []
    for board, _ in members:
        f = Feeder.on(floor, board)
        f.generating.set()
        f.start()
        feeders.append(f)
    return floor, feeders


def _stop(floor, feeders):
    for f in feeders:
        f.stop_event.set()
    floor.stop()


def _attempt(work):
    try:
        work()
    except Exception as exc:  # noqa: said by the caller's checks that follow
        print("%s: %s" % (work.__name__, exc))


def _acked(feeders):
    return {f.board: f.acked for f in feeders}


def _wait_commits(feeders, after, more=10, timeout_s=30.0):
    """Every feeder has `more` tokens acknowledged beyond `after` (board -> seq); seconds taken."""
    t0 = time.monotonic()
    while not all(f.acked >= after[f.board] + more for f in feeders):
        if time.monotonic() - t0 > timeout_s:
            raise AssertionError("commits did not go on within %.0f s: acknowledged %r, before %r"
                                 % (timeout_s, _acked(feeders), after))
        time.sleep(0.05)
    return time.monotonic() - t0


def _converge(floor, feeders, timeout_s=90.0):
    """Every token the tables made is in the pool exactly once and the books verify."""
    for f in feeders:
        f.generating.clear()
    deadline = time.monotonic() + timeout_s
    while True:
        rec = floor.reconcile()
        store = floor.store()
        try:
            exact = {f.board: store.token_seqs(f.board) == list(range(1, f.generated + 1)) for f in feeders}
            rows, problems = store.verify()
        finally:
            store.close()
        if rec["ok"] and all(exact.values()) and not problems:
            return rec
        if time.monotonic() > deadline:
            raise AssertionError("the floor did not converge: %r %r %r" % (rec["problems"], exact, problems))
        time.sleep(0.5)


def test_the_documented_failover_keeps_every_acknowledged_token_and_commits_go_on(tmp_path, trio):
    floor, feeders = _floor(tmp_path, trio, tables=(("cd-1", "caribbean_draw"),))
    try:
        bench = floor.bench("cd-1")
        bench.coins({0: 1, 1: 1})
        _wait_commits(feeders, {f.board: 0 for f in feeders}, more=20)
        assert trio.replication("a") == {"b": ("streaming", "quorum"), "c": ("streaming", "quorum")}
        # c stops following (a network fault): b alone acknowledges what follows, which c lacks.
        trio.query("c", "ALTER SYSTEM SET primary_conninfo = ''")
        trio.query("c", "SELECT pg_reload_conf()")
        deadline = time.monotonic() + 30
        while "c" in trio.replication("a"):
            assert time.monotonic() < deadline, "c still streams"
            time.sleep(0.1)
        _wait_commits(feeders, _acked(feeders), more=20)

        # An operator who runs the failover while the primary still answers is stopped.
        _, out = trio.failover("a")
        assert "STOP: a answers" in out
        _, out = trio.failover("x")
        assert "STOP: DEAD='x'" in out
        assert trio.primary() == "a" and trio.query("b", "SELECT pg_is_in_recovery()") == [(True,)]

        # The primary dies mid-stream. Nothing is resent until the promoted server is checked.
        for f in feeders:
            f.paused.set()
        trio.server("a").kill()
        time.sleep(0.5)
        acked = _acked(feeders)  # committed by a (no other server could commit)
        t0 = time.monotonic()
        new, out = trio.failover("a")
        failover_s = time.monotonic() - t0
        # The standby holding the most WAL is promoted: c would lack acknowledged tokens.
        assert missing_acked(floor.db_url, floor.keys, acked) == 0, out
        assert new == "b" and trio.primary() == "b", out
        other = "c"
        assert sum(acked.values()) >= FEEDERS * 20
        # The other standby follows the promoted server and acknowledges its commits.
        assert trio.wait_streaming(new, 1) == {other: ("streaming", "quorum")}
        # Run twice (an operator unsure it worked): it stops and changes nothing.
        again, out = trio.failover("a")
        assert again is None and "STOP: b and c must both answer" in out, out
        assert trio.primary() == new and trio.replication(new) == {other: ("streaming", "quorum")}

        for f in feeders:
            f.paused.clear()
        resumed_s = _wait_commits(feeders, acked, more=20)
        # The board's tokens go on too: its service replays its journal to the promoted server.
        bench.key("lock")
        bench.key("unlock")
        bench.coins({2: 1, 3: 1})
        bench.wait_for(lambda o, _: o["display"].strip() not in ("POOL OFF", ""), 30, "the pool's amount")
        _converge(floor, feeders)
        print("failover commands %.1f s; commits again %.1f s after they ended" % (failover_s, resumed_s))

        # The unlucky operator: a's machine boots with its PostgreSQL enabled, and the pool service
        # restarts meanwhile: it takes a (the first server in its URL that accepts writes), whose
        # commits no standby acknowledges: nothing is acknowledged (POOL OFF, nothing lost) ...
        for f in feeders:
            f.generating.set()
        trio.server("a").start()
        floor.stop_pool()
        starter = threading.Thread(target=_attempt, args=(floor.start_pool,), daemon=True)
        starter.start()  # it may wait on a from its first commit on (its schema check)
        time.sleep(2.0)
        stalled = _acked(feeders)
        time.sleep(4.0)
        assert _acked(feeders) == stalled
        # ... until a is stopped again: the pool goes back to the promoted server (restarted if its
        # start failed with a).
        trio.server("a").stop("immediate")
        starter.join(60)
        assert not starter.is_alive()
        if floor.pool_proc is None or floor.pool_proc.poll() is not None:
            floor.start_pool()
        _wait_commits(feeders, stalled, more=10)
        _converge(floor, feeders)

        # The dead server comes back as the doc says: a fresh standby of the new primary.
        trio.rejoin("a", new)
        assert trio.wait_streaming(new, 2) == {"a": ("streaming", "quorum"), other: ("streaming", "quorum")}

        # And the same commands serve the next failure, of the promoted server.
        acked = _acked(feeders)
        for f in feeders:
            f.generating.set()
        _wait_commits(feeders, acked, more=10)
        for f in feeders:
            f.paused.set()
        trio.server(new).kill()
        time.sleep(0.5)
        acked = _acked(feeders)
        newer, out = trio.failover(new)
        assert newer in ("a", other), out
        assert missing_acked(floor.db_url, floor.keys, acked) == 0
        trio.wait_streaming(newer, 1)
        for f in feeders:
            f.paused.clear()
        _wait_commits(feeders, acked, more=10)
        _converge(floor, feeders)
        bench.close()
    finally:
        _stop(floor, feeders)


def test_a_lost_standby_stops_no_commit_and_one_server_alone_commits_nothing(tmp_path, trio):
    floor, feeders = _floor(tmp_path, trio)
    try:
        _wait_commits(feeders, {f.board: 0 for f in feeders}, more=20)

        # One standby dies: the other acknowledges, commits go on within seconds.
        trio.server("b").kill()
        before = _acked(feeders)
        assert _wait_commits(feeders, before, more=20, timeout_s=15) < 15
        assert trio.replication("a") == {"c": ("streaming", "quorum")}

        # Both die: nothing is acknowledged that only the primary's disk holds.
        trio.server("c").kill()
        time.sleep(1.0)  # answers for commits made before the kill
        stalled = _acked(feeders)
        time.sleep(5.0)
        assert _acked(feeders) == stalled

        # One comes back: the commits that waited are acknowledged, and the rest follow.
        trio.server("b").start()
        _wait_commits(feeders, stalled, more=20, timeout_s=60)
        _converge(floor, feeders)

        # The primary dies while a standby is down: the failover refuses to promote the one left
        # (the last acknowledged commits may be on the other only).
        trio.server("a").kill()
        new, out = trio.failover("a")
        assert new is None and "STOP: b and c must both answer" in out, out
        assert trio.primary() is None
    finally:
        _stop(floor, feeders)
