"""The one seam between checks and an implementation: a `Request` in, a `Reply` out.

Every target kind implements `send(request) -> Reply`; checks call `target.call(Request(...))` (the
old positional form `call(op, body, params=..., raw=..., filename=...)` still works). Over HTTP every
exchange, the OMP client's and schemathesis's included, goes through `HttpTarget.send`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..core.clock import Clock
from ..core.model import TargetError
from ..core.profile import Limits
from ..json_reader import REPLY, JsonRejected, read_json

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


class Target:
    """Base of every target kind. `send` raises Unsupported or TargetError, never returns garbage silently.
    `calls` counts the requests sent (every kind's `send`, counted once however a subclass chains it)."""

    kind = "abstract"
    description = ""
    calls = 0

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        send = cls.__dict__.get("send")
        if send is not None and not getattr(send, "counts_calls", False):
            cls.send = _counting(send)  # type: ignore[method-assign]

    def call(self, request: Request | str, body: Any = None, **fields: Any) -> Reply:
        """`call(Request(op, ...))`, or the positional form `call(op, body, params=..., raw=..., filename=...)`."""
        if not isinstance(request, Request):
            request = Request(request, body, **fields)
        elif body is not None or fields:
            raise TypeError("call(Request) takes no other arguments")
        return self.send(request)

    def send(self, request: Request) -> Reply:
        raise NotImplementedError

    @property
    def clock(self) -> Clock:
        """The budgets this target's calls draw on; a session hands every target of a run one run deadline."""
        clock: Clock | None = self.__dict__.get("_clock")
        if clock is None:
            limits = getattr(self, "limits", None) or Limits()
            clock = self._clock = Clock.starting_now(limits.run_deadline_s, limits.check_deadline_s)
        return clock

    @clock.setter
    def clock(self, value: Clock) -> None:
        self._clock = value

    def begin_check(self) -> None:
        """Called by the runner before each check: start from a fresh connection (HTTP), so a framing
        error or an unread body cannot leak into the next check. Default: nothing to reset."""

    def stated_facts(self, suite: str) -> Any:
        """What the target states about itself for one suite (a served reference knows its keys and
        whether it has an AI key); None when it states nothing and the user's options apply."""
        return self._stated.get(suite)

    def state_facts(self, suite: str, facts: Any) -> None:
        self._stated = {**self._stated, suite: facts}

    _stated: Mapping[str, Any] = {}

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


_SENDING = threading.local()
_COUNTING = threading.Lock()


def _counting(send: Any) -> Any:
    """`send` that adds one to the target's `calls` for each request (not again for a `send` it chains to)."""

    @functools.wraps(send)
    def counted(self: Target, request: Request) -> Reply:
        sending: set[int] = _SENDING.__dict__.setdefault("targets", set())  # this thread's sends under way
        if id(self) in sending:
            return send(self, request)  # type: ignore[no-any-return]
        with _COUNTING:
            self.calls += 1
        sending.add(id(self))
        try:
            return send(self, request)  # type: ignore[no-any-return]
        finally:
            sending.discard(id(self))

    counted.counts_calls = True  # type: ignore[attr-defined]
    return counted
