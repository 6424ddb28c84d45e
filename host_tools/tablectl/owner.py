"""One owner per port, per ledger and per virtual board's folder.

A second `tablectl serve` on the same ledger or port, or a second `tablectl sim` on the same
state folder, would fight the first over the wire (both log "multiple access on port?") and, on
the way out, delete the first one's control socket. An exclusive flock(2) on a lock file decides
who owns the thing; the kernel drops it when the owner dies, so a crash leaves nothing stale.
The owner writes its pid into the file so the refusal can name it.

A lock file is never opened through a link (O_NOFOLLOW) and must be a plain file with one name:
a link or a hard link planted where a lock goes would otherwise have the owner truncate and
write its pid into whatever file it names. A port's lock file lives in the user's private folder
(<temp>/tablectl-<uid>, mode 0700, refused when it is a link, another user's or open to others),
not loose in the shared temp folder; the port's device itself is locked too (flock on the tty),
which every account that can open the port sees, so a technician's root shell cannot take the
port from the service's account either (docs/SECURITY.md "Files in shared places").
"""
import fcntl
import hashlib
import os
import socket
import stat
import struct
import tempfile

from .errors import TablectlError

# Open lock files, kept for the life of the process (closing one would release its lock).
_HELD = []

_LOCK_FLAGS = os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0)


def release(fd):
    """Give up a lock taken with take() (a command done with a port it opened directly)."""
    if fd in _HELD:
        _HELD.remove(fd)
        os.close(fd)
    device = _DEVICES.pop(fd, None)
    if device is not None:
        os.close(device)


def holder(lock_path):
    """(pid, note) of the process holding the lock at lock_path, or None when nobody holds it.
    The note is the holder's second line: `tablectl serve` writes its control socket there."""
    try:
        fd = os.open(lock_path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except OSError:
            lines = os.read(fd, 4096).decode("utf-8", "replace").splitlines() + ["", ""]
            return lines[0].strip() or "?", lines[1].strip()
        fcntl.flock(fd, fcntl.LOCK_UN)
        return None
    finally:
        os.close(fd)


def take(lock_path, what, hint="", busy=None, note=""):
    """Take the exclusive lock at lock_path for the rest of this process, or raise a
    TablectlError naming the process that holds it. `what` names the thing for the message;
    `busy(pid, program)`, when given, writes the refusal itself (program: the holder's command
    line as /proc shows it, or "")."""
    try:
        fd = os.open(lock_path, _LOCK_FLAGS, 0o600)
    except OSError as exc:
        raise TablectlError("cannot create the lock file %s for %s: %s%s"
                            % (lock_path, what, exc.strerror or exc,
                               " (it is a link: remove it)" if os.path.islink(lock_path) else ""))
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode) or st.st_nlink != 1:
        os.close(fd)
        raise TablectlError("the lock file %s for %s is not a plain file of its own (a device, a pipe or a hard "
                            "link to another file): remove it" % (lock_path, what))
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        try:
            pid = os.read(fd, 32).decode("ascii", "replace").split("\n")[0].strip()
            if not pid.isdigit():  # a lock file anyone can write: never show its bytes as a pid
                pid = "?"
        finally:
            os.close(fd)
        if busy is not None:
            raise TablectlError(busy(pid, holder_program(pid)))
        raise TablectlError("%s is already in use by pid %s (lock %s): stop that process first%s"
                            % (what, pid, lock_path, hint))
    os.ftruncate(fd, 0)
    os.write(fd, b"%d\n%s" % (os.getpid(), (note + "\n").encode() if note else b""))
    _HELD.append(fd)
    return fd


def holder_program(pid):
    """The holder's command line ("tablectl serve --port ..."), so a refusal can say what to stop;
    "" where /proc does not tell (another OS, a process gone meanwhile)."""
    try:
        with open("/proc/%s/cmdline" % int(pid), "rb") as f:
            words = f.read().decode(errors="replace").split("\0")
    except (OSError, ValueError):
        return ""
    words = [w for w in words if w]
    # python -m tablectl.cli serve ... / .venv/bin/tablectl serve ...: name it as a user types it
    for i, w in enumerate(words):
        if w in ("tablectl.cli", "tablectl") or w.endswith("/tablectl"):
            return " ".join(["tablectl"] + words[i + 1:])
    return " ".join(words)


