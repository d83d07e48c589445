"""Start an implementation's process for one shard, wait until it answers, stop it (with its children).

Everything is bounded: the start-up wait, the health probe's bytes, the stop. The process runs in a
session of its own in the shard's private folder, so ending it ends whatever it started.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path

from ..core.results import HarnessError
from .registry import Implementation, Slot

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
_PROBE_BYTES = 65536


class Started:
    """The processes shards have started and not yet stopped, so an interrupted run can stop them all."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._procs: set[subprocess.Popen[bytes]] = set()

    def add(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.add(proc)

    def discard(self, proc: subprocess.Popen[bytes]) -> None:
        with self._lock:
            self._procs.discard(proc)

    def stop_all(self) -> None:
        with self._lock:
            procs = list(self._procs)
        for proc in procs:
            stop(proc)


RUNNING = Started()


class StartFailed(HarnessError):
    """The implementation's process did not come up (exited, or did not answer in time)."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def environment(impl: Implementation, slot: Slot) -> dict[str, str]:
    return {**os.environ, **{k: impl.expand(v, slot) for k, v in impl.env.items()}}


@contextlib.contextmanager
def started(impl: Implementation, slot: Slot, env: dict[str, str]) -> Iterator[None]:
    """The entry's `start` process running and answering (nothing to do when it has none)."""
    if not impl.start:
        yield
        return
    argv = [impl.expand(a, slot) for a in impl.start]
    workdir = slot.workdir
    log = (workdir / "implementation.log").open("wb")
    try:
        proc = subprocess.Popen(argv, cwd=workdir, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                                start_new_session=True)
    except OSError as exc:
        log.close()
        raise StartFailed(f"{impl.id}: cannot start {argv[0]}: {exc}") from None
    RUNNING.add(proc)
    try:
        _wait_ready(impl, proc, slot.port, workdir)
        yield
    finally:
        stop(proc)
        RUNNING.discard(proc)
        log.close()


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group, then SIGKILL after a bounded wait."""
    for sig, wait in ((signal.SIGTERM, STOP_TIMEOUT_S), (signal.SIGKILL, STOP_TIMEOUT_S)):
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, sig)
        try:
            proc.wait(wait)
            with contextlib.suppress(ProcessLookupError, PermissionError):
                os.killpg(proc.pid, signal.SIGKILL)  # children it left behind
            return
        except subprocess.TimeoutExpired:
            continue


def _wait_ready(impl: Implementation, proc: subprocess.Popen[bytes], port: int | None, workdir: Path) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise StartFailed(f"{impl.id}: exited with {proc.returncode} before answering; "
                              f"its output: {_tail(workdir / 'implementation.log')}")
        if _answers(impl, port):
            return
        time.sleep(0.1)
    raise StartFailed(f"{impl.id}: did not answer within {START_TIMEOUT_S:.0f} s "
                      f"({'GET ' + impl.health if impl.health else 'a connection'} on port {port})")


def _answers(impl: Implementation, port: int | None) -> bool:
    if port is None:
        return True  # nothing to probe: a started helper that the target reaches another way
    if impl.health is None:
        with contextlib.suppress(OSError), socket.create_connection(("127.0.0.1", port), timeout=1):
            return True
        return False
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}{impl.health}", timeout=2) as reply:  # noqa: S310 loopback
            reply.read(_PROBE_BYTES)
            return 200 <= int(reply.status) < 300
    except (OSError, urllib.error.URLError, ValueError):
        return False


def read_api_key(impl: Implementation, slot: Slot) -> str | None:
    """The shard's own key ({key}), else the key the started process wrote (`api_key_from = "FILE#MEMBER"`), or None."""
    if slot.key is not None:
        return slot.key
    if impl.api_key_from is None:
        return None
    path, member = impl.expand(impl.api_key_from, slot).rsplit("#", 1)
    try:
        data = json.loads(Path(path).read_bytes()[:_PROBE_BYTES])
    except (OSError, ValueError) as exc:
        raise StartFailed(f"{impl.id}: its key file {path} cannot be read as JSON: {exc}") from None
    key = data.get(member) if isinstance(data, dict) else None
    if not isinstance(key, str) or not key:
        raise StartFailed(f"{impl.id}: its key file {path} has no string member {member!r}")
    return key


def _tail(path: Path, limit: int = 600) -> str:
    try:
        data = path.read_bytes()[-limit:]
    except OSError:
        return "(none)"
    return data.decode("utf-8", "replace").strip() or "(none)"
