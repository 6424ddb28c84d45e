"""A table's health, as its service reports it to the pool (pool/health.py) and the floor manager's
page and the API show it: POOL OFF, a storage fault, refused frames, a link lost, a table closed on
purpose. The real `tablectl pool serve` on a real PostgreSQL, asked over its mutual-TLS socket by
table credentials as a hostile table would: a report for another board, values that are not what
they must be, and, whatever is reported, the books' money never moves."""
import json
import os
import re
import signal
import time
import urllib.error
import urllib.request

import pytest

from poolkit import make_pool, pg_server, pg_url, pool_keys  # noqa: F401 (fixtures)
from test_web import Web as WebService

from tabledev import procs
from tablectl.pool import webauth
from tablectl.pool.client import PoolClient, PoolError
from tablectl.pool.store import PoolStore
from tablectl.pool.tls import issue_table_credential

MEMBERS = (("T1", "caribbean_draw"), ("T2", "caribbean_draw"), ("T3", "caribbean_stud"))
GOOD = {"state": "OPEN", "pool_off": False, "storage_fault": False, "refused_frames": 0, "closing": False}


class Pool:
    def __init__(self, pg_url, keys, tmp):
        self.url = pg_url
        self.keys = keys
        self.sock = str(tmp / "pool.sock")
        self.tmp = tmp
        self.proc, _ = procs.start(["pool", "serve", "--db", pg_url, "--keys", keys, "--listen", "unix:" + self.sock],
                                   str(tmp / "pool.log"))
        line = self.proc.stdout.readline()
        assert line.startswith("pool serving"), (line, open(str(tmp / "pool.log")).read())
        self.clients = {}

    def client(self, board):
        """A connection whose credential names `board` (issued by the pool's authority)."""
        if board not in self.clients:
            creds = issue_table_credential(self.keys, board, str(self.tmp / ("cred-" + board)))
            self.clients[board] = PoolClient("unix:" + self.sock, creds, timeout_s=30)
        return self.clients[board]

    def report(self, board, for_board=None, **fields):
        return self.client(board).request("health", board=for_board or board, **dict(GOOD, **fields))

    def stop(self):
        for c in self.clients.values():
            c.close()
        procs.stop(self.proc)


@pytest.fixture
def pool(pg_url, pool_keys, tmp_path):  # noqa: F811
    store = PoolStore(pg_url, pool_keys)
    make_pool(store, members=MEMBERS)
    store.record_tokens([("T1", [{"q": q, "seat": q % 7, "round": 1} for q in range(1, 6)])])
    p = Pool(pg_url, pool_keys, tmp_path)
    try:
        yield store, p
    finally:
        p.stop()
        store.close()


def _health(store):
    rows = store.db.execute("SELECT board, pool, last_heard, state, pool_off, storage_fault, refused_frames, "
                            "refused_rose_at, closed FROM pool_health ORDER BY board").fetchall()
    return {r[0]: dict(zip(("board", "pool", "last_heard", "state", "pool_off", "storage_fault", "refused_frames",
                            "refused_rose_at", "closed"), r)) for r in rows}


def _wait(fn, what, timeout_s=15.0):
    deadline = time.monotonic() + timeout_s
    while True:
        got = fn()
        if got:
            return got
        if time.monotonic() > deadline:
            raise AssertionError("waited %.0f s for %s" % (timeout_s, what))
        time.sleep(0.1)


def _money(store):
    """Everything in the books that is money or proves it: every row of every table but health."""
    out = {}
    for table in ("pools", "pool_boards", "pool_ledger", "pool_chain", "pool_hits", "pool_declarations"):
        out[table] = store.db.execute("SELECT * FROM %s ORDER BY 1" % table).fetchall()
    return out


