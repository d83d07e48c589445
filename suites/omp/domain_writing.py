"""What the OMP domain write checks (checks/domain_writes.py) send and compare: under ci, allowed values of
different fields packed into one memory or one patch (top_field, packable, carry, together); the patch of
one class and what an update of it may be expected to do; a memory before and after an update compared."""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Observation
from memconform.core.results import Failure
from memconform.kit import domain
from memconform.suites.omp import domain_data
from memconform.targets.base import Reply


def top_field(case: domain_data.Case) -> str:
    """The member of the memory a class's value sits in (a source field's own place within the source):
    two values of a row never share one."""
    path = case.cls.field.removeprefix("memory.").removesuffix("[]")
    return path if path.startswith("source.") else path.split(".")[0]


def packable(ctx: CheckContext, case: domain_data.Case) -> bool:
    """An allowed value no errata point reads, of a field that is not the whole source (which the
    source's own fields share): it goes in a memory beside others (rows_for)."""
    return domain_data.expectation(ctx, case.cls) == "valid" and domain_data.open_point(case.cls) is None and case.cls.field != "memory.source"


def carry(body: dict[str, Any], case: domain_data.Case) -> None:
    """Set in `body` the member the case's value sits in, as the case's own body has it (absent: removed)."""
    *parents, name = top_field(case).split(".")
    source, holder = case.body, body
    for part in parents:
        source, holder = source.get(part) or {}, holder.setdefault(part, {})
    if name in source:
        holder[name] = copy.deepcopy(source[name])
    else:
        holder.pop(name, None)


def together(row: list[domain_data.Case]) -> dict[str, Any]:
    """One memory holding each case's value as its own body has it (the first's, or a content case's, marker)."""
    body = copy.deepcopy(row[0].body)
    for case in row[1:]:
        carry(body, case)
    return body


def update_expectation(ctx: CheckContext, case: domain_data.Case) -> str:
    """A patch may leave out any top-level field; a source without a required part is replaced whole (refused)
    or merged into the old one (accepted): the spec does not say which."""
    expect = domain_data.expectation(ctx, case.cls)
    if case.value is not domain.ABSENT:
        return expect
    nested = "." in case.cls.field.removeprefix("memory.")
    return "open" if nested and expect == "invalid" else expect if nested else "valid"


def expires_in_past(patch: dict[str, Any]) -> bool:
    """A patch setting expires_at to a moment already gone (in any offset the target may have read it)."""
    value = patch.get("expires_at")
    if not isinstance(value, str):
        return False
    try:
        moment = dt.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return False
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt.UTC)
    return moment < dt.datetime.now(dt.UTC)


def patch_for(case: domain_data.Case, before: dict[str, Any]) -> dict[str, Any]:
    """A one-field patch of the class value; for "absent", every other writable field as it is now."""
    if case.value is domain.ABSENT:
        top = case.cls.field.removeprefix("memory.").split(".")[0].removesuffix("[]")
        keep: dict[str, Any] = {k: before[k] for k in ("content", "type", "tags", "namespace", "expires_at", "metadata", "source")
                                if k in before}
        if "." in case.cls.field.removeprefix("memory."):  # a source field left out of the source object
            return {"source": {k: v for k, v in before.get("source", {}).items() if k != case.cls.field.split(".")[-1]}}
        keep.pop(top, None)
        return keep
    top = case.cls.field.removeprefix("memory.").split(".")[0].removesuffix("[]")
    if top == "source" and case.cls.field != "memory.source":
        return {"source": case.body["source"]}
    return {top: case.body.get(top)}


def patch_as_body(before: dict[str, Any], patch: dict[str, Any]) -> dict[str, Any]:
    return {**before, **patch}


def unchanged(case: domain_data.Case, before: dict[str, Any], now: dict[str, Any]) -> Iterator[Failure]:
    moved = sorted(k for k in set(before) | set(now) if k != "updated_at" and not domain_data.same_json(before.get(k), now.get(k)))
    if moved:
        yield Failure(f"{case.label}: a refused update changed the memory", {k: now.get(k) for k in moved[:3]},
                      {k: before.get(k) for k in moved[:3]}, "$")


def others_kept(case: domain_data.Case, before: dict[str, Any], now: dict[str, Any], patch: dict[str, Any]) -> Iterator[Failure]:
    moved = sorted(k for k in before if k not in patch and k not in ("updated_at",) and not domain_data.same_json(before.get(k), now.get(k)))
    if moved:
        yield Failure(f"{case.label}: a field not in the patch changed", {k: now.get(k) for k in moved[:3]},
                      {k: before.get(k) for k in moved[:3]}, "$")


NO_LONGER_SERVED, STILL_SERVED = "an expired memory is no longer served", "an expired memory is still served"


def observe_expiry(ctx: CheckContext, label: str, after: Reply) -> Observation:
    """O14: the spec does not say whether an expired memory is still served: its GET answers 404
    memory_not_found, or 200 with the memory; anything else fits neither."""
    gone = after.status == 404 and isinstance(after.body, dict) and after.body.get("error") == "memory_not_found"
    served = after.status == 200 and isinstance(after.body, dict)
    return ctx.observe("O14", {NO_LONGER_SERVED: gone, STILL_SERVED: served}, after.brief(), path="$",
                       title=f"{label}: the memory whose expires_at passed was neither served nor 404 memory_not_found")
