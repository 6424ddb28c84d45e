"""Checkpoints of a long PAR enumeration, so that Ctrl-C does not lose the work done.

The Caribbean Draw kernel cuts its run into parts whose integer credits add (_cdraw.c, k_cdraw:
ranges of hand classes for the non-qualifying reading, then ranges of ranks of the sweep). After
a part, when `every_s` seconds have passed since the last save, the credits so far are written
to one file, atomically (a temporary file, flushed and fsync'ed, then renamed over the old one):
a crash or a Ctrl-C in the middle of a save leaves the previous checkpoint whole.

File: one JSON line (the header), then the accumulators as raw little-endian int64. The header
names what the credits are of: the game, the pay table, the bet's pays, the qualifier, the run's
configuration and a hash of the code that computed them (the kernel's compiled module and the
game's Python source). A checkpoint whose identity differs is refused with a message saying
what differs, never mixed in.
"""
import datetime
import hashlib
import json
import os
import sys
import time
import zlib

from tablegames.errors import GameError

FORMAT = "tablectl-par-checkpoint/1"
# Seconds between saves (each writes the accumulators, 224 MB for Caribbean Draw): often
# enough that Ctrl-C loses at most about this much work, seldom enough that saving costs ~1 %.
EVERY_S = 30.0
# Test hooks (tests/cli/test_par_checkpoint.py): save after every part; stop (wait for a
# signal) after saving part N, so that a test can interrupt the run at a known place.
EVERY_ENV = "TABLECTL_PAR_CHECKPOINT_EVERY_S"
HOLD_ENV = "TABLECTL_PAR_CHECKPOINT_HOLD_AFTER"


def default_path(game, paytable):
    """Where a run keeps its progress unless told otherwise: the user's cache folder."""
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "tablectl", "par", "%s-%s.checkpoint" % (game, paytable))


def code_hash(*files):
    """sha256 over the files that compute the figures (kernel module, game source)."""
    h = hashlib.sha256()
    for path in files:
        with open(path, "rb") as fh:
            h.update(hashlib.sha256(fh.read()).digest())
    return h.hexdigest()


class Checkpoint:
    """One run's checkpoint file. identity: what the credits are of (JSON-able dict)."""

    def __init__(self, path, identity, restart=False, every_s=None, log=None):
        self.path = os.path.abspath(path)
        self.identity = identity
        self.restart = restart
        if every_s is None:
            env = os.environ.get(EVERY_ENV)
            every_s = float(env) if env else EVERY_S
        self.every_s = every_s
        hold = os.environ.get(HOLD_ENV)
        self.hold_after = int(hold) if hold else None
        self.log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.done = 0          # parts whose credits the file holds
        self.parts = None
        self.saves = 0         # files written by this run
        self.last_save = time.monotonic()

    # ------------------------------------------------------------------ reading

    def _read_header(self):
        with open(self.path, "rb") as fh:
            line = fh.readline(1 << 16)
            size = os.fstat(fh.fileno()).st_size
        if not line.endswith(b"\n"):
            raise ValueError("no header line")
        header = json.loads(line)
        if header.get("format") != FORMAT:
            raise ValueError("format %r, not %r" % (header.get("format"), FORMAT))
        if size != len(line) + header["payload_bytes"]:
            raise ValueError("%d bytes, the header says %d" % (size, len(line) + header["payload_bytes"]))
        return header, len(line)

    def resume(self, payload_bytes):
        """(done, path, offset) to resume from, or None to start from the beginning. Refuses a
        checkpoint of different rules or code with a one-line GameError."""
        if self.restart:
            if os.path.exists(self.path):
                self.log("starting over (--restart): the progress in %s is discarded" % self.path)
            self.remove()
            return None
        if not os.path.exists(self.path):
            return None
        try:
            header, offset = self._read_header()
        except (OSError, ValueError, KeyError) as exc:
            raise GameError("checkpoint %s is unreadable (%s): run with --restart to start over"
                            % (self.path, exc)) from None
        theirs = header.get("identity", {})
        differ = [k for k in sorted(set(theirs) | set(self.identity)) if theirs.get(k) != self.identity.get(k)]
        if differ:
            raise GameError("checkpoint %s is of another run (%s differ%s: %s): run with --restart to start over"
                            % (self.path, ", ".join(differ), "s" if len(differ) == 1 else "",
                               "; ".join("%s %s, this run %s" % (k, _short(theirs.get(k)), _short(self.identity.get(k)))
                                         for k in differ)))
        if header["payload_bytes"] != payload_bytes:
            raise GameError("checkpoint %s holds %d bytes of counts, this run has %d: run with --restart to start over"
                            % (self.path, header["payload_bytes"], payload_bytes))
        with open(self.path, "rb") as fh:
            fh.seek(offset)
            crc = 0
            while True:
                block = fh.read(1 << 24)
                if not block:
                    break
                crc = zlib.crc32(block, crc)
        if crc != header["payload_crc32"]:
            raise GameError("checkpoint %s is damaged (checksum differs): run with --restart to start over" % self.path)
        self.done, self.parts = header["done"], header["parts"]
        self.log("resuming from %s: %d of %d parts done (saved %s); --restart starts over"
                 % (self.path, self.done, self.parts, header.get("saved", "?")))
        return self.done, self.path, offset

    # ------------------------------------------------------------------ writing

    def save(self, done, parts, payload):
        """Called by the kernel after each part (payload: a memoryview of its accumulators)."""
        self.parts = parts
        now = time.monotonic()
        if now - self.last_save >= self.every_s:
            self._write(done, parts, payload)
            self.saves += 1
            self.last_save = time.monotonic()
        if self.hold_after is not None and self.done >= self.hold_after:
            while True:  # test hook: the test interrupts the run here
                time.sleep(0.05)

    def _write(self, done, parts, payload):
        folder = os.path.dirname(self.path)
        os.makedirs(folder, exist_ok=True)
        header = {"format": FORMAT, "identity": self.identity, "done": done, "parts": parts,
                  "saved": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC"),
                  "payload_bytes": payload.nbytes, "payload_crc32": zlib.crc32(payload)}
        tmp = self.path + ".tmp"
        with open(tmp, "wb") as fh:
            fh.write(json.dumps(header, sort_keys=True).encode() + b"\n")
            fh.write(payload)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, self.path)
        try:  # the rename itself, on disk
            fd = os.open(folder, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        except OSError:
            pass
        self.done = done

    def remove(self):
        for path in (self.path, self.path + ".tmp"):
            try:
                os.remove(path)
            except FileNotFoundError:
                pass

    def where(self):
        """One line for Ctrl-C: where the progress is kept, as the file on disk holds it (a save
        the signal cut short left the previous one in place)."""
        try:
            header, _ = self._read_header()
            done, parts = header["done"], header["parts"]
        except (OSError, ValueError, KeyError):
            done, parts = 0, self.parts
        if done:
            return ("interrupted: %d of %d parts are kept in %s; run the same command to resume "
                    "(--restart starts over)" % (done, parts or 0, self.path))
        return ("interrupted before the first part was kept (%s is written about every %g s); "
                "nothing to resume" % (self.path, self.every_s))


def _short(v):
    s = json.dumps(v) if not isinstance(v, str) else v
    return s if len(s) <= 24 else s[:12] + ".." + s[-8:]
