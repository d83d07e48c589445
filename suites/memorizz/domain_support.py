"""What the MemoRizz domain checks share (checks/domain_imports.py, domain_archive.py, domain_params.py): the domain
table, the namespace export, the keeper of a class's records and the failures of a class's answer. Not a check
module: the checks import it, never one another."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import ControlRefused, Failure
from memconform.kit import domain
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.client import export, forget_namespaces_at_end, import_archive, small_archive


def table() -> domain.Domain:
    return domain.required("memorizz")


def namespace_export(ctx: CheckContext, ns: str) -> list[dict[str, Any]]:
    archive = export(ctx, memory_id=ns)
    return [r for _, r in memorizz.records_of(archive) if isinstance(r, dict)]


def keeper(ctx: CheckContext, label: str) -> tuple[str, list[dict[str, Any]]]:
    """A valid archive restored first (the positive control): its namespace and its records as exported."""
    archive, ns = small_archive(ctx, label)
    forget_namespaces_at_end(ctx, ns)
    accepted, body = import_archive(ctx, archive, "restore")
    if not accepted:
        raise ControlRefused(f"a valid archive of three records was refused: {json.dumps(body, default=str)[:200]}")
    return ns, namespace_export(ctx, ns)


def kept_failures(ctx: CheckContext, ns: str, before: list[dict[str, Any]]) -> Iterator[Failure]:
    now = namespace_export(ctx, ns)
    if sorted(map(canonical, now)) != sorted(map(canonical, before)):
        yield Failure("an archive restored before the domain imports was lost or changed", len(now), len(before),
                      f"$ (namespace {ns})")


def canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, ensure_ascii=False)


def class_answer_failures(ctx: CheckContext, vc: domain.ValueClass, label: str, accepted: bool, body: Any, ns: str,
                          expected: int, written: int, expect: str,
                          on_open: Callable[[CheckContext, domain.ValueClass, bool], None]) -> Iterator[Failure]:
    """One archive of a class, restored: allowed ones restored whole (`expected` records in an export of
    its namespace), forbidden ones refused with nothing written, open ones either way (`on_open` records
    the reading seen under the caller's errata point)."""
    if expect == "valid" and not accepted:
        yield Failure(f"{label} was refused", json.dumps(body, default=str)[:200], "restored", "$")
    elif expect == "valid" and written != expected:
        yield Failure(f"{label} was restored, but not all its records are in an export of its namespace", written,
                      expected, f"$ (namespace {ns})")
    elif expect == "invalid" and accepted:
        yield Failure(f"{label} was accepted", body.get("imported") if isinstance(body, dict) else body, "rejected", "$")
    elif not accepted and written:
        forget_namespaces_at_end(ctx, ns)
        yield Failure(f"{label} was refused, but its records were written", written, 0, f"$ (namespace {ns})")
    elif expect == "open":
        on_open(ctx, vc, accepted)


def per_namespace(archive: dict[str, Any]) -> dict[str, int]:
    """How many records of an export each namespace holds (an agent counts in each namespace it is bound to)."""
    out: dict[str, int] = {}
    for _, record in memorizz.records_of(archive):
        data = record.get("data")
        if isinstance(data, dict):
            bound: list[Any] = data["memory_ids"] if isinstance(data.get("memory_ids"), list) else []
            for ns in {n for n in (data.get("memory_id"), *bound) if isinstance(n, str)}:
                out[ns] = out.get(ns, 0) + 1
    return out


def written_in(ctx: CheckContext, label: str) -> Callable[[str], int]:
    """How many records a namespace holds: from one export of everything, taken after a valid archive restored
    last; where that export misses it (paged past what it shows, the newest left out), from each namespace's
    own export, as absence seen in a paged export proves nothing."""
    archive, last = small_archive(ctx, label)
    forget_namespaces_at_end(ctx, last)
    import_archive(ctx, archive, "restore")
    held = per_namespace(export(ctx))
    if held.get(last, 0):
        return lambda ns: held.get(ns, 0)
    return lambda ns: len(namespace_export(ctx, ns))
