"""The pool's parameter changes are signed with an Ed25519 key the pool server cannot read (issue
35): the server's key folder holds the public half only (admin.pub), the books record the key
they trust, and every signed row is checked again by `pool verify`. Each test is an attack first:
a change signed with another key, a change played again (on the same books or on others), a
replaced admin.pub, a change written with the ledger key alone, an edited key row."""
import json
import os
import stat
import subprocess
import time

import psycopg
import pytest
from poolkit import admin, admin_key_path, make_pool, pg_server, pg_url, pool_keys, sign  # noqa: F401 (fixtures)

from tabledev import procs
from tablectl.errors import TablectlError
from tablectl.pool import adminkey
from tablectl.pool.client import PoolClient
from tablectl.pool.store import PoolKeys, PoolStore, admin_signature
from tablectl.pool.tls import issue_table_credential


@pytest.fixture
def store(pg_url, pool_keys):
    s = PoolStore(pg_url, pool_keys)
    yield s
    s.close()


def rows_and_version(store, pool="floor"):
    with store.db.transaction():
        n = store.db.execute("SELECT count(*) FROM pool_ledger").fetchone()[0]
    return n, store.status(pool)["version"]


def test_the_pool_folder_holds_only_the_public_key_and_serve_runs_without_any_private_one(pg_url, pool_keys,
                                                                                          tmp_path):
    store = PoolStore(pg_url, pool_keys)
    make_pool(store)
    pub = adminkey.public_hex(adminkey.load_private(admin_key_path(pool_keys)))
    store.close()
    # The server's folder: the ledger key, the anchor and the administrator's public half; nothing
    # in it is an Ed25519 private key whose public half is the administrator's.
    assert sorted(os.listdir(pool_keys)) == ["admin.pub", "ledger.key", "pool.anchor"]
    assert open(os.path.join(pool_keys, "admin.pub")).read().strip() == pub
    for name in os.listdir(pool_keys):
        text = open(os.path.join(pool_keys, name), "rb").read().strip()
        if len(text) == 64:
            assert adminkey.public_hex(adminkey.private_from_seed(bytes.fromhex(text.decode()))) != pub, name
    # `pool serve` with no private key anywhere it could look: it serves tokens and amounts.
    sock = str(tmp_path / "pool.sock")
    env_home = tmp_path / "home"
    env_home.mkdir()
    old = {k: os.environ.get(k) for k in ("HOME", "TABLECTL_POOL_ADMIN_KEY")}
    os.environ["HOME"] = str(env_home)
    os.environ["TABLECTL_POOL_ADMIN_KEY"] = str(tmp_path / "nowhere.key")
    try:
        proc, log = procs.start(["pool", "serve", "--db", pg_url, "--keys", pool_keys, "--listen", "unix:" + sock],
                                tmp_path / "serve.log")
    finally:
        for k, v in old.items():
            os.environ.pop(k) if v is None else os.environ.__setitem__(k, v)
    try:
        assert proc.stdout.readline().startswith("pool serving"), open(tmp_path / "serve.log").read()
        client = PoolClient("unix:" + sock, issue_table_credential(pool_keys, "T1", str(tmp_path / "T1.cred")))
        got = client.request("tokens", board="T1", tokens=[{"q": 1, "seat": 0, "round": 1}])
        assert got["new"] == 1 and got["meter_cents"] == 10070, got
        deadline = time.time() + 10
        while client.request("amount", board="T1")["meter_cents"] != 10070:
            assert time.time() < deadline, "the server never showed the new meter"
            time.sleep(0.1)
        client.close()
    finally:
        procs.stop(proc)
        log.close()
    # What serving added (its TLS authority and certificate) holds no administrator key either.
    assert not os.path.exists(os.path.join(pool_keys, "admin.key"))
    for name in os.listdir(pool_keys):
        text = open(os.path.join(pool_keys, name), "rb").read().strip()
        if len(text) == 64 and name != "admin.pub":
            assert adminkey.public_hex(adminkey.private_from_seed(bytes.fromhex(text.decode()))) != pub, name


