"""The bench: drives a virtual board's pins from outside (`tablectl bench`, and tests).

Talks to the simulator's control socket in the state directory. Pulse trains are built here as
timestamped edges (level 1 = the acceptor pulls its line active) and played by the board in
real time or, with accelerated=True, as fast as the firmware can decode them.
"""
import json
import os
import random
import socket
import time

from table import vocab

from tablectl.errors import TablectlError

# The keypad's keys by bit, as the board numbers them (table.vocab.KEY_NAMES, bit 0 upwards).
KEY_BITS = {name: bit for bit, name in enumerate(vocab.KEY_NAMES)}
SPOT_INDEX = {"ante": 0, "bet": 1, "bonus": 2}
GLITCH_WIDTH_MS = 2
# Tokens per seat in one batch of edges: 7 seats x 150 tokens x 2 edges stays well inside the
# request limit and the virtual board's heap.
CHUNK_TOKENS = 150


def coin_train(seat, count=1, pulses_per_coin=1, width_ms=50, gap_ms=50, coin_gap_ms=400,
               glitches=0, jitter=0.0, rng=None, start_ms=0):
    """Edges for `count` tokens on one seat. Returns (edges, end_ms).

    width_ms/gap_ms: each pulse and the pause between a token's pulses; coin_gap_ms: the idle
    time between tokens. glitches: narrow spikes spread over the idle gaps (never counted).
    jitter: +- fraction applied to every width and gap (acceptors are not crystal-timed).
    """
    rng = rng or random.Random(seat)
    edges = []
    t = start_ms
    glitch_every = max(1, count // glitches) if glitches else 0
    made = 0

    def jittered(ms):
        if not jitter:
            return ms
        return max(1, int(round(ms * (1 + rng.uniform(-jitter, jitter)))))

    for n in range(count):
        for p in range(pulses_per_coin):
            w = jittered(width_ms)
            edges.append([seat, 1, t])
            edges.append([seat, 0, t + w])
            t += w + (jittered(gap_ms) if p < pulses_per_coin - 1 else 0)
        if glitches and made < glitches and n % glitch_every == 0:
            g = t + coin_gap_ms // 3
            edges.append([seat, 1, g])
            edges.append([seat, 0, g + GLITCH_WIDTH_MS])
            made += 1
        t += jittered(coin_gap_ms)
    while made < glitches:  # more glitches than tokens: put the rest after the last
        edges.append([seat, 1, t])
        edges.append([seat, 0, t + GLITCH_WIDTH_MS])
        t += coin_gap_ms // 2
        made += 1
    return edges, t


class Bench:
    def __init__(self, state_dir, timeout_s=30.0, progress=None):
        """progress(text): told of a wait that goes on (the CLI prints it; a wait is never silent)."""
        self.state_dir = state_dir
        self.progress = progress or (lambda text: None)
        path = os.path.join(state_dir, "control.sock")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout_s)
        try:
            self.sock.connect(path)
        except OSError:
            raise TablectlError("no virtual board runs on %s: start one with `tablectl sim --state %s`"
                                % (state_dir, state_dir))
        self.buf = b""

    def close(self):
        self.sock.close()

    def request(self, op, **fields):
        fields["op"] = op
        self.sock.sendall(json.dumps(fields).encode() + b"\n")
        while b"\n" not in self.buf:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise TablectlError("the virtual board's supervisor closed the bench connection")
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        reply = json.loads(line)
        if not reply.get("ok"):
            raise TablectlError(reply.get("error", "bench request failed"))
        return reply

    # --- inputs ------------------------------------------------------------------------------
    def edges(self, edges, accelerated=False, boot_wait_s=15.0):
        """Hand a batch of edges to the board; waits while it is still booting (an emulated
        Pico's boot takes minutes: 20 times as long), saying so every 2 s."""
        if self.is_pico():
            boot_wait_s *= 20
        start = time.monotonic()
        said = None
        while True:
            try:
                return self.request("edges", edges=edges, accelerated=accelerated)
            except TablectlError as exc:
                if "booting" not in str(exc):
                    raise
                now = time.monotonic()
                if now - start > boot_wait_s:
                    raise TablectlError("the board did not finish booting within %.0f s; no token was dropped"
                                        % boot_wait_s)
                # said at the first refusal (a fast boot may be over before the next 2 s), then
                # every 2 s, so a long wait is never silent
                if said is None or now - said >= 2.0:
                    said = now
                    self.progress("waiting for the board to finish booting before dropping the tokens (%.0f s)"
                                  % (now - start))
                time.sleep(0.05)

    def coin(self, seat, count=1, width_ms=50, gap_ms=50, glitches=0, pulses_per_coin=1,
             coin_gap_ms=400, accelerated=False, wait=True, jitter=0.0):
        return self.coins({seat: count}, width_ms, gap_ms, glitches, pulses_per_coin, coin_gap_ms,
                          accelerated, wait, jitter)

    def coins(self, counts, width_ms=50, gap_ms=50, glitches=0, pulses_per_coin=1, coin_gap_ms=400,
              accelerated=False, wait=True, jitter=0.0, chunk_tokens=CHUNK_TOKENS):
        """Tokens on several seats at once ({seat: count}), all seats feeding in parallel.

        Long trains go in chunks of whole tokens, each sent when the board has played the one
        before (as a jig streams them): the board holds unplayed edges in its own memory."""
        left = dict(counts)
        rng = random.Random(sum(counts.values()))
        total_ms = 0
        first = True
        while any(left.values()):
            edges = []
            span = 0
            for seat in sorted(left):
                n = min(left[seat], chunk_tokens)
                if not n:
                    continue
                left[seat] -= n
                share = glitches * n // max(1, counts[seat]) if glitches else 0
                e, end = coin_train(seat, n, pulses_per_coin, width_ms, gap_ms, coin_gap_ms, share, jitter, rng)
                edges += e
                span = max(span, end)
            if not first:
                self.wait_idle(timeout_s=max(60.0, span / 1000.0 * 2 + 30), settle_ms=0)
            self.edges(edges, accelerated)
            total_ms += span
            first = False
        if wait:
            self.wait_idle(timeout_s=max(30.0, total_ms / 1000.0 * (0.2 if accelerated else 1.5) + 10))
        return total_ms

    def wait_idle(self, timeout_s=30.0, settle_ms=450):
        """Until the board has played every edge sent, plus the idle gap that ends a token."""
        if self.is_pico():
            timeout_s *= 20  # the emulated core runs many times slower than a Pico (tabledev/EMULATOR.md)
        start = said = time.monotonic()
        deadline = start + timeout_s
        while True:
            reply = self.request("outputs")
            out = reply["outputs"]
            # Idle means: the board has taken in every edge sent (a large batch is still on its
            # way for a while) and has played them all.
            if out.get("pending_edges") == 0 and out.get("edges_fed", 0) >= reply.get("edges_sent", 0):
                break
            if time.monotonic() - said >= 2.0:
                said = time.monotonic()
                self.progress("the board is playing the pulses: %s edges to go (%.0f s)"
                              % (out.get("pending_edges"), said - start))
            if time.monotonic() > deadline:
                raise TablectlError("the virtual board did not play its pulses within %.0f s" % timeout_s)
            time.sleep(0.02)
        self.settle(settle_ms)
        return self.request("outputs")["outputs"]

    def is_pico(self):
        if not hasattr(self, "_pico"):
            self._pico = self.request("outputs").get("board") == "pico"
        return self._pico

    def settle(self, ms):
        """Let ms of board time pass: the emulated Pico keeps its own clock (slower than the wall
        clock while its core is busy), so its time is read from it, not slept on."""
        if not self.is_pico():
            time.sleep(ms / 1000.0)
            return
        now = self.request("outputs")["outputs"]["now_ms"]
        end = now + ms
        # "Stopped" is a clock that did not move for a minute, not one that is slow: on a loaded
        # machine the emulated Pico's time can run a hundred times slower than the wall clock.
        deadline = time.monotonic() + 60
        while now < end:
            time.sleep(0.02)
            was, now = now, self.request("outputs")["outputs"]["now_ms"]
            if now > was:
                deadline = time.monotonic() + 60
            elif time.monotonic() > deadline:
                raise TablectlError("the emulated Pico's clock stopped (no progress in 60 s)")

    def key(self, name, hold_ms=80):
        if name not in KEY_BITS:
            raise TablectlError("unknown key %r: use one of %s" % (name, ", ".join(KEY_BITS)))
        if self.is_pico():
            # Held on the emulator's clock: a wall-clock hold is a few emulated ms on a busy core.
            self.request("press", bit=KEY_BITS[name], hold_ms=hold_ms)
            self.settle(hold_ms + 60)
            return
        pins = self.request("outputs")["pins"]
        self.request("keys", value=pins["keys"] | (1 << KEY_BITS[name]))
        time.sleep(hold_ms / 1000.0)
        self.request("keys", value=pins["keys"] & ~(1 << KEY_BITS[name]))
        time.sleep(0.06)

    def hold_keys(self, mask):
        return self.request("keys", value=mask)

    def spot(self, seat, name, on):
        if name not in SPOT_INDEX:
            raise TablectlError("unknown bet spot %r: use ante, bet or bonus" % name)
        pins = self.request("outputs")["pins"]
        bit = 1 << (seat * 3 + SPOT_INDEX[name])
        value = pins["spots"] | bit if on else pins["spots"] & ~bit
        return self.request("spots", value=value)

    def switch(self, on):
        return self.request("switch", value=bool(on))

    def power_cut(self):
        return self.request("power_cut")

    def noise(self, count=16):
        return self.request("noise", count=count)

    def garbage(self, count=64):
        return self.request("garbage", count=count)

    def advance(self, ms):
        return self.request("advance", ms=ms)

    def service_boot(self):
        """The service sequence: key switch on, service key held, power cycle -> REPL on the port."""
        self.switch(True)
        self.hold_keys(1 << KEY_BITS["service"])
        self.power_cut()
        start = said = time.monotonic()
        deadline = start + (180 if self.is_pico() else 10)
        while self.request("outputs")["mode"] != "repl":
            now = time.monotonic()
            if now > deadline:
                raise TablectlError("the board did not come up in its REPL")
            if now - said >= 2.0:
                said = now
                self.progress("waiting for the board to boot into its REPL (%.0f s)" % (now - start))
            time.sleep(0.05)
        self.hold_keys(0)
        # The switch is read at boot: the REPL stays up without it, and a board left with its
        # switch on takes a provision from anyone on the wire (a technician turns the key back).
        self.switch(False)

    # --- outputs -----------------------------------------------------------------------------
    def outputs(self):
        return self.request("outputs")["outputs"]

    def display(self):
        return self.outputs().get("display", "")

    def lamps(self):
        return self.outputs().get("lamps", [])

    def inhibit(self):
        return self.outputs().get("inhibit", [])

    def wait_for(self, predicate, timeout_s=10.0, what="the board"):
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            out = self.request("outputs")
            if predicate(out["outputs"], out):
                return out
            time.sleep(0.02)
        raise TablectlError("timed out waiting for %s" % what)
