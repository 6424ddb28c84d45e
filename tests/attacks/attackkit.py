"""The attacker's bench: a real virtual board (`tablectl sim`: the firmware on MicroPython behind a
pseudo-terminal), the real service (tablectl.service.Service, in this process so a test can make
its disk fill up), and between them a wire the attacker sits on: every frame either way passes
through `Wire`, which can record it, drop it, or write forged and replayed bytes in either
direction. The CLI is run as a technician runs it (subprocesses).
"""
import argparse
import json
import os
import select
import shutil
import subprocess
import sys
import termios
import threading
import time
import tty

import pytest

from tabledev import procs
from table import protocol as proto
from tabledev.bench import Bench
from tablectl.service import Service

TABLECTL = os.path.join(os.path.dirname(sys.executable), "tablectl")


def tablectl(*args, db, check=True, timeout=60, env=None):
    env = dict(env or os.environ, TABLECTL_DB=db)
    env.pop("TABLECTL_PORT", None)
    proc = subprocess.run([TABLECTL] + [str(a) for a in args], capture_output=True, text=True,
                          timeout=timeout, env=env)
    assert "Traceback" not in proc.stderr, proc.stderr
    if check:
        assert proc.returncode == 0, "tablectl %s: %s%s" % (" ".join(map(str, args)), proc.stdout, proc.stderr)
    return proc


# What a caller of another user does at the control socket: connect, ask, read. Run by a process of
# another user (ask_as_another_user), so written for a bare interpreter: sockets only.
_OTHER_CALLER = """
import socket, sys
def ask(path, request):
    c = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    c.settimeout(10)
    try:
        c.connect(path)
    except OSError as exc:
        return "cannot connect: %r" % (exc,)
    try:
        c.sendall(request)
        answer = c.recv(100)
    except (BrokenPipeError, ConnectionResetError):  # closed before or after the request
        answer = b""
    return ("answer: %r" % (answer,)) if answer else "closed"
"""


def other_user_route():
    """How this machine runs a process of another user: "root" (a forked child drops to nobody),
    "subuid" (an unprivileged user's own range of user ids, /etc/subuid, through `unshare
    --map-auto`), or None. The kernel names a caller by its user id outside every namespace, so an
    unprivileged user without such a range cannot make a caller the kernel calls someone else."""
    if os.getuid() == 0:
        return "root"
    unshare = shutil.which("unshare")
    if unshare and subprocess.run([unshare, "--map-auto", "true"], capture_output=True).returncode == 0:
        return "subuid"
    return None


def ask_as_another_user(sock_path, request):
    """The control socket asked by a process of another user (other_user_route). Returns that
    process's report: "closed" (it connected and was shut out without an answer), "answer: ..."
    or "cannot connect: ...". Only the socket's folder is opened to others, for search (o+x), while
    the caller runs; the caller finds the socket by its name in that folder (its working folder),
    so the folders above it stay closed."""
    route = other_user_route()
    assert route is not None, "no way to run a process of another user here (see other_user_route)"
    folder, name = os.path.split(os.path.abspath(sock_path))
    mode = os.stat(folder).st_mode
    os.chmod(folder, mode | 0o001)
    try:
        if route == "subuid":
            proc = subprocess.run([shutil.which("unshare"), "--map-auto", "--", sys._base_executable, "-I", "-S",
                                   "-c", _OTHER_CALLER + "print(ask(sys.argv[1], sys.argv[2].encode()))", name,
                                   request.decode()], cwd=folder, capture_output=True, text=True, timeout=30)
            assert proc.returncode == 0, proc.stderr
            return proc.stdout.strip()
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the other user's process: no exec (nobody may not be able to read this interpreter)
            report = "cannot become nobody"
            try:
                os.chdir(folder)
                os.setgroups([])
                os.setgid(65534)
                os.setuid(65534)
                if os.getuid() == os.geteuid() == 65534:
                    scope = {}
                    exec(_OTHER_CALLER, scope)
                    report = scope["ask"](name, request)
            except BaseException as exc:
                report = "cannot: %r" % (exc,)
            os.write(write_end, report.encode()[:300])
            os._exit(0)
        os.close(write_end)
        os.waitpid(pid, 0)
        with os.fdopen(read_end, "rb") as f:
            return f.read().decode()
    finally:
        os.chmod(folder, mode)


