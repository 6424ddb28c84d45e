"""`tablectl flash`: deploy the firmware to a board (real or virtual) through mpremote, then
verify the checksums the board itself reports.

The sequence is the same for a Pico, an ESP32 and the virtual board:
  1. the board must be at its REPL (the service sequence: key switch on, service key held at
     power-up); a board running the controller has no REPL on its port, and we say so;
  2. the board's file set (tablectl/deploy.py: the Pico's, the ESP32's or the virtual board's,
     by the platform its REPL reports) is staged with a manifest.json of sha256 per file (the firmware's power-up
     self-check compares its files with it) and copied with one `mpremote fs cp` run;
  3. a soft reset at the friendly REPL boots main.py, i.e. the new controller;
  4. the controller's `checksums` command is asked for every file of the manifest and each
     answer compared with what was sent.
"""
from ..argtypes import ranged
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

from .. import FIRMWARE_DIR, HARDWARE_DIR
from ..deploy import board_files, board_for_platform
from ..errors import TablectlError

HELP = "deploy the firmware with mpremote and verify the checksums the board reports"
EXAMPLE = "tablectl flash --port /dev/ttyACM0   (board in its service sequence: REPL on the port)"

# sys.platform on the board -> the pin map it needs (the unix port, our virtual board, needs none)
PINMAPS = {"rp2": "pinmap_pico.json", "esp32": "pinmap_esp32.json"}
HW_CHOICES = ("auto", "pico", "esp32", "none")
RAW_BANNER = b"raw REPL; CTRL-B to exit"
CHECKSUM_BATCH = 6


def add_arguments(p):
    p.add_argument("--port", default=os.environ.get("TABLECTL_PORT"),
                   help="the board's serial port or pty (default: $TABLECTL_PORT)")
    p.add_argument("--hw", choices=HW_CHOICES, default="auto",
                   help="which pin map to deploy as /pinmap.json (auto: ask the board's sys.platform)")
    p.add_argument("--source", default=FIRMWARE_DIR, help="firmware tree to deploy (default: the repo's)")
    p.add_argument("--no-verify", action="store_true",
                   help="copy only: do not reset the board and check its checksums")
    p.add_argument("--boot-timeout", type=ranged(0.1, 86400, float, " s"), default=None,
                   help="seconds to wait for the new controller to answer after the reset (default 15, or "
                        "$TABLECTL_LINK_TIMEOUT_S for a slow emulated board)")
    from ..client import _Named
    p.add_argument("--db", default=os.environ.get("TABLECTL_DB", "tablectl.db"), action=_Named,
                   help="the ledger whose key store holds the board's table key (default: the ledger of the "
                        "`tablectl serve` holding the port, else $TABLECTL_DB or ./tablectl.db): a provisioned "
                        "board answers the check only to signed requests")
    p.add_argument("--json", action="store_true", help="print the result as JSON")


# --- staging -------------------------------------------------------------------------------------
def sha256_file(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(65536), b""):
            h.update(chunk)
    return h.hexdigest()


def firmware_files(source, pinmap=None, board="pico"):
    """[(name on the board, local path)] in a stable order: the board's list (tablectl/deploy.py,
    main.py first), then the pin map."""
    if not os.path.exists(os.path.join(source, "main.py")):
        raise TablectlError("no firmware at %s (main.py missing): give --source DIR" % source)
    files = board_files(board, source)
    if pinmap:
        files.append(("pinmap.json", pinmap))
    return files


def build_manifest(files):
    return {name: sha256_file(path) for name, path in files}


def stage(files, manifest, into):
    for name, path in files:
        dst = os.path.join(into, *name.split("/"))
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        shutil.copyfile(path, dst)
    with open(os.path.join(into, "manifest.json"), "w") as f:
        json.dump(manifest, f, sort_keys=True, indent=0)


# --- the board's REPL ----------------------------------------------------------------------------
def _read_until(ser, marker, timeout_s):
    buf = b""
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        chunk = ser.read(256)
        if chunk:
            buf += chunk
            if marker in buf:
                return buf
    return buf


