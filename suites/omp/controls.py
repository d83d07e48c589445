"""Evidence rules of the OMP suite: positive controls, inconclusive outcomes, readings,
and removing what the run wrote.

Every memory the suite writes holds the run id in its content (`ctx.unique`) and the run tag, so
one sweep at the end finds them all, whoever created them (a create, an import, a duplicate).
"""

from __future__ import annotations

from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import ControlRefused, Inconclusive, TargetError
from memconform.suites.omp import client
from memconform.targets.base import Reply


def reading(ctx: CheckContext, point: str, seen: str) -> None:
    """The implementation was seen to follow reading `seen` of open point `point` (suites/omp/errata.md)."""
    record = getattr(ctx, "reading", None)
    if callable(record):
        record(point, seen)
    else:
        ctx.note(f"reading {point}: {seen}")


def need(condition: Any, reason: str) -> None:
    """Nothing to observe: the check ends inconclusive, never passed."""
    if not condition:
        raise Inconclusive(reason)


def control(answer: Reply, what: str) -> Reply:
    """The positive control of a negative check: the same request with the broken rule repaired must be accepted."""
    if not answer.ok:
        raise ControlRefused(f"{what}: {answer.brief()}")
    return answer


def absent(answer: Reply) -> bool:
    """An optional operation not offered: 404, 405 or 501."""
    return answer.status in (404, 405, 501)


def _sweep(ctx: CheckContext) -> bool:
    """Delete every memory of this run the harness's keys can see; raise naming what stayed."""
    keys: list[str | None] = [client.GLOBAL]
    creds = client.facts(ctx).credentials
    if creds is not None and creds.other_user_key:
        keys.append(creds.other_user_key)
    left: list[str] = []
    removed = 0
    for key in keys:
        answer = client.export(ctx, key, record=False, quiet=True)
        body = answer.body if answer.ok and isinstance(answer.body, dict) else {}
        for mem in body.get("memories") or []:
            if not isinstance(mem, dict) or ctx.run_id not in str(mem.get("content", "")) + str(mem.get("tags", "")):
                continue
            mem_id = str(mem.get("id"))
            if client.delete(ctx, mem_id, key, record=False, quiet=True).status in (204, 200, 404):
                removed += 1
            else:
                left.append(mem_id)
    ctx.state(client.OmpRun).cleanup_counts = (removed, len(left))
    if left:
        raise TargetError(f"{len(left)} memories of run {ctx.run_id} could not be deleted, e.g. {left[:3]}")
    return True


def track(ctx: CheckContext) -> None:
    """Register, once per run, the sweep that removes what this run wrote (ctx.cleanup)."""
    register = getattr(ctx, "cleanup", None)
    if not callable(register) or ctx.state(client.OmpRun).cleanup_registered:
        return
    ctx.state(client.OmpRun).cleanup_registered = True
    register(f"the memories of run {ctx.run_id}", lambda: _sweep(ctx))
