"""What a MemoryAI target answered, read: the import report and its counters, a bundle's rejection, an accepted
or refused answer, a control that must pass. The calls themselves are client.py."""

from __future__ import annotations

import json
from typing import Any

from memconform.core.results import (
    ControlRefused,
    Failure,
    TargetError,
)
from memconform.targets.base import Reply

REPORT_COUNTERS = {
    "chunks": ("inserted", "skipped_duplicate", "skipped_invalid"),
    "memory_edges": ("upserted", "skipped"),
    "entities": ("upserted",),
    "l2_sessions": ("inserted",),
    "mood_states": ("upserted",),
    "agents": ("upserted",),
}


def is_bundle_rejection(reply: Reply) -> bool:
    """A refusal that is about the bundle (4xx or a transport's rejection, with JSON), not a crash or an error page."""
    if reply.ok:
        return False
    if reply.http_status is not None:
        if not 400 <= reply.http_status < 500 or reply.http_status in (401, 403, 404, 405, 408, 413, 429):
            return False
        try:
            return isinstance(json.loads(reply.raw or b"null"), dict)
        except ValueError:
            return False
    return True


def expect_rejected(reply: Reply, what: str) -> list[Failure]:
    """A negative request must be refused, and refused as a bundle rejection (not a 5xx, 401 or HTML page)."""
    if reply.ok:
        return [Failure(f"{what} was accepted", f"{reply.status} {reply.http_status or ''} {reply.raw[:200]!r}", "rejected")]
    if not is_bundle_rejection(reply):
        raise TargetError(f"{what}: the refusal is not a bundle rejection (HTTP {reply.http_status}, "
                          f"{reply.content_type or 'no content type'}): {reply.raw[:200]!r}")
    return []


def control(reply: Reply, what: str) -> None:
    """The positive control of a negative check: the same request with the broken rule repaired is accepted."""
    if not reply.ok:
        raise ControlRefused(f"{what}: {reply.status} {reply.http_status or ''} {reply.raw[:200]!r}")


def report_of(reply: Reply) -> dict[str, Any]:
    """The `report` object of an ImportReport, or a TargetError if there is none to read."""
    body = reply.json()
    if not isinstance(body, dict) or not isinstance(body.get("report"), dict):
        raise TargetError(f"import answered no ImportReport object: {reply.raw[:200]!r}")
    return body["report"]


def report_body(reply: Reply) -> Any:
    """The JSON answer of an import, or None when it is not JSON."""
    try:
        return reply.json()
    except TargetError:
        return None


def report_or_none(reply: Reply) -> dict[str, Any] | None:
    """The ImportReport's `report`, or None when the consumer answers none (its shape is a reading, errata E8)."""
    try:
        body = reply.json()
    except TargetError:
        return None
    return body["report"] if isinstance(body, dict) and isinstance(body.get("report"), dict) else None


def counter(report: dict[str, Any], section: str, name: str) -> Any:
    value = report.get(section, {})
    return value.get(name) if isinstance(value, dict) else None


def expect_accepted(reply: Reply, what: str) -> list[Failure]:
    if reply.ok:
        return []
    return [Failure(f"{what}: the consumer refused a conformant bundle", f"{reply.status} {reply.http_status or ''} {reply.raw[:200]!r}", "accepted")]
