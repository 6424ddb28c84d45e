"""Fault campaigns 3-6 on MicroPython (docs/RELIABILITY.md): host loss, flash-write blackout, bad input,
tampering. Each campaign_* returns a dict of figures with a "violations" list; the test_*
functions run them small for CI, `micropython mp_test_faults_misc.py campaign SEED SCALE` runs
them all and prints one JSON line (tabledev.faults drives it)."""
import json
import sys

import mptest
from mp_test_faults_power import Rng, VirtualClockBoard
from simkit import Rig, coin_edges, fresh_dir
from table import protocol as proto
from table import vocab
from table.app import TableApp, OUTBOX_RESERVE

KEY = bytes(range(32))
LOCK, UNLOCK, JACKPOT, SERVICE = 0, 1, 2, 3


class VRig(Rig):
    """simkit's Rig on the virtual clock alone (repeatable), with an ack-after-receive host."""

    def boot(self, config=None, backend="pio"):
        self.board = VirtualClockBoard(self.dir, "sim-fault", 8, 8, backend)
        self.board.warp_ms = getattr(self, "now", 0) + 1000
        self.app = TableApp(self.board, self.board.now_ms())
        if config:
            cfg = dict(self.app.cfg)
            cfg.update(config)
            self.app.record(self.board.now_ms(), "config", {"old": {}, "new": config}, {"cfg": cfg})
            self.app.cfg = cfg
            self.app.build_inputs(self.board.now_ms())

    def host_top(self):
        top = 0
        while top + 1 in self.seen:
            top += 1
        return top


def _coins_all_seats(rig, rng, seats=7, per_seat=1, gap=80):
    for seat in range(seats):
        edges = []
        t = rng.below(30)
        for _ in range(per_seat):
            e, t = coin_edges(seat, 1, 20, 20, t)
            edges.extend(e)
            t += gap + rng.below(30)
        rig.board.feed_edges(edges)


FAST = {"coin_gap_ms": 60, "pulse_min_ms": 10, "pulse_max_ms": 40, "jam_ms": 500}


# ------------------------------------------------------------------ 3: host loss
def campaign_host_loss(seed, minutes=10, outbox_limit=400):
    """The host goes silent for `minutes` (board time) while coins keep arriving; then returns."""
    rng = Rng(seed)
    cfg = dict(FAST)
    cfg["outbox_limit"] = outbox_limit
    rig = VRig("hostloss%d" % seed, cfg)
    v = []
    rig.run_ms(200)
    rig.ack_all()
    rig.run_ms(50)
    meter0 = rig.app.state["meter"]
    max_unacked = 0
    fault_at_unacked = None
    refused_before_fault = 0
    rig.events = []  # host is down from here: what arrives is thrown away, nothing acked
    rig.seen = {}
    end = rig.board.now_ms() + minutes * 60000
    rounds = 0
    while rig.board.now_ms() < end:
        _coins_all_seats(rig, rng, 7, 2)
        rig.run_ms(400, 4)
        rig.board.tx = bytearray()  # the host is gone: the bytes go nowhere
        rig.events = []
        rig.seen = {}
        unacked = rig.app.journal.unacked_count()
        max_unacked = max(max_unacked, unacked)
        if ("outbox" in rig.app.faults) and fault_at_unacked is None:
            fault_at_unacked = unacked
        rounds += 1
        if rounds % 3 == 0:
            rig.app.key_pressed(rig.board.now_ms(), "lock")
            rig.app.key_pressed(rig.board.now_ms(), "unlock")
    meter_during = rig.app.state["meter"]
    credited_during = (meter_during - meter0) // rig.app.cfg["increment_cents"]
    if meter_during < meter0:
        v.append("meter went down while the host was away")
    if max_unacked > outbox_limit + OUTBOX_RESERVE:
        v.append("outbox grew past its bound: %d" % max_unacked)
    if fault_at_unacked is None:
        v.append("outbox never filled: test too short")
    if "host" not in rig.app.faults or not all(rig.board.inhibit[:7]):
        v.append("host silence did not disable coin-in")
    # Nothing dropped that carried money: every credited coin is still in the outbox.
    held = rig.app.journal.unacked_count()
    coins_held = 0
    for i in range(held):
        ev = json.loads(rig.app.journal.read_payload(i))
        if ev["k"] == "coin":
            coins_held += 1
    if coins_held != credited_during:
        v.append("outbox holds %d coins, meter says %d" % (coins_held, credited_during))
    suppressed = rig.app.suppressed
    # The host comes back: it must get everything, once, in order.
    first_back = rig.app.journal.acked_seq + 1
    rig.send({"t": proto.HELLO, "v": [1]})
    for _ in range(400):
        rig.run_ms(40)
        rig.ack_all()
        if rig.app.journal.unacked_count() == 0:
            break
    last = rig.app.journal.next_seq - 1
    got = sorted(rig.seen)
    if got != list(range(first_back, last + 1)):
        v.append("after the host returned: seqs %d..%d expected, got %d events" % (first_back, last, len(got)))
    coins_delivered = len([e for e in rig.events if e["k"] == "coin"])
    if coins_delivered < credited_during:
        v.append("coins delivered %d < credited %d" % (coins_delivered, credited_during))
    if "outbox" in rig.app.faults or "host" in rig.app.faults:
        v.append("faults did not clear after the host returned: %r" % rig.app.faults)
    return {"minutes": minutes, "outbox_limit": outbox_limit, "max_unacked": max_unacked,
            "outbox_fault_at": fault_at_unacked, "credited_while_down": credited_during,
            "events_delivered_after": len(got), "suppressed_non_money": suppressed,
            "meter_kept": meter_during, "violations": v}


