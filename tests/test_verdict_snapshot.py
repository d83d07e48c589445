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
