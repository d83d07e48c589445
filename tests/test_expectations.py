"""`memconform run --expect FILE`: known failures and flaky checks decide the exit code, never the report."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memconform.cli.main import main
from memconform.core.report import Report
from memconform.core.results import Outcome, Result
from memconform.run.expectations import Expectations, apply

MUTANT = "python:memconform.suites.memoryai.mutants:WrongChecksum"  # fails the two checksum checks, nothing else here
FAILING = ["memoryai.checksum_present_and_valid", "memoryai.checksum_valid_scoped"]
PASSING = "memoryai.envelope_format_literal"


def _run(tmp_path: Path, expectations: dict[str, Any] | None, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    args = ["run", "--suite", "memoryai", "--target", MUTANT, "--report-dir", str(tmp_path / "r")]
    for c in [*FAILING, PASSING]:
        args += ["--check", c]
    if expectations is not None:
        (tmp_path / "expect.json").write_text(json.dumps(expectations))
        args += ["--expect", str(tmp_path / "expect.json")]
    code = main(args)
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def _known(*checks: str) -> list[dict[str, str]]:
    return [{"check": c, "reason": "vendor ticket 12"} for c in checks]


def test_without_expectations_the_failures_fail_the_run(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _ = _run(tmp_path, None, capsys)
    assert code == 1


def test_listed_failures_do_not_fail_the_run_and_the_report_is_unchanged(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(tmp_path, {"version": 1, "known_failures": _known(*FAILING)}, capsys)
    assert code == 0, out
    report = Report.from_path(tmp_path / "r" / "report.jsonl")
    assert report.footer is not None and report.footer["exit_code"] == 1  # the report's truth stands
    assert {r["check_id"] for r in report.results if r["outcome"] == "failed"} == set(FAILING)


def test_the_printed_entries_paste_into_a_file_that_passes(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(tmp_path, {"version": 1, "known_failures": _known(FAILING[0])}, capsys)
    assert code == 1
    pasted = out.split("entries to paste under \"known_failures\" if they are known:\n", 1)[1].split("\nexpectations: exit code")[0]
    entries = json.loads("[" + pasted + "]")
    assert [e["check"] for e in entries] == [FAILING[1]] and all(e["reason"] for e in entries)
    code, out = _run(tmp_path, {"version": 1, "known_failures": _known(FAILING[0]) + entries}, capsys)
    assert code == 0, out


@pytest.mark.parametrize(("extra", "message"), [
    (_known(PASSING), "now passes"),
    (_known("memoryai.no_such_check"), "matches no check"),
    (_known(FAILING[0]), "listed twice"),
])
def test_a_stale_entry_fails_the_run_with_a_clear_message(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                          extra: list[dict[str, str]], message: str) -> None:
    code, out = _run(tmp_path, {"version": 1, "known_failures": _known(*FAILING) + extra}, capsys)
    assert code == 1
    assert message in out


def test_a_check_in_both_lists_is_a_duplicate(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(tmp_path, {"version": 1, "known_failures": _known(*FAILING), "flaky": _known(FAILING[0])}, capsys)
    assert code == 1 and "listed twice" in out


def test_flaky_checks_do_not_decide_whatever_their_outcome(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(tmp_path, {"version": 1, "flaky": _known(*FAILING, PASSING)}, capsys)
    assert code == 0, out


def test_a_file_that_is_not_an_expectations_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out = _run(tmp_path, {"version": 1, "known": []}, capsys)
    assert code == 2 and "not an expectations file" in out
    assert not (tmp_path / "r" / "report.jsonl").exists()  # refused before the run


def test_a_whole_run_with_its_failures_listed_passes_through_a_prerequisite_level(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Level 3 is not conformant only because it requires Level 1, whose failures are listed."""
    (tmp_path / "e.json").write_text(json.dumps({"version": 1, "known_failures": _known(*FAILING)}))
    code = main(["run", "--suite", "memoryai", "--target", MUTANT, "--report-dir", str(tmp_path / "r"),
                 "--expect", str(tmp_path / "e.json")])
    assert code == 0, capsys.readouterr().out[-2000:]
    footer = Report.from_path(tmp_path / "r" / "report.jsonl").footer
    assert footer is not None and footer["exit_code"] == 1
    assert {lv["level"]: lv["status"] for lv in footer["levels"]}["3"] == "not conformant"


def test_a_known_failure_that_errors_is_not_excused() -> None:
    errored = Result(check_id="memoryai.a", suite="memoryai", spec="s", section="§1", keyword="MUST", level="1",
                     sentence="s", outcome=Outcome.ERRORED, reason="target error: connection refused")
    exp = Expectations.from_data({"version": 1, "known_failures": _known("memoryai.a")})
    verdict = apply(exp, [errored], [], {"memoryai.a"}, 1)
    assert verdict.exit_code == 1
    assert any("errored" in p and "flaky" in p for p in verdict.problems)
    flaky = Expectations.from_data({"version": 1, "flaky": _known("memoryai.a")})
    assert apply(flaky, [errored], [], {"memoryai.a"}, 1).exit_code == 0
