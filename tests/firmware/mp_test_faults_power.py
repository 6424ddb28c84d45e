"""Power cuts at random instants, injected in-process on MicroPython (campaign 1 of docs/RELIABILITY.md).

A TornNv (SimNv subclass) lets a byte budget run out in the middle of a write: the bytes up to
the budget reach the file, the rest never do, and PowerCut is raised out of whatever the
firmware was doing (a journal append, a checkpoint, a compaction copy, the boot itself). The
board is then dropped on the floor and a fresh SimBoard + TableApp boots on the same directory.

The oracle: every event that became durable (a valid record in the journal file at the moment
of the cut, or one the host received over the link before its ack let compaction drop it) is
collected by sequence number. After every restart:
  - storage valid: the app booted with a journal and no storage fault;
  - sequence numbers of durable events are 1..n without a gap and each means one event
    (the same seq never names two different events);
  - the meters equal the initial state with every durable patch applied in order, and
    meter = seed + increment x credited coins (credited = a coin event that reached the journal);
  - no coin credited twice: per seat, credited coins <= tokens fed, coin counters match.

Run as a module for CI (small counts), or `micropython mp_test_faults_power.py campaign SEED CUTS`
for the campaign (prints one JSON line of figures; tabledev.faults drives it).
"""
import json
import os
import sys

import mptest
from boards.sim import SimNv
from boards.simflash import PowerCut, SimNorFlash
from simkit import VirtualClockBoard, coin_edges, fresh_dir
from table import journal as journal_mod
from table import protocol as proto
from table.app import TableApp, initial_state
from table import config as config_mod

# Compact often, so checkpoints (and cuts inside them) are frequent.
journal_mod.COMPACT_BYTES = 3072
# On the raw log (TABLE_RAWLOG_SECTORS set): acknowledgement records and checkpoints often too
# (the log's own wrap checkpoints come every few sectors of a small chip).
from table import rawjournal as rawjournal_mod
from table import meter as meter_mod
from table import rawlog as rawlog_mod
RAW = bool(hasattr(os, "getenv") and os.getenv("TABLE_RAWLOG_SECTORS"))
rawjournal_mod.ACK_RECORD_EVENTS = 8
rawjournal_mod.ACK_CHECKPOINT_EVENTS = 64

SEATS = 7
CFG = {"coin_gap_ms": 60, "pulse_min_ms": 10, "pulse_max_ms": 40,
       "jam_ms": 500, "host_timeout_ms": 0}


class Rng:
    """xorshift32: the same numbers on every interpreter, so a seed replays a campaign."""

    def __init__(self, seed):
        self.s = (seed * 2654435761 + 1) & 0xFFFFFFFF or 1

    def next(self):
        x = self.s
        x ^= (x << 13) & 0xFFFFFFFF
        x ^= x >> 17
        x ^= (x << 5) & 0xFFFFFFFF
        self.s = x & 0xFFFFFFFF
        return self.s

    def below(self, n):
        return self.next() % n


class TornNv(SimNv):
    """Flash that loses power after `budget` more bytes: the write in progress is torn."""

    def __init__(self, root, board):
        SimNv.__init__(self, root, board)
        self.budget = None  # None: no cut armed
        self.cut_at = None  # (op, name, written, total) of the cut
        self.dead = False

    def _spend(self, op, name, data):
        if self.dead:
            raise PowerCut("already off")
        if self.budget is None or len(data) < self.budget:
            if self.budget is not None:
                self.budget -= len(data)
            return None
        keep = self.budget
        self.cut_at = (op, name, keep, len(data))
        self.dead = True
        return keep

    def write(self, name, data):
        if isinstance(data, tuple):
            data = b"".join(data)  # (the test's flash tears a slot at any byte of the whole)
        keep = self._spend("write", name, data)
        if keep is None:
            return SimNv.write(self, name, data)
        # A whole-file write torn after `keep` bytes: truncated, then a prefix.
        self.board.note_flash_write()
        self.close(name)
        with open(self.path(name), "wb") as f:
            f.write(data[:keep])
        raise PowerCut(name)

    def append(self, name, data):
        keep = self._spend("append", name, data)
        if keep is None:
            return SimNv.append(self, name, data)
        if keep:
            SimNv.append(self, name, data[:keep])
        raise PowerCut(name)

    def remove(self, name):
        if self.dead:
            raise PowerCut("already off")
        SimNv.remove(self, name)

    def torn_nor(self, dev):
        """The board's raw-log chip on the same power as these files."""
        return TornNor(dev.path, dev.sectors, self, dev.on_write)

    def close_all(self):
        for name in list(self._appenders):
            try:
                self._appenders.pop(name).close()
            except OSError:
                pass


