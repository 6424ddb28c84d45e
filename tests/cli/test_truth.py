"""Every command reaches the table it names, and tells the truth about what happened.

Each test is a row of the technician's trial, played with real processes: two virtual boards
(`tablectl sim`), `tablectl serve` on the first, the CLI as a technician types it. A command that
names a port reaches that port or refuses in one line; a command reports success only once the
board or the ledger confirms it; seats count from 1 wherever a person reads them."""
import json
import os
import subprocess
import sys
import time

import pytest

from tabledev import procs
from test_technician import _env, one_line_error  # a technician's environment; exit 1 and one line

TABLECTL = [sys.executable, "-m", "tablectl.cli"]


def tablectl(*args, env=None, timeout=60):
    return subprocess.run(TABLECTL + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env=env if env is not None else _env())


def ok(proc):
    assert proc.returncode == 0, (proc.returncode, proc.stdout, proc.stderr)
    return proc.stdout


def _wait_status(db, timeout_s=30):
    deadline = time.monotonic() + timeout_s
    while True:
        p = tablectl("status", "--json", "--db", db)
        if p.returncode == 0:
            return json.loads(p.stdout)
        assert time.monotonic() < deadline, p.stderr
        time.sleep(0.2)


@pytest.fixture(scope="module")
def tables(tmp_path_factory):
    """Table 1: a default virtual board (8 seats wired, 7 configured) served on table1.db.
    Table 2: another virtual board on a port nobody serves."""
    tmp = tmp_path_factory.mktemp("truth")
    started, logs = [], []
    try:
        sim1, log, port1 = procs.start_sim(str(tmp / "table1"), str(tmp / "sim1.log"), seats=8)
        started.append(sim1)
        logs.append(log)
        sim2, log, port2 = procs.start_sim(str(tmp / "table2"), str(tmp / "sim2.log"), seats=8)
        started.append(sim2)
        logs.append(log)
        db1 = str(tmp / "table1.db")
        serve, log = procs.start_serve(port1, db1, str(tmp / "serve.log"))
        started.append(serve)
        logs.append(log)
        status = _wait_status(db1)
        yield {"tmp": tmp, "port1": port1, "port2": port2, "db1": db1, "state1": str(tmp / "table1"),
               "state2": str(tmp / "table2"), "serve": serve, "board1": status["board"]}
    finally:
        for proc in reversed(started):
            procs.stop(proc)
        for log in logs:
            log.close()


def _state_of(port=None, db=None):
    args = ["--port", port] if port else ["--db", db]
    return json.loads(ok(tablectl("status", "--json", *args)))["base_state"]


# --- row 1: a target named is the target reached ----------------------------------------------

def test_a_port_named_beside_the_config_files_ledger_never_reaches_the_ledgers_board(tables, tmp_path):
    """README's config file names table 1's ledger; `lock --port` of table 2 must lock table 2 or
    refuse, never lock table 1."""
    conf = tmp_path / "config.toml"
    conf.write_text('db = "%s"\n' % tables["db1"])
    p = tablectl("lock", "--port", tables["port2"], env=_env(TABLECTL_CONFIG=conf))
    assert _state_of(db=tables["db1"]) == "OPEN", (p.stdout, p.stderr)
    if p.returncode == 0:
        assert _state_of(port=tables["port2"]) == "LOCKED"
        ok(tablectl("unlock", "--port", tables["port2"], "--db", tmp_path / "t2.db"))
    else:
        one_line_error(p, tables["port2"], tables["db1"])
        assert _state_of(port=tables["port2"]) == "OPEN"


@pytest.mark.parametrize("port", ["/dev/pts/999", "/dev/null", "port2"])
def test_status_of_a_port_the_ledgers_service_does_not_hold_is_refused(tables, port):
    port = tables.get(port, port)
    p = tablectl("status", "--port", port, "--db", tables["db1"])
    line = one_line_error(p, port)
    assert tables["board1"] not in p.stdout


def test_the_served_port_with_its_ledger_goes_through_the_service(tables):
    status = json.loads(ok(tablectl("status", "--json", "--port", tables["port1"], "--db", tables["db1"])))
    assert status["board"] == tables["board1"]


def test_a_board_id_the_port_does_not_carry_is_refused(tables, tmp_path):
    one_line_error(tablectl("status", "--port", tables["port2"], "--db", tmp_path / "t2.db", "--board", "sim-nope"),
                   "sim-nope")
    one_line_error(tablectl("status", "--db", tables["db1"], "--board", "sim-nope"), "sim-nope")


