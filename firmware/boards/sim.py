"""The virtual board: the real firmware on the MicroPython unix port, with simulated hardware.

SimBoard keeps the pins in memory (inputs the bench drives, outputs the bench reads), feeds each
seat's counter from timestamped edges, and shows the display as a text buffer. run() wires it to
the outside when the firmware boots on the unix port: the host link is this process's stdin and
stdout (the supervisor, `tablectl sim`, puts a pseudo-terminal in front of it) and the bench's
pins arrive over a Unix socket from that supervisor, one JSON object per line.

Time: the board clock is the process's monotonic clock plus a warp. Edges arrive with times
relative to their batch; real-time batches play out as the clock runs, accelerated batches move
the clock forward to each next edge at once, so 100,000 tokens take seconds, not hours.
"""
import json
import os
import sys
import time

from boards.contract import Board, PulseSource
from boards.simflash import SimNorFlash
from drivers.nvfile import NvFiles

# How long the RP2040 keeps interrupts off for one flash write (sector erase + program, W25Q16JV
# datasheet: 45 ms typical sector erase). The irq back end is blind for that long; PIO is not.
FLASH_BLACKOUT_MS = 45
# Exit status that asks the supervisor for a REPL on the port (the service sequence).
EXIT_TO_REPL = 42


class SimPulseSource(PulseSource):
    """A counter fed by simulated edges (level 1 = line active, i.e. pulled low by the acceptor).

    backend "pio": counts in hardware, blind to nothing (what the RP2040 build uses).
    backend "irq": a GPIO interrupt counter; loses edges that fall in a flash-write blackout.
    """

    def __init__(self, board, backend="pio"):
        self.board = board
        self.backend = backend
        self.edges = []  # pending (t_ms, level), in time order
        self.level = 0
        self.active_since_ms = 0
        self.lost = 0

    def schedule(self, t_ms, level):
        self.edges.append((t_ms, level))

    def next_edge_ms(self):
        return self.edges[0][0] if self.edges else None

    def poll(self, now_ms, out):
        n = 0
        edges = self.edges
        i = 0
        while i < len(edges) and edges[i][0] <= now_ms:
            t_ms, level = edges[i]
            i += 1
            if self.backend == "irq" and self.board.in_blackout(t_ms):
                self.lost += 1
                continue
            if level == self.level:
                continue
            self.level = level
            if level:
                self.active_since_ms = t_ms
            else:
                out.append((t_ms, t_ms - self.active_since_ms))
                n += 1
        if i:
            del edges[:i]
        return n

    def held_ms(self, now_ms):
        return now_ms - self.active_since_ms if self.level else 0

    def edges_lost(self):
        return self.lost


class SimNv(NvFiles):
    """littlefs stand-in: a directory. Each write opens a flash-write blackout on the board."""

    def __init__(self, root, board):
        NvFiles.__init__(self, root)
        self.board = board

    def write(self, name, data):
        self.board.note_flash_write()
        NvFiles.write(self, name, data)

    def append(self, name, data):
        self.board.note_flash_write()
        NvFiles.append(self, name, data)


