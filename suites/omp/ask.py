"""How an example check asks the OMP model (suites/omp/model/) instead of restating an expectation.

`judged` turns the model's verdict on one answer into a Failure naming what was sent, what came back and,
for each reading the run accepts, what the model expected of the answer. `observe` records the readings of
an open point from the model's own predictions: every reading the model names for the request is one
prediction (the answer fits it when that reading's check finds nothing wrong), and the readings the run
accepts are the ones the model built from the run's options still names.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Observation
from memconform.core.results import Failure
from memconform.suites.omp.model import Check, Model, Readings, Request


def summary(answer: Any) -> str:
    """What came back, in a line: a page's size, limit, offset, total and mode; else the status and body."""
    body = getattr(answer, "body", None)
    status = getattr(answer, "status", 0)
    if isinstance(body, dict) and isinstance(body.get("memories"), list):
        said = ", ".join(f"{name} {body[name]!r}" for name in ("limit", "offset", "total", "mode_used") if name in body)
        shown = [mem.get("id") for mem in body["memories"][:3] if isinstance(mem, dict)]
        return f"{status}: {len(body['memories'])} memories {shown}{', ' if said else ''}{said}"
    brief = getattr(answer, "brief", None)
    return str(brief()) if callable(brief) else f"{status} {str(body)[:160]}"


def judged(model: Model, request: Request, answer: Any, sent: str, path: str = "$") -> Failure | None:
    """None when the answer is in the model's set, else a Failure: the request, the answer, each reading's expectation."""
    reason = model.accepts(request, answer)
    if reason is None:
        return None
    return Failure(f"{sent}: {reason.title}", summary(answer), reason.expected, path)


def expectations(model: Model, request: Request, read_back: bool = False) -> dict[str, Check]:
    return model.expect_read_back(request) if read_back else model.expect(request)


def predictions(model: Model, request: Request, read_back: bool = False) -> dict[str, Callable[[Any], bool]]:
    """{reading: does the answer fit it}, one per reading the model names for the request."""
    return {name: fits(check) for name, check in expectations(model, request, read_back).items()}


def fits(check: Check) -> Callable[[Any], bool]:
    """The prediction of one reading: the answer breaks none of its expectations."""
    return lambda answer: check(answer) is None


def observe(ctx: CheckContext, point: str, request: Request, answer: Any, *, title: str, path: str = "$",
            seeded: Callable[[Readings], Model], pins: tuple[str, ...] = (), read_back: bool = False) -> Observation:
    """Record the readings of `point` the answer fitted, as the model predicts them under every reading;
    fail (naming each accepted reading's expectation) when it fits none the run's options accept.
    `seeded` builds the model in the state at hand under given readings; `pins`: the options (names
    of Readings fields) that may narrow this point; `read_back`: the answer is the pair (a write's answer, the
    GET of its id after it), judged by `Model.expect_read_back`."""
    every = seeded(Readings())
    pinned = seeded(Readings.from_options(ctx.option))
    allowed = expectations(pinned, request, read_back)
    accepted = tuple(allowed)
    chosen = tuple(f"{name}={ctx.option(name)}" for name in pins if ctx.option(name) not in ("either", "any"))
    seen = ctx.observe(point, predictions(every, request, read_back), answer, accepted=accepted, title=title, path=path, pinned=chosen)
    if seen.failure is not None:
        shown = " then ".join(summary(a) for a in answer) if read_back else summary(answer)
        seen.failure.received = shown if not seen.matched else {"answer": shown, "fits only": list(seen.matched)}
        seen.failure.expected = {f"{point} {name}": check(answer) for name, check in allowed.items()}
    return seen