def test_a_board_reports_its_own_health_and_the_pool_keeps_it_by_its_own_clock(pool):
    store, p = pool
    before = time.time()
    reply = p.report("T1", state="FAULT", storage_fault=True, pool_off=True, refused_frames=3)
    after = time.time()
    assert reply["ok"] and before <= reply["heard_at"] <= after and reply["closed"] is False
    row = _health(store)["T1"]
    assert (row["pool"], row["state"], row["pool_off"], row["storage_fault"], row["refused_frames"], row["closed"]) \
        == ("floor", "FAULT", True, True, 3, False)
    assert before <= row["last_heard"] <= after and row["refused_rose_at"] == row["last_heard"]
    # a time of the table's own is not taken: it is not a field of a report at all
    with pytest.raises(PoolError, match="health takes state, pool_off, storage_fault, refused_frames, closing only; "
                                        "not 'last_heard'"):
        p.report("T1", last_heard=before + 86400)
    assert _health(store)["T1"]["last_heard"] <= after
    # the same count again is no rise; a higher count is, when the pool hears it; a service that
    # restarted counts from 0 again (no rise)
    p.report("T1", refused_frames=3)
    assert _health(store)["T1"]["refused_rose_at"] == row["last_heard"]
    p.report("T1", refused_frames=9)
    risen = _health(store)["T1"]
    assert risen["refused_frames"] == 9 and risen["refused_rose_at"] == risen["last_heard"] > row["last_heard"]
    p.report("T1", refused_frames=0)
    assert _health(store)["T1"]["refused_rose_at"] == risen["last_heard"]
    # a clean close, then the service back: closed, then not
    assert p.report("T1", closing=True)["closed"] is True
    assert _health(store)["T1"]["closed"] is True
    p.report("T1")
    assert _health(store)["T1"]["closed"] is False


def test_a_board_credential_cannot_report_health_for_another_board(pool):
    store, p = pool
    p.report("T2")
    held = _health(store)
    with pytest.raises(PoolError, match="this connection speaks for board T1, not T2"):
        p.report("T1", for_board="T2", closing=True)
    with pytest.raises(PoolError, match="this connection speaks for board T1, not T3"):
        p.report("T1", for_board="T3", storage_fault=True)
    with pytest.raises(PoolError, match="health needs a board id"):
        p.client("T1").request("health", **GOOD)
    assert _health(store) == held  # T2 as it was; nothing for T3
    # a credential of a board that is no member of any pool: its report is refused too
    with pytest.raises(PoolError, match="board T9 is not a member of any pool"):
        p.report("T9")
    assert "T9" not in _health(store)
    log = open(str(p.tmp / "pool.log")).read()
    assert "the credential of board T1 asked health for board T2" in log


@pytest.mark.parametrize("fields, says", [
    ({"refused_frames": -1}, "refused_frames must be a whole number from 0 to 2147483647; got -1"),
    ({"refused_frames": 2 ** 31}, "refused_frames must be a whole number from 0 to 2147483647; got 2147483648"),
    ({"refused_frames": 10 ** 30}, "refused_frames must be a whole number"),
    ({"refused_frames": 1.5}, "refused_frames must be a whole number"),
    ({"refused_frames": True}, "refused_frames must be a whole number"),
    ({"refused_frames": "7"}, "refused_frames must be a whole number"),
    ({"state": ""}, "health state must be 1 to 32 letters, digits or _"),
    ({"state": "X" * 33}, "health state must be 1 to 32 letters"),
    ({"state": "A" * 100000}, "health state must be 1 to 32 letters"),
    ({"state": "<script>"}, "health state must be 1 to 32 letters"),
    ({"state": "OPEN\n"}, "health state must be 1 to 32 letters"),
    ({"state": None}, "health state must be 1 to 32 letters"),
    ({"state": ["OPEN"]}, "health state must be 1 to 32 letters"),
    ({"pool_off": "no"}, "health pool_off must be true or false; got 'no'"),
    ({"storage_fault": 1}, "health storage_fault must be true or false; got 1"),
    ({"closing": None}, "health closing must be true or false; got None"),
    ({"meter_cents": 1}, "health takes state, pool_off, storage_fault, refused_frames, closing only; not 'meter_cents'"),
    ({"tokens": [{"q": 99}]}, "not 'tokens'"),
    ({"k" * 5000: 1}, "not '" + "k" * 40 + "'"),
])
def test_garbage_in_a_health_report_is_refused_with_a_clear_error_and_changes_nothing(pool, fields, says):
    store, p = pool
    p.report("T1", refused_frames=4)
    held = _health(store)
    with pytest.raises(PoolError) as got:
        p.report("T1", **fields)
    assert says in str(got.value) and len(str(got.value)) < 300  # a long value is not echoed back
    assert _health(store) == held
    assert p.report("T1", refused_frames=4)["ok"]  # the connection still serves


def test_a_number_too_long_to_read_is_refused_and_the_connection_keeps_serving(pool):
    store, p = pool
    c = p.client("T1")
    assert c.request("health", board="T1", **GOOD)["ok"]  # connected
    held = _health(store)
    # JSON's reader refuses integers of more than 4300 digits: an answer, not a crash
    c.sock.sendall(b'{"op": "health", "board": "T1", "state": "OPEN", "refused_frames": ' + b"9" * 5000 + b"}\n")
    raw = b""
    while b"\n" not in raw:
        raw += c.sock.recv(65536)
    reply = json.loads(raw)
    assert reply["ok"] is False and len(reply["error"]) < 300
    assert _health(store) == held
    assert c.request("health", board="T1", **GOOD)["ok"]


