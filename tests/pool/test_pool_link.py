"""A table's side of the linked pool (host_tools/tablectl/pool/client.py, PoolLink): what it sends
the pool from the table's ledger, what it tells the board, and what it does when the pool refuses
or is away. The real pool service (in this process: pool/server.py over its mutual-TLS socket) on a
real PostgreSQL, the table's real ledger (tablectl/ledger.py), and the board the real firmware on
the virtual board (simkit.Rig), seen as the table service holds it (service.PortLoop: its id, its
link's boot session, its commands)."""
import json
import os
import sys
import time
import types

import pytest

from conftest import FIRMWARE, ROOT
from poolkit import admin, make_pool, pg_server, pg_url, pool_keys, statement  # noqa: F401 (fixtures)
from tablectl.errors import TablectlError
from tablectl.ledger import Ledger
from tablectl.pool.client import PoolLink
from tablectl.pool.server import PoolServer
from tablectl.pool.store import PoolStore
from tablectl.pool.tls import issue_table_credential

KEY = bytes(range(80, 112))
BOARD = "sim-test"  # the virtual board's id (simkit.Rig)
ROYAL = "As Ks Qs Js Ts"


class Table:
    """The real firmware on the virtual board, as PoolLink sees a board through the table service
    (service.PortLoop): board_id, connected, link.session, frames_refused, command() (a reply
    that never comes fails as PortLoop's does)."""

    def __init__(self):
        from simkit import Rig
        self.rig = Rig("pool-link", key=KEY)
        self.rig.board.switch = True
        assert self.rig.command("provision", {"key": KEY.hex()})["ok"] == 1
        self.rig.board.switch = False
        self.board_id = BOARD
        self.connected = True
        self.frames_refused = 0
        self.sent = []

    @property
    def link(self):
        return types.SimpleNamespace(session=self.rig.session)

    def command(self, name, args, command_id=None, timeout_s=None, record=True):
        self.sent.append((name, dict(args)))
        reply = self.rig.command(name, args)
        if reply is None:
            raise TablectlError("board %s did not answer %s" % (self.board_id, name))
        return reply

    def status(self):
        return self.rig.command("status", {})


class HungBoard:
    """A board that said hello and then hangs: the service still holds its id and its link, and
    every command it is sent goes unanswered (service.PortLoop.command raises)."""

    def __init__(self, board_id):
        self.board_id = board_id
        self.connected = True
        self.frames_refused = 0
        self.link = types.SimpleNamespace(session=1)

    def command(self, name, args, command_id=None, timeout_s=None, record=True):
        raise TablectlError("board %s did not answer %s" % (self.board_id, name))


@pytest.fixture
def table(monkeypatch):
    monkeypatch.syspath_prepend(os.path.join(ROOT, "tests", "firmware"))
    monkeypatch.syspath_prepend(FIRMWARE)
    for name in ("simkit", "boards", "boards.sim"):  # the firmware's own modules, not a cached host copy
        sys.modules.pop(name, None)
    t = Table()
    yield t
    from simkit import _rmtree
    _rmtree(t.rig.dir)  # the board's flash


@pytest.fixture
def store(pg_url, pool_keys):
    s = PoolStore(pg_url, pool_keys)
    make_pool(s, members=((BOARD, "caribbean_draw"),))
    make_pool(s, name="other", members=(("T9", "caribbean_draw"),))
    yield s
    s.close()


@pytest.fixture
def served(store, pg_url, pool_keys, tmp_path):
    """The pool service listening on a unix socket; returns its URL."""
    sock = str(tmp_path / "pool.sock")
    server = PoolServer(pg_url, pool_keys, "unix:" + sock, log=lambda line: None, poll_s=0.05)
    server.start()
    yield "unix:" + sock
    server.stop()


@pytest.fixture
def ledger(tmp_path):
    db = Ledger(str(tmp_path / "table.db"))
    yield db
    db.close()


