"""The ledger as the books of record (tablectl.ledger): what `verify` proves and names, what
recording refuses to do silently, and how an older ledger file is upgraded.

Real SQLite files in tmp_path, a real key store beside them, events made by encoding real signed
frames (boardside.signed_event). Rules (docs/SECURITY.md, docs/RELIABILITY.md): "Tamper-evident
books"; "No coin counted twice"; a gap in a board's numbers is never silent.
"""
import json
import os
import sqlite3
import stat

import pytest

from boardside import signed_event
from tablectl.errors import TablectlError
from tablectl.hashchain import anchor_slots
from tablectl.keys import KeyStore
from tablectl.ledger import SCHEMA_VERSION, Ledger, anchor_path_for, legacy_row_hash

B = "b1"
TABLE_KEY = bytes(range(32))


@pytest.fixture(autouse=True)
def _keys_beside_the_ledger(monkeypatch):
    monkeypatch.delenv("TABLECTL_KEYS", raising=False)


@pytest.fixture
def path(tmp_path):
    return str(tmp_path / "books.db")


@pytest.fixture
def keyed(path):
    """A ledger whose board B has a table key in the key store."""
    KeyStore.for_ledger(path).set_table_key(B, TABLE_KEY)
    led = Ledger(path)
    yield led
    led.close()


def coins(first, last, key=TABLE_KEY):
    return [signed_event(key, q, "coin", B, seat=q % 7, inc=70) for q in range(first, last + 1)]


def anchor_of(path):
    """Where the ledger's anchor lives: in its key store, not beside it."""
    return anchor_path_for(path, KeyStore.for_ledger(path))


def tamper(path, sql, params=()):
    con = sqlite3.connect(path)
    con.execute(sql, params)
    con.commit()
    con.close()


def problems_of(path):
    led = Ledger(path, readonly=True)
    try:
        return led.verify()[1]
    finally:
        led.close()


# ---- what verify proves --------------------------------------------------------------------------
def test_signed_events_recorded_in_order_verify_clean(keyed, path):
    assert keyed.record_events(B, coins(1, 5)) == (5, 5, 0, False)
    assert keyed.verify() == (5, [])


def test_a_row_edited_after_the_fact_fails_verify_and_is_named(keyed, path):
    keyed.record_events(B, coins(1, 4))
    tamper(path, "UPDATE ledger SET body=replace(body, '\"inc\":70', '\"inc\":7000') WHERE id=3")
    problems = problems_of(path)
    assert "row 3 was edited or forged (its MAC does not match its content)" in problems
    assert not any("row 2 " in p or "row 4 " in p for p in problems), problems


def test_a_row_forged_with_the_ledger_key_but_not_the_table_key_is_named(keyed, path):
    """Someone who holds the ledger key (and so can chain a row) but not the board's key: the
    row's MAC checks, the board's does not."""
    keyed.record_events(B, coins(1, 2))
    forged = signed_event(bytes(32), 3, "coin", B, seat=0, inc=70_000)  # another key
    keyed.record_events(B, [forged])
    problems = keyed.verify()[1]
    assert problems == ["row 3: event b1 #3 was not signed by the board (forged or edited)"]


def test_an_unsigned_event_of_a_keyed_board_is_named_from_its_key_on(keyed):
    """Events a board made before it had a key went out unsigned; from key_provisioned on, none."""
    keyed.record_events(B, [signed_event(None, q, "coin", B, seat=0, inc=70) for q in (1, 2)])
    keyed.record_events(B, [signed_event(TABLE_KEY, 3, "key_provisioned", B)] + coins(4, 4))
    assert keyed.verify()[1] == []
    keyed.record_events(B, [signed_event(None, 5, "coin", B, seat=0, inc=70)])
    assert keyed.verify()[1] == ["row 5: event b1 #5 of a keyed board carries no board MAC (forged?)"]


def test_a_deleted_row_is_named_with_the_gap_it_leaves(keyed, path):
    keyed.record_events(B, coins(1, 5))
    tamper(path, "DELETE FROM ledger WHERE id=3")
    problems = problems_of(path)
    assert "row 3 missing (deleted?) before row 4" in problems
    assert "events b1 #3..#3 are missing (no signed resync explains them)" in problems


def test_rows_cut_from_the_end_are_named_against_the_anchor(keyed, path):
    keyed.record_events(B, coins(1, 5))
    tamper(path, "DELETE FROM ledger WHERE id >= 4")
    assert "rows 4..5 are missing from the end (the anchor names row 5)" in problems_of(path)


def test_a_torn_anchor_slot_is_not_a_problem(keyed, path):
    """The anchor has two slots written in turn: a crash tears at most the one being written."""
    keyed.record_events(B, coins(1, 1))
    keyed.record_events(B, coins(2, 2))   # row 2 goes to slot 0, row 1 stays in slot 1
    with open(anchor_of(path), "r+b") as f:
        f.write(b"\xff" * 40)             # slot 0 torn
    assert problems_of(path) == []


def test_an_edited_anchor_is_named(keyed, path):
    keyed.record_events(B, coins(1, 2))
    with open(anchor_of(path), "rb") as f:
        data = f.read()
    with open(anchor_of(path), "wb") as f:
        f.write(data.replace(b'"row": 2', b'"row": 9'))
    assert "the anchor %s was edited" % anchor_of(path) in problems_of(path)


def test_the_board_saying_more_was_acknowledged_than_the_ledger_holds_is_named(keyed):
    keyed.record_events(B, coins(1, 3))
    assert keyed.verify(board_acked={B: 3})[1] == []
    assert keyed.verify(board_acked={B: 5})[1] == [
        "board b1 says events up to #5 were acknowledged, the ledger ends at #3 (rows cut from the end?)"]


def test_without_the_ledger_key_verify_says_so_instead_of_passing(keyed, path):
    keyed.record_events(B, coins(1, 1))
    os.unlink(os.path.join(KeyStore.for_ledger(path).folder, "ledger.key"))
    count, problems = Ledger(path, readonly=True).verify()
    assert count == 0 and problems[0].startswith("no ledger key in ")


def test_the_books_and_their_anchor_are_private_files(keyed, path):
    keyed.record_events(B, coins(1, 1))
    for p in (path, anchor_of(path)):
        assert stat.S_IMODE(os.stat(p).st_mode) == 0o600, p


# ---- what recording will not do silently -------------------------------------------------------
def test_a_different_event_under_a_used_number_is_kept_as_a_conflict_not_over_the_first(keyed):
    keyed.record_events(B, coins(1, 2))
    other = signed_event(TABLE_KEY, 2, "coin", B, seat=5, inc=999)
    assert keyed.record_events(B, [other]) == (2, 0, 0, False)
    rows = list(keyed.events(B))
    assert [r["kind"] for r in rows] == ["coin", "coin", "seq_conflict"]
    assert rows[1]["body"]["inc"] == 70                      # the first event stands
    assert json.loads(rows[2]["body"]["event"])["inc"] == 999  # the second is on record
    # and a number used twice is an alarm (the board's journal went back), not a clean audit
    assert keyed.verify()[1] == ["board b1: 1 events under numbers the ledger already holds (seq_conflict, #2..#2): "
                                 "its journal went back or was replaced; reconcile counts their money"]
    assert [e["inc"] for e in keyed.conflict_events(B)] == [999]