def test_a_change_signed_with_another_key_is_refused_and_changes_nothing(store, tmp_path):
    make_pool(store)
    admin(store, "service", "floor", {"enter": True})
    before = rows_and_version(store)
    body = {"changes": {"increment_cents": 1}}
    version = store.status("floor")["version"]
    adminkey.generate(str(tmp_path / "x.key"))
    other = adminkey.load_private(str(tmp_path / "x.key"))
    for sig in (admin_signature(other, "params", "floor", body, version, store.books_id()),
                "0" * 128, "", None, 12, sign(store, "params", "floor", {"changes": {"increment_cents": 2}}, version),
                sign(store, "params", "other", body, version), sign(store, "member", "floor", body, version)):
        with pytest.raises(TablectlError, match="not signed with the pool administrator's key"):
            store.admin("params", "floor", body, version, sig)
    assert rows_and_version(store) == before
    assert store.status("floor")["params"]["increment_cents"] == 70


def test_a_change_played_again_is_refused_on_these_books_and_on_others(pg_server, store, tmp_path):
    make_pool(store)
    admin(store, "service", "floor", {"enter": True})
    body = {"changes": {"increment_cents": 80}}
    version = store.status("floor")["version"]
    sig = sign(store, "params", "floor", body, version)
    store.admin("params", "floor", body, version, sig)
    after = rows_and_version(store)
    with pytest.raises(TablectlError, match="signed for parameter version"):
        store.admin("params", "floor", body, version, sig)
    assert rows_and_version(store) == after
    # Other books (another database, its own ledger key) trusting the same administrator: a change
    # recorded on the first books, played there at the same parameter version, is not theirs.
    import psycopg as pg
    with pg.connect(pg_server.admin_url(), autocommit=True) as conn:
        conn.execute('CREATE DATABASE "replay_%d"' % os.getpid())
    folder2 = str(tmp_path / "other.keys")
    PoolKeys(folder2).install_admin_pub(store.keys.admin_pub())
    other = PoolStore(pg_server.admin_url("replay_%d" % os.getpid()), folder2)
    try:
        other.admin("create", "floor", {"params": {"seed_cents": 10000, "increment_cents": 70,
                                                   "ceiling_cents": 10000000, "reserve_cents": 5}}, 0,
                    admin_signature(adminkey.load_private(admin_key_path(store.keys.folder)), "create", "floor",
                                    {"params": {"seed_cents": 10000, "increment_cents": 70, "ceiling_cents": 10000000,
                                                "reserve_cents": 5}}, 0, other.books_id()))
        for op, b in (("member", {"board": "T1", "game": "caribbean_draw"}), ("service", {"enter": False}),
                      ("service", {"enter": True})):
            v = other.status("floor")["version"]
            other.admin(op, "floor", b, v, admin_signature(adminkey.load_private(admin_key_path(store.keys.folder)),
                                                           op, "floor", b, v, other.books_id()))
        assert other.status("floor")["version"] == version
        assert other.books_id() != store.books_id()
        with pytest.raises(TablectlError, match="not signed"):
            other.admin("params", "floor", body, version, sig)
        assert other.status("floor")["params"]["increment_cents"] == 70
    finally:
        other.close()


def test_a_replaced_admin_pub_signs_nothing_and_verify_names_it(store, tmp_path):
    make_pool(store)
    admin(store, "service", "floor", {"enter": True})
    before = rows_and_version(store)
    # Someone who can write the pool server's folder puts a key of theirs in admin.pub.
    mallory = str(tmp_path / "mallory" / "k.key")
    mpub = adminkey.generate(mallory)
    with pytest.raises(TablectlError, match="holds another administrator key"):
        store.keys.install_admin_pub(mpub)
    with open(os.path.join(store.keys.folder, "admin.pub"), "w") as f:
        f.write(mpub + "\n")
    body = {"changes": {"increment_cents": 1}}
    version = store.status("floor")["version"]
    msig = admin_signature(adminkey.load_private(mallory), "params", "floor", body, version, store.books_id())
    with pytest.raises(TablectlError, match="it was replaced"):
        store.admin("params", "floor", body, version, msig)
    # ... and the administrator's own changes stop too until it is put back: it is seen, not silent.
    with pytest.raises(TablectlError, match="it was replaced"):
        admin(store, "params", "floor", body)
    assert rows_and_version(store) == before
    _, problems = store.verify()
    assert any("admin.pub is not the administrator key the books hold" in p for p in problems), problems
    # admin.pub deleted: the books' key decides, Mallory's signature still refused.
    os.remove(os.path.join(store.keys.folder, "admin.pub"))
    with pytest.raises(TablectlError, match="not signed"):
        store.admin("params", "floor", body, version, msig)
    admin(store, "params", "floor", body)
    assert store.status("floor")["params"]["increment_cents"] == 1


