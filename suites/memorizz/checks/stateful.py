"""The model-based check of MemoRizz and the comparators its saved sequences replay with; the state machine
it runs is suites/memorizz/state_machine.py, imported when the check runs (hypothesis is not loaded with the checks)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core import model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.memorizz.client import (
    MemorizzRun,
)
from memconform.suites.memorizz.suite import SUITE


@sequence.comparator("memorizz.export")
def _replayed_export(ctx: CheckContext, reply: Any, want: Any) -> str | None:
    from memconform.suites.memorizz.state_machine import export_differs
    return export_differs(reply.json() if reply is not None else None, want)


@SUITE.check(level="consumer", section="What is portable", keyword="MUST", sentence="Imports preview conflicts before writing")
def model_sequences(ctx: CheckContext) -> Iterator[Failure]:
    """Random sequences of restores, previews and refused archives: after every step the namespace's export
    equals the model: nothing lost, nothing half-done, nothing written by a preview or a refusal."""

    from memconform.suites.memorizz.state_machine import Namespace

    diverged = model_based.run_sequences(ctx, model_based.for_run(Namespace, ctx), model_based.budget(ctx, (5, 8), (25, 15)),
                                         ctx.state(MemorizzRun).models)
    if diverged is not None:
        yield diverged.failure("the namespace left the model", "the records the conflict policies and validation leave")