def test_a_gap_the_board_explains_is_recorded_with_a_resync_row(keyed):
    keyed.record_events(B, coins(1, 2))
    repaired = signed_event(TABLE_KEY, 6, "storage_repaired", B, skipped_from=3, skipped_to=5)
    assert keyed.record_events(B, [repaired]) == (6, 1, 0, False)
    resync = list(keyed.events(B, kinds=["resync"]))
    assert [r["body"]["missing_from"] for r in resync] == [3] and resync[0]["body"]["missing_to"] == 5
    assert resync[0]["body"]["signed_by_board"] is True
    assert keyed.verify()[1] == []


def test_a_storage_repair_that_does_not_cover_the_gap_explains_nothing(keyed):
    keyed.record_events(B, coins(1, 2))
    for skipped_to in (4, "5", None):   # short of the gap, or not a number: no crash, no row
        bad = signed_event(TABLE_KEY, 6, "storage_repaired", B, skipped_from=3, skipped_to=skipped_to)
        assert keyed.record_events(B, [bad]) == (2, 0, 0, True)
    assert [r["seq"] for r in keyed.events(B)] == [1, 2]
    assert keyed.board(B)["gaps"] == 3


def test_a_ledger_behind_its_board_takes_the_events_with_a_resync_row(keyed):
    """Restored from a backup: the board says it holds #1..#4 acknowledged, and sends #5."""
    assert keyed.record_events(B, coins(5, 6), board_acked=4) == (6, 2, 0, False)
    assert [(r["kind"], r["seq"]) for r in keyed.events(B)] == [("resync", None), ("coin", 5), ("coin", 6)]
    assert keyed.verify()[1] == []


def test_books_behind_their_board_resync_only_with_a_technicians_sign_off(keyed):
    """An old copy put back: it holds #1..#2, the board holds #1..#6 acknowledged and sends #7. The
    books make no excuse for themselves: a gap until a sign-off names #3..#6, then a resync row
    that cites it. A sign-off for fewer numbers covers nothing."""
    keyed.record_events(B, coins(1, 2))
    assert keyed.record_events(B, coins(7, 7), board_acked=6) == (2, 0, 0, True)
    keyed.sign_off_resync(B, 3, 5, "restored from Monday's backup", "tech")
    assert keyed.record_events(B, coins(7, 7), board_acked=6) == (2, 0, 0, True)
    keyed.sign_off_resync(B, 3, 6, "restored from Monday's backup", "tech")
    assert keyed.record_events(B, coins(7, 7), board_acked=6) == (7, 1, 0, False)
    resync = list(keyed.events(B, kinds=["resync"]))[0]["body"]
    assert (resync["missing_from"], resync["missing_to"]) == (3, 6) and "signed off in row" in resync["reason"]
    with pytest.raises(TablectlError):
        keyed.sign_off_resync(B, 4, 3, "x", "tech")


def test_a_resync_sign_off_without_a_reason_is_refused_and_writes_nothing(keyed):
    keyed.record_events(B, coins(1, 2))
    for reason in ("", "   "):
        with pytest.raises(TablectlError) as err:
            keyed.sign_off_resync(B, 3, 6, reason, "tech")
        assert str(err.value) == "a resync sign-off needs --reason: what happened to the books"
    assert [r["kind"] for r in keyed.events(B)] == ["coin", "coin"]
    assert keyed.signoff_for(B, 3, 6) is None
    assert keyed.record_events(B, coins(7, 7), board_acked=6) == (2, 0, 0, True)  # still a gap


# ---- schema version and upgrades ----------------------------------------------------------------
SCHEMA_1 = """
CREATE TABLE ledger (id INTEGER PRIMARY KEY, board TEXT NOT NULL, seq INTEGER, kind TEXT NOT NULL,
    recorded_at REAL NOT NULL, body TEXT NOT NULL, prev_hash TEXT NOT NULL, hash TEXT NOT NULL);
CREATE UNIQUE INDEX ledger_event ON ledger(board, seq) WHERE seq IS NOT NULL;
CREATE INDEX ledger_kind ON ledger(board, kind);
CREATE TABLE boards (board TEXT PRIMARY KEY, last_seq INTEGER NOT NULL DEFAULT 0, port TEXT,
    table_key TEXT, counter INTEGER NOT NULL DEFAULT 0, duplicates INTEGER NOT NULL DEFAULT 0,
    gaps INTEGER NOT NULL DEFAULT 0);
"""


def make_schema_1(path, events=3, table_key_hex=TABLE_KEY.hex(), kinds=None):
    """A ledger as tablectl wrote it before schema versions: unkeyed SHA-256 chain, the table key
    in the boards table, user_version 0, WAL. kinds: each event's kind (coins by default)."""
    con = sqlite3.connect(path)
    con.execute("PRAGMA journal_mode=WAL")
    con.executescript(SCHEMA_1)
    prev = "0" * 64
    for q in range(1, events + 1):
        kind = kinds[q - 1] if kinds else "coin"
        body = json.dumps({"b": B, "inc": 70, "k": kind, "q": q, "seat": q % 7, "t": "ev"},
                          sort_keys=True, separators=(",", ":"))
        h = legacy_row_hash(prev, q, B, q, kind, 1700000000.0 + q, body)
        con.execute("INSERT INTO ledger VALUES (?,?,?,?,?,?,?,?)", (q, B, q, kind, 1700000000.0 + q, body, prev, h))
        prev = h
    con.execute("INSERT INTO boards(board, last_seq, table_key) VALUES (?,?,?)", (B, events, table_key_hex))
    con.commit()
    con.close()


def user_version(path):
    con = sqlite3.connect(path)
    try:
        return con.execute("PRAGMA user_version").fetchone()[0]
    finally:
        con.close()


def test_a_new_ledger_carries_the_current_schema_version(path):
    Ledger(path).close()
    assert user_version(path) == SCHEMA_VERSION == 2


def test_a_schema_1_ledger_is_upgraded_in_place_and_a_copy_kept_first(path):
    make_schema_1(path)
    led = Ledger(path)
    try:
        assert (led.upgraded_from, led.backup_path) == (1, os.path.abspath(path) + ".v1.bak")
        assert user_version(path) == SCHEMA_VERSION
        # the copy is the old file as it was: schema 1, its key still in it, mode 0600
        con = sqlite3.connect(led.backup_path)
        assert con.execute("PRAGMA user_version").fetchone()[0] == 0
        assert con.execute("SELECT table_key FROM boards").fetchone()[0] == TABLE_KEY.hex()
        assert con.execute("SELECT COUNT(*) FROM ledger").fetchone()[0] == 3
        con.close()
        assert stat.S_IMODE(os.stat(led.backup_path).st_mode) == 0o600
        # the key went to the key store and is gone from the books
        assert KeyStore.for_ledger(path).table_key(B) == TABLE_KEY
        assert led.db.execute("SELECT table_key FROM boards").fetchone()[0] is None
        # the old rows still prove themselves (unkeyed chain), the new ones are keyed on top
        assert led.record_events(B, coins(4, 5)) == (5, 2, 0, False)
        assert led.verify() == (5, [])
    finally:
        led.close()