def journal(ledger, board, *events):
    """Events as the board sent them, into the table's ledger (their exact bytes), numbered on."""
    last = ledger.board(board)["last_seq"]
    out = []
    for n, ev in enumerate(events, last + 1):
        ev = dict({"t": "e", "b": board, "q": n, "ms": 1000 + n}, **ev)
        raw = ev.pop("_raw", None) or json.dumps(ev, separators=(",", ":"))
        out.append(dict(ev, _raw=raw))
    ledger.record_events(board, out)
    return [e["q"] for e in out]


def jackpot_key(round_no, **fields):
    return dict({"k": "state", "from": "LOCKED", "to": "JACKPOT_PENDING", "reason": "jackpot key",
                 "round": round_no, "elig": 0xFF, "pool": "floor"}, **fields)


def link_of(url, ledger, pool_keys, tmp_path, loops=(), lost_after_s=10.0, board=BOARD):
    lines = []
    link = PoolLink(url, ledger.path, list(loops), lines.append, lost_after_s,
                    credentials=issue_table_credential(pool_keys, board, str(tmp_path / ("cred-" + board))))
    link.lines = lines
    return link


# ---------------------------------------------------------------------- the jackpot statement
def test_a_declaration_takes_the_boards_jackpot_statement_of_that_round_and_no_other(ledger, pool_keys, tmp_path):
    link = link_of("unix:" + str(tmp_path / "nowhere.sock"), ledger, pool_keys, tmp_path)
    with pytest.raises(TablectlError) as exc:
        link.statement(BOARD, 1)
    assert str(exc.value) == ("board sim-test's jackpot statement for round 1 is not in the ledger yet (the dealer's "
                              "jackpot key event): try again in a moment")
    q1, = journal(ledger, BOARD, jackpot_key(1))
    # later state events that are not a jackpot key (and a row whose body is not JSON) are passed over
    journal(ledger, BOARD, {"k": "state", "from": "JACKPOT_PENDING", "to": "OPEN", "reason": "paid"},
            {"k": "state", "_raw": "{damaged"}, {"k": "state", "to": "JACKPOT_PENDING", "reason": "test"})
    got = link.statement(BOARD, 1)
    assert got["q"] == q1 and json.loads(got["raw"])["round"] == 1 and got["mac"] is None
    # the newest jackpot key is round 3's: round 2's older one is never taken for it, nor round 1's
    q2, = journal(ledger, BOARD, jackpot_key(2))
    journal(ledger, BOARD, jackpot_key(3))
    for rnd in (1, 2, 4):
        with pytest.raises(TablectlError, match="jackpot statement for round %d is not in the ledger yet" % rnd):
            link.statement(BOARD, rnd)
    assert json.loads(link.statement(BOARD, 3)["raw"])["round"] == 3
    # another board's statement is never this board's
    with pytest.raises(TablectlError, match="board T9's jackpot statement for round 3 is not in the ledger yet"):
        link.statement("T9", 3)


def test_a_journaled_token_whose_bytes_are_not_json_goes_as_it_is_and_the_pool_refuses_it(ledger, store, pool_keys,
                                                                                          tmp_path):
    """The link sends what the board signed, byte for byte; it never makes a token of its own out
    of a damaged row (seat and round come from the bytes, and there are none)."""
    journal(ledger, BOARD, {"k": "coin", "_raw": "{damaged coin"})
    link = link_of("unix:" + str(tmp_path / "nowhere.sock"), ledger, pool_keys, tmp_path)
    [tok] = link._pending(BOARD, 0)
    assert (tok["q"], tok["raw"], tok["seat"], tok["round"], tok["ms"]) == (1, "{damaged coin", None, None, None)
    assert store.record_tokens([(BOARD, [tok])]) == ["token sim-test #1: its event is not JSON"]
    assert store.status("floor")["tokens"] == 0


