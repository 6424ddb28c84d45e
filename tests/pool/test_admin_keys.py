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


# ---------------------------------------------------------------------- the key files themselves
def _key_file(folder, text, folder_mode=0o700):
    os.makedirs(folder, exist_ok=True)
    path = os.path.join(folder, "pool-admin.key")
    with open(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), "w") as f:
        f.write(text)
    os.chmod(folder, folder_mode)
    return path


@pytest.mark.parametrize("folder_mode", [0o770, 0o720, 0o707, 0o702, 0o777])
def test_a_key_in_a_folder_others_can_write_is_refused_they_could_have_swapped_it(tmp_path, folder_mode):
    """Whoever can write the key's folder can put a key of theirs in its place: the next change the
    administrator signs, or the key a rotation moves the books to, would be theirs."""
    path = _key_file(str(tmp_path / "shared"), os.urandom(32).hex() + "\n", folder_mode)
    with pytest.raises(TablectlError) as exc:
        adminkey.load_private(path)
    assert str(exc.value) == ("the folder of administrator key %s can be written by others: chmod 700 it" % path)


def test_a_key_reached_through_a_link_into_a_folder_others_can_write_is_refused(tmp_path):
    """The key path is a link from a private folder into a shared one: whoever can write the shared
    folder can put their key where the link points, so the folder the key really is in counts."""
    shared = tmp_path / "shared"
    adminkey.generate(str(shared / "admin.key"))
    os.chmod(shared, 0o777)
    mine = tmp_path / "home" / ".config" / "tablectl"
    mine.mkdir(parents=True, mode=0o700)
    os.symlink(shared / "admin.key", mine / "pool-admin.key")
    with pytest.raises(TablectlError) as exc:
        adminkey.load_private(str(mine / "pool-admin.key"))
    assert str(exc.value) == ("the folder of administrator key %s (a link to %s) can be written by others: chmod 700 "
                              "it" % (mine / "pool-admin.key", shared / "admin.key"))
    os.chmod(shared, 0o700)  # the same link into a private folder is taken
    assert adminkey.load_private(str(mine / "pool-admin.key")) is not None


def test_no_key_is_made_in_a_folder_others_can_write_and_the_folder_is_left_as_it_was(tmp_path):
    # (as root, `--admin-key /tmp/x.key` would otherwise have made /tmp 0700)
    shared = tmp_path / "shared"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    with pytest.raises(TablectlError) as exc:
        adminkey.generate(str(shared / "admin.key"))
    assert str(exc.value) == ("the folder %s can be written by others: a key made there could be swapped; make it "
                              "in a folder of your own (chmod 700)" % shared)
    assert stat.S_IMODE(os.stat(shared).st_mode) == 0o1777 and os.listdir(shared) == []


def test_a_key_in_a_folder_others_may_list_but_not_write_is_taken(tmp_path):
    seed = os.urandom(32)
    path = _key_file(str(tmp_path / "listed"), seed.hex() + "\n", 0o755)
    assert adminkey.public_hex(adminkey.load_private(path)) == adminkey.public_hex(adminkey.private_from_seed(seed))


def test_a_rotation_to_a_key_others_could_have_swapped_is_refused_and_the_books_keep_theirs(pg_url, tmp_path):
    keys = tmp_path / "pool.keys"
    key = tmp_path / "admin" / "pool-admin.key"
    assert tablectl("admin-key", "--new", key=key).returncode == 0
    assert tablectl("create", "floor", "seed_cents=10000", "--db", pg_url, "--keys", keys, key=key).returncode == 0
    held = (keys / "admin.pub").read_text()
    new = tmp_path / "drop" / "new.key"
    assert tablectl("admin-key", "--new", key=new).returncode == 0
    os.chmod(new.parent, 0o777)  # a drop folder anyone may write: the "new key" there may be anyone's
    one_line_error(tablectl("admin-key", "--rotate", new, "--db", pg_url, "--keys", keys, key=key),
                   "the folder of administrator key %s can be written by others" % new)
    assert (keys / "admin.pub").read_text() == held
    s = PoolStore(pg_url, str(keys))
    try:
        assert s.admin_key_in_books() == held.strip()
        assert s.verify()[1] == []
    finally:
        s.close()


@pytest.mark.parametrize("text", ["", "\n", "abc\n", "0" * 63 + "\n", "0" * 65 + "\n", "0" * 32 + " " + "0" * 32,
                                  "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n",
                                  "g" * 64, "0x" + "0" * 62])