# Asked of the board's REPL before anything is copied: its platform, and whether it holds a table
# key (a slot of table/keystore.py, or the one file of earlier firmware, in data/ relative to where
# its REPL starts: / on a Pico, the virtual board's folder).
def _probe():
    from table.keystore import LEGACY, SLOTS
    names = repr(tuple(SLOTS) + (LEGACY,)).encode()
    return (b"import sys,os\nk=0\nfor n in " + names + b":\n try:\n  k=k or (1 if os.stat('data/'+n)[6] else 0)\n"
            b" except OSError:\n  pass\nprint('PLAT='+sys.platform+' KEY='+str(k))\x04")


def probe_repl(port):
    """Returns (the board's sys.platform, whether it holds a table key) if its REPL answers,
    else raises with what to do."""
    from ..link import open_port
    ser = open_port(port, timeout=0.05)
    try:
        ser.write(b"\r\x03\x03")  # interrupt whatever runs at the REPL
        time.sleep(0.15)
        ser.reset_input_buffer()
        ser.write(b"\r\x01")  # raw REPL
        got = _read_until(ser, RAW_BANNER + b"\r\n>", 1.5)
        if RAW_BANNER in got:
            ser.write(_probe())
            out = _read_until(ser, b"\x04>", 3.0)
            ser.write(b"\x02")  # back to the friendly REPL, as mpremote expects to find it
            time.sleep(0.05)
            for part in out.split(b"PLAT=")[1:]:
                words = part.split(b"\r")[0].split(b"\n")[0].decode(errors="replace").split()
                return (words[0] if words else "unknown"), "KEY=1" in words
            return "unknown", False
    finally:
        ser.close()
    _explain_no_repl(port)


def _explain_no_repl(port):
    from ..link import BoardLink, open_port
    ser = open_port(port)
    try:
        link = BoardLink(ser)
        try:
            hello = link.hello(timeout_s=2.0)
        except TablectlError:
            hello = None
    finally:
        ser.close()
    if hello is not None:
        raise TablectlError(
            "the board on %s (%s) is running the table controller, which has no REPL on its port, so "
            "mpremote cannot reach it. Put it in the service sequence: service key switch on, hold the "
            "service key while you power-cycle it (virtual board: `tablectl bench --state DIR service-boot`), "
            "then run `tablectl flash --port %s` again (a `tablectl serve` on the port lends it to flash)"
            % (port, hello.get("b", "board"), port))
    raise TablectlError(
        "nothing on %s answered, neither a REPL nor the table controller: check the cable and power, "
        "stop any other program using the port (`tablectl serve`, a terminal), and boot the board with the "
        "service sequence (virtual board: `tablectl bench --state DIR service-boot`)" % port)


def run_mpremote(port, staged, names, out):
    """One mpremote run copies every file (one `cp` each: its line is our progress bar's step)."""
    dirs = sorted({n.rsplit("/", 1)[0] for n in names if "/" in n})
    mkdirs = "import os\nfor d in %r:\n try: os.mkdir(d)\n except OSError: pass\n" % (dirs,)
    cmd = [sys.executable, "-m", "mpremote", "connect", port, "exec", mkdirs]
    # the manifest goes last: a copy cut short leaves the old manifest, and the self-check says so
    for name in list(names) + ["manifest.json"]:
        cmd += ["+", "fs", "cp", os.path.join(staged, *name.split("/")), ":" + name]
    total = len(names) + 1
    done = 0
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    lines = []
    try:
        for line in proc.stdout:
            line = line.rstrip()
            lines.append(line)
            if line.startswith("cp ") and line.count(" :") == 1:
                done += 1
                _progress(out, done, total, line.rsplit(" :", 1)[1])
        code = proc.wait(timeout=300)
    except BaseException:
        proc.kill()
        proc.wait()
        raise
    if out is not None and done:
        if _redrawn(out):
            out.write("\n")
        else:
            out.write("  copied %d of %d files\n" % (done, total))
    if code != 0 or done != total:
        tail = "; ".join(l for l in lines[-3:] if l)
        raise TablectlError("mpremote could not copy the firmware (%s): is the board still at its REPL?"
                            % (tail or "exit %d" % code))
    return done


