"""Progress on stderr.

:class:`RunDisplay` is the display of ``run``, ``figures`` and ``report``: claims done of
total, the current claim's work, the steps after the claims and the notebook's cells (see its
docstring for the terminal, log and quiet modes).  :class:`Progress` is the single line of
``simulate``: nothing during the first ``delay`` seconds, so quick runs stay silent; after that
the line is refreshed at most every ``interval`` seconds (in place on a terminal, as plain lines
in a log).
"""

from __future__ import annotations

import os
import sys
import time

from moecl_verify.console import ascii_spelling, can_encode


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


# -- the display of a whole run -------------------------------------------------------------------

LOG_WIDTH = 80
_current: "RunDisplay | None" = None


def fit(text: str, width: int = LOG_WIDTH, ellipsis: str = "…") -> str:
    """``text`` cut to ``width`` characters, ``ellipsis`` marking the cut."""
    return text if len(text) <= width else text[: width - len(ellipsis)] + ellipsis


def _clock(seconds: float) -> str:
    """m:ss, or h:mm:ss from an hour on."""
    s = int(seconds)
    hours, minutes = divmod(s // 60, 60)
    return f"{hours}:{minutes:02d}:{s % 60:02d}" if hours else f"{minutes}:{s % 60:02d}"


def _is_terminal(stream) -> bool:
    return bool(getattr(stream, "isatty", lambda: False)()) and os.environ.get("TERM") != "dumb"


class RunDisplay:
    """What a run shows on stderr while it works: one display, three modes.

    * terminal (the stream is a tty, or ``console`` is given): one rich line with the claims done
      of total, a bar, elapsed time, ETA and what is being worked on now (the current claim and its
      configuration, a step such as deciding verdicts, or the notebook's cell), cut to the width;
    * log (not a tty, e.g. CI): one plain line per finished claim and per step, at most 80
      characters, no carriage returns;
    * quiet: nothing.

    Its methods are the callbacks of :func:`moecl_verify.checks.runner.run` (``claim`` for
    ``on_claim``, ``work`` for ``progress``) and of :func:`moecl_verify.reports.notebook.write`
    (``notebook_cell`` for ``on_cell``; :func:`notebook_progress` reaches the active display).
    Use it as a context manager; with ``claims=False`` (re-rendering a report) it shows the steps only.
    """

    def __init__(self, stream=None, quiet: bool = False, console=None, claims: bool = True):
        self.stream = stream if stream is not None else sys.stderr
        # A stream that cannot hold the tool's notation (an ASCII terminal) gets its text spelt in ASCII before it
        # is measured and cut, so that lines keep their width (σ is written as sigma, five characters, not one).
        self.ascii = not can_encode(console.file if console is not None else self.stream)
        self.mode = "quiet" if quiet else "terminal" if console is not None or _is_terminal(self.stream) else "log"
        self.claims = claims
        self._console = console
        self._rich = None
        self._task = None
        # The claims being measured (several when claims run in lanes) and when each started.
        self._running: dict[str, float] = {}
        self._said: str | None = None  # the last step printed in log mode, so repeats stay silent
        self._notebook_started = 0.0

    # -- lifetime --------------------------------------------------------------------------------
    def __enter__(self) -> "RunDisplay":
        global _current
        if self.mode == "terminal":
            self._start_rich()
        _current = self
        return self

    def __exit__(self, *exc) -> None:
        global _current
        _current = None
        if self._rich is not None:
            if exc[0] is None:
                self._set(detail="finished")
            self._rich.stop()
            self._rich = None

    def _start_rich(self) -> None:
        from rich.console import Console
        from rich.progress import BarColumn, Progress, ProgressColumn, SpinnerColumn, TextColumn
        from rich.table import Column
        from rich.text import Text

        started = time.monotonic()
        claims = self.claims

        class Clock(ProgressColumn):
            """Elapsed time since the display started (rich's own column stops with the last claim,
            but the reports and the notebook come after it) and, counting claims, the ETA from the
            run's mean pace so far (claims differ a lot, so no recent-window speed)."""

            def render(self, task) -> Text:
                elapsed = time.monotonic() - started
                text = _clock(elapsed)
                if claims:
                    done, total = task.completed, task.total
                    eta = "-:--" if not done or total is None else _clock(elapsed / done * (total - done))
                    text += f" eta {eta}"
                return Text(text, style="progress.elapsed")

        console = self._console or Console(file=self.stream)
        # The detail takes what is left of the line and is cut with an ellipsis (cropped on an ASCII stream, where
        # rich's ellipsis would be written as three characters), never wrapped.
        detail = TextColumn("{task.fields[detail]}", markup=False,
                            table_column=Column(no_wrap=True, overflow="crop" if self.ascii else "ellipsis", ratio=1))
        if claims:
            columns = [TextColumn("{task.fields[count]}", markup=False), BarColumn(bar_width=10), Clock(), detail]
        else:
            columns = [SpinnerColumn(), Clock(), detail]
        self._rich = Progress(*columns, console=console, refresh_per_second=4, expand=True, transient=not claims)
        self._task = self._rich.add_task("run", total=None, count="", detail="starting")
        self._rich.start()

    def _set(self, refresh: bool = True, **fields) -> None:
        # Claim boundaries and steps are drawn at once; a configuration's counts wait for the
        # next periodic refresh, as they may change hundreds of times a second.
        if self._rich is not None:
            if self.ascii and "detail" in fields:
                fields["detail"] = ascii_spelling(fields["detail"])
            self._rich.update(self._task, refresh=refresh, **fields)

    def _log(self, text: str) -> None:
        if self.ascii:
            text = fit(ascii_spelling(text), ellipsis="...")
        else:
            text = fit(text)
        self.stream.write(text + "\n")
        self.stream.flush()

    # -- callbacks -------------------------------------------------------------------------------
    def claim(self, index: int, total: int, claim_id: str, phase: str) -> None:
        """The runner's ``on_claim``: phase "start", then "done" or "reused" (several claims may be
        running at once when they run in lanes; ``index`` then counts the finished ones)."""
        if phase == "start":
            self._running[claim_id] = time.monotonic()
            self._set(total=total, completed=index - 1, count=self._count(index - 1, total),
                      detail=" + ".join(self._running))
            return
        started = self._running.pop(claim_id, None)
        self._set(total=total, completed=index, count=self._count(index, total),
                  detail=f"{claim_id} (reused)" if phase == "reused" else claim_id)
        if self.mode == "log":
            how = "reused from the cache" if phase == "reused" or started is None else \
                f"done in {time.monotonic() - started:.1f} s"
            self._log(f"[{index}/{total}] {claim_id} {how}")

    @staticmethod
    def _count(done: int, total: int) -> str:
        return f"{done:>{len(str(total))}} of {total} claims"  # fixed width, so the bar does not shift

    def work(self, label: str, done: int, total: int) -> None:
        """The runner's ``progress``: a claim's configuration (shown next to the claim on a terminal,
        not logged) or, between claims, a step of the run (shown and logged once)."""
        if not self._running:
            self.step(label)
            return
        counts = f" {done}/{total}" if total > 1 else ""
        # The label names the claim's experiment; with one claim running, the claim is named too.
        prefix = f"{next(iter(self._running))} · " if len(self._running) == 1 else ""
        self._set(refresh=False, detail=f"{prefix}{label}{counts}")

    def step(self, text: str) -> None:
        """A step of the run outside any claim, e.g. "writing reports"."""
        self._set(detail=text)
        if self.mode == "log" and text != self._said:
            self._said = text
            self._log(text)

    def notebook_cell(self, done: int, total: int) -> None:
        """The notebook's ``on_cell``: ``(0, n)`` when its kernel starts, ``(k, n)`` after cell k.
        The terminal shows the cell running now (the first one while the kernel starts)."""
        self._set(detail=f"executing notebook: cell {min(done + 1, total)} of {total}")
        if self.mode != "log":
            return
        if done == 0:
            self._notebook_started = time.monotonic()
            self._log(f"executing notebook: {total} code cells")
        elif done == total:
            self._log(f"executed notebook: {total} code cells in {time.monotonic() - self._notebook_started:.1f} s")


def announce(text: str) -> None:
    """Show a step (e.g. "drawing figures") on the active :class:`RunDisplay`, if any."""
    if _current is not None:
        _current.step(text)


def notebook_progress(done: int, total: int) -> None:
    """Forward a notebook's cell progress to the active :class:`RunDisplay` (none: do nothing), so
    code that writes the reports needs no handle on the display."""
    if _current is not None:
        _current.notebook_cell(done, total)