def test_a_key_file_that_is_not_64_hex_digits_is_refused(tmp_path, text):
    path = _key_file(str(tmp_path / "admin"), text)
    with pytest.raises(TablectlError) as exc:
        adminkey.load_private(path)
    assert str(exc.value) == "%s does not hold an administrator key (64 hex digits)" % path


def test_a_key_file_is_64_hex_digits_with_the_white_space_around_them_ignored(tmp_path):
    seed = os.urandom(32)
    path = _key_file(str(tmp_path / "admin"), "  \n" + seed.hex() + "\r\n\n")
    assert adminkey.public_hex(adminkey.load_private(path)) == adminkey.public_hex(adminkey.private_from_seed(seed))


def test_a_key_path_that_cannot_be_read_or_written_is_refused_in_one_line_and_no_key_is_written(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder\n")
    # read: a path through a file
    with pytest.raises(TablectlError) as exc:
        adminkey.load_private(str(blocker / "pool-admin.key"))
    assert str(exc.value) == "cannot read %s: Not a directory" % (blocker / "pool-admin.key")
    # make: its folder cannot be made (a file stands in the way), or the path names a folder
    with pytest.raises(TablectlError) as exc:
        adminkey.generate(str(blocker / "admin" / "pool-admin.key"))
    assert str(exc.value) == "cannot make the folder %s: Not a directory" % (blocker / "admin")
    with pytest.raises(TablectlError) as exc:
        adminkey.generate(str(tmp_path / "admin" / "keys") + "/")
    assert str(exc.value) == "cannot write %s/: Is a directory" % (tmp_path / "admin" / "keys")
    assert blocker.read_text() == "not a folder\n"
    assert os.listdir(tmp_path / "admin") == []


def test_a_new_key_is_0600_in_a_folder_made_0700_whatever_the_umask(tmp_path):
    folder = tmp_path / "home" / ".config" / "tablectl"
    old = os.umask(0)
    try:
        adminkey.generate(str(folder / "pool-admin.key"))
    finally:
        os.umask(old)
    assert stat.S_IMODE(os.stat(folder).st_mode) == 0o700
    assert stat.S_IMODE(os.stat(folder / "pool-admin.key").st_mode) == 0o600
    adminkey.load_private(str(folder / "pool-admin.key"))  # and its own checks take it


@pytest.mark.parametrize("seed", [b"", b"\x01" * 31, b"\x01" * 33, "\x01" * 32, "01" * 32, None, 7])
def test_a_seed_that_is_not_32_bytes_makes_no_key_and_signs_nothing(seed):
    with pytest.raises(TablectlError, match=r"^an administrator key is 32 bytes$"):
        adminkey.private_from_seed(seed)
    if isinstance(seed, bytes):
        with pytest.raises(TablectlError, match=r"^an administrator key is 32 bytes$"):
            admin_signature(seed, "params", "floor", {"changes": {"increment_cents": 1}}, 1, "books")


def test_a_seed_of_32_bytes_signs_as_the_key_it_is(tmp_path):
    seed = bytes(range(32))
    body = {"changes": {"increment_cents": 1}}
    assert admin_signature(bytearray(seed), "params", "floor", body, 1, "b") == adminkey.sign(
        adminkey.private_from_seed(seed), "b", "params", "floor", body, 1)


def test_without_the_cryptography_package_the_administration_says_what_to_install_and_makes_no_key(tmp_path):
    """The pool is an optional part (pyproject's `pool` extra): on a host without it, making a key
    is refused in one line, before any file or folder is made."""
    key = tmp_path / "admin" / "pool-admin.key"
    code = ("import runpy, sys; sys.modules['cryptography'] = None; "
            "sys.argv = ['tablectl', 'pool', 'admin-key', '--new', '--admin-key', %r]; "
            "runpy.run_module('tablectl.cli', run_name='__main__')" % str(key))
    out = subprocess.run([procs.TABLECTL[0], "-c", code], capture_output=True, text=True, timeout=60)
    one_line_error(out, "tablectl: the pool's administration needs the `cryptography` package (pip install "
                        "cryptography; `make setup` installs it)")
    assert not os.path.exists(key.parent)


# ---------------------------------------------------------------------- admin.pub and the books' key row
def test_a_garbled_admin_pub_stops_every_change_and_verify_names_it(store):
    make_pool(store)
    before = rows_and_version(store)
    path = os.path.join(store.keys.folder, "admin.pub")
    good = open(path).read()
    for garbled in ("", "not a key\n", good.strip()[:63] + "\n", good.strip() + "00\n"):
        with open(path, "w") as f:
            f.write(garbled)
        with pytest.raises(TablectlError) as exc:
            admin(store, "service", "floor", {"enter": True})
        assert str(exc.value) == "%s is not an Ed25519 public key (64 hex digits)" % path
        assert rows_and_version(store) == before
        assert store.verify()[1] == ["%s is not an Ed25519 public key (64 hex digits)" % path]
        with pytest.raises(TablectlError, match="is not an Ed25519 public key"):
            store.keys.install_admin_pub(store.admin_key_in_books())  # never written over: put back by hand
    with open(path, "w") as f:
        f.write(good.upper())  # the same key in capitals: still the key
    admin(store, "service", "floor", {"enter": True})
    assert store.verify()[1] == []


@pytest.mark.parametrize("pub", ["", "not a key", "0" * 63, "0" * 65, "0x" + "0" * 62, None])
def test_installing_something_that_is_not_a_public_key_writes_nothing(tmp_path, pub):
    keys = PoolKeys(str(tmp_path / "pool.keys"))
    with pytest.raises(TablectlError) as exc:
        keys.install_admin_pub(pub)
    assert str(exc.value) == "a public key is not an Ed25519 public key (64 hex digits)"
    assert keys.admin_pub() is None and not os.path.exists(keys.folder)


def test_the_same_public_key_installed_again_changes_nothing(tmp_path):
    keys = PoolKeys(str(tmp_path / "pool.keys"))
    pub = adminkey.generate(str(tmp_path / "admin" / "pool-admin.key"))
    assert keys.install_admin_pub(pub) is True
    path = keys._path("admin.pub")
    before = os.stat(path)
    assert keys.install_admin_pub(pub) is False
    assert keys.install_admin_pub("  " + pub.upper() + "\n") is False  # the same key, written otherwise
    after = os.stat(path)
    assert (after.st_ino, after.st_mtime_ns) == (before.st_ino, before.st_mtime_ns)
    assert keys.admin_pub() == pub


def test_a_link_planted_at_admin_pub_is_not_written_through(tmp_path):
    """Someone who can write the pool's key folder before its first set-up plants admin.pub as a
    link to a file of their choosing: the install neither follows it nor takes it as a key."""
    keys = PoolKeys(str(tmp_path / "pool.keys"))
    keys._ensure_folder()
    target = tmp_path / "elsewhere" / "chosen"
    os.symlink(target, keys._path("admin.pub"))
    pub = adminkey.generate(str(tmp_path / "admin" / "pool-admin.key"))
    with pytest.raises(TablectlError) as exc:
        keys.install_admin_pub(pub)
    assert str(exc.value) == "%s appeared meanwhile: run the command again" % keys._path("admin.pub")
    assert not os.path.exists(target) and not os.path.exists(target.parent)
    assert keys.admin_pub() is None  # the link still leads nowhere: no key taken from it


def _forge_key_row(store, body):
    """A key row written by someone with the pool server's folder (its ledger key): it chains and
    its MAC checks, but holds no key."""
    def work(tip, rows):
        return store._row(rows, tip, None, "-", None, "admin_key", body), None
    store._transaction(work)


@pytest.mark.parametrize("body, why", [
    ("[]", "does not hold a key"), ("{not json", "does not hold a key"), ({"pub": 12}, "does not hold a key"),
    ({"pub": None}, "is not an Ed25519 public key"), ({"pub": "zz" * 32}, "is not an Ed25519 public key"),
    ({}, "is not an Ed25519 public key")])
def test_a_key_row_that_holds_no_key_stops_every_change(store, body, why):
    make_pool(store)
    _forge_key_row(store, body)
    before = rows_and_version(store)
    row = before[0]
    with pytest.raises(TablectlError) as exc:
        admin(store, "service", "floor", {"enter": True})
    assert str(exc.value) == {"does not hold a key": "the books' administrator key row %d does not hold a key" % row,
                              "is not an Ed25519 public key": "row %d is not an Ed25519 public key (64 hex digits)"
                              % row}[why]
    with pytest.raises(TablectlError, match=why):
        store.admin_key_in_books()
    assert rows_and_version(store) == before


def _rekey(store, private, body, version):
    return store.admin("rekey", "-", body, version,
                       admin_signature(private, "rekey", "-", body, version, store.books_id()))


def test_a_key_change_as_the_first_change_of_new_books_is_refused(store):
    """New books take their key from admin.pub at their first change; a key change cannot be that
    first change (it would move the books to another key before they held any)."""
    private = adminkey.load_private(admin_key_path(store.keys.folder))
    other = adminkey.public_hex(adminkey.private_from_seed(os.urandom(32)))
    for version in (0, 1):
        with pytest.raises(TablectlError) as exc:
            _rekey(store, private, {"pub": other}, version)
        assert str(exc.value) == "the books hold no administrator key yet: the first change records admin.pub"
    assert store.admin_key_in_books() is None and list(store.rows()) == []
    assert store.keys.admin_pub() == adminkey.public_hex(private)


def test_a_key_change_played_again_or_signed_for_another_key_row_is_refused(store, tmp_path):
    """A retired key the books moved away from cannot be brought back by playing the old key
    change again: each is signed for the key row it replaces."""
    make_pool(store)
    a = adminkey.load_private(admin_key_path(store.keys.folder))
    b_pub = adminkey.generate(str(tmp_path / "b" / "b.key"))
    b = adminkey.load_private(str(tmp_path / "b" / "b.key"))
    a_pub = adminkey.public_hex(a)
    os.remove(os.path.join(store.keys.folder, "admin.pub"))  # the books' key decides
    [row_a] = [r["id"] for r in store.rows(("admin_key",))]
    assert store.admin_key_in_books() == a_pub
    to_b = admin_signature(a, "rekey", "-", {"pub": b_pub}, row_a, store.books_id())
    store.admin("rekey", "-", {"pub": b_pub}, row_a, to_b)
    row_b = rows_and_version(store)[0]
    _rekey(store, b, {"pub": a_pub}, row_b)
    row_a2 = rows_and_version(store)[0]
    assert store.admin_key_in_books() == a_pub
    before = rows_and_version(store)
    with pytest.raises(TablectlError) as exc:
        store.admin("rekey", "-", {"pub": b_pub}, row_a, to_b)  # the first change, played again
    assert str(exc.value) == "rekey refused: signed for key row %d, the books' key is row %d" % (row_a, row_a2)
    with pytest.raises(TablectlError, match=r"^rekey refused: signed for key row %d, the books' key is row %d$"
                       % (row_a2 + 1, row_a2)):
        _rekey(store, a, {"pub": b_pub}, row_a2 + 1)
    assert rows_and_version(store) == before and store.admin_key_in_books() == a_pub
    assert store.verify()[1] == []


def test_a_key_change_to_the_key_the_books_hold_or_to_no_key_is_refused(store):
    make_pool(store)
    a = adminkey.load_private(admin_key_path(store.keys.folder))
    before = rows_and_version(store)
    with pytest.raises(TablectlError, match="^the new administrator key is the one the books hold already$"):
        _rekey(store, a, {"pub": adminkey.public_hex(a)}, 1)
    for body in ({}, {"pub": "zz" * 32}, {"pub": adminkey.public_hex(a)[:-1]}):
        with pytest.raises(TablectlError, match=r"^the new administrator key is not an Ed25519 public key \(64 hex "
                                                r"digits\)$"):
            _rekey(store, a, body, 1)
    assert rows_and_version(store) == before and store.admin_key_in_books() == adminkey.public_hex(a)


def test_verify_names_a_signed_row_that_carries_no_signed_change(store):
    """A change row as books from before Ed25519 administration wrote it (or as the pool server's
    account can write one): the change it made is there, the administrator's signed body is not."""
    make_pool(store)

    def old_style(tip, rows):
        return store._row(rows, tip, "floor", "-", None, "admin_params",
                          {"op": "params", "body": {"changes": {"increment_cents": 5000}}, "version": 3}), None
    store._transaction(old_style)
    row = rows_and_version(store)[0]
    assert store.verify()[1] == ["row %d: params of pool floor carries no signed change (made before Ed25519 "
                                 "administration?)" % row]


def test_verify_names_the_old_shared_administrator_key_left_in_the_pool_folder(store):
    """The pool server reads its key folder: an administrator key there is the administrator's
    power in the server's hands."""
    make_pool(store)
    old = os.path.join(store.keys.folder, "admin.key")
    with open(os.open(old, os.O_WRONLY | os.O_CREAT, 0o600), "w") as f:
        f.write(os.urandom(32).hex() + "\n")
    assert store.verify()[1] == ["%s, the shared administrator key of old, is still in the pool's key folder, which "
                                 "the pool server reads: delete it" % old]
    os.remove(old)
    assert store.verify()[1] == []
