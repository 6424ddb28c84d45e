"""The linked pool at floor scale (docs/POOL.md), with authentication on: N tables (default 200)
simulated at the link level, each sending its board's signed tokens to `tablectl pool serve` as
`tablectl serve --pool` does (one request at a time, the next after the reply) over its own mutual
TLS connection with a credential of its own (`tablectl pool credential`), to a floor pool that
takes only what a board signed (`pool serve --table-keys`, one table key per board), on a
PostgreSQL server of its own (started in a temporary folder, unix socket, fsync on).

The peer without authentication is the code before it (commit PRE_AUTH, the last one without
it), not a switch in the product: the benchmark takes that commit's host_tools/ and firmware/ with
`git archive` into its temporary folder, starts that tree's `pool serve` (no TLS, no table keys,
unsigned tokens) and feeds it with a plain JSON-lines client. The two alternate (auth, plain,
plain, auth, ...), each on a fresh PostgreSQL, in the same run.

Measured for both:
- sustained tokens/s committed (the pool's replies come after the commit), and the p99 time from
  a token's send to its commit reply (token -> pool commit);
- p99 pool -> display: each table asks the pool's amount every 200 ms on a second connection (as
  PoolLink does) and would send it to its board; the figure is the time from the commit that set
  the amount to the table holding it (the board's serial `linked` command adds the link's few ms;
  docs/BENCHMARKS link section);
- the anchor: the same tables each with its own SQLite ledger (tablectl/ledger.py, WAL,
  synchronous FULL: the table's own books), committing the same token events.

Goals (the linked jackpot's): with authentication at most 20 % slower than without (tokens/s and
p99 token -> commit); every linked display shows the new amount within 1 s (p99 pool -> display).
The failover figure (POOL OFF when the primary dies, tokens lost) is quoted from `make faults-pool`'s
record.

    .venv/bin/python benchmarks/bench_pool.py [--tables 200] [--seconds 20] [--rounds 2]
"""
import argparse
import json
import os
import re
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
import time

from _common import ROOT, machine_note, table, write_section

sys.path.insert(0, os.path.join(ROOT, "host_tools"))

from tablectl.ledger import Ledger  # noqa: E402
from tablectl.pool.client import PoolClient, PoolError  # noqa: E402
from tabledev import procs  # noqa: E402
from tabledev.floor import Floor, signed_token  # noqa: E402
from tabledev.pgserver import PgServer  # noqa: E402

TARGET_DISPLAY_S = 1.0
TARGET_SLOWER = 0.20  # authentication at most 20 % slower (tokens/s and p99 token -> commit)
PRE_AUTH = "8f19f05143859d9ed9d4d70c85ba0c8937c07e49"  # the last commit before the pool's authentication
KEYLESS = bytes(32)  # the pre-authentication peer's boards: the same MAC work, the MAC not sent
PARAMS = {"seed_cents": 1000000, "increment_cents": 70, "ceiling_cents": 9999999999, "reserve_cents": 5}


def pct(values, p):
    if not values:
        return float("nan")
    v = sorted(values)
    return v[min(len(v) - 1, int(round(p / 100.0 * (len(v) - 1))))]


def boards_of(tables):
    return [("bt-%03d" % i, "caribbean_draw" if i % 3 else "caribbean_stud") for i in range(tables)]


def token(board, seq, key=None):
    """A coin event as the board journals and signs it (tabledev.floor.signed_token); without a
    key (the pre-authentication peer) the same event and work, its MAC not sent."""
    tok = signed_token(key or KEYLESS, board, seq, seat=seq % 7, round_no=seq)
    if key is None:
        tok["mac"] = None
    return tok


def _ticks(pid, children=False):
    """CPU clock ticks (user + system) of a process, its threads, and with children its reaped and
    live children (a PostgreSQL server: the postmaster and its backends)."""
    def stat(p):
        try:
            with open("/proc/%d/stat" % p) as f:
                return f.read().rsplit(")", 1)[1].split()
        except (OSError, ValueError):
            return None
    st = stat(pid)
    if st is None:
        return 0
    total = int(st[11]) + int(st[12])
    if children:
        total += int(st[13]) + int(st[14])
        for name in os.listdir("/proc"):
            if name.isdigit():
                c = stat(int(name))
                if c is not None and int(c[1]) == pid:
                    total += int(c[11]) + int(c[12])
    return total


