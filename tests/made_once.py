"""A costly result made once per test session, however pytest-xdist spreads the tests that use it.

A module-scoped fixture or a functools.cache runs once per process, and xdist's workers are processes
that share no memory: a module whose tests land on two workers made its costly set-up twice (a whole
suite run, a zoo of servers). Under xdist the workers share one base temporary folder (each works in a
folder of its own under it); the first worker to need a result makes it and leaves it there as JSON, the
others wait for it (one lock per result) and read it. In one process there is nothing to share.
"""

from __future__ import annotations

import fcntl
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest


def shared_folder(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """The folder the workers of this xdist session share (None outside xdist)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return None
    folder = tmp_path_factory.getbasetemp().parent / "made-once"
    folder.mkdir(exist_ok=True)
    return folder


def made_once(shared: Path | None, key: str, make: Callable[[], Any]) -> Any:
    """make()'s result (JSON-able: what is read back is what json.loads gives), made by one process of the
    session: `key` names it across the workers."""
    if shared is None:
        return make()
    made = shared / f"{key}.json"
    with open(shared / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if made.exists():
            return json.loads(made.read_text("utf-8"))
        result = make()
        part = made.with_suffix(".part")
        part.write_text(json.dumps(result), encoding="utf-8")
        part.replace(made)
        return result