def test_a_change_written_with_the_ledger_key_alone_is_named_by_verify(store, tmp_path):
    """The pool server's account holds the ledger key and the database: it can write a row that
    chains and MACs, but not sign it. verify checks every signed row against the books' key."""
    make_pool(store)
    count, problems = store.verify()
    assert problems == [] and count == 4
    pub = adminkey.public_hex(adminkey.load_private(admin_key_path(store.keys.folder)))
    assert store.verify(admin_pub=pub)[1] == []

    def forge(tip, rows):
        p = store._pool_row("floor")
        p["params"]["increment_cents"] = 5000
        p["version"] += 1
        store._save_pool(p)
        body = {"changes": {"increment_cents": 5000}}
        return store._row(rows, tip, "floor", "-", None, "admin_params",
                          {"op": "params", "body": body, "version": p["version"] - 1, "sig": "ab" * 64,
                           "signed": body}), None
    store._transaction(forge)
    _, problems = store.verify()
    assert problems == ["row 5: params of pool floor is not signed by the pool administrator's key"], problems
    # A signed row moved to another pool (the pool column is outside the row MAC) is named too.
    with psycopg.connect(store.url, autocommit=True) as conn:
        conn.execute("UPDATE pool_ledger SET pool='elsewhere' WHERE id=3")
    _, problems = store.verify()
    assert "row 3: member of pool elsewhere is not signed by the pool administrator's key" in problems, problems


def test_a_key_change_without_the_old_keys_signature_and_a_key_not_the_administrators_are_named(store, tmp_path):
    make_pool(store)
    mallory = str(tmp_path / "mallory" / "k.key")
    mpub = adminkey.generate(mallory)
    held = adminkey.public_hex(adminkey.load_private(admin_key_path(store.keys.folder)))

    def forge(tip, rows):
        return store._row(rows, tip, None, "-", None, "admin_key",
                          {"pub": mpub, "from": "rekey", "old": held, "version": 1, "sig": "cd" * 64,
                           "signed": {"pub": mpub}}), None
    store._transaction(forge)
    os.remove(os.path.join(store.keys.folder, "admin.pub"))
    # The server now trusts Mallory's key (her row chains: she has the ledger key) ...
    body = {"enter": True}
    version = store.status("floor")["version"]
    store.admin("service", "floor", body, version,
                admin_signature(adminkey.load_private(mallory), "service", "floor", body, version, store.books_id()))
    # ... and verify names both her key row and her change, and with the administrator's own
    # public key given, that the books' first key was the administrator's and hers is not.
    _, problems = store.verify()
    assert problems == ["row 5: the administrator key was changed without the signature of the key before it",
                        "row 6: service of pool floor is not signed by the pool administrator's key"], problems
    _, problems = store.verify(admin_pub=held)
    assert "row 6: service of pool floor is not signed by the pool administrator's key" in problems, problems


def test_an_edited_key_row_in_the_database_is_refused(store, tmp_path):
    """Someone with the database but not the ledger key writes a key of theirs into the books."""
    make_pool(store)
    mallory = str(tmp_path / "mallory" / "k.key")
    mpub = adminkey.generate(mallory)
    with psycopg.connect(store.url, autocommit=True) as conn:
        conn.execute("UPDATE pool_ledger SET body=%s WHERE kind='admin_key'", (json.dumps({"pub": mpub}),))
    os.remove(os.path.join(store.keys.folder, "admin.pub"))
    body = {"enter": True}
    version = store.status("floor")["version"]
    with pytest.raises(TablectlError, match="administrator key row 1 was edited"):
        store.admin("service", "floor", body, version,
                    admin_signature(adminkey.load_private(mallory), "service", "floor", body, version,
                                    store.books_id()))


def test_books_with_rows_but_no_key_row_take_no_change(store):
    make_pool(store)
    with psycopg.connect(store.url, autocommit=True) as conn:
        conn.execute("DELETE FROM pool_ledger WHERE kind='admin_key'")
    with pytest.raises(TablectlError, match="no administrator key row"):
        admin(store, "service", "floor", {"enter": True})
    _, problems = store.verify()
    assert "row 2: create of pool floor comes before any administrator key row" in problems, problems