# ---------------------------------------------------------------------- awards the pool refuses
def test_an_award_the_pool_refuses_is_said_once_not_sent_again_and_its_lock_stays_in_view(ledger, store, served,
                                                                                          pool_keys, tmp_path):
    journal(ledger, BOARD, {"k": "coin", "seat": 0, "round": 1})
    store.record_tokens([(BOARD, [{"q": 1, "raw": None, "mac": None, "seat": 0, "round": 1}])])
    lock = store.hit(BOARD, 1, 0, ROYAL, statement=statement(BOARD, 1))
    link = link_of(served, ledger, pool_keys, tmp_path)
    session = types.SimpleNamespace(board_id=BOARD)
    # the board's award is not in the table's ledger yet: not taken, after the time given
    started = time.monotonic()
    assert link.confirm(session, [lock["lock_no"]], timeout_s=0.3) == set()
    assert time.monotonic() - started >= 0.3
    # an award the pool refuses (it names the lock but not its amount): said once, sent once
    short = lock["amount_cents"] - 1
    q, = journal(ledger, BOARD, {"k": "award", "lock": lock["lock_no"], "round": 1, "seat": 0, "pool_cents": short})
    said = ["pool link: sim-test: award #%d not taken by the pool: payment refused: lock #1 is %d cents, the board "
            "paid %d" % (q, lock["amount_cents"], short)]
    for _ in range(3):  # the loop's next turns: not sent again, not said again
        link._forward_awards(BOARD)
        assert link.lines == said
    assert [u["lock_no"] for u in store.unpaid()] == [lock["lock_no"]]
    # the board's award of the whole amount (a new event) is taken
    journal(ledger, BOARD, {"k": "award", "lock": lock["lock_no"], "round": 1, "seat": 0,
                            "pool_cents": lock["amount_cents"]})
    assert link.confirm(session, [lock["lock_no"]], timeout_s=5) == {lock["lock_no"]}
    assert store.unpaid() == [] and link.lines == said
    # awards are matched lock by lock: another lock's award confirms nothing of this one
    assert link.confirm(session, [lock["lock_no"] + 1], timeout_s=0.2) == set()


# ---------------------------------------------------------------------- what the board is told
def test_a_board_joined_to_another_pool_never_shows_this_pools_amount(ledger, store, served, table, pool_keys,
                                                                     tmp_path):
    """The board keeps the pool it joined until the service key switch takes it out: a pool that
    now says the table feeds another one is refused by the board, every time it says so."""
    assert table.rig.command("linked", {"pool": "elsewhere", "meter_cents": 555})["ok"]
    link = link_of(served, ledger, pool_keys, tmp_path, loops=[table])
    for _ in range(2):
        link._serve_board(table)
    linked = [args for name, args in table.sent if name == "linked"]
    assert linked == [{"meter_cents": 10000, "pool": "floor"}] * 2
    assert table.rig.app.linked_cents == 555 and table.rig.app.state.get("pool") == "elsewhere"
    assert link.status()[BOARD]["shown"] is None and link.status()[BOARD]["error"] is None


def test_a_board_rebooted_while_the_pool_is_lost_is_told_again(ledger, table, pool_keys, tmp_path):
    link = link_of("unix:" + str(tmp_path / "nowhere.sock"), ledger, pool_keys, tmp_path, loops=[table],
                   lost_after_s=0.05)
    assert table.rig.command("linked", {"pool": "floor", "meter_cents": 10000})["ok"]
    time.sleep(0.1)
    link._serve_board(table)
    assert "pool" in table.status()["faults"] and link.status()[BOARD]["lost"] is True
    link._serve_board(table)  # lost already: not told twice
    assert [name for name, _ in table.sent] == ["linked"]
    table.rig.boot()  # a new boot: a new session, and the board's faults start empty
    table.rig.hello()
    assert "pool" not in table.status()["faults"]
    link._serve_board(table)
    assert [args for name, args in table.sent] == [{"lost": True}, {"lost": True}]
    assert "pool" in table.status()["faults"] and link.status()[BOARD]["lost"] is True
    assert link.lines[0].startswith("pool link: sim-test: pool unreachable: ")
    assert link.lines[1].startswith("pool link: sim-test: pool lost for ")


