"""Replayable sequences of operations, while they run: what a model-based check records.

While a state machine runs, `recording(ctx)` records every exchange with the target (`ctx.target.call`
goes through the target's one `send`), each harness action that stands for another app (`harness_step`)
and, where the target left the model, what the model expected there (`expect`). Suites register here how
a divergence is judged again (`comparator`) and which harness actions a replay can do again
(`harness_action`). Saving a sequence as a file and replaying it is core/sequence_files.py; the frame
a model-based check runs its machine in is core/model_based.py.
No pytest, CLI or transport in here.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import json
from collections.abc import Callable, Iterator
from typing import Any

from .results import HarnessError, SkipCheck, TargetError

REPLY_CHARS = 2000  # a recorded reply is a hint for the reader, not what replay compares

# name -> fn(ctx, last target reply or None, expected) -> what differs ("" or None: as the model says)
COMPARATORS: dict[str, Callable[[Any, Any, Any], str | None]] = {}
# name -> (do(ctx, body) -> {old: new} renames, shell(body) -> lines of sh); harness steps that stand for another app
HARNESS_ACTIONS: dict[str, tuple[Callable[[Any, Any], dict[str, str]], Callable[[Any], list[str]]]] = {}


def comparator(name: str) -> Callable[[Callable[[Any, Any, Any], str | None]], Callable[[Any, Any, Any], str | None]]:
    """Register how replay re-judges a divergence named `name` (suites register theirs at import)."""
    def register(fn: Callable[[Any, Any, Any], str | None]) -> Callable[[Any, Any, Any], str | None]:
        COMPARATORS[name] = fn
        return fn
    return register


def harness_action(name: str, shell: Callable[[Any], list[str]]) -> Callable[[Callable[[Any, Any], dict[str, str]]], Callable[[Any, Any], dict[str, str]]]:
    """Register a harness action (another app writing a line, a fresh file) that replay can do again."""
    def register(fn: Callable[[Any, Any], dict[str, str]]) -> Callable[[Any, Any], dict[str, str]]:
        HARNESS_ACTIONS[name] = (fn, shell)
        return fn
    return register


# ---- recording -------------------------------------------------------------------------------------

class Recorder:
    """The steps of the example running now; `begin` starts a new example (each machine's __init__)."""

    def __init__(self, ctx: Any) -> None:
        self.ctx = ctx
        self.steps: list[dict[str, Any]] = []
        self.diverged_at: int | None = None
        self.first_divergence: str | None = None  # of the whole run: a run stopped early still reports it
        self.stopped: str | None = None  # why no further sequence was started (the budget ran low)

    def begin(self) -> None:
        self.steps, self.diverged_at = [], None

    def target_step(self, request: Any, reply: Any = None, error: BaseException | None = None) -> None:
        step: dict[str, Any] = {"by": "target", "op": request.op}
        if request.body is not None:
            step["body"] = request.body
        if request.raw is not None:
            try:
                step["raw_text"] = request.raw.decode("utf-8")
            except UnicodeDecodeError:
                step["raw_base64"] = base64.b64encode(request.raw).decode("ascii")
        for name in ("params", "path_params"):
            value = getattr(request, name)
            if value:
                step[name] = dict(value)
        headers = {k: v for k, v in dict(request.headers or {}).items() if not _secret_header(k)}
        if headers:
            step["headers"] = headers
        if request.filename:
            step["filename"] = request.filename
        if request.route is not None:
            step["route"] = dataclasses.asdict(request.route)
        if not request.auth:
            step["auth"] = False
        if error is not None:
            step["reply"] = {"error": type(error).__name__, "detail": str(error)[:300]}
        elif reply is not None:
            step["reply"] = {"status": reply.status, "body": _cut(reply.body if reply.body is not None else reply.raw.decode("utf-8", "replace"))}
            if reply.method:
                step["reply"]["http"] = f"{reply.method} {reply.path}"
        self.steps.append(step)

    def harness_step(self, op: str, body: Any, note: str = "", done: bool = False) -> dict[str, str]:
        """Record a harness action and do it (done=True: the check did it already, record it only)."""
        if op not in HARNESS_ACTIONS:
            raise HarnessError(f"no harness action {op!r} is registered")
        self.steps.append({"by": "harness", "op": op, "body": body, **({"note": note} if note else {})})
        return {} if done else HARNESS_ACTIONS[op][0](self.ctx, body)

    def expect(self, name: str, expected: Any, message: str) -> None:
        if name not in COMPARATORS:
            raise HarnessError(f"no comparator {name!r} is registered")
        if self.diverged_at is not None:
            return  # the first divergence of an example is the one its file reproduces
        self.first_divergence = self.first_divergence or str(message)[:1000]  # kept across examples
        self.diverged_at = len(self.steps)
        self.steps.append({"by": "check", "op": name, "expected": expected, "message": str(message)[:1000]})


def _secret_header(name: str) -> bool:
    return name.lower() in ("authorization", "proxy-authorization", "cookie", "x-api-key", "api-key")


def _cut(value: Any) -> Any:
    text = json.dumps(value, ensure_ascii=False, default=str)
    return value if len(text) <= REPLY_CHARS else text[:REPLY_CHARS] + f"... ({len(text)} chars)"


@contextlib.contextmanager
def recording(ctx: Any) -> Iterator[Recorder]:
    """Record every exchange with ctx.target while the block runs (the target object itself is kept,
    so a check that needs its kind still sees it); the recorder is also `active(ctx)`."""
    target = ctx.target
    recorder = Recorder(ctx)
    inner = target.send

    def send(request: Any) -> Any:
        try:
            reply = inner(request)
        except (TargetError, SkipCheck) as exc:
            recorder.target_step(request, error=exc)
            raise
        recorder.target_step(request, reply)
        return reply

    target.send = send
    ctx.state(_Recording).recorder = recorder
    try:
        yield recorder
    finally:
        ctx.state(_Recording).recorder = None
        with contextlib.suppress(AttributeError):
            del target.send


@dataclasses.dataclass
class _Recording:
    recorder: Recorder | None = None  # the recorder of the state machine running now


def active(ctx: Any) -> Recorder | None:
    return ctx.state(_Recording).recorder


def begin(ctx: Any) -> None:
    """A new example starts (call from each state machine's __init__)."""
    recorder = active(ctx)
    if recorder is not None:
        recorder.begin()


def diverged(ctx: Any) -> bool:
    """Has the example running now left the model already? (a teardown then compares no more)"""
    recorder = active(ctx)
    return recorder is not None and recorder.diverged_at is not None


def expect(ctx: Any, name: str, expected: Any, message: str) -> str:
    """Note where the target left the model and what the model expected; returns the message, to raise."""
    recorder = active(ctx)
    if recorder is not None:
        recorder.expect(name, expected, message)
    return message


def harness_step(ctx: Any, op: str, body: Any, note: str = "", done: bool = False) -> dict[str, str]:
    """Do a harness action (done=True: already done), recorded when a recorder is active."""
    recorder = active(ctx)
    if recorder is not None:
        return recorder.harness_step(op, body, note, done)
    return {} if done else HARNESS_ACTIONS[op][0](ctx, body)


class SequencesStopped(BaseException):
    """Ends a machine's run between sequences (a BaseException: Hypothesis neither shrinks nor replays it)."""


def budget_low(ctx: Any) -> str | None:
    """Why no new sequence should start: less than a fifth of the check's budget (or the run's) is left,
    so a sequence begun now could be cut in the middle of a call; None when there is time."""
    clock = getattr(getattr(ctx, "target", None), "clock", None)
    if clock is None:
        return None
    left, which = clock.budget_left()  # time waited for a CPU not counted, as the budgets themselves (core/clock.py)
    budget = clock.check_budget_s or clock.run_budget_s
    if left < max(5.0, 0.2 * budget):
        return f"{max(left, 0):.0f} s of the {which}'s budget left"
    return None


def run_machine(ctx: Any, machine: type, config: Any) -> None:
    """Run a state machine with the profile's seed: the same seed, the same sequences (hypothesis would
    otherwise derive a derandomized seed from the machine's source, so any edit would change them). No
    sequence starts once the budget runs low: SequencesStopped (model_based judges what ran before it)."""
    from hypothesis.stateful import run_state_machine_as_test

    def start(self: Any) -> None:
        reason = budget_low(ctx)
        if reason:
            recorder = active(ctx)
            if recorder is not None:
                recorder.stopped = reason  # Hypothesis may turn the stop into a Flaky error while it replays
            raise SequencesStopped(reason)
        super(bounded, self).__init__()  # type: ignore[arg-type]

    bounded: Any = type(machine.__name__, (machine,), {"__init__": start, "__qualname__": machine.__qualname__})
    bounded._hypothesis_internal_use_seed = ctx.profile.seed  # type: ignore[attr-defined]
    run_state_machine_as_test(bounded, settings=config)


# ---- a comparator every suite can use: one reply against what the model expected -------------------

def _walk(value: Any, path: str) -> Any:
    """`a.b`, `items[].id` (each item's id), `[].id` on a list."""
    parts = [p for p in path.split(".") if p]
    for k, part in enumerate(parts):
        name = part.removesuffix("[]")
        if name:
            value = value.get(name) if isinstance(value, dict) else None
        if part.endswith("[]"):
            rest = ".".join(parts[k + 1:])
            return [_walk(v, rest) for v in value] if isinstance(value, list) else None
    return value


@comparator("reply")
def reply_differs(ctx: Any, reply: Any, expected: dict[str, Any]) -> str | None:
    """expected: refused (not ok, or a body saying ok: false), ok, status, status_below, values {path: v},
    lists {path: [..]} (order kept), subsets {path: [..]} (only these), sets {path: [..]} (exactly these)."""
    if reply is None:
        return "no reply to compare (the operation was not offered)"
    body = reply.body if reply.body is not None else None
    said_no = isinstance(body, dict) and body.get("ok") is False
    if "refused" in expected and expected["refused"] != (not reply.ok or said_no):
        return f"answered {reply.status} {'(ok: false)' if said_no else ''}, the model expected it {'refused' if expected['refused'] else 'accepted'}"
    if "ok" in expected and expected["ok"] != reply.ok:
        return f"answered {reply.status}, the model expected {'success' if expected['ok'] else 'a refusal'}"
    if "status" in expected and expected["status"] != reply.status:
        return f"answered {reply.status}, the model expected {expected['status']}"
    if "status_below" in expected and isinstance(reply.status, int) and reply.status >= expected["status_below"]:
        return f"answered {reply.status}, the model expected a status below {expected['status_below']}"
    for path, want in (expected.get("values") or {}).items():
        if _walk(body, path) != want:
            return f"{path} is {_walk(body, path)!r}, the model expected {want!r}"
    for path, want in (expected.get("lists") or {}).items():
        if _walk(body, path) != want:
            return f"{path} is {_walk(body, path)!r}, the model expected {want!r}"
    for path, want in (expected.get("subsets") or {}).items():
        got = _walk(body, path)
        if not isinstance(got, list) or not set(map(str, got)) <= set(map(str, want)):
            return f"{path} holds {got!r}, outside what the model allows: {sorted(map(str, want))!r}"
    for path, want in (expected.get("sets") or {}).items():
        got = _walk(body, path)
        if not isinstance(got, list) or sorted(map(str, got)) != sorted(map(str, want)):
            return f"{path} holds {got!r}, the model expected {sorted(map(str, want))!r}"
    return None
