"""In-process targets: an object with one method per operation (`export`, `import_bundle`, ...).

A method takes (body, **params) and returns the reply body; it raises `Rejected` to refuse.
A missing method means the operation is not offered. Any other exception is the target crashing.
"""

from __future__ import annotations

import importlib
import inspect
import json
import time
from typing import Any

from ..core.model import HarnessError, TargetError, Unsupported
from .base import Rejected, Reply, Target


class PythonTarget(Target):
    kind = "python"

    def __init__(self, impl: Any, description: str) -> None:
        self.impl = impl
        self.description = description

    @classmethod
    def from_path(cls, path: str, description: str | None = None) -> Target:
        module_name, _, attr = path.partition(":")
        if not module_name or not attr:
            raise HarnessError(f"python target must look like module:attr, got {path!r}")
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise HarnessError(f"cannot import {module_name!r}: {exc}") from None
        try:
            obj = getattr(module, attr)
        except AttributeError:
            raise HarnessError(f"module {module_name!r} has no attribute {attr!r}") from None
        if inspect.isclass(obj) or inspect.isfunction(obj):
            obj = obj()  # a class or factory: one fresh implementation per run
        if isinstance(obj, Target):
            return obj  # a factory may hand back a ready target (e.g. a reference served over HTTP)
        return cls(obj, description or f"python:{path}")

    def call(
        self,
        op: str,
        body: Any = None,
        *,
        params: dict[str, str] | None = None,
        raw: bytes | None = None,
        filename: str | None = None,
    ) -> Reply:
        method = getattr(self.impl, op, None)
        if method is None:
            raise Unsupported(op)
        if raw is not None:
            body = raw
        started = time.monotonic()
        try:
            result = method(body, **(params or {}))
            status = "ok"
        except Rejected as exc:
            result, status = exc.body, "rejected"
        except Unsupported:
            raise
        except Exception as exc:  # the implementation crashed: errored, never failed or passed
            raise TargetError(f"{op}: implementation raised {type(exc).__name__}: {exc}") from exc
        raw_out = result if isinstance(result, bytes) else json.dumps(result, ensure_ascii=False).encode("utf-8")
        return Reply(status=status, body=None if isinstance(result, bytes) else result, raw=raw_out, elapsed_s=time.monotonic() - started)

    def close(self) -> None:
        close = getattr(self.impl, "close", None)
        if callable(close):
            close()
