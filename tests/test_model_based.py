"""The one frame of the state-machine checks: each of its four answers, from tiny machines."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import settings
from hypothesis.stateful import RuleBasedStateMachine, rule
from memconform.core import history_counts, model_based
from memconform.core.profile import Profile
from memconform.core.results import Inconclusive, TargetError
from memconform.core.runner import Context
from memconform.core.suite import SuiteSpec


def context() -> Any:
    ctx = Context(suite=SuiteSpec(name="test", spec_title="Test", version="1", levels=[]),
                  target=SimpleNamespace(send=lambda request: None), profile=Profile.named("ci"))  # type: ignore[arg-type]
    ctx.check_id = "test.sequences"
    ctx.models = []  # type: ignore[attr-defined]  (a suite keeps them in its run state)
    return ctx


def machine(ctx: Any, fail: Any, keep_models: bool = True) -> type:
    class Machine(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.model = SimpleNamespace(steps=[], acknowledged=0, tally={})
            if keep_models:
                ctx.models.append(self.model)

        @rule()
        def step(self) -> None:
            self.model.steps.append("step")
            self.model.acknowledged += 1
            error = fail(self.model)
            if error is not None:
                raise error

    return Machine


CONFIG = settings(max_examples=5, stateful_step_count=3, database=None, deadline=None, derandomize=True)


def test_no_divergence_is_none_and_counts_what_was_acknowledged() -> None:
    ctx = context()
    assert model_based.run_sequences(ctx, machine(ctx, lambda m: None), CONFIG, ctx.models) is None
    assert history_counts.totals(ctx)["test.sequences"]["acknowledged"] > 0


def test_a_divergence_that_repeats_is_reported_with_its_models() -> None:
    ctx = context()
    found = model_based.run_sequences(
        ctx, machine(ctx, lambda m: model_based.Divergence("left the model") if len(m.steps) == 2 else None), CONFIG, ctx.models)
    assert found is not None and found.repeated and found.again == ""
    assert str(found.error) == "left the model" and found.models[-1].steps == ["step", "step"]
    assert "no report folder" in found.detail


def test_a_divergence_seen_once_is_still_reported_and_marked() -> None:
    ctx = context()
    seen: list[int] = []

    def once(model: Any) -> Exception | None:
        seen.append(1)
        return model_based.Divergence("lost a write") if len(seen) == 1 else None

    found = model_based.run_sequences(ctx, machine(ctx, once), CONFIG, ctx.models)
    assert found is not None and not found.repeated and "did not repeat" in found.again


def test_an_unsteady_target_without_divergence_errors() -> None:
    ctx = context()
    seen: list[int] = []

    def once(model: Any) -> Exception | None:
        seen.append(1)
        return AssertionError("answered differently") if len(seen) == 1 else None

    with pytest.raises(TargetError, match="differently twice"):
        model_based.run_sequences(ctx, machine(ctx, once), CONFIG, ctx.models)


def test_no_sequence_is_inconclusive() -> None:
    ctx = context()
    with pytest.raises(Inconclusive, match="no sequence ran"):
        model_based.run_sequences(ctx, machine(ctx, lambda m: None, keep_models=False), CONFIG, ctx.models)
