"""The firmware on the MicroPython v1.24.1 Pico build, on an emulated RP2040 (rp2040py).

Every figure is measured on the emulated Pico: times are the emulator's own clock (emulated ms,
what a Pico would take if the emulator's cycle costs are right: 125 MHz, one cycle per simple
Cortex-M0+ instruction, flash as fast as RAM), cycles come from its cycle counter, flash wear from
the QSPI commands the firmware's littlefs sends to the emulated W25Q16JV (with its datasheet
busy times, so a sector erase stops the CPU for 45 ms as on the chip).

    python benchmarks/bench_pico.py                 # every section (about an hour on a quiet 2-core machine)
    python benchmarks/bench_pico.py boot wear       # some sections: boot, decode, wear, e2e, speed, rawlog
    python benchmarks/bench_pico.py rawwear --rounds 24   # not in the default list: the controller's
        # journal on the raw flash log (reserve provisioned at the REPL), its wear per token
    python benchmarks/bench_pico.py decode --tokens 10010
    python benchmarks/bench_pico.py cuts --cuts 200 --seed 14 [--until HH:MM]   # not in the default list:
        # power cuts during coin-in and awards with the service recording (benchmarks/pico_cuts.py);
        # each cut is minutes of wall time (a boot is 1.4 s of the Pico's time, the busy core runs
        # 50-150x slower than a Pico here), so 200 cuts are many hours; --until stops starting cuts
        # at that UTC time; every cut checked is appended to benchmarks/records/pico_cuts.jsonl with the
        # digest of the code under test, and the section counts every cut recorded on the current code
    python benchmarks/bench_pico.py cutsreport       # that section from the record alone (no emulator)

    python benchmarks/bench_pico.py emulator         # not in the default list: CPU per emulated second of
        # rp2040py as installed (make pico-emulator: full API) against PyPI's stable-ABI wheel, same run
    python benchmarks/bench_pico.py hostturn         # not in the default list: how long the pty relay and an
        # mpremote command wait for the emulator's thread, CPython's GIL switch interval against the rig's
    python benchmarks/bench_pico.py heapmap          # not in the default list: what each module, the pin
        # map, the board and the app take of the Pico's heap
    python benchmarks/bench_pico.py replay           # not in the default list: boot with 4,096 acknowledged and
        # 970 unacknowledged events to replay (the most a boot can meet), on the official pin map's raw log
    python benchmarks/bench_pico.py play-period --play-period-s 600 [--until HH:MM]   # not in the default list: the
        # live heap's lowest value over a play period of the real main loop (hours of wall time for 10 minutes)

Records written (benchmarks/results/NAME.json, rendered into docs/BENCHMARKS.md): pico_boot, pico_wear, pico_e2e, pico_decode, pico_speed, pico_rawlog,
pico_cuts, pico_rawwear, pico_replay, pico_play_period, pico_heapmap, pico_emulator, pico_hostturn.
"""
import argparse
import ast
import json
import os
import random
import shutil
import sys
import tempfile
import threading
import time

import _common
from _common import ROOT, invocation, table, write_section, machine_note  # noqa: F401 (sys.path for tablectl)

from tabledev.bench import Bench, coin_train
from table.app import OUTBOX_RESERVE, WEAR_REFILL_MS
from table.rawjournal import ACK_CHECKPOINT_EVENTS, ACK_RECORD_EVENTS
from tabledev.pico_sim import HOW_TO_GET_IMAGE, PINMAP, UF2_VERSION, image_path
from tabledev.pico_sim import _pio_step_ns as pio_step_ns
from tabledev.emulated_pico import EmulatedPicoProcess, EmulatedPico

SECTORS = 352  # the littlefs partition of MicroPython's rp2 port: 1.4 MiB of 4 KiB sectors
ERASE_CYCLES = 100000  # W25Q16JV, per sector (Winbond datasheet)
MAX_TOKENS_PER_S = 14.0  # seven acceptors, a token every 0.5 s each (bench_flash_wear.py's maximum)
SECONDS_PER_YEAR = 365 * 24 * 3600
TARGET_YEARS = 10


def last_json(text):
    """The harness's result: after its RESULT marker (the app's own frames share the stream)."""
    return json.loads(text.rsplit("RESULT", 1)[1].strip().splitlines()[0])


# --- boot, memory, main-loop cost ------------------------------------------------------------------
# The REPL scripts' timer: r[label] = microseconds one call of fn takes, the mean of n.
REPL_TIMER = r'''
import time
r = {}
def t(label, fn, n=10):
    t0 = time.ticks_us()
    for _ in range(n):
        fn()
    r[label] = time.ticks_diff(time.ticks_us(), t0) // n
'''

STEP_COST = REPL_TIMER + r'''
import time, gc, json, machine
from boards.pico import PicoBoard
from boards.selfcheck import manifest_checker
from table.app import TableApp
b = PicoBoard()
t0 = time.ticks_us()
r["selfcheck"] = manifest_checker("/")()
r["selfcheck_us"] = time.ticks_diff(time.ticks_us(), t0)
gc.collect()
r["free_board"] = gc.mem_free()
t0 = time.ticks_us()
app = TableApp(b, b.now_ms(), None)
r["app_init_us"] = time.ticks_diff(time.ticks_us(), t0)
gc.collect()
r["free_app"] = gc.mem_free()
t("step_us", lambda: app.step(b.now_ms()), 20)
t("coin_in_us", lambda: app._coin_in(b.now_ms()), 20)
t("keys_spots_us", lambda: app._keys_and_spots(b.now_ms()), 20)
t("outputs_us", lambda: app._update_outputs(b.now_ms()), 20)
t("link_us", lambda: (app.link.read(b.now_ms()), app.link.write(b.now_ms())), 20)
# the loop main.py runs: step, then machine.idle() until the next interrupt
n = 0
low = gc.mem_free()
t0 = time.ticks_ms()
while time.ticks_diff(time.ticks_ms(), t0) < 1000:
    app.step(b.now_ms())
    machine.idle()
    n += 1
    low = min(low, gc.mem_free())
r["turns_per_s"] = n
r["low_free"] = low
# the live heap: collected every 10 turns (garbage awaiting collection is not in use). The
# first reading is collected too: the loop above leaves up to a heap of garbage behind, and an
# uncollected first reading (what this harness took before) showed ~1 KB "free" as if it leaked.
r["uncollected_after_loop"] = gc.mem_free()
gc.collect()
low = gc.mem_free()
first = low
for i in range(1, LIVE_TURNS + 1):
    app.step(b.now_ms())
    if i % 10 == 0:
        gc.collect()
        low = min(low, gc.mem_free())
gc.collect()
r["live_first"] = first
r["live_last"] = gc.mem_free()
r["low_live"] = low
r["live_turns"] = LIVE_TURNS
# what each event held for the host costs (no host here: nothing is acknowledged); journaled as
# the bet-spot events a player's chips make, the watchdog fed as the main loop would
j = app.journal
gc.collect()
f0 = gc.mem_free()
u0 = j.unacked_count()
for i in range(HELD_EVENTS):
    app.record(b.now_ms(), "spot", {"seat": i % 7, "spot": "main", "on": bool(i & 1)})
    b.feed_watchdog()
gc.collect()
r["held_events"] = j.unacked_count() - u0
r["held_bytes"] = f0 - gc.mem_free()
r["outbox_limit"] = app.cfg["outbox_limit"]
print("RESULT" + json.dumps(r))
'''


# What one event costs to send and one acknowledgement to take, as the link does them (a coin
# event's payload; a test key). A script of its own, run after STEP_COST: the REPL holds a
# script's bytecode while it runs, and these lines in STEP_COST took 2.5 KB off its heap figures.
FRAME_COST = REPL_TIMER + r'''
import json
from table import protocol as proto
key = proto.as_key(b"k" * 32)
payload = proto.encode_payload({"k": "coin", "b": "pico-e6614103e7a1b2c3", "q": 1234, "t": "ev", "ms": 123456, "seat": 3,
                                "round": 17, "p": {"seat": 3, "meter": 10001234, "t3": 1, "pe": 123400}})
frame = proto.frame_from_payload(payload, key)
r["event_payload_bytes"] = len(payload)
t("event_frame_us", lambda: proto.frame_from_payload(payload, key), 10)
def cobs_byte_by_byte(data):
    out = bytearray(len(data) + len(data) // 254 + 2)
    code_at = 0
    o = 1
    code = 1
    for x in data:
        if x == 0:
            out[code_at] = code
            code_at = o
            o += 1
            code = 1
        else:
            out[o] = x
            o += 1
            code += 1
            if code == 0xFF:
                out[code_at] = code
                code_at = o
                o += 1
                code = 1
    out[code_at] = code
    out[o] = 0
    return bytes(memoryview(out)[:o + 1])
body = proto.cobs_decode(frame[:-1])
assert cobs_byte_by_byte(body) == proto.cobs_encode(body, True)
r["frame_body_bytes"] = len(body)
t("cobs_us", lambda: proto.cobs_encode(body, True), 10)
t("cobs_peer_us", lambda: cobs_byte_by_byte(body), 10)
ack = proto.sealed_frame(proto.ack(1234), key, "s1", 5)
reader = proto.FrameReader()
def take_ack():
    [f] = reader.feed(ack)
    return proto.check_sealed(f, key, "s1", 4)
t("ack_in_us", take_ack, 10)
print("RESULT" + json.dumps(r))
'''


def section_boot(image, work, turns=600, events=50):
    s = EmulatedPico(os.path.join(work, "boot"), image)
    try:
        t0 = time.monotonic()
        s.ready()
        first_ms = s.ready_ms()
        wall_first = time.monotonic() - t0
        s.connect()
        status = s.command("status")
        diag = s.command("diag")
        s.rig.power_cut()
        s.ready(after_boots=2)
        again_ms = s.ready_ms()
        s.connect()
        diag2 = s.command("diag")
        out, _, _ = s.repl(STEP_COST.replace("LIVE_TURNS", str(turns)).replace("HELD_EVENTS", str(events)))
        r = last_json(out)
        out, _, _ = s.repl(FRAME_COST)
        r.update(last_json(out))
        files = s.rig.fs_files()
    finally:
        s.close()
    deployed = sorted(json.loads(files["manifest.json"]))  # what `tablectl flash` copies (and checks)
    held_full = r["low_live"] - int(r["held_bytes"] / float(r["held_events"]) * (r["outbox_limit"] + OUTBOX_RESERVE))
    rows = [
        ("runtime (status, from sys.implementation)", status["runtime"]),
        ("journal (status)", status.get("journal", "files (firmware before the raw log)")),
        ("firmware files deployed (littlefs built on the host, as `tablectl flash` copies them)", "%d (%d bytes)" % (
            len(deployed), sum(len(files[n]) for n in deployed if n in files))),
        ("everything on the filesystem after boot (with the raw log's reserve blocks, checkpoints, manifest)",
         "%d files (%d bytes)" % (len(files), sum(len(v) for v in files.values()))),
        ("boot to ready, fresh flash (emulated ms)", "%.0f" % first_ms),
        ("boot to ready, after a power cut (emulated ms)", "%.0f" % again_ms),
        ("power-up self-check: sha256 of every deployed file (emulated ms)", "%.0f" % (r["selfcheck_us"] / 1000.0)),
        ("gc.mem_free() after boot, controller running (diag; garbage not yet collected counts as used)",
         "%d / %d bytes (fresh / after power cut)" % (diag["mem_free"], diag2["mem_free"])),
        ("gc.mem_free() after the board, after the app (collected)", "%d / %d bytes" % (r["free_board"], r["free_app"])),
        ("live heap free (collected): first / lowest / last over %d main-loop turns, collected every 10"
         % r["live_turns"], "%d / %d / %d bytes" % (r["live_first"], r["low_live"], r["live_last"])),
        ("gc.mem_free() after 1 s of turns, before collecting (what read as a leak)", "%d bytes" % r["uncollected_after_loop"]),
        ("heap held per unacknowledged event (no host: %d events journaled)" % r["held_events"],
         "%.1f bytes" % (r["held_bytes"] / float(r["held_events"]))),
        ("live heap free with the outbox full (%d + %d events, projected from the line above)" % (
            r["outbox_limit"], OUTBOX_RESERVE), "%d bytes" % held_full),
        ("gc.mem_free() lowest between collections over 1 s (the GC runs when it nears 0)", "%d bytes" % r["low_free"]),
        ("main-loop turn, idle controller (app.step)", "%d us = %d cycles" % (r["step_us"], r["step_us"] * 125)),
        ("  of which coin-in, 7 seats (PIO poll + decoder)", "%d us" % r["coin_in_us"]),
        ("  of which keys and bet spots (74HC165 chain, debounce)", "%d us" % r["keys_spots_us"]),
        ("  of which outputs (595 chain, display render)", "%d us" % r["outputs_us"]),
        ("  of which link in + out (USB CDC)", "%d us" % r["link_us"]),
        ("an event sent: frame of a %d-byte coin event, signed (HMAC-SHA256, CRC, COBS)" % r["event_payload_bytes"],
         "%d us" % r["event_frame_us"]),
        ("  COBS of its %d-byte body: block by block (find + slice) / byte by byte (peer, same run)" % r["frame_body_bytes"],
         "%d / %d us" % (r["cobs_us"], r["cobs_peer_us"])),
        ("an acknowledgement taken: read, CRC, MAC and counter checked", "%d us" % r["ack_in_us"]),
        ("main-loop turns per second (step + machine.idle)", "%d" % r["turns_per_s"]),
        ("wall time to ready on this machine (s)", "%.0f" % wall_first),
    ]
    goal = "reached" if min(r["low_live"], held_full) >= 100 * 1024 else "NOT reached"
    body = ("MicroPython v%s (RPI_PICO build) on rp2040py; the firmware deployed as .mpy (mpy-cross for "
            "1.24) with hardware/pinmap_pico.json. %s.\n\n" % (UF2_VERSION, machine_note())
            + table(rows, ["measured on the emulated Pico", "value"])
            + "\n\nGoal: the controller leaves >= 100 KB free: %s (lowest live heap free %d bytes over %d turns of "
              "the idle controller with no host, %d bytes with a full outbox; %d turns are %.1f s of the Pico's "
              "time, not a 10-minute play period). The ~1 KB \"leak\" an earlier run of this harness reported was the "
              "harness: its first reading was taken before collecting the garbage of the 1 s loop before it. "
              "Emulated times assume flash as fast as RAM (no XIP cache misses), so a real Pico is as fast or "
              "slower.\n" % (goal, r["low_live"], r["live_turns"], held_full, r["live_turns"],
                              r["live_turns"] * r["step_us"] / 1e6))
    print(body)
    write_section("pico_boot", "Emulated Pico: boot, memory, main-loop cost", body)


