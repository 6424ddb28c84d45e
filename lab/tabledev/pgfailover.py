"""The pool's three PostgreSQL servers (a primary, two standbys, quorum `ANY 1 (a, b, c)`) made and
failed over by the commands of docs/POOL.md ("The database: three servers"), run word for word:
each command block there follows a marker `<!-- run: NAME -->` and is run here with `sh`, as the
server's user, given the variables the doc names. Used by tests/pool/test_failover.py and
`make faults-pool`, so a change to the documented procedure is what they run.

All three servers are on this host (a bench): one socket directory, three ports.
"""
import os
import re
import subprocess
import time

from tablectl.errors import TablectlError

from .pgserver import PgServer, _demote, bindir

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DOC = os.path.join(ROOT, "docs", "POOL.md")
NAMES = ("a", "b", "c")


def blocks(path=DOC):
    """{name: the text of the fenced block after `<!-- run: name -->`} in the doc."""
    text = open(path).read()
    found = {}
    for m in re.finditer(r"<!-- run: ([\w-]+) -->\s*\n```[a-z]*\n(.*?)\n```", text, re.S):
        if m.group(1) in found:
            raise TablectlError("%s: two blocks named %s" % (path, m.group(1)))
        found[m.group(1)] = m.group(2) + "\n"
    return found


class Trio:
    """Servers a, b, c in `folder`: sockets in folder/sock, data in folder/{a,b,c}-data, ports
    port, port+1, port+2. Server a is made by initdb (the harness); b and c by the doc."""

    def __init__(self, folder, port=5432, log=print):
        self.folder = os.path.abspath(folder)
        self.log = log
        sock = os.path.join(self.folder, "sock")
        self.servers = {n: PgServer(sock, port=port + i, data=os.path.join(self.folder, "%s-data" % n))
                        for i, n in enumerate(NAMES)}
        self.doc = blocks()
        self.bin = bindir()

    def server(self, name):
        return self.servers[name]

    @property
    def sock(self):
        return self.servers["a"].folder

    def env(self, me=None, primary=None, dead=None):
        env = dict(os.environ, PGBIN=self.bin, PGUSER=self.servers["a"].user)
        for name, s in self.servers.items():
            env.update({name.upper() + "_HOST": s.folder, name.upper() + "_PORT": str(s.port)})
        if dead is not None:
            env.update(DEAD=dead)
        if me is not None:
            s = self.servers[me]
            env.update(ME=me, MY_PORT=str(s.port), MY_DATA=s.data)
        if primary is not None:
            p = self.servers[primary]
            env.update(PRIMARY_HOST=p.folder, PRIMARY_PORT=str(p.port))
        return env

    def run(self, block, me=None, primary=None, dead=None, extra="", timeout=300):
        """Run the doc's block `block` word for word (then `extra`, the caller's own lines, never
        the doc's); returns the output. Raises when sh fails."""
        script = self.doc[block] + extra
        ids = self.servers["a"].ids
        proc = subprocess.run(["sh", "-c", script], env=self.env(me, primary, dead), capture_output=True, text=True,
                              preexec_fn=_demote(ids), timeout=timeout, cwd="/")
        out = proc.stdout + proc.stderr
        self.log("docs/POOL.md %s%s: %s" % (block, "" if me is None else " (on %s)" % me, out.strip()[-600:]))
        if proc.returncode != 0:
            raise TablectlError("docs/POOL.md block %s failed (%d): %s" % (block, proc.returncode, out[-800:]))
        return out

    # ------------------------------------------------------------------ the documented procedures
    def start(self):
        """a by initdb; then the doc: a's quorum, standbys b and c copied from it."""
        os.makedirs(self.folder, exist_ok=True)
        os.chmod(self.folder, 0o755)
        a = self.servers["a"]
        a._own(self.folder)  # the standbys' data directories are made here by the server's user
        a.init().start()
        self.run("pool-db-primary")
        for name in ("b", "c"):
            self.run("pool-db-standby", me=name, primary="a")
        self.wait_streaming("a", 2)
        return self

    def url(self):
        """The pool's URL as the doc writes it."""
        return self.run("pool-db-url", extra='printf "\\n%s\\n" "$TABLECTL_POOL_DB"').strip().splitlines()[-1]

    def failover(self, dead):
        """The doc's failover of the dead primary `dead`; returns (the promoted server's name, the
        output)."""
        out = self.run("pool-db-failover", dead=dead)
        m = re.search(r"promoted ([abc]) ", out)
        return (m.group(1) if m else None), out

    def rejoin(self, name, primary):
        """The doc's return of a failed server: its data kept aside, a fresh standby copy."""
        self.run("pool-db-rejoin", me=name, primary=primary)
        self.run("pool-db-standby", me=name, primary=primary)

    # ------------------------------------------------------------------ looking
    def query(self, name, sql, timeout_s=5):
        import psycopg
        s = self.servers[name]
        with psycopg.connect(s.admin_url(), autocommit=True, connect_timeout=timeout_s) as conn:
            cur = conn.execute(sql)
            return cur.fetchall() if cur.description else []

    def primary(self):
        """The name of the server that answers and is not in recovery, else None."""
        for name in NAMES:
            try:
                if not self.query(name, "SELECT pg_is_in_recovery()")[0][0]:
                    return name
            except Exception:  # noqa: a server down does not answer
                continue
        return None

    def replication(self, name):
        """{standby name: (state, sync_state)} as server `name` sees them."""
        return {r[0]: (r[1], r[2]) for r in
                self.query(name, "SELECT application_name, state, sync_state FROM pg_stat_replication")}

    def wait_streaming(self, name, count, timeout_s=60.0):
        deadline = time.monotonic() + timeout_s
        while True:
            rep = self.replication(name)
            if sum(1 for st, sync in rep.values() if st == "streaming" and sync == "quorum") >= count:
                return rep
            if time.monotonic() > deadline:
                raise TablectlError("server %s: %d quorum standbys streaming expected, it has %r" % (name, count, rep))
            time.sleep(0.2)

    def stop(self):
        for s in self.servers.values():
            s.stop("immediate")
