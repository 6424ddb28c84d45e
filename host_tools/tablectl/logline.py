"""How `tablectl serve` writes its log: one line per message, fit for where it goes.

- under systemd (stderr is the journal's stream, $JOURNAL_STREAM): each line starts with its
  syslog priority, `<4>` for a warning, `<6>` for news (sd-daemon(3)), and carries no time
  stamp, since the journal stamps every line itself (`journalctl -u tablectl -p warning`);
- in a terminal: the local time of day first;
- into a file or a pipe: the date and time (ISO 8601) first.
Never colour codes, never a second line: a message's own line breaks (an exception's text) are
folded into " | ", so a log reader's one line is one message.
"""
import os
import sys
import time

WARNING, INFO = 4, 6


def to_journal(stream):
    """True when `stream` is the journal's: systemd sets JOURNAL_STREAM to "device:inode" of it."""
    named = os.environ.get("JOURNAL_STREAM", "")
    try:
        dev, ino = (int(x) for x in named.split(":"))
        st = os.fstat(stream.fileno())
    except (ValueError, OSError, AttributeError):
        return False
    return (st.st_dev, st.st_ino) == (dev, ino)


def one_line(text):
    """The message on one line, without terminal control characters."""
    text = " | ".join(part.strip() for part in str(text).splitlines() if part.strip())
    return "".join(ch if ch >= " " or ch == "\t" else "?" for ch in text.replace("\x1b", ""))


class LogLine:
    def __init__(self, stream=None):
        self.stream = stream if stream is not None else sys.stderr
        self.journal = to_journal(self.stream)
        self.tty = not self.journal and self.stream.isatty()

    def __call__(self, text, priority=None):
        text = one_line(text)
        if priority is None:
            # the service's own words for trouble: said as warnings, the rest is news
            words = ("lost", "refused", "failed", "error", "cannot", "gap", "not ")
            priority = WARNING if any(w in text for w in words) else INFO
        if self.journal:
            line = "<%d>%s" % (priority, text)
        elif self.tty:
            line = "%s %s" % (time.strftime("%H:%M:%S"), text)
        else:
            line = "%s %s" % (time.strftime("%Y-%m-%dT%H:%M:%S%z"), text)
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except (BrokenPipeError, ValueError):
            pass  # the reader of our log went away: the books go on


def log_thread_failures(log):
    """A thread's uncaught exception as one warning line, not a traceback across the log."""
    import threading

    def hook(args):
        if issubclass(args.exc_type, SystemExit):
            return
        name = args.thread.name if args.thread is not None else "a thread"
        log("%s stopped: %s: %s" % (name, args.exc_type.__name__, args.exc_value), WARNING)

    threading.excepthook = hook
