"""The model-based check of OMP and the comparators its saved sequences replay with; the state machine
it runs is suites/omp/state_machine.py, imported when the check runs (hypothesis is not loaded with the checks)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core import established, model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import client, model
from memconform.suites.omp.deviations import CONFLICT_FROM_BODY
from memconform.suites.omp.suite import SUITE


@sequence.comparator("omp.memory")
def _replayed_memory(ctx: CheckContext, reply: Any, want: Any) -> str | None:
    from memconform.suites.omp.state_machine import memory_differences
    if reply is None or reply.status != 200 or not isinstance(reply.body, dict):
        return f"answered {getattr(reply, 'status', None)}, the model expected 200 with the memory"
    return "; ".join(memory_differences(reply.body, want)) or None


@sequence.comparator("omp.export")
def _replayed_export(ctx: CheckContext, reply: Any, want: Any) -> str | None:
    from memconform.suites.omp.state_machine import export_differs
    body = reply.body if reply is not None and reply.ok else None
    if not isinstance(body, dict) or not isinstance(body.get("memories"), list):
        return f"the export answered {getattr(reply, 'status', None)} without a memories array"
    return export_differs([m for m in body["memories"] if isinstance(m, dict)], want)


@sequence.comparator("omp.model")
def _replayed_model(ctx: CheckContext, reply: Any, want: Any) -> str | None:
    """The model's answer set again, from the state recorded at the divergence (the replay's ids)."""
    if reply is None:
        return "no reply to compare"
    server, request = model.Model.from_snapshot(want, model.Readings.from_options(ctx.option))
    reason = server.accepts(request, reply)
    return None if reason is None else str(reason)


@SUITE.check(section="§8", keyword="MUST", level="core",
           sentence="Implements all endpoints in §3.3 with correct HTTP methods and status codes")
def model_based_sequences(ctx: CheckContext) -> Iterator[Failure]:
    """Random sequences of every operation compared with the model; the shrunk failing sequence is the detail."""

    from memconform.suites.omp.state_machine import ExplainedDivergences, OmpMachine, keys_of
    log: list[str] = []
    config = model_based.budget(ctx, (3, 12), (12, 25))
    keys = keys_of(ctx)
    machine = model_based.for_run(OmpMachine, ctx, keys=keys, full=len(keys) > 1, log=log,
                                  readings=model.Readings.from_options(ctx.option))
    diverged = model_based.run_sequences(ctx, machine, config, ctx.state(client.OmpRun).models)
    if diverged is not None:
        failure = diverged.failure("the target left the model", "every answer as the model says", steps=log[-20:])
        if any("import overwrite" in step or "import duplicate" in step for step in log[-20:]):
            failure = established.explained(ctx, failure, CONFLICT_FROM_BODY)  # a strategy the target did not read
        cause = ctx.state(ExplainedDivergences).by_message.get(str(diverged.error)[:1000])
        if cause is not None:  # the list answer at the divergence is the untagged page filtered afterwards
            failure = established.explained(ctx, failure, cause)
        yield failure
    ctx.note(f"{config.max_examples} sequences of up to {config.stateful_step_count} steps compared with the model")