def cpu_s(pool_pid, pg_pid):
    """(pool server, PostgreSQL, this process: the tables' clients) CPU seconds so far."""
    hz = os.sysconf("SC_CLK_TCK")
    mine = os.times()
    return (_ticks(pool_pid) / hz, _ticks(pg_pid, children=True) / hz if pg_pid else 0.0, mine.user + mine.system)


def drive(boards, seconds, connect, keys=None, pids=(None, None)):
    """N tables against a serving pool: per board a feeder (one token a request, the next after the
    commit reply) and a display poll (the amount every 200 ms), each on a connection of its own
    made by connect(board). Returns the figures of the measured window, with the CPU seconds the
    pool server (pid), PostgreSQL (postmaster pid) and the clients spent in it."""
    commit_lat = []
    display_lat = []
    committed = [0]
    errors = []
    lock = threading.Lock()
    stop = threading.Event()
    measuring = threading.Event()
    ready = threading.Semaphore(0)  # released once per connection that has had its first reply

    def feeder(board):
        try:
            client = connect(board)
            key = keys[board] if keys else None
            client.request("hello", board=board)
            ready.release()
            seq = 0
            while not stop.is_set():
                seq += 1
                tok = token(board, seq, key)  # the board's work, before the table service sends it
                t0 = time.monotonic()
                client.request("tokens", board=board, tokens=[tok])
                dt = time.monotonic() - t0
                if measuring.is_set():
                    with lock:
                        commit_lat.append(dt)
                        committed[0] += 1
        except Exception as exc:  # noqa: counted and shown
            errors.append("%s: %s" % (board, exc))

    def display(board):
        shown_at = None
        try:
            client = connect(board)
            first = True
            while not stop.is_set():
                reply = client.request("amount", board=board)
                now = time.time()
                if first:
                    ready.release()
                    first = False
                if reply.get("at") is not None and reply["at"] != shown_at:
                    shown_at = reply["at"]
                    if measuring.is_set():
                        with lock:
                            display_lat.append(now - reply["at"])
                time.sleep(0.2)
        except Exception as exc:  # noqa
            errors.append("%s display: %s" % (board, exc))
    threads = [threading.Thread(target=feeder, args=(b,), daemon=True) for b in boards]
    threads += [threading.Thread(target=display, args=(b,), daemon=True) for b in boards]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 120
    for _ in threads:  # every connection made (its handshake done) and answered once
        if not ready.acquire(timeout=max(0.0, deadline - time.monotonic())):
            errors.append("not every table connected within 120 s")
            break
    time.sleep(3.0)  # everyone running
    load = os.getloadavg()[0]
    cpu0 = cpu_s(*pids)
    measuring.set()
    t0 = time.monotonic()
    time.sleep(seconds)
    measuring.clear()
    elapsed = time.monotonic() - t0
    cpu = [b - a for a, b in zip(cpu0, cpu_s(*pids))]
    stop.set()
    for t in threads:
        t.join(10)
    return {"tps": committed[0] / elapsed, "commit_lat": commit_lat, "display_lat": display_lat,
            "errors": errors[:5], "error_count": len(errors), "load": load, "committed": committed[0], "cpu": cpu,
            "elapsed": elapsed}


def _pg(folder):
    return PgServer(os.path.join(folder, "pg")).init().start().create_database()


def _started(proc, folder):
    line = proc.stdout.readline()
    if not line.startswith("pool serving"):
        procs.stop(proc)
        with open(os.path.join(folder, "pool.log")) as f:
            raise RuntimeError("pool serve did not start: %r\n%s" % (line, f.read()[-2000:]))