def test_a_live_monitor_naming_a_board_the_service_does_not_hold_stops_with_one_line(tables):
    """Asking the service again cannot change which board it holds: the live view stops at once
    instead of drawing "TABLE ?" until Ctrl-C."""
    one_line_error(tablectl("monitor", "--db", tables["db1"], "--board", "sim-nope", "--interval", "0.2",
                            timeout=30), "sim-nope")
    one_line_error(tablectl("monitor", "--json", "--db", tables["db1"], "--board", "sim-nope",
                            "--interval", "0.2", timeout=30), "sim-nope")


def test_a_port_whose_board_is_not_the_ledgers_is_refused(tables, tmp_path):
    """A ledger that knows its board (table 1's, copied while served) is never given table 2's
    events: the port and the ledger belong to different boards."""
    db = tmp_path / "t2.db"
    ok(tablectl("lock", "--port", tables["port2"], "--db", db))  # the ledger now knows table 2
    ok(tablectl("unlock", "--port", tables["port2"], "--db", db))
    other = tmp_path / "other.db"
    from tablectl.ledger import Ledger
    ledger = Ledger(str(other))
    ledger.note(tables["board1"], "note", {"text": "table 1's books"})
    ledger.close()
    line = one_line_error(tablectl("lock", "--port", tables["port2"], "--db", other), tables["board1"])
    assert _state_of(port=tables["port2"]) == "OPEN", line


def test_where_says_how_port_db_and_board_resolved(tables, tmp_path):
    conf = tmp_path / "config.toml"
    conf.write_text('db = "%s"\nport = "%s"\n' % (tables["db1"], tables["port1"]))
    out = ok(tablectl("where", "--board", "sim-x", env=_env(TABLECTL_CONFIG=conf, TABLECTL_PORT=tables["port2"])))
    lines = {line.split()[0]: line for line in out.splitlines() if line.strip()}
    assert tables["db1"] in lines["db"] and str(conf) in lines["db"], out
    assert tables["port2"] in lines["port"] and "TABLECTL_PORT" in lines["port"], out
    assert "sim-x" in lines["board"] and "--board" in lines["board"], out
    assert "service" in out  # what a command would reach: the service holds table 1's port, not this one
    data = json.loads(ok(tablectl("where", "--json", env=_env(TABLECTL_CONFIG=conf))))
    assert data["db"] == {"value": tables["db1"], "from": "config file %s" % conf}
    assert data["port"]["value"] == tables["port1"]
    assert data["service"]["ports"] == [tables["port1"]]


# --- row 2: a coin at a seat the table does not play --------------------------------------------

def test_a_coin_at_a_wired_seat_the_table_does_not_play_is_refused_at_once_and_leaves_no_wait(tables):
    t0 = time.monotonic()
    line = one_line_error(tablectl("bench", "--state", tables["state1"], "coin", "8"), "seat 8", "7 seats")
    assert time.monotonic() - t0 < 10, line
    before = json.loads(ok(tablectl("meters", "--json", "--db", tables["db1"])))["tokens_per_seat"]
    t0 = time.monotonic()
    out = json.loads(ok(tablectl("bench", "--json", "--state", tables["state1"], "coin", "3")))
    assert time.monotonic() - t0 < 10
    after = json.loads(ok(tablectl("meters", "--json", "--db", tables["db1"])))["tokens_per_seat"]
    assert after[2] == before[2] + 1 and out["credited"] == 1, out


# --- row 7: seats count from 1 wherever a person reads them -------------------------------------

def test_bet_spots_are_named_by_seat_and_circle(tables):
    state = tables["state1"]
    for seat, spot in ((1, "bet"), (2, "ante"), (7, "bonus")):
        ok(tablectl("bench", "--state", state, "spot", seat, spot, "on"))
    try:
        deadline = time.monotonic() + 10
        while True:
            status = json.loads(ok(tablectl("status", "--json", "--db", tables["db1"])))
            if len(status["bet_spots_covered"]) == 3 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert status["bet_spots_covered"] == [{"seat": 1, "spot": "bet"}, {"seat": 2, "spot": "ante"},
                                               {"seat": 7, "spot": "bonus"}]
        text = ok(tablectl("status", "--db", tables["db1"]))
        assert "1:bet 2:ante 7:bonus" in text, text
    finally:
        for seat, spot in ((1, "bet"), (2, "ante"), (7, "bonus")):
            tablectl("bench", "--state", state, "spot", seat, spot, "off")