def _redrawn(out):
    """A bar redrawn in place with \\r only on a terminal: into a pipe or a log file it would be one
    unreadable line, so there the copy says one line when it is done."""
    isatty = getattr(out, "isatty", None)
    return bool(isatty and isatty())


def _progress(out, done, total, name):
    if out is None or not _redrawn(out):
        return
    width = 30
    filled = width * done // total
    out.write("\r  [%s%s] %3d/%d %-28s" % ("#" * filled, "." * (width - filled), done, total, name[-28:]))
    out.flush()


def soft_reset(port):
    """Ctrl-D at the friendly REPL: the board soft-reboots and runs main.py (the controller)."""
    from ..link import open_port
    ser = open_port(port, timeout=0.05)
    try:
        ser.write(b"\r\x03\x03\x02")
        time.sleep(0.15)
        ser.reset_input_buffer()
        ser.write(b"\x04")
        ser.flush()
        time.sleep(0.2)
    finally:
        ser.close()


class Refused(Exception):
    """The board answered, and said no: asking again will not help."""


def _answer(link, name, args, db):
    from ..link import link_timeout_s
    reply = link.command(name, args, timeout_s=link_timeout_s(5.0))
    if not reply.get("ok"):
        hint = ""
        if reply.get("err") == "BAD_MAC":
            hint = ("; the board holds a table key and answers only signed requests: give --db the ledger "
                    "it was provisioned with (its keys are in %s.keys)" % (db or "LEDGER"))
        raise Refused("board %s refused %s: %s (%s)%s; the files are copied, the check was not made"
                      % (link.board_id, name, reply.get("msg"), reply.get("err"), hint))
    return reply


def verify(port, manifest, timeout_s, db=None):
    from ..keys import KeyStore
    from ..link import BoardLink, link_timeout_s, open_port
    keys = KeyStore.for_ledger(db) if db else None
    hello_s = link_timeout_s(3.0)
    deadline = time.monotonic() + timeout_s
    last_error = None
    while time.monotonic() < deadline:
        ser = open_port(port)
        try:
            link = BoardLink(ser, keys)
            link.hello(timeout_s=min(hello_s, max(0.5, deadline - time.monotonic())))
            if link.key_missing:
                # It signs, and nothing it signs can be checked here: nothing of it is taken.
                raise Refused("board %s holds a table key and the key store %s holds no key for it: give --db "
                              "the ledger it was provisioned with; the files are copied, the check was not made"
                              % (link.board_id, keys.folder if keys else "(none: no --db)"))
            # A few names per request: every answer must fit in one frame (1 KiB of body), and
            # the board's full list would not.
            names = sorted(manifest)
            files = {}
            for i in range(0, len(names), CHECKSUM_BATCH):
                reply = _answer(link, "checksums", {"names": names[i:i + CHECKSUM_BATCH]}, db)
                files.update(reply.get("files", {}))
            status = _answer(link, "status", {}, db)
            return link.board_id, files, status
        except Refused as exc:
            raise TablectlError(str(exc))
        except TablectlError as exc:
            last_error = exc
        finally:
            ser.close()
        time.sleep(0.3)
    raise TablectlError("the board did not come back as the controller within %.0f s after the reset (%s): "
                        "power-cycle it and run `tablectl status --port %s`" % (timeout_s, last_error, port))


def _port_busy(port, pid, program):
    if " serve" in " " + program or program.startswith("tablectl serve"):
        return ("port %s is held by `tablectl serve` (pid %s): stop tablectl serve first (Ctrl-C in its "
                "terminal, `kill %s` or `systemctl stop tablectl`), flash, then start it again" % (port, pid, pid))
    return ("port %s is in use by pid %s%s: stop it first, then flash"
            % (port, pid, " (%s)" % program[:60] if program else ""))


