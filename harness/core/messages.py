"""What a check and a target exchange, typed: a `Request` in, a `Reply` out, a `Route` saying how an
operation maps onto HTTP, and `Rejected` for an in-process implementation that refuses. Every target kind
(harness/targets/) speaks these; checks see them through `CheckContext.target` (check_context.py)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .json_reader import REPLY, JsonRejected, read_json
from .results import TargetError

# No answer a spec describes nests anywhere near this; deeper JSON from a target is refused before
# it can raise RecursionError in a check, a schema validator or the report writer.
MAX_JSON_DEPTH = 200  # json_reader.REPLY.max_depth


class Rejected(Exception):
    """Raised by an in-process implementation to refuse a request (e.g. a bundle it will not import)."""

    def __init__(self, body: Any = None, message: str = "rejected") -> None:
        super().__init__(message)
        self.body = body


@dataclass(frozen=True)
class Route:
    """How an operation maps onto HTTP.

    `absent_on_404`: a 404/405 means the target lacks the route (not applicable).
    `statuses`: "judged" (404/405 absent, 5xx the target erroring, 2xx that is not JSON an error) or
    "returned" (every status comes back as a Reply for the check to judge, as the OMP suite needs).
    `response`: "json" | "ndjson" | "text", or "none" (the body is never read: a probe).
    """

    method: str
    path: str
    body: str = "json"  # json | multipart | none
    response: str = "json"
    absent_on_404: bool = True
    statuses: str = "judged"


@dataclass(frozen=True)
class Request:
    """One operation for any target. HTTP only: `headers`, `path_params` ({name} in the route's path),
    `route` (send this route instead of the suite's route for `op`) and `auth` (False: no Authorization)."""

    op: str
    body: Any = None
    params: Mapping[str, str] | None = None
    headers: Mapping[str, str] | None = None
    path_params: Mapping[str, str] | None = None
    raw: bytes | None = None
    filename: str | None = None
    route: Route | None = None
    auth: bool = True


def parse_json(raw: bytes) -> tuple[Any, str | None]:
    """(value, None) or (None, why not): strict JSON (UTF-8 without BOM, no NaN/Infinity), nesting at
    most MAX_JSON_DEPTH, bounded in memory (json_reader.py)."""
    try:
        return read_json(raw, REPLY), None
    except JsonRejected as exc:
        if exc.kind == "depth":
            return None, f"JSON nested deeper than {MAX_JSON_DEPTH} levels"
        return None, f"not JSON: {exc.message[:160]}"


@dataclass
class Reply:
    """What a target answered. `status`: the HTTP status code (int) for HTTP targets, "ok" or
    "rejected" for targets without status codes. `body`: the parsed JSON, or None (see `parse_error`)."""

    status: Any = "ok"
    body: Any = None
    raw: bytes = b""
    content_type: str = ""
    headers: dict[str, str] = field(default_factory=dict)
    elapsed_s: float = 0.0
    method: str = ""
    path: str = ""
    parse_error: str | None = None

    @property
    def ok(self) -> bool:
        if isinstance(self.status, int):
            return 200 <= self.status < 300
        return self.status == "ok"

    @property
    def http_status(self) -> int | None:
        return self.status if isinstance(self.status, int) else None

    def json(self) -> Any:
        """The parsed body; a parse that failed once fails the same way without parsing again."""
        if self.body is not None:
            return self.body
        if self.parse_error is None:
            self.body, self.parse_error = parse_json(self.raw)
            if self.parse_error is None:
                return self.body
        where = f"{self.method} {self.path}: " if self.method else ""
        raise TargetError(f"{where}answered something that is not usable JSON ({self.parse_error}); "
                          f"first bytes: {self.raw[:120]!r}")

    def accepted_json(self, kind: type, what: str) -> Any:
        """The body of an accepted reply, of the JSON type a check needs; anything else is the target erroring."""
        if not self.ok:
            raise TargetError(f"{what} was refused: {self.raw[:200]!r}")
        body = self.json()
        if not isinstance(body, kind):
            raise TargetError(f"{what} answered JSON {type(body).__name__}, not {kind.__name__}")
        return body

    def brief(self) -> str:
        return f"{self.method} {self.path} -> {self.status} {self.raw[:200].decode('utf-8', 'replace')}"
