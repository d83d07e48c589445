"""The planned calls of the run header (run/planned_calls.py, suites/<spec>/calls.json): what a run of the profile
sends to each suite's reference, shown before the run; the footer's calls say what the run made."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memconform.core.profile import Profile
from memconform.run.planned_calls import calls_file, planned
from memconform.run.session import execute_run

TOLERANCE = 0.10  # scripts/planned_calls.py --check's: a figure to plan a run by, rewritten when a check changes it


def header_and_footer(report_dir: Path) -> tuple[dict, dict]:
    lines = [json.loads(x) for x in (report_dir / "report.jsonl").read_text("utf-8").splitlines()]
    return lines[0], lines[-1]


def test_the_header_plans_and_the_footer_counts(tmp_path: Path) -> None:
    execute_run(["memorizz"], None, Profile.named("ci"), tmp_path / "ci", check_ids=["memorizz.envelope_fields"])
    header, footer = header_and_footer(tmp_path / "ci")
    assert header["planned_calls"] == planned(["memorizz"], "ci") and header["planned_calls"]["memorizz"] > 0
    assert footer["calls"][0]["suite"] == "memorizz" and footer["calls"][0]["calls"] > 0
    # a profile no figure was recorded for plans nothing: the field is left out, never a guess
    assert planned(["memorizz"], "no-such-profile") == {}


@pytest.mark.parametrize("suite", ["amps"])  # the quickest whole ci run; scripts/planned_calls.py --check runs all
def test_the_recorded_ci_figure_is_what_a_ci_run_sends_the_reference(suite: str) -> None:
    recorded = json.loads(calls_file(suite).read_text("utf-8"))["profiles"]["ci"]
    outcome = execute_run([suite], None, Profile.named("ci"), None)
    made = outcome.calls[suite]["calls"]
    assert abs(made - recorded) <= TOLERANCE * recorded, (
        f"{suite} ci sent {made} calls to its reference, {calls_file(suite).name} says {recorded}: "
        "rerun scripts/planned_calls.py")


def test_every_suite_has_a_ci_figure() -> None:
    from memconform.core.suite import all_suites

    names = [s.name for s in all_suites()]
    assert sorted(planned(names, "ci")) == sorted(names)
