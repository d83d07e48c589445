"""scripts/verdict_snapshot.py: the before/after comparison a move of code is judged by."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "scripts"))
import verdict_snapshot  # noqa: E402

pytestmark = pytest.mark.slow  # the slow tier: builds packages, starts browsers or whole suites in subprocesses

sys.path.pop(0)


def test_every_suite_has_its_reference_and_every_mutant_as_rows() -> None:
    from memconform.core.suite import all_suites

    rows = verdict_snapshot.rows([])
    for spec in all_suites():
        assert (spec.name, "reference") in rows
        if spec.mutants is not None:
            assert {n for s, n in rows if s == spec.name} >= set(spec.mutants().MUTANTS)


def test_differences_name_each_changed_verdict_and_each_missing_row() -> None:
    before = {"amps": {"reference": {"amps.a": "passed", "amps.b": "skipped"}, "Gone": {"amps.a": "failed"}}}
    after = {"amps": {"reference": {"amps.a": "failed", "amps.c": "passed"}, "New": {"amps.a": "failed"}}}
    assert verdict_snapshot.differences(before, after) == [
        "amps:Gone only before", "amps:New only after",
        "amps:reference amps.a: passed -> failed", "amps:reference amps.b: skipped -> absent",
        "amps:reference amps.c: absent -> passed"]
    assert verdict_snapshot.differences(before, before) == []


@pytest.mark.parametrize("row", ["reference", "ArtifactsReplacedPerImport"])
def test_a_row_is_every_check_of_its_suite(row: str) -> None:
    from memconform.core.registry import REGISTRY

    found = verdict_snapshot.verdicts("amps", row)
    assert set(found) == {c.id for c in REGISTRY.for_suite("amps")}
    failed = {c for c, v in found.items() if v == "failed"}
    assert (failed == set()) == (row == "reference")
    assert "errored" not in found.values()


def test_budgets_are_lifted_as_in_the_tests_and_the_output_names_the_factor(monkeypatch: pytest.MonkeyPatch) -> None:
    from memconform.core.profile import BUDGETS, Profile

    monkeypatch.delenv("MEMCONFORM_BUDGET_SCALE", raising=False)
    line = verdict_snapshot.lift_budgets(None)
    assert line == "budgets: the ci profile's times 10 (MEMCONFORM_BUDGET_SCALE=10, from the tests' factor)"
    assert Profile.named("ci").limits.check_deadline_s == BUDGETS["ci"][1] * 10  # what each row's process inherits
    monkeypatch.setenv("MEMCONFORM_BUDGET_SCALE", "3")
    assert verdict_snapshot.lift_budgets(None).startswith("budgets: the ci profile's times 3 (")
    assert "from $MEMCONFORM_BUDGET_SCALE" in verdict_snapshot.lift_budgets(None)
    assert "times 1 (MEMCONFORM_BUDGET_SCALE=1, from --budget-scale)" in verdict_snapshot.lift_budgets("1")
    assert Profile.named("ci").limits.check_deadline_s == BUDGETS["ci"][1]


def test_a_budget_scale_that_is_not_a_positive_number_is_refused_before_any_row_runs(
        monkeypatch: pytest.MonkeyPatch, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("MEMCONFORM_BUDGET_SCALE", "10")
    monkeypatch.setattr(verdict_snapshot, "snapshot", lambda *a: pytest.fail("a row ran"))
    with pytest.raises(SystemExit) as stopped:
        verdict_snapshot.main(["--out", str(tmp_path / "s.json"), "--budget-scale", "0", "--suite", "amps"])
    assert stopped.value.code == 2 and "is not a positive number" in capsys.readouterr().err


def test_the_snapshot_line_names_the_factor_its_rows_ran_with(monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    import os

    seen = []
    monkeypatch.setenv("MEMCONFORM_BUDGET_SCALE", "10")
    monkeypatch.setattr(verdict_snapshot, "snapshot", lambda *a: seen.append(os.environ["MEMCONFORM_BUDGET_SCALE"]) or {})
    assert verdict_snapshot.main(["--out", str(tmp_path / "s.json"), "--budget-scale", "4", "--suite", "amps"]) == 0
    assert seen == ["4"] and "; budgets: the ci profile's times 4 (" in capsys.readouterr().out