class SimBoard(Board):
    def __init__(self, root=".", board_id="sim-0001", max_seats=8, digits=8, backend="pio"):
        self.board_id = board_id
        self.max_seats = max_seats
        self.display_digits = digits
        self.firmware_root = root
        self.pulse_sources = [SimPulseSource(self, backend) for _ in range(max_seats)]
        self.inhibit = [True] * max_seats  # power-on default: every acceptor inhibited
        self.lamps = [False] * max_seats
        self.display = ("", False)
        self.keys = 0
        self.spots = 0
        self.switch = False
        self.rx = bytearray()
        self.tx = bytearray()
        self.warp_ms = 0
        self.accelerated = False
        self.blackouts = []  # (start_ms, end_ms) of recent flash writes
        self.flash_writes = 0
        self.outputs_changed = True
        self.edges_fed = 0  # every edge the bench has handed this board since it booted
        self._batch_base = 0
        self._t0 = time.ticks_ms() if hasattr(time, "ticks_ms") else int(time.time() * 1000)
        self._last_ticks = self._t0
        self._elapsed = 0
        self.nv = SimNv(root + "/data", self)
        # The raw flash log (table/rawlog.py) instead of the littlefs journal, when asked for:
        # TABLE_RAWLOG_SECTORS=n gives the board a NOR chip of n sectors in data/rawlog.bin (as the Pico's sits in littlefs).
        # Unset (the default), the journal stays on the files as before.
        self.log_device = None
        sectors = os.getenv("TABLE_RAWLOG_SECTORS") if hasattr(os, "getenv") else None
        if sectors:
            self.log_device = SimNorFlash(root + "/data/rawlog.bin", int(sectors), self.note_flash_write)
        # TABLE_WEAR_BUDGET_SLOTS=n: the wear budget's burst (table/app.py), for the link's benches
        # and tests, whose event source is a flood of bet-spot changes far past any real table's.
        budget = os.getenv("TABLE_WEAR_BUDGET_SLOTS") if hasattr(os, "getenv") else None
        if budget:
            self.wear_budget_slots = int(budget)

    # --- clock ----------------------------------------------------------------------------
    def _real_ms(self):
        if hasattr(time, "ticks_ms"):
            now = time.ticks_ms()
            self._elapsed += time.ticks_diff(now, self._last_ticks)
            self._last_ticks = now
            return self._elapsed
        return int(time.time() * 1000) - self._t0

    def now_ms(self):
        now = self._real_ms() + self.warp_ms
        if self.accelerated:
            nxt = None
            for src in self.pulse_sources:
                t = src.next_edge_ms()
                if t is not None and (nxt is None or t < nxt):
                    nxt = t
            if nxt is None:
                self.accelerated = False
            elif nxt > now:
                self.warp_ms += nxt - now
                now = nxt
        return now

    def advance(self, ms):
        """Move the board clock forward (accelerated tests of timeouts)."""
        self.warp_ms += ms

    # --- bench side: inputs -------------------------------------------------------------------
    def feed_edges(self, edges, accelerated=False, lead_ms=20, continued=False):
        """edges: [(seat, level, t_ms relative to the batch)], any order within a seat is sorted.
        continued: a further slice of the same batch (same time base as the slice before)."""
        self.edges_fed += len(edges)
        if continued:
            base = self._batch_base
        else:
            base = self.now_ms() + lead_ms
            self._batch_base = base
        per_seat = {}
        for seat, level, t_ms in edges:
            per_seat.setdefault(seat, []).append((base + t_ms, level))
        for seat in per_seat:
            batch = per_seat[seat]
            batch.sort()
            src = self.pulse_sources[seat]
            if src.edges and src.edges[-1][0] > batch[0][0]:
                shift = src.edges[-1][0] - batch[0][0] + 1
                batch = [(t + shift, lv) for t, lv in batch]
            src.edges.extend(batch)
        if accelerated:
            self.accelerated = True

    def pending_edges(self):
        return sum(len(s.edges) for s in self.pulse_sources)

    def note_flash_write(self):
        self.flash_writes += 1
        now = self._real_ms() + self.warp_ms
        self.blackouts.append((now, now + FLASH_BLACKOUT_MS))
        if len(self.blackouts) > 64:
            del self.blackouts[:32]

    def in_blackout(self, t_ms):
        for start, end in self.blackouts:
            if start <= t_ms < end:
                return True
        return False

    # --- contract ---------------------------------------------------------------------------
    def set_inhibit(self, seat, inhibited):
        if self.inhibit[seat] != inhibited:
            self.inhibit[seat] = inhibited
            self.outputs_changed = True

    def set_lamp(self, seat, lit):
        if self.lamps[seat] != lit:
            self.lamps[seat] = lit
            self.outputs_changed = True

    def show(self, text, blink=False):
        self.display = (text, blink)
        self.outputs_changed = True

    def read_keys(self):
        return self.keys

    def read_spots(self):
        return self.spots

    def service_switch(self):
        return self.switch

    def link_read(self):
        if not self.rx:
            return b""
        data = bytes(self.rx)
        self.rx = bytearray()
        return data

    def link_write(self, data):
        self.tx.extend(data)

    def reset(self):
        sys.exit(1)  # the supervisor restarts the interpreter, as a watchdog reset would

    def outputs(self):
        return {"display": self.display[0], "blink": self.display[1], "inhibit": self.inhibit,
                "lamps": self.lamps, "flash_writes": self.flash_writes, "edges_fed": self.edges_fed}

    def apply_bench(self, msg):
        """One message from the bench (supervisor): the table of what it may set."""
        self.outputs_changed = True  # every bench message gets the outputs back
        if "edges" in msg:
            self.feed_edges(msg["edges"], bool(msg.get("accelerated")), continued=bool(msg.get("continue")))
        if "keys" in msg:
            self.keys = msg["keys"]
        if "spots" in msg:
            self.spots = msg["spots"]
        if "switch" in msg:
            self.switch = bool(msg["switch"])
        if "advance_ms" in msg:
            self.advance(msg["advance_ms"])
        if "backend" in msg:
            for src in self.pulse_sources:
                src.backend = msg["backend"]


