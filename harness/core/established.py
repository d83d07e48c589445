"""Deviations a run has established, so that a later failure one of them explains names its root cause.

A check that fails for a deviation another check could trip over (tags filtered after paging, an invalid
item an import stores) establishes it: `establish(ctx, key, what)`, keyed by a short stable name. A later
check whose failure that deviation explains marks it: `explained(ctx, failure, key, ...)` sets
`Failure.explained_by` to the establishing check's id and opens the detail with "explained by <check>:
<what>"; the report groups such a failure under the check that established the deviation (render/groups.py),
and the footer lists what the run established (`run_notes`). What is recorded is what a check saw fail,
never a guess: a key nobody established explains nothing.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any

from .results import Failure


@dataclass(frozen=True)
class Deviation:
    key: str
    check_id: str  # the check whose failure established it
    what: str  # one line, as the footer shows it


@dataclass
class Established:
    """The run's record (ctx.state(Established)): the first check to establish a key keeps it."""

    found: dict[str, Deviation] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)


def establish(ctx: Any, key: str, what: str) -> Deviation:
    record = ctx.state(Established)
    with record.lock:
        return record.found.setdefault(key, Deviation(key, str(getattr(ctx, "check_id", "") or ""), what))


def explaining(ctx: Any, *keys: str) -> Deviation | None:
    """The first of `keys` another check of this run established, or None."""
    record = ctx.state(Established)
    here = str(getattr(ctx, "check_id", "") or "")
    with record.lock:
        for key in keys:
            found = record.found.get(key)
            if found is not None and found.check_id != here:
                return found
    return None


def explained(ctx: Any, failure: Failure, *keys: str) -> Failure:
    """The failure, marked as explained by the first established deviation among `keys` (if any)."""
    cause = explaining(ctx, *keys)
    if cause is not None and not failure.explained_by:
        failure.explained_by = cause.check_id
        failure.detail = f"explained by {cause.check_id}: {cause.what}" + (f"; {failure.detail}" if failure.detail else "")
    return failure


def run_notes(ctx: Any) -> list[str]:
    """The footer line: what the run established, and by which check."""
    record = ctx.state(Established)
    with record.lock:
        found = list(record.found.values())
    if not found:
        return []
    return ["deviations established (later failures they explain say so): "
            + "; ".join(f"{d.what} ({d.check_id})" for d in found)]
