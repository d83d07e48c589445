"""The door a check goes through: what a check may use during a run, and nothing of the runner's own
(the redactor, the transcript, the cleanups list, the report folder). `runner.Context` implements it.

Check functions are typed `ctx: CheckContext`; a suite keeps what its checks share during a run in its
own state class (`ctx.state(OmpRun)`), and gives the report files through `ctx.attach`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, TypeVar

from .profile import Profile
from .results import HarnessError
from .suite import SuiteSpec

if TYPE_CHECKING:  # what a target answers and what a check observes: not imported to validate a file
    from .messages import Reply, Request
    from .readings import Observation, Prediction

S = TypeVar("S")


class TargetPort(Protocol):
    """The implementation under test as a check sees it (memconform.targets.base.Target implements it)."""

    kind: str
    description: str

    def call(self, request: Request | str, body: Any = None, **fields: Any) -> Reply: ...

    def stated_facts(self, suite: str) -> Any: ...

    def begin_check(self) -> None: ...

    def close(self) -> None: ...


class NoTarget:
    """The target of a run that validates a document: there is none, and a check that calls it is a bug."""

    kind = "none"
    description = "no target (a document is validated)"

    def call(self, request: Request | str, body: Any = None, **fields: Any) -> Reply:
        raise HarnessError("this run validates a document: a check called a target")

    def stated_facts(self, suite: str) -> Any:
        return None

    def begin_check(self) -> None:
        pass

    def close(self) -> None:
        pass


class CheckContext(Protocol):
    suite: SuiteSpec
    target: TargetPort
    profile: Profile
    run_id: str
    document: Any  # the document under validation, when there is no target
    check_id: str
    reproduce_base: str  # the `memconform run ...` line of this run, to build replay lines

    def unique(self, label: str = "x") -> str: ...

    def option(self, name: str) -> str: ...

    def note(self, line: str) -> None: ...

    def reading(self, point: str, seen: str) -> None: ...

    def observe(self, point: str, predictions: Mapping[str, Prediction], answer: Any = None, **how: Any) -> Observation: ...

    def cleanup(self, label: str, fn: Callable[[], Any]) -> None: ...

    def once(self, key: str, make: Any) -> Any: ...

    def state(self, kind: type[S]) -> S: ...

    def attach(self, name: str, data: bytes) -> Path | None: ...

    def redact(self, text: str) -> str: ...

    def add_secret(self, secret: str | None) -> None: ...
