"""The emulated chip's clock and the Pico flash chip's busy times, in emulated nanoseconds."""
NS_PER_MS = 1000000
CPU_HZ = 125000000
# Edges start this long after they reach the supervisor, so the first one is never in the past.
EDGE_LEAD_MS = 20
# With --realtime the emulator may run at most this far ahead of the wall clock (it waits), so
# the board's timeouts mean what they say to a host on the other end of the pty.
PACE_STEP_NS = 1 * NS_PER_MS
# The Pico's W25Q16JV is busy (status register bit 0) this long after a command, typical figures
# from Winbond's datasheet: the SDK polls that bit with interrupts off, so the CPU really stops
# for a sector erase while the PIO state machines keep counting (what the board's PIO coin counting is designed for).
SECTOR_ERASE_NS = 45 * NS_PER_MS
BLOCK_ERASE_NS = 150 * NS_PER_MS
PAGE_PROGRAM_NS = 400000