def run_auth(tables, seconds, folder):
    """Today's pool as a floor runs it (tabledev.floor): a floor pool (not bench=1) serving with
    --table-keys, each table a link-level member with a table key and a credential of its own."""
    boards = boards_of(tables)
    floor = Floor(folder, tables=(), members=boards, params=PARAMS)
    try:
        floor.start()  # PostgreSQL, the pool and its members, `pool serve --table-keys`
        creds, keys = {}, {}
        for b, _game in boards:
            creds[b], keys[b] = floor.link_member(b)
        url = "unix:" + floor.sock
        out = drive([b for b, _ in boards], seconds, lambda b: PoolClient(url, creds[b], 30.0), keys,
                    (floor.pool_proc.pid, floor.pg.pid()))
        out["checks"] = auth_checks(url, creds, keys, floor.sock)
        out["tokens"] = floor.status()["tokens"]
        out["reconcile_ok"] = floor.reconcile()["ok"]
        return out
    finally:
        floor.stop()


def auth_checks(url, creds, keys, sock):
    """That authentication was on in the measured run: a caller with no credential is refused at the
    handshake, a token with a wrong MAC and a board spoken for by another's credential are refused."""
    a, b = sorted(creds)[:2]
    fails = []
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(10)
    try:
        s.connect(sock)
        s.sendall(b'{"op": "amount", "board": "%s"}\n' % a.encode())
        if s.recv(65536).startswith(b"{"):
            fails.append("a plaintext caller was answered")
    except OSError:
        pass
    finally:
        s.close()
    client = PoolClient(url, creds[a], 30.0)
    bad = token(a, 10 ** 9, secrets.token_bytes(32))
    for what, fields in (("a wrong MAC", {"board": a, "tokens": [bad]}),
                         ("another board's credential", {"board": b, "tokens": [token(b, 10 ** 9, keys[b])]})):
        try:
            client.request("tokens", **fields)
            fails.append(what + " was taken")
        except PoolError:
            pass
    client.close()
    return fails


