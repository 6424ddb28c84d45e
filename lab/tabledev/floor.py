"""A floor of linked tables on this machine, for the end-to-end test, `make demo-floor` and the
fault runs: a PostgreSQL server of its own (pgserver), `tablectl pool serve`, and per table a
virtual board (`tablectl sim`) and its `tablectl serve --pool`. Every part is the real program in
its own process; stop() ends only what start() began."""
import itertools
import json
import os
import socket
import threading
import time

from tablectl.errors import TablectlError
from tablectl.pool import adminkey
from tablectl.pool.store import PoolStore, admin_signature

from . import procs
from .bench import Bench
from .pgserver import PgServer

_FLOOR_DATABASES = itertools.count(1)

DEFAULT_TABLES = (("cd-1", "caribbean_draw"), ("cd-2", "caribbean_draw"), ("stud-1", "caribbean_stud"))
DEFAULT_PARAMS = {"seed_cents": 1000000, "increment_cents": 70, "ceiling_cents": 50000000, "reserve_cents": 5}


def admin(store, op, pool, body):
    """Sign as the floor's administrator, whose private key is beside the pool's key folder (never in
    it: `pool serve` reads that folder); its public half goes into the folder at the first change."""
    path = os.path.join(os.path.dirname(os.path.abspath(store.keys.folder)), "admin", "pool-admin.key")
    if not os.path.exists(path):
        adminkey.generate(path)
    key = adminkey.load_private(path)
    if store.keys.admin_pub() is None:
        store.keys.install_admin_pub(adminkey.public_hex(key))
    version = 0 if op == "create" else store.status(pool)["version"]
    return store.admin(op, pool, body, version, admin_signature(key, op, pool, body, version, store.books_id()))