def test_an_upgraded_ledger_verifies_clean_before_its_next_row_and_rows_cut_from_it_are_seen(path):
    make_schema_1(path)
    Ledger(path).close()
    assert problems_of(path) == []
    tamper(path, "DELETE FROM ledger WHERE id=3")
    assert problems_of(path) == ["rows 3..3 are missing from the end (the anchor names row 3)"]


def test_an_upgraded_ledger_still_names_an_edit_to_an_old_row(path):
    make_schema_1(path)
    Ledger(path).close()
    tamper(path, "UPDATE ledger SET body=replace(body, '\"inc\":70', '\"inc\":1') WHERE id=2")
    assert "row 2 was edited or forged (its MAC does not match its content)" in problems_of(path)


def test_an_upgraded_ledger_is_opened_again_without_another_copy(path):
    make_schema_1(path)
    Ledger(path).close()
    led = Ledger(path)
    assert led.upgraded_from is None and led.backup_path is None
    led.close()
    assert sorted(f for f in os.listdir(os.path.dirname(path)) if ".bak" in f) == ["books.db.v1.bak"]


def test_an_upgrade_never_overwrites_an_earlier_copy(path):
    with open(path + ".v1.bak", "wb") as f:
        f.write(b"a copy kept by an earlier upgrade")
    make_schema_1(path)
    led = Ledger(path)
    led.close()
    assert led.backup_path == os.path.abspath(path) + ".v1.2.bak"
    with open(path + ".v1.bak", "rb") as f:
        assert f.read() == b"a copy kept by an earlier upgrade"


def test_an_upgrade_that_fails_leaves_the_file_as_it_was(path):
    make_schema_1(path, table_key_hex="not a key")
    with pytest.raises(TablectlError) as err:
        Ledger(path)
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("cannot upgrade the ledger %s from schema 1 to 2: " % path)
    assert message.endswith("the file is unchanged (a copy is in %s.v1.bak)" % os.path.abspath(path))
    con = sqlite3.connect(path)
    assert con.execute("PRAGMA user_version").fetchone()[0] == 0
    assert "board_mac" not in [r[1] for r in con.execute("PRAGMA table_info(ledger)")]
    assert con.execute("SELECT table_key FROM boards").fetchone()[0] == "not a key"
    assert con.execute("SELECT name FROM sqlite_master WHERE name='meta'").fetchone() is None
    con.close()


def test_a_ledger_newer_than_the_code_is_refused_by_writers_and_readers_untouched(path):
    Ledger(path).close()
    tamper(path, "PRAGMA user_version=%d" % (SCHEMA_VERSION + 1))
    with open(path, "rb") as f:
        before = f.read()
    for readonly in (False, True):
        with pytest.raises(TablectlError) as err:
            Ledger(path, readonly=readonly)
        assert str(err.value) == ("the ledger %s is schema %d, newer than this tablectl reads (schema %d): "
                                  "use the tablectl that wrote it, or a newer one"
                                  % (path, SCHEMA_VERSION + 1, SCHEMA_VERSION))
    with open(path, "rb") as f:
        assert f.read() == before
    assert not [f for f in os.listdir(os.path.dirname(path)) if ".bak" in f]


def test_a_reader_does_not_upgrade_an_older_ledger_and_says_how(path):
    make_schema_1(path)
    with pytest.raises(TablectlError) as err:
        Ledger(path, readonly=True)
    assert "is schema 1, older than this tablectl reads (schema 2): open it once for writing" in str(err.value)
    assert user_version(path) == 0
    assert not os.path.exists(path + ".v1.bak")


def test_a_file_that_is_not_a_ledger_is_refused_in_one_line(path):
    with open(path, "wb") as f:
        f.write(b"these are not the books" * 100)
    for readonly in (False, True):
        with pytest.raises(TablectlError) as err:
            Ledger(path, readonly=readonly)
        assert str(err.value).startswith("%s is not a tablectl ledger" % path)


# ---- opening, reading, and what else verify names ------------------------------------------------
def test_a_ledger_in_a_missing_folder_or_at_a_folders_path_is_refused_in_one_line(tmp_path):
    missing = str(tmp_path / "no-such-folder" / "books.db")
    with pytest.raises(TablectlError) as err:
        Ledger(missing)
    assert str(err.value) == "cannot open the ledger %s: folder %s does not exist" % (
        missing, os.path.dirname(missing))
    with pytest.raises(TablectlError) as err:
        Ledger(str(tmp_path))
    assert str(err.value) == "cannot open the ledger %s: it is a folder" % tmp_path


def test_a_reader_without_the_ledger_key_cannot_write_a_row(keyed, path):
    keyed.record_events(B, coins(1, 1))
    os.unlink(os.path.join(KeyStore.for_ledger(path).folder, "ledger.key"))
    led = Ledger(path, readonly=True)
    try:
        with pytest.raises(TablectlError) as err:
            led.note(B, "intent", {"cmd": "lock"})
        assert str(err.value).startswith("no ledger key in ") and str(err.value).endswith(
            ": this ledger cannot be written")
    finally:
        led.close()


def test_boards_and_a_limited_read_of_the_events(keyed):
    keyed.record_events("b2", [signed_event(None, 1, "coin", "b2", seat=0, inc=70)])
    keyed.record_events(B, coins(1, 3))
    assert keyed.boards() == ["b1", "b2"]
    assert [(r["board"], r["seq"]) for r in keyed.events(limit=2)] == [("b2", 1), (B, 1)]
    assert [r["seq"] for r in keyed.events(B, after_id=2, limit=1)] == [2]  # row 2 is b1's #1


def test_a_resend_of_an_event_from_before_the_ledger_began_is_a_duplicate_not_a_conflict(keyed):
    """Restored from a backup (the board said #1..#4 were acknowledged): its #3 again is counted as
    a duplicate, with no row, since the ledger never held #3 to compare."""
    keyed.record_events(B, coins(5, 6), board_acked=4)
    assert keyed.record_events(B, coins(3, 3)) == (6, 0, 1, False)
    assert [r["kind"] for r in keyed.events(B)] == ["resync", "coin", "coin"]


def test_an_empty_ledger_with_no_anchor_verifies_clean(path):
    led = Ledger(path)
    try:
        assert not os.path.exists(anchor_of(path)) and led.verify() == (0, [])
    finally:
        led.close()


