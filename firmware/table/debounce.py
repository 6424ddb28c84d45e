"""Debounce a bitmask of raw inputs (keys, bet spots): act on the first edge, then ignore
that input for debounce_ms, so a bouncing contact gives one change and the response is immediate."""


class Debouncer:
    def __init__(self, debounce_ms, initial=0):
        self.debounce_ms = debounce_ms
        self.state = initial
        self._quiet_until = {}

    def update(self, raw, now_ms):
        """Feed the raw bitmask; return (changed_bits_mask, new_state)."""
        changed = (raw ^ self.state)
        if not changed:
            return 0, self.state
        accepted = 0
        bit = 0
        while changed >> bit:
            mask = 1 << bit
            if changed & mask:
                until = self._quiet_until.get(bit, 0)
                if now_ms >= until:
                    accepted |= mask
                    self._quiet_until[bit] = now_ms + self.debounce_ms
            bit += 1
        self.state ^= accepted
        return accepted, self.state
