"""`tablectl verify-software --seed HEX`: the regulator's check of the program on the board.

The regulator chooses a seed on the spot (Ohio Admin. Code 3772-11-29: HMAC-SHA1 over each program
medium on demand; Kansas K.A.R. 112-110-5: signatures from fresh random seeds; 9 NYCRR 5319.14: at
least a 128-bit hash). The board computes HMAC-SHA256 and HMAC-SHA1 of every program file keyed
with it (its `verify_software` command, from the files as they are on its flash); this host computes
the same over the release's files (--source, the firmware tree `tablectl flash` deploys). A plain
`checksums` answer could come from a table kept on a doctored board; a keyed one cannot. The seed,
the time and the result go into the ledger (a `software_verified` row), match or not.
"""
import hashlib
import hmac
import json
import os
import sys
import time

from .. import FIRMWARE_DIR
from ..errors import TablectlError

HELP = "check the board's program files with a seed the regulator chooses (HMAC-SHA256 and HMAC-SHA1)"
EXAMPLE = "tablectl verify-software --seed 5f0c9a7e3b21d4c68e7f1029ab3cd4e5"
BATCH = 5  # files a request: each answer fits one frame (1 KiB of body)


def add_arguments(p):
    from ..client import add_target_arguments
    add_target_arguments(p)
    p.add_argument("--seed", required=True, metavar="HEX",
                   help="16 to 64 bytes as hex digits, chosen by the regulator now (e.g. from a die or `openssl rand -hex 16`)")
    p.add_argument("--source", default=FIRMWARE_DIR, help="the release's firmware tree (default: this tablectl's)")
    p.add_argument("--json", action="store_true")


def release_macs(files, seed):
    """{name: [HMAC-SHA256 hex, HMAC-SHA1 hex]} over the release's files."""
    out = {}
    for name, path in files:
        with open(path, "rb") as f:
            data = f.read()
        out[name] = [hmac.new(seed, data, hashlib.sha256).hexdigest(), hmac.new(seed, data, hashlib.sha1).hexdigest()]
    return out


def run(args):
    from ..client import Target
    from ..deploy import board_files, board_for_platform
    from ..ledger import Ledger
    text = (args.seed or "").strip().lower()
    if not 32 <= len(text) <= 128 or len(text) % 2 or any(c not in "0123456789abcdef" for c in text):
        raise TablectlError("--seed must be 16 to 64 bytes written as hex digits (32 to 128 of them), "
                            "e.g. --seed %s" % os.urandom(16).hex())
    seed = bytes.fromhex(text)
    board_macs = {}
    with Target(args) as t:
        board = t.board_id()
        # The release's files of this kind of board (tablectl/deploy.py), by the platform it runs on.
        runtime = t.command("status", {}).get("runtime") or ""
        files = board_files(board_for_platform(runtime.split(" ")[0]), args.source)
        names = [name for name, _ in files]
        expected = release_macs(files, seed)
        started = time.monotonic()
        for i in range(0, len(names), BATCH):
            board_macs.update(t.command("verify_software", {"seed": text, "names": names[i:i + BATCH]})["files"])
        keyed_s = time.monotonic() - started
        started = time.monotonic()
        for i in range(0, len(names), BATCH):  # the plain sha256 of the same files, for the figure
            t.command("checksums", {"names": names[i:i + BATCH]})
        plain_s = time.monotonic() - started
    mismatched = []
    sha1_missing = []
    for name in names:
        got = board_macs.get(name)
        if not isinstance(got, list) or len(got) != 2 or got[0] != expected[name][0]:
            mismatched.append(name)
        elif got[1] is None:
            sha1_missing.append(name)
        elif got[1] != expected[name][1]:
            mismatched.append(name)
    ok = not mismatched
    result = {"board": board, "seed": text, "at": time.time(), "files": len(names), "ok": ok,
              "mismatched": mismatched, "sha1_not_on_board": len(sha1_missing),
              "seconds": {"verify_software": round(keyed_s, 3), "checksums": round(plain_s, 3)}}
    if os.path.exists(args.db):
        ledger = Ledger(args.db)
        try:
            ledger.note(board, "software_verified", result)
        finally:
            ledger.close()
        result["recorded"] = True
    else:
        result["recorded"] = False
    if args.json:
        print(json.dumps(result, sort_keys=True))
    else:
        print("board %s: %d program files, seed %s: %s (HMAC-SHA256%s); board %.2f s, plain checksums %.2f s%s"
              % (board, len(names), text, "every file matches the release" if ok else
                 "%d file(s) DIFFER: %s" % (len(mismatched), ", ".join(mismatched[:8])),
                 " and HMAC-SHA1" if not sha1_missing else "; no sha1 in the board's build",
                 keyed_s, plain_s, "; recorded in %s" % args.db if result["recorded"] else
                 "; not recorded (no ledger at %s)" % args.db))
    if not ok:
        sys.stdout.flush()
        raise TablectlError("the board's program differs from the release in %d file(s): %s"
                            % (len(mismatched), ", ".join(mismatched[:8])))
    return 0
