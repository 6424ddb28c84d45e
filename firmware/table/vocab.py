"""The table's vocabulary, defined once for both sides: the board's states and inputs, every
command it takes (with its class). The event kinds, what each event carries, and each command's
arguments with their rules: table/schema.py (the host's and the tests', not imported by the board).

Every name here costs the board heap (on the unix-port interpreter a name is a qstr, and a new one
can make the interpreter take another 8 KB qstr pool; the 128K-heap session is `bench_decoder.py`'s
record): what only the host reads goes in schema.py.

The board (table/app.py, table/commands.py) writes these words; the host (tablectl: ledger,
reconcile, report, service) reads them from here too, so a word renamed here is renamed on both
sides at once, and a word used but not defined here is caught by the tests
(tests/firmware/mp_test_vocab.py runs the board and checks every event it records against
schema.EVENTS).

Adding a command: one line in COMMANDS, its handler `cmd_<name>` in table/commands.py, and its
CLI verb (docs/ARCHITECTURE.md shows a real one); if it takes arguments, their line in
schema.ARGS.
"""

# What the board's hello and status say it runs, and the project's one version: the host package
# (setup.py) and the boards' package-*.json (tablectl/deploy.py) take it from here.
FIRMWARE_VERSION = "0.2.0"

# --- the table's states ----------------------------------------------------------------------
OPEN = "OPEN"
LOCKED = "LOCKED"
JACKPOT_PENDING = "JACKPOT_PENDING"
SERVICE = "SERVICE"
FAULT = "FAULT"  # shown while any fault is raised; the base state underneath is kept

KEY_NAMES = ("lock", "unlock", "jackpot", "service")  # the dealer's keypad, bit 0 upwards
SPOT_NAMES = ("ante", "bet", "bonus")                 # the bet spots of one seat

# --- commands --------------------------------------------------------------------------------
# What a command may do decides who may send it:
READ = 0            # reads only: changes nothing, its reply may be repeated from a cache
PLAY = 1            # moves the table the way the dealer's keypad does (usable on a bench
                     # board with no key yet; signed like every frame once one is provisioned)
GUARDED = 2         # moves money, configuration or the books: refused on a board with no key
KEYING = 3          # installs the key: the one command a keyed board takes unsigned, and only
                     # with its service key switch turned on by hand
REPAIR = 4          # guarded, and the one command a board with a storage fault still takes

# name -> class. A command's arguments and their rules are in table/schema.py ARGS (checked by the
# host's service before anything is recorded or signed; the board checks again in the handler,
# against the table's own state).
COMMANDS = {
    "status": READ,
    "meters": READ,
    "config_get": READ,
    "diag": READ,
    "checksums": READ,
    "loop_stats": READ,
    "lock": PLAY,
    "unlock": PLAY,
    "display_test": PLAY,
    "linked": PLAY,  # a linked pool's amount, or "lost" (docs/POOL.md)
    "provision": KEYING,
    "service": GUARDED,
    "config_set": GUARDED,
    "meter_set": GUARDED,
    "award": GUARDED,
    "clear": GUARDED,
    "key_change": GUARDED,
    "storage_repair": REPAIR,
    "verify_software": READ,  # HMACs of the firmware files keyed with the regulator's seed
}


READ_COMMANDS = tuple(name for name in COMMANDS if COMMANDS[name] == READ)
GUARDED_COMMANDS = tuple(name for name in COMMANDS if COMMANDS[name] in (GUARDED, REPAIR))  # need a key
PROVISION = "provision"
