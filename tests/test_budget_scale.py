"""$MEMCONFORM_BUDGET_SCALE multiplies the profiles' run and check budgets, never a budget given on the
command line nor a call's own deadline; the harness's tests run with it (tests/conftest.py), so a verdict
they assert does not depend on how busy the machine is."""

from __future__ import annotations

import argparse

import pytest
from memconform.cli.common import profile_from_args
from memconform.core.profile import BUDGETS, Limits, Profile
from memconform.core.results import HarnessError


def args(**budgets: float | None) -> argparse.Namespace:
    return argparse.Namespace(profile="ci", option=[], seed=None, run_deadline=budgets.get("run"),
                              call_deadline=budgets.get("call"), check_deadline=budgets.get("check"))


def test_the_tests_run_with_lifted_budgets():
    import os

    assert float(os.environ["MEMCONFORM_BUDGET_SCALE"]) >= 10
    limits = Profile.named("ci").limits
    assert limits.check_deadline_s is not None and limits.check_deadline_s >= 10 * BUDGETS["ci"][1]


@pytest.mark.parametrize("name", ["ci", "default", "thorough", "strict"])
def test_the_scale_multiplies_each_profiles_run_and_check_budgets(monkeypatch, name):
    monkeypatch.setenv("MEMCONFORM_BUDGET_SCALE", "4")
    limits = Profile.named(name).limits
    run_s, check_s = BUDGETS[name]
    assert (limits.run_deadline_s, limits.check_deadline_s) == (4 * run_s, 4 * check_s)
    assert (limits.call_deadline_s, limits.request_timeout_s) == (Limits.call_deadline_s, Limits.request_timeout_s)


def test_unset_the_profiles_own_budgets_hold(monkeypatch):
    monkeypatch.delenv("MEMCONFORM_BUDGET_SCALE")
    limits = Profile.named("ci").limits
    assert (limits.run_deadline_s, limits.check_deadline_s) == BUDGETS["ci"] == (240.0, 60.0)


def test_budgets_given_on_the_command_line_are_never_scaled(monkeypatch):
    monkeypatch.setenv("MEMCONFORM_BUDGET_SCALE", "10")
    limits = profile_from_args(args(run=5, check=2, call=1)).limits
    assert (limits.run_deadline_s, limits.check_deadline_s, limits.call_deadline_s) == (5, 2, 1)
    only_run = profile_from_args(args(run=5)).limits
    assert (only_run.run_deadline_s, only_run.check_deadline_s) == (5, 600)


@pytest.mark.parametrize("text", ["0", "-2", "fast", "nan", "inf"])
def test_a_scale_that_is_not_a_positive_number_is_refused(monkeypatch, text):
    monkeypatch.setenv("MEMCONFORM_BUDGET_SCALE", text)
    with pytest.raises(HarnessError, match="MEMCONFORM_BUDGET_SCALE"):
        Profile.named("ci")
