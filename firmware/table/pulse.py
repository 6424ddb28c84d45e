"""Acceptor pulse trains to tokens, one decoder per seat. Pure logic: times are passed in.

A CH-926-class acceptor signals one token with a burst of `pulses_per_coin` active pulses
(20, 50 or 100 ms each) and then stays idle. The decoder sees completed pulses from the board's
counter back end as (end_ms, width_ms) and the current time; it answers with outcomes:

A token is credited the moment its last pulse ends (the pulses_per_coin-th valid pulse of a
burst), not after the idle gap: the gap only closes the burst, and pulses left over at that point
(fewer than a whole token) are reported as BAD_COUNT. So the meter moves within a main-loop turn
of the last pulse, and a burst of k whole tokens still gives exactly k coins.

  COIN        a token decoded; detail = end_ms of its last pulse
  GLITCH      a pulse narrower than pulse_min_ms (noise, contact bounce): never credited
  OUT_OF_SPEC a pulse wider than pulse_max_ms but short of a jam: never credited
  BAD_COUNT   a burst whose pulse count is not a multiple of pulses_per_coin: not credited
  JAM / JAM_CLEARED  the line held active past jam_ms, and its release
  LOST        the back end's buffer overflowed: detail = how many pulses (or glitches) it lost.
              The burst in progress is dropped (its count is unknown); never guessed into a coin.
              A back end marks the place with a pulse of negative width (end_ms, -n).
"""

COIN = "coin"
GLITCH = "glitch"
OUT_OF_SPEC = "out_of_spec"
BAD_COUNT = "bad_count"
JAM = "jam"
JAM_CLEARED = "jam_cleared"
LOST = "lost"


class CoinDecoder:
    def __init__(self, pulses_per_coin, pulse_min_ms, pulse_max_ms, coin_gap_ms, jam_ms):
        self.pulses_per_coin = pulses_per_coin
        self.pulse_min_ms = pulse_min_ms
        self.pulse_max_ms = pulse_max_ms
        self.coin_gap_ms = coin_gap_ms
        self.jam_ms = jam_ms
        self.pending_pulses = 0
        self.last_pulse_end_ms = 0
        self.jammed = False
        self.glitches = 0
        self.coins = 0

    def pulse(self, end_ms, width_ms, out):
        """One completed pulse. Appends (outcome, detail) tuples to out."""
        if width_ms is not None and width_ms < 0:
            # -n: the back end lost n pulses here. Whatever the burst had is now unknown.
            self.pending_pulses = 0
            out.append((LOST, -width_ms))
            return
        # A new pulse after the idle gap belongs to a new token: finish the old one first.
        if self.pending_pulses and end_ms - (width_ms or 0) - self.last_pulse_end_ms >= self.coin_gap_ms:
            self._finish(out)
        if width_ms is not None:
            if width_ms < self.pulse_min_ms:
                self.glitches += 1
                out.append((GLITCH, width_ms))
                return
            if width_ms > self.pulse_max_ms:
                out.append((OUT_OF_SPEC, width_ms))
                return
        self.pending_pulses += 1
        self.last_pulse_end_ms = end_ms
        if self.pending_pulses == self.pulses_per_coin:
            self.pending_pulses = 0
            self.coins += 1
            out.append((COIN, end_ms))  # detail: when the token's last pulse ended

    def poll(self, now_ms, held_ms, out):
        """Time passes: end a burst after the idle gap (leftover pulses); watch for a jam."""
        if self.pending_pulses and now_ms - self.last_pulse_end_ms >= self.coin_gap_ms and held_ms == 0:
            self._finish(out)
        if held_ms >= self.jam_ms:
            if not self.jammed:
                self.jammed = True
                out.append((JAM, held_ms))
        elif self.jammed and held_ms == 0:
            self.jammed = False
            out.append((JAM_CLEARED, 0))

    def _finish(self, out):
        # Whole tokens were credited as they completed; what is left is less than one token.
        out.append((BAD_COUNT, self.pending_pulses))
        self.pending_pulses = 0
