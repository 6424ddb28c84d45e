"""Nothing silent for more than 2 s: a wait says what it waits for and how long it has taken.

On a terminal the line is rewritten in place every 2 s and wiped when the wait ends (so a one-line
error after it stays one line); into a pipe or a log, where nothing can be rewritten, a line is
written every `pipe_every_s` (0: never, for commands whose stderr scripts read)."""
from __future__ import annotations

import sys
import time
from typing import IO, Optional


class Ticker:
    def __init__(self, what: str, stream: Optional[IO[str]] = None, every_s: float = 2.0,
                 pipe_every_s: float = 0.0) -> None:
        self.what = what
        self.stream = stream if stream is not None else sys.stderr
        try:
            self.tty = self.stream.isatty()
        except (AttributeError, ValueError):
            self.tty = False
        self.every_s = every_s if self.tty else pipe_every_s
        self.start = self.said = time.monotonic()
        self.shown = False

    def tick(self, detail: str = "") -> None:
        """Call as often as convenient; says something only every every_s."""
        if not self.every_s:
            return
        now = time.monotonic()
        if now - self.said < self.every_s:
            return
        self.said = now
        elapsed = now - self.start
        text = "%s (%d:%02d%s)" % (self.what, elapsed // 60, elapsed % 60, ", " + detail if detail else "")
        if self.tty:
            self.stream.write("\r\x1b[K" + text)
        else:
            self.stream.write(text + "\n")
        self.stream.flush()
        self.shown = True

    def done(self) -> None:
        if self.shown and self.tty:
            self.stream.write("\r\x1b[K")
            self.stream.flush()
        self.shown = False