def test_an_anchor_with_no_readable_slot_is_named(keyed, path):
    keyed.record_events(B, coins(1, 2))
    with open(anchor_of(path), "wb") as f:
        f.write(b"\x00" * 512)  # neither slot parses (not edited: unreadable)
    assert problems_of(path) == ["the anchor %s is unreadable" % anchor_of(path)]


def test_a_row_replaced_under_the_anchor_is_named(keyed, path):
    keyed.record_events(B, coins(1, 2))
    tamper(path, "UPDATE ledger SET hash=? WHERE id=2", ("0" * 64,))
    problems = problems_of(path)
    assert "row 2 is not the row the anchor names (replaced?)" in problems
    assert "row 2 was edited or forged (its MAC does not match its content)" in problems


def test_an_event_body_that_is_not_json_and_a_resync_note_that_says_nothing_are_named(keyed, path):
    keyed.record_events(B, coins(1, 2))
    keyed.record_events(B, [signed_event(TABLE_KEY, 6, "storage_repaired", B, skipped_from=3, skipped_to=5)])
    resync_id = list(keyed.events(B, kinds=["resync"]))[0]["id"]
    tamper(path, "UPDATE ledger SET body='not json' WHERE id=2")
    tamper(path, "UPDATE ledger SET body='{}' WHERE kind='resync'")
    problems = problems_of(path)
    assert "row 2: the event body is not JSON" in problems
    assert "row %d: a resync note that does not say what it skipped" % resync_id in problems
    assert "row 2 was edited or forged (its MAC does not match its content)" in problems


def test_an_upgrade_keeps_a_table_key_the_key_store_already_holds(path):
    # Another host's copy of the books may carry an old key in the file; the key store's is the
    # current one (provisioned since): the upgrade never overwrites it.
    current = bytes(range(100, 132))
    KeyStore.for_ledger(path).set_table_key(B, current)
    make_schema_1(path)  # its file still names TABLE_KEY for B
    Ledger(path).close()
    assert KeyStore.for_ledger(path).table_key(B) == current
    con = sqlite3.connect(path)
    try:
        assert con.execute("SELECT table_key FROM boards").fetchone()[0] is None
    finally:
        con.close()


def test_an_empty_schema_1_ledger_is_upgraded_with_no_legacy_rows(path):
    make_schema_1(path, events=0)
    led = Ledger(path)
    try:
        assert led.upgraded_from == 1
        assert led.db.execute("SELECT value FROM meta WHERE name='legacy_rows'").fetchone() is None
        led.record_events(B, coins(1, 2))
        assert led.verify() == (2, [])  # every row keyed: none may pass as a legacy row
    finally:
        led.close()


def test_an_edited_count_of_legacy_rows_is_named(path):
    # Widening the count would let keyed rows be checked as unkeyed legacy rows (forgeable).
    make_schema_1(path)
    led = Ledger(path)
    led.record_events(B, coins(4, 5))
    led.close()
    tamper(path, "UPDATE meta SET value=replace(value, '[3,', '[5,') WHERE name='legacy_rows'")
    # and the count is not used: every row is then checked as a keyed row (the old ones fail)
    assert problems_of(path) == ["the count of rows from before keyed MACs was edited"] + [
        MAC_PROBLEM % r for r in (1, 2, 3)]


def _archived(keyed, path):
    """Rows 1..3 moved to an archive (tablectl audit archive), rows 4..5 live."""
    from tablectl.archive import archive
    keyed.record_events(B, coins(1, 3))
    cut = __import__("time").time() + 0.001
    while __import__("time").time() <= cut:
        pass
    keyed.record_events(B, coins(4, 5))
    done = archive(keyed, cut)
    assert (done["first"], done["last"]) == (1, 3)
    return done["file"]


def test_an_archive_verifies_against_its_seal_and_rows_cut_from_it_are_named(keyed, path):
    archive_file = _archived(keyed, path)
    assert keyed.verify() == (2, [])  # the live rows go on from the archive's last
    def archive_problems():
        arch = Ledger(archive_file, readonly=True, keys=keyed.keys)  # the live ledger's keys prove it
        try:
            return arch.verify()
        finally:
            arch.close()
    assert archive_problems() == (3, [])
    tamper(archive_file, "DELETE FROM ledger WHERE id=3")
    assert archive_problems() == (2, ["the archive's rows do not end where its seal says (row 3): rows cut or added"])


def test_an_edited_or_unreadable_archive_record_is_named_and_not_used(keyed, path):
    _archived(keyed, path)
    tamper(path, "UPDATE meta SET value=replace(value, '\"through\": 3', '\"through\": 2') WHERE name='archived'")
    assert "the ledger's archived record was edited" in problems_of(path)
    tamper(path, "UPDATE meta SET value='[not json' WHERE name='archived'")
    assert "the ledger's archived record is unreadable" in problems_of(path)


def test_two_writers_opening_an_old_ledger_at_once_upgrade_it_once(path, monkeypatch):
    # `tablectl serve` and `tablectl audit` started together on a schema-1 file: both see schema 1,
    # one takes the write lock and upgrades; the other, once it has the lock, finds schema 2 and
    # leaves it (no second copy, no second step over upgraded rows).
    import threading
    import tablectl.ledger as ledger_mod
    make_schema_1(path)
    first_copying, second_checked = threading.Event(), threading.Event()
    second = []
    real_schema_of, real_keep_copy = ledger_mod._schema_of, Ledger._keep_copy
    calls = {}

    def schema_of(db):
        version = real_schema_of(db)
        me = threading.current_thread()
        calls[me] = calls.get(me, 0) + 1
        if me.name == "second" and calls[me] == 2:  # its unlocked check in _migrate, before BEGIN IMMEDIATE
            second_checked.set()
        return version

    def keep_copy(self, version):
        first_copying.set()  # the first writer holds the write lock here
        assert second_checked.wait(10), "the second writer never checked the schema"
        return real_keep_copy(self, version)
    monkeypatch.setattr(ledger_mod, "_schema_of", schema_of)
    monkeypatch.setattr(Ledger, "_keep_copy", keep_copy)
    opened = []
    first = threading.Thread(target=lambda: opened.append(Ledger(path)), name="first")
    first.start()
    assert first_copying.wait(10)
    t = threading.Thread(target=lambda: second.append(Ledger(path)), name="second")
    t.start()
    first.join(20)
    t.join(40)
    try:
        [a], [b] = opened, second
        assert (a.upgraded_from, b.upgraded_from, b.backup_path) == (1, None, None)
        assert calls[t] == 3  # and its third look, under the lock, found schema 2
        assert user_version(path) == SCHEMA_VERSION and b.verify() == (3, [])
        assert sorted(f for f in os.listdir(os.path.dirname(path)) if ".bak" in f) == ["books.db.v1.bak"]
    finally:
        for led in opened + second:
            led.close()