def test_a_health_report_never_changes_money(pool):
    store, p = pool
    p.report("T1")
    money = _money(store)
    status = store.status("floor")
    for i in range(20):
        p.report("T1", state="FAULT", pool_off=True, storage_fault=True, refused_frames=i * 1000, closing=i % 2 == 0)
        p.report("T2", state="JACKPOT_PENDING", refused_frames=2 ** 31 - 1)
        for bad in ({"meter_cents": 10 ** 9}, {"tokens": [{"q": 6, "seat": 0, "round": 1}]}, {"amount_cents": 1}):
            with pytest.raises(PoolError):
                p.report("T1", **bad)
    assert _money(store) == money
    assert store.status("floor") == status
    assert store.reconcile()["ok"]
    # and the tokens still flow: T1's next token is its sixth
    reply = p.client("T1").request("tokens", board="T1", tokens=[{"q": 6, "seat": 0, "round": 1}])
    assert reply["new"] == 1 and reply["meter_cents"] == status["meter_cents"] + 70


# ---------------------------------------------------------------------------------------------- the table's side
def test_the_table_service_reports_what_its_board_and_its_link_say_and_its_clean_close(pool, tmp_path):
    """`tablectl serve --pool` in-process (tablectl.service.Service) with one board on a real
    pseudo-terminal (tests/host/boardside.py): the board's status faults (`storage`, `pool`) and
    the frames the link refuses reach the pool's record; its stop is recorded as a close."""
    import sys
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "host"))
    from boardside import PtyBoard
    from tablectl.keys import KeyStore
    from tablectl.service import Service
    store, p = pool
    make_pool(store, name="side", members=(("b1", "caribbean_draw"),))
    key = bytes(range(7, 39))
    db = str(tmp_path / "books.db")
    KeyStore.for_ledger(db).set_table_key("b1", key)
    creds = issue_table_credential(p.keys, "b1", str(tmp_path / "cred-b1"))
    board = PtyBoard("b1", key)
    board.answers_hello = True
    faults = []

    def answer(msg):
        if msg["c"] == "status":
            board.reply(msg["id"], state="FAULT" if faults else "OPEN", faults=list(faults))
        else:
            board.reply(msg["id"])
    board.on_command = answer
    svc = Service([board.port], db, log=lambda text: None, pool="unix:" + p.sock, pool_lost_s=1.5,
                  pool_credentials=creds)
    svc.start()
    try:
        row = _wait(lambda: (lambda h: h if h and h["state"] == "OPEN" else None)(_health(store).get("b1")),
                    "the service's first report")
        assert (row["pool"], row["pool_off"], row["storage_fault"], row["refused_frames"], row["closed"]) == \
            ("side", False, False, 0, False)
        faults[:] = ["storage", "pool"]
        row = _wait(lambda: (lambda h: h if h["storage_fault"] else None)(_health(store)["b1"]), "the storage fault")
        assert (row["state"], row["pool_off"], row["storage_fault"]) == ("FAULT", True, True)
        faults[:] = []
        _wait(lambda: not _health(store)["b1"]["storage_fault"], "the fault cleared")
        # two forged events on the port: refused by the link, counted, reported
        board.event(1, seat=0, inc=70_000, key=bytes(32))
        board.event(1, seat=0, inc=70_000, key=None)
        row = _wait(lambda: (lambda h: h if h["refused_frames"] >= 2 else None)(_health(store)["b1"]),
                    "the refused frames")
        assert row["refused_frames"] == 2 and row["refused_rose_at"] is not None
    finally:
        svc.stop()
        board.close()
    row = _health(store)["b1"]
    assert row["closed"] is True and row["refused_frames"] == 2
    time.sleep(1.5)  # nothing after the closing report
    assert _health(store)["b1"]["closed"] is True


