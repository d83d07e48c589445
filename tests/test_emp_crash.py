"""Edge Memory Protocol crash injection: writers run as commands, killed mid-operation by the harness."""

from __future__ import annotations

import shlex
import sys

import pytest
from memconform.core.profile import Profile
from memconform.mutants.emp import COMMAND_KILLS
from memconform.session import execute_run

pytestmark = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the writer's process in /proc")


def command(module: str, *args: str) -> str:
    return f"cmd:{shlex.quote(sys.executable)} -m {module} {' '.join(args)} {{op}} {{input}} {{output}}"


def killed(target: str) -> object:
    outcome = execute_run(["emp"], target, Profile.named("ci"), report_dir=None, check_ids=["emp.writer_killed_mid_write"])
    return outcome.results[0]


def test_reference_killed_at_random_points_keeps_every_line() -> None:
    result = killed(command("memconform.reference.emp"))
    assert result.outcome.value == "passed", (result.reason, [f.title for f in result.failures])
    assert any(line.startswith("kills=") and not line.startswith("kills=0") for line in result.transcript)


def test_a_delete_that_rewrites_in_place_loses_lines_when_killed() -> None:
    assert COMMAND_KILLS == {"RewritesInPlace": {"emp.writer_killed_mid_write"}}
    result = killed(command("memconform.mutants.emp", "RewritesInPlace"))
    assert result.outcome.value == "failed"
    assert "a writer killed during delete lost other apps' lines" in [f.title for f in result.failures]


def test_in_process_targets_are_not_applicable() -> None:
    result = killed("reference:emp")
    assert result.outcome.value == "skipped" and result.not_applicable
