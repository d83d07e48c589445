"""Jepsen-style counts of what a suite's stateful and failure-path checks wrote and found again.

acknowledged: writes the target said it did; of those, lost (gone though never deleted), duplicated
(there more than once), resurrected (deleted, yet back) and corrupted (there, but not as written, or
lines no reader can use). Checks add their counts with `record(ctx, counts)`; the suite's run notes
(`run_notes(ctx)`, or `with_counts(other_notes)`) put one line per suite in the report's footer.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

KINDS = ("acknowledged", "lost", "duplicated", "resurrected", "corrupted")
_LOCK = threading.Lock()  # checks that run apps in threads record from several threads


def counts(acknowledged: int = 0, lost: int = 0, duplicated: int = 0, resurrected: int = 0, corrupted: int = 0) -> dict[str, int]:
    return {"acknowledged": acknowledged, "lost": lost, "duplicated": duplicated, "resurrected": resurrected,
            "corrupted": corrupted}


def anomalies(found: dict[str, int]) -> dict[str, int]:
    """The counts that are not zero, acknowledged aside: what a failure shows."""
    return {k: v for k, v in found.items() if k != "acknowledged" and v}


@dataclass
class _Table:
    """A run's counts, per check (kept in the run's state)."""

    rows: dict[str, dict[str, int]] = field(default_factory=dict)  # check id -> its counts


def record(ctx: Any, found: dict[str, int], check_id: str | None = None) -> None:
    """Add a check's counts to the run's (per check, summed)."""
    check_id = check_id or ctx.check_id or "?"
    with _LOCK:
        table = ctx.state(_Table).rows
        row = table.setdefault(check_id, counts())
        for kind in KINDS:
            row[kind] += int(found.get(kind, 0))


def totals(ctx: Any) -> dict[str, dict[str, int]]:
    """check id -> its counts, as recorded in this run."""
    return {k: dict(v) for k, v in ctx.state(_Table).rows.items()}


def render(rows: dict[str, dict[str, int]]) -> str:
    whole = counts(**{k: sum(r[k] for r in rows.values()) for k in KINDS})
    per = "; ".join(f"{check}: {'/'.join(str(r[k]) for k in KINDS)}" for check, r in sorted(rows.items()))
    return ("Jepsen-style counts (stateful and failure-path checks): "
            + ", ".join(f"{k} {v}" for k, v in whole.items()) + f" (per check, {'/'.join(KINDS)}: {per})")


def run_notes(ctx: Any) -> list[str]:
    rows = totals(ctx)
    return [render(rows)] if rows else []


def with_counts(other: Callable[[Any], list[str]] | None = None) -> Callable[[Any], list[str]]:
    """A suite's run notes followed by its counts line (SuiteSpec(run_notes=with_counts(...)))."""
    def notes(ctx: Any) -> list[str]:
        return [*(other(ctx) if other is not None else []), *run_notes(ctx)]
    return notes


def record_sequences(ctx: Any, models: list[Any], check_id: str | None = None) -> None:
    """A state machine's counts: each sequence's acknowledged writes (`model.acknowledged`) and the
    anomalies its last comparison found (`model.tally`), summed over the sequences."""
    found = counts(acknowledged=sum(int(getattr(m, "acknowledged", 0)) for m in models))
    for m in models:
        tally = getattr(m, "tally", None) or {}
        for kind in KINDS[1:]:
            found[kind] += int(tally.get(kind, 0))
    record(ctx, found, check_id)
