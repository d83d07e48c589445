"""The one seam between checks and an implementation: call an operation, get a Reply."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

from ..core.model import TargetError


class Rejected(Exception):
    """Raised by an in-process implementation to refuse a request (e.g. a bundle it will not import)."""

    def __init__(self, body: Any = None, message: str = "rejected") -> None:
        super().__init__(message)
        self.body = body


@dataclass(frozen=True)
class Route:
    """How an operation maps onto HTTP. `absent_on_404`: a 404/405 means the target lacks the route."""

    method: str
    path: str
    body: str = "json"  # json | multipart | none
    response: str = "json"  # json | ndjson | text
    absent_on_404: bool = True


@dataclass
class Reply:
    status: str  # "ok" | "rejected"
    body: Any = None
    raw: bytes = b""
    http_status: int | None = None
    content_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    elapsed_s: float = 0.0

    @property
    def ok(self) -> bool:
        return self.status == "ok"

    def json(self) -> Any:
        if self.body is not None:
            return self.body
        try:
            return json.loads(self.raw)
        except ValueError as exc:
            raise TargetError(f"answered something that is not JSON: {exc}; first bytes: {self.raw[:120]!r}") from None


    def accepted_json(self, kind: type, what: str) -> Any:
        """The body of an accepted reply, of the JSON type a check needs; anything else is the target erroring."""
        if not self.ok:
            raise TargetError(f"{what} was refused: {self.raw[:200]!r}")
        body = self.json()
        if not isinstance(body, kind):
            raise TargetError(f"{what} answered JSON {type(body).__name__}, not {kind.__name__}")
        return body


class Target:
    """Base of every target kind. `call` raises Unsupported, TargetError, never returns garbage silently."""

    kind = "abstract"
    description = ""

    def call(
        self,
        op: str,
        body: Any = None,
        *,
        params: dict[str, str] | None = None,
        raw: bytes | None = None,
        filename: str | None = None,
    ) -> Reply:
        raise NotImplementedError

    def preflight(self) -> None:
        """Raise HarnessError when the target cannot be reached at all (a one-line error, exit 2)."""

    def reproduce_hint(self) -> str:
        return self.description

    def close(self) -> None:
        pass

    def __enter__(self) -> Target:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
