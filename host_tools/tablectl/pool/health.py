"""A table's health, as its service reports it to the pool: what only the table knows.

The pool sees tokens, hits and awards; it cannot see a table's board. So each table service
(`tablectl serve --pool`) reports, for each of its boards, over the board's own mutual-TLS
connection (the credential names the board; a report for another board is refused as any request
is), every lost window / 3 and once more when it stops cleanly:

    {"op": "health", "board": B, "state": "OPEN", "pool_off": false, "storage_fault": false,
     "refused_frames": 0, "closing": false}

- state: the board's state as its status says it (OPEN, LOCKED, FAULT, ...), or `no_board` when
  the service has no board on the port, `board_silent` when the board did not answer its status.
- pool_off: the board shows POOL OFF (its `pool` fault: the table lost the pool, or the pool
  refuses it), progressive coin-in inhibited.
- storage_fault: the board's `storage` fault: nothing can be made durable on it.
- refused_frames: frames from the port the service refused since it started (link.py, a frame
  without a valid MAC, of another board, ...): a count that rises is someone or something on the
  cable.
- closing: the service is stopping on purpose; the table is closed, not lost.

The pool keeps the newest report per board (pool_health, store.py), with the time it heard it by
its own clock: nothing a table says about time is taken. A report changes no money: it is not a
row of the chained books, and touches no meter or token.
"""
import re

from ..errors import TablectlError

STATE_RE = re.compile(r"[A-Za-z0-9_]{1,32}")
MAX_REFUSED_FRAMES = 2 ** 31 - 1  # a 32-bit counter's range: a service counting past it is lying
REFUSED_RISING_S = 600.0  # refused frames counted within this long: an alarm on the floor page
FIELDS = ("state", "pool_off", "storage_fault", "refused_frames", "closing")
_ENVELOPE = ("op", "board", "rid")


def check_report(req):
    """The report's fields, each what it must be, or a TablectlError saying which is not."""
    extra = sorted(k for k in req if k not in FIELDS and k not in _ENVELOPE)
    if extra:
        shown = ", ".join(repr(k[:40]) if isinstance(k, str) else repr(k) for k in extra[:5])
        raise TablectlError("health takes %s only; not %s" % (", ".join(FIELDS), shown))
    state = req.get("state")
    if not isinstance(state, str) or not STATE_RE.fullmatch(state):
        raise TablectlError("health state must be 1 to 32 letters, digits or _ (the board's state); got %s"
                            % _shown(state))
    out = {"state": state}
    for name in ("pool_off", "storage_fault", "closing"):
        value = req.get(name, False)
        if not isinstance(value, bool):
            raise TablectlError("health %s must be true or false; got %s" % (name, _shown(value)))
        out[name] = value
    count = req.get("refused_frames", 0)
    if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count <= MAX_REFUSED_FRAMES:
        raise TablectlError("health refused_frames must be a whole number from 0 to %d; got %s"
                            % (MAX_REFUSED_FRAMES, _shown(count)))
    out["refused_frames"] = count
    return out


def _shown(value):
    text = repr(value)
    return text if len(text) <= 40 else text[:40] + "..."