def test_a_board_that_does_not_answer_never_keeps_the_others_from_being_told(ledger, table, pool_keys, tmp_path):
    """The pool is away past the lost time; one of the service's boards hangs: the others still
    turn POOL OFF, and the hung one is named in the log."""
    link = link_of("unix:" + str(tmp_path / "nowhere.sock"), ledger, pool_keys, tmp_path,
                   loops=[HungBoard("T2"), table], lost_after_s=0.05)
    link.poll_s = 0.02
    assert table.rig.command("linked", {"pool": "floor", "meter_cents": 10000})["ok"]
    link.start()
    try:
        deadline = time.time() + 10
        while not link.status().get(BOARD, {}).get("lost"):
            assert time.time() < deadline, link.lines
            time.sleep(0.02)
    finally:
        link.close(timeout_s=0.5)
    assert "pool" in table.status()["faults"]
    assert "pool link: T2: board T2 did not answer linked" in link.lines, link.lines
    assert link.status()["T2"]["lost"] is False


# ---------------------------------------------------------------------- health reports
def test_the_closing_report_is_the_last_and_a_pool_away_at_close_is_said(ledger, store, served, table, pool_keys,
                                                                         tmp_path):
    link = link_of(served, ledger, pool_keys, tmp_path, loops=[table])
    assert link.report_health(table)["ok"]
    link.close()
    heard = store.db.execute("SELECT closed FROM pool_health WHERE board=%s", (BOARD,)).fetchone()
    assert heard == (True,)
    assert link.report_health(table) is None  # nothing after the closing report
    # a pool away when the service stops: said, and the stop is not held up
    away = link_of("unix:" + str(tmp_path / "nowhere.sock"), ledger, pool_keys, tmp_path, loops=[table])
    started = time.monotonic()
    away.close(timeout_s=1.0)
    assert time.monotonic() - started < 2.0
    assert len(away.lines) == 1 and away.lines[0].startswith(
        "pool link: sim-test: could not tell the pool this table closes: pool unreachable: "), away.lines


def test_a_health_report_the_pool_refuses_is_said_once_and_a_board_not_yet_named_sends_none(ledger, store, served,
                                                                                            pool_keys, tmp_path):
    """A board the pool's books do not hold (T8, with a credential of this pool) is refused each
    report and said once; a port whose board has not said who it is reports nothing."""
    nameless = types.SimpleNamespace(board_id=None, connected=False, frames_refused=0, link=None)
    stranger = types.SimpleNamespace(board_id="T8", connected=False, frames_refused=0,
                                     link=types.SimpleNamespace(session=1))
    link = link_of(served, ledger, pool_keys, tmp_path, loops=[nameless, stranger], lost_after_s=0.3, board="T8")
    link.start()
    time.sleep(1.0)  # several reports (one each 0.2 s)
    link.stop_event.set()
    assert link.lines.count("pool link: T8: health report refused: board T8 is not a member of any pool") == 1, \
        link.lines
    assert store.db.execute("SELECT count(*) FROM pool_health").fetchone() == (0,)


def test_a_board_that_stops_answering_its_status_is_reported_silent_to_the_pool(ledger, store, served, pool_keys,
                                                                                tmp_path):
    """What only the table knows reaches the floor page: its board hangs, so the pool is told
    `board_silent` (a port whose board has not said who it is is not asked)."""
    nameless = types.SimpleNamespace(board_id=None, connected=False, frames_refused=0, link=None)
    link = link_of(served, ledger, pool_keys, tmp_path, loops=[nameless, HungBoard(BOARD)], lost_after_s=0.6)
    link.start()
    try:
        deadline = time.time() + 10
        while store.db.execute("SELECT state FROM pool_health WHERE board=%s",
                               (BOARD,)).fetchone() != ("board_silent",):
            assert time.time() < deadline, link.lines
            time.sleep(0.1)
    finally:
        link.close(timeout_s=1.0)
    assert link.reported[BOARD]["state"] == "board_silent"


