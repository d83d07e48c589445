"""A state machine stops starting sequences when the check's budget runs low (so no call is cut in the
middle and the in-process target is not marked hung), and a divergence seen before the stop still fails
the check. No timing decides these tests: the clock's deadline is set, not waited for."""

from __future__ import annotations

import time
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, rule
from memconform.core import model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.core.profile import Limits, Profile
from memconform.core.results import Inconclusive
from memconform.core.runner import Context
from memconform.core.suite import get_suite
from memconform.targets.pyobj import PythonTarget


class Echo:
    def echo(self, body: Any, **params: Any) -> Any:
        return {"got": body}


def context() -> Context:
    target = PythonTarget(Echo(), "echo", Limits(check_deadline_s=600))
    ctx = Context(suite=get_suite("memoryai"), target=target, profile=Profile.named("ci"))
    target.clock.start_check()
    return ctx


def machine(ctx: CheckContext, models: list[Any], diverge: bool) -> type:
    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            models.append(self)
            sequence.begin(ctx)

        @rule()
        def call(self) -> None:
            ctx.target.call("echo", {"n": len(models)})
            if diverge:
                ctx.target.clock.check_deadline = time.monotonic()  # the budget is spent from here on
                raise model_based.Divergence(sequence.expect(ctx, "reply", {"ok": False}, "the echo was answered"))

    return Machine


CONFIG = settings(max_examples=5, stateful_step_count=3, database=None, derandomize=True, deadline=None)


def test_no_sequence_starts_when_the_budget_is_low_and_nothing_ran_is_inconclusive() -> None:
    ctx = context()
    ctx.target.clock.check_deadline = time.monotonic() + 1  # less than a fifth of 600 s left
    models: list[Any] = []
    with pytest.raises(Inconclusive, match="no sequence ran"):
        model_based.run_sequences(ctx, machine(ctx, models, diverge=False), CONFIG, models)
    assert any("no further sequence was started" in n for n in ctx.transcript)
    assert ctx.target.clock.hung is None


def test_with_time_left_every_sequence_runs() -> None:
    ctx = context()
    models: list[Any] = []
    assert model_based.run_sequences(ctx, machine(ctx, models, diverge=False), CONFIG, models) is None
    assert len(models) == 5 and not any("no further sequence" in n for n in ctx.transcript)


def test_a_divergence_seen_before_the_stop_still_fails_the_check() -> None:
    ctx = context()
    models: list[Any] = []
    found = model_based.run_sequences(ctx, machine(ctx, models, diverge=True), CONFIG, models)
    assert found is not None and "the echo was answered" in str(found.error)
