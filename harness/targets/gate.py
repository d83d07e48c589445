"""A start gate: several `cmd:` calls whose commands exec at the same moment.

A `cmd:` call's command starts after memconform has written its input, started the call's supervisor (one
at a time: contain.STARTING) and the supervisor has forked it, so N calls made "at once" by N threads
start tens of milliseconds apart, and a race in the commands' start-up (EMP apps creating a missing
memory.jsonl) never shows. Behind a gate, each call's supervisor forks the command's process, which
marks itself ready in the gate's folder and then blocks opening the gate's FIFO for reading; when every
expected call is ready, the gate opens the FIFO's write end, every blocked open returns at once, and the
commands exec together. The write end stays open until the gate is closed, so a call that arrives late
passes straight through. Nothing here decides a verdict: a call that ends without reaching the gate (its
budget spent) is not waited for, a gate that is not full by its wait bound opens anyway, and it says how
many were waiting.

Use: `with StartGate(n) as gate:` start n threads, each making its call inside `with gate.entered():`,
then `gate.open_when_ready()`, then join the threads. Only targets whose class sets `start_gates = True`
(CommandTarget) honour a gate; with any other target, `StartGate.for_target` gives None.
"""

from __future__ import annotations

import contextlib
import contextvars
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

RELEASE = "release"  # the FIFO every gated command opens for reading before it execs
READY_PREFIX = "ready-"  # one empty file per command waiting at the gate
WAIT_S = 30.0  # a bound on waiting for the last command, never a window a verdict depends on
POLL_S = 0.005

ACTIVE: contextvars.ContextVar[StartGate | None] = contextvars.ContextVar("memconform_start_gate", default=None)


class StartGate:
    def __init__(self, expected: int, wait_s: float = WAIT_S) -> None:
        self.expected = expected
        self.wait_s = wait_s
        self.folder = Path(tempfile.mkdtemp(prefix="memconform-gate-"))
        os.mkfifo(self.folder / RELEASE, 0o600)
        self.write_fd = -1
        self.waited = 0  # how many commands waited at the gate when it opened
        self.gone = 0  # calls that ended before it opened (refused before any process started: a spent budget)
        self.lock = threading.Lock()

    @classmethod
    def for_target(cls, target: Any, expected: int) -> StartGate | None:
        """A gate for `expected` calls of this target, or None when its calls start no process to hold."""
        return cls(expected) if getattr(target, "start_gates", False) else None

    def __enter__(self) -> StartGate:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextlib.contextmanager
    def entered(self) -> Iterator[None]:
        """Calls made in this block (in this thread) start behind the gate."""
        token = ACTIVE.set(self)
        try:
            yield
        finally:
            ACTIVE.reset(token)
            with self.lock:
                self.gone += self.write_fd < 0  # a gated command cannot end before the gate opens: this one never came

    def ready(self) -> int:
        try:
            return sum(1 for name in os.listdir(self.folder) if name.startswith(READY_PREFIX))
        except OSError:
            return 0

    def open_when_ready(self) -> int:
        """Wait (bounded) until every expected command waits at the gate, then let them all exec; how many
        were waiting when it opened."""
        deadline = time.monotonic() + self.wait_s
        waiting = self.ready()
        while waiting < self.expected - self.gone and time.monotonic() < deadline:
            time.sleep(POLL_S)
            waiting = self.ready()
        self.waited = waiting
        self.open()
        return waiting

    def open(self) -> None:
        if self.write_fd < 0:
            # O_RDWR never blocks on a FIFO (Linux), even before any command waits; every blocked reader's
            # open returns as soon as a writer holds it
            self.write_fd = os.open(self.folder / RELEASE, os.O_RDWR | os.O_NONBLOCK | os.O_CLOEXEC)

    def close(self) -> None:
        self.open()  # whatever happens, no command stays blocked at a gate nobody will open
        os.close(self.write_fd)
        shutil.rmtree(self.folder, ignore_errors=True)