def test_events_count_seats_from_1_in_command_arguments_too(tables, tmp_path):
    """A command's arguments in the ledger (seat 0 on the wire) read as the seat a dealer names."""
    from tablectl.commands.board import format_event
    row = {"id": 1, "recorded_at": 0, "board": "b", "seq": None, "kind": "cmd",
           "body": {"cmd": "award", "args": {"seat": 0, "amount_cents": 5}, "id": 9, "reply": {"ok": True}}}
    line = format_event(row)
    assert "seat=1" in line and "{" not in line and "'" not in line, line
    spot = {"id": 2, "recorded_at": 0, "board": "b", "seq": 5, "kind": "spot",
            "body": {"seat": 6, "spot": "bonus", "on": True}}
    assert "seat=7" in format_event(spot)


# --- row 4: the host's own stale frames after a board restart are not refusals ------------------

def _refusals(db):
    from tablectl.ledger import Ledger
    ledger = Ledger(db, readonly=True)
    try:
        return [e for e in ledger.events(kinds=["cmd_refused"])]
    finally:
        ledger.close()


def _keyed(state, db):
    """Table 1 provisioned (once: provisioning a keyed board again is the key work's, not these tests')."""
    if _wait_status(db)["table_key_provisioned"]:
        return
    ok(tablectl("bench", "--state", state, "switch", "on"))
    try:
        ok(tablectl("provision", "--db", db))
    finally:
        ok(tablectl("bench", "--state", state, "switch", "off"))


def test_a_power_cut_of_a_served_keyed_board_files_no_refusals(tables):
    state, db = tables["state1"], tables["db1"]
    _keyed(state, db)
    before = _wait_status(db)
    assert before["table_key_provisioned"]
    refused_before = len(_refusals(db))
    for cut in range(2):
        boots = _wait_status(db)["boot_count"]
        out = ok(tablectl("bench", "--state", state, "power-cut"))
        deadline = time.monotonic() + 30
        while True:
            status = _wait_status(db)
            if status["boot_count"] > boots and status["unacked_events"] == 0:
                break
            assert time.monotonic() < deadline, status
            time.sleep(0.3)
        assert "boot %d" % status["boot_count"] in out or str(status["boot_count"]) in out, out
        time.sleep(3)  # heartbeats and acks of the new session go both ways meanwhile
    status = _wait_status(db)
    assert status["refused_frames"] == 0, status
    new = _refusals(db)[refused_before:]
    assert new == [], new


# --- row 5: a virtual board that cannot start says so ---------------------------------------------

def test_sim_with_an_unreadable_heap_size_is_one_line(tmp_path):
    one_line_error(tablectl("sim", "--state", tmp_path / "b", "--heap", "abc", timeout=20), "--heap", "128K")


def test_sim_whose_firmware_cannot_start_stops_and_names_the_reason(tmp_path):
    """A heap too small for the firmware: it fails at every start. The supervisor stops after a few
    quick failures, naming the firmware's last line, instead of restarting it forever."""
    p = subprocess.run(TABLECTL + ["sim", "--state", str(tmp_path / "b"), "--heap", "8K"], capture_output=True,
                       text=True, timeout=60, env=_env())
    assert p.returncode == 1, (p.stdout, p.stderr)
    last = p.stderr.strip().splitlines()[-1]
    assert last.startswith("tablectl: ") and "MemoryError" in last and "console.log" in last, p.stderr
    assert "Traceback" not in p.stderr


# --- row 3: a repeated jackpot reports what was paid, from the ledger -----------------------------

def _intents(db, cmd):
    from tablectl.ledger import Ledger
    ledger = Ledger(db, readonly=True)
    try:
        return [e["body"] for e in ledger.events(kinds=["intent"]) if e["body"].get("cmd") == cmd]
    finally:
        ledger.close()


