"""The model-based check of EMP and the comparators its saved sequences replay with; the state machine
it runs is suites/emp/state_machine.py, imported when the check runs (hypothesis is not loaded with the checks)."""

from __future__ import annotations

import os
import shlex
from collections.abc import Iterator
from typing import Any

from memconform.core import established, model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Unsupported
from memconform.suites.emp.checks.common import (
    EmpRun,
    call,
    entry,
    new_file,
)
from memconform.suites.emp.deviations import FOREIGN_LINES_DROPPED
from memconform.suites.emp.suite import SUITE


@sequence.comparator("emp.foreign_lines")
def _replayed_foreign(ctx: CheckContext, reply: Any, want: Any) -> str | None:
    from memconform.suites.emp.state_machine import foreign_missing
    return foreign_missing(want["path"], want["foreign"])


@sequence.comparator("emp.view")
def _replayed_view(ctx: CheckContext, reply: Any, want: Any) -> str | None:
    from memconform.suites.emp.state_machine import view_differs
    seen = reply.body if reply is not None and reply.ok and isinstance(reply.body, list) else None
    return view_differs(want["path"], seen, want)


def _new_file_again(ctx: CheckContext, body: Any) -> dict[str, str]:
    path = new_file(ctx)
    return {body["path"]: path, os.path.dirname(body["path"]): os.path.dirname(path)}


def _append_again(ctx: CheckContext, body: Any) -> dict[str, str]:
    with open(body["path"], "ab") as fh:
        fh.write(body["line"].encode("utf-8") + b"\n")
    return {}


sequence.harness_action("emp.new_file", lambda b: [f"mkdir -p {shlex.quote(os.path.dirname(b['path']))} && : > {shlex.quote(b['path'])}"])(_new_file_again)
sequence.harness_action("emp.append_line", lambda b: [f"printf '%s\\n' {shlex.quote(b['line'])} >> {shlex.quote(b['path'])}"])(_append_again)


@SUITE.check(level="writer", section="Write Operations", keyword="MUST",
              sentence="Update: Append new entry with same id (newer ts takes precedence)")
def writer_model_sequences(ctx: CheckContext) -> Iterator[Failure]:
    """Random sequences of appends, updates and deletes by the target and by other apps: after every
    step every other app's line is where it was, and at the end the target's view equals the model."""

    from memconform.suites.emp.state_machine import ONE_MACHINE_AT_A_TIME, DroppedByDelete, EmpFile

    first = entry(ctx, "probe")
    try:  # is update offered at all? (a refusal still says yes: the sequences then show what it does)
        call(ctx, "update", {"path": new_file(ctx, [first]), "id": first["id"], "entry": {"content": ctx.unique("p")}})
        offers_update = True
    except Unsupported:
        offers_update = False
    with ONE_MACHINE_AT_A_TIME:
        diverged = model_based.run_sequences(ctx, model_based.for_run(EmpFile, ctx, offers_update=offers_update),
                                             model_based.budget(ctx, (3, 6), (25, 20)),
                                             ctx.state(EmpRun).models)
    if diverged is not None:
        failure = diverged.failure("the file left the model", "the view and other apps' lines as the spec resolves them")
        if str(diverged.error)[:1000] in ctx.state(DroppedByDelete).messages:  # the delete dropped them, nothing else
            failure = established.explained(ctx, failure, FOREIGN_LINES_DROPPED)
        yield failure
