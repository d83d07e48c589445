"""Start an implementation's process for one shard, wait until it answers, stop it (with its children).

Everything is bounded: the start-up wait, the health probe's bytes (no redirect followed), the stop.
The start program runs under the per-call supervisor of `cmd:` targets (targets/supervise.py), in a PID
namespace of its own where one can be had, else under a child subreaper in its own process group, in the
shard's private folder: when the shard ends, so does every process it started, a `setsid` daemon
included (contain.sweep is the verifying last pass). Its key file is read only from the shard's own
folder or the registry's folder (`api_key_from`), or from an environment variable (`env:NAME`).
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
import uuid
from collections.abc import Iterator
from pathlib import Path

from ..core.results import HarnessError
from .registry import Implementation, Slot

START_TIMEOUT_S = 30.0
STOP_TIMEOUT_S = 10.0
# the supervisor's own deadline for the start program: past anything a shard takes (run.RUN_TIMEOUT_S);
# the shard stops it long before, and a matrix killed outright leaves it to end here at the latest
SUPERVISED_FOR_S = 3 * 3600.0
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
    from ..targets.contain import (
        LIVE_SUPERVISORS,
        STARTING,
        SUPERVISOR,
        TOKEN_VARIABLE,
        Call,
        become_subreaper,
        namespaced,
        sweep,
    )

    argv = [impl.expand(a, slot) for a in impl.start]
    workdir = slot.workdir
    become_subreaper()  # what escapes the supervisor comes to memconform, not to init, and is swept below
    in_namespace = ["--namespace"] if namespaced() else []
    token = uuid.uuid4().hex  # marks the program's processes (contain.Call): the run's own never carry it
    log = (workdir / "implementation.log").open("wb")
    status = (workdir / "supervisor.status").open("wb")
    try:
        with STARTING:
            proc = subprocess.Popen(
                [sys.executable, "-I", "-S", str(SUPERVISOR), repr(SUPERVISED_FOR_S), str(status.fileno()),
                 *in_namespace, "--", *argv],
                cwd=workdir, env={**env, TOKEN_VARIABLE: token}, stdin=subprocess.DEVNULL, stdout=log, stderr=log,
                start_new_session=True, pass_fds=(status.fileno(),))
            LIVE_SUPERVISORS.add(proc.pid)
    except OSError as exc:
        log.close()
        status.close()
        raise StartFailed(f"{impl.id}: cannot start the supervisor of {argv[0]}: {exc}") from None
    status.close()
    RUNNING.add(proc)
    try:
        _wait_ready(impl, proc, slot.port, workdir)
        yield
    finally:
        stop(proc)
        sweep(Call(supervisor=proc.pid, token=token))  # a second, verifying pass: nothing of it outlives the shard
        LIVE_SUPERVISORS.discard(proc.pid)
        RUNNING.discard(proc)
        log.close()


def stop(proc: subprocess.Popen[bytes]) -> None:
    """SIGTERM to the process group (a supervisor ends its command's namespace or tree on it), then
    SIGKILL after a bounded wait."""
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
        if proc.poll() is not None or _exited(workdir) is not None:
            code = _exited(workdir)
            raise StartFailed(f"{impl.id}: exited with {code if code is not None else proc.returncode} before answering; "
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
        with _NO_REDIRECTS.open(f"http://127.0.0.1:{port}{impl.health}", timeout=2) as reply:
            reply.read(_PROBE_BYTES)
            return 200 <= int(reply.status) < 300
    except (OSError, urllib.error.URLError, ValueError):
        return False  # a redirect, too: a health route that sends the probe elsewhere is not an answer


class _RefuseRedirects(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None  # the 3xx is raised as an HTTPError: not healthy


_NO_REDIRECTS = urllib.request.build_opener(_RefuseRedirects, urllib.request.ProxyHandler({}))


def _exited(workdir: Path) -> int | None:
    """The start program's exit code once its supervisor reported it (the supervisor itself lives on
    only until it has ended the program's processes)."""
    try:
        lines = (workdir / "supervisor.status").read_bytes()[:4096].decode("utf-8", "replace").splitlines()
        for line in lines:
            if line.startswith("{"):
                code = json.loads(line).get("code")
                return int(code) if isinstance(code, int) else -1
    except (OSError, ValueError):
        return None
    return None


def read_api_key(impl: Implementation, slot: Slot) -> str | None:
    """The shard's own key ({key}), else the key the started process wrote (`api_key_from = "FILE#MEMBER"`,
    a file inside the shard's folder or the registry's), else an environment variable (`env:NAME`)."""
    if slot.key is not None:
        return slot.key
    if impl.api_key_from is None:
        return None
    if impl.api_key_from.startswith("env:"):
        name = impl.api_key_from[4:]
        key = os.environ.get(name)
        if not key:
            raise StartFailed(f"{impl.id}: api_key_from names the environment variable {name}, which is not set")
        return key
    path, member = impl.expand(impl.api_key_from, slot).rsplit("#", 1)
    data = _key_file(impl, Path(path), slot)
    try:
        data = json.loads(data)
    except ValueError as exc:
        raise StartFailed(f"{impl.id}: its key file {path} cannot be read as JSON: {exc}") from None
    key = data.get(member) if isinstance(data, dict) else None
    if not isinstance(key, str) or not key:
        raise StartFailed(f"{impl.id}: its key file {path} has no string member {member!r}")
    return key


def _key_file(impl: Implementation, path: Path, slot: Slot) -> bytes:
    """The key file's bytes, only from inside the shard's folder or the registry's (never a file elsewhere
    that would then be sent to the implementation as a bearer token), a regular file, bounded."""
    from .safe_read import UnsafeFile, read_bounded

    roots = [slot.workdir, Path(impl.root)]
    root = next((r for r in roots if _within(path, r)), None)
    if root is None:
        raise StartFailed(f"{impl.id}: api_key_from {path} is outside the shard's folder and the registry's folder: "
                          "refused (a key is read only from there, or from env:NAME)")
    try:
        return read_bounded(path, root, _PROBE_BYTES)
    except UnsafeFile as exc:
        raise StartFailed(f"{impl.id}: its key file cannot be read: {exc}") from None


def _within(path: Path, root: Path) -> bool:
    try:
        return path.resolve().is_relative_to(root.resolve())
    except (OSError, RuntimeError):
        return False


def _tail(path: Path, limit: int = 600) -> str:
    try:
        data = path.read_bytes()[-limit:]
    except OSError:
        return "(none)"
    return data.decode("utf-8", "replace").strip() or "(none)"
