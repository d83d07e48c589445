"""The model-based check of MemoryAI and the comparators its saved sequences replay with; the state machine
it runs is suites/memoryai/state_machine.py, imported when the check runs (hypothesis is not loaded with the checks)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core import model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Unsupported
from memconform.suites.memoryai import client
from memconform.suites.memoryai.suite import SUITE


@sequence.comparator("memoryai.export")
def _replayed_export(ctx: CheckContext, reply: Any, want: Any) -> str | None:
    from memconform.suites.memoryai.state_machine import export_differs
    return export_differs(reply.json() if reply is not None else None, want)


@sequence.comparator("memoryai.scoped_export")
def _replayed_scoped_export(ctx: CheckContext, reply: Any, want: Any) -> str | None:
    from memconform.suites.memoryai.state_machine import scoped_differs
    return scoped_differs(reply.json() if reply is not None else None, want)


@SUITE.check(section="§3.8", keyword="MUST", level="2",
              sentence="Skip chunks whose `content_hash` already exists in the target tenant (no duplicate insert; the existing row is preserved).")
def model_sequences(ctx: CheckContext) -> Iterator[Failure]:
    """Random sequences of imports, re-imports of earlier bundles, rival rows, rejected bundles and
    deletions: every export equals the model (first row kept, nothing duplicated, deleted and rejected
    content absent, entities merged)."""

    from memconform.suites.memoryai.state_machine import Brain

    client.seed(ctx, client.bundle(ctx, [client.chunk(ctx, "sm-probe")]), "sequences of imports")
    try:
        ctx.target.call("delete_chunk", {"content_hash": "0" * 64})
        can_delete = True
    except Unsupported:
        can_delete = False
    diverged = model_based.run_sequences(ctx, model_based.for_run(Brain, ctx, can_delete=can_delete),
                                         model_based.budget(ctx, (3, 8), (20, 20)),
                                         ctx.state(client.MemoryaiRun).models)
    if diverged is not None:
        yield diverged.failure("the brain left the model", "the export as §3.8, §3.1 and §6 resolve the sequence")
