"""Live progress of `memconform run`: one status line kept at the bottom of a terminal (rich), plain
lines otherwise.

On a terminal (and not under CI): checks done of total, failures, errors and warnings so far (apart),
elapsed, an estimate of what is left, and the check running with its own clock, redrawn four times a
second (it ticks during a long check); anything printed meanwhile goes above it (rich redirects stdout
while live), so nothing interleaves. The failures themselves follow the run, once per cause
(render/terminal.py). Not a terminal, or CI set: one plain line per check, written whole through the
run's Printer (redacted), each with the elapsed time and what is left at the mean time per check so far, and
a "still running" line every HEARTBEAT_S seconds while one check runs. Elapsed time is shown, never used to
decide anything.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from collections.abc import Callable
from typing import IO, Any

from ..core.results import Outcome, Result
from ..core.wording import plural


def live_wanted(stream: IO[str]) -> bool:
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"


HEARTBEAT_S = 30.0  # without a terminal: a line this often while one check runs, so a CI log never looks hung


def duration(seconds: float) -> str:
    """'2m05s', or '45s' under a minute."""
    seconds = max(0, int(seconds))
    return f"{seconds // 60}m{seconds % 60:02d}s" if seconds >= 60 else f"{seconds}s"


class Progress:
    def __init__(self, total: int, say: Callable[..., None], stream: IO[str] | None = None, live: bool | None = None,
                 heartbeat_s: float = HEARTBEAT_S) -> None:
        self.total = total
        self.say = say
        self.stream = stream or sys.stdout
        self.live = live_wanted(self.stream) if live is None else live
        self.done = self.failed = self.errored = self.warnings = 0
        self.started = time.monotonic()
        self.running: str | None = None
        self.running_since = self.started
        self.heartbeat_s = heartbeat_s
        self._live: Any = None
        self._stop = threading.Event()
        self._beat: threading.Thread | None = None

    def estimate(self) -> str:
        """What is left, from the mean time of the checks done (said as an estimate; empty before the first)."""
        if not self.done or self.done >= self.total:
            return ""
        left = (time.monotonic() - self.started) / self.done * (self.total - self.done)
        return f", about {duration(left)} left"

    def status(self) -> str:
        now = time.monotonic()
        warn = f", {plural(self.warnings, 'warning')}" if self.warnings else ""
        running = f"; running {self.running} ({duration(now - self.running_since)})" if self.running else ""
        return (f"memconform: {self.done}/{plural(self.total, 'check')}, {self.failed} failed, {self.errored} errored{warn}, "
                f"{duration(now - self.started)} elapsed{self.estimate()}{running}")

    def __enter__(self) -> Progress:
        if self.live:
            from rich.console import Console
            from rich.live import Live
            from rich.text import Text

            # get_renderable: every refresh (4 a second) recomputes the line, so the clock ticks during a long check
            # the running check on a line of its own: a narrow terminal crops neither part
            self._live = Live(get_renderable=lambda: Text(self.status().replace("; running ", "\n  running ")), console=Console(file=self.stream, soft_wrap=True),
                              refresh_per_second=4, transient=True, redirect_stdout=True, redirect_stderr=True)
            self._live.start()
        elif self.heartbeat_s > 0:
            self._beat = threading.Thread(target=self._heartbeat, name="memconform-progress", daemon=True)
            self._beat.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._beat is not None:
            self._beat.join(timeout=5)
            self._beat = None
        if self._live is not None:
            self._live.stop()
            self._live = None

    def _heartbeat(self) -> None:
        while not self._stop.wait(self.heartbeat_s):
            running, since = self.running, self.running_since
            if running is not None and time.monotonic() - since >= self.heartbeat_s:
                self.say(f"[{self.done + 1}/{self.total}] {running} still running "
                         f"({duration(time.monotonic() - since)}{self.estimate()})")

    def on_start(self, check_id: str) -> None:
        self.running, self.running_since = check_id, time.monotonic()

    def on_result(self, result: Result) -> None:
        self.done += 1
        self.running = None
        if result.outcome is Outcome.FAILED:
            if result.warning:
                self.warnings += 1
            else:
                self.failed += 1
        elif result.outcome is Outcome.ERRORED:
            self.errored += 1
        if self._live is not None:
            self._live.refresh()
        elif not self.live:
            label = "warning" if result.warning else result.outcome.value
            self.say(f"[{self.done}/{self.total}] {result.check_id} {label} ({duration(time.monotonic() - self.started)}"
                     f"{self.estimate()})")
