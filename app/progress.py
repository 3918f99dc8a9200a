"""A quiet progress line on stderr for long runs.

Nothing is printed during the first ``delay`` seconds, so quick runs stay
silent; after that the line is refreshed at most every ``interval`` seconds
(in place on a terminal, as plain lines in a log).
"""

from __future__ import annotations

import sys
import time


class Progress:
    def __init__(self, stream=None, delay: float = 2.0, interval: float = 0.5, enabled: bool = True):
        self.stream = stream if stream is not None else sys.stderr
        self.delay = delay
        self.interval = interval
        self.enabled = enabled
        self.start = time.monotonic()
        self.last = 0.0
        self.dirty = False
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())

    def __call__(self, label: str, done: int, total: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.start < self.delay or (now - self.last < self.interval and done < total):
            return
        self.last = now
        width = 30
        filled = int(width * done / total) if total else width
        bar = "#" * filled + "-" * (width - filled)
        text = f"{label:<24} [{bar}] {done}/{total}  {now - self.start:5.1f}s"
        if self.tty:
            self.stream.write("\r" + text)
            self.dirty = True
        else:
            self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        if self.dirty:
            self.stream.write("\n")
            self.stream.flush()
            self.dirty = False