# ---------------------------------------------------------------------------------------------- the pages
class Web(WebService):
    """`pool web` (test_web.py's) with a floor manager's token and the page behind sign-in."""

    def __init__(self, url, keys, tmp, extra=()):
        super().__init__(url, keys, tmp, extra)
        self.token = webauth.create(keys, "floor-manager")
        self.cookie = None

    def get(self, path, headers=None, data=None, method="GET"):
        code, _headers, body = super().get(path, headers=headers, method=method, data=data)
        return code, body

    def api(self, path):
        code, body = self.get(path, {"Authorization": "Bearer " + self.token})
        assert code == 200, (code, body)
        return json.loads(body)

    def floor(self):
        if self.cookie is None:
            class NoRedirect(urllib.request.HTTPRedirectHandler):
                def redirect_request(self, *a, **k):
                    return None
            req = urllib.request.Request(self.base + "/login", data=("token=" + self.token).encode(), method="POST",
                                         headers={"Content-Type": "application/x-www-form-urlencoded"})
            try:
                urllib.request.build_opener(NoRedirect).open(req, timeout=10)
                raise AssertionError("no redirect after sign-in")
            except urllib.error.HTTPError as e:
                assert e.code == 303
                self.cookie = e.headers["Set-Cookie"].split(";")[0]
        code, body = self.get("/floor", {"Cookie": self.cookie})
        assert code == 200, (code, body)
        return body

    def tables(self):
        return {t["table"]: t for t in self.api("/api/v1/tables")["tables"]}


def test_the_floor_page_and_the_api_show_what_only_the_tables_know(pool, tmp_path):
    store, p = pool
    web = Web(p.url, p.keys, tmp_path, ["--lost-s", "2", "--quiet-s", "600"])
    try:
        p.report("T1", state="FAULT", pool_off=True, storage_fault=True, refused_frames=0)
        p.report("T1", state="FAULT", pool_off=True, storage_fault=True, refused_frames=12)
        p.report("T2", closing=True)
        p.report("T3")
        t = _wait(lambda: (lambda t: t if t["T3"]["state"] == "open" and t["T1"]["health"]["refused_frames"] == 12
                           else None)(web.tables()), "the reports on the API")
        h1 = t["T1"]["health"]
        assert t["T1"]["state"] == "pool_off"
        assert (h1["reported_state"], h1["pool_off"], h1["storage_fault"], h1["refused_frames"], h1["refused_rising"],
                h1["closed"], h1["link_lost"]) == ("FAULT", True, True, 12, True, False, False)
        assert t["T2"]["state"] == "closed" and t["T2"]["health"]["closed"] is True
        assert t["T2"]["health"]["link_lost"] is False
        page = web.floor()
        alarms = page.split('id=alarms>')[1].split("</ul>")[0]
        assert 'class="alarm" data-kind="pool_off">table T1 (pool floor) shows POOL OFF' in alarms
        assert 'class="alarm" data-kind="storage_fault">table T1 (pool floor) storage fault' in alarms
        assert 'class="alarm" data-kind="refused_frames">table T1 (pool floor) refused 12 frames' in alarms
        assert 'class="info" data-kind="closed">table T2 (pool floor) closed: its service stopped cleanly' in alarms
        assert "T2" not in alarms.split('data-kind="closed"')[0]  # a table closed on purpose is no alarm
        assert '<tr data-table="T2" data-state="closed">' in page
        # T3 falls silent: after the lost window it is link lost (an alarm); T2 stays closed
        t = _wait(lambda: (lambda t: t if t["T3"]["state"] == "link_lost" else None)(web.tables()), "T3 link lost")
        assert t["T3"]["health"]["link_lost"] is True and t["T2"]["state"] == "closed"
        alarms = web.floor().split('id=alarms>')[1].split("</ul>")[0]
        assert 'class="alarm" data-kind="link_lost">table T3 (pool floor) link lost: its service not heard' in alarms
        assert 'data-kind="link_lost">table T2' not in alarms
        # the sign says what the table shows: POOL OFF
        code, sign = web.get("/sign/floor")
        assert code == 200 and 'data-table="T3" data-state="link_lost">T3: POOL OFF</li>' in sign
        assert 'data-table="T2" data-state="closed">T2: closed</li>' in sign
        # a report after a lost link: open again
        p.report("T3")
        _wait(lambda: web.tables()["T3"]["state"] == "open", "T3 open again")
        # the schema names the new fields and states
        schema = web.api("/api/v1/openapi.json")
        assert "link_lost" in schema["components"]["schemas"]["Table"]["properties"]["state"]["enum"]
        assert "refused_rising" in schema["components"]["schemas"]["TableHealth"]["properties"]
    finally:
        web.stop()