def test_a_resend_against_a_row_whose_body_was_tampered_is_kept_as_a_conflict_not_a_crash(keyed, path):
    # The board resends #2 (its ack was lost); the row the ledger holds for #2 no longer parses. The
    # batch must still commit (or the board is never acknowledged): the resend is kept beside it.
    keyed.record_events(B, coins(1, 2))
    tamper(path, "UPDATE ledger SET body='not json' WHERE seq=2")
    assert keyed.record_events(B, coins(2, 2)) == (2, 0, 0, False)
    kinds = [r[0] for r in sqlite3.connect(path).execute("SELECT kind FROM ledger ORDER BY id")]
    assert kinds == ["coin", "coin", "seq_conflict"]
    assert "row 2 was edited or forged (its MAC does not match its content)" in problems_of(path)


def test_dropping_the_meta_table_does_not_pass_verify(path):
    # The meta table holds the signed count of legacy (unkeyed) rows and the archive record: an
    # attacker who drops it does not get the rows accepted; they are checked as keyed rows.
    make_schema_1(path)
    led = Ledger(path)
    led.record_events(B, coins(4, 4))
    led.close()
    tamper(path, "DROP TABLE meta")
    problems = problems_of(path)
    assert "row 1 was edited or forged (its MAC does not match its content)" in problems


def test_a_deleted_anchor_is_named(keyed, path):
    # Deleting the anchor along with the last rows would hide the cut: its absence is a problem.
    keyed.record_events(B, coins(1, 3))
    os.unlink(anchor_of(path))
    tamper(path, "DELETE FROM ledger WHERE id=3")
    assert problems_of(path) == ["the anchor %s is missing: rows cut from the end could not be seen"
                                 % anchor_of(path)]


def test_a_batch_the_disk_cannot_hold_is_refused_whole_and_the_books_go_on_when_there_is_room(keyed, path):
    # docs/RELIABILITY.md: an event is acknowledged only once its row is committed. A full disk
    # (SQLite's own page limit here: SQLITE_FULL, as from a full file system) fails the batch with
    # an error (so the service acknowledges nothing) and leaves no row of it; SQLite has already
    # rolled the transaction back by itself. When there is room, the board's resend is taken.
    keyed.record_events(B, coins(1, 2))
    pages = keyed.db.execute("PRAGMA page_count").fetchone()[0]
    keyed.db.execute("PRAGMA max_page_count=%d" % pages)
    big = [signed_event(TABLE_KEY, q, "coin", B, seat=0, inc=70, note="x" * 800) for q in range(3, 60)]
    with pytest.raises(sqlite3.OperationalError, match="full"):
        keyed.record_events(B, big)
    assert not keyed.db.in_transaction and [r["seq"] for r in keyed.events(B)] == [1, 2]
    keyed.db.execute("PRAGMA max_page_count=1073741823")
    assert keyed.record_events(B, big[:2]) == (4, 2, 0, False)
    assert keyed.verify() == (4, [])


# ---- every column is under the row's MAC ------------------------------------------------------
# docs/SECURITY.md "Tamper-evident books": an edited row no longer checks. The other checks (the
# event's own fields, the board's MAC, the sequence) catch some edits of an event row too; the row
# MAC must catch every one by itself, so each case asserts the MAC's own problem, and a note row
# (no board MAC, no number) has nothing else to catch it.
MAC_PROBLEM = "row %d was edited or forged (its MAC does not match its content)"


@pytest.mark.parametrize("column,value", [
    ("board", "b2"), ("seq", 99), ("kind", "refused_coin"), ("recorded_at", 1.5), ("body", '{"q":2}'),
    ("board_mac", "00" * 32), ("id", 7),
])
def test_an_edit_to_any_column_of_an_event_row_breaks_its_mac(keyed, path, column, value):
    keyed.record_events(B, coins(1, 3))
    tamper(path, "UPDATE ledger SET %s=? WHERE id=2" % column, (value,))
    assert MAC_PROBLEM % (7 if column == "id" else 2) in problems_of(path)


@pytest.mark.parametrize("column,value", [
    ("board", "b2"), ("kind", "cmd"), ("recorded_at", 1.5), ("body", '{"cmd":"clear"}'), ("seq", None),
])
def test_an_edit_to_a_note_row_is_named_by_its_mac_alone(keyed, path, column, value):
    keyed.record_events(B, coins(1, 1))
    keyed.note(B, "intent", {"cmd": "lock", "args": {}, "id": 5})
    keyed.record_events(B, coins(2, 2))
    if column == "seq":
        value = None
        tamper(path, "UPDATE ledger SET board_mac=? WHERE id=2", ("ab" * 32,))  # a note carries none
        assert problems_of(path) == [MAC_PROBLEM % 2]
        return
    tamper(path, "UPDATE ledger SET %s=? WHERE id=2" % column, (value,))
    assert problems_of(path) == [MAC_PROBLEM % 2]


def test_a_row_chained_to_another_predecessor_is_named(keyed, path):
    keyed.record_events(B, coins(1, 3))
    tamper(path, "UPDATE ledger SET prev_hash=(SELECT hash FROM ledger WHERE id=1) WHERE id=3")
    problems = problems_of(path)
    assert "row 3 does not follow the row before it (deleted, inserted or reordered)" in problems
    assert MAC_PROBLEM % 3 in problems


# ---- the anchor ---------------------------------------------------------------------------------
def test_the_anchor_is_two_slots_written_in_turn_and_never_grows(keyed, path):
    """docs/SECURITY.md: two fixed 256-byte slots, the newest row in slot (row % 2): a crash tears
    at most the slot being written, and the other names the row before it."""
    for q in range(1, 6):
        keyed.record_events(B, coins(q, q))
    with open(anchor_of(path), "rb") as f:
        data = f.read()
    assert len(data) == 512
    slots = [json.loads(data[i:i + 256]) for i in (0, 256)]
    assert [s["row"] for s in slots] == [4, 5]
    assert [s["mac"] for s in slots] == [r[0] for r in keyed.db.execute("SELECT hash FROM ledger WHERE id IN (4, 5) "
                                                                          "ORDER BY id")]


def _anchor_left_beside(path):
    """Books with rows 1..3 whose anchor is where earlier versions kept it: <db>.anchor, beside
    the ledger, none in the key store. Returns that path."""
    KeyStore.for_ledger(path).set_table_key(B, TABLE_KEY)
    led = Ledger(path)
    try:
        led.record_events(B, coins(1, 3))
    finally:
        led.close()
    beside = os.path.abspath(path) + ".anchor"
    os.rename(anchor_of(path), beside)
    return beside


def test_books_no_writer_of_this_version_opened_are_proved_against_the_anchor_beside_them(path):
    beside = _anchor_left_beside(path)
    assert problems_of(path) == []
    tamper(path, "DELETE FROM ledger WHERE id = 3")
    assert problems_of(path) == ["rows 3..3 are missing from the end (the anchor names row 3)"]
    # a reader moves nothing: the anchor is still beside the books, none in the key store
    assert os.path.exists(beside) and not os.path.exists(anchor_of(path))


