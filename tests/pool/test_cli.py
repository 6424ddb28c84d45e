"""`tablectl pool ...` through the same CLI conventions as the rest (README): a refusal is one line
on stderr starting `tablectl: ` and exit 1; reconcile and verify exit 2 when the books disagree."""
import json
import subprocess

from poolkit import pg_server, pg_url  # noqa: F401 (fixtures)

from tabledev import procs


def pool(*args, keys=None, db=None):
    """The administrator's private key of the test beside the key folder (never in it)."""
    import os
    cmd = procs.TABLECTL + ["pool"] + list(args)
    if db is not None:
        cmd += ["--db", db]
    env = dict(os.environ)
    if keys is not None:
        cmd += ["--keys", keys]
        env["TABLECTL_POOL_ADMIN_KEY"] = os.path.join(os.path.dirname(os.path.abspath(keys)), "admin", "pool-admin.key")
        if not os.path.exists(env["TABLECTL_POOL_ADMIN_KEY"]):
            from tablectl.pool import adminkey
            adminkey.generate(env["TABLECTL_POOL_ADMIN_KEY"])
    return subprocess.run(cmd, capture_output=True, text=True, timeout=60, env=env)


def one_line_error(out, text):
    assert out.returncode == 1, out
    assert out.stderr.startswith("tablectl: ") and out.stderr.count("\n") == 1, out.stderr
    assert text in out.stderr, out.stderr


def test_a_pool_is_created_fed_changed_in_service_mode_reported_and_verified(pg_url, tmp_path):
    keys = str(tmp_path / "k")
    # a bench pool: this test's tokens come from no board (a floor pool takes only signed ones)
    assert pool("create", "floor", "seed_cents=100000", "increment_cents=70", "bench=1", db=pg_url,
                keys=keys).returncode == 0
    assert pool("member", "floor", "--board", "T1", "--game", "caribbean_draw", db=pg_url, keys=keys).returncode == 0
    assert pool("service", "floor", "--leave", db=pg_url, keys=keys).returncode == 0
    one_line_error(pool("set", "floor", "increment_cents=80", db=pg_url, keys=keys), "not in service mode")
    one_line_error(pool("set", "floor", "increment_cents=eighty", db=pg_url, keys=keys), "name=whole number")
    assert pool("service", "floor", "--enter", db=pg_url, keys=keys).returncode == 0
    out = pool("set", "floor", "increment_cents=80", db=pg_url, keys=keys)
    assert out.returncode == 0 and "increment $0.80" in out.stdout, out
    pool("service", "floor", "--leave", db=pg_url, keys=keys)
    from tablectl.pool.store import PoolStore
    store = PoolStore(pg_url, keys)
    store.record_tokens([("T1", [{"q": q, "seat": 0, "round": 1} for q in range(1, 4)])])
    from poolkit import hit
    hit(store, "T1", 1, 0, "As Ks Qs Js Ts")
    store.close()
    st = json.loads(pool("status", "--json", db=pg_url, keys=keys).stdout)
    assert st[0]["meter_cents"] == 100000 and st[0]["hits"] == 1 and st[0]["tokens"] == 3
    out = pool("reconcile", db=pg_url, keys=keys)
    assert out.returncode == 0 and "reconcile: OK" in out.stdout, out
    png = tmp_path / "report.png"
    out = pool("report", "--plot", str(png), "--json", db=pg_url, keys=keys)
    assert out.returncode == 0, out
    rows = json.loads(out.stdout)
    assert sum(r["tokens"] for r in rows) == 3 and sum(r["hits"] for r in rows) == 1
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    out = pool("verify", db=pg_url, keys=keys)
    assert out.returncode == 0 and "OK" in out.stdout, out


def test_books_that_disagree_exit_2(pg_url, tmp_path):
    import psycopg
    keys = str(tmp_path / "k")
    pool("create", "floor", db=pg_url, keys=keys)
    with psycopg.connect(pg_url, autocommit=True) as conn:
        conn.execute("UPDATE pools SET meter_cents = meter_cents + 1")
    out = pool("reconcile", db=pg_url, keys=keys)
    assert out.returncode == 2 and "PROBLEM: pool floor: meter_cents" in out.stdout, out


def test_bad_or_missing_database_is_one_line(tmp_path):
    keys = str(tmp_path / "k")
    one_line_error(pool("status", keys=keys, db=""), "say which pool database")
    one_line_error(pool("status", keys=keys, db="casino.db"), "is not a PostgreSQL URL")
    one_line_error(pool("status", keys=keys, db="postgresql://pool@/pool?host=%s&port=1" % tmp_path),
                   "cannot reach the pool database")


def test_pool_serve_on_a_primary_whose_commits_wait_says_why_it_waits(tmp_path):
    """Two of the three servers lost: the primary holds every commit until a standby is back
    (docs/POOL.md, the rule). `tablectl pool serve` on fresh books waits, as it must, and says why
    instead of sitting silent. A server of its own: the wait is server-wide."""
    import os
    import shutil
    import tempfile
    import time
    import psycopg
    from poolkit import admin_key_path
    from tabledev.pgserver import PgServer
    from tablectl.pool import adminkey
    from tablectl.pool.store import PoolKeys
    folder = tempfile.mkdtemp(prefix="pgwait-")
    pg = PgServer(folder, port=5433).init().start().create_database()
    proc = None
    try:
        with psycopg.connect(pg.admin_url(), autocommit=True) as conn:
            conn.execute("ALTER SYSTEM SET synchronous_standby_names = 'standby_that_is_gone'")
            conn.execute("SELECT pg_reload_conf()")
        keys = str(tmp_path / "pool.keys")
        PoolKeys(keys).install_admin_pub(adminkey.generate(admin_key_path(keys)))
        log = str(tmp_path / "serve.log")
        proc, _ = procs.start(["pool", "serve", "--db", pg.url, "--keys", keys, "--listen",
                               "unix:" + str(tmp_path / "pool.sock")], log)
        deadline = time.monotonic() + 60
        while "still waiting" not in open(log).read():
            assert time.monotonic() < deadline and proc.poll() is None, open(log).read()
            time.sleep(0.2)
        said = open(log).read()
        assert said.startswith("tablectl: still waiting for the pool database postgresql://") and \
            "a primary whose commits wait for a standby holds every write" in said and said.count("\n") == 1, said
        assert proc.poll() is None  # still waiting, not given up
    finally:
        if proc is not None:
            procs.stop(proc)
        pg.stop()
        shutil.rmtree(folder, ignore_errors=True)
