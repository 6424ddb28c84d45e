"""A PostgreSQL server of our own in a folder: for tests, `make demo-floor`, the pool benchmark and
the fault runs (their three replicated servers: tabledev/pgfailover.py). Real PostgreSQL binaries
(Debian's postgresql package: initdb, pg_ctl), listening on a unix socket in the folder only.

PostgreSQL refuses to run as root: when we are root the server runs as the `postgres` user (made
by Debian's package) and the folder is handed to it.
"""
import glob
import os
import pwd
import shutil
import signal
import subprocess
import time

from tablectl.errors import TablectlError


def bindir():
    """Where initdb and pg_ctl are: pg_config --bindir, else Debian's /usr/lib/postgresql/N/bin."""
    found = shutil.which("pg_config")
    if found:
        try:
            out = subprocess.run([found, "--bindir"], capture_output=True, text=True, timeout=10).stdout.strip()
            if os.path.exists(os.path.join(out, "initdb")):
                return out
        except (OSError, subprocess.SubprocessError):
            pass
    for path in sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), reverse=True):
        return os.path.dirname(path)
    raise TablectlError("no PostgreSQL server binaries (initdb, pg_ctl): install Debian's postgresql "
                        "package (`make setup` does as root)")


def _run_as():
    """(uid, gid) the server runs as: ours, or the postgres user's when we are root."""
    if os.geteuid() != 0:
        return None
    try:
        pw = pwd.getpwnam("postgres")
    except KeyError:
        pw = pwd.getpwnam("nobody")
    return pw.pw_uid, pw.pw_gid


def _demote(ids):
    if ids is None:
        return None

    def go():
        os.setgid(ids[1])
        os.setuid(ids[0])
    return go


class PgServer:
    """One cluster in `folder`: data in folder/data, socket in folder, log in folder/log.

    data: the data directory elsewhere (its log beside it, DATA.log) while the socket stays in
    `folder`: servers of one host sharing a socket directory, told apart by their ports."""

    def __init__(self, folder, port=5432, user="pool", database="pool", data=None):
        self.folder = os.path.abspath(folder)
        self.data = os.path.abspath(data) if data else os.path.join(self.folder, "data")
        self.port = port
        self.user = user
        self.database = database
        self.bin = bindir()
        self.ids = _run_as()
        self.log = self.data + ".log" if data else os.path.join(self.folder, "log")

    @property
    def url(self):
        return "postgresql://%s@/%s?host=%s&port=%d" % (self.user, self.database, self.folder, self.port)

    def admin_url(self, database="postgres"):
        return "postgresql://%s@/%s?host=%s&port=%d" % (self.user, database, self.folder, self.port)

    def _own(self, path):
        if self.ids is not None:
            os.chown(path, self.ids[0], self.ids[1])

    def _tool(self, name, *args, check=True, timeout=120):
        proc = subprocess.run([os.path.join(self.bin, name)] + list(args), capture_output=True, text=True,
                              preexec_fn=_demote(self.ids), timeout=timeout, cwd="/")
        if check and proc.returncode != 0:
            raise TablectlError("%s failed: %s" % (name, (proc.stderr or proc.stdout).strip()[-800:]))
        return proc

    def init(self, extra_conf=""):
        os.makedirs(self.folder, exist_ok=True)
        os.chmod(self.folder, 0o700)
        self._own(self.folder)
        self._tool("initdb", "-D", self.data, "-U", self.user, "--auth=trust", "-E", "UTF8", "--locale=C.UTF-8")
        self.configure(extra_conf)
        return self

    def configure(self, extra_conf=""):
        # Unix socket in our folder only; fsync stays on (the books must survive a host crash).
        conf = ("listen_addresses = ''\nunix_socket_directories = '%s'\nport = %d\n"
                "max_connections = 300\nshared_buffers = 64MB\nlogging_collector = off\n%s\n"
                % (self.folder, self.port, extra_conf))
        path = os.path.join(self.data, "postgresql.auto.conf")
        with open(path, "a") as f:
            f.write(conf)
        self._own(path)

    def start(self, timeout_s=60):
        self._tool("pg_ctl", "-D", self.data, "-l", self.log, "-w", "-t", str(int(timeout_s)), "start",
                   timeout=timeout_s + 10)
        return self

    def create_database(self):
        import psycopg
        with psycopg.connect(self.admin_url(), autocommit=True) as conn:
            if conn.execute("SELECT 1 FROM pg_database WHERE datname=%s", (self.database,)).fetchone() is None:
                conn.execute('CREATE DATABASE "%s"' % self.database)
        return self

    def stop(self, mode="fast"):
        if os.path.exists(os.path.join(self.data, "postmaster.pid")):
            self._tool("pg_ctl", "-D", self.data, "-m", mode, "-w", "stop", check=False)

    def pid(self):
        try:
            with open(os.path.join(self.data, "postmaster.pid")) as f:
                return int(f.readline())
        except (OSError, ValueError):
            return None

    def kill(self):
        """The machine dies: SIGKILL to the postmaster (its backends go with it)."""
        pid = self.pid()
        if pid:
            os.kill(pid, signal.SIGKILL)
            for _ in range(200):
                try:
                    os.kill(pid, 0)
                except OSError:
                    break
                time.sleep(0.05)
            # The children notice the postmaster gone and exit; wait until the socket is free.
            time.sleep(0.5)

    def promote(self):
        self._tool("pg_ctl", "-D", self.data, "-w", "promote")

    def remove(self):
        self.stop("immediate")
        shutil.rmtree(self.folder, ignore_errors=True)