class Floor:
    def __init__(self, folder, tables=DEFAULT_TABLES, params=None, pool="floor", lost_s=3.0, seats=7,
                 pg=None, url=None, relayed=(), members=(), provision=True):
        self.folder = os.path.abspath(folder)
        self.tables = list(tables)
        self.params = dict(DEFAULT_PARAMS, **(params or {}))
        self.pool = pool
        self.lost_s = lost_s
        self.seats = seats
        self.keys = os.path.join(self.folder, "pool.keys")
        # the floor administrator's private key: beside the pool's key folder, never in it (admin())
        self.admin_key = os.path.join(self.folder, "admin", "pool-admin.key")
        self.sock = os.path.join(self.folder, "pool.sock")
        self.pg = pg
        self.own_pg = pg is None
        self.pool_proc = None
        self.sims = {}
        self.serves = {}
        self.ports = {}
        self.url = url            # a URL naming more than one server (primary, standby), else pg's
        self.relayed = set(relayed)  # tables reaching the pool through a Relay (cut off at will)
        self.relays = {}
        self.extra_members = list(members)  # link-level tables (no board) that feed the pool too
        # A floor's boards are keyed (the pool takes only what a board signs): each table's key is
        # given to the pool's table-key folder as `tablectl provision` makes it. provision=False
        # makes a bench floor: unkeyed boards, on a pool created with bench=1.
        self.provision = provision
        self.table_keys = os.path.join(self.folder, "table.keys")
        if not provision:
            self.params.setdefault("bench", 1)

    # ------------------------------------------------------------------ parts
    def start_pg(self):
        if self.pg is None:
            self.pg = PgServer(os.path.join(self.folder, "pg")).init()
        self.pg.start().create_database()

    @property
    def db_url(self):
        return self.url or self.pg.url

    def setup_pool(self):
        store = PoolStore(self.db_url, self.keys)
        try:
            if self.pool not in store.pools():
                admin(store, "create", self.pool, {"params": self.params})
                for board, game in self.tables + self.extra_members:
                    admin(store, "member", self.pool, {"board": board, "game": game})
                admin(store, "service", self.pool, {"enter": False})
        finally:
            store.close()

    def start_pool(self):
        self.pool_proc, _ = procs.start(["pool", "serve", "--db", self.db_url, "--keys", self.keys,
                                         "--listen", "unix:" + self.sock, "--table-keys", self.table_keys],
                                        os.path.join(self.folder, "pool.log"))
        line = self.pool_proc.stdout.readline()
        if not line.startswith("pool serving"):
            procs.stop(self.pool_proc)
            raise TablectlError("tablectl pool serve did not start: %r (see %s/pool.log)" % (line, self.folder))

    def stop_pool(self, sig=None):
        import signal
        procs.stop(self.pool_proc, sig or signal.SIGTERM)
        self.pool_proc = None

    def start_table(self, board):
        state = os.path.join(self.folder, board)
        if board not in self.sims:
            sim, _, port = procs.start_sim(state, os.path.join(self.folder, board + ".sim.log"), seats=self.seats,
                                           extra=["--board-id", board])
            self.sims[board] = sim
            self.ports[board] = port
        self.start_serve(board)

    def start_serve(self, board):
        sock = self.sock
        if board in self.relayed:
            if board not in self.relays:
                self.relays[board] = Relay(os.path.join(self.folder, board + ".relay.sock"), self.sock).start()
            sock = self.relays[board].path
        self.credential(board)
        proc, _ = procs.start(["serve", "--port", self.ports[board], "--db", self.ledger(board),
                               "--pool", "unix:" + sock, "--pool-lost-s", str(self.lost_s)],
                              os.path.join(self.folder, board + ".serve.log"))
        line = proc.stdout.readline()
        if not line.startswith("serving"):
            procs.stop(proc)
            raise TablectlError("tablectl serve did not start: %r" % line)
        self.serves[board] = proc
        if self.provision:
            self.provision_board(board)

    def credential(self, board):
        """The table service's credential for the pool, where `tablectl serve` looks by default."""
        from tablectl.pool.client import default_credentials
        from tablectl.pool.tls import issue_table_credential
        folder = default_credentials(self.ledger(board))
        if not os.path.exists(os.path.join(folder, "pool-client.crt")):
            issue_table_credential(self.keys, board, folder)
        return folder

    def link_member(self, board):
        """A link-level table (no board: a feeder of the fault runs and benchmarks) made as a real
        one is: a table key the pool holds and a credential of its own. Returns (credential folder,
        table key); sign its tokens with signed_token()."""
        from tablectl.keys import KeyStore
        from tablectl.pool.tls import issue_table_credential
        store = KeyStore(self.table_keys)
        key = store.table_key(board)
        if key is None:
            key = os.urandom(32)
            store.set_table_key(board, key)
        folder = os.path.join(self.folder, board + ".link")
        if not os.path.exists(os.path.join(folder, "pool-client.crt")):
            issue_table_credential(self.keys, board, folder)
        return folder, key

    def provision_board(self, board):
        """Key the board as a technician does (service key switch on, `tablectl provision`, off) and
        give its table key to the pool's table-key folder (`pool serve --table-keys`)."""
        from tablectl.keys import KeyStore
        store = KeyStore.for_ledger(self.ledger(board))
        if store.table_key(board) is None:
            bench = self.bench(board)
            try:
                bench.switch(True)
                out = procs.run(["provision", "--db", self.ledger(board), "--board", board])
                bench.switch(False)
            finally:
                bench.close()
            if out.returncode != 0:
                raise TablectlError("provision of %s failed: %s" % (board, out.stderr.strip()))
        KeyStore(self.table_keys).set_table_key(board, store.table_key(board))

    def ledger(self, board):
        return os.path.join(self.folder, board + ".db")

    def start(self):
        os.makedirs(self.folder, exist_ok=True)
        if self.own_pg:
            self.start_pg()
        elif self.url is None:
            # A server shared with other floors (a test session's): books of their own, or this
            # floor would open another's pool of the same name, its boards keyed with other keys.
            import psycopg
            name = "floor_%d_%d" % (os.getpid(), next(_FLOOR_DATABASES))
            with psycopg.connect(self.pg.admin_url(), autocommit=True) as conn:
                conn.execute('CREATE DATABASE "%s"' % name)
            self.url = self.pg.admin_url(name)
        self.setup_pool()
        self.start_pool()
        for board, _game in self.tables:
            self.start_table(board)
        for board, _game in self.tables:
            if board not in self.relayed:
                self.wait_linked(board)
        return self

    def wait_linked(self, board, timeout_s=120.0):
        """Until the board has joined the pool and shows its amount: a token dropped before that
        is the board's own (the pool takes only tokens of its linked boards), so a floor is ready
        only then. A loaded machine takes seconds over it."""
        deadline = time.monotonic() + timeout_s
        while True:
            out = procs.run(["status", "--json", "--db", self.ledger(board)])
            if out.returncode == 0:
                st = json.loads(out.stdout)
                if st.get("linked_pool") == self.pool and st.get("pool_meter_cents") is not None:
                    return st
            if time.monotonic() > deadline:
                raise TablectlError("table %s did not join pool %s within %.0f s: %s"
                                    % (board, self.pool, timeout_s, (out.stderr or out.stdout).strip()[-300:]))
            time.sleep(0.2)

    def stop(self):
        for relay in self.relays.values():
            relay.close()
        for proc in list(self.serves.values()) + list(self.sims.values()):
            procs.stop(proc)
        self.serves, self.sims = {}, {}
        self.stop_pool()
        if self.own_pg and self.pg is not None:
            self.pg.stop()

    # ------------------------------------------------------------------ looking and acting
    def bench(self, board):
        return Bench(os.path.join(self.folder, board))

    def store(self):
        return PoolStore(self.db_url, self.keys, anchor=True, migrate=False)

    def status(self):
        store = self.store()
        try:
            return store.status(self.pool)
        finally:
            store.close()

    def wait_tokens(self, count, timeout_s=60.0):
        deadline = time.monotonic() + timeout_s
        while True:
            st = self.status()
            if st["tokens"] >= count:
                return st
            if time.monotonic() > deadline:
                raise TablectlError("the pool holds %d tokens, %d expected" % (st["tokens"], count))
            time.sleep(0.1)

    def control(self, board):
        """A connected socket to the table service's control socket."""
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(30)
        s.connect(self.ledger(board) + ".sock")
        return s

    @staticmethod
    def ask(sock, req):
        sock.sendall(json.dumps(req).encode() + b"\n")
        buf = b""
        while b"\n" not in buf:
            chunk = sock.recv(65536)
            if not chunk:
                raise TablectlError("the service closed the connection")
            buf += chunk
        reply = json.loads(buf.split(b"\n", 1)[0])
        if not reply.get("ok"):
            raise TablectlError(reply.get("error"))
        return reply

    def reconcile(self):
        store = self.store()
        try:
            rec = store.reconcile()
            from tablectl.ledger import Ledger
            for board, _game in self.tables:
                ledger = Ledger(self.ledger(board), readonly=True)
                try:
                    table = sorted(e["seq"] for e in ledger.events(board, kinds=("coin",)))
                finally:
                    ledger.db.close()
                held = store.token_seqs(board)
                if table != held:
                    rec["problems"].append("table %s: ledger tokens %d, pool tokens %d (missing %s, extra %s)" % (
                        board, len(table), len(held), sorted(set(table) - set(held))[:5],
                        sorted(set(held) - set(table))[:5]))
            rec["ok"] = not rec["problems"]
            return rec
        finally:
            store.close()