# ------------------------------------------------------------------ 4: flash-write blackout
def campaign_blackout(seed, rounds=30):
    """The same pulse trains through a "pio" and an "irq" counter while the journal writes."""
    out = {}
    v = []
    for backend in ("pio", "irq"):
        rng = Rng(seed)
        rig = VRig("blk%s%d" % (backend, seed))
        rig.boot(FAST, backend)
        fed = 0
        for _ in range(rounds):
            _coins_all_seats(rig, rng, 7, 3, 30)
            fed += 21
            rig.run_ms(900)
            rig.ack_all()
            rig.app.key_pressed(rig.board.now_ms(), "lock")
            rig.app.key_pressed(rig.board.now_ms(), "unlock")
        decoded = sum(d.coins for d in rig.app.decoders)
        lost = sum(s.edges_lost() for s in rig.board.pulse_sources)
        out[backend] = {"fed": fed, "decoded": decoded, "edges_lost": lost,
                        "flash_writes": rig.board.flash_writes}
    if out["pio"]["decoded"] != out["pio"]["fed"] or out["pio"]["edges_lost"]:
        v.append("pio lost pulses: %r" % out["pio"])
    if out["irq"]["edges_lost"] == 0:
        v.append("irq lost nothing: the blackout model did not bite")
    out["violations"] = v
    return out


# ------------------------------------------------------------------ 5: bad input
def _provisioned(name):
    rig = VRig(name)
    rig.key = KEY
    rig.board.switch = True
    r = rig.command("provision", {"key": KEY.hex()})
    assert r and r["ok"], r
    rig.board.switch = False
    return rig