class Wire:
    """A man in the middle on the serial line: board port <-> a new pty the service opens."""

    def __init__(self, board_port):
        self.board_fd = os.open(board_port, os.O_RDWR | os.O_NOCTTY)
        tty.setraw(self.board_fd)
        self.master, slave = os.openpty()
        tty.setraw(slave)
        attrs = termios.tcgetattr(slave)
        attrs[3] &= ~termios.ECHO
        termios.tcsetattr(slave, termios.TCSANOW, attrs)
        self.host_port = os.ttyname(slave)
        self._slave = slave  # kept open so the pty lives while the service reopens it
        self.to_host = proto.FrameReader()
        self.to_board = proto.FrameReader()
        self.frames_to_host = []   # (raw frame bytes, message)
        self.frames_to_board = []
        self.cut = False           # the line is cut: nothing passes either way
        self.stop = False
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _tap(self, reader, store, data):
        for frame in reader.feed(data):
            raw = proto.cobs_encode(frame.signed + (frame.mac or b"") + proto._le32(
                proto.crc32(frame.signed + (frame.mac or b"")))) + b"\x00"
            store.append((raw, frame.message))

    def _run(self):
        board_fd = self.board_fd
        while not self.stop:
            r, _, _ = select.select([board_fd, self.master], [], [], 0.05)
            if board_fd in r:
                try:
                    data = os.read(board_fd, 4096)
                except OSError:
                    data = b""
                if not data:
                    time.sleep(0.02)  # the board is rebooting (power cut): its port comes back
                if data and not self.cut:
                    with self.lock:
                        self._tap(self.to_host, self.frames_to_host, data)
                        os.write(self.master, data)
            if self.master in r:
                try:
                    data = os.read(self.master, 4096)
                except OSError:
                    data = b""
                if data and not self.cut:
                    with self.lock:
                        self._tap(self.to_board, self.frames_to_board, data)
                        self._to_board(data)

    def _to_board(self, data):
        try:
            os.write(self.board_fd, data)
        except OSError:
            pass  # the board is off: bytes on a dead line are lost, as on a real one

    def inject_to_board(self, data):
        with self.lock:
            self._to_board(data)

    def inject_to_host(self, data):
        with self.lock:
            os.write(self.master, data)

    def close(self):
        self.stop = True
        self.thread.join(2)
        os.close(self.board_fd)
        os.close(self.master)
        os.close(self._slave)


class Table:
    """One table under attack. `served` says whether the service is running."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.state = str(tmp / "board")
        self.db = str(tmp / "table.db")
        self.logs = []
        self.service_log = []
        self.sim = None
        self.service = None
        self.start_board()
        self.wire = Wire(self.port)
        self.start_service()

    # --- processes --------------------------------------------------------------------------
    def start_board(self):
        self.sim, log, self.port = procs.start_sim(self.state, str(self.tmp / "sim.log"))
        self.logs.append(log)
        self.bench = Bench(self.state)

    def start_service(self):
        self.service = Service([self.wire.host_port], self.db, log=self.service_log.append)
        self.service.start()
        self.wait(lambda: self.port_loop().board_id is not None and self.port_loop().connected, "the service to see the board")

    def stop_service(self):
        self.service.stop()
        for s in self.service.loops:
            s.join(3)
        self.service = None

    def port_loop(self):
        return self.service.loops[0]

    def close(self):
        if self.service is not None:
            self.service.stop()
        procs.stop(self.sim)
        self.wire.close()
        self.bench.close()
        for log in self.logs:
            log.close()

    # --- the technician's side ------------------------------------------------------------------
    def cli(self, *args, check=True):
        return tablectl(*args, db=self.db, check=check)

    def status(self):
        return json.loads(self.cli("status", "--json").stdout)

    def meters(self):
        return json.loads(self.cli("meters", "--json").stdout)

    def provision(self):
        self.bench.switch(True)
        self.cli("provision")
        self.bench.switch(False)

    def coin(self, seat_number):
        """A token at seat N (1-based), waited for until the ledger has it."""
        before = self.count("coin")
        self.bench.coin(seat_number - 1)
        self.wait(lambda: self.count("coin") > before, "the token in the ledger")

    def key(self, name):
        want = {"lock": "LOCKED", "unlock": "OPEN", "jackpot": "JACKPOT_PENDING"}[name]
        self.bench.key(name)
        self.wait(lambda: self.status()["base_state"] == want, "the table to be %s" % want)

    def ledger(self):
        from tablectl.ledger import Ledger
        return Ledger(self.db, readonly=True)

    def rows(self, kind):
        led = self.ledger()
        try:
            return list(led.events(None, (kind,)))
        finally:
            led.close()

    def count(self, kind):
        return len(self.rows(kind))

    def wait(self, predicate, what, timeout_s=20.0):
        deadline = time.monotonic() + timeout_s
        while True:
            try:
                if predicate():
                    return
            except (AssertionError, OSError, ValueError, KeyError, TypeError):
                pass
            if time.monotonic() > deadline:
                raise AssertionError("timed out waiting for %s" % what)
            time.sleep(0.1)

    def settle(self):
        """Every event the board has is in the ledger and acknowledged."""
        self.wait(lambda: self.status()["unacked_events"] == 0, "the outbox to drain")

    def target_args(self):
        return argparse.Namespace(db=self.db, port=None, board=None)


@pytest.fixture
def table(tmp_path):
    t = Table(tmp_path)
    try:
        yield t
    finally:
        t.close()
