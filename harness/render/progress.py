"""Live progress of `memconform run`: one status line kept at the bottom of a terminal (rich), plain
lines otherwise.

On a terminal (and not under CI): checks done of total, failures so far, elapsed, redrawn in place;
failure details printed above it (rich redirects stdout while live), so nothing interleaves. Not a
terminal, or CI set: one plain line per check, written whole through the run's Printer (redacted).
Elapsed time is shown, never used to decide anything.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from typing import IO, Any

from ..core.model import Outcome, Result


def live_wanted(stream: IO[str]) -> bool:
    try:
        tty = stream.isatty()
    except (AttributeError, ValueError):
        return False
    return tty and not os.environ.get("CI") and os.environ.get("TERM") != "dumb"


class Progress:
    def __init__(self, total: int, say: Callable[..., None], stream: IO[str] | None = None, live: bool | None = None) -> None:
        self.total = total
        self.say = say
        self.stream = stream or sys.stdout
        self.live = live_wanted(self.stream) if live is None else live
        self.done = self.failed = self.errored = self.warnings = 0
        self.started = time.monotonic()
        self._live: Any = None

    def status(self) -> str:
        warn = f", {self.warnings} warnings" if self.warnings else ""
        return (f"memconform: {self.done}/{self.total} checks, {self.failed} failed, {self.errored} errored{warn}, "
                f"{time.monotonic() - self.started:.0f}s elapsed")

    def __enter__(self) -> Progress:
        if self.live:
            from rich.console import Console
            from rich.live import Live
            from rich.text import Text

            self._text = Text
            self._live = Live(Text(self.status()), console=Console(file=self.stream, soft_wrap=True), refresh_per_second=4,
                              transient=True, redirect_stdout=True, redirect_stderr=True)
            self._live.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        if self._live is not None:
            self._live.stop()
            self._live = None

    def on_result(self, result: Result) -> None:
        self.done += 1
        if result.outcome is Outcome.FAILED:
            if result.warning:
                self.warnings += 1
            else:
                self.failed += 1
        elif result.outcome is Outcome.ERRORED:
            self.errored += 1
        if self._live is not None:
            self._live.update(self._text(self.status()))
        elif not self.live:
            label = "warning" if result.warning else result.outcome.value
            self.say(f"[{self.done}/{self.total}] {result.check_id} {label} ({time.monotonic() - self.started:.0f}s)")