def run(args):
    if not args.port:
        raise TablectlError("say which board: --port PORT (or set TABLECTL_PORT)")
    out = sys.stderr if not args.json else None
    from .. import owner
    owner.check_port(args.port)
    # The port is one process's at a time: with `tablectl serve` on it, mpremote would fight the
    # service's link for minutes. The service lends it (and takes it back after); a holder that
    # cannot lend it is refused at once, before a byte is sent, naming what to stop.
    _ledger_of_the_port(args, out)
    lender = _borrow(args.port, out)
    try:
        # (the lock file only: mpremote flocks the device itself while it copies, exclusive=True)
        owner.take_port(args.port, busy=lambda pid, program: _port_busy(args.port, pid, program), device=False)
        return _flash(args, out)
    finally:
        owner.release_port(args.port)
        if lender is not None:
            _give_back(lender)


def _ledger_of_the_port(args, out):
    """A port that a `tablectl serve` holds has its ledger, whose key store checks the flash: taken
    when no ledger is named, refused in one line when another is (nothing copied)."""
    from ..client import port_server, source
    held = port_server(args.port) if "://" not in args.port else None
    if not held or not held[1] or os.path.abspath(args.db) == os.path.abspath(held[1]):
        return
    if source(args, "db") != "default":
        raise TablectlError("port %s is served by pid %s with the ledger %s, not %s (%s): give --db %s; "
                            "nothing was copied" % (args.port, held[0], held[1], args.db, source(args, "db"), held[1]))
    args.db = held[1]
    if out:
        print("port %s: checked with the key store of the ledger %s, whose service holds it" % (args.port, args.db),
              file=out)


def _borrow(port, out):
    """Ask the `tablectl serve` holding the port (its control socket is in the port's lock) to
    hand it over. Returns the open control connection (closing it gives the port back), or
    None when nobody holds the port or the holder is not a service we can ask."""
    import socket

    from .. import owner
    held = owner.holder(owner.port_lock_path(port))
    if held is None or not held[1]:
        return None
    pid, sock_path = held
    conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    conn.settimeout(15)
    try:
        conn.connect(sock_path)
    except OSError:
        conn.close()
        return None  # not ours to ask (another user's service): take_port says what to stop
    conn.sendall(json.dumps({"op": "hand_over", "port": port, "pid": os.getpid()}).encode() + b"\n")
    reply = _reply(conn)
    if not reply.get("ok"):
        conn.close()
        raise TablectlError("`tablectl serve` (pid %s) holds %s and did not hand it over (%s): stop tablectl "
                            "serve first" % (pid, port, reply.get("error")))
    if out:
        print("port %s: `tablectl serve` (pid %s) hands it over for the flash and takes it back after" % (port, pid),
              file=out)
    return conn


def _reply(conn):
    buf = b""
    while b"\n" not in buf:
        chunk = conn.recv(65536)
        if not chunk:
            return {"ok": False, "error": "the service closed the connection"}
        buf += chunk
    return json.loads(buf.split(b"\n", 1)[0])


def _give_back(conn):
    try:
        conn.sendall(b'{"op": "take_back"}\n')
        _reply(conn)
    except OSError:
        pass  # the service takes it back when the connection closes anyway
    finally:
        conn.close()


def _refuse_sources_the_raw_log_leaves_no_room_for(args, kind, pinmap):
    """A Pico whose pin map reserves a raw log carries the compiled tree: the sources are about
    three times its size, and with the reserve in place they leave littlefs a handful of free
    blocks (docs/BENCHMARKS.md, pico_fsfree): too few for the checkpoints, and an update over them
    can run out of room half-way. Refused before anything is copied."""
    from ..deploy import compiled_for
    if kind != "pico" or not pinmap or compiled_for(args.source) is not None:
        return
    with open(pinmap) as f:
        reserve = json.load(f).get("raw_log_sectors") or 0
    if reserve:
        raise TablectlError("%s is a tree of sources, and the Pico's pin map reserves %d blocks of its filesystem "
                            "for the raw log: the sources would leave too few free for its checkpoints and a later "
                            "update. Flash the compiled tree: `make mpy`, then `make flash PORT=%s SOURCE=build/mpy` "
                            "(docs/FIRMWARE.md); nothing was copied" % (args.source, reserve, args.port))