def test_the_first_writer_moves_an_anchor_beside_the_books_into_the_key_store_as_it_is(path):
    beside = _anchor_left_beside(path)
    led = Ledger(path)
    try:
        led.record_events(B, coins(4, 4))
        with open(anchor_of(path), "rb") as f:
            data = f.read()
        # row 4 in its slot (0), the old file's slot 1 naming row 3 kept as it was; no copy beside
        assert [(row, good) for row, _mac, good in anchor_slots(led.key, data)] == [(4, True), (3, True)]
        assert not os.path.exists(beside)
        assert stat.S_IMODE(os.stat(anchor_of(path)).st_mode) == 0o600
        assert led.verify() == (4, [])
    finally:
        led.close()
    tamper(path, "DELETE FROM ledger WHERE id = 4")
    assert problems_of(path) == ["rows 4..4 are missing from the end (the anchor names row 4)"]


# ---- upgrades -----------------------------------------------------------------------------------
def test_an_upgrade_takes_the_first_copy_name_no_earlier_upgrade_used(path):
    for name in (".v1.bak", ".v1.2.bak"):
        with open(path + name, "wb") as f:
            f.write(b"kept")
    make_schema_1(path)
    led = Ledger(path)
    led.close()
    assert led.backup_path == os.path.abspath(path) + ".v1.3.bak"


# ---- a gap is explained only by numbers ----------------------------------------------------------
@pytest.mark.parametrize("skipped_from,skipped_to", [(True, 2), ("1", 2), (1.0, 2), (1, 2.0)])
def test_a_storage_repair_whose_numbers_are_not_whole_numbers_explains_nothing(keyed, skipped_from, skipped_to):
    """A skipped range must be given in whole numbers (a boolean or a float is not one, though
    Python compares True and 2.0 equal to 1 and 2): otherwise the gap stays a gap, and nothing
    crashes."""
    repaired = signed_event(TABLE_KEY, 3, "storage_repaired", B, skipped_from=skipped_from, skipped_to=skipped_to)
    assert keyed.record_events(B, [repaired]) == (0, 0, 0, True)
    assert list(keyed.events(B)) == []
    # the same repair in whole numbers explains the gap
    repaired = signed_event(TABLE_KEY, 3, "storage_repaired", B, skipped_from=1, skipped_to=2)
    assert keyed.record_events(B, [repaired]) == (3, 1, 0, False)


def test_a_reader_of_a_file_with_no_ledger_in_it_is_refused_in_one_line(path):
    """An empty file, or another program's SQLite database: a reader says so when it opens (a
    writer would create the schema; a reader never writes)."""
    con = sqlite3.connect(path)
    con.execute("CREATE TABLE other (x)")
    con.commit()
    con.close()
    with pytest.raises(TablectlError) as err:
        Ledger(path, readonly=True)
    assert str(err.value) == "%s is not a tablectl ledger (it holds no ledger table)" % path
    assert user_version(path) == 0


def test_a_schema_1_ledger_that_already_has_the_board_mac_column_is_upgraded(path):
    """A file of the first keyed tablectl (the column added, no version number yet): the upgrade
    keeps the column it finds instead of failing to add it twice."""
    make_schema_1(path)
    tamper(path, "ALTER TABLE ledger ADD COLUMN board_mac TEXT")
    led = Ledger(path)
    try:
        assert led.upgraded_from == 1 and user_version(path) == SCHEMA_VERSION
        assert [r[1] for r in led.db.execute("PRAGMA table_info(ledger)")].count("board_mac") == 1
        assert KeyStore.for_ledger(path).table_key(B) == TABLE_KEY
        assert led.record_events(B, coins(4, 4)) == (4, 1, 0, False)
        assert led.verify() == (4, [])
    finally:
        led.close()


# ---- a genuine signed event filed as something it is not -----------------------------------------
# Someone holding the ledger key (not the table key) can chain a row with a valid row MAC around a
# genuine signed event; the board's MAC then checks too. What the board signed still says which
# board, number and kind it is: verify compares it with the row's columns.
# Each case changes one column only, the other two still the signed event's, so that the check of
# that column alone is what names the row (a verify that skipped it would pass the case).
@pytest.mark.parametrize("field,value", [("q", 3), ("k", "refused_coin"), ("b", "b2")])
def test_a_signed_event_filed_under_another_number_kind_or_board_is_named(keyed, field, value):
    replay = dict(coins(2, 2)[0])
    replay[field] = value            # the row's column; the signed bytes still say #2, coin, b1
    if field == "b":                 # b2 (same key here) has its own #1; b1's #2 filed as b2's #2
        KeyStore.for_ledger(keyed.path).set_table_key("b2", TABLE_KEY)
        keyed.record_events("b2", [signed_event(TABLE_KEY, 1, "coin", "b2", seat=0, inc=70)])
        assert keyed.record_events("b2", [replay]) == (2, 1, 0, False)
    elif field == "q":               # b1's #1 and #2 there; b1's #2 filed again as #3
        keyed.record_events(B, coins(1, 2))
        assert keyed.record_events(B, [replay]) == (3, 1, 0, False)
    else:                            # b1's #1 there; its #2, a coin, filed as #2 refused_coin
        keyed.record_events(B, coins(1, 1))
        assert keyed.record_events(B, [replay]) == (2, 1, 0, False)
    row = keyed.db.execute("SELECT id, board, seq, kind FROM ledger ORDER BY id DESC LIMIT 1").fetchone()
    assert row[1:] == {"q": (B, 3, "coin"), "k": (B, 2, "refused_coin"), "b": ("b2", 2, "coin")}[field]
    assert keyed.verify()[1] == ["row %d: board, number or kind differ from the event's own" % row[0]]


def test_the_old_events_of_a_board_keyed_before_the_upgrade_need_no_board_mac(path):
    """Schema 1 kept no board MACs: its rows, the last one included, are proven by the old chain,
    though the board was provisioned among them; the rows after the upgrade are checked in full."""
    make_schema_1(path, events=3, kinds=["coin", "key_provisioned", "coin"])
    led = Ledger(path)
    try:
        assert led.verify() == (3, [])
        led.record_events(B, coins(4, 4))
        led.record_events(B, [signed_event(None, 5, "coin", B, seat=0, inc=70)])
        assert led.verify() == (5, ["row 5: event b1 #5 of a keyed board carries no board MAC (forged?)"])
    finally:
        led.close()


# ---- what verify and recording say, exactly --------------------------------------------------------
def test_several_deleted_rows_are_named_as_one_range(keyed, path):
    keyed.record_events(B, coins(1, 5))
    tamper(path, "DELETE FROM ledger WHERE id IN (2, 3)")
    problems = problems_of(path)
    assert "rows 2..3 missing (deleted?) before row 4" in problems
    assert "events b1 #2..#3 are missing (no signed resync explains them)" in problems