class Relay:
    """A unix-socket relay between one table's service and the pool: cut() drops its connections
    and refuses new ones (the table is cut off from the pool, nothing else changes); restore()."""

    def __init__(self, path, target):
        self.path = path
        self.target = target
        self.cut_off = False
        self.conns = []
        self.lock = threading.Lock()
        self.sock = None

    def start(self):
        if os.path.exists(self.path):
            os.unlink(self.path)
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.bind(self.path)
        self.sock.listen(16)
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def _accept(self):
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            if self.cut_off:
                conn.close()
                continue
            try:
                up = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                up.connect(self.target)
            except OSError:
                conn.close()
                continue
            with self.lock:
                self.conns += [conn, up]
            threading.Thread(target=self._pipe, args=(conn, up), daemon=True).start()
            threading.Thread(target=self._pipe, args=(up, conn), daemon=True).start()

    @staticmethod
    def _pipe(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data:
                    break
                b.sendall(data)
        except OSError:
            pass
        for s in (a, b):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass

    def cut(self):
        self.cut_off = True
        with self.lock:
            conns, self.conns = self.conns, []
        for c in conns:
            try:
                c.shutdown(socket.SHUT_RDWR)
                c.close()
            except OSError:
                pass

    def restore(self):
        self.cut_off = False

    def close(self):
        self.cut()
        try:
            self.sock.close()
            os.unlink(self.path)
        except OSError:
            pass


def signed_token(key, board, seq, seat=0, round_no=1, ms=None):
    """A coin event as a board signs it (firmware/table/app.py; the MAC over bytes (1, 1) + the
    event's JSON, tablectl/ledger.py), for link-level tables."""
    import hashlib
    import hmac
    ms = seq * 1000 if ms is None else ms
    raw = json.dumps({"t": "ev", "b": board, "k": "coin", "q": seq, "ms": ms, "seat": seat, "round": round_no,
                      "inc": 70, "to_meter": 70, "to_over": 0, "reserve": 0, "pe": ms}, separators=(",", ":"))
    mac = hmac.new(key, bytes((1, 1)) + raw.encode(), hashlib.sha256).hexdigest()
    return {"q": seq, "seat": seat, "round": round_no, "ms": ms, "raw": raw, "mac": mac}