def campaign_bad_input(seed, frames=3000):
    rng = Rng(seed)
    rig = _provisioned("badin%d" % seed)
    v = []
    app = rig.app
    meter = app.state["meter"]
    crashes = 0
    valid = proto.encode_frame(proto.command(1, "status", {}))
    names = list(vocab.GUARDED_COMMANDS) + list(vocab.READ_COMMANDS) + ["nope", ""]
    junk_vals = [None, -1, 0, 1 << 40, "x", [], {}, True, 3.5, "ff" * 40]
    for i in range(frames):
        kind = rng.below(4)
        if kind == 0:  # raw garbage, sometimes with delimiters
            data = bytes(rng.below(256) for _ in range(rng.below(80) + 1))
        elif kind == 1:  # a valid frame with bytes flipped
            b = bytearray(valid)
            for _ in range(rng.below(3) + 1):
                b[rng.below(len(b))] ^= 1 << rng.below(8)
            data = bytes(b)
        elif kind == 2:  # well-formed frames, nonsense content
            msg = {"t": [proto.COMMAND, proto.ACK, proto.HELLO, "zz", None][rng.below(5)],
                   "id": junk_vals[rng.below(len(junk_vals))], "c": names[rng.below(len(names))],
                   "a": [{}, None, {"seat": junk_vals[rng.below(len(junk_vals))],
                                    "amount_cents": junk_vals[rng.below(len(junk_vals))],
                                    "changes": {"seats": junk_vals[rng.below(len(junk_vals))]}}][rng.below(3)],
                   "q": junk_vals[rng.below(len(junk_vals))], "v": junk_vals[rng.below(len(junk_vals))]}
            data = proto.encode_frame(msg)
        else:  # keypad mashing and spot sensors flapping
            rig.board.keys = rng.below(16) & ~(1 << SERVICE)
            rig.board.spots = rng.next() & 0xFFFFFF
            data = b""
        rig.board.rx.extend(data)
        try:
            rig.run_ms(4)
        except Exception as exc:
            crashes += 1
            v.append("crash on input %d: %r" % (i, exc))
            if crashes > 5:
                break
        if i % 50 == 0:
            rig.ack_all()
    rig.board.keys = 0
    rig.run_ms(100)
    if app.state["meter"] != meter:
        v.append("meter changed by bad input: %d -> %d" % (meter, app.state["meter"]))
    fuzz_figures = (app.link.reader.frames_bad, app.link.frames_refused)
    # Out-of-range configuration, through the real, signed command in SERVICE (a fresh table:
    # the mashing above may have left this one JACKPOT_PENDING, where only an award leads out).
    rig = _provisioned("badcfg%d" % seed)
    app = rig.app
    meter = app.state["meter"]
    rig.board.switch = True
    r = rig.command("service", {"enter": True}, signed=True)
    if not (r and r.get("ok")):
        v.append("could not enter service: %r" % r)
    cfg_before = dict(app.cfg)
    bad_cfgs = [{"seats": 0}, {"seats": 9}, {"increment_cents": -1}, {"seed_cents": 10 ** 11},
                {"pulse_min_ms": 500, "pulse_max_ms": 100}, {"nope": 1}, {"seats": "7"},
                {"increment_cents": 90, "reserve_cents": 20}, {"ceiling_cents": 5}, {"jam_ms": True}]
    refused_cfg = 0
    for bad in bad_cfgs:
        r2 = rig.command("config_set", {"changes": bad}, signed=True)
        if r2 and not r2.get("ok") and r2.get("err") == proto.E_BAD_ARGS:
            refused_cfg += 1
        else:
            v.append("bad config %r not refused: %r" % (bad, r2))
    if app.cfg != cfg_before:
        v.append("config changed by refused settings")
    rig.command("service", {"enter": False}, signed=True)
    rig.board.switch = False
    # A bet-spot sensor stuck on: one event, not a flood; a jammed acceptor: a fault, inhibit.
    spot_events = len(rig.kinds("spot"))
    rig.board.spots = 1
    rig.run_ms(5000, 10)
    stuck_events = len(rig.kinds("spot")) - spot_events
    rig.board.spots = 0
    rig.app.key_pressed(rig.board.now_ms(), "unlock")
    rig.board.feed_edges([(2, 1, 0)])
    rig.run_ms(2600, 5)  # past jam_ms (2000 by default)
    jam_ok = bool(rig.kinds("jam")) and rig.board.inhibit[2] and app.jammed[2]
    if not jam_ok:
        v.append("jammed acceptor not reported/inhibited")
    if stuck_events > 1:
        v.append("stuck spot sensor produced %d events" % stuck_events)
    rig.board.feed_edges([(2, 0, 0)])
    rig.run_ms(100)
    if app.state["meter"] != meter:
        v.append("meter changed: %d -> %d" % (meter, app.state["meter"]))
    return {"frames": frames, "crashes": crashes, "frames_bad": fuzz_figures[0],
            "refused": fuzz_figures[1], "bad_configs_refused": refused_cfg,
            "bad_configs": len(bad_cfgs), "stuck_spot_events": stuck_events, "jam_fault": jam_ok,
            "meter_unchanged": app.state["meter"] == meter, "violations": v}


