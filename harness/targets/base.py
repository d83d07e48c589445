"""The one seam between checks and an implementation: a `Request` in, a `Reply` out.

Every target kind implements `send(request) -> Reply`; checks call `target.call(Request(...))` (the
old positional form `call(op, body, params=..., raw=..., filename=...)` still works). Over HTTP every
exchange, the OMP client's and schemathesis's included, goes through `HttpTarget.send`.
"""

from __future__ import annotations

import functools
import threading
from collections.abc import Mapping
from typing import Any

from ..core.clock import Clock
from ..core.messages import MAX_JSON_DEPTH as MAX_JSON_DEPTH
from ..core.messages import Rejected as Rejected
from ..core.messages import Reply as Reply
from ..core.messages import Request as Request
from ..core.messages import Route as Route
from ..core.messages import parse_json as parse_json
from ..core.profile import Limits


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
