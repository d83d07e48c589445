"""The model-based check of AMPS and the comparators its saved sequences replay with; the state machine
it runs is suites/amps/state_machine.py, imported when the check runs (hypothesis is not loaded with the checks)."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from memconform.core import model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.amps import model as oracle
from memconform.suites.amps.client import (
    AmpsRun,
    import_semantics,
)
from memconform.suites.amps.suite import SUITE


@sequence.comparator("amps.export")
def _replayed_export(ctx: CheckContext, reply: Any, want: Any) -> str | None:
    from memconform.suites.amps.state_machine import export_differs
    return export_differs(reply.json() if reply is not None else None, want)


@SUITE.check(level="consumer", section="Privacy invariants", keyword="MUST",
                sentence="Deleting an artifact must re-evaluate every atom whose provenance depends on it.")
def model_sequences(ctx: CheckContext) -> Iterator[Failure]:
    """Random sequences of imports (valid and refused) and deletions: after every step the subject's export
    equals the model: nothing lost, nothing half-done, nothing resurrected."""

    from memconform.suites.amps.state_machine import AmpsSubject

    seen = import_semantics(ctx)
    readings = oracle.Readings.from_options(ctx.option)
    readings = replace(readings, import_semantics=seen)
    # ci: three sequences of up to eight steps draw every rule and variant four of six drew (a valid import, a
    # deletion, refusals for an unzoned date and a missing subject id, an open class) and one more open class,
    # in 44 calls, not 58: each sequence opens with two imports compared (bench/RESULTS.md)
    diverged = model_based.run_sequences(ctx, model_based.for_run(AmpsSubject, ctx, readings=readings),
                                         model_based.budget(ctx, (3, 8), (25, 15)),
                                         ctx.state(AmpsRun).models)
    if diverged is not None:
        yield diverged.failure("the subject left the model", "the export the spec and the import semantics (A12) describe",
                               readings=(f"A12:{seen}",))