def test_an_anchor_whose_every_slot_was_edited_is_named_once_as_edited(keyed, path):
    keyed.record_events(B, coins(1, 1))
    keyed.record_events(B, coins(2, 2))
    with open(anchor_of(path), "rb") as f:
        data = f.read()
    with open(anchor_of(path), "wb") as f:
        f.write(data.replace(b'"row": 1', b'"row": 8').replace(b'"row": 2', b'"row": 9'))
    assert problems_of(path) == ["the anchor %s was edited" % anchor_of(path)]


def test_a_board_the_ledger_never_heard_saying_it_had_events_acknowledged_is_named(keyed):
    keyed.record_events(B, coins(1, 2))
    assert keyed.verify(board_acked={"b9": 1, "b8": 0, B: None})[1] == [
        "board b9 says events up to #1 were acknowledged, the ledger ends at #0 (rows cut from the end?)"]


def test_a_board_that_had_fewer_acknowledged_than_the_missing_numbers_leaves_a_gap(keyed):
    """The board's own word explains a gap only when it covers every missing number: acknowledged
    up to #3 explains nothing about #4 when #5 arrives at an empty ledger."""
    assert keyed.record_events(B, coins(5, 5), board_acked=3) == (0, 0, 0, True)
    assert list(keyed.events(B)) == []
    assert keyed.record_events(B, coins(5, 5), board_acked=4) == (5, 1, 0, False)


def test_an_unsigned_event_under_a_used_number_is_kept_whole_as_a_conflict(tmp_path):
    led = Ledger(str(tmp_path / "plain.db"))
    try:
        first = {"t": "ev", "b": B, "k": "coin", "q": 1, "seat": 0, "inc": 70}
        other = dict(first, inc=999, _note="the link's own field, not the board's")
        led.record_events(B, [first])
        assert led.record_events(B, [other]) == (1, 0, 0, False)
        conflict = list(led.events(B, kinds=["seq_conflict"]))[0]["body"]
        assert conflict == {"seq": 1, "board_mac": None,
                            "event": {"t": "ev", "b": B, "k": "coin", "q": 1, "seat": 0, "inc": 999}}
    finally:
        led.close()


def test_an_edited_anchor_slot_does_not_hide_what_the_other_slot_shows(keyed, path):
    """Editing one slot does not stop verify reading the other: rows cut from the end are still
    named against it."""
    for q in (1, 2, 3):
        keyed.record_events(B, coins(q, q))   # row 2 in slot 0, row 3 in slot 1
    with open(anchor_of(path), "r+b") as f:
        slot0 = f.read(256)
        f.seek(0)
        f.write(slot0.replace(b'"row": 2', b'"row": 7'))
    tamper(path, "DELETE FROM ledger WHERE id=3")
    assert problems_of(path) == ["the anchor %s was edited" % anchor_of(path),
                                 "rows 3..3 are missing from the end (the anchor names row 3)"]


def test_a_storage_repair_that_leaves_the_first_missing_number_out_explains_nothing(keyed):
    keyed.record_events(B, coins(1, 2))
    repaired = signed_event(TABLE_KEY, 6, "storage_repaired", B, skipped_from=4, skipped_to=5)  # #3 not in it
    assert keyed.record_events(B, [repaired]) == (2, 0, 0, True)


def test_an_unsigned_key_provisioned_event_of_a_keyed_board_is_named(keyed):
    """The board signs its key_provisioned event with the new key: from that event on (itself
    included) every event carries a board MAC."""
    keyed.record_events(B, [signed_event(None, 1, "coin", B, seat=0, inc=70),
                            signed_event(None, 2, "key_provisioned", B)])
    assert keyed.verify()[1] == ["row 2: event b1 #2 of a keyed board carries no board MAC (forged?)"]


def test_an_unsigned_resend_against_a_row_whose_body_was_tampered_is_kept_as_a_conflict(tmp_path):
    path = str(tmp_path / "plain.db")
    led = Ledger(path)
    try:
        first = {"t": "ev", "b": B, "k": "coin", "q": 1, "seat": 0, "inc": 70}
        led.record_events(B, [first])
        tamper(path, "UPDATE ledger SET body='not json' WHERE seq=1")
        assert led.record_events(B, [first]) == (1, 0, 0, False)
        assert [r[0] for r in led.db.execute("SELECT kind FROM ledger ORDER BY id")] == ["coin", "seq_conflict"]
    finally:
        led.close()


def test_a_body_is_stored_as_canonical_json(keyed, path):
    """Sorted keys, no spaces: the same note or event always has the same bytes (what the row MAC
    and any later audit tool read)."""
    keyed.note(B, "intent", {"cmd": "lock", "args": {"z": 1, "a": 2}, "id": 5})
    keyed.record_events(B, [{"t": "ev", "q": 1, "k": "coin", "b": B, "seat": 0, "inc": 70}])
    bodies = [r[0] for r in keyed.db.execute("SELECT body FROM ledger ORDER BY id")]
    assert bodies == ['{"args":{"a":2,"z":1},"cmd":"lock","id":5}',
                      '{"b":"b1","inc":70,"k":"coin","q":1,"seat":0,"t":"ev"}']


def test_an_upgrade_step_sqlite_abandons_by_itself_leaves_the_file_as_it_was(path, monkeypatch):
    """Some errors (a full disk, an interrupt) make SQLite roll the transaction back by itself:
    the upgrade then says why in one line and does not try a second rollback."""
    import tablectl.ledger as ledger_mod

    def interrupted_step(led):
        ledger_mod.Ledger._schema_1_to_2(led)
        led.db.set_progress_handler(lambda: 1, 1)    # SQLite abandons the next statement, and the transaction
        try:
            led.db.execute("UPDATE boards SET port='x'")
        finally:
            led.db.set_progress_handler(None, 1)
    monkeypatch.setattr(ledger_mod, "MIGRATIONS", [(1, interrupted_step)])
    make_schema_1(path)
    with pytest.raises(TablectlError) as err:
        Ledger(path)
    assert str(err.value).startswith("cannot upgrade the ledger %s from schema 1 to 2: interrupted; the file is "
                                     "unchanged" % path)
    assert user_version(path) == 0
    con = sqlite3.connect(path)
    try:
        assert "board_mac" not in [r[1] for r in con.execute("PRAGMA table_info(ledger)")]
    finally:
        con.close()


# --- what the ledger reads back of its own history: last_boot, signoff_for, alarms ----------------
def _crafted_row(led, kind, body):
    """A row as only someone writing the file by hand would leave it (its MAC chained all the same)."""
    led._transaction(lambda tip: (led._insert(tip, B, None, kind, body), None))


def test_the_last_boot_is_the_newest_boot_count_filed(keyed):
    assert keyed.last_boot(B) is None
    keyed.record_events(B, [signed_event(TABLE_KEY, 1, "boot", B, boots=4),
                            signed_event(TABLE_KEY, 2, "boot", B, boots=5)])
    assert keyed.last_boot(B) == 5


