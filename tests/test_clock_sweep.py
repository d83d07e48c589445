"""A sweep of a domain table (a check declared `sweep=True`) may spend SWEEP_BUDGET_FACTOR check budgets;
any other check one; the run budget bounds both."""

from __future__ import annotations

from memconform.core.check import SWEEP_BUDGET_FACTOR
from memconform.core.clock import Clock
from memconform.core.registry import REGISTRY


class FakeTime:
    def __init__(self) -> None:
        self.t = 1000.0

    def __call__(self) -> float:
        return self.t


def test_a_sweep_gets_more_check_budgets_and_the_run_budget_still_bounds_it() -> None:
    now = FakeTime()
    clock = Clock(now.t + 500, 500, 60, now=now)
    clock.start_check(SWEEP_BUDGET_FACTOR)
    now.t += 61
    assert clock.spent() is None  # past one check budget: a sweep goes on
    now.t += 60 * SWEEP_BUDGET_FACTOR - 61
    assert clock.spent() == f"the check budget ({60 * SWEEP_BUDGET_FACTOR:g} s) is spent"
    clock.start_check()
    now.t += 61
    assert clock.spent() == "the check budget (60 s) is spent"
    short = Clock(now.t + 90, 90, 60, now=now)
    short.start_check(SWEEP_BUDGET_FACTOR)
    assert short.deadline("a call", 1000) == now.t + 90  # the run budget ends it first


def test_the_domain_sweeps_are_declared_as_sweeps() -> None:
    sweeps = {c.id for suite in ("amps", "emp", "memorizz", "memoryai", "omp") for c in REGISTRY.for_suite(suite) if c.sweep}
    assert {"amps.imports_every_schema_class", "emp.writer_appends_every_class", "memorizz.domain_envelope_every_class",
            "memoryai.domain_import_every_class", "omp.domain_create_every_class"} <= sweeps
    assert "omp.create_returns_201" not in sweeps