# --- where the heap goes ----------------------------------------------------------------------------
# At the REPL of the service sequence every module main.py loaded is dropped (and the board it built),
# so each import below starts from a heap with none of the firmware in it: the figure is what the
# module's bytecode, names and objects hold, collected.
HEAPMAP = r"""
import gc, sys
import boards.hwboard
boards.hwboard._running = None
for k in list(sys.modules):
    del sys.modules[k]
# The board main.py built left its PIO programs loaded; the module that loaded them is gone, so
# the board built below loads them again: the state machines stopped, the instruction memory freed.
import rp2
for i in range(8):
    rp2.StateMachine(i).active(0)
rp2.PIO(0).remove_program()
rp2.PIO(1).remove_program()
r = []
def mark(label):
    gc.collect()
    r.append((label, gc.mem_free()))
mark("start")
for m in MODULES:
    __import__(m)
    mark(m)
import json
with open("/pinmap.json") as f:
    pm = json.load(f)
mark("the pin map, parsed (what the board used to keep)")
from boards.pico import PicoBoard
b = PicoBoard(pm)
del pm
mark("PicoBoard() built, the parsed pin map then dropped (net)")
from boards.selfcheck import manifest_checker
from table.app import TableApp
app = TableApp(b, b.now_ms(), manifest_checker("/"))
mark("TableApp() built (the journal replayed, state, outbox, link)")
for i in range(200):
    app.step(b.now_ms())
mark("after 200 main-loop turns")
# the modules only some boards load, measured at the end (they are not part of this controller)
for m in OTHERS:
    __import__(m)
    mark(m + " (not loaded by this board)")
print("RESULT" + repr(r))
"""
# What a board on the official pin map imports (the raw log), in the order main.py does.
HEAPMAP_MODULES = ["table.vocab", "table.protocol", "table.config", "table.meter", "table.journal_base",
                   "table.commands", "table.link", "table.debounce", "table.display", "table.pulse", "table.app",
                   "boards.contract", "drivers.chain", "drivers.nvfile", "drivers.seg7", "boards.hwboard",
                   "drivers.heldpin", "drivers.pio_pulse", "drivers.rawflash", "boards.pico", "boards.selfcheck",
                   "table.rawlog", "table.rawjournal", "drivers.max7219"]
# Loaded only by boards that use them: measured after the rest.
HEAPMAP_OTHERS = ["table.journal", "drivers.tm1637", "drivers.edges"]


def section_heapmap(image, work):
    s = EmulatedPico(os.path.join(work, "heapmap"), image)
    try:
        s.ready(without_host=True)
        code = HEAPMAP.replace("MODULES", repr(HEAPMAP_MODULES)).replace("OTHERS", repr(HEAPMAP_OTHERS))
        out, _, _ = s.repl(code)
        marks = ast.literal_eval(out.rsplit("RESULT", 1)[1].strip().splitlines()[0])
    finally:
        s.close()
    rows = []
    prev = marks[0][1]
    code_total = 0
    for label, free in marks[1:]:
        cost = prev - free
        prev = free
        if label in HEAPMAP_MODULES:
            code_total += cost
            label = "`%s`" % label
        rows.append((label, "%d" % cost, "%d" % free))
    by_label = dict(marks)
    body = ("MicroPython v%s (RPI_PICO build) on rp2040py, the firmware deployed as .mpy with the official pin map "
            "(the journal on the raw log); %s. At the REPL of the service sequence every module is dropped, then "
            "imported again one at a time: each row is what it holds of the heap once collected (bytecode, names, "
            "objects). Modules from the filesystem are copied into RAM: their bytecode is most of the controller's "
            "heap.\n\n" % (UF2_VERSION, machine_note())
            + table(rows, ["heap on the emulated Pico", "bytes taken", "gc.mem_free() after"])
            + "\n\nThe controller's modules: %d bytes of the %d free before them; free with the controller built "
              "and running: %d bytes.\n" % (code_total, marks[0][1], by_label["after 200 main-loop turns"]))
    print(body)
    write_section("pico_heapmap", "Emulated Pico: where the heap goes", body)


# --- coin decode through the PIO back end --------------------------------------------------------------
DECODE = r'''
import time, gc, json
from boards.pico import PicoBoard
from table.pulse import CoinDecoder, COIN, GLITCH, OUT_OF_SPEC, LOST
from table import config
b = PicoBoard()
b.led.value(1)  # tells the bench the state machines run: pulses may come
cfg = config.defaults()
n = %(seats)d
decs = [CoinDecoder(cfg["pulses_per_coin"], cfg["pulse_min_ms"], cfg["pulse_max_ms"], cfg["coin_gap_ms"],
                    cfg["jam_ms"]) for _ in range(n)]
coins = [0] * n
noise = [0] * n
other = [0] * n
pulses = []
out = []
b.nv.remove("decode_load.bin")
rec = b"r" * 48  # about a journal record: appended and flushed for every token, as the journal
# does it (board.nv.append: write, flush, then the board moves the PIO FIFOs' words into RAM)
# The file starts again at 64 KiB: on the official pin map the raw log's reserve leaves littlefs a
# few dozen free blocks, and 10,010 records (480 KB) filled them (ENOSPC after about 5,600 tokens).
load_bytes = 0
low = gc.mem_free()
turns = 0
most = 0  # most words found waiting in one seat's FIFO at a poll
most_ring = 0  # most words waiting for a poll: in the FIFO and the RAM ring
longest = 0  # longest time between two turns (ms): the CPU's longest stall as the FIFOs see it
lost_events = 0
last = b.now_ms()
while not b.service_switch():
    now = b.now_ms()
    if now - last > longest:
        longest = now - last
    last = now
    for s in range(n):
        del pulses[:]
        del out[:]
        src = b.pulse_sources[s]
        k = src.sm.rx_fifo()
        if k > most:
            most = k
        k += src._count
        if k > most_ring:
            most_ring = k
        src.poll(now, pulses)
        d = decs[s]
        for e, w in pulses:
            d.pulse(e, w, out)
        d.poll(now, src.held_ms(now), out)
        for o, det in out:
            if o == COIN:
                coins[s] += 1
                if load_bytes >= 65536:
                    b.nv.remove("decode_load.bin")
                    load_bytes = 0
                b.nv.append("decode_load.bin", rec)
                load_bytes += 48
            elif o == GLITCH or o == OUT_OF_SPEC:
                noise[s] += 1
            elif o == LOST:
                lost_events += 1
            else:
                other[s] += 1
    turns += 1
    low = min(low, gc.mem_free())
    time.sleep_ms(5)
b.nv.close("decode_load.bin")
print("RESULT" + json.dumps({"coins": coins, "noise": noise, "other": other, "turns": turns, "low_free": low,
                  "most_waiting": most, "most_ring": most_ring, "longest_ms": longest, "lost_events": lost_events,
                  "lost": [b.pulse_sources[s].edges_lost() for s in range(n)]}))
'''


