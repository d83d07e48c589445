"""In-process targets: an object with one method per operation (`export`, `import_bundle`, ...).

A method takes (body, **params) and returns the reply body; it raises `Rejected` to refuse.
A missing method means the operation is not offered. Any other exception (SystemExit included) is
the target crashing. When a check sends raw bytes (a document as a file, a deliberately broken
one), the method gets those bytes as its body and parses them itself.

Bounds: each call runs in a worker thread and is waited on for at most the call deadline (and never
past the run deadline, after which every call errors at once). A
Python thread cannot be stopped, so after a call overruns, the target is marked hung and every
later call errors at once (the run stays bounded; the stuck thread dies with the process). A reply
that is not JSON data (an arbitrary object, a cycle, nesting too deep to serialize) is an error.
`python:module:attr` imports `module` from the caller's folder too (as `python -m` would).
"""

from __future__ import annotations

import importlib
import inspect
import os
import sys
import threading
import time
from typing import Any

from ..core.profile import Limits
from ..core.results import HarnessError, TargetError, Unsupported
from .base import Rejected, Reply, Request, Target
from .replycap import serialized


class PythonTarget(Target):
    kind = "python"

    def __init__(self, impl: Any, description: str, limits: Limits | None = None) -> None:
        self.impl = impl
        self.description = description
        self.limits = limits or Limits()
        self.deadline_s = self.limits.call_deadline_s

    @classmethod
    def from_path(cls, path: str, description: str | None = None, limits: Limits | None = None) -> Target:
        module_name, _, attr = path.partition(":")
        if not module_name or not attr:
            raise HarnessError(f"python target must look like module:attr, got {path!r}")
        here = os.getcwd()
        if here not in sys.path:
            sys.path.append(here)  # after the installed packages: the caller's modules never shadow them
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise HarnessError(f"cannot import {module_name!r}: {exc}") from None
        except Exception as exc:  # its import crashed: a start-up error, said in one line
            raise HarnessError(f"importing {module_name!r} raised {type(exc).__name__}: {exc}") from None
        try:
            obj = getattr(module, attr)
        except AttributeError:
            raise HarnessError(f"module {module_name!r} has no attribute {attr!r}") from None
        if inspect.isclass(obj) or inspect.isfunction(obj):
            try:
                obj = obj()  # a class or factory: one fresh implementation per run
            except Exception as exc:
                raise HarnessError(f"creating {path!r} raised {type(exc).__name__}: {exc}") from None
        if isinstance(obj, Target):
            return obj  # a factory may hand back a ready target (e.g. a reference served over HTTP)
        return cls(obj, description or f"python:{path}", limits)

    def send(self, request: Request) -> Reply:
        op = request.op
        body = request.body
        params = dict(request.params) if request.params else None
        raw = request.raw
        method = getattr(self.impl, op, None)
        if method is None:
            raise Unsupported(op)
        if raw is not None:
            body = raw
        started = time.monotonic()
        deadline_s = self.clock.left(op, self.deadline_s)
        outcome: list[Any] = []
        cap = self.limits.max_response_bytes

        def work() -> None:
            try:
                result = method(body, **(params or {}))
                outcome.append(("ok", result, serialized(op, result, cap)))  # in this thread: bounded by the deadline
            except Rejected as exc:
                outcome.append(("rejected", exc.body, serialized(op, exc.body, cap)))
            except BaseException as exc:  # noqa: BLE001 - SystemExit too: the implementation crashed
                outcome.append(("raised", exc, None))

        worker = threading.Thread(target=work, name=f"memconform-{op}", daemon=True)
        worker.start()
        worker.join(deadline_s)
        if worker.is_alive() and started + deadline_s < min(started + self.deadline_s, self.clock.run_end()) - 0.25:
            # cut by the check's budget, not by its own deadline: a call that cannot be stopped may finish
            # within that, and then nothing is left running and the target is not hung
            worker.join(max(0.0, min(started + self.deadline_s, self.clock.run_end()) - time.monotonic()))
            if not worker.is_alive():
                raise TargetError(f"{op}: the check's budget ran out during this call (it returned "
                                  f"{time.monotonic() - started:.1f} s after it started, past the budget)")
        if worker.is_alive():
            bound = self.clock.cut_short(started + deadline_s, self.deadline_s)
            self.clock.hang(f"an earlier call ({op}) did not return within {deadline_s:.3g}s (bounded by {bound}) "
                            "and cannot be stopped in process")
            raise TargetError(f"{op}: did not return within {deadline_s:.3g}s (bounded by {bound}); "
                              "later calls to this target error at once")
        self.clock.answered()
        status, result, raw_out = outcome[0]
        if status == "raised":
            if isinstance(result, Unsupported):
                raise result
            if isinstance(result, TargetError):  # the reply was refused (not JSON data, over the cap)
                raise result
            raise TargetError(f"{op}: implementation raised {type(result).__name__}: {result}") from None
        if isinstance(result, (bytes, bytearray)):
            return Reply(status=status, raw=raw_out, elapsed_s=time.monotonic() - started)
        return Reply(status=status, body=result, raw=raw_out, elapsed_s=time.monotonic() - started)

    @property
    def hung(self) -> str | None:
        return self.clock.hung

    def close(self) -> None:
        close = getattr(self.impl, "close", None)
        if callable(close) and not self.hung:
            try:
                close()
            except Exception:  # noqa: S110 - the run's results stand; a crash on close is not one of them
                pass
