"""End to end: the real firmware on a virtual board (`tablectl sim`), the real service
(`tablectl serve`) over the pty, and the CLI as a technician runs it (subprocesses throughout).

Two boards: `table` has a service on its port (the CLI goes through the service); `bench_board`
has none (bench use: the CLI talks to --port directly, and mpremote can have the port).
"""
import json
import os
import re
import signal
import subprocess
import sys
import time

import pytest

from tabledev import procs

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BIN = os.path.dirname(sys.executable)
TABLECTL = os.path.join(BIN, "tablectl")
MPREMOTE = [sys.executable, "-m", "mpremote"]


def tablectl(*args, env=None, timeout=60, check=True):
    proc = subprocess.run([TABLECTL] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                          env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    if check:
        assert proc.returncode == 0, "tablectl %s failed (%d):\n%s\n%s" % (
            " ".join(map(str, args)), proc.returncode, proc.stdout, proc.stderr)
    return proc


def _start(cmd, log_path):
    # cmd is [TABLECTL, sub-command, ...]; the shared helper runs the same CLI in its own group.
    return procs.start(cmd[1:], log_path)


_stop = procs.stop


class Board:
    def __init__(self, tmp, with_service):
        self.state = str(tmp / "board")
        self.db = str(tmp / "table.db")
        self.sim = self.serve = None
        self.logs = []
        self.sim, log = _start([TABLECTL, "sim", "--state", self.state], str(tmp / "sim.log"))
        self.logs.append(log)
        line = self.sim.stdout.readline()
        assert line.startswith("port "), line
        self.port = line.split()[1]
        self.env = dict(os.environ, TABLECTL_DB=self.db)
        if with_service:
            self.serve, log = _start([TABLECTL, "serve", "--port", self.port, "--db", self.db], str(tmp / "serve.log"))
            self.logs.append(log)
            deadline = time.monotonic() + 15
            while True:
                p = tablectl("status", "--json", env=self.env, check=False)
                if p.returncode == 0:
                    break
                assert time.monotonic() < deadline, "the service never answered: %s" % p.stderr
                time.sleep(0.2)
        else:
            self.env["TABLECTL_PORT"] = self.port
            self.env["TABLECTL_DB"] = str(tmp / "bench.db")

    def run(self, *args, **kw):
        kw.setdefault("env", self.env)
        return tablectl(*args, **kw)

    def bench(self, *args):
        return tablectl("bench", "--state", self.state, *args)

    def close(self):
        _stop(self.serve)
        _stop(self.sim)
        for log in self.logs:
            log.close()


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    board = None
    try:
        board = Board(tmp_path_factory.mktemp("table"), with_service=True)
        yield board
    finally:
        if board is not None:
            board.close()


@pytest.fixture(scope="module")
def bench_board(tmp_path_factory):
    board = None
    try:
        board = Board(tmp_path_factory.mktemp("bench"), with_service=False)
        yield board
    finally:
        if board is not None:
            board.close()


# --- through the service --------------------------------------------------------------------------
def test_status_meters_lock_unlock_events(table):
    before = json.loads(table.run("status", "--json").stdout)
    assert before["state"] == "OPEN" and before["seats"] == 7
    table.bench("coin", 2)
    table.bench("coin", 5)
    status = json.loads(table.run("status", "--json").stdout)
    assert status["meter_cents"] == before["meter_cents"] + 2 * 70
    assert {2, 5} <= set(status["seats_lit"])  # seat numbers from 1, as the bench names them
    meters = json.loads(table.run("meters", "--json").stdout)
    assert meters["tokens_per_seat"][1] >= 1 and meters["tokens_per_seat"][4] >= 1
    # every field the real board sent comes out under its documented readable name (docs/CLI-JSON.md)
    from tablectl import readable
    assert set(meters) == {name for name, _ in readable.METERS.values()}
    assert set(status) == {name for name, _ in readable.STATUS.values()}
    assert "progressive meter" in table.run("meters").stdout
    assert table.run("lock").stdout.strip() == "table LOCKED"
    assert table.run("unlock").stdout.strip() == "table OPEN"
    events = [json.loads(line) for line in table.run("events", "--json", "--last", "0").stdout.splitlines()]
    kinds = [e["kind"] for e in events]
    assert kinds.count("coin") >= 2 and "state" in kinds
    # seats from 1 in the JSON too, as the text and the bench name them (docs/CLI-JSON.md)
    assert {e["body"]["seat"] for e in events if e["kind"] == "coin"} >= {2, 5}


def test_loop_rate_through_the_service(table):
    figures = json.loads(table.run("loop", "--seconds", "0.5", "--json").stdout)
    assert figures["board_ms"] >= 400 and figures["turns"] > 0
    assert figures["turns_per_s"] == figures["turns"] * 1000 // figures["board_ms"]
    assert "turns/s" in table.run("loop", "--seconds", "0.2").stdout


def test_config_get_and_set_in_service(table):
    assert "increment_cents" in table.run("config", "get").stdout
    assert table.run("config", "get", "increment_cents").stdout.strip() == "increment_cents = 70"
    table.bench("switch", "on")
    assert "provisioned" in table.run("provision").stdout
    # the board refuses a change outside SERVICE, says why, and keeps running
    refused = table.run("config", "set", "increment_cents", "60", check=False)
    assert refused.returncode == 1 and refused.stderr.startswith("tablectl: board refused config_set")
    assert table.run("unlock", check=False).stderr.startswith("tablectl: board refused unlock")
    assert table.run("service", "enter").stdout.strip() == "table SERVICE"
    out = table.run("config", "set", "increment_cents", "60").stdout
    assert out.strip() == "increment_cents = 60 (was 70)"
    # checked on the host before it is sent: a clear error, nothing sent
    bad = table.run("config", "set", "increment_cents", "lots", check=False)
    assert bad.returncode == 1 and bad.stderr.startswith("tablectl: ")
    assert table.run("service", "exit").stdout.strip() == "table LOCKED"
    table.run("unlock")
    assert json.loads(table.run("config", "get", "increment_cents", "--json").stdout) == {"increment_cents": 60}
    table.bench("switch", "off")


def test_report_from_the_live_ledger(table, tmp_path):
    rep = json.loads(table.run("report", "coin-in", "--json").stdout)
    seats = {r["seat"]: r["tokens"] for r in rep["seats"]}
    assert seats[2] >= 1 and seats[5] >= 1
    png = tmp_path / "meters.png"
    out = table.run("report", "meters", "--plot", png, "--csv", tmp_path / "m.csv").stdout
    assert "chart written to" in out and png.read_bytes()[:4] == b"\x89PNG"
    assert "no jackpots" in table.run("report", "jackpots").stdout


def test_monitor_once(table):
    out = table.run("monitor", "--once").stdout
    assert out.startswith("TABLE ")
    assert "meter   $" in out and "state   OPEN" in out
    assert " 7    " in out  # seven seat rows
    assert "coin" in out  # the event feed from the ledger
    data = json.loads(table.run("monitor", "--once", "--json").stdout)
    assert data["status"]["seats"] == 7 and data["events"]


def test_monitor_live_leaves_on_ctrl_c(table):
    proc = subprocess.Popen([TABLECTL, "monitor", "--interval", "0.2"], env=table.env, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        time.sleep(1.5)
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=5)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0 and "Traceback" not in err
    assert out.count("TABLE ") >= 2 and out.endswith("\x1b[?25h\n")


# --- bench use: no service, straight to the port ----------------------------------------------
def test_diag_with_the_bench(bench_board):
    b = bench_board
    for test, seats, items in (("acceptor", ["3"], 3), ("sensors", ["2"], 6), ("keypad", [], 8),
                               ("display", [], 3), ("lamps", ["6"], 3)):
        p = b.run("diag", test, *seats, "--bench", b.state, "--yes", "--json")
        result = json.loads(p.stdout)
        assert result["summary"] == {"PASS": items, "FAIL": 0, "SKIP": 0}, result
    text = b.run("diag", "acceptor", "4", "--bench", b.state).stdout
    assert "drop one token in seat 4 now" in text and "PASS  seat 4: token counted" in text
    # nobody drops a token: a FAIL with what to check, exit status 1
    p = b.run("diag", "acceptor", "1", "--yes", "--timeout", "1", check=False)
    assert p.returncode == 1 and "FAIL  seat 1: token counted" in p.stdout


def test_flash_with_mpremote(bench_board):
    b = bench_board
    # a board running the controller has no REPL: flash says so and what to do
    p = b.run("flash", "--port", b.port, check=False)
    assert p.returncode == 1
    assert "running the table controller" in p.stderr and "service-boot" in p.stderr
    b.bench("service-boot")
    ls = subprocess.run(MPREMOTE + ["connect", b.port, "fs", "ls", ":"], capture_output=True, text=True, timeout=30)
    assert ls.returncode == 0 and "main.py" in ls.stdout, ls.stderr
    # the sources for a Pico on its official pin map (a raw log reserved): refused before a copy,
    # saying what to flash instead
    p = b.run("flash", "--port", b.port, "--hw", "pico", check=False)
    assert p.returncode == 1 and "Flash the compiled tree: `make mpy`" in p.stderr and \
        p.stderr.endswith("nothing was copied\n"), p.stderr
    p = b.run("flash", "--port", b.port, timeout=120)
    assert "every sha256 the board reports matches the manifest" in p.stdout
    manifest = json.load(open(os.path.join(b.state, "fs", "manifest.json")))
    assert "main.py" in manifest and "table/app.py" in manifest and "boards/sim.py" in manifest
    status = json.loads(b.run("status", "--json").stdout)
    assert status["state"] == "OPEN" and "selfcheck" not in status["faults"]


# --- errors and help ------------------------------------------------------------------------------
def test_errors_are_one_line_exit_1(tmp_path):
    env = dict(os.environ, TABLECTL_DB=str(tmp_path / "none.db"))
    env.pop("TABLECTL_PORT", None)
    cases = [
        (["status"], "no service runs"),
        (["monitor", "--once"], "no service runs"),
        (["report", "meters"], "no ledger at"),
        (["flash", "--port", str(tmp_path / "no-such-tty")], "cannot open"),
        (["diag", "display", "--port", str(tmp_path / "no-such-tty")], "cannot open"),
        (["bench", "--state", str(tmp_path), "coin", "1"], "no virtual board runs"),
    ]
    for args, text in cases:
        p = tablectl(*args, env=env, check=False)
        assert p.returncode == 1, args
        assert p.stderr.startswith("tablectl: ") and text in p.stderr, (args, p.stderr)
        assert len(p.stderr.strip().splitlines()) == 1


def test_help_of_every_command_shows_an_example():
    """Every command in the table loads (an import, key or attribute error is a failure here,
    not a command quietly left out) and its --help ends with an example of itself: tablectl's own
    and those the developer's tools register (sim, bench)."""
    from tablectl import cli
    commands = cli.all_commands()
    assert {"sim", "bench"} <= set(commands)
    for name in commands:
        help_text, example, add_arguments, run = cli._load(name)
        assert help_text and callable(add_arguments) and callable(run), name
        assert example.startswith("tablectl %s" % name), (name, example)
    listed = subprocess.run([TABLECTL, "--help"], capture_output=True, text=True, timeout=30)
    assert listed.returncode == 0, listed.stderr
    for name in commands:
        assert re.search(r"^    %s\b" % re.escape(name), listed.stdout, re.M), name  # offered, not dropped
        p = subprocess.run([TABLECTL, name, "--help"], capture_output=True, text=True, timeout=30)
        assert p.returncode == 0, (name, p.stderr[-300:])
        assert "example:\n  tablectl %s" % name in p.stdout, (name, p.stdout[-300:])