def decode_edges(rng, seats, tokens_per_seat, start_ms=0):
    """Tokens with +-20 % widths and gaps, a glitch after every 5th token and a contact bounce (a
    1 ms blip 2 ms before the pulse) before every 7th, all seats at once."""
    edges = []
    for seat in range(seats):
        e, _ = coin_train(seat, tokens_per_seat, 1, 50, 50, 400, tokens_per_seat // 5, 0.2, rng, start_ms)
        for i, (s_, level, t) in enumerate(e):
            if level == 1 and i % 14 == 0 and t - 3 > start_ms:
                edges.append([s_, 1, t - 3])
                edges.append([s_, 0, t - 2])
        edges += e
    edges.sort(key=lambda x: x[2])
    return edges


def section_decode(image, work, tokens, fast_flash=False):
    seats = 7
    per_seat = max(1, tokens // seats)
    s = EmulatedPico(os.path.join(work, "decode"), image)
    rng = random.Random(14)
    t_section = time.monotonic()
    try:
        s.ready()
        rig = s.rig
        rig.fast_flash = fast_flash
        result = {}

        def run_harness():
            result["out"] = s.repl(DECODE % {"seats": seats}, timeout_s=6 * 3600)
        th = threading.Thread(target=run_harness, daemon=True)
        th.start()
        time.sleep(3)
        while rig.outputs()["mode"] != "repl":
            time.sleep(0.2)
        led = rig.pinmap["pins"][rig.pinmap["status_led"]]["gpio"]
        time.sleep(2)
        while not rig.call_sync(lambda: rig.mcu.gpio[led].output_value):
            time.sleep(0.2)  # the harness lights the LED once its state machines run
        flash0 = dict(rig.outputs()["flash"])
        edges0 = rig.edges_played
        chunk = 50  # tokens per seat per batch: edges are handed to the emulator as it plays them
        sent = 0
        t_wall = time.monotonic()
        while sent < per_seat:
            n = min(chunk, per_seat - sent)
            edges = decode_edges(rng, seats, n)
            rig.feed_edges(edges)
            sent += n
            while rig.outputs()["pending_edges"]:
                time.sleep(0.5)
            print("  %d tokens a seat played (%.0f s)" % (sent, time.monotonic() - t_wall), flush=True)
        s.bench.settle(1500)
        rig.set_inputs(switch=True)
        th.join(3600)
        out_text, emu_ms, cycles = result["out"]
        flash1 = rig.outputs()["flash"]
        edges = rig.edges_played - edges0
        r = last_json(out_text)
    finally:
        s.close()
    total = per_seat * seats
    miscounts = sum(abs(c - per_seat) for c in r["coins"])
    tokens_s = total / (emu_ms / 1000.0)
    rows = [("tokens sent (all seats at once)", "%d (%d a seat)" % (total, per_seat)),
            ("tokens counted", "%d %s" % (sum(r["coins"]), r["coins"])),
            ("miscounts", miscounts),
            ("glitches and bounces rejected", sum(r["noise"])),
            ("pulses lost (PIO RX FIFO overflow; each reported as LOST, never guessed)", sum(r["lost"])),
            ("LOST outcomes from the decoder", r["lost_events"]),
            ("most words in one seat's RX FIFO at a poll (of 8; drained after every write too)", r["most_waiting"]),
            ("most words waiting for one poll, FIFO and RAM ring (of 8 + 64)", r["most_ring"]),
            ("longest time between two polls of the FIFOs (ms)", r["longest_ms"]),
            ("sector erases during the run (CPU stopped 45 ms each)", flash1["sector_erases"] - flash0["sector_erases"]),
            ("emulated run time", "%.1f s (%.1f tokens/s)" % (emu_ms / 1000.0, tokens_s)),
            ("busy cycles per token (emulator cycle counter)", "%.0f" % (cycles / total)),
            ("busy cycles per coin edge on the acceptor pins (%d edges, glitches and bounces included)" % edges,
             "%.0f" % (cycles / max(1, edges))),
            ("CPU share of the decode loop at this rate", "%.1f %%" % (100.0 * cycles / (emu_ms * 125000.0))),
            ("  of which polling the flash's busy bit (erase/program in progress)",
             "%.1f %%" % (100.0 * (flash1["busy_cycles"] - flash0["busy_cycles"]) / max(1, cycles))),
            ("flash busy time skipped (--fast-flash: clock moved on, not emulated)", "%.1f s" % (
                (flash1["busy_skipped_ns"] - flash0["busy_skipped_ns"]) / 1e9)),
            ("wall time of the run on this machine (boot included)", "%.0f s (%.0f wall s per emulated s)" % (
                time.monotonic() - t_section, (time.monotonic() - t_section) / (emu_ms / 1000.0))),
            ("gc.mem_free() lowest", r["low_free"])]
    verdict = "reached" if miscounts == 0 and total >= 10000 else "NOT reached (%d tokens, %d miscounts)" % (total, miscounts)
    body = ("The PIO back end (drivers/pio_pulse.py) and the real CoinDecoder, run at the emulated board's REPL "
            "(service sequence) with the deployed firmware; widths 50 ms and gaps +-20 %, a 2 ms glitch after every "
            "5th token, a 1 ms contact bounce before every 7th pulse; a 48-byte record appended and flushed to "
            "littlefs for every token through the board's nv.append, as the journal writes (after each write the "
            "board moves the words waiting in the PIO FIFOs into RAM rings), so the flash writes stop the CPU "
            "while pulses arrive.\n\n"
            + table(rows, ["PIO coin decode on the emulated Pico", "value"])
            + "\n\nTarget 0 miscounts over >= 10,000 tokens: %s.\n" % verdict)
    print(body)
    write_section("pico_decode", "Emulated Pico: coin decode through PIO, through flash writes", body)


# --- flash wear of the real controller ----------------------------------------------------------------
def files_only_pinmap(work):
    """The official pin map without its raw log: the journal on littlefs files (what a board ran
    before the raw log, and what the wear section measures)."""
    with open(PINMAP) as f:
        pinmap = json.load(f)
    pinmap.pop("raw_log_sectors", None)
    path = os.path.join(work, "pinmap_files.json")
    with open(path, "w") as f:
        json.dump(pinmap, f)
    return path


def section_wear(image, work, rounds):
    s = EmulatedPico(os.path.join(work, "wear"), image, pinmap_path=files_only_pinmap(work))
    try:
        s.ready()
        s.connect()
        seats = s.command("status")["seats"]
        m0 = s.command("meters")
        f0 = dict(s.rig.outputs()["flash"])
        e0 = s.rig.now_ms()
        for r in range(rounds):
            s.bench.coins({seat: 1 for seat in range(seats)}, width_ms=50, coin_gap_ms=400)
            s.bench.key("lock")
            s.bench.key("unlock")
            print("  round %d done" % (r + 1), flush=True)
        m1 = s.command("meters")
        f1 = s.rig.outputs()["flash"]
        e1 = s.rig.now_ms()
        files = s.rig.fs_files()
    finally:
        s.close()
    tokens = sum(m1["seat_coins"]) - sum(m0["seat_coins"])
    prog = f1["program_bytes"] - f0["program_bytes"]
    erases = (f1["sector_erases"] - f0["sector_erases"]) + 16 * (f1["block_erases"] - f0["block_erases"])
    used = sum(len(v) for v in files.values())
    free_sectors = SECTORS - (used + 4095) // 4096 - 4  # the files' own blocks and littlefs' metadata pairs
    per_token_erase = erases / float(tokens)
    years = free_sectors * ERASE_CYCLES / (per_token_erase * MAX_TOKENS_PER_S * SECONDS_PER_YEAR) if erases else float("inf")
    # erases per token that would reach the target, and the program bytes that go with it
    need_erase = free_sectors * ERASE_CYCLES / (TARGET_YEARS * MAX_TOKENS_PER_S * SECONDS_PER_YEAR)
    rows = [("tokens credited (7 seats, a round each, lock and unlock between)", tokens),
            ("bytes programmed to flash per token (256-byte pages)", "%.0f" % (prog / float(tokens))),
            ("4 KiB sector erases per token", "%.2f" % per_token_erase),
            ("sectors littlefs can wear-level over", free_sectors),
            ("flash life at the maximum rate (14 tokens/s, every second of the year)", "%.1f years" % years),
            ("erases per token that would give %d years" % TARGET_YEARS, "%.3f" % need_erase),
            ("emulated time", "%.1f s" % ((e1 - e0) / 1000.0))]
    verdict = "reached" if years >= TARGET_YEARS else "NOT reached"
    body = ("The real controller (journal, checkpoints, littlefs of MicroPython %s) on the emulated Pico; flash "
            "programs and erases counted at the QSPI commands. No host is connected (nothing is acknowledged, so "
            "no acknowledgement checkpoints are written). Life = sectors x 100,000 erase cycles / erases per year "
            "at 14 tokens/s.\n\n" % UF2_VERSION
            + table(rows, ["flash wear on the emulated Pico", "value"])
            + "\n\nTarget >= %d years at the maximum rate: %s (%.1f years).\n" % (TARGET_YEARS, verdict, years))
    print(body)
    write_section("pico_wear", "Emulated Pico: flash wear on real littlefs", body)


# --- the controller's journal on the raw flash log ------------------------------------------------------
RAWWEAR_SCAN = r"""
import os, json, rp2, gc
from drivers.rawflash import open_reserve, ReserveFlash
from table import rawlog as L
dev = open_reserve(os, json, rp2.Flash())
F_SPOT = 6  # table/rawjournal.py (not imported: the REPL's heap is short with the controller's state in it)
counts = {}
full = {}
def visit(kind, body, q, n, s):
    c = counts.setdefault(str(kind), [0, 0, 0])
    c[0] += 1
    c[1] += (len(body) + 4) // 16
    c[2] += L.numbers_taken(body[0])
    k = None
    if kind == L.K_FULL:
        k = json.loads(L.full_payload(body)).get("k")
        full[k] = full.get(k, 0) + 1
    elif (kind == L.K_DERIVED and body[0] & 0x0F == F_SPOT) or (kind == L.K_GROUP and body[5] == F_SPOT):
        k = "spot"  # (the app groups a turn's spot changes alone: a GROUP that starts with one holds only them)
    # One line a record, printed as the scan goes: a list of them all, dumped as one JSON string at
    # the end, ran the REPL's heap out (the controller's state is loaded beside it).
    print("ORD %d %d %s" % (body[0], (len(body) + 4) // 16, k or "-"))
log = L.RawLog(dev)
status = log.scan(0, 0, 1, visit)  # the whole log: this run does not wrap it
gc.collect()
print("RESULT" + json.dumps({"device": isinstance(dev, ReserveFlash), "status": status, "corrupt": log.corrupt,
                              "kinds": counts, "full": full, "head": [log.head_n, log.head_slot], "next_seq": log.next_seq,
                              "slots_per_sector": dev.slots, "blocks": dev.blocks}))
"""
LOG_SECTORS_PLANNED = 248  # 992 KiB of the Pico's 1,408 KiB littlefs (docs/FIRMWARE.md)


def section_rawwear(image, work, rounds, reserve=8):
    """Wear of the real controller with its journal on the raw log, in the emulated Pico: the reserve
    provisioned at the REPL, the controller booted on it, rounds of seven tokens with lock and unlock."""
    # The pin map asks for the raw log: the board makes its reserve at its first boot (boards/pico.py).
    with open(PINMAP) as f:
        pinmap = json.load(f)
    pinmap["raw_log_sectors"] = reserve
    pinmap_path = os.path.join(work, "pinmap_rawlog.json")
    with open(pinmap_path, "w") as f:
        json.dump(pinmap, f)
    # The board makes its reserve itself (drivers/rawflash.py provision), not the host's image.
    s = EmulatedPico(os.path.join(work, "rawwear"), image, pinmap_path=pinmap_path, host_provisions=False)
    try:
        s.ready()
        rig = s.rig
        s.connect()
        status = s.command("status")
        seats = status["seats"]
        m0 = s.command("meters")
        f0 = dict(rig.outputs()["flash"])
        e0 = rig.now_ms()
        missed = []  # (round, key) of each press the board did not act on

        def press(name, r, locked):
            # The key's effect, read back as the board's state (status: the inhibit pins would
            # not do, a host-silent fault inhibits every seat too). A press the board missed is
            # pressed again (and reported): the round's records are then a round's, not a
            # missed round's.
            for _attempt in range(3):
                s.bench.key(name)
                s.bench.settle(200)
                if (s.command("status")["base"] == "LOCKED") == locked:
                    return
                missed.append((r + 1, name))
            raise RuntimeError("the board did not act on the %s key in round %d" % (name, r + 1))
        # The bet spots of a round: every ante down before the tokens, every bet down after the
        # lock (the deal), all of them cleared at the settlement: 4 changes a seat a round.
        antes = sum(1 << (seat * 3) for seat in range(seats))
        bets = sum(1 << (seat * 3 + 1) for seat in range(seats))
        for r in range(rounds):
            s.bench.request("spots", value=antes)
            s.bench.coins({seat: 1 for seat in range(seats)}, width_ms=50, coin_gap_ms=400)
            press("lock", r, True)
            s.bench.request("spots", value=antes | bets)
            s.bench.settle(100)
            s.bench.request("spots", value=0)
            s.bench.settle(100)
            press("unlock", r, False)
            print("  round %d done" % (r + 1), flush=True)
        m1 = s.command("meters")
        status1 = s.command("status")
        diag1 = s.command("diag")
        mem_free = diag1["mem_free"]
        f1 = rig.outputs()["flash"]
        e1 = rig.now_ms()
        scan_out = s.repl(RAWWEAR_SCAN)[0]
        scan = last_json(scan_out)
        scan["order"] = []
        for line in scan_out.splitlines():
            if line.startswith("ORD "):
                _tag, first, slots, k = line.split()
                scan["order"].append([int(first), int(slots), None if k == "-" else k])
        print("  %s" % json.dumps({"scan": scan, "status": status1}), flush=True)
    finally:
        s.close()
    tokens = sum(m1["seat_coins"]) - sum(m0["seat_coins"])
    prog = f1["program_bytes"] - f0["program_bytes"]
    pages = f1["page_programs"] - f0["page_programs"]
    erases = (f1["sector_erases"] - f0["sector_erases"]) + 16 * (f1["block_erases"] - f0["block_erases"])
    kinds = scan["kinds"]
    name = {"16": "COIN", "32": "FULL", "48": "ACK", "64": "SKIP", "96": "JUMP", "112": "DERIVED", "128": "GROUP"}
    per_sector = scan["slots_per_sector"] - 1  # the header slot
    coin_records, coin_slots = kinds.get("16", [0, 0, 0])[:2]
    all_slots = sum(v[1] for v in kinds.values())
    # Every slot of the log is erased once a lap: erases per token = slots per token / slots a sector.
    slots_per_token_all = all_slots / float(coin_records) if coin_records else float("nan")
    ack_slots = kinds.get("48", [0, 0, 0])[1]
    slots_per_token_coins = (coin_slots + ack_slots) / float(coin_records) if coin_records else float("nan")
    # The rounds' own records: all but the boot's (its FULL event and the snapshot right after it),
    # which a long life has once a boot, not once a round.
    round_slots, round_events, after_boot = 0, 0, False
    spot_slots, spot_events = 0, 0
    for first, slots, k in scan["order"]:
        if k == "boot":
            after_boot = True
            continue
        if after_boot and first == 0x73:
            after_boot = False
            continue
        after_boot = False
        if k == "spot":
            # Spot reports spend the wear budget (at most one a second sustained): counted apart.
            spot_slots += slots
            spot_events += first & 0x0F if first & 0xF0 == 0x80 else 1
            continue
        round_slots += slots
        round_events += 0 if first & 0xF0 in (0x30, 0x40, 0x60) else (first & 0x0F if first & 0xF0 == 0x80 else 1)
    slots_per_token_rounds = round_slots / float(coin_records) if coin_records else float("nan")
    # A host acknowledges every event: an ACK record every ACK_RECORD_EVENTS of them (this run has none).
    slots_per_token_acked = slots_per_token_rounds + round_events / float(ACK_RECORD_EVENTS) / coin_records

    def years(spt, sectors=LOG_SECTORS_PLANNED, budget_slots_per_s=0.0):
        return sectors * ERASE_CYCLES * per_sector / ((spt * MAX_TOKENS_PER_S + budget_slots_per_s) * SECONDS_PER_YEAR)

    budget_per_s = 1000.0 / WEAR_REFILL_MS  # the wear budget's refill: every outside-repeatable event together

    rows = [("log sectors reserved for this run (single-block littlefs files, found by tag at the first boot)", "%d: blocks %s" % (reserve, scan["blocks"])),
            ("tokens credited (7 seats, a round each, lock and unlock between)", tokens),
            ("coin records in the log / their slots", "%d / %d (16 bytes each)" % (coin_records, coin_slots)),
            ("records of each kind in the log: records / slots / events", ", ".join(
                "%s %d / %d / %d" % (name.get(k, k), v[0], v[1], v[2]) for k, v in sorted(kinds.items()))),
            ("FULL records by event kind", ", ".join("%s %d" % kv for kv in sorted(scan["full"].items()))),
            ("log slots per token: coin records and acknowledgements only", "%.3f" % slots_per_token_coins),
            ("log slots per token: everything the run wrote (keys, lock, unlock, snapshots, spots, the boot's events)", "%.2f" % slots_per_token_all),
            ("log slots per token: the rounds' own records (the boot's two and the spot reports left out)", "%.3f" % slots_per_token_rounds),
            ("  with an ACK record every %d acknowledged events (a host on the line)" % ACK_RECORD_EVENTS, "%.3f" % slots_per_token_acked),
            ("bytes programmed per token over QSPI (256-byte pages; littlefs' own writes included)", "%.0f (%d page programs)" % (prog / float(tokens), pages)),
            ("4 KiB sector erases during the run (QSPI)", "%d (the reserve's first lap needs none: erased at provisioning)" % erases),
            ("flash life at 14 tokens/s, a log of %d sectors (%d slots a sector): coin records + acks" % (LOG_SECTORS_PLANNED, per_sector),
             "%.1f years" % years(slots_per_token_coins)),
            ("  the same with the rounds' own records and ACKs, a round per 7 tokens", "%.1f years" % years(slots_per_token_acked)),
            ("bet-spot changes reported / their slots (28 changes a round: antes, bets, cleared; three to a GROUP)",
             "%d / %d (%.2f slots a round); spots the host last heard: %s" % (
                 spot_events, spot_slots, spot_slots / float(rounds), "all clear" if diag1.get("spots_reported") == 0 else diag1.get("spots_reported"))),
            ("  the same with the wear budget spent without end (one slot a second: spots, line noise, jams, refused tokens)",
             "%.1f years" % years(slots_per_token_acked, budget_slots_per_s=budget_per_s)),
            ("  the same counting everything this run wrote per token, boot and every spot report included (spots at "
             "the bench's pace: a round per 7 tokens at 14 tokens/s would need 56 spot changes a second, which the "
             "budget holds to one)", "%.1f years" % years(slots_per_token_all)),
            ("dealer key presses (80 ms) the board did not act on, pressed again", "%d%s" % (
                len(missed), (": " + ", ".join("round %d %s" % m for m in missed)) if missed else "")),
            ("log scanned back from its first sector", "%s, %s" % (scan["status"], scan["corrupt"])),
            ("storage fault after the run", "storage" in status1.get("faults", [])),
            ("gc.mem_free() of the controller running on the raw log, after the rounds (diag)", mem_free),
            ("emulated time", "%.1f s" % ((e1 - e0) / 1000.0))]
    target = years(slots_per_token_acked, budget_slots_per_s=budget_per_s)
    body = ("The real controller with its journal on the raw flash log (table/rawjournal.py on table/rawlog.py, the "
            "reserve of drivers/rawflash.py), MicroPython %s on the emulated Pico; programs and erases counted at "
            "the QSPI commands. Coin events are 16-byte records; the events the state before them rebuilds (key, "
            "lock, unlock, meters snapshot) too, and those of one key press share one (a GROUP: key + lock, key + "
            "unlock + the closing snapshot); the others are written whole as JSON (several 16-byte slots). Life = "
            "log sectors x 100,000 erase cycles x slots a sector / (slots per token x 14 tokens/s x a "
            "year).\n\n" % UF2_VERSION
            + table(rows, ["the journal on the raw log, emulated Pico", "value"])
            + "\n\nTarget >= %d years at the maximum rate (14 tokens/s), counting a round's own events and "
              "acknowledgements at one round per 7 tokens (the only way 14 tokens/s happens with one token per "
              "seat per round) and the wear budget spent without end (%.0f slot a second: bet spots, line noise, "
              "jams, tokens refused during a fault, refused commands): %s (%.1f years). Coin records and "
              "acknowledgements alone: %.1f years.\n" % (
                  TARGET_YEARS, budget_per_s, "reached" if target >= TARGET_YEARS else "NOT reached", target,
                  years(slots_per_token_coins)))
    print(body)
    write_section("pico_rawwear", "Emulated Pico: flash wear of the journal on the raw log", body)


# --- where the emulator's wall time goes ------------------------------------------------------------------
SPEED_PHASES = [
    ("time.sleep_ms(1000)", "import time\ntime.sleep_ms(1000)\n"),
    ("machine.idle() for 1 s", "import machine, time\nt = time.ticks_ms()\n"
     "while time.ticks_diff(time.ticks_ms(), t) < 1000:\n    machine.idle()\n"),
    ("busy loop for 1 s", "import time\nt = time.ticks_ms()\nwhile time.ticks_diff(time.ticks_ms(), t) < 1000:\n    pass\n"),
    ("20 littlefs appends, each flushed (an erase each)",
     "f = open('/data/speed.bin', 'ab')\nfor i in range(20):\n    f.write(b'r' * 48)\n    f.flush()\nf.close()\n"),
]


def section_speed(image, work):
    """Emulated cycles and wall seconds per emulated second for a sleeping, an idling and a busy
    MicroPython, and for flash writes with and without --fast-flash: what the decode campaign's
    wall time is made of."""
    s = EmulatedPico(os.path.join(work, "speed"), image)
    rows = []
    try:
        s.ready()
        rig = s.rig
        s.repl("import gc\ngc.collect()\n")
        for fast in (False, True):
            for label, code in SPEED_PHASES:
                if fast and "littlefs" not in label:
                    continue
                rig.fast_flash = fast
                f0 = dict(rig.outputs()["flash"])
                w0 = time.monotonic()
                _, emu_ms, cycles = s.repl(code)
                wall = time.monotonic() - w0
                f1 = rig.outputs()["flash"]
                rows.append((label + (" (--fast-flash)" if fast else ""), "%.0f" % emu_ms,
                             "%.0f M" % (cycles / 1e6), "%.0f M" % ((f1["busy_cycles"] - f0["busy_cycles"]) / 1e6),
                             "%.0f" % ((f1["busy_skipped_ns"] - f0["busy_skipped_ns"]) / 1e6),
                             "%.1f" % wall, "%.1f" % (wall / (emu_ms / 1000.0))))
        rig.fast_flash = False
    finally:
        s.close()
    body = ("MicroPython %s at the emulated Pico's REPL (service sequence, the firmware deployed), %s. Cycles from the "
            "emulator's cycle counter (125 MHz: 125 M cycles are one emulated second of a core that never sleeps); "
            "'polling' = cycles spent reading the flash's busy bit during erases and programs; 'skipped' = emulated "
            "time --fast-flash moved the clock over instead.\n\n" % (UF2_VERSION, machine_note())
            + table(rows, ["phase", "emulated ms", "cycles", "polling", "skipped ms", "wall s", "wall s per emulated s"])
            + "\n")
    print(body)
    write_section("pico_speed", "Emulated Pico: where the wall time goes", body)


# --- the emulator's own build: PyPI's stable-ABI wheel against `make pico-emulator`'s full-API one -----
EMU_BUSY = dict(SPEED_PHASES)["busy loop for 1 s"]


def emu_probe(image, work, main_loop_wall_s=20.0):
    """In a child process (`bench_pico.py _emuprobe`): CPU seconds of this process per emulated
    second, for the controller's own main loop (booted, no host) and for a 1 s busy loop at the
    REPL; with the PIO batched, each with the rig's batch-loop list and without it, alternating."""
    s = EmulatedPico(os.path.join(work, "emu"), image)
    rig = s.rig
    sim = rig.device.simulator
    wrapper = sim.__dict__.get("_execute_batch")
    variants = [("rig's loop list", True), ("rp2040py's loop", False)] if wrapper else [("as built", True)]

    def use(on):
        if wrapper is None:
            return
        if on:
            rig.call_sync(lambda: setattr(sim, "_execute_batch", wrapper))
        else:
            rig.call_sync(lambda: sim.__dict__.pop("_execute_batch", None))

    out = {"pio_step_us": rig.pio_step_ns // 1000, "main_loop": {}, "busy": {}}
    try:
        s.ready(without_host=True)
        for _ in range(2):
            for label, on in variants:
                use(on)
                n0, c0, w0 = rig.call_sync(lambda: rig.clock.nanos), time.process_time(), time.monotonic()
                time.sleep(main_loop_wall_s / 2)
                n1, c1 = rig.call_sync(lambda: rig.clock.nanos), time.process_time()
                out["main_loop"].setdefault(label, []).append((c1 - c0) / ((n1 - n0) / 1e9))
        s.repl("import gc\ngc.collect()\n")
        for _ in range(2):
            for label, on in variants:
                use(on)
                c0 = time.process_time()
                _, emu_ms, _ = s.repl(EMU_BUSY)
                out["busy"].setdefault(label, []).append((time.process_time() - c0) / (emu_ms / 1000.0))
        use(True)
    finally:
        s.close()
    return out


def section_emulator(image, work):
    """The same probe in child processes: rp2040py as installed (after `make pico-emulator`, the
    full-API build) and PyPI's wheel of the same version (stable ABI), put first on the path."""
    import importlib.metadata
    import subprocess
    from statistics import median
    from tabledev.rp2040py_build import installed_build
    version = importlib.metadata.version("rp2040py")
    wheel_dir = os.path.join(ROOT, "build", "rp2040py-%s-wheel" % version)
    if not os.path.isdir(os.path.join(wheel_dir, "rp2040py")):
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--only-binary", ":all:",
                        "--target", wheel_dir, "rp2040py==%s" % version], check=True)
    host_tools = os.path.join(ROOT, "host_tools") + os.pathsep + os.path.join(ROOT, "lab")
    builds = [("installed (%s)" % installed_build(), host_tools), ("PyPI wheel", wheel_dir + os.pathsep + host_tools)]
    results = {}
    for rnd in range(2):  # each build twice, alternating: the machine's load changes under a run
        for label, path in builds:
            env = dict(os.environ, PYTHONPATH=path)
            probe = subprocess.run([sys.executable, os.path.abspath(__file__), "_emuprobe"], env=env,
                                   stdout=subprocess.PIPE, text=True, cwd=ROOT)
            if probe.returncode != 0:
                raise RuntimeError("the emulator probe failed (%s):\n%s" % (label, probe.stdout[-2000:]))
            got = last_json(probe.stdout)
            print("  %s, round %d: %s" % (label, rnd + 1, json.dumps(got)), flush=True)
            results.setdefault(label, []).append(got)

    rows = []
    per = {}
    for label, runs in results.items():
        for what in ("main_loop", "busy"):
            for variant in runs[0][what]:
                v = median([x for r in runs for x in r[what][variant]])
                per[(label, what, variant)] = v
                rows.append((label, {"main_loop": "the controller's main loop (no host)",
                                     "busy": "1 s busy loop at the REPL"}[what], variant, "%.1f" % v))
    step = results[builds[0][0]][0]["pio_step_us"]
    first = [k for k in per if k[0] == builds[0][0]]
    ratios = []
    for (label, what, variant) in first:
        other = per.get((builds[1][0], what, variant))
        if other:
            ratios.append("%s, %s: %.1fx" % (what.replace("_", " "), variant, other / per[(label, what, variant)]))
    body = ("rp2040py %s, MicroPython %s on the emulated Pico (the firmware deployed, its pin map), %s; "
            "TABLE_PICO_PIO_STEP_US=%s. CPU seconds of the emulator's process for every emulated second "
            "(process time, not wall time: the figure the machine's load moves least), median of each "
            "build's two child processes, run alternately, two readings each. 'rig's loop list' / "
            "'rp2040py's loop': with the PIO batched, the rig keeps stopped blocks out of the list "
            "rp2040py's batch loop walks after every instruction, or leaves the loop as it is. The "
            "full-API build comes from `make pico-emulator` (lab/tabledev/rp2040py_build.py): the "
            "same version's source from PyPI, built without the stable ABI.\n\n"
            % (version, UF2_VERSION, machine_note(), step or "unset")
            + table(rows, ["rp2040py build", "what runs", "PIO loop", "CPU s per emulated s"])
            + "\n\nThe wheel against the installed build, same run: " + "; ".join(ratios) + ".\n")
    print(body)
    write_section("pico_emulator", "Emulated Pico: the emulator's build", body)

# --- the host's turn: how long the pty relay and the bench wait for the emulator's thread ---------------
def _hostturn_board(work, image, name, interval_us):
    """`tablectl sim --board pico` in a process of its own (as a technician runs it), its GIL switch
    interval set by TABLE_PICO_GIL_SWITCH_US; returns (process, log, port, bench)."""
    from tabledev import procs
    state = os.path.join(work, name)
    env_before = os.environ.get("TABLE_PICO_GIL_SWITCH_US")
    os.environ["TABLE_PICO_GIL_SWITCH_US"] = str(interval_us)
    try:
        proc, log = procs.start(["sim", "--board", "pico", "--state", state, "--image", image],
                                os.path.join(work, name + ".log"))
    finally:
        if env_before is None:
            os.environ.pop("TABLE_PICO_GIL_SWITCH_US", None)
        else:
            os.environ["TABLE_PICO_GIL_SWITCH_US"] = env_before
    line = proc.stdout.readline()
    if not line.startswith("port "):
        procs.stop(proc)
        raise RuntimeError("tablectl sim --board pico did not start: %r" % line)
    return proc, log, line.split()[1], Bench(state, timeout_s=600)


def section_hostturn(image, work, rounds=2):
    """For CPython's default GIL switch interval and the rig's, alternately, a fresh `tablectl sim
    --board pico` process each time, the board put at its REPL by the service sequence: the bench's
    control-socket round trip (a request the emulator's thread answers), emulated ms per wall second
    meanwhile, an mpremote `exec` and an mpremote `fs cp` of the Pico's pin map (5 KB) on its pty."""
    import subprocess
    from statistics import median
    from tabledev import procs
    from tabledev.pico_sim import GIL_SWITCH_INTERVAL_S
    src = os.path.join(ROOT, "hardware", "pinmap_pico.json")
    settings = (("CPython's default, 5 ms", 5000), ("the rig's, %g ms" % (GIL_SWITCH_INTERVAL_S * 1e3),
                                                    int(GIL_SWITCH_INTERVAL_S * 1e6)))
    got = {}
    for rnd in range(rounds):
        for label, interval_us in settings:
            proc, log, port, bench = _hostturn_board(work, image, "hostturn-%d-%d" % (rnd, interval_us), interval_us)
            row = got.setdefault(label, {"request": [], "emu": [], "exec": [], "cp": []})
            try:
                bench.service_boot()
                first = bench.request("outputs")
                w0 = time.monotonic()
                for _ in range(20):
                    t0 = time.monotonic()
                    last = bench.request("outputs")
                    row["request"].append(time.monotonic() - t0)
                    time.sleep(0.05)
                row["emu"].append((last["outputs"]["now_ms"] - first["outputs"]["now_ms"]) / (time.monotonic() - w0))
                mpremote = [sys.executable, "-m", "mpremote", "connect", port]
                for what, args in (("exec", ["exec", "print(6*7)"]), ("cp", ["fs", "cp", src, ":hostturn.json"])):
                    t0 = time.monotonic()
                    run = subprocess.run(mpremote + args, capture_output=True, text=True, timeout=1800)
                    if run.returncode != 0:
                        raise RuntimeError("mpremote %s failed: %s" % (what, run.stdout + run.stderr))
                    row[what].append(time.monotonic() - t0)
            finally:
                bench.close()
                procs.stop(proc, timeout_s=20)
                log.close()
            print("  round %d, %s: request %.0f ms, exec %.1f s, cp %.1f s" % (
                rnd + 1, label, median(row["request"][-20:]) * 1e3, row["exec"][-1], row["cp"][-1]), flush=True)
    rows = []
    for label, row in got.items():
        req = sorted(row["request"])
        rows.append((label, "%.0f" % (median(req) * 1e3), "%.0f" % (req[-1] * 1e3), "%.0f" % median(row["emu"]),
                     "%.1f" % median(row["exec"]), "%.1f" % median(row["cp"]),
                     " / ".join("%.1f" % v for v in row["cp"])))
    labels = [label for label, _ in settings]
    ratio = lambda what: median(got[labels[0]][what]) / median(got[labels[1]][what])
    body = ("MicroPython %s on the emulated Pico, `tablectl sim --board pico` in a process of its own as a "
            "technician runs it, the board at its REPL by the service sequence; %s. The emulator's thread runs "
            "instruction batches of 5 ms of wall time and lets go of the GIL only between them, for a moment; "
            "the pty relay and the bench's control socket are other threads of that process. Per GIL switch "
            "interval (TABLE_PICO_GIL_SWITCH_US; the rig sets GIL_SWITCH_INTERVAL_S in "
            "lab/tabledev/pico_sim/tuning.py), %d rounds alternately, a fresh process each: 20 bench requests "
            "(`outputs`, answered on the emulator's thread), emulated ms per wall second meanwhile, then the wall "
            "time of `mpremote exec` and of `mpremote fs cp` of hardware/pinmap_pico.json (5 KB) on the pty; "
            "medians.\n\n" % (UF2_VERSION, machine_note(), rounds)
            + table(rows, ["GIL switch interval", "bench request: median ms", "slowest ms", "emulated ms per wall s",
                           "mpremote exec s", "mpremote fs cp s", "fs cp, each round"])
            + "\n\nCPython's default against the rig's, same run: bench request %.0fx, exec %.0fx, fs cp %.0fx.\n"
            % (ratio("request"), ratio("exec"), ratio("cp")))
    print(body)
    write_section("pico_hostturn", "Emulated Pico: the host's turn", body)


# --- the raw flash log the journal needs (a measured design, not yet the journal) ------------------------
# Runs at the deployed board's REPL, on MicroPython's own rp2.Flash block device. Phase 1 reserves
# the log's sectors inside littlefs as single-block files (a file of exactly one 4 KiB block has no
# CTZ pointers in its data, so littlefs neither reads nor moves that block while the file is never
# written through it) and finds each one's block by a tag; phases 2 and 3 append coin records of
# 32 and 16 bytes into them in place and read every record back; phase 4 has littlefs allocate
# 64 KiB more and checks the log survives it.
# The measured log lives in /data/benchlog: /data/rawlog is the controller's own journal on the
# official pin map, and writing there would hand the next boot a journal it rightly refuses (FAULT).
RAWLOG_RESERVE = r"""
import rp2, os, gc, json, time, struct, binascii
SECT = 4096
PAGE = 256
dev = rp2.Flash()
NBLK = dev.ioctl(4, 0)
for d in ("/data", "/data/benchlog"):
    try:
        os.mkdir(d)
    except OSError:
        pass
K = %(reserve)d
TAG = b"RAWLOG-RESERVE-"
for i in range(K):
    body = bytearray(b"\xff" * SECT)
    body[:20] = TAG + b"%%05d" %% i
    with open("/data/benchlog/r%%03d" %% i, "wb") as f:
        f.write(body)
body = None
gc.collect()
head = bytearray(20)
blocks = [None] * K
for blk in range(NBLK):
    dev.readblocks(blk, head, 0)
    if head[:15] == TAG:
        blocks[int(head[15:20])] = blk
with open("/data/benchlog/map.json", "w") as f:
    json.dump(blocks, f)
page = bytearray(b"\xff" * PAGE)

def encode(slot, seq, seat, ms, rnd, meter, tokens):
    # kind, seq, seat, board ms, round | meter after (40 bits) and the seat's tokens after (24 bits)
    if slot >= 32:
        body = struct.pack("<BIBIIQ", 0xC1, seq, seat, ms, rnd, meter | (tokens << 40))
    else:
        body = struct.pack("<BIBIH", 0xC1, seq, seat, ms, rnd)  # 16 bytes: no room for a check value
    body = body + b"\xff" * (slot - 4 - len(body))
    return body + struct.pack("<I", binascii.crc32(body) & 0xFFFFFFFF)

def run(slot, n):
    erased = 0
    t_prog = t_erase = t_enc = 0
    meter = 1000000
    for seq in range(1, n + 1):
        pos = (seq - 1) * slot
        blk = blocks[(pos // SECT) %% K]
        off = pos %% SECT
        if off == 0:  # the log reaches a sector: erase it (the only erase the log ever makes)
            t = time.ticks_us()
            dev.ioctl(6, blk)
            t_erase += time.ticks_diff(time.ticks_us(), t)
            erased += 1
        t = time.ticks_us()
        meter += 100
        poff = off %% PAGE
        page[poff:poff + slot] = encode(slot, seq, seq %% 7, seq * 500, seq // 7, meter, seq // 7)
        t_enc += time.ticks_diff(time.ticks_us(), t)
        t = time.ticks_us()
        # rp2.Flash programs whole 256-byte pages from the buffer: the record in a page of 0xFF
        # (programming 0xFF leaves a NOR cell as it is), never a 32-byte buffer (see FIRMWARE.md)
        dev.writeblocks(blk, page, off - poff)
        t_prog += time.ticks_diff(time.ticks_us(), t)
        page[poff:poff + slot] = b"\xff" * slot
    return {"tokens": n, "erases": erased, "prog_us": t_prog // n, "erase_us": t_erase // max(erased, 1),
            "encode_us": t_enc // n}

def check(slot, n):
    # every record the ring still holds checks (CRC and sequence number), newest n first
    buf = bytearray(slot)
    per = SECT // slot
    kept = min(n, (K - 1) * per + ((n - 1) * slot %% SECT) // slot + 1)  # the oldest sector went at the wrap
    good = 0
    for seq in range(n - kept + 1, n + 1):
        pos = (seq - 1) * slot
        dev.readblocks(blocks[(pos // SECT) %% K], buf, pos %% SECT)
        crc_ok = binascii.crc32(buf[:-4]) & 0xFFFFFFFF == struct.unpack("<I", buf[-4:])[0]
        if crc_ok and struct.unpack("<I", buf[1:5])[0] == seq:
            good += 1
    return kept, good
gc.collect()
print("RESULT" + json.dumps({"blocks": blocks, "nblk": NBLK, "mem_free": gc.mem_free()}))
"""
RAWLOG_RUN = r"""
gc.collect()
r = run(%(slot)d, %(tokens)d)
r["kept"], r["readback_ok"] = check(%(slot)d, %(tokens)d)
gc.collect()
r["mem_free"] = gc.mem_free()
print("RESULT" + json.dumps(r))
"""
RAWLOG_AFTER = r"""
with open("/data/benchlog/filler.bin", "wb") as f:
    for i in range(64):
        f.write(bytes([i]) * 1024)
os.remove("/data/benchlog/filler.bin")
kept, good = check(%(slot)d, %(tokens)d)
sizes = [os.stat("/data/benchlog/r%%03d" %% i)[6] for i in range(K)]
print("RESULT" + json.dumps({"kept": kept, "readback_ok": good, "reserve_files_intact": sizes == [SECT] * K}))
"""

def section_rawlog(image, work, tokens, reserve=8):
    """Wear of the raw log design on the emulated Pico: per token, bytes programmed and sectors
    erased at the flash chip's QSPI commands, for 32- and 16-byte coin records."""
    s = EmulatedPico(os.path.join(work, "rawlog"), image)
    out = {}
    try:
        meter_before = s.ready()["meter"]
        rig = s.rig
        res0 = last_json(s.repl(RAWLOG_RESERVE % {"reserve": reserve})[0])
        for slot in (32, 16):
            f0 = dict(rig.outputs()["flash"])
            text, emu_ms, cycles = s.repl(RAWLOG_RUN % {"slot": slot, "tokens": tokens})
            f1 = rig.outputs()["flash"]
            r = last_json(text)
            r["program_bytes"] = f1["program_bytes"] - f0["program_bytes"]
            r["page_programs"] = f1["page_programs"] - f0["page_programs"]
            r["sector_erases"] = f1["sector_erases"] - f0["sector_erases"] + 16 * (f1["block_erases"] - f0["block_erases"])
            r["emu_ms"] = emu_ms
            out[slot] = r
        after = last_json(s.repl(RAWLOG_AFTER % {"slot": 16, "tokens": tokens})[0])
        print("  %s" % json.dumps({"reserve": res0, "runs": out, "after": after}), flush=True)
        # the controller boots on the same littlefs afterwards: ready means its meter is on the
        # display, which a storage or self-check fault would replace with FAULT 02 / FAULT 03
        rig.set_inputs(keys=0, switch=False)
        rig.power_cut()
        boots = rig.call_sync(lambda: rig.boots)
        meter_after = s.ready(after_boots=boots)["meter"]
    finally:
        s.close()
    fs_blocks = res0["nblk"]
    rows = [("littlefs partition of the Pico build (rp2.Flash().ioctl(4))", "%d blocks of 4 KiB" % fs_blocks),
            ("log sectors reserved as single-block littlefs files, found by tag", "%d: blocks %s" % (reserve, res0["blocks"]))]
    years = {}
    for slot in (32, 16):
        r = out[slot]
        erase_per_token = r["sector_erases"] / float(r["tokens"])
        years[slot] = {}
        for region in (64, 128, 256, 288):
            years[slot][region] = region * ERASE_CYCLES / (erase_per_token * MAX_TOKENS_PER_S * SECONDS_PER_YEAR)
        rows += [("%d-byte coin records appended" % slot, "%d tokens, %d of the newest read back, %d check" % (
                     r["tokens"], r["kept"], r["readback_ok"])),
                 ("  bytes programmed per token (QSPI page programs x 256)", "%.0f (%d page programs)" % (
                     r["program_bytes"] / float(r["tokens"]), r["page_programs"])),
                 ("  4 KiB sector erases per token", "%.5f (%d erases, 1 per %d tokens)" % (
                     erase_per_token, r["sector_erases"], r["tokens"] // max(1, r["sector_erases"]))),
                 ("  emulated time per append: encode + CRC / page program", "%d us / %d us" % (r["encode_us"], r["prog_us"])),
                 ("  emulated time per sector erase (CPU stopped)", "%d us" % r["erase_us"]),
                 ("  flash life at 14 tokens/s with a log of 64 / 128 / 256 / 288 sectors", " / ".join(
                     "%.1f" % years[slot][g] for g in (64, 128, 256, 288)) + " years")]
    rows += [("after littlefs allocates and frees 64 KiB more: log records still checking",
              "%d of %d; reserve files intact: %s" % (after["readback_ok"], after["kept"], after["reserve_files_intact"])),
             ("the controller boots on this littlefs after a power cut: meter shown, no FAULT (cents, before / "
              "after the log runs)", "%s / %s" % (meter_before, meter_after)),
             ("gc.mem_free() at the REPL with the log code loaded", res0["mem_free"])]
    need = TARGET_YEARS * MAX_TOKENS_PER_S * SECONDS_PER_YEAR / ERASE_CYCLES
    body = ("A measured design, not the journal: coin records appended in place to sectors of the Pico's flash "
            "outside littlefs' reach, on MicroPython %s's own rp2.Flash (writeblocks with an offset programs "
            "without erasing, ioctl(6) erases one sector), in the emulated Pico; programs and erases counted at "
            "the QSPI commands the W25Q16JV receives. One record per token (the state-change records of a round "
            "add about 2 per 7 tokens in the wear section's rounds). Life = log sectors x 100,000 cycles / "
            "erases per year at 14 tokens/s: with one record per token, a log of S sectors of R records each "
            "lasts 10 years when S x R >= %.0f.\n\n" % (UF2_VERSION, need)
            + table(rows, ["raw flash log on the emulated Pico", "value"]) + "\n")
    print(body)
    write_section("pico_rawlog", "Emulated Pico: the raw flash log's wear (measured design)", body)


# --- end to end through the real service ---------------------------------------------------------------
# Journals ACKED events acknowledged as the host would (an ACK record every 64) and UNACKED more
# that no host has, in rounds of seven tokens with the dealer's lock and unlock, on the board's own
# journal (the raw log of the official pin map) with no checkpoint in between: the boot after a
# power cut then replays all of them, the most it can ever have to (ACK_CHECKPOINT_EVENTS
# acknowledged since the newest checkpoint, plus a full outbox).
REPLAY_FILL = r"""
import time, gc, json
from boards.pico import PicoBoard
from table.app import TableApp
b = PicoBoard()
app = TableApp(b, b.now_ms(), None)
j = app.journal
now = b.now_ms()
t0 = time.ticks_ms()
first = j.next_seq
def rounds(upto, ack):
    global now
    while j.next_seq < upto:
        for seat in range(7):
            app._credit(now, seat, now - 5)
            now += 3
        app.key_pressed(now, "lock")
        app.key_pressed(now, "unlock")
        now += 3
        if ack:
            j.ack(j.next_seq - 1)
        b.feed_watchdog()
rounds(first + %(acked)d, True)
acked = j.acked_seq
rounds(acked + 1 + %(unacked)d, False)
gc.collect()
print("RESULT" + json.dumps({"journal": type(j).__name__, "first": first, "next_seq": j.next_seq, "acked": acked,
                             "unacked": j.unacked_count(), "checkpoint_acked": j.checkpoint_acked,
                             "fill_ms": time.ticks_diff(time.ticks_ms(), t0), "mem_free": gc.mem_free()}))
"""


def section_replay(image, work, acked=4096, unacked=970):
    """Boot time and heap of the controller whose journal holds the most a boot can have to replay."""
    s = EmulatedPico(os.path.join(work, "replay"), image)
    try:
        s.ready()
        s.connect()
        status0 = s.command("status")
        w0 = time.monotonic()
        # ~11 ms of the Pico's time an event, 25-80 wall s an emulated s on this machine.
        text, fill_emu_ms, _ = s.repl(REPLAY_FILL % {"acked": acked, "unacked": unacked},
                                      timeout_s=max(3600, int((acked + unacked) * 0.011 * 100)))
        fill_wall = time.monotonic() - w0
        fill = last_json(text)
        print("  filled: %s" % json.dumps(fill), flush=True)
        boots = s.rig.outputs()["boots"]
        w0 = time.monotonic()
        s.rig.power_cut()
        # No service on the port: a boot that outlasts the host timeout shows PROG OFF, not the meter.
        s.ready(after_boots=boots + 1, timeout_s=7200, without_host=True)
        boot_wall = time.monotonic() - w0
        ready_ms = s.ready_ms(without_host=True)
        w0 = time.monotonic()
        s.connect(hello_timeout_s=1800)
        hello_wall = time.monotonic() - w0
        hello_emu_ms = (s.rig.clock.nanos - s.rig.boot_ns) / 1e6
        status = s.command("status")
        diag = s.command("diag")
        # The live heap with the rebuilt outbox: the main loop collects every HEAP_WATCH_TURNS turns.
        while diag.get("heap_checks", 0) < 1:
            time.sleep(5)
            diag = s.command("diag")
    finally:
        s.close()
    rows = [("journal (status)", status["journal"]),
            ("events journaled: acknowledged (ACK records, no checkpoint after them) / unacknowledged",
             "%d / %d (%s)" % (fill["acked"] - fill["first"] + 1, fill["unacked"], "rounds of 7 tokens, lock, unlock")),
            ("boot to ready after a power cut, replaying them all (emulated ms)", "%.0f" % ready_ms),
            ("the host's hello answered, from the reset (emulated ms / wall s after ready)",
             "%.0f / %.0f" % (hello_emu_ms, hello_wall)),
            ("the same board's boot before they were written (emulated ms, %s)" % status0["journal"], "see boot section"),
            ("storage fault after the boot", "storage" in status["faults"]),
            ("events unacknowledged after the boot (the outbox rebuilt)", status["unacked"]),
            ("live heap free after the boot, the outbox rebuilt (diag heap_low: after the main loop's first "
             "collections)", "%s bytes (%s collections)" % (diag["heap_low"], diag["heap_checks"])),
            ("gc.mem_free() at the REPL with the journal full, collected", fill["mem_free"]),
            ("filling: emulated s / wall s", "%.1f / %.0f" % (fill_emu_ms / 1000.0, fill_wall)),
            ("boot: wall s on this machine", "%.0f" % boot_wall)]
    body = ("The controller on the official pin map (the journal on the raw log), MicroPython %s on the emulated "
            "Pico, %s. At the REPL the board's own app journals %d events that a host acknowledges (an ACK record "
            "every 64) and %d that no host has, in rounds of seven tokens with the dealer's lock and unlock, "
            "with no checkpoint after them; then the power is cut and the boot replays every one (the most a "
            "boot can meet is %d acknowledged, a checkpoint being written every so many, and a full outbox of "
            "~1,000: %s).\n\n"
            % (UF2_VERSION, machine_note(), acked, unacked, ACK_CHECKPOINT_EVENTS,
               "this run" if acked >= ACK_CHECKPOINT_EVENTS else "this run is smaller; boot time grows with the "
               "events replayed")
            + table(rows, ["boot with the most events to replay", "value"]) + "\n")
    print(body)
    write_section("pico_replay", "Emulated Pico: boot with the most events to replay", body)


def section_play_period(image, work, play_period_s=600.0, deadline=None, in_process=False):
    """The live heap over a play period of the real main loop (main.py) on the official pin map: rounds
    of seven tokens at the acceptor pins with the bet spots of play, the dealer's lock and unlock, a
    host acknowledging every event; the main loop collects every HEAP_WATCH_TURNS turns and diag
    reports the lowest free. The emulator runs in a process of its own (`tablectl sim --board pico
    --fast`) unless in_process: a play period is hours of wall time, and in this process the emulator's
    thread shares the interpreter lock with the bench and the link."""
    if in_process:
        s = EmulatedPico(os.path.join(work, "play_period"), image)
    else:
        os.makedirs(os.path.join(work, "play_period"), exist_ok=True)
        s = EmulatedPicoProcess(os.path.join(work, "play_period", "board"), image, os.path.join(work, "play_period", "sim.log"))
    rounds = 0
    antes = sum(1 << (seat * 3) for seat in range(7))
    bets = sum(1 << (seat * 3 + 1) for seat in range(7))
    try:
        s.ready()
        s.connect()
        t0_ms = s.rig.now_ms()
        w0 = time.monotonic()
        seen = [0]

        def heard(msg):
            if msg.get("t") == PROTO_EVENT and isinstance(msg.get("q"), int):
                seen[0] = max(seen[0], msg["q"])
        # The main loop collects every HEAP_WATCH_TURNS turns (about 9 s): the first reading is
        # the first progress diag that has one (a diag straight after boot has none yet).
        first_heap = [None]
        while s.rig.now_ms() - t0_ms < play_period_s * 1000.0:
            if deadline is not None and time.time() > deadline:
                break
            s.bench.request("spots", value=antes)
            s.bench.coins({seat: 1 for seat in range(7)}, width_ms=50, coin_gap_ms=400)
            s.bench.key("lock")
            s.bench.request("spots", value=antes | bets)
            s.bench.settle(100)
            s.bench.request("spots", value=0)
            s.bench.key("unlock")
            rounds += 1
            for msg in s.link.read():
                heard(msg)
            if seen[0]:
                s.link.send(proto_ack(seen[0]))
            if rounds % 5 == 0:
                d = s.link.command("diag", timeout_s=900, on_message=heard)
                emu_now_s = (s.rig.now_ms() - t0_ms) / 1000.0
                if first_heap[0] is None and d["heap_checks"]:
                    first_heap[0] = (d["heap_low"], d["heap_checks"], emu_now_s)
                print("  round %d, %.0f emulated s (%.1f wall s each): heap low %s over %s collections, wear budget %s" % (
                    rounds, emu_now_s, (time.monotonic() - w0) / max(emu_now_s, 0.001), d["heap_low"],
                    d["heap_checks"], d.get("wear_budget")), flush=True)
        emu_s = (s.rig.now_ms() - t0_ms) / 1000.0
        wall_s = time.monotonic() - w0
        diag = s.command("diag")
        status = s.command("status")
        meters = s.command("meters")
    finally:
        s.close()
    rows = [("journal (status)", status["journal"]),
            ("play period length (emulated s) / asked for", "%.0f / %.0f" % (emu_s, play_period_s)),
            ("rounds (7 tokens, 28 bet-spot changes, lock, unlock), tokens credited", "%d, %d" % (rounds, sum(meters["seat_coins"][:7]))),
            ("the emulator", ("in this process (a thread)" if in_process else "in a process of its own (tablectl sim --board pico --fast)")
             + ("; the PIO stepped every %g us (TABLE_PICO_PIO_STEP_US, lab/tabledev/EMULATOR.md)" % (pio_step_ns() / 1000.0)
                if pio_step_ns() else "; the PIO stepped every CPU instruction")),
            ("live heap free at the main loop's first collections (emulated s into the play period)",
             "%s bytes over %s (%.0f s)" % first_heap[0] if first_heap[0] else "none made"),
            ("live heap free, lowest over the play period (after each collection the main loop makes)",
             "%s bytes over %s collections" % (diag["heap_low"], diag["heap_checks"])),
            ("gc.mem_free() at the end (diag, uncollected)", diag["mem_free"]),
            ("events unacknowledged at the end", status["unacked"]),
            ("faults", ", ".join(status["faults"]) or "none"),
            ("wall s on this machine (per emulated s)", "%.0f (%.1f)" % (wall_s, wall_s / max(emu_s, 0.001)))]
    low = diag["heap_low"]
    verdict = ("Goal >= 100 KB free over a 10-minute play period: %s (lowest %s bytes over %.0f emulated s%s)." % (
        "reached" if low is not None and low >= 100 * 1024 and emu_s >= 600 else
        ("not shown: the play period was shorter than 10 minutes" if low is not None and low >= 100 * 1024 else "NOT reached"),
        low, emu_s, "" if emu_s >= 600 else ", %.1f of the 10 minutes" % (emu_s / 60.0)))
    body = ("The real main loop (main.py) on the official pin map, MicroPython %s on the emulated Pico, %s; a host "
            "in this process acknowledging events, the bench feeding rounds at the pins.\n\n"
            % (UF2_VERSION, machine_note()) + table(rows, ["heap over a play period", "value"]) + "\n" + verdict + "\n")
    print(body)
    write_section("pico_play_period", "Emulated Pico: the live heap over a play period", body)


from table.protocol import EVENT as PROTO_EVENT  # noqa: E402 ("ev": the play-period bench's host once looked for "e" and acknowledged nothing)


def proto_ack(seq):
    from table import protocol as proto
    return proto.ack(seq)


def _ledger_rows(db):
    import sqlite3
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute("SELECT COUNT(*) FROM ledger").fetchone()[0]
    except sqlite3.OperationalError:
        return 0  # no ledger table yet
    finally:
        con.close()


def _serve_heard(log_path, db, rows_before):
    """The service has heard the board: it named it in its log (a hello answered), or filed an event
    of it (a board whose boot events reach the service before its answer to the hello is filed by
    them, and the service, having learnt the board from them, does not log its name)."""
    if ": board " in open(log_path).read():
        return True
    return os.path.exists(db) and _ledger_rows(db) > rows_before


def section_fsfree(image, work):
    """What the raw log's reserve leaves littlefs on the official pin map: the filesystem image the
    host builds for a board (`tablectl flash`'s file set, the reserve made as the board's first boot
    makes it: tabledev/pico_sim/fsimage.py), mounted and counted. The same count as the board's
    `os.statvfs('/')`; no emulator needed, so it is exact and quick."""
    from littlefs import LittleFS, UserContext
    from rp2040py.boards import BOARDS, resolve_firmware
    from tabledev.pico_sim import PINMAP, build_fs_image, deploy_files
    layout = resolve_firmware(BOARDS["pico"], "micropython", image).layout
    with open(PINMAP) as f:
        reserve = json.load(f).get("raw_log_sectors")
    rows = []
    for label, mpy in (("compiled (.mpy), as `make flash` deploys", True), ("as source (.py)", False)):
        files, manifest = deploy_files(pinmap=PINMAP, mpy=mpy, work_dir=os.path.join(work, "fw-mpy" if mpy else "fw-py"))
        img = build_fs_image(layout, files, manifest, reserve)
        ctx = UserContext(buffsize=len(img))
        ctx.buffer[:] = img
        lfs = LittleFS(context=ctx, block_size=layout.fs_blocksize, block_count=layout.fs_blockcount,
                       prog_size=256, mount=True)
        used = lfs.used_block_count
        lfs.unmount()
        program_kib = sum(os.path.getsize(path) for _name, path in files) / 1024.0
        rows.append((label, "%d" % len(files), "%.0f" % program_kib, "%d" % layout.fs_blockcount,
                     "%d" % (reserve or 0), "%d" % used, "**%d**" % (layout.fs_blockcount - used)))
    body = "\n".join([
        "`.venv/bin/python benchmarks/bench_pico.py fsfree`: the littlefs image of the Pico's filesystem "
        "region (%d blocks of %d bytes, the official image's layout) as the host builds it for the official "
        "pin map (`hardware/pinmap_pico.json`, raw_log_sectors %s: one 4 KiB block each, made as the board's "
        "first boot makes them), mounted with littlefs-python and counted. %s." % (
            layout.fs_blockcount, layout.fs_blocksize, reserve, machine_note()),
        "",
        table(rows, ["firmware deployed", "files", "program KiB", "littlefs blocks", "raw-log reserve blocks",
                     "blocks in use", "blocks free"]),
        "",
        "The free blocks are what the checkpoints (`rl_a` / `rl_b`) and a service session's files have "
        "(docs/FIRMWARE.md \"The raw log\"): the board's own `os.statvfs('/')` reads the same count.",
    ])
    print(body)
    write_section("pico_fsfree", "littlefs blocks the raw log's reserve leaves free on the official pin map", body)


def section_e2e(image, work):
    """The demo's sequence on the emulated Pico: `tablectl sim --board pico`, `tablectl serve` on its
    pty, every step a `tablectl` command as a technician types it."""
    import subprocess
    from tabledev import procs
    state = os.path.join(work, "e2e")
    db = os.path.join(work, "e2e.db")
    steps = []
    # The emulated core is 15-50x slower than a Pico: serve and every CLI process below wait this
    # long for the board (the defaults, 3 s and 5 s, are a real board's).
    os.environ.setdefault("TABLECTL_LINK_TIMEOUT_S", "300")
    sim, sim_log = procs.start(["sim", "--board", "pico", "--state", state, "--image", image],
                               os.path.join(work, "e2e-sim.log"))
    port = sim.stdout.readline().split()[1]
    serve = None
    bench = Bench(state, timeout_s=300)
    t_start = time.monotonic()

    def run(*args, ok=True):
        t0 = time.monotonic()
        proc = subprocess.run(procs.TABLECTL + list(args), capture_output=True, text=True, timeout=900)
        good = (proc.returncode == 0) == ok
        shown = ["DB" if a == db else a for a in args]
        steps.append(("tablectl " + " ".join(a if " " not in a else repr(a) for a in shown[:6]),
                      "ok" if good else "FAILED: " + (proc.stderr or proc.stdout).strip()[-160:],
                      "%.0f" % (time.monotonic() - t0)))
        print("  %s -> %s" % (steps[-1][0], steps[-1][1]), flush=True)
        return proc

    try:
        while True:
            out = bench.request("outputs")["outputs"]
            if out["mode"] == "app" and out["meter"] is not None:
                break
            time.sleep(0.5)
        serve, serve_log = procs.start(["serve", "--port", port, "--db", db], os.path.join(work, "e2e-serve.log"))
        serve.stdout.readline()
        # As a technician does: wait for serve to name the board (its hello answered) before the
        # first command; the emulated board takes seconds of wall time to answer.
        t0 = time.monotonic()
        while not _serve_heard(os.path.join(work, "e2e-serve.log"), db, 0):
            if time.monotonic() - t0 > float(os.environ["TABLECTL_LINK_TIMEOUT_S"]) or serve.poll() is not None:
                raise RuntimeError("tablectl serve did not hear the board (see e2e-serve.log)")
            time.sleep(0.5)
        steps.append(("serve hears the board (filed)", "ok", "%.0f" % (time.monotonic() - t0)))
        run("status", "--db", db)
        bench.switch(True)
        run("provision", "--db", db)
        bench.switch(False)
        bench.coins({seat: 1 for seat in range(7)}, width_ms=50, coin_gap_ms=400)
        run("meters", "--db", db)
        coins = run("events", "--db", db, "--kind", "coin", "--json")
        seats = sorted(json.loads(line)["body"]["seat"] for line in coins.stdout.splitlines() if line.strip())
        # (the CLI counts seats as people do, from 1: tablectl/seats.py)
        steps.append(("a token on each of seven seats in the ledger", "ok" if seats == list(range(1, 8)) else
                      "FAILED: coin events on seats %s" % seats, ""))
        bench.key("lock")
        bench.coin(2, 1, width_ms=50)
        time.sleep(5)
        late = run("events", "--db", db, "--kind", "late_coin", "--last", "1", "--json")
        steps.append(("late coin in the ledger", "ok" if '"late_coin"' in late.stdout else "FAILED", ""))
        bench.key("jackpot")
        run("jackpot", "--db", db, "--seat", "4", "--cards", "As Ks Qs Js Ts")
        bench.key("unlock")
        time.sleep(5)
        run("reconcile", "--db", db)
        run("audit", "verify", "--db", db)
        status = run("status", "--db", db, "--json")
        try:
            runtime = json.loads(status.stdout).get("runtime")
        except ValueError:
            runtime = None
        steps.append(("status --json runtime", runtime or "FAILED", ""))
        # The technician's service visit: stop the service, the service sequence at the board (key
        # switch on, service key held at power-up: main.py leaves the port to the REPL), mpremote,
        # then `make flash` of the compiled tree, and the service started again.
        procs.stop(serve, timeout_s=20)
        serve = None
        t0 = time.monotonic()
        bench.service_boot()
        steps.append(("service sequence: the board at its REPL", "ok", "%.0f" % (time.monotonic() - t0)))
        t0 = time.monotonic()
        probe = "import sys,gc;gc.collect();print('IMPL',sys.implementation.version,gc.mem_free())"
        mp = subprocess.run([sys.executable, "-m", "mpremote", "connect", port, "fs", "ls", ":", "+", "exec", probe],
                            capture_output=True, text=True, timeout=900)
        good = mp.returncode == 0 and "main.py" in mp.stdout and "manifest.json" in mp.stdout and \
            "IMPL (1, 24, 1" in mp.stdout
        steps.append(("mpremote fs ls + exec on the pty", "ok" if good else
                      "FAILED: " + (mp.stdout + mp.stderr).strip()[-160:], "%.0f" % (time.monotonic() - t0)))
        from tablectl.deploy import compile_tree
        compiled = os.path.join(work, "e2e-mpy")
        compile_tree("pico", os.path.join(ROOT, "firmware"), compiled)
        t0 = time.monotonic()
        fl = subprocess.run(["make", "-s", "flash", "PORT=" + port, "SOURCE=" + compiled, "DB=" + db], cwd=ROOT,
                            capture_output=True, text=True, timeout=3600)
        good = fl.returncode == 0 and "every sha256 the board reports matches the manifest" in fl.stdout
        steps.append(("make flash PORT=<pty> SOURCE=<mpy tree> DB=DB: checksums match", "ok" if good else
                      "FAILED: " + (fl.stdout + fl.stderr).strip()[-160:], "%.0f" % (time.monotonic() - t0)))
        bench.switch(False)
        rows_before = _ledger_rows(db)
        serve, serve_log = procs.start(["serve", "--port", port, "--db", db], os.path.join(work, "e2e-serve2.log"))
        serve.stdout.readline()
        t0 = time.monotonic()
        while not _serve_heard(os.path.join(work, "e2e-serve2.log"), db, rows_before):
            if time.monotonic() - t0 > float(os.environ["TABLECTL_LINK_TIMEOUT_S"]) or serve.poll() is not None:
                raise RuntimeError("tablectl serve did not hear the flashed board (see e2e-serve2.log)")
            time.sleep(0.5)
        steps.append(("serve hears the flashed board", "ok", "%.0f" % (time.monotonic() - t0)))
        status = run("status", "--db", db, "--json")
        try:
            st = json.loads(status.stdout)
            faults = st.get("faults")
        except ValueError:
            st, faults = {}, None
        steps.append(("status after the flash: no faults, self-check passed", "ok" if faults == [] else
                      "FAILED: faults %s %s" % (faults, st.get("fault_detail")), ""))
        boot = run("events", "--db", db, "--kind", "boot", "--last", "1", "--json")
        selfcheck = None
        for line in boot.stdout.splitlines():
            if line.strip():
                selfcheck = json.loads(line)["body"].get("selfcheck")
        steps.append(("the newest boot event in the ledger: selfcheck", selfcheck if selfcheck == "ok" else
                      "FAILED: %s" % selfcheck, ""))
    finally:
        bench.close()
        procs.stop(serve, timeout_s=20)
        procs.stop(sim, timeout_s=30)
        sim_log.close()
    failed = [s for s in steps if "FAILED" in s[1]]
    body = ("`tablectl sim --board pico`, `tablectl serve` on its pty and the CLI as subprocesses (the demo's "
            "sequence): provision, a token on each of seven seats, lock, a late token, jackpot key and an "
            "authenticated award, unlock, reconcile, audit; then a service visit: the service stopped, the board's "
            "service sequence, mpremote `fs ls` and `exec` on its pty, `make flash` of the compiled (.mpy) tree "
            "with its checksums checked by the board, the service started again. Wall seconds per step on this machine (%s); the "
            "emulated core is 15-50x slower than a Pico, so every process waits TABLECTL_LINK_TIMEOUT_S=%s s "
            "for the board instead of a real board's 3 s (CLI) and 5 s (service).\n\n"
            % (machine_note(), os.environ["TABLECTL_LINK_TIMEOUT_S"])
            + table(steps, ["step", "result", "wall s"])
            + "\n\n%s in %.0f s of wall time.\n" % ("All steps passed" if not failed else "%d step(s) FAILED" % len(failed),
                                                     time.monotonic() - t_start))
    print(body)
    write_section("pico_e2e", "Emulated Pico: end to end through the service", body)


# --- power cuts during coin-in and awards, with the service recording --------------------------------
KEEP_WORK = []  # why the work directory is kept (a campaign that broke), else it is removed


def section_cuts(image, work, cuts, seed, award_every=5, deadline=None, record_path=None, aim_every=3):
    """benchmarks/pico_cuts.py: the campaign (cuts=0: none, the record's report only); this writes
    its figures: every cut recorded on the current code, then this run's own."""
    import pico_cuts
    record_path = record_path or pico_cuts.RECORD
    t_start = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    r = None
    if cuts:
        c = pico_cuts.Campaign(image, work, seed, log=lambda t: print("  " + t, flush=True), pico_cls=EmulatedPico,
                               record_path=record_path, aim_every=aim_every)
        try:
            res = c.run(cuts, award_every=award_every, deadline=deadline)
            r = pico_cuts.summarize(c, res)
        finally:
            c.close()
    a = pico_cuts.summarize_record(record_path)
    common = [
        ("  during coin-in (a token on each of 7 seats, cut 0-%.0f ms of emulated time after the first edge)"
         % pico_cuts.COIN_WINDOW_MS, "coin_cuts"),
        ("  during an award (cut 0-%.0f ms after the award's frame reached the board)" % pico_cuts.AWARD_WINDOW_MS,
         "award_cuts")]

    def shared_rows(x):
        rows = [(label, x[key]) for label, key in common]
        rows += [("coin-in cuts by tokens of the batch credited (0..7)", ", ".join(
                     "%s: %d" % (k, v) for k, v in x["credited_hist"].items())),
                 ("award cuts: award journaled before the cut / paid by the service's resend after the boot",
                  "%d / %d" % (x["award_recorded_before_cut"], x["award_cuts"] - x["award_recorded_before_cut"])),
                 ("cuts while the flash was busy (erase / page program in progress: left half done)",
                  "%d (erase %d, program %d; %d with bytes torn)" % (x["flash_busy"], x["busy_erase"],
                                                                   x["busy_program"], x["torn"])),
                 ("cuts while a page program or sector erase command was being clocked out", x["mid_command"]),
                 ("  coin-in cuts aimed inside a page program's busy time, at a random point of it (landed there)",
                  "%d (%d)" % (x.get("aimed", 0), x.get("aimed_busy", 0))),
                 ("violations (lost, doubled, meter lower, seq reused, storage fault, award twice, reconcile)",
                  len(x["violations"]))]
        return rows
    all_rows = ([("code under test (sha256 of firmware/ and host_tools/tablectl/, first 16 hex)", "`%s`" % a["digest"]),
                 ("runs (start, seed)", "; ".join(a["runs"]) or "none"),
                 ("  ended with the whole ledger's audit verified / stopped by a campaign that could not go on",
                  "%d / %d (the others were cut off: their cuts were each checked after its boot)"
                  % (len(a["runs_ended"]), len(a["runs_broken"]))),
                 ("cuts", a["cuts"])]
                + shared_rows(a)
                + [("wall time per cut (s)", "%.0f" % a["wall_per_cut_s"])])
    if a["torn_lines"]:
        all_rows.append(("record lines not whole JSON (skipped)", a["torn_lines"]))
    violations = a["violations"] + (r["violations"] if r else [])
    verdict = ("NOT met: %d violations" % len(violations) if violations else
               "met" if a["cuts"] >= 200 else
               "not met: %d of 200 cuts run on this code (0 violations in those)" % a["cuts"])
    body = ("`python benchmarks/bench_pico.py cuts --cuts N --seed S [--until HH:MM]` runs cuts; "
            "`python benchmarks/bench_pico.py cutsreport` writes this section from the record alone. "
            "The deployed firmware on the "
            "emulated Pico (--fast-flash), `tablectl serve` on its USB pty with its ledger; the board provisioned. "
            "Each cut stops the emulated chip at a random emulated instant (ns resolution) and boots it cold on the "
            "same flash; a cut while the flash is busy leaves that erase or program half done, and every "
            "third coin-in cut is aimed inside a page program's busy time (a random instant finds the flash busy "
            "about once in a hundred). After every boot, "
            "through the service: no storage fault; meter and per-seat counters never lower than before the cut, "
            "counters never above the tokens fed; coin rows in the ledger per seat = the board's counters (each "
            "credited coin once); ledger sequence 1..n, none reused; every award in the ledger once (after the "
            "service's resend of the same command id), and a second `jackpot` with that id answered as a repeat, "
            "meter unchanged; reconcile OK. At a run's end `audit verify` of its whole ledger.\n\n"
            "Each cut is appended to `%s` as it is checked, with the digest of the code under test: runs add up "
            "on the same code, and cuts on other code are never counted here (written %s, %s).\n\n"
            % (os.path.relpath(record_path, ROOT), t_start, machine_note())
            + table(all_rows, ["every cut recorded on this code", "value"]))
    if a["other"]:
        body += "\n\nRecorded on other code (not counted above): " + "; ".join(
            "`%s` %d cuts in %d runs, %d violations" % (k, v["cuts"], v["runs"], v["violations"])
            for k, v in sorted(a["other"].items())) + "."
    if r:
        rows = ([("the board's journal (status)", r.get("journal")),
                 ("cuts run (asked for)", "%d (%d), seed %d" % (r["cuts"], cuts, seed))]
                + shared_rows(r)
                + [("tokens fed / credited (board counters = coin rows in the ledger)", "%d / %d" % (r["fed"], r["credited"])),
                   ("boots (board's count) / ledger rows verified", "%s / %d" % (r["boots"], r["rows"])),
                   ("final meter (cents)", r["meter"]),
                   ("wall time: whole run / per cut", "%.0f s / %.1f s" % (r["wall_s"], r["wall_per_cut_s"])),
                   ("  wall time by phase (s, all cuts)", ", ".join("%s %.0f" % kv for kv in sorted(r["phase_s"].items())))])
        body += "\n\nThis run (started %s):\n\n" % t_start + table(rows, ["power cuts on the emulated Pico, this run", "value"])
    body += "\n\nTarget (200 cuts, 0 lost, 0 doubled, meter never lower): %s.\n" % verdict
    if violations:
        KEEP_WORK.append("%d violations in the power cuts" % len(violations))
        body += "\nViolations:\n\n" + "\n".join("- " + v for v in violations[:20]) + "\n"
    print(body)
    write_section("pico_cuts", "Emulated Pico: power cuts during coin-in and awards", body)
    return r


def until_epoch(hhmm):
    """--until HH:MM (UTC, today) -> epoch seconds, or None."""
    if not hhmm:
        return None
    import calendar
    h, m = (int(x) for x in hhmm.split(":"))
    now = time.gmtime()
    at = calendar.timegm((now.tm_year, now.tm_mon, now.tm_mday, h, m, 0, 0, 0, 0))
    # a time already past today is tomorrow's: a run started at 23:30 --until 02:00 runs 2.5 h
    return at if at > time.time() else at + 86400


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("sections", nargs="*", default=["boot", "wear", "e2e", "speed", "rawlog", "decode"])
    ap.add_argument("--tokens", type=int, default=1400,
                    help="decode: tokens over all seven seats (10010 for the full campaign: hours here)")
    ap.add_argument("--rounds", type=int, default=4, help="wear: rounds of seven tokens")
    ap.add_argument("--fast-flash", action="store_true",
                    help="decode: move the emulated clock over the flash's busy time instead of emulating the "
                         "CPU polling it (the PIO and pin edges keep their times)")
    ap.add_argument("--log-tokens", type=int, default=1280, help="rawlog: coin records appended per record size")
    ap.add_argument("--play-period-s", type=float, default=600.0, help="play-period: emulated seconds (--until stops it sooner)")
    ap.add_argument("--in-process", action="store_true",
                    help="play-period: the emulator on a thread of this process, not a process of its own (the peer for its wall time)")
    ap.add_argument("--replay-acked", type=int, default=4096, help="replay: acknowledged events to replay")
    ap.add_argument("--replay-unacked", type=int, default=970, help="replay: unacknowledged events to replay")
    ap.add_argument("--cuts", type=int, default=200, help="cuts: power cuts (one in --award-every during an award)")
    ap.add_argument("--award-every", type=int, default=5, help="cuts: every Nth cut falls during an award")
    ap.add_argument("--seed", type=int, default=14, help="cuts: random seed (cut instants, widths, seats)")
    ap.add_argument("--aim-every", type=int, default=3,
                    help="cuts: every Nth coin-in cut falls inside a page program's busy time (0: none)")
    ap.add_argument("--record", default=None,
                    help="cuts, cutsreport: the cuts' record (default benchmarks/records/pico_cuts.jsonl)")
    ap.add_argument("--until", default=None,
                    help="cuts, play-period: stop at this UTC time (HH:MM, the next one to come) and report what was run")
    args, _ = ap.parse_known_args()
    image = image_path(required=False)
    if image is None and set(args.sections) - {"cutsreport"}:
        print("skipped: " + HOW_TO_GET_IMAGE)
        return 0
    work = tempfile.mkdtemp(prefix="bench-pico-")
    # the options as given (the section names taken out): each record's command runs its section again
    options = [a for a in sys.argv[1:] if a not in args.sections]
    try:
        for name in args.sections:
            print("== pico %s" % name, flush=True)
            # cutsreport writes the cuts' record from the record file alone: its command stays the
            # one its text names (the cuts section)
            _common.COMMAND = None if name == "cutsreport" else invocation("bench_pico.py", name, options)
            if name == "boot":
                section_boot(image, work)
            elif name == "wear":
                section_wear(image, work, args.rounds)
            elif name == "e2e":
                section_e2e(image, work)
            elif name == "fsfree":
                section_fsfree(image, work)
            elif name == "decode":
                section_decode(image, work, args.tokens, args.fast_flash)
            elif name == "speed":
                section_speed(image, work)
            elif name == "rawlog":
                section_rawlog(image, work, args.log_tokens)
            elif name == "rawwear":
                section_rawwear(image, work, args.rounds)
            elif name == "play-period":
                section_play_period(image, work, args.play_period_s, until_epoch(args.until), args.in_process)
            elif name == "replay":
                section_replay(image, work, args.replay_acked, args.replay_unacked)
            elif name == "heapmap":
                section_heapmap(image, work)
            elif name == "cuts":
                section_cuts(image, work, args.cuts, args.seed, args.award_every, until_epoch(args.until),
                             args.record, args.aim_every)
            elif name == "cutsreport":
                section_cuts(image, work, 0, args.seed, record_path=args.record)
            elif name == "emulator":
                section_emulator(image, work)
            elif name == "hostturn":
                section_hostturn(image, work)
            elif name == "_emuprobe":
                print("RESULT " + json.dumps(emu_probe(image, work)), flush=True)
            else:
                raise SystemExit("unknown section %r: boot, wear, e2e, fsfree, decode, speed, rawlog, rawwear, replay, play-period, heapmap, "
                                 "emulator, hostturn, cuts or cutsreport" % name)
    finally:
        if os.environ.get("BENCH_KEEP_WORK"):
            KEEP_WORK.append("BENCH_KEEP_WORK set")
        if KEEP_WORK:
            # a campaign that broke: the service's log and the board's flash are what to look at
            print("kept for a look: %s (%s)" % (work, "; ".join(KEEP_WORK)), flush=True)
        else:
            shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