class PlainClient:
    """The pre-authentication protocol: JSON lines on a plain unix socket."""

    def __init__(self, path, timeout_s=30.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_s)
        self.sock.connect(path)
        self.buf = b""

    def request(self, op, **fields):
        fields["op"] = op
        self.sock.sendall(json.dumps(fields).encode() + b"\n")
        while b"\n" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("the pool closed the connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        reply = json.loads(line)
        if not reply.get("ok"):
            raise RuntimeError(reply.get("error"))
        return reply


def pre_auth_tree(folder):
    """Commit PRE_AUTH's host_tools/ and firmware/ in folder (git archive: nothing of this
    checkout changes); returns the environment its programs run in."""
    tree = os.path.join(folder, "pre-auth")
    os.makedirs(tree)
    archive = subprocess.run(["git", "-C", ROOT, "archive", PRE_AUTH, "host_tools", "firmware"],
                             capture_output=True, timeout=120)
    if archive.returncode != 0:
        raise RuntimeError("the peer without authentication needs commit %s of this repository's history (git "
                           "archive: %s)" % (PRE_AUTH[:7], archive.stderr.decode().strip()))
    subprocess.run(["tar", "-x", "-C", tree], input=archive.stdout, check=True, timeout=120)
    env = dict(os.environ, PYTHONPATH="%s:%s" % (os.path.join(tree, "host_tools"), os.path.join(tree, "firmware")))
    where = subprocess.run([sys.executable, "-c", "import tablectl.pool.server as s; print(s.__file__)"], env=env,
                           cwd=tree, capture_output=True, text=True, timeout=60).stdout.strip()
    if not where.startswith(tree):
        raise RuntimeError("the pre-authentication tree's tablectl is not the one imported (%r)" % where)
    return tree, env


def _old(tree, env, code):
    """Run code under the pre-authentication tree; returns the JSON it prints last."""
    out = subprocess.run([sys.executable, "-c", code], env=env, cwd=tree, capture_output=True, text=True,
                         timeout=300)
    if out.returncode != 0:
        raise RuntimeError("pre-authentication code failed:\n%s" % out.stderr[-2000:])
    return json.loads(out.stdout.strip().splitlines()[-1])


def run_plain(tables, seconds, folder, tree, env):
    """The pool before authentication (commit PRE_AUTH): no TLS, no table keys, unsigned tokens."""
    os.makedirs(folder)
    pg = _pg(folder)
    try:
        pool_keys = os.path.join(folder, "pool.keys")
        sock = os.path.join(folder, "pool.sock")
        boards = boards_of(tables)
        common = ("import json\nfrom tablectl.pool.store import PoolStore\nfrom tabledev.floor import admin\n"
                  "store = PoolStore(%r, %r)\n" % (pg.url, pool_keys))
        _old(tree, env, common + "admin(store, 'create', 'floor', {'params': %r})\n"
                                 "for b, g in %r:\n    admin(store, 'member', 'floor', {'board': b, 'game': g})\n"
                                 "admin(store, 'service', 'floor', {'enter': False})\nprint('{}')\n"
             % (PARAMS, boards))
        log = open(os.path.join(folder, "pool.log"), "w")
        proc = subprocess.Popen([sys.executable, "-m", "tablectl.cli", "pool", "serve", "--db", pg.url, "--keys",
                                 pool_keys, "--listen", "unix:" + sock], env=env, cwd=tree, stdout=subprocess.PIPE,
                                stderr=log, text=True, start_new_session=True)
        try:
            _started(proc, folder)
            out = drive([b for b, _ in boards], seconds, lambda b: PlainClient(sock), pids=(proc.pid, pg.pid()))
        finally:
            procs.stop(proc)
            log.close()
        out.update(_old(tree, env, common + "print(json.dumps({'tokens': store.status('floor')['tokens'], "
                                            "'reconcile_ok': store.reconcile()['ok']}))\n"))
        out["checks"] = []
        return out
    finally:
        pg.stop()


def pooled(runs):
    """One peer's figures over its runs: tokens/s the mean, the percentiles over every sample."""
    commit = [x for r in runs for x in r["commit_lat"]]
    disp = [x for r in runs for x in r["display_lat"]]
    return {"tps": sum(r["tps"] for r in runs) / len(runs), "tps_each": [r["tps"] for r in runs],
            "commit_p50": pct(commit, 50), "commit_p99": pct(commit, 99),
            "commit_p99_each": [pct(r["commit_lat"], 99) for r in runs],
            "display_p50": pct(disp, 50), "display_p99": pct(disp, 99), "display_n": len(disp),
            "tokens": sum(r["tokens"] for r in runs), "reconcile_ok": all(r["reconcile_ok"] for r in runs),
            "errors": [e for r in runs for e in r["errors"]][:5], "error_count": sum(r["error_count"] for r in runs),
            "checks": [c for r in runs for c in r["checks"]], "load": [r["load"] for r in runs],
            # CPU ms per committed token: pool server, PostgreSQL, the tables' clients
            "cpu_ms": [1000.0 * sum(r["cpu"][i] for r in runs) / max(1, sum(r["committed"] for r in runs))
                       for i in range(3)],
            # CPU seconds per measured second (cores busy): pool server, PostgreSQL, the tables' clients
            "cores": [sum(r["cpu"][i] for r in runs) / sum(r["elapsed"] for r in runs) for i in range(3)]}


def run_sqlite(tables, seconds, folder):
    boards = ["bt-%03d" % i for i in range(tables)]
    lat = []
    committed = [0]
    lock = threading.Lock()
    stop = threading.Event()
    measuring = threading.Event()
    errors = []

    def table_writer(board):
        path = os.path.join(folder, board + ".db")
        try:
            ledger = Ledger(path)
            seq = 0
            while not stop.is_set():
                seq += 1
                ev = {"t": "ev", "b": board, "k": "coin", "q": seq, "ms": seq * 1000, "seat": seq % 7,
                      "round": seq, "inc": 70}
                t0 = time.monotonic()
                ledger.record_events(board, [ev])
                dt = time.monotonic() - t0
                if measuring.is_set():
                    with lock:
                        lat.append(dt)
                        committed[0] += 1
            ledger.close()
        except Exception as exc:  # noqa
            errors.append("%s: %s" % (board, exc))
    threads = [threading.Thread(target=table_writer, args=(b,), daemon=True) for b in boards]
    for t in threads:
        t.start()
    time.sleep(2.0)
    measuring.set()
    t0 = time.monotonic()
    time.sleep(seconds)
    measuring.clear()
    elapsed = time.monotonic() - t0
    stop.set()
    for t in threads:
        t.join(10)
    return {"tps": committed[0] / elapsed, "commit_p50": pct(lat, 50), "commit_p99": pct(lat, 99),
            "error_count": len(errors), "errors": errors[:5]}


def _cents(text):
    text = (text or "").strip()
    try:
        dollars, _, cents = text.partition(".")
        return int(dollars) * 100 + int(cents or 0)
    except ValueError:
        return None


def run_floor(folder, rounds=5):
    """The real path on three virtual boards: pulse -> board -> table ledger -> pool commit, and
    pool commit -> each board's display (the simulator's record of what its display showed)."""
    floor = Floor(os.path.join(folder, "floor"), lost_s=10.0)
    floor.start()
    try:
        time.sleep(2.0)

        def table(board):
            bench = floor.bench(board)
            for _ in range(rounds):
                bench.coins({seat: 1 for seat in range(floor.seats)})
                bench.key("lock")
                bench.key("unlock")
            bench.close()
        threads = [threading.Thread(target=table, args=(b,)) for b, _ in floor.tables]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        total = rounds * floor.seats * len(floor.tables)
        floor.wait_tokens(total, 120)
        time.sleep(1.5)
        # A royal at cd-1 (seat 1 took this round's token); the other displays go back to the seed.
        b = floor.bench("cd-1")
        b.coins({0: 1})
        b.key("lock")
        b.key("jackpot")
        b.close()
        sock = floor.control("cd-1")
        hit = Floor.ask(sock, {"op": "pool_hit", "board": "cd-1", "seat": 1, "cards": "As Ks Qs Js Ts"})["hit"]
        sock.close()
        time.sleep(2.0)
        store = floor.store()
        pool_rows = {(r["board"], r["seq"]): r for r in store.rows(("token",))}
        store.close()
        ledger_lat = []
        for board, _ in floor.tables:
            led = Ledger(floor.ledger(board), readonly=True)
            for e in led.events(board, kinds=("coin",)):
                r = pool_rows.get((board, e["seq"]))
                if r is not None:
                    ledger_lat.append(r["recorded_at"] - e["recorded_at"])
            led.db.close()
        history = {}
        for board, _ in floor.tables:
            bench = floor.bench(board)
            history[board] = [(t, _cents(text)) for t, text, _m in bench.request("display_history")["history"]]
            bench.close()
        display_lat = []
        for r in pool_rows.values():
            t, meter = r["recorded_at"], r["body"]["meter"]
            for board, hist in history.items():
                seen = [ht for ht, c in hist if ht >= t - 0.001 and c is not None and c >= meter
                        and ht < hit["locked_at"]]
                if seen:
                    display_lat.append(max(0.0, seen[0] - t))
        reset_lat = []
        for board, hist in history.items():
            if board == "cd-1":
                continue  # the winning table shows PAY / JACKPOT
            seen = [ht for ht, c in hist if ht >= hit["locked_at"] and c == hit["meter_after"]]
            if seen:
                reset_lat.append(seen[0] - hit["locked_at"])
        rec = floor.reconcile()
        return {"tokens": len(ledger_lat), "ledger_p50": pct(ledger_lat, 50), "ledger_p99": pct(ledger_lat, 99),
                "display_p50": pct(display_lat, 50), "display_p99": pct(display_lat, 99),
                "display_n": len(display_lat), "reset_max": max(reset_lat) if reset_lat else float("nan"),
                "reset_n": len(reset_lat), "reconcile_ok": rec["ok"]}
    finally:
        floor.stop()


def failover():
    """The failover figure, quoted from the block `make faults-pool` writes in docs/RELIABILITY.md
    (this benchmark does not kill servers)."""
    where = ("The failover (seconds of POOL OFF when the primary dies, acknowledged tokens lost) is measured by "
             "`make faults-pool` (tabledev/pool_faults.py) in docs/RELIABILITY.md's pool faults block")
    try:
        with open(os.path.join(ROOT, "docs", "RELIABILITY.md")) as f:
            block = f.read().split("POOL FAULTS BEGIN", 1)[1].split("POOL FAULTS END", 1)[0]
    except (OSError, IndexError):
        return where + ": not recorded there yet."
    run = re.search(r"commit (\w+), (\d{4}-\d\d-\d\d \d\d:\d\d UTC)", block)
    lost = re.search(r"acknowledged tokens lost (\d+) of (\d+)", block)
    off = re.search(r"POOL OFF for ([\d.]+) s at most", block)
    late = re.search(r"commands were run ([\d.]+) s after the kill", block)
    if not (run and lost and off):
        return where + ": no primary-death figure there yet."
    return ("Failover (quoted from `make faults-pool`, docs/RELIABILITY.md, commit %s, %s): when the primary "
            "dies the boards show POOL OFF for %s s at most%s; acknowledged tokens lost %s of %s: goal 0 **%s**."
            % (run.group(1), run.group(2), off.group(1),
               " (docs/POOL.md's failover commands run %s s after the kill, scripted)" % late.group(1) if late else "",
               lost.group(1), lost.group(2), "reached" if lost.group(1) == "0" else "NOT reached"))


def _commit():
    try:
        head = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                              timeout=30).stdout.strip()
        dirty = subprocess.run(["git", "-C", ROOT, "status", "--porcelain", "--untracked-files=no"],
                               capture_output=True, text=True, timeout=30).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + (" + uncommitted changes" if dirty else "") if head else "unknown"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--tables", type=int, default=200)
    ap.add_argument("--seconds", type=float, default=20.0, help="measured seconds per run")
    ap.add_argument("--rounds", type=int, default=2,
                    help="pairs of runs, alternating: auth, plain, then plain, auth, ... (default 2)")
    ap.add_argument("--no-write", action="store_true", help="print only; write no record")
    args = ap.parse_args()
    folder = tempfile.mkdtemp(prefix="bench-pool-")
    os.chmod(folder, 0o755)
    started = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    runs = {"auth": [], "plain": []}
    order = []
    try:
        tree, env = pre_auth_tree(folder)
        for i in range(args.rounds):
            for peer in (("auth", "plain") if i % 2 == 0 else ("plain", "auth")):
                sub = os.path.join(folder, "%s-%d" % (peer, i))
                if peer == "auth":
                    r = run_auth(args.tables, args.seconds, sub)
                else:
                    r = run_plain(args.tables, args.seconds, sub, tree, env)
                runs[peer].append(r)
                order.append(peer)
                print("%s run %d: %.0f tokens/s, p99 token->commit %.1f ms, load %.1f, errors %d" % (
                    peer, i + 1, r["tps"], pct(r["commit_lat"], 99) * 1000, r["load"], r["error_count"]),
                    flush=True)
        sq_folder = os.path.join(folder, "sqlite")
        os.makedirs(sq_folder)
        anchor = run_sqlite(args.tables, args.seconds, sq_folder)
        real = run_floor(folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    auth, plain = pooled(runs["auth"]), pooled(runs["plain"])
    ms = lambda s: "%.1f ms" % (s * 1000)  # noqa: E731
    each = lambda xs, f: ", ".join(f(x) for x in xs)  # noqa: E731
    rows = [
        ["with authentication: mutual TLS per connection, board MACs checked (this commit)", "%d" % args.tables,
         "%.0f (%s)" % (auth["tps"], each(auth["tps_each"], "{:.0f}".format)), ms(auth["commit_p50"]),
         "%s (%s)" % (ms(auth["commit_p99"]), each(auth["commit_p99_each"], ms)),
         "%s / %s" % (ms(auth["display_p50"]), ms(auth["display_p99"]))],
        ["without: commit %s, plain unix socket, unsigned tokens" % PRE_AUTH[:7], "%d" % args.tables,
         "%.0f (%s)" % (plain["tps"], each(plain["tps_each"], "{:.0f}".format)), ms(plain["commit_p50"]),
         "%s (%s)" % (ms(plain["commit_p99"]), each(plain["commit_p99_each"], ms)),
         "%s / %s" % (ms(plain["display_p50"]), ms(plain["display_p99"]))],
        ["anchor: SQLite ledger per table", "%d" % args.tables, "%.0f" % anchor["tps"], ms(anchor["commit_p50"]),
         ms(anchor["commit_p99"]), "-"],
    ]
    tps_ratio = auth["tps"] / plain["tps"] if plain["tps"] else float("nan")
    p99_ratio = auth["commit_p99"] / plain["commit_p99"] if plain["commit_p99"] else float("nan")
    fast_ok = tps_ratio >= 1 - TARGET_SLOWER and p99_ratio <= 1 + TARGET_SLOWER
    disp_ok = auth["display_p99"] < TARGET_DISPLAY_S
    word = lambda ok: "reached" if ok else "NOT reached"  # noqa: E731
    body = table(rows, ["pool (tablectl pool serve)", "tables", "tokens/s committed: mean (each run)",
                        "p50 token->commit", "p99 token->commit: all runs (each run)", "pool->display p50 / p99"])
    body += ("\n\nWith authentication against without: %.3fx the tokens/s (%.0f against %.0f; the goal, at most "
             "%.0f %% slower, needs >= %.2fx) and %.3fx the p99 token->commit (%s against %s; needs <= %.2fx): "
             "**%s**. Display: p99 %s with authentication over %d amount changes (%s without, %d): goal under %.0f "
             "s: **%s**. Pool books after the runs: %d tokens with authentication, %d without; reconcile %s / %s; "
             "errors %d / %d. Authentication on in every "
             "authenticated run (a plaintext caller, a wrong board MAC and another board's credential refused): %s."
             "\n\nCPU in the measured windows, with / without authentication, as cores busy (of %d) and per "
             "committed token: pool server %.2f / %.2f (%.2f / %.2f ms), PostgreSQL %.2f / %.2f (%.2f / %.2f ms), the "
             "tables' clients (the benchmark's process) %.2f / %.2f (%.2f / %.2f ms). The amount polls (%d tables, "
             "every 200 ms) are the same work in both, so at fewer tokens/s they weigh more per token."
             "\n\nRuns in this order, each on a fresh PostgreSQL: %s; %.0f s measured per run, from 3 s after every "
             "connection had its first reply. "
             "Each table sends one token per request and waits for the commit reply (closed loop), and polls the "
             "amount every 200 ms on a second connection: %d tables, %d connections per run. With authentication "
             "every connection is mutual TLS 1.3 with the board's own credential (`tablectl pool credential`), every "
             "token carries its board's HMAC-SHA256 made with that board's table key, and `pool serve --table-keys` "
             "checks it (a floor pool, not bench=1). Without: commit %s (the last before the pool's authentication), "
             "its host_tools/ and firmware/ taken with `git archive` into a temporary folder, its `pool serve` run "
             "from there (no --table-keys) and fed with a plain JSON-lines client; no switch in today's product. The "
             "pool groups every batch waiting into one transaction (meter row FOR UPDATE, chain row FOR UPDATE, "
             "fsync on). The tables' clients run in the benchmark's process on the same machine as the pool and "
             "PostgreSQL, so their TLS work is paid from the same cores. The anchor commits the same events into %d "
             "SQLite files (WAL, synchronous FULL), one writer thread per table, same run.\n\n"
             "Commit %s, %s. Machine: %s, shared with other engineers' test runs (1-minute load average at the start "
             "of each measured window: %s; mean %.1f with authentication, %.1f without): the figures move from run "
             "to run, and the alternation gives both peers the same stretch of time, not the same load.\n\n"
             "%s\n\n"
             "Reproduce: `.venv/bin/python benchmarks/bench_pool.py --tables %d --seconds %.0f --rounds %d`\n"
             % (tps_ratio, auth["tps"], plain["tps"], TARGET_SLOWER * 100, 1 - TARGET_SLOWER, p99_ratio,
                ms(auth["commit_p99"]), ms(plain["commit_p99"]), 1 + TARGET_SLOWER, word(fast_ok),
                ms(auth["display_p99"]), auth["display_n"],
                ms(plain["display_p99"]), plain["display_n"], TARGET_DISPLAY_S, word(disp_ok), auth["tokens"],
                plain["tokens"], "OK" if auth["reconcile_ok"] else "FAILED",
                "OK" if plain["reconcile_ok"] else "FAILED",
                auth["error_count"], plain["error_count"],
                "yes" if not auth["checks"] else "NO: " + "; ".join(auth["checks"]),
                os.cpu_count(), auth["cores"][0], plain["cores"][0], auth["cpu_ms"][0], plain["cpu_ms"][0],
                auth["cores"][1], plain["cores"][1], auth["cpu_ms"][1], plain["cpu_ms"][1],
                auth["cores"][2], plain["cores"][2], auth["cpu_ms"][2], plain["cpu_ms"][2], args.tables,
                ", ".join(order), args.seconds, args.tables, 2 * args.tables, PRE_AUTH[:7], args.tables,
                _commit(), started, machine_note(),
                ", ".join("%s %.1f" % (p, r["load"]) for p, r in zip(order, _in_order(runs, order))),
                sum(auth["load"]) / len(auth["load"]), sum(plain["load"]) / len(plain["load"]), failover(),
                args.tables, args.seconds, args.rounds))
    met_real = real["display_p99"] <= TARGET_DISPLAY_S and real["reset_max"] <= TARGET_DISPLAY_S
    body += ("\n" + table([["3 provisioned virtual boards (tablectl sim) + serve --pool + pool serve --table-keys",
                            real["tokens"], "%s / %s" % (ms(real["ledger_p50"]), ms(real["ledger_p99"])),
                            "%s / %s" % (ms(real["display_p50"]), ms(real["display_p99"])),
                            ms(real["reset_max"])]],
                          ["the real path", "tokens", "table ledger -> pool commit p50 / p99",
                           "pool commit -> every board's display p50 / p99", "royal -> other boards show the seed (max)"])
             + "\n\nThe real path (tabledev.floor: boards provisioned, their keys in the pool's table-key folder, each "
             "service on its own credential): 5 rounds of a token at every seat of three boards (2 Caribbean Draw, 1 "
             "Caribbean Stud), then a royal paid through the board. Ledger -> pool: each token's pool row time minus "
             "its table ledger row time. Pool -> display: for each meter value the pool committed, the first time "
             "each board's display (the simulator's record) showed it or more (%d pairs); after the royal, the time "
             "until the other boards show the reset meter (%d boards). Target (displays within %.0f s): **%s**; "
             "floor reconcile %s.\n"
             % (real["display_n"], real["reset_n"], TARGET_DISPLAY_S, "met" if met_real else "NOT met",
                "OK" if real["reconcile_ok"] else "FAILED"))
    print(body)
    if auth["errors"] or plain["errors"] or anchor["errors"]:
        print("errors:", auth["errors"], plain["errors"], anchor["errors"])
    if not args.no_write:
        write_section("pool", "Linked pool: %d tables on one PostgreSQL pool, with and without authentication"
                      % args.tables, body)
    return 0 if auth["reconcile_ok"] and plain["reconcile_ok"] and not auth["checks"] else 1


def _in_order(runs, order):
    seen = {"auth": 0, "plain": 0}
    out = []
    for p in order:
        out.append(runs[p][seen[p]])
        seen[p] += 1
    return out


if __name__ == "__main__":
    sys.exit(main())