# ---------------------------------------------------------------------- the CLI
def tablectl(*args, key=None):
    env = dict(os.environ)
    if key is not None:
        env["TABLECTL_POOL_ADMIN_KEY"] = str(key)
    return subprocess.run(procs.TABLECTL + ["pool"] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=60, env=env)


def one_line_error(out, text):
    assert out.returncode == 1, out
    assert out.stderr.startswith("tablectl: ") and out.stderr.count("\n") == 1, out.stderr
    assert text in out.stderr, out.stderr


def test_the_cli_makes_the_key_outside_the_pool_folder_installs_the_public_half_once_and_rotates_signed(
        pg_url, tmp_path):
    keys = tmp_path / "pool.keys"
    key = tmp_path / "admin" / "pool-admin.key"
    db = ["--db", pg_url, "--keys", keys]
    one_line_error(tablectl("create", "floor", *db, key=key), "no pool administrator key at")
    out = tablectl("admin-key", "--new", "--json", key=key)
    assert out.returncode == 0, out
    pub = json.loads(out.stdout)["public_key"]
    assert stat.S_IMODE(os.stat(key).st_mode) == 0o600 and stat.S_IMODE(os.stat(key.parent).st_mode) == 0o700
    one_line_error(tablectl("admin-key", "--new", key=key), "exists already")
    assert adminkey.public_hex(adminkey.load_private(str(key))) == pub
    # The first create puts the public half into the new key folder; the private key stays out.
    assert tablectl("create", "floor", "seed_cents=10000", *db, key=key).returncode == 0
    assert sorted(os.listdir(keys)) == ["admin.pub", "ledger.key", "pool.anchor"]
    assert (keys / "admin.pub").read_text().strip() == pub
    # Another administrator key is refused at the CLI, before anything is signed.
    other = tmp_path / "other" / "k.key"
    assert tablectl("admin-key", "--new", key=other).returncode == 0
    one_line_error(tablectl("service", "floor", "--leave", *db, key=other), "the pool's books hold administrator key")
    one_line_error(tablectl("admin-key", "--install", "--keys", keys, key=other), "holds another administrator key")
    # A key file others can read is refused.
    os.chmod(key, 0o644)
    one_line_error(tablectl("service", "floor", "--leave", *db, key=key), "can be read by others")
    os.chmod(key, 0o600)
    # verify checks every signed row, against the key the administrator holds if asked.
    out = tablectl("verify", *db, "--admin-key", key)
    assert out.returncode == 0 and "OK" in out.stdout, out
    out = tablectl("verify", *db, "--admin-pub", adminkey.public_hex(adminkey.load_private(str(other))))
    assert out.returncode == 2 and "is not the key you hold" in out.stdout, out
    # A signed key change: the old key no longer signs, the new one does, verify follows the chain.
    out = tablectl("admin-key", "--rotate", other, "--db", pg_url, "--keys", keys, key=key)
    assert out.returncode == 0, out
    assert (keys / "admin.pub").read_text().strip() == adminkey.public_hex(adminkey.load_private(str(other)))
    one_line_error(tablectl("service", "floor", "--leave", *db, key=key), "the pool's books hold administrator key")
    assert tablectl("service", "floor", "--leave", *db, key=other).returncode == 0
    out = tablectl("verify", *db)
    assert out.returncode == 0 and "OK" in out.stdout, out


def test_the_administrators_public_key_is_written_0600_when_installed_and_when_replaced(tmp_path):
    """admin.pub is what every administrative row is checked against: nobody but its owner may
    write it (and its temporary file on a replace is made 0600 as well)."""
    from tablectl.pool import adminkey
    from tablectl.pool.store import PoolKeys
    keys = PoolKeys(str(tmp_path / "pool.keys"))
    first = adminkey.generate(str(tmp_path / "admin" / "first.key"))
    assert keys.install_admin_pub(first)
    path = str(tmp_path / "pool.keys" / "admin.pub")
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    second = adminkey.generate(str(tmp_path / "admin" / "second.key"))
    keys.replace_admin_pub(second)
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    assert open(path).read().strip() == second