def run(root="."):
    """Boot the firmware on the virtual board. The supervisor (`tablectl sim`) serves two Unix
    sockets: the host link (bytes, relayed to the pseudo-terminal the host opens) and the bench
    (JSON lines: pin levels in, outputs out). Returns False to drop to the REPL (service sequence)."""
    import gc
    import select
    import socket

    import micropython
    from boards.selfcheck import manifest_checker
    from table.app import TableApp

    board = SimBoard(root, os.getenv("TABLE_SIM_ID") or "sim-0001",
                     int(os.getenv("TABLE_SIM_SEATS") or "8"), 8, os.getenv("TABLE_SIM_BACKEND") or "pio")
    state_dir = os.getenv("TABLE_SIM_STATE") or ".."
    bench = _unix_connect(socket, state_dir + "/bench.sock")
    poller = select.poll()
    poller.register(bench, select.POLLIN)
    bench_buf = b""
    # The bench answers with the pin levels it holds now: the service sequence reads them at boot.
    bench.send(b'{"hello":1}\n')
    for _ in range(100):
        if poller.poll(20):
            bench_buf += bench.recv(65536)
            if b"\n" in bench_buf:
                break
    bench_buf = _bench_lines(board, bench_buf)
    if board.service_switch() and board.keys & 0x8:
        # Service sequence: key switch on and service key held at boot -> the REPL, for mpremote.
        # The unix port cannot fall into its REPL from a script, so the supervisor starts one.
        bench.close()
        sys.exit(EXIT_TO_REPL)
    micropython.kbd_intr(-1)  # the protocol port is not a REPL: 0x03 is data
    link = _unix_connect(socket, state_dir + "/link.sock")
    poller.register(link, select.POLLIN)
    app = TableApp(board, board.now_ms(), manifest_checker(root))
    pending = 0
    while True:
        now = board.now_ms()
        app.step(now)
        left = board.pending_edges()
        if left != pending and (left == 0 or pending == 0):
            board.outputs_changed = True
        pending = left
        if board.tx:
            _send_all(link, board.tx)
            board.tx = bytearray()
        if board.outputs_changed:
            board.outputs_changed = False
            out = board.outputs()
            out["now_ms"] = now
            # Wall-clock ms at board time 0: lets the bench place board times on the host's clock.
            out["epoch_ms"] = time.time_ns() // 1000000 - board.now_ms() if hasattr(time, "time_ns") else None
            out["state"] = app.table_state()
            out["meter"] = app.state["meter"]
            out["pending_edges"] = board.pending_edges()
            # The seats the table plays (its config) and each one's tokens credited so far: the
            # bench refuses a seat not in play and reports what a coin train actually credited.
            out["boot_count"] = app.state["boots"]  # the board's own count (status boot_count)
            out["seats_played"] = app.seats
            out["coins"] = [app.state["c%d" % i] for i in range(app.seats)]
            out["heap_free"] = gc.mem_free()
            _send_all(bench, json.dumps({"out": out}).encode() + b"\n")
        for obj, event in poller.poll(0 if board.accelerated else 2):
            is_bench = obj is bench or obj == bench.fileno()
            chunk = (bench if is_bench else link).recv(4096)  # a 64 KB buffer can fail on a fragmented heap
            if not chunk:
                return True  # supervisor gone: power off
            if is_bench:
                bench_buf = _bench_lines(board, bench_buf + chunk)
                if not bench_buf:
                    # Collect between bench messages, before their garbage interleaves with
                    # what the firmware keeps: the unix port's 2 MB heap does not compact.
                    gc.collect()
            else:
                board.rx.extend(chunk)


def _unix_connect(socket, path):
    """The unix port's connect() takes a raw sockaddr: sockaddr_un is family (native u16) + path."""
    import struct
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    sock.connect(struct.pack("H", socket.AF_UNIX) + path.encode() + b"\x00")
    return sock


def _send_all(sock, data):
    view = memoryview(data)
    while len(view):
        n = sock.send(view)
        view = view[n:]


def _bench_lines(board, buf):
    while b"\n" in buf:
        line, buf = buf.split(b"\n", 1)
        if line.strip():
            try:
                msg = json.loads(line)
            except ValueError:
                continue
            if isinstance(msg, dict):
                board.apply_bench(msg)
    return buf




def hard_reset():
    sys.exit(1)