def test_a_pool_that_hangs_at_close_holds_the_stop_no_longer_than_its_bound(ledger, table, pool_keys, tmp_path):
    """A pool that takes the connection and never answers: the first board's closing report waits
    the bound at most, the boards after it are not waited for."""
    import socket
    hang = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    hang.bind(str(tmp_path / "hang.sock"))
    hang.listen(8)
    try:
        link = link_of("unix:" + str(tmp_path / "hang.sock"), ledger, pool_keys, tmp_path,
                       loops=[table, HungBoard("T2")])
        started = time.monotonic()
        link.close(timeout_s=0.5)
        assert time.monotonic() - started < 1.5
        assert len(link.lines) == 1 and link.lines[0].startswith(
            "pool link: sim-test: could not tell the pool this table closes: pool unreachable: "), link.lines
        assert link.report_health(table) is None
    finally:
        hang.close()


# ---------------------------------------------------------------------- a table on another machine (TCP)
def test_over_tcp_only_a_current_credential_of_this_pool_is_served_and_it_speaks_for_its_board_only(
        store, pg_url, pool_keys, tmp_path):
    import socket
    from tablectl.pool.client import PoolClient, PoolError
    logged = []
    server = PoolServer(pg_url, pool_keys, ["tcp:127.0.0.1:0"], log=logged.append, poll_s=0.05)
    server.start()
    try:
        url = "tcp:127.0.0.1:%d" % server.sockets[0][2].getsockname()[1]
        mine = issue_table_credential(pool_keys, BOARD, str(tmp_path / "mine"))
        client = PoolClient(url, mine, timeout_s=5)
        assert client.request("hello", board=BOARD)["pool"] == "floor"
        with pytest.raises(PoolError, match="^this connection speaks for board sim-test, not T9$"):
            client.request("tokens", board="T9", tokens=[{"q": 1}])
        client.close()
        # no TLS at all; a credential of another pool's authority; one this pool retired
        raw = socket.create_connection(server.sockets[0][2].getsockname(), timeout=5)
        raw.sendall(b'{"op": "status"}\n')
        try:
            answered = raw.recv(100)
        except ConnectionResetError:  # closed with the request unread
            answered = b""
        assert answered == b""
        raw.close()
        stranger_keys = str(tmp_path / "other.keys")
        other = issue_table_credential(stranger_keys, BOARD, str(tmp_path / "other"))
        with pytest.raises(ConnectionError, match="^pool unreachable: "):
            PoolClient(url, other, timeout_s=5).request("hello", board=BOARD)
        issue_table_credential(pool_keys, BOARD, str(tmp_path / "newer"))
        with pytest.raises(ConnectionError, match="^pool unreachable: "):
            PoolClient(url, mine, timeout_s=5).request("hello", board=BOARD)
        assert server.refused == 3
        assert sum("refused a connection without a credential of this pool" in line for line in logged) == 2, logged
        assert "pool: refused a retired credential of board sim-test (a newer one was issued)" in logged
        assert "pool: refused: the credential of board sim-test asked tokens for board T9" in logged
        assert store.status("floor")["tokens"] == 0 and store.status("other")["tokens"] == 0
    finally:
        server.stop()


def _books(store):
    """Every table that is money or proves it."""
    return {t: store.db.execute("SELECT * FROM %s ORDER BY 1" % t).fetchall()
            for t in ("pools", "pool_boards", "pool_ledger", "pool_chain", "pool_hits", "pool_declarations")}