def _flash(args, out):
    platform, keyed = probe_repl(args.port)
    if keyed and not args.no_verify:
        # The check after the copy needs the table key: refused now, before a file is copied.
        from ..keys import keys_dir_for
        folder = keys_dir_for(args.db) if args.db else None
        if not folder or not os.path.isdir(folder) or not os.listdir(folder):
            raise TablectlError("the board on %s holds a table key and answers the check after the copy only to "
                                "signed requests; the ledger %s has no key store (%s): give --db the ledger it "
                                "was provisioned with; nothing was copied" % (args.port, args.db, folder))
    hw = args.hw
    kind = hw if hw in ("pico", "esp32") else board_for_platform(platform)
    pinmap = None
    if hw == "auto":
        name = PINMAPS.get(platform)
        pinmap = os.path.join(HARDWARE_DIR, name) if name else None
    elif hw in ("pico", "esp32"):
        pinmap = os.path.join(HARDWARE_DIR, "pinmap_%s.json" % hw)
    if pinmap and not os.path.exists(pinmap):
        raise TablectlError("the pin map %s is missing from this checkout" % pinmap)
    _refuse_sources_the_raw_log_leaves_no_room_for(args, kind, pinmap)
    files = firmware_files(args.source, pinmap, kind)
    manifest = build_manifest(files)
    if out:
        print("board on %s is at its REPL (%s); copying %d files (the %s board's %d, then manifest.json)%s" % (
            args.port, platform, len(files) + 1, kind, len(files),
            " with %s as pinmap.json" % os.path.basename(pinmap) if pinmap else ""), file=out)
    with tempfile.TemporaryDirectory(prefix="tablectl-flash-") as staged:
        stage(files, manifest, staged)
        run_mpremote(args.port, staged, [n for n, _ in files], out)
    result = {"port": args.port, "platform": platform, "board_kind": kind, "files": len(files), "manifest": manifest,
              "pinmap": os.path.basename(pinmap) if pinmap else None, "verified": False}
    if args.no_verify:
        if args.json:
            print(json.dumps(result, indent=1, sort_keys=True))
        else:
            print("copied %d files and manifest.json to %s (not verified: --no-verify)" % (len(files), args.port))
        return 0
    if out:
        print("resetting the board into the new firmware ...", file=out)
    soft_reset(args.port)
    from ..link import link_timeout_s
    boot_timeout_s = args.boot_timeout if args.boot_timeout is not None else link_timeout_s(15.0)
    board, reported, status = verify(args.port, manifest, boot_timeout_s, args.db)
    bad = sorted(n for n in manifest if reported.get(n) != manifest[n])
    result.update({"board": board, "mismatched": bad, "verified": not bad,
                   "selfcheck_fault": status.get("fault_detail", {}).get("selfcheck")})
    if args.json:
        print(json.dumps(result, indent=1, sort_keys=True))
    if bad:
        raise TablectlError("board %s reports different checksums for %d file(s): %s; flash again, and if it "
                            "persists the board's filesystem is failing" % (board, len(bad), ", ".join(bad[:8])))
    if result["selfcheck_fault"]:
        raise TablectlError("board %s reports a self-check fault after flashing: %s"
                            % (board, result["selfcheck_fault"]))
    if not args.json:
        print("flashed board %s on %s: %d files copied; for each of the %d the manifest lists, every sha256 the "
              "board reports matches the manifest" % (board, args.port, len(files) + 1, len(files)))
    return 0