# ------------------------------------------------------------------ 6: tampering
def campaign_tamper(seed, rounds=20):
    rng = Rng(seed)
    rig = _provisioned("tamper%d" % seed)
    app = rig.app
    v = []
    tried = {"bad_mac": 0, "replay": 0, "wrong_state": 0, "no_mac": 0}
    refused = {"bad_mac": 0, "replay": 0, "wrong_state": 0, "no_mac": 0}
    for i in range(rounds):
        meter = app.state["meter"]
        corr = app.state["corr"]
        # bad MAC: right session and counter, wrong key
        wrong = bytes((b + 1 + rng.below(200)) & 0xFF for b in KEY)
        cid = 1000 + i * 10
        rig.send(proto.command(cid, "meter_set", {"meter_cents": 1, "reason": "x"}), wrong)
        rig.run_ms(10)
        tried["bad_mac"] += 1
        r = rig.replies.get(cid)
        refused["bad_mac"] += 1 if r and r.get("err") == proto.E_BAD_MAC else 0
        # no MAC at all
        rig.send(proto.command(cid + 1, "award", {"seat": 0, "amount_cents": 5}))
        rig.run_ms(10)
        tried["no_mac"] += 1
        r = rig.replies.get(cid + 1)
        refused["no_mac"] += 1 if r and r.get("err") == proto.E_BAD_MAC else 0
        # a good command, then the same counter used again under a new id (a replay)
        r = rig.command("clear", {}, signed=True)
        if not (r and r.get("ok")):
            v.append("a correctly signed clear was refused: %r" % r)
        rig.board.rx.extend(proto.sealed_frame(proto.command(cid + 2, "clear", {}), KEY, rig.session, rig.counter))
        rig.run_ms(10)
        tried["replay"] += 1
        r = rig.replies.get(cid + 2)
        refused["replay"] += 1 if r and r.get("err") == proto.E_REPLAY else 0
        # money command in the wrong state: award while OPEN, meter_set outside SERVICE
        for name, args in (("award", {"seat": 0, "amount_cents": 100, "meter_cents": 100, "round": 1}),
                           ("meter_set", {"meter_cents": 5, "reason": "tamper"}),
                           ("config_set", {"changes": {"increment_cents": 99}})):
            r = rig.command(name, args, signed=True)
            tried["wrong_state"] += 1
            refused["wrong_state"] += 1 if r and r.get("err") == proto.E_STATE else 0
        if app.state["meter"] != meter or app.state["corr"] != corr:
            v.append("round %d: meter changed by a refused command" % i)
        rig.ack_all()
    for k in tried:
        if refused[k] != tried[k]:
            v.append("%s: %d of %d refused" % (k, refused[k], tried[k]))
    rig.run_ms(61000, 50)  # refusals past 4 a minute are journaled as one counted event a minute later
    logged = 0
    for e in rig.kinds("cmd_refused"):
        counts = e.get("count")
        logged += sum(counts[c] for c in counts) if counts else 1
    expected_logged = sum(tried.values())
    if logged != expected_logged:
        v.append("cmd_refused events %d, expected %d" % (logged, expected_logged))
    return {"tried": tried, "refused": refused, "logged": logged, "refused_counter": app.link.frames_refused,
            "violations": v}


def run_all(seed, scale):
    return {"host_loss": campaign_host_loss(seed, 10 if scale >= 1 else 4),
            "blackout": campaign_blackout(seed, 30 if scale >= 1 else 8),
            "bad_input": campaign_bad_input(seed, 5000 if scale >= 1 else 800),
            "tamper": campaign_tamper(seed, 25 if scale >= 1 else 5)}


def test_host_loss():
    r = campaign_host_loss(3, 4)
    assert not r["violations"], r


def test_blackout_pio_loses_nothing_irq_would():
    r = campaign_blackout(3, 6)
    assert not r["violations"], r


def test_bad_input():
    r = campaign_bad_input(3, 400)
    assert not r["violations"], r


def test_tamper():
    r = campaign_tamper(3, 3)
    assert not r["violations"], r


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "campaign":
        print(json.dumps(run_all(int(sys.argv[2]), int(sys.argv[3]))))
    else:
        mptest.run(globals())