def test_a_tables_malformed_requests_are_refused_one_by_one_and_nothing_is_recorded(store, served, pool_keys,
                                                                                    tmp_path):
    from tablectl.pool.client import PoolClient, PoolError
    client = PoolClient(served, issue_table_credential(pool_keys, BOARD, str(tmp_path / "cred")), timeout_s=10)
    before = _books(store)
    tokens_say = "tokens must be a list of 1 to 1000 token events"
    q_say = "a token needs its board sequence number q (a whole number >= 1)"
    hands_say = "hit needs 1 to 8 hands [seat, cards]"
    hand_say = 'a hand is [seat 0..7, "As Ks Qs Js Ts"] (the initial five cards)'
    round_say = "hit needs round (a whole number)"
    hit = dict(board=BOARD, round=1, hands=[[0, ROYAL]], statement=statement(BOARD, 1))
    for op, fields, says in (
            ("tokens", dict(board=BOARD), tokens_say), ("tokens", dict(board=BOARD, tokens=[]), tokens_say),
            ("tokens", dict(board=BOARD, tokens={"q": 1}), tokens_say),
            ("tokens", dict(board=BOARD, tokens=[{"q": n} for n in range(1, 1002)]), tokens_say),
            ("tokens", dict(board=BOARD, tokens=[{"q": 0}]), q_say),
            ("tokens", dict(board=BOARD, tokens=[{"q": "1"}]), q_say),
            ("tokens", dict(board=BOARD, tokens=[{"q": 1.5}]), q_say), ("tokens", dict(board=BOARD, tokens=[1]), q_say),
            ("tokens", dict(board=BOARD, tokens=[{"q": 1}, {"seat": 0}]), q_say),
            ("paid", dict(board=BOARD, award="{}"), "paid needs the board's signed award event {q, raw, mac}"),
            ("hit", dict(hit, hands=[]), hands_say), ("hit", dict(hit, hands=[[0, ROYAL]] * 9), hands_say),
            ("hit", dict(hit, hands="As Ks Qs Js Ts"), hands_say),
            ("hit", dict(hit, hands=[[0]]), hand_say), ("hit", dict(hit, hands=[[True, ROYAL]]), hand_say),
            ("hit", dict(hit, hands=[[8, ROYAL]]), hand_say), ("hit", dict(hit, hands=[[-1, ROYAL]]), hand_say),
            ("hit", dict(hit, hands=[[0, ["As"]]]), hand_say), ("hit", dict(hit, hands=[{"seat": 0}]), hand_say),
            ("hit", dict(hit, round=-1), round_say), ("hit", dict(hit, round="1"), round_say),
            ("hit", dict(hit, round=True), round_say),
            ("hit", {k: v for k, v in hit.items() if k != "round"}, round_say),
            ("hit", dict(hit, statement=None), "a hit needs the board's signed jackpot statement (the state event the "
                                               "dealer's jackpot key made)"),
            ("hello", dict(board=""), "hello needs a board id"), ("amount", dict(board=7), "amount needs a board id"),
            ("drain", dict(board=BOARD), "unknown request 'drain'"), (None, {}, "unknown request None")):
        with pytest.raises(PoolError) as exc:
            client.request(op, **fields)
        assert str(exc.value) == says, (op, fields)
    # a request that is not an object, on the same connection, which keeps serving
    client.sock.sendall(b'["tokens"]\n')
    line = client.sock.recv(65536)
    assert json.loads(line) == {"ok": False, "error": "a request is a JSON object"}
    # what the books refuse comes back with their reason: a hit of a seat whose token the pool does not hold
    with pytest.raises(PoolError, match="^table sim-test seat 1 has no progressive token of round 1 in the pool: "
                                        "not eligible$"):
        client.request("hit", board=BOARD, seat=0, cards=ROYAL, round=1, statement=statement(BOARD, 1))
    assert _books(store) == before
    assert client.request("status")["ok"] and client.request("amount", board=BOARD)["pool"] == "floor"
    client.close()


