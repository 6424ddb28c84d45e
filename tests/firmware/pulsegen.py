"""Random acceptor pulse trains (both interpreters): widths jittered +-20 %, glitches in the idle
gaps, contact bounce at the edges. Deterministic for a seed (own PRNG)."""
from fuzzkit import XorShift
from table.pulse import COIN


class Train:
    """Edges [(t_ms, level)] of `coins` tokens on one seat, and the truth: tokens sent."""

    def __init__(self, rng, coins, pulses_per_coin=1, width_ms=50, gap_ms=50, idle_ms=500,
                 glitch_every=3, bounce_every=2, start_ms=0):
        self.edges = []
        self.coins = coins
        self.glitches = 0
        t = start_ms
        for n in range(coins):
            for p in range(pulses_per_coin):
                w = jitter(rng, width_ms)
                if bounce_every and rng.below(bounce_every) == 0:
                    # leading-edge bounce: 1-2 ms active, 1-2 ms released, then the real pulse
                    b = 1 + rng.below(2)
                    self.edges.append((t, 1))
                    self.edges.append((t + b, 0))
                    t += b + 1 + rng.below(2)
                    self.glitches += 1
                self.edges.append((t, 1))
                self.edges.append((t + w, 0))
                t += w
                if bounce_every and rng.below(bounce_every) == 0:
                    # trailing-edge bounce: the contact touches again for 1-2 ms
                    g = 1 + rng.below(2)
                    self.edges.append((t + g, 1))
                    self.edges.append((t + g + 1 + rng.below(2), 0))
                    t += g + 3
                    self.glitches += 1
                if p < pulses_per_coin - 1:
                    t += jitter(rng, gap_ms)
            idle = jitter(rng, idle_ms)
            if glitch_every and rng.below(glitch_every) == 0:
                g = t + idle // 3 + rng.below(idle // 3)
                self.edges.append((g, 1))
                self.edges.append((g + 1 + rng.below(4), 0))  # a 1-4 ms spike: never a token
                self.glitches += 1
            t += idle
        self.end_ms = t


def jitter(rng, ms):
    """ms +- 20 %, uniformly, in whole ms."""
    span = ms * 2 // 5
    return ms - ms // 5 + rng.below(span + 1)


def decode_direct(decoder, train):
    """Completed pulses straight into CoinDecoder.pulse (what a PIO/PCNT back end delivers)."""
    out = []
    coins = 0
    level = 0
    since = 0
    for t, lv in train.edges:
        if lv == level:
            continue
        level = lv
        if lv:
            since = t
        else:
            decoder.pulse(t, t - since, out)
    decoder.poll(train.end_ms + 10000, 0, out)
    for kind, _ in out:
        if kind == COIN:
            coins += 1
    return coins, out


def decode_interleaved(sources, decoders, trains, step_ms=0):
    """All seats at once, as TableApp does: each seat's SimPulseSource polled at every edge time
    of any seat (or every step_ms), completed pulses into its decoder, decoder.poll() each turn.
    Returns coins per seat."""
    times = []
    for s in range(len(trains)):
        for t, lv in trains[s].edges:
            sources[s].schedule(t, lv)
            times.append(t)
    times.sort()
    end = max(tr.end_ms for tr in trains) + 10000
    times.append(end)
    coins = [0] * len(trains)
    pulses = []
    out = []
    last = -1
    for now in times:
        if now == last:
            continue
        last = now
        for s in range(len(trains)):
            del pulses[:]
            del out[:]
            sources[s].poll(now, pulses)
            d = decoders[s]
            for end_ms, width_ms in pulses:
                d.pulse(end_ms, width_ms, out)
            d.poll(now, sources[s].held_ms(now), out)
            for kind, _ in out:
                if kind == COIN:
                    coins[s] += 1
    return coins