# ---------------------------------------------------------------------------------------------- a real floor
def test_a_table_closed_cleanly_is_closed_and_a_killed_one_is_link_lost(tmp_path, pg_server):  # noqa: F811
    """Three virtual boards behind their real services: the first service stopped as an operator
    stops it (SIGTERM), the second killed (SIGKILL), the third frozen (SIGSTOP)."""
    from tabledev.floor import Floor
    floor = Floor(str(tmp_path / "floor"), pg=pg_server, lost_s=3.0)
    floor.start()
    web = None
    try:
        web = Web(floor.db_url, floor.keys, tmp_path, ["--lost-s", "3", "--quiet-s", "600"])
        boards = [b for b, _ in floor.tables]
        t = _wait(lambda: (lambda t: t if all(t[b]["health"] and t[b]["health"]["reported_state"] == "OPEN"
                                              for b in boards) else None)(web.tables()),
                  "every table's service reporting its board OPEN", 60)
        assert all(t[b]["state"] == "open" and t[b]["health"]["refused_frames"] == 0 for b in boards), t
        closed, killed, frozen = boards
        procs.stop(floor.serves.pop(closed), signal.SIGTERM)
        t = _wait(lambda: (lambda t: t if t[closed]["state"] == "closed" else None)(web.tables()), "closed", 20)
        assert t[closed]["health"]["link_lost"] is False
        os.killpg(floor.serves[killed].pid, signal.SIGKILL)
        os.killpg(floor.serves[frozen].pid, signal.SIGSTOP)
        try:
            killed_at = time.monotonic()
            t = _wait(lambda: (lambda t: t if t[killed]["state"] == "link_lost" and t[frozen]["state"] == "link_lost"
                               else None)(web.tables()), "link lost", 20)
            assert time.monotonic() - killed_at > 2.0  # not before the lost window
            assert t[closed]["state"] == "closed"
            alarms = web.floor().split('id=alarms>')[1].split("</ul>")[0]
            for b in (killed, frozen):
                assert 'class="alarm" data-kind="link_lost">table %s (pool floor) link lost' % b in alarms
            assert 'class="info" data-kind="closed">table %s (pool floor) closed' % closed in alarms
            assert 'data-kind="link_lost">table %s ' % closed not in alarms
            assert web.api("/api/v1/tables/" + killed)["table"]["state"] == "link_lost"
        finally:
            os.killpg(floor.serves[frozen].pid, signal.SIGCONT)
        # the frozen service goes on: reported again, open again
        _wait(lambda: web.tables()[frozen]["state"] == "open", "the frozen table back", 20)
    finally:
        if web is not None:
            web.stop()
        floor.stop()


def test_pool_status_shows_each_tables_health_as_the_floor_page_does(pool, pg_url, pool_keys):  # noqa: F811
    """`tablectl pool status`, what a technician at a terminal reads: each table's last report in a
    few words, and the alarms the floor page raises, in the same words."""
    import subprocess
    store, _p = pool
    now = time.time()
    store.record_health("T1", dict(GOOD, pool_off=True), now)
    store.record_health("T2", GOOD, now - 60)          # heard a minute ago: its link is lost
    # (T3 never reported)

    def status(*extra):
        out = subprocess.run(procs.TABLECTL + ["pool", "status", "--db", pg_url, "--keys", pool_keys] + list(extra),
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        return out.stdout
    text = status()
    lines = {line.split()[0]: line for line in text.splitlines() if line.startswith("  T")}
    assert "OPEN POOL OFF, heard" in lines["T1"], text
    assert re.search(r"LINK LOST \(not heard for 6\d s\)$", lines["T2"]), text
    assert lines["T3"].endswith("health: never reported"), text
    assert "  ALARM: table T1 (pool floor) shows POOL OFF: progressive coin-in inhibited" in text, text
    assert re.search(r"  ALARM: table T2 \(pool floor\) link lost: its service not heard 6\d s ago \(not closed\)", text), text
    [st] = json.loads(status("--json"))
    health = {t["board"]: t["health"] for t in st["tables"]}
    assert health["T1"]["pool_off"] and not health["T1"]["link_lost"] and health["T3"] is None
    assert health["T2"]["link_lost"] and [a["kind"] for a in st["alarms"]] == ["pool_off", "link_lost"]
    # a longer patience: T2's minute-old report is not a lost link yet
    assert "LINK LOST" not in status("--lost-s", "120")
    out = subprocess.run(procs.TABLECTL + ["pool", "status", "--db", pg_url, "--keys", pool_keys, "--lost-s", "0"],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and out.stderr == "tablectl: --lost-s must be a number of seconds above 0; got 0.0\n"