def test_a_board_that_is_no_member_is_refused_at_its_hello_and_its_amount(store, served, pool_keys, tmp_path):
    from tablectl.pool.client import PoolClient, PoolError
    client = PoolClient(served, issue_table_credential(pool_keys, "T8", str(tmp_path / "cred")), timeout_s=10)
    for op in ("hello", "amount"):
        with pytest.raises(PoolError, match="^board T8 is not a member of any pool$"):
            client.request(op, board="T8")
    client.close()


@pytest.mark.parametrize("url, says", [
    ("tcp:pool.floor", "pool address 'tcp:pool.floor': say tcp:HOST:PORT"),
    ("tcp::7070", "pool address 'tcp::7070': say tcp:HOST:PORT"),
    ("tcp:pool.floor:http", "pool address 'tcp:pool.floor:http': say tcp:HOST:PORT"),
    ("pool.floor:7070", "pool address 'pool.floor:7070': say unix:/path/to/pool.sock or tcp:HOST:PORT"),
    ("https://pool.floor", "pool address 'https://pool.floor': say unix:/path/to/pool.sock or tcp:HOST:PORT")])
def test_a_pool_address_that_is_neither_a_socket_path_nor_host_and_port_is_refused(pool_keys, tmp_path, url, says):
    from tablectl.pool.client import PoolClient
    with pytest.raises(TablectlError) as exc:
        PoolClient(url, issue_table_credential(pool_keys, BOARD, str(tmp_path / "cred")))
    assert str(exc.value) == says


def test_a_pool_restarted_after_a_crash_takes_its_socket_path_back(store, pg_url, pool_keys, tmp_path):
    """A pool that died leaves its socket file behind: the next start replaces it and serves."""
    import socket
    from tablectl.pool.client import PoolClient
    path = str(tmp_path / "pool.sock")
    left = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    left.bind(path)
    left.close()
    assert os.path.exists(path)
    server = PoolServer(pg_url, pool_keys, "unix:" + path, log=lambda line: None)
    server.start()
    try:
        client = PoolClient("unix:" + path, issue_table_credential(pool_keys, BOARD, str(tmp_path / "cred")))
        reply = client.request("hello", board=BOARD, rid=41)
        assert (reply["pool"], reply["last_seq"], reply["rid"]) == ("floor", 0, 41)  # a request's id comes back
        client.close()
    finally:
        server.stop()
    assert not os.path.exists(path)


def test_a_lock_voided_before_the_boards_award_arrives_is_not_reported_as_taken(ledger, store, served, pool_keys,
                                                                                 tmp_path):
    # The pool refuses the board's award of a voided lock: confirm() must not count it as taken,
    # or `tablectl jackpot` shows the payment without its "the pool has not yet taken" warning.
    journal(ledger, BOARD, {"k": "coin", "seat": 0, "round": 1})
    store.record_tokens([(BOARD, [{"q": 1, "raw": None, "mac": None, "seat": 0, "round": 1}])])
    lock = store.hit(BOARD, 1, 0, ROYAL, statement=statement(BOARD, 1))
    admin(store, "void", "floor", {"lock_no": lock["lock_no"], "reason": "board thought dead"})
    journal(ledger, BOARD, {"k": "award", "lock": lock["lock_no"], "round": 1, "seat": 0,
                            "pool_cents": lock["amount_cents"]})
    link = link_of(served, ledger, pool_keys, tmp_path)
    got = link.confirm(types.SimpleNamespace(board_id=BOARD), [lock["lock_no"]], timeout_s=0.5)
    assert [line for line in link.lines if "was voided" in line] != []  # the pool refused it, said once
    assert got == set()
    assert link.confirm(types.SimpleNamespace(board_id=BOARD), [lock["lock_no"]], timeout_s=0.2) == set()
    assert len([line for line in link.lines if "was voided" in line]) == 1  # not sent again
