"""Jepsen-style counts (memconform.core.history_counts): every suite's stateful and failure-path checks put
acknowledged, lost, duplicated, resurrected and corrupted into the run's notes, one line per suite."""

from __future__ import annotations

import re
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from memconform.core import history_counts as jepsen
from memconform.core.profile import Profile
from memconform.core.report import Report
from memconform.run.session import execute_run

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)

CHECKS = {
    "memoryai": ["memoryai.model_sequences"],
    "amps": ["amps.model_sequences"],
    "memorizz": ["memorizz.model_sequences"],
    "emp": ["emp.writer_model_sequences", "emp.writer_concurrent_no_loss"],
    "omp": ["omp.model_based_sequences"],
}
LINE = re.compile(r"Jepsen-style counts \(stateful and failure-path checks\): acknowledged (\d+), lost (\d+), "
                  r"duplicated (\d+), resurrected (\d+), corrupted (\d+)")


def counts_note(notes: list[dict[str, str]], suite: str) -> tuple[int, ...]:
    found = [LINE.search(n["note"]) for n in notes if n["suite"] == suite]
    hits = [tuple(int(g) for g in m.groups()) for m in found if m]
    assert len(hits) == 1, notes
    return hits[0]


def test_every_suite_reports_its_counts_in_the_footer(tmp_path: Path) -> None:
    checks = [c for ids in CHECKS.values() for c in ids]
    outcome = execute_run(sorted(CHECKS), None, Profile.named("ci"), report_dir=tmp_path, check_ids=checks)
    assert {r.check_id: r.outcome.value for r in outcome.results} == dict.fromkeys(checks, "passed")
    footer = Report.from_path(tmp_path / "report.jsonl").footer
    assert footer is not None
    for suite, ids in CHECKS.items():
        acknowledged, *anomalies = counts_note(footer["notes"], suite)
        assert acknowledged > 0 and anomalies == [0, 0, 0, 0], suite
        line = next(n["note"] for n in footer["notes"] if n["suite"] == suite and "Jepsen" in n["note"])
        assert all(f"{check}: " in line for check in ids), line
    summary = (tmp_path / "summary.md").read_text("utf-8")
    assert summary.count("Jepsen-style counts") == len(CHECKS)


@pytest.mark.parametrize("suite,mutant,check,kind", [
    ("memorizz", "SkipMeansAbort", "memorizz.model_sequences", "lost"),
    ("memoryai", "DedupAgainstLastImportOnly", "memoryai.model_sequences", "duplicated"),
])
def test_a_broken_implementation_shows_in_the_counts(suite: str, mutant: str, check: str, kind: str) -> None:
    outcome = execute_run([suite], f"python:memconform.suites.{suite}.mutants:{mutant}", Profile.named("ci"), report_dir=None,
                          check_ids=[check])
    assert outcome.results[0].outcome.value == "failed"
    found = dict(zip(jepsen.KINDS, counts_note(outcome.notes, suite), strict=True))
    assert found[kind] > 0, found


def test_counts_add_up_per_check_and_render_in_one_line() -> None:
    ctx = SimpleNamespace(state=_states(), check_id="s.a")
    jepsen.record(ctx, jepsen.counts(acknowledged=3, lost=1))
    jepsen.record(ctx, jepsen.counts(acknowledged=2, corrupted=1))
    jepsen.record(ctx, jepsen.counts(acknowledged=5), check_id="s.b")
    assert jepsen.totals(ctx) == {"s.a": jepsen.counts(5, 1, 0, 0, 1), "s.b": jepsen.counts(5)}
    (line,) = jepsen.with_counts(lambda c: [])(ctx)
    assert "acknowledged 10, lost 1, duplicated 0, resurrected 0, corrupted 1" in line
    assert "s.a: 5/1/0/0/1" in line and "s.b: 5/0/0/0/0" in line
    assert jepsen.with_counts(lambda c: ["other"])(SimpleNamespace(state=_states())) == ["other"]
    assert jepsen.anomalies(jepsen.counts(4, lost=2)) == {"lost": 2}


def _states() -> Any:
    """A context's `state(kind)`: one instance per kind, as runner.Context keeps them."""
    kept: dict[type, Any] = {}
    return lambda kind: kept.setdefault(kind, kind())
