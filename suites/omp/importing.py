"""POST /v1/import as the checks send it (the conflict strategy where option conflict_in puts it, errata O1)
and the shape every import report must have. Not a check module: the checks import it, never one another."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import client, rules
from memconform.targets.base import Reply


def import_with(ctx: CheckContext, memories: list[dict[str, Any]], conflict: str | None = None, key: Any = client.GLOBAL) -> Reply:
    """POST /v1/import; the strategy goes in the query parameter (default), or under conflict_in=both in the query
    and the body, or under conflict_in=body in the body only (errata O1)."""
    doc = client.export_file(memories)
    if conflict is not None and ctx.option("conflict_in") == "both":
        doc["conflict"] = conflict
    return client.import_(ctx, doc, conflict, key=key)


def import_report_failures(answer: Reply) -> Iterator[Failure]:
    body = answer.body
    if answer.status != 200 or not isinstance(body, dict):
        yield Failure("import did not answer 200 with a report", f"{answer.status} {answer.raw[:160]!r}", 200, "$")
        return
    for name in ("imported", "skipped"):
        if not rules.is_int(body.get(name)):
            yield Failure(f"{name} is missing or not an integer", body.get(name, "<absent>"), "integer", f"$.{name}")
    if not isinstance(body.get("errors"), list):
        yield Failure("errors is missing or not an array", body.get("errors", "<absent>"), "[]", "$.errors")


REPORTED, REFUSED = "invalid memory reported, the rest imported", "whole file refused"


def o7_predictions(answer: Any, where: int, bad_id: Any, stored: int, good: int) -> dict[str, bool]:
    """O7: reported (200, `errors` naming the invalid memory by index or id, every good one stored) or
    refused (a 4xx, none stored)."""
    errors = answer.body.get("errors") if answer.ok and isinstance(answer.body, dict) else None
    named = [e for e in errors or [] if isinstance(e, dict) and (e.get("index") == where or e.get("id") == bad_id)]
    return {REPORTED: answer.ok and bool(named) and stored == good, REFUSED: 400 <= answer.status < 500 and not stored}
