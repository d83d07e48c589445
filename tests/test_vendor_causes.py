"""Issue 34's vendor, as a test: an OMP server built from the spec (the reference's Starlette app on loopback)
with FastAPI's `{"detail": ...}` errors instead of the §4 envelope and a tags filter with OR logic. The
envelope mistake, met by many checks in memconform's words and in schemathesis's, is one cause line; the
filter is another; nothing else is blamed."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from memconform.cli.main import main
from memconform.core.report import Report
from memconform.render.groups import group_problems
from memconform.render.markdown import render_markdown

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations

ENVELOPE_CHECKS = ["omp.get_unknown_id_404", "omp.delete_then_gone", "omp.update_invalid_changes_nothing",
                   "omp.import_unknown_conflict_rejected", "omp.auth_missing_key_401", "omp.rejects_content_over_max",
                   "omp.rejects_unknown_type", "omp.malformed_json_rejected", "omp.list_limit_max_100",
                   "omp.fuzz_error_envelopes"]
CONTROLS = ["omp.list_response_shape", "omp.create_returns_201"]  # met by neither mistake: they pass


def test_the_vendors_two_mistakes_are_two_cause_lines(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    checks = [a for c in [*CONTROLS, *ENVELOPE_CHECKS, "omp.list_filter_tags_and"] for a in ("--check", c)]
    code = main(["run", "--suite", "omp", "--target", "python:vendor_omp:vendor_server", "--option",
                 "omp.ai_endpoints=no-key", "--report-dir", str(tmp_path), *checks])
    out = capsys.readouterr().out
    assert code == 1
    report = Report.from_path(tmp_path / "report.jsonl")
    outcomes = {r["check_id"]: r["outcome"] for r in report.results}
    assert {c: outcomes[c] for c in CONTROLS} == dict.fromkeys(CONTROLS, "passed")
    groups = group_problems(report.results)
    assert [(g.label, g.cause, sorted(g.check_ids)) for g in groups] == [
        ("failed", "the error is not the §4 envelope", sorted(ENVELOPE_CHECKS)),
        ("failed", "the tags (AND) filter returned memories that do not match", ["omp.list_filter_tags_and"]),
    ]
    after = out[out.index("Failures by cause"):]
    assert after.startswith("Failures by cause: 2 causes for 11 checks")
    assert re.findall(r"^  \d+ × failed: .*$", after, re.M) == [
        "  10 × failed: the error is not the §4 envelope",
        "  1 × failed: the tags (AND) filter returned memories that do not match"]
    assert after.count("rerun: ") == 2 and "Schema at" not in out and "[Filtered]" not in out
    assert "(2 causes)" in render_markdown(report) or "2 causes" in render_markdown(report)
    assert out.rstrip().splitlines()[-1].startswith(f"report: {tmp_path}/report.html")
    assert len(after.splitlines()) < 60, after  # 583 lines for this kind of run before
