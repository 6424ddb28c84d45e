"""The service's control socket (what the CLI speaks to `tablectl serve`), with a board that is
not there: every request gets a one-line answer saying what is wrong, and the service keeps
serving. The connected paths run end to end in tests/e2e (two tables, service kill, the CLI)."""
import json
import os
import socket
import time

import pytest

from tablectl.service import Service, control_path


@pytest.fixture
def service(tmp_path):
    port = str(tmp_path / "no-such-tty")
    svc = Service([port], str(tmp_path / "t.db"), log=lambda *a: None)
    svc.start()
    yield svc, port
    svc.stop()


def ask(svc, *requests):
    """Send JSON lines over one connection; return one reply per line (raw lines may be bytes)."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(control_path(svc.db_path))
        s.settimeout(20)
        for r in requests:
            s.sendall(r if isinstance(r, bytes) else json.dumps(r).encode() + b"\n")
        buf = b""
        while buf.count(b"\n") < len(requests):
            chunk = s.recv(65536)
            assert chunk, "the service closed the connection"
            buf += chunk
    return [json.loads(line) for line in buf.splitlines()]


def test_sessions_show_a_board_that_never_connected(service):
    svc, port = service
    time.sleep(0.8)  # the link thread has tried (and failed) to open the port at least once
    [r] = ask(svc, {"op": "sessions"})
    assert r == {"ok": True, "sessions": [{"port": port, "board": None, "connected": False,
                                           "events_recorded": 0}]}


def test_errors_are_answers_and_the_service_goes_on(service):
    svc, port = service
    replies = ask(svc,
                  {"op": "command", "cmd": "status"},
                  {"op": "command", "board": "table-9", "cmd": "status"},
                  {"op": "status-please"},
                  b"this is not json\n",
                  {"op": "commit_times", "port": port})
    assert replies[0] == {"ok": False, "error": "board on %s is not connected" % port}
    assert replies[1]["ok"] is False
    assert replies[1]["error"].startswith("this service has no board table-9 (it has no board yet on ")
    assert replies[2] == {"ok": False, "error": "unknown request 'status-please'"}
    assert replies[3]["ok"] is False and replies[3]["error"]
    assert replies[4] == {"ok": True, "board": None, "committed": []}
    [again] = ask(svc, {"op": "command", "port": str(port) + "-other", "cmd": "status"})
    assert again == {"ok": False, "wrong_target": True,
                     "error": "this service has no port %s-other (it has no board yet on %s)" % (port, port)}