def test_a_resync_signoff_the_ledger_cannot_read_is_passed_over_for_one_it_can(keyed):
    keyed.sign_off_resync(B, 1, 9, "old copy put back", "tech 7")
    _crafted_row(keyed, "resync_signoff", '{"to": 9}')  # no "from": newer, and read first
    row = keyed.signoff_for(B, 2, 3)
    assert row is not None and row[1:] == ("tech 7", "old copy put back")


def test_alarms_pass_over_a_row_they_cannot_read_and_still_see_the_history_after_it(keyed):
    _crafted_row(keyed, "boot", "not json")
    keyed.record_events(B, [signed_event(TABLE_KEY, 1, "boot", B, boots=3)])
    _crafted_row(keyed, "boot", json.dumps({"boots": 2}))
    assert any("boot count went back from 3 to 2" in line for line in keyed.alarms(B)), keyed.alarms(B)


def test_an_event_kept_under_a_held_number_is_no_boot_alarm_whatever_fields_it_carries(keyed):
    """A board may put any field in an event: a coin under a number the ledger holds, carrying a
    "boots" it has no business with, is a seq_conflict alarm, not a boot count that went back."""
    keyed.record_events(B, [signed_event(TABLE_KEY, 1, "boot", B, boots=1),
                            signed_event(TABLE_KEY, 2, "boot", B, boots=2)])
    keyed.record_events(B, [signed_event(TABLE_KEY, 2, "coin", B, seat=0, inc=70, boots=1)])
    alarms = keyed.alarms(B)
    assert any("seq_conflict" in line for line in alarms), alarms
    assert not any("boot count went back" in line for line in alarms), alarms


def test_a_boot_row_that_cannot_be_read_gives_no_last_boot_and_no_crash(keyed, path):
    """The service compares a board's hello with the last boot filed: a boot row damaged in the
    file (which verify names) gives no count to compare, rather than stopping the service."""
    keyed.record_events(B, [signed_event(TABLE_KEY, 1, "boot", B, boots=4)])
    for body in ("not json", "[4]"):
        tamper(path, "UPDATE ledger SET body=? WHERE seq=1", (body,))
        assert keyed.last_boot(B) is None
    assert MAC_PROBLEM % 1 in problems_of(path)


def test_a_boot_count_that_is_not_a_whole_number_is_no_count_in_the_alarms(keyed):
    keyed.record_events(B, [signed_event(TABLE_KEY, 1, "boot", B, boots=True),
                            signed_event(TABLE_KEY, 2, "boot", B, boots="9"),
                            signed_event(TABLE_KEY, 3, "boot", B, boots=1)])
    assert keyed.alarms(B) == []  # true is not boot 1, "9" not boot 9: boot 1 went back from neither


def test_a_boot_kept_under_a_held_number_with_a_lower_count_is_a_boot_alarm(keyed):
    """A board whose journal went back re-uses its numbers: its boot event under a number the
    ledger holds (a seq_conflict row) still counts for the boot history."""
    keyed.record_events(B, [signed_event(TABLE_KEY, 1, "boot", B, boots=1),
                            signed_event(TABLE_KEY, 2, "boot", B, boots=2)])
    keyed.record_events(B, [signed_event(TABLE_KEY, 2, "boot", B, boots=1)])
    assert keyed.alarms(B) == [
        "row 3: board b1 boot count went back from 2 to 1 (its flash went back?)",
        "board b1: 1 events under numbers the ledger already holds (seq_conflict, #2..#2): its journal went back "
        "or was replaced; reconcile counts their money"]


def test_a_board_that_came_back_behind_the_ledger_is_an_alarm_of_verify(keyed):
    # the row the service writes when a signed hello's boot count is below the ledger's newest
    keyed.record_events(B, [signed_event(TABLE_KEY, 1, "boot", B, boots=5)])
    keyed.note(B, "rollback", {"boots": 3, "ledger_boots": 5})
    line = ("row 2: board b1 came back as boot 3, the ledger holds boot 5: its flash went back (an old copy of "
            "its journal put back?)")
    assert keyed.alarms(B) == [line]
    assert keyed.verify()[1] == [line]


def test_a_conflict_row_whose_event_cannot_be_read_is_still_an_alarm_but_carries_no_money(keyed):
    """Reconcile counts the money of the events kept under held numbers (conflict_events): one
    whose event text cannot be read, or is not an event, is left out of the count; the number used
    twice is an alarm all the same."""
    keyed.record_events(B, coins(1, 2))
    keyed.record_events(B, [signed_event(TABLE_KEY, 2, "coin", B, seat=5, inc=999)])
    _crafted_row(keyed, "seq_conflict", {"seq": 1, "event": "{not json"})
    _crafted_row(keyed, "seq_conflict", {"seq": 2, "event": "[1, 2]"})
    assert [(e["q"], e["inc"]) for e in keyed.conflict_events(B)] == [(2, 999)]
    assert keyed.alarms(B) == [
        "board b1: 3 events under numbers the ledger already holds (seq_conflict, #1..#2): its journal went back "
        "or was replaced; reconcile counts their money"]


def test_conflict_events_pass_over_a_row_that_is_not_an_object(keyed):
    keyed.record_events(B, coins(1, 1))
    _crafted_row(keyed, "seq_conflict", "[1]")
    keyed.record_events(B, [signed_event(TABLE_KEY, 1, "coin", B, seat=5, inc=999)])
    assert [(e["q"], e["inc"]) for e in keyed.conflict_events(B)] == [(1, 999)]
    # The alarm still counts the edited row: its kind says the board's history went back.
    assert keyed.alarms(B) == [
        "board b1: 2 events under numbers the ledger already holds (seq_conflict, #1..#1): its journal went back "
        "or was replaced; reconcile counts their money"]


@pytest.mark.parametrize("kind, body", [("seq_conflict", "[2]"), ("seq_conflict", "null"), ("rollback", '"x"')])
def test_an_alarm_row_edited_to_json_that_is_not_an_object_is_named_by_verify_not_a_crash(keyed, path, kind, body):
    # Someone with the file rewrites an alarm row's body to valid JSON of another shape: verify
    # (which lists the alarms too) names the edited row instead of stopping with a traceback.
    keyed.record_events(B, [signed_event(TABLE_KEY, q, "coin", B, seat=0, inc=70) for q in (1, 2)])
    if kind == "seq_conflict":
        keyed.record_events(B, [signed_event(TABLE_KEY, 2, "coin", B, seat=5, inc=999)])
    else:
        keyed.note(B, "rollback", {"boots": 3, "ledger_boots": 5})
    tamper(path, "UPDATE ledger SET body=? WHERE id=3", (body,))
    assert MAC_PROBLEM % 3 in problems_of(path)
    again = Ledger(path)
    try:
        assert len(again.alarms(B)) == 1
    finally:
        again.close()