class TornNor(SimNorFlash):
    """The raw log's NOR chip, losing power on the same byte budget as the files (TornNv): a
    program is cut at the byte the budget runs out, an erase (counted as 256 bytes of budget)
    part way through."""

    ERASE_COST = 256

    def __init__(self, path, sectors, nv, on_write):
        SimNorFlash.__init__(self, path, sectors, on_write)
        self.nv = nv
        self._in_op = False  # the operation the power fails in still runs up to its cut

    def _check(self, sector, offset, n):
        if self.nv.dead and not self._in_op:
            raise PowerCut("already off")
        SimNorFlash._check(self, sector, offset, n)

    def program(self, sector, offset, data):
        if self.nv.dead:
            raise PowerCut("already off")
        keep = self.nv._spend("program", "rawlog", data)
        if keep is not None:
            self.arm_cut(program_bytes=keep)
        self._in_op = True
        try:
            SimNorFlash.program(self, sector, offset, data)
        finally:
            self._in_op = False
            self.power_on()
        if keep is not None:
            raise PowerCut("rawlog")  # the whole record went in, and then the power

    def erase(self, sector):
        if self.nv.dead:
            raise PowerCut("already off")
        keep = self.nv._spend("erase", "rawlog", b"\xff" * self.ERASE_COST)
        if keep is not None:
            self.arm_cut(erase_bytes=keep * 4096 // self.ERASE_COST)
        self._in_op = True
        try:
            SimNorFlash.erase(self, sector)
        finally:
            self._in_op = False
            self.power_on()


def _derived_found(form, params, ms, seq):
    """What the campaign keeps of a DERIVED event (its kind, seat, reason)."""
    ev = {"q": seq, "ms": ms,
          "k": {rawjournal_mod.F_KEY: "key", rawjournal_mod.F_METERS: "meters",
                rawjournal_mod.F_EXTRA: "extra_coin", rawjournal_mod.F_LATE: "late_coin",
                rawjournal_mod.F_SPOT: "spot"}.get(form, "state")}
    if form == rawjournal_mod.F_EXTRA or form == rawjournal_mod.F_LATE:
        ev["seat"] = params[0]
    if form == rawjournal_mod.F_LOCK:
        ev["reason"] = "lock"
    elif form == rawjournal_mod.F_UNLOCK:
        ev["reason"] = "unlock"
    return ev


def harvest_rawlog(dev, found):
    """found(event dict) for every valid event record anywhere on the chip now: each sector with
    a valid header is read from its header on (a coin record gives kind, seat and ms; its patch
    follows from the state before it, which the campaign's model applies)."""
    log = rawlog_mod.RawLog(dev)

    def visit(kind, body, seq, _n, _s):
        if kind == rawlog_mod.K_COIN:
            seat, ms, _pe, _m = rawlog_mod.decode_coin(body)
            found({"q": seq, "k": "coin", "seat": seat, "ms": ms})
        elif kind == rawlog_mod.K_DERIVED:
            found(_derived_found(body[0] & 0x0F, body[5:12], rawlog_mod.from_le(body, 1, 4), seq))
        elif kind == rawlog_mod.K_GROUP:
            # A key press's events of one moment: each takes its own number.
            ms = rawlog_mod.from_le(body, 1, 4)
            for sub, (form, params) in enumerate(rawjournal_mod.group_events(body)):
                found(_derived_found(form, params, ms, seq + sub))
        elif kind == rawlog_mod.K_FULL:
            found(json.loads(rawlog_mod.full_payload(body)))
    for phys in range(dev.sectors):
        b = bytearray(16)
        dev.readinto(phys, 0, b)
        if b[0] != rawlog_mod.K_HEADER:
            continue
        n = rawlog_mod.from_le(b, 1, 4)
        first = log.read_header(n)
        if first is not None:
            log.scan(n, 0, first, visit)


class Campaign:
    def __init__(self, name, seed):
        self.dir = fresh_dir(name)
        self.rng = Rng(seed)
        self.durable = {}  # seq -> event payload (dict)
        self.fed = [0] * SEATS
        self.host = proto.FrameReader()
        self.host_top = 0  # highest contiguous seq the host has
        self.received = {}
        self.now = 1000
        self.restarts = 0
        self.cuts = 0
        self.where = {}
        self.violations = []
        self.max_replay = 0
        self.flash_writes = 0
        self.board = None
        self.app = None
        self.model = initial_state(config_mod.defaults())
        self.coins = [0] * SEATS
        self.upto = 0
        self.credited = 0

    # --- boards and their power ------------------------------------------------------------
    def power_on(self, budget=None):
        """A fresh board and app on the same directory. A cut may hit the boot itself."""
        if self.board is not None:
            self.board.nv.close_all()  # the old board is gone, with its open files
        board = VirtualClockBoard(self.dir, "sim-pc", 8, 8, "pio")
        board.nv = TornNv(self.dir + "/data", board)
        board.nv.budget = budget
        if board.log_device is not None:
            board.log_device = board.nv.torn_nor(board.log_device)
        board.warp_ms = self.now
        self.board = board
        self.app = None
        try:
            self.app = TableApp(board, board.now_ms())
        except PowerCut:
            self._after_cut()
            return False
        return True

    def _after_cut(self):
        nv = self.board.nv
        self.cuts += 1
        op, name, written, total = nv.cut_at
        if name.startswith("ck_") or name.startswith("rl_"):
            what = "checkpoint"
        elif self.app is None:
            what = "boot"
        elif name == "rawlog":
            what = "raw log " + op
        elif self.app.journal is not None and name != self.app.journal._journal_name():
            what = "compaction"
        else:
            what = "journal"
        if written == total:
            what += ", written whole, cut before acted on"
        self.where[what] = self.where.get(what, 0) + 1
        self.flash_writes += self.board.flash_writes
        nv.close_all()
        self.harvest()
        self.now = self.board.now_ms() + 50

    def harvest(self):
        """Collect every valid journal record on flash now (the durable events)."""
        if self.board.log_device is not None:
            harvest_rawlog(SimNorFlash(self.board.log_device.path, self.board.log_device.sectors), self._durable)
            return
        nv = SimNv(self.dir + "/data", self.board)
        for fname in nv.names():
            if not (fname.startswith("j") and fname.endswith(".log")):
                continue
            data = nv.read(fname) or b""
            for _off, payload in journal_mod.scan_records(data):
                self._durable(json.loads(payload))

    def _durable(self, ev):
        seq = ev["q"]
        # What identifies it, small. A coin's patch is left out: the raw log's coin record holds
        # none (the model computes it, as replay does), and it follows from the seat anyway. So is
        # a lock's or an unlock's on the raw log (a DERIVED record: the model rebuilds it).
        reason = ev.get("reason")
        patch = ev.get("p")
        if ev["k"] == "coin" or (RAW and ev["k"] == "state" and reason in ("lock", "unlock")):
            patch = None
        ev = (ev["k"], ev.get("seat"), patch, ev["ms"], reason)
        old = self.durable.get(seq)
        if old is None:
            self.durable[seq] = ev
        elif old != ev:
            self.violations.append("seq %d names two events: %r / %r" % (seq, old[0], ev[0]))

    # --- the table running -------------------------------------------------------------------
    def setup(self):
        """Boot fresh and make the campaign's configuration durable (as a config event)."""
        assert self.power_on()
        app = self.app
        cfg = config_mod.validate(CFG, app.cfg)
        app.record(self.board.now_ms(), "config", {"old": {}, "new": CFG}, {"cfg": cfg})
        app.cfg = cfg
        app.build_inputs(self.board.now_ms())

    def feed_coins(self):
        """Tokens on every seat, staggered, more than the cut will let finish."""
        board = self.board
        for seat in range(SEATS):
            edges = []
            t = self.rng.below(40)
            for _ in range(3):
                e, t = coin_edges(seat, 1, 20, 20, t)
                edges.extend(e)
                t += 80 + self.rng.below(40)
            board.feed_edges(edges)
            self.fed[seat] += 3

    def run(self, ms):
        """Step the app (2 ms turns) with the host reading, acking now and then."""
        board = self.board
        app = self.app
        end = board.now_ms() + ms
        turn = 0
        try:
            while board.now_ms() < end:
                board.warp_ms += 2
                turn += 1
                if turn % 60 == 0:
                    self.maybe_key()
                app.step(board.now_ms())
                self._host_read()
                if turn % 40 == 0 and self.host_top:
                    board.rx.extend(proto.encode_frame(proto.ack(self.host_top)))
        except PowerCut:
            self._after_cut()
            return False
        self.now = board.now_ms()
        return True

    def maybe_key(self):
        """Dealer lock/unlock now and then: state events (patches) mixed with the coins."""
        r = self.rng.below(6)
        app = self.app
        if r == 0 and app.state["base"] == "OPEN":
            app.key_pressed(self.board.now_ms(), "lock")
        elif r <= 2 and app.state["base"] == "LOCKED":
            app.key_pressed(self.board.now_ms(), "unlock")

    def _host_read(self):
        if not self.board.tx:
            return
        for frame in self.host.feed(bytes(self.board.tx)):
            msg = frame.message
            if msg.get("t") == proto.EVENT:
                # The host only ever sees durable events; they may have been compacted away since.
                self._durable(msg)
                self.received[msg["q"]] = True
                while self.host_top + 1 in self.received:
                    self.host_top += 1
        self.board.tx = bytearray()

    # --- the checks after each restart ----------------------------------------------------------
    def check(self):
        app = self.app
        v = self.violations
        if app.journal is None or "storage" in app.faults:
            v.append("restart %d: storage fault %r" % (self.restarts, app.fault_detail))
            return
        self.harvest()
        n = app.journal.next_seq - 1
        seqs = sorted(self.durable)
        if seqs != list(range(1, len(seqs) + 1)):
            v.append("restart %d: durable sequence has gaps" % self.restarts)
        if len(seqs) != n:
            v.append("restart %d: board's last seq %d, durable events %d" % (self.restarts, n, len(seqs)))
        # Replay the durable events from the initial state (incrementally: seqs up to `upto`
        # were applied at an earlier restart and _durable() checks they never change).
        model = self.model
        coins = self.coins
        for seq in seqs[self.upto:]:
            kind, seat, patch, _ms, reason = self.durable[seq]
            if kind == "coin":
                _fields, patch = meter_mod.credit(model, model["cfg"], seat)
            elif kind == "state" and patch is None:
                form = rawjournal_mod.F_LOCK if reason == "lock" else rawjournal_mod.F_UNLOCK
                patch = rawjournal_mod.derived_event(form, b"", 0, model, "").get("p")
            if patch:
                for k in patch:
                    model[k] = patch[k]
            if kind == "coin":
                coins[seat] += 1
        self.upto = len(seqs)
        state = app.state
        for key in ("meter", "over", "contrib", "round", "base", "boots", "cfg"):
            if state[key] != model[key]:
                v.append("restart %d: %s is %r, durable events say %r" % (self.restarts, key, state[key], model[key]))
        credited = sum(coins)
        seed = config_mod.defaults()["seed_cents"]
        if state["meter"] != seed + CFG_INC * credited:
            v.append("restart %d: meter %d != seed + %d x %d" % (self.restarts, state["meter"], CFG_INC, credited))
        for seat in range(SEATS):
            if coins[seat] > self.fed[seat]:
                v.append("seat %d credited %d of %d tokens" % (seat, coins[seat], self.fed[seat]))
            if state["c%d" % seat] != coins[seat]:
                v.append("seat %d counter %d != coin events %d" % (seat, state["c%d" % seat], coins[seat]))
        self.credited = credited


CFG_INC = config_mod.defaults()["increment_cents"]
Campaign.result = lambda self: _result(self)


def campaign(seed, cuts, name="pc"):
    c = Campaign(name + str(seed), seed)
    c.credited = 0
    c.setup()
    while c.cuts < cuts:
        # Arm a cut: most within the next few hundred bytes of writes (journal appends,
        # compaction copies, checkpoints), some during the boot's own writes.
        mode = c.rng.below(10)
        if mode == 0:
            # A cut during the next boot (its boot event, meters snapshot, or recovery compaction).
            c.power_on(c.rng.below(600) + 1) and c.run(5)
            c.board.nv.budget = None
        else:
            if c.app is None or c.board.nv.dead:
                while not c.power_on():
                    pass
                c.restarts += 1
                c.check()
            c.board.nv.budget = c.rng.below(1500 if mode < 7 else 5000) + 1
            c.feed_coins()
            spins = 0
            while c.run(400):
                c.feed_coins()
                spins += 1
                if spins > 50:  # nothing is being written any more: that is a finding too
                    c.violations.append("restart %d: no flash writes in 20 s of coin-in" % c.restarts)
                    return c.result()
            # the cut happened: next loop iteration restarts
        if c.board.nv.dead or c.app is None:
            while not c.power_on():
                pass
            c.restarts += 1
            c.check()
            if len(c.violations) > 20:
                break
    return c.result()


def _result(c):
    return {"cuts": c.cuts, "restarts": c.restarts, "where": c.where, "events": len(c.durable),
            "credited": c.credited, "fed": sum(c.fed), "violations": c.violations[:20],
            "violation_count": len(c.violations), "meter": c.app.state["meter"] if c.app else None,
            "flash_writes": c.flash_writes}


def test_power_cuts_short_campaign():
    r = campaign(7, 40, "pct")
    assert r["violation_count"] == 0, r["violations"]
    assert r["cuts"] >= 40 and r["credited"] > 0, r


def test_torn_checkpoint_slot_falls_back_to_the_other():
    c = Campaign("ckslot", 3)
    c.setup()
    c.feed_coins()
    c.run(600)
    meter = c.app.state["meter"]
    j = c.app.journal
    c.board.nv.budget = 20  # torn 20 bytes into the next write: the checkpoint
    try:
        j.checkpoint(c.app.state)
        raise AssertionError("no cut")
    except PowerCut:
        c._after_cut()
    assert c.power_on()
    assert c.app.state["meter"] == meter
    c.check()
    assert not c.violations, c.violations


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "campaign":
        print(json.dumps(campaign(int(sys.argv[2]), int(sys.argv[3]))))
    else:
        mptest.run(globals())