def test_a_repeated_jackpot_reports_the_amount_paid_not_one_computed_from_the_reset_meter(tables):
    state, db = tables["state1"], tables["db1"]
    _keyed(state, db)
    ok(tablectl("bench", "--state", state, "coin", "1"))
    ok(tablectl("bench", "--state", state, "key", "lock"))
    ok(tablectl("bench", "--state", state, "key", "jackpot"))
    royal = ("jackpot", "--db", db, "--seat", "1", "--cards", "As Ks Qs Js Ts", "--json")
    first = json.loads(ok(tablectl(*royal)))["payments"][0]
    assert first["amount_cents"] > 10_000_000 and first["board_meter_after"] == 10_000_000, first
    again = json.loads(ok(tablectl(*royal)))["payments"][0]
    assert again["repeat"] is True
    assert (again["amount_cents"], again["meter_cents"], again["house_cents"]) == \
        (first["amount_cents"], first["meter_cents"], first["house_cents"]), (first, again)
    text = ok(tablectl(*royal[:-1]))
    assert "$%s.%02d" % ("{:,}".format(first["amount_cents"] // 100), first["amount_cents"] % 100) in text, text
    assert "paid before" in text
    # every intent the ledger holds for this award names the amount actually paid
    assert {i["args"]["amount_cents"] for i in _intents(db, "award")} == {first["amount_cents"]}
    ok(tablectl("unlock", "--db", db))


# --- row 6 on the virtual board, and the power cut's boot count -----------------------------------

def test_a_coin_right_after_a_power_cut_is_credited_and_the_boot_count_is_the_boards(tables):
    state, db = tables["state1"], tables["db1"]
    ok(tablectl("bench", "--state", state, "key", "lock"))
    ok(tablectl("bench", "--state", state, "key", "unlock"))  # a new round: every seat may play
    before = json.loads(ok(tablectl("meters", "--json", "--db", db)))["tokens_per_seat"]
    cut = json.loads(ok(tablectl("bench", "--json", "--state", state, "power-cut")))
    coin = json.loads(ok(tablectl("bench", "--json", "--state", state, "coin", "4")))
    assert coin["credited"] == 1, coin
    assert _wait_status(db)["boot_count"] == cut["boot_count"]
    deadline = time.monotonic() + 20
    while json.loads(ok(tablectl("meters", "--json", "--db", db)))["tokens_per_seat"][3] != before[3] + 1:
        assert time.monotonic() < deadline
        time.sleep(0.3)


# --- also seen: one line for every usage error, "did you mean", filters that match nothing -------

@pytest.mark.parametrize("argv, words", [
    (["status", "--dbb", "x.db"], ["unknown option --dbb", "did you mean --db?", "tablectl status --help"]),
    (["bench", "--state", "x", "coin", "2", "--cout", "3"], ["--cout", "did you mean --count?"]),
    (["bench", "coin"], ["bench coin", "seat"]),
    (["events", "--last", "many"], ["--last", "'many'"]),
])
def test_a_usage_error_is_one_line_naming_the_command(argv, words):
    line = one_line_error(tablectl(*argv), *words)
    assert "usage:" not in line


def test_events_filters_that_match_nothing_the_ledger_holds_are_one_line(tables):
    one_line_error(tablectl("events", "--db", tables["db1"], "--kind", "coins"), "'coins'", "did you mean coin?")
    one_line_error(tablectl("events", "--db", tables["db1"], "--board", "nonexist"), "'nonexist'", tables["board1"])
    assert ok(tablectl("events", "--db", tables["db1"], "--kind", "boot", "--board", tables["board1"])).count("boot") >= 1


def test_events_board_column_fits_the_longest_board_id(tmp_path):
    from tablectl.ledger import Ledger
    db = tmp_path / "t.db"
    ledger = Ledger(str(db))
    for board in ("pico-e6614103e7", "pico-e6614103e7123456", "sim-1"):
        ledger.note(board, "intent", {"cmd": "lock", "args": {}, "id": 1})
    ledger.close()
    lines = ok(tablectl("events", "--db", db)).splitlines()
    starts = {line.index(" #") for line in lines[1:]}
    assert len(starts) == 1, lines  # the seq column starts at one place on every row
    assert lines[0].index("seq") == starts.pop() + 1, lines


# --- also seen: serve and monitor say what they cannot do, and leave nothing behind ---------------

def test_serve_refused_for_a_busy_port_leaves_no_ledger_lock_or_key(tables, tmp_path):
    db = tmp_path / "late.db"
    one_line_error(tablectl("serve", "--port", tables["port1"], "--db", db), tables["port1"],
                   "pid %d" % tables["serve"].pid)
    assert sorted(os.listdir(tmp_path)) == [], os.listdir(tmp_path)


def test_monitor_of_a_served_port_says_to_use_its_ledger_and_stops(tables, tmp_path):
    p = tablectl("monitor", "--port", tables["port1"], "--db", tmp_path / "none.db", timeout=30)
    one_line_error(p, tables["port1"], "--db %s" % tables["db1"])


def test_a_restarted_sim_is_found_again_by_serve_through_its_tty_link(tmp_path):
    state, db = str(tmp_path / "board"), str(tmp_path / "t.db")
    sim, log1, port = procs.start_sim(state, str(tmp_path / "sim1.log"), seats=7)
    serve = log2 = log3 = None
    try:
        assert os.path.realpath(os.path.join(state, "tty")) == port
        serve, log2 = procs.start_serve(os.path.join(state, "tty"), db, str(tmp_path / "serve.log"))
        board = _wait_status(db)["board"]
        procs.stop(sim)
        sim, log3, port2 = procs.start_sim(state, str(tmp_path / "sim2.log"), seats=7)
        assert os.path.realpath(os.path.join(state, "tty")) == port2
        assert _wait_status(db, timeout_s=60)["board"] == board
        with open(tmp_path / "serve.log") as f:
            text = f.read()
        assert "cannot open the port" in text or "link lost" in text, text
        # the service holds the new pty too: a command given it goes through the service's ledger
        one_line_error(tablectl("status", "--port", port2, "--db", tmp_path / "other.db"), "--db %s" % db)
    finally:
        procs.stop(serve)
        procs.stop(sim)
        for log in (log1, log2, log3):
            if log is not None:
                log.close()


def test_ports_lists_the_virtual_boards_and_who_holds_each(tables):
    ports = {p["device"]: p for p in json.loads(ok(tablectl("ports", "--json")))}
    one, two = ports[tables["port1"]], ports[tables["port2"]]
    assert tables["state1"] in one["description"] and tables["state2"] in two["description"]
    assert one["held_by_pid"] == str(tables["serve"].pid) and one["held_by"].startswith("tablectl serve")
    assert two["held_by_pid"] is None
    text = ok(tablectl("ports"))
    assert tables["port1"] in text and "held by: tablectl serve" in text, text


# --- nothing silent for more than 2 s -------------------------------------------------------------

def test_a_slow_board_shows_a_progress_line_on_a_terminal_and_the_error_stays_one_line(tmp_path):
    import pty
    quiet_master, quiet_slave = pty.openpty()  # a port with nothing behind it
    term_master, term_slave = pty.openpty()    # the technician's terminal
    try:
        env = _env(TABLECTL_LINK_TIMEOUT_S="5")
        proc = subprocess.Popen(TABLECTL + ["status", "--port", os.ttyname(quiet_slave), "--db", str(tmp_path / "t.db")],
                                stdout=subprocess.DEVNULL, stderr=term_slave, env=env)
        assert proc.wait(timeout=60) == 1
        os.close(term_slave)
        term_slave = None
        seen = b""
        while True:
            try:
                chunk = os.read(term_master, 4096)
            except OSError:
                break
            if not chunk:
                break
            seen += chunk
        text = seen.decode()
        assert "waiting for the board on %s to answer (0:02" % os.ttyname(quiet_slave) in text, text
        assert text.rstrip().split("\r")[-1].lstrip("\x1b[K").startswith("tablectl: no board answered"), repr(text)
    finally:
        for fd in (quiet_master, quiet_slave, term_master, term_slave):
            if fd is not None:
                os.close(fd)


@pytest.mark.parametrize("argv, words", [
    (["bench", "--state", "/nonexistent", "coin", "2", "--count", "-1"], ["--count", "1 to 100000, not -1"]),
    (["bench", "--state", "/nonexistent", "spot", "0", "bet", "on"], ["seat", "1 to 8, not 0"]),
    (["events", "--last", "-1"], ["--last", "at least 0, not -1"]),
    (["monitor", "--interval", "0"], ["--interval", "not 0"]),
    (["jackpot", "--seat", "9", "--cards", "As Ks Qs Js Ts"], ["--seat", "1 to 8, not 9"]),
    (["loop", "--seconds", "nan"], ["--seconds", "not nan"]),
    (["sim", "--state", "/nonexistent", "--baud", "-9600"], ["--baud", "not -9600"]),
])
def test_every_number_a_person_types_is_range_checked_in_one_line(argv, words):
    one_line_error(tablectl(*argv), *words)


def test_flash_of_a_served_port_with_another_ledger_is_refused_before_anything_is_copied(tables, tmp_path):
    one_line_error(tablectl("flash", "--port", tables["port1"], "--db", tmp_path / "other.db"),
                   "--db %s" % tables["db1"], "nothing was copied")
    assert _wait_status(tables["db1"])["base_state"] in ("OPEN", "LOCKED")  # the service kept its port
