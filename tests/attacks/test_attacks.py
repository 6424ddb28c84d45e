"""Money integrity under attack: one test per attack on the money path (docs/SECURITY.md), each run
against the virtual board (real firmware on MicroPython) and the real service, with the attacker
on the serial line (attackkit.Wire), at the host's files, at the control socket, or at the power.
Each asserts the attack is refused and that nothing is lost. docs/SECURITY.md lists them.

Rulebook 000 rule 9.1 (../shared/seeds/000_*): a player is in the progressive only with the token
placed before the deal; 9.3: the royal pays 100 % of the jackpot, the straight flush 10 % (or the
fixed sum chosen when the game is put into play).
"""
import json
import os
import socket
import sqlite3
import stat
import time

import pytest

from table import protocol as proto

from attackkit import ask_as_another_user, other_user_route, table  # noqa: F401 (the fixture)

ROYAL = "As Ks Qs Js Ts"
STRAIGHT_FLUSH = "9h 8h 7h 6h 5h"


def _deal_round(table, seats=(1,)):
    """Tokens at these seats, then the dealer locks (the deal)."""
    for seat in seats:
        table.coin(seat)
    table.key("lock")


def _jackpot(table, *pairs, check=True):
    args = ["jackpot", "--json"]
    for seat, cards in pairs:
        args += ["--seat", seat, "--cards", cards]
    return table.cli(*args, check=check)


def _reconcile_ok(table):
    p = table.cli("reconcile", "--json", check=False)
    assert p.returncode == 0, p.stdout + p.stderr
    return json.loads(p.stdout)


# 1 -------------------------------------------------------------------------------------------
def test_1_unsigned_unlock_and_lock_on_the_wire_change_nothing(table):
    table.provision()
    _deal_round(table, seats=(2,))
    round_no = table.status()["round"]
    # the attacker writes unsigned unlock + lock straight onto the board's line
    for i, name in enumerate(("unlock", "lock")):
        table.wire.inject_to_board(proto.encode_frame(proto.command(900 + i, name, {})))
    time.sleep(0.6)
    status = table.status()
    assert status["base_state"] == "LOCKED" and status["round"] == round_no
    assert status["seats_eligible"] == [2]  # seat 2 still in, nobody else
    table.key("jackpot")
    refused = _jackpot(table, (1, ROYAL), check=False)
    assert refused.returncode == 1 and "no progressive token" in refused.stderr
    paid = json.loads(_jackpot(table, (2, ROYAL)).stdout)
    assert paid["payments"][0]["seat"] == 2
    assert table.count("award") == 1


# 2 -------------------------------------------------------------------------------------------
def test_2_a_seat_is_paid_once_per_round_however_often_the_jackpot_is_run(table):
    table.provision()
    _deal_round(table, seats=(3,))
    table.key("jackpot")
    meter = table.meters()["meter_cents"]
    first = json.loads(_jackpot(table, (3, STRAIGHT_FLUSH)).stdout)["payments"][0]
    assert first["amount_cents"] == meter // 10
    again = json.loads(_jackpot(table, (3, STRAIGHT_FLUSH)).stdout)["payments"][0]  # same: a repeat
    assert again["repeat"] is True
    other = json.loads(_jackpot(table, (3, ROYAL)).stdout)["payments"][0]  # other cards, same seat
    assert other["repeat"] is True  # the same award id: the board repeats its first reply, pays nothing
    table.settle()
    assert table.count("award") == 1
    assert table.meters()["hits"] == 1
    _reconcile_ok(table)


# 3 -------------------------------------------------------------------------------------------
def test_3_power_cut_after_the_award_then_a_retry_pays_once(table):
    table.provision()
    _deal_round(table, seats=(1,))
    table.key("jackpot")
    meter = table.meters()["meter_cents"]
    _jackpot(table, (1, STRAIGHT_FLUSH))
    table.bench.power_cut()  # the award is one journal record: on flash or not at all
    table.wait(lambda: table.status()["boot_count"] >= 2, "the board to boot again")
    retry = json.loads(_jackpot(table, (1, STRAIGHT_FLUSH)).stdout)["payments"][0]
    assert retry["repeat"] is True
    table.settle()
    meters = table.meters()
    assert meters["hits"] == 1 and meters["meter_cents"] == meter - meter // 10
    assert table.count("award") == 1
    _reconcile_ok(table)