def private_folder():
    """<temp>/tablectl-<uid>: made 0700, and refused in one line when it is a link, another
    user's, or open to others (someone made it first to catch this user's lock files)."""
    path = os.path.join(tempfile.gettempdir(), "tablectl-%d" % os.geteuid())
    try:
        os.mkdir(path, 0o700)
    except FileExistsError:
        pass
    except OSError as exc:
        raise TablectlError("cannot make the lock folder %s: %s" % (path, exc.strerror or exc))
    st = os.lstat(path)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.geteuid() or st.st_mode & 0o077:
        raise TablectlError("%s is not this user's private folder (a link, another user's, or open to others: "
                            "mode %o): remove it; tablectl keeps its port locks there" % (path, st.st_mode & 0o7777))
    return path


def port_lock_path(port):
    """Where the lock of a port lives: one file per real device path (a symlink such as
    /dev/serial/by-id/... and its /dev/ttyACMn share it), in this user's private folder."""
    name = port if "://" in port else os.path.realpath(port)
    digest = hashlib.sha256(name.encode()).hexdigest()[:16]
    return os.path.join(private_folder(), "tablectl-port-%s.lock" % digest)


def _device_holder(path):
    """The pid holding a flock on the device at path (/proc/locks), or "?"."""
    try:
        st = os.stat(path)
        want = "%02x:%02x:%d" % (os.major(st.st_dev), os.minor(st.st_dev), st.st_ino)
        with open("/proc/locks") as f:
            for line in f:
                words = line.split()
                if len(words) > 5 and words[1] == "FLOCK" and words[5] == want:
                    return words[4]
    except (OSError, ValueError):
        pass
    return "?"


def _lock_device(port, what, hint, busy):
    """flock the port's device itself (seen by every account that can open it); None for a URL."""
    if "://" in port:
        return None
    path = os.path.realpath(port)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOCTTY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None  # not there (yet): opening the port will say so
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        pid = _device_holder(path)
        if busy is not None:
            raise TablectlError(busy(pid, holder_program(pid)))
        raise TablectlError("%s is already in use by pid %s (the device is locked): stop that process first%s"
                            % (what, pid, hint))
    return fd


_PORTS = {}  # port -> the fd of its lock, for a service that hands a port over and takes it back


_DEVICES = {}  # the lock file's fd -> the fd holding the device's flock


def take_port(port, hint="", busy=None, note="", device=True):
    """device=False: the lock file only, for a process whose own tool flocks the device (mpremote)."""
    fd = take(port_lock_path(port), "port %s" % port, hint, busy, note)
    if not device:
        _PORTS[port] = fd
        return fd
    try:
        dev_fd = _lock_device(port, "port %s" % port, hint, busy)
    except TablectlError:
        release(fd)
        raise
    if dev_fd is not None:
        _DEVICES[fd] = dev_fd
    _PORTS[port] = fd
    return fd


def release_port(port):
    """Give up a port taken with take_port (a service handing it to `tablectl flash`)."""
    fd = _PORTS.pop(port, None)
    if fd is not None:
        release(fd)


def take_ledger(db_path):
    return take(os.path.abspath(db_path) + ".lock", "ledger %s" % db_path)


def take_state(state_dir):
    return take(os.path.join(state_dir, "sim.lock"), "board folder %s" % state_dir)


def check_port(port):
    """A port path that cannot be a board says so in one line, before pyserial's longer story."""
    if not port or "://" in port:
        return
    if not os.path.exists(port):
        raise TablectlError("cannot open port %s: no such device; check the cable, or list the ports with `tablectl ports`" % port)
    if os.path.isdir(port):
        raise TablectlError("%s is a folder, not a serial port" % port)
    if not _is_tty(port):
        raise TablectlError("%s is not a serial port (not a terminal device)" % port)


def _is_tty(path):
    try:
        fd = os.open(path, os.O_RDWR | os.O_NONBLOCK | os.O_NOCTTY)
    except OSError as exc:
        raise TablectlError("cannot open port %s: %s" % (path, exc.strerror or exc))
    try:
        return os.isatty(fd)
    finally:
        os.close(fd)


def same_user(conn: socket.socket) -> bool:
    """Whether the caller on a Unix socket is this process's user (or root): the kernel's word on
    it (SO_PEERCRED), checked on top of the socket file's mode, by the service's control socket
    and the pool's local socket alike. A platform without it refuses every caller."""
    try:
        creds = conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i"))
        _pid, uid, _gid = struct.unpack("3i", creds)
    except (OSError, AttributeError):
        return False
    return uid in (os.getuid(), 0)
