"""What the table logic needs from a board. pico.py, esp32.py and sim.py each build one.

The logic in table/ sees only this: plain integers, bytes and booleans, and a clock passed in.
Every method here is cheap and never blocks (the main loop calls them every few ms).
Times are board milliseconds from now_ms(): monotonic and non-wrapping (the board extends
ticks_ms past its wrap), so the logic can subtract them directly.
"""


class PulseSource:
    """One seat's acceptor pulse line, behind the counter back end the board chose.

    The back end (rp2 PIO, esp32 PCNT, hard-IRQ timestamp ring, simulator) records complete
    pulses while the main loop is busy, including while flash is being written.
    """

    def poll(self, now_ms, out):
        """Append (end_ms, width_ms) for every pulse completed since the last poll to `out`.

        width_ms is None where the back end cannot measure widths (it filters glitches itself).
        A negative width_ms -n marks n pulses the back end lost at that point (its buffer
        overflowed); the decoder reports them as LOST. Returns the number of pulses appended. Must not allocate per call on the boards.
        """
        raise NotImplementedError

    def held_ms(self, now_ms):
        """How long the line has been continuously active up to now (0 when idle): jam detection."""
        raise NotImplementedError

    def edges_lost(self):
        """Edges the back end knows it missed (ring overflow). 0 for back ends that cannot lose."""
        return 0


class Board:
    """A controller board. Attributes the app reads:

    board_id      str, unique per board (from the chip's unique id)
    max_seats     int, how many seats this board's pin map wires (the config picks 1..max_seats)
    pulse_sources list of PulseSource, one per wired seat
    display_digits int, digits on the meter display
    """

    board_id = "board"
    max_seats = 8
    display_digits = 8
    pulse_sources = ()
    # A NOR block device for the raw flash log (table/rawlog.py), or None: the journal then
    # lives in the board's files (nv).
    log_device = None
    # The live heap (bytes free right after a collection): the lowest the main loop saw, and how
    # many collections it was taken over (boards/hwboard.py run_board; diag reports both).
    heap_low = None
    heap_checks = 0

    def note_heap(self, free_bytes):
        self.heap_checks += 1
        if self.heap_low is None or free_bytes < self.heap_low:
            self.heap_low = free_bytes

    def now_ms(self):
        raise NotImplementedError

    # --- outputs -------------------------------------------------------------------------
    def set_inhibit(self, seat, inhibited):
        """Acceptor inhibit line for seat (0-based). Power-on default is inhibited."""
        raise NotImplementedError

    def set_lamp(self, seat, lit):
        raise NotImplementedError

    def show(self, text, blink=False):
        """Put text on the meter display: digits, '-', ' ', letters a 7-segment can draw;
        a '.' lights the decimal point of the character before it."""
        raise NotImplementedError

    # --- raw inputs (the logic debounces) ---------------------------------------------------
    def read_keys(self):
        """Bitmask of keypad keys held now: bit 0 lock, 1 unlock, 2 jackpot, 3 service."""
        raise NotImplementedError

    def read_spots(self):
        """Bitmask of bet-spot sensors covered now: bit seat*3 + (0 ante, 1 bet, 2 bonus)."""
        raise NotImplementedError

    def service_switch(self):
        """True while the technician's service key switch (physical presence) is on."""
        raise NotImplementedError

    # --- the host link --------------------------------------------------------------------
    def link_read(self):
        """Bytes received from the host since the last call (b'' when none)."""
        raise NotImplementedError

    def link_write(self, data):
        raise NotImplementedError

    # --- storage and supervision ------------------------------------------------------------
    nv = None  # drivers.nvfile.NvFiles (or a subclass): where meters and the outbox persist
    firmware_root = "/"  # where the firmware files (and manifest.json) are

    def file_checksums(self, names=None):
        """{name: sha256 hex or None} of the firmware files (all of them when names is None)."""
        from boards.selfcheck import file_checksums
        return file_checksums(self.firmware_root, names)

    def file_macs(self, names, seed):
        """{name: [HMAC-SHA256, HMAC-SHA1]} of these firmware files keyed with seed (selfcheck.py)."""
        from boards.selfcheck import file_macs
        return file_macs(self.firmware_root, names, seed)

    def feed_watchdog(self):
        pass

    def reset(self):
        raise NotImplementedError