# 4 -------------------------------------------------------------------------------------------
def test_4_a_forged_event_toward_the_host_is_not_filed(table):
    table.provision()
    table.coin(1)
    table.settle()
    nxt = table.status()["next_event_seq"]
    board = table.status()["board"]
    forged = {"t": "ev", "b": board, "k": "award", "q": nxt, "ms": 1, "seat": 0, "round": 1,
              "amount": 500000, "from_meter": False, "meter_cents": 0, "reset": False, "hand": "royal flush"}
    table.wire.inject_to_host(proto.encode_frame(forged))
    table.wire.inject_to_host(proto.encode_frame(forged, b"\x00" * 32))  # a guessed key
    table.coin(2)  # the board's real event with that number
    table.settle()
    assert table.count("award") == 0
    coins = table.rows("coin")
    assert [e["body"]["seat"] for e in coins] == [0, 1]
    assert nxt in [e["seq"] for e in coins]  # the real event with that number was filed
    report = json.loads(table.cli("report", "jackpots", "--json").stdout)
    assert report["hits"] == 0
    assert table.port_loop().link.frames_refused >= 2


# 5 -------------------------------------------------------------------------------------------
def test_5_forged_acks_and_heartbeats_do_not_stand_in_for_the_host(table):
    table.provision()
    table.cli("service", "enter", check=False)  # (needs the switch: refused, harmless)
    table.coin(1)
    table.settle()
    table.stop_service()
    # while the service is down the attacker acks far ahead and keeps the board "company"
    for i in range(15):
        table.wire.inject_to_board(proto.encode_frame(proto.ack(10 ** 6)))
        table.wire.inject_to_board(proto.encode_frame(proto.heartbeat()))
        time.sleep(1.0)
    table.bench.coin(2)  # a token while the host is away: refused by the host-loss fault
    time.sleep(1.0)
    table.start_service()
    status = table.status()
    table.settle()
    led = table.ledger()
    try:
        faults = [e for e in led.events(None, ("fault",)) if e["body"]["code"] == "host"]
    finally:
        led.close()
    assert faults, "the board never noticed the host was gone"
    assert status["acked_event_seq"] <= status["next_event_seq"] - 1
    _reconcile_ok(table)
    count, problems = table.ledger().verify()
    assert problems == []


# 6 -------------------------------------------------------------------------------------------
def test_6_a_corrupt_journal_record_is_a_storage_fault_not_a_rollback(table):
    table.provision()
    for seat in (1, 2, 3):
        table.coin(seat)
    table.settle()
    before = table.meters()
    next_seq = table.status()["next_event_seq"]
    data_dir = os.path.join(table.state, "fs", "data")
    logs = [n for n in os.listdir(data_dir) if n.startswith("j") and n.endswith(".log")]
    path = os.path.join(data_dir, logs[0])
    procs_stop = __import__("tabledev.procs", fromlist=["stop"]).stop
    procs_stop(table.sim)  # power off
    raw = bytearray(open(path, "rb").read())
    assert len(raw) > 200
    raw[len(raw) // 3] ^= 0x04  # one flipped bit in a record that is not the last
    open(path, "wb").write(bytes(raw))
    table.stop_service()
    table.wire.close()
    table.start_board()
    from attackkit import Wire
    table.wire = Wire(table.port)
    table.start_service()
    status = table.status()
    assert "storage" in status["faults"]
    assert status["seats_inhibited"] == list(range(1, status["seats"] + 1))  # coin-in off
    meters = table.meters()
    assert meters["meter_cents"] >= before["meter_cents"] - 70  # at most the bad record's token is not shown
    assert status["next_event_seq"] >= next_seq
    # the signed repair, with the service key switch on, clears it and says what it skipped
    table.bench.switch(True)
    table.cli("storage", "repair", "--reason", "flash bit error found in audit")
    table.bench.switch(False)
    table.wait(lambda: "storage" not in table.status()["faults"], "the fault to clear")
    table.settle()
    seqs = [e["seq"] for e in table.rows("storage_repaired")]
    assert seqs and seqs[0] > next_seq
    count, problems = table.ledger().verify()
    assert problems == [], problems


# 7 -------------------------------------------------------------------------------------------
def _copy_db(table, name):
    import shutil
    table.stop_service()
    dst = str(table.tmp / name)
    for suffix in ("", "-wal", "-shm", ".anchor"):
        if os.path.exists(table.db + suffix):
            shutil.copy(table.db + suffix, dst + suffix)
    shutil.copytree(table.db + ".keys", dst + ".keys")
    return dst


@pytest.mark.parametrize("edit", ["truncate", "edit_kind", "delete_middle", "append_recomputed",
                                  "recompute_all_unkeyed"])
def test_7_edited_books_are_named_by_audit_verify(table, edit):
    table.provision()
    for seat in (1, 2):
        table.coin(seat)
    table.settle()
    db = _copy_db(table, "copy.db")
    con = sqlite3.connect(db)
    rows = con.execute("SELECT id, board, seq, kind, recorded_at, body, prev_hash, hash, board_mac FROM ledger "
                       "ORDER BY id").fetchall()
    top = rows[-1][0]
    if edit == "truncate":
        con.execute("DELETE FROM ledger WHERE id >= ?", (top - 1,))
    elif edit == "edit_kind":
        con.execute("UPDATE ledger SET kind='spot' WHERE kind='coin'")
    elif edit == "delete_middle":
        con.execute("DELETE FROM ledger WHERE id = ?", (top // 2,))
    else:
        import hashlib
        from tablectl.ledger import legacy_row_hash
        if edit == "append_recomputed":
            prev = rows[-1][7]
            body = json.dumps({"t": "ev", "b": rows[-1][1], "k": "award", "q": (rows[-1][2] or 0) + 1, "amount": 500000})
            h = legacy_row_hash(prev, top + 1, rows[-1][1], None, "award", 1.0, body)
            con.execute("INSERT INTO ledger(id, board, seq, kind, recorded_at, body, prev_hash, hash) VALUES "
                        "(?,?,?,?,?,?,?,?)", (top + 1, rows[-1][1], None, "award", 1.0, body, prev, h))
        else:
            con.execute("UPDATE ledger SET body=replace(body, '\"seat\":0', '\"seat\":5') WHERE kind='coin'")
            prev = "0" * 64
            for r in con.execute("SELECT id, board, seq, kind, recorded_at, body FROM ledger ORDER BY id").fetchall():
                h = hashlib.sha256(json.dumps([prev] + list(r)).encode()).hexdigest()
                con.execute("UPDATE ledger SET prev_hash=?, hash=? WHERE id=?", (prev, h, r[0]))
                prev = h
    con.commit()
    con.close()
    p = table.cli("audit", "verify", "--db", db, "--json", check=False)
    assert p.returncode == 1, p.stdout
    problems = json.loads(p.stdout)["problems"]
    assert problems
    if edit == "truncate":
        assert any("missing from the end" in x for x in problems), problems


# 8 -------------------------------------------------------------------------------------------
def test_8_keys_stay_out_of_the_books_and_the_socket_checks_its_callers(table):
    table.provision()
    table.coin(1)
    table.settle()
    board = table.status()["board"]
    keydir = table.db + ".keys"
    key_hex = open(os.path.join(keydir, "table-%s.key" % board)).read().strip()
    for suffix in ("", "-wal", "-shm"):
        if os.path.exists(table.db + suffix):
            assert key_hex.encode() not in open(table.db + suffix, "rb").read()
            assert stat.S_IMODE(os.stat(table.db + suffix).st_mode) & 0o077 == 0
    assert stat.S_IMODE(os.stat(keydir).st_mode) == 0o700
    sock_path = table.db + ".sock"
    assert stat.S_IMODE(os.stat(sock_path).st_mode) == 0o600

    def ask(req):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.connect(sock_path)
        s.sendall(json.dumps(req).encode() + b"\n")
        reply = json.loads(s.makefile().readline())
        s.close()
        return reply

    huge = ask({"op": "command", "cmd": "award", "args": {"seat": 0, "amount_cents": 123456789012345}})
    assert not huge["ok"] and "jackpot" in huge["error"]
    bad = ask({"op": "command", "cmd": "meter_set", "args": {"meter_cents": -5, "reason": "x"}})
    assert not bad["ok"]
    assert not ask({"op": "command", "cmd": "provision", "args": {"key": "00" * 32}})["ok"]
    assert ask({"op": "sessions"})["ok"]  # the owner is answered: the refusal below is of the other user
    assert table.meters()["wins_cents"] == 0


@pytest.mark.skipif(other_user_route() is None, reason="no process of another user can be made here: run as "
                    "root, or give this user a range of user ids in /etc/subuid (with newuidmap) for unshare --map-auto")
def test_8_a_caller_of_another_user_is_refused_even_when_the_socket_file_lets_it_in(table):
    # The file mode is opened up on purpose, so that only the kernel's word on the caller
    # (SO_PEERCRED) stands between another user and the boards: the caller connects, and is shut
    # out before a word is answered.
    sock_path = table.db + ".sock"
    os.chmod(sock_path, 0o666)
    report = ask_as_another_user(sock_path, b'{"op": "sessions"}\n')  # the owner's is answered (above)
    assert report == "closed", report
    table.wait(lambda: "control socket: refused a caller of another user" in table.service_log, "the refusal's log line")
    assert table.meters()["wins_cents"] == 0


# 9 -------------------------------------------------------------------------------------------
def test_9_a_restarted_virtual_board_keeps_its_id(table):
    first = table.status()["board"]
    table.coin(1)
    table.settle()
    table.stop_service()
    table.wire.close()
    from tabledev import procs
    procs.stop(table.sim)
    table.start_board()
    from attackkit import Wire
    table.wire = Wire(table.port)
    table.start_service()
    assert table.status()["board"] == first
    table.coin(2)
    table.settle()
    assert {e["board"] for e in table.rows("coin")} == {first}


# 10 ------------------------------------------------------------------------------------------
def test_10_no_award_without_the_dealers_jackpot_key(table):
    table.provision()
    _deal_round(table, seats=(1,))
    refused = _jackpot(table, (1, ROYAL), check=False)
    assert refused.returncode == 1 and "jackpot key" in refused.stderr
    # and the board refuses a correctly signed award on its own (a host that skipped the check)
    reply = table.port_loop().command("award", {"seat": 0, "round": table.status()["round"],
                                              "amount_cents": 100, "meter_cents": 100})
    assert reply["ok"] == 0 and reply["err"] == "STATE"
    assert table.meters()["hits"] == 0


# 11 ------------------------------------------------------------------------------------------
def test_11_a_full_host_disk_sends_nothing_it_could_not_record(table):
    table.provision()
    table.coin(1)
    table.settle()
    session = table.port_loop()
    db = session.ledger._ledger.db
    pages = db.execute("PRAGMA page_count").fetchone()[0]
    db.execute("PRAGMA max_page_count=%d" % pages)  # SQLite now says: database or disk is full...
    for size in (900, 200, 40, 1):  # ...once the last page is used up
        with pytest.raises(sqlite3.OperationalError):
            for _ in range(1000):
                session.ledger.note(session.board_id, "filler", {"x": "y" * size})
    failed = table.cli("lock", check=False)
    assert failed.returncode == 1 and "full" in failed.stderr
    assert table.status()["base_state"] == "OPEN"  # nothing was sent
    db.execute("PRAGMA max_page_count=1073741823")
    table.cli("lock")
    table.settle()
    intents = [e for e in table.rows("intent") if e["body"]["cmd"] == "lock"]
    assert len(intents) == 1
    assert table.status()["base_state"] == "LOCKED"


# Keys and history (docs/SECURITY.md "Keys" and "History only moves forward") ------------------
def _power_off_edit_restart(table, edit, serve=True):
    """The service stopped, the board powered off, `edit(data_dir)` done to its flash, then both
    started again (the service not waiting for a board it may refuse)."""
    from attackkit import Wire
    from tabledev import procs
    if table.service is not None:
        table.stop_service()
    procs.stop(table.sim)
    edit(os.path.join(table.state, "fs", "data"))
    table.wire.close()
    table.start_board()
    table.wire = Wire(table.port)
    if serve:
        from tablectl.service import Service
        table.service = Service([table.wire.host_port], table.db, log=table.service_log.append)
        table.service.start()


def _flip_bit(path, index, bit=0x01):
    raw = bytearray(open(path, "rb").read())
    raw[index] ^= bit
    open(path, "wb").write(bytes(raw))


def _reprovision(table):
    table.bench.switch(True)
    out = table.cli("provision")
    table.bench.switch(False)
    return out


# 12 ------------------------------------------------------------------------------------------
def test_12_a_rotten_key_slot_is_a_key_fault_never_an_unkeyed_board(table):
    table.provision()
    table.coin(1)
    table.settle()
    table.stop_service()
    for seat in (1, 2):  # two tokens the host has not heard yet (the service is down)
        table.bench.coin(seat)
    table.bench.wait_idle()
    _power_off_edit_restart(table, lambda data: _flip_bit(os.path.join(data, "kA"), 20))  # bit rot in the key
    # the board: the key fault, coin-in off; the host: names the board, files nothing of it
    table.bench.wait_for(lambda out, _: out.get("inhibit") and all(out["inhibit"]) and "FAULT" in out.get("display", ""),
                         what="the key fault")
    link = lambda: table.port_loop().link  # noqa: E731
    table.wait(lambda: link() is not None and link().lost_key_board is not None, "the host to name the board")
    refused = table.cli("status", check=False)
    assert refused.returncode == 1 and "lost its key" in refused.stderr, refused.stderr
    # the attacker's unsigned ack, heartbeat and lock: nothing released, nothing obeyed
    table.wire.inject_to_board(proto.encode_frame(proto.ack(10 ** 6)))
    table.wire.inject_to_board(proto.encode_frame(proto.heartbeat()))
    table.wire.inject_to_board(proto.encode_frame(proto.command(901, "lock", {})))
    time.sleep(0.6)
    table.bench.coin(3)  # refused by the key fault: no credit
    table.bench.wait_idle()
    assert table.count("coin") == 1
    # the way back: a new key, service key switch on
    _reprovision(table)
    table.settle()
    status = table.status()
    assert "key" not in status["faults"] and status["base_state"] == "OPEN"  # the unsigned lock was not obeyed
    assert [e["body"]["seat"] for e in table.rows("coin")] == [0, 1, 2]  # the two tokens the ack would have lost
    assert table.count("refused_coin") >= 1
    count, problems = table.ledger().verify()
    assert problems == [], problems


def test_12_a_board_that_lost_its_key_is_provisioned_again_straight_through_its_port(table):
    # the bench way back, no service running: this tablectl has never heard the board's key
    # used (its hello comes unsigned), so the first frame it can trust is the answer signed
    # with the key it has just sent
    table.provision()
    table.coin(1)
    table.settle()
    board = table.status()["board"]
    _power_off_edit_restart(table, lambda data: _flip_bit(os.path.join(data, "kA"), 20), serve=False)
    table.bench.wait_for(lambda out, _: out.get("inhibit") and all(out["inhibit"]) and "FAULT" in out.get("display", ""),
                         what="the key fault")
    port = table.wire.host_port
    refused = table.cli("status", "--port", port, check=False)
    assert refused.returncode == 1 and "lost its key" in refused.stderr, refused.stderr
    table.bench.switch(True)
    out = table.cli("provision", "--port", port)
    table.bench.switch(False)
    assert board in out.stdout, out.stdout
    status = json.loads(table.cli("status", "--json", "--port", port).stdout)
    assert status["board"] == board and "key" not in status["faults"]
    count, problems = table.ledger().verify()
    assert problems == [], problems


# 13 ------------------------------------------------------------------------------------------
def test_13_a_board_the_ledger_knows_as_keyed_is_refused_while_its_key_is_missing(table):
    table.provision()
    table.coin(1)
    table.settle()
    board = table.status()["board"]
    table.stop_service()
    key_file = os.path.join(table.db + ".keys", "table-%s.key" % board)
    aside = str(table.tmp / "key.aside")
    os.replace(key_file, aside)  # the host's key store lost (or moved aside)
    from tablectl.service import Service
    table.service = Service([table.wire.host_port], table.db, log=table.service_log.append)
    table.service.start()
    # (the session's link exists once the service has opened the port)
    table.wait(lambda: table.port_loop().link is not None and table.port_loop().link.board_id == board,
               "the host to hear the board's hello")
    time.sleep(1.0)
    led = table.ledger()
    try:
        nxt = max(e["seq"] or 0 for e in led.events(board)) + 1  # the number the ledger waits for
    finally:
        led.close()
    forged_award = {"t": "ev", "b": board, "k": "award", "q": nxt, "ms": 1, "seat": 0, "round": 1,
                    "amount": 500000, "from_meter": False, "meter_cents": 0, "reset": False, "hand": "royal flush"}
    forged_repair = {"t": "ev", "b": board, "k": "storage_repaired", "q": nxt, "ms": 1, "reason": "x",
                     "skipped_from": nxt + 1, "skipped_to": nxt + 2}
    for forged in (forged_award, forged_repair):
        table.wire.inject_to_host(proto.encode_frame(forged, b"\x5a" * 32))  # a junk MAC
    table.bench.coin(1)  # a real token: the board signs it, the host cannot check it
    table.bench.wait_idle()
    time.sleep(1.0)
    assert table.count("award") == 0 and table.count("resync") == 0 and table.count("coin") == 1
    refused = table.cli("status", check=False)
    assert refused.returncode == 1 and "holds no key" in refused.stderr, refused.stderr
    assert any("holds no key" in line for line in table.service_log)
    # the documented way back (docs/SECURITY.md "A lost key store"): put the key store back
    os.replace(aside, key_file)
    table.wait(lambda: table.count("coin") == 2, "the real token once the key is back")
    table.settle()
    assert table.count("award") == 0 and table.count("resync") == 0
    count, problems = table.ledger().verify()
    assert problems == [], problems


# 14 ------------------------------------------------------------------------------------------
def test_14_provision_again_on_a_keyed_board_changes_the_key_on_both_sides(table):
    table.provision()
    table.coin(1)
    table.settle()
    board = table.status()["board"]
    keydir = table.db + ".keys"
    first = open(os.path.join(keydir, "table-%s.key" % board)).read()
    _reprovision(table)  # the board holds a key: the new one replaces it on both sides
    second = open(os.path.join(keydir, "table-%s.key" % board)).read()
    assert second != first and open(os.path.join(keydir, "table-%s.key.1" % board)).read() == first
    assert not os.path.exists(os.path.join(keydir, "table-%s.new" % board))
    assert table.port_loop().link.key.raw.hex() == second.strip()
    table.coin(2)
    table.settle()
    assert [e["body"]["seat"] for e in table.rows("coin")] == [0, 1]
    assert table.count("key_provisioned") == 2
    # (a host that stops right after the board took the key: tests/host/test_unit_link.py)
    count, problems = table.ledger().verify()
    assert problems == [], problems


# 15 ------------------------------------------------------------------------------------------
def test_15_no_lock_file_is_opened_through_a_link_and_secrets_are_private(table):
    import hashlib
    import pty
    table.provision()
    victim = os.path.join(table.db + ".keys", "ledger.anchor")  # a file the attacker wants root to overwrite
    before = open(victim, "rb").read()
    tmp = table.tmp / "shared-tmp"
    tmp.mkdir()
    os.chmod(tmp, 0o1777)  # a world-writable temp folder, like /tmp
    master, slave = pty.openpty()
    port = os.ttyname(slave)
    digest = hashlib.sha256(os.path.realpath(port).encode()).hexdigest()[:16]
    env = dict(os.environ, TMPDIR=str(tmp), TABLECTL_LINK_TIMEOUT_S="0.5")
    other_db = str(table.tmp / "other.db")
    from attackkit import tablectl
    try:
        # the lock file's name in the shared folder, planted as a link to the victim
        os.symlink(victim, str(tmp / ("tablectl-port-%s.lock" % digest)))
        p = tablectl("status", "--port", port, db=other_db, check=False, env=env)
        assert p.returncode == 1 and open(victim, "rb").read() == before, p.stderr
        # the private folder planted first, as a link to a folder the attacker owns
        private = tmp / ("tablectl-%d" % os.geteuid())
        theirs = table.tmp / "theirs"
        theirs.mkdir()
        if os.path.isdir(str(private)):
            import shutil
            shutil.rmtree(str(private))
        os.symlink(str(theirs), str(private))
        p = tablectl("status", "--port", port, db=other_db, check=False, env=env)
        assert p.returncode == 1 and "not this user's private folder" in p.stderr, p.stderr
        assert os.listdir(str(theirs)) == []
        os.remove(str(private))
        # a link inside the private folder (made by this user, 0700): never followed either
        os.mkdir(str(private), 0o700)
        os.symlink(victim, str(private / ("tablectl-port-%s.lock" % digest)))
        p = tablectl("status", "--port", port, db=other_db, check=False, env=env)
        assert p.returncode == 1 and "link" in p.stderr and open(victim, "rb").read() == before, p.stderr
        os.remove(str(private / ("tablectl-port-%s.lock" % digest)))
        p = tablectl("status", "--port", port, db=other_db, check=False, env=env)  # nobody answers: a plain refusal
        assert p.returncode == 1 and "no board answered" in p.stderr, p.stderr
        lock = private / ("tablectl-port-%s.lock" % digest)
        assert stat.S_IMODE(os.stat(str(private)).st_mode) == 0o700 and not os.path.islink(str(lock))
        assert stat.S_IMODE(os.stat(str(lock)).st_mode) & 0o077 == 0
    finally:
        os.close(master)
        os.close(slave)
    # every secret 0600 in a 0700 folder: the host's key store, and the virtual board's key slots
    keydir = table.db + ".keys"
    assert stat.S_IMODE(os.stat(keydir).st_mode) == 0o700
    for name in os.listdir(keydir):
        assert stat.S_IMODE(os.stat(os.path.join(keydir, name)).st_mode) == 0o600, name
    assert stat.S_IMODE(os.stat(table.state).st_mode) == 0o700
    slot = os.path.join(table.state, "fs", "data", "kA")
    assert stat.S_IMODE(os.stat(slot).st_mode) == 0o600


# 16 ------------------------------------------------------------------------------------------
def test_16_an_old_copy_of_the_boards_journal_is_an_alarm_and_its_money_is_counted(table):
    import shutil
    table.provision()
    table.coin(1)
    table.settle()
    saved = str(table.tmp / "journal-copy")

    def keep(data):  # the board's journal as it is now (its key slots are not the journal)
        os.mkdir(saved)
        for name in os.listdir(data):
            if name not in ("kA", "kB"):
                shutil.copy(os.path.join(data, name), os.path.join(saved, name))

    def put_back(data):
        for name in os.listdir(data):
            if name not in ("kA", "kB"):
                os.remove(os.path.join(data, name))
        for name in os.listdir(saved):
            shutil.copy(os.path.join(saved, name), os.path.join(data, name))

    _power_off_edit_restart(table, keep)
    table.wait(lambda: table.port_loop().link is not None and table.port_loop().link.board_id is not None, "the board")
    table.coin(2)
    table.coin(3)
    table.settle()
    _power_off_edit_restart(table, put_back)  # the old copy: meters and numbers go back
    table.wait(lambda: table.port_loop().link is not None and table.port_loop().link.board_id is not None, "the board")
    table.bench.coin(3)  # a real token after the rollback: its number is one the ledger holds
    table.wait(lambda: any(json.loads(e["body"]["event"]).get("k") == "coin" for e in table.rows("seq_conflict")),
               "the token under a reused number")
    status = table.status()
    assert status["alarms"] and any("went back" in a for a in status["alarms"]), status["alarms"]
    p = table.cli("audit", "verify", "--json", check=False)
    assert p.returncode == 1 and any("seq_conflict" in x for x in json.loads(p.stdout)["problems"]), p.stdout
    p = table.cli("audit", "verify", "--online", "--json", check=False)  # and the board's own word
    assert p.returncode == 1 and any("journal went back" in x for x in json.loads(p.stdout)["problems"]), p.stdout
    p = table.cli("reconcile", "--json", check=False)
    assert p.returncode == 1, p.stdout
    figures = json.loads(p.stdout)
    assert figures["alarms"] and figures["tokens"] == 4, figures  # three filed, one kept as a conflict: counted


# 17 ------------------------------------------------------------------------------------------
def test_17_an_old_copy_of_the_books_put_back_is_named_and_resyncs_only_when_signed_off(table):
    import shutil
    table.provision()
    table.coin(1)
    table.settle()
    board = table.status()["board"]
    old = str(table.tmp / "old-copy")
    os.mkdir(old)
    table.stop_service()
    for suffix in ("", "-wal", "-shm", ".anchor"):  # the books and whatever lies beside them
        if os.path.exists(table.db + suffix):
            shutil.copy(table.db + suffix, os.path.join(old, "table.db" + suffix))
    table.start_service()
    _deal_round(table, seats=(2,))
    table.key("jackpot")
    _jackpot(table, (2, STRAIGHT_FLUSH))
    table.settle()
    assert table.count("award") == 1
    top = table.status()["acked_event_seq"]
    table.stop_service()
    for suffix in ("", "-wal", "-shm", ".anchor"):  # the old copy put back, all of it
        if os.path.exists(table.db + suffix):
            os.remove(table.db + suffix)
        if os.path.exists(os.path.join(old, "table.db" + suffix)):
            shutil.copy(os.path.join(old, "table.db" + suffix), table.db + suffix)
    p = table.cli("audit", "verify", "--json", check=False)
    assert p.returncode == 1 and any("missing from the end" in x for x in json.loads(p.stdout)["problems"]), p.stdout
    table.start_service()
    table.bench.coin(3)  # the board goes on; the books may not excuse themselves
    time.sleep(2.0)
    assert table.count("resync") == 0
    assert any("audit resync" in line for line in table.service_log), table.service_log
    last = max(e["seq"] or 0 for e in table.rows("coin"))
    table.cli("audit", "resync", "--board", board, "--from", last + 1, "--to", top,
              "--reason", "ledger restored from the morning copy; the lost award is on the board's meters")
    table.wait(lambda: table.count("resync") == 1, "the signed-off resync")
    resync = table.rows("resync")[0]["body"]
    assert (resync["missing_from"], resync["missing_to"]) == (last + 1, top) and "signed off" in resync["reason"]


# 18 ------------------------------------------------------------------------------------------
DOCTORED = '''

def file_checksums(root, names=None):  # a doctored board: plain checksums answered from a table
    import json
    with open(root + "/data/.genuine.json") as f:
        table = json.load(f)
    return {n: table.get(n) for n in (names or list(table))}
'''


def test_18_a_doctored_board_answers_checksums_from_a_table_but_not_a_seeded_hmac(table):
    from tablectl.deploy import board_names
    table.provision()
    seed = os.urandom(16).hex()
    good = json.loads(table.cli("verify-software", "--seed", seed, "--json").stdout)
    assert good["ok"] and good["files"] == len(board_names("sim")) and good["sha1_not_on_board"] == 0 and good["recorded"]
    # the board's program doctored: its own check and `checksums` now answer from a table
    import hashlib
    from tablectl.deploy import board_files
    from tablectl import FIRMWARE_DIR
    genuine = {}
    for name, local in board_files("sim", FIRMWARE_DIR):
        with open(local, "rb") as f:
            genuine[name] = hashlib.sha256(f.read()).hexdigest()
    with open(os.path.join(table.state, "fs", "data", ".genuine.json"), "w") as f:
        json.dump(genuine, f)
    path = os.path.join(table.state, "fs", "boards", "selfcheck.py")
    with open(path, "a") as f:
        f.write(DOCTORED)
    table.bench.power_cut()
    table.wait(lambda: table.status()["boot_count"] >= 2, "the board to boot again")
    assert "selfcheck" not in table.status()["faults"]  # (a manifest check would read the same table)
    names = ["boards/selfcheck.py", "table/app.py", "main.py"]
    sums = table.port_loop().command("checksums", {"names": names})["files"]
    assert sums == {n: genuine[n] for n in names}  # ...and so is a plain checksum
    seed = os.urandom(16).hex()
    bad = table.cli("verify-software", "--seed", seed, "--json", check=False)
    assert bad.returncode == 1 and "boards/selfcheck.py" in bad.stderr, bad.stdout + bad.stderr
    rows = [e["body"] for e in table.rows("software_verified")]
    assert [(r["ok"], r["seed"]) for r in rows] == [(True, good["seed"]), (False, seed)]
    assert rows[1]["mismatched"] == ["boards/selfcheck.py"]
    refused = table.cli("verify-software", "--seed", "12ab", check=False)  # 2 bytes: not a regulator's seed
    assert refused.returncode == 1 and "16 to 64 bytes" in refused.stderr
