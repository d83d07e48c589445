"""Edge Memory Protocol crash injection: writers run as commands, their writes cut short at a chosen byte."""

from __future__ import annotations

import shlex
import sys

import pytest
from memconform.core.profile import Profile
from memconform.run.session import execute_run
from memconform.suites.emp.mutants import COMMAND_KILLS

pytestmark = [pytest.mark.mutants, pytest.mark.skipif(not sys.platform.startswith("linux"), reason="finds the writer's process in /proc")]


def command(module: str, *args: str) -> str:
    return f"cmd:{shlex.quote(sys.executable)} -m {module} {' '.join(args)} {{op}} {{input}} {{output}}"


def killed(target: str) -> object:
    outcome = execute_run(["emp"], target, Profile.named("ci"), report_dir=None, check_ids=["emp.writer_killed_mid_write"])
    return outcome.results[0]


def test_reference_cut_at_every_point_keeps_every_line() -> None:
    result = killed(command("memconform.suites.emp.reference"))
    assert result.outcome.value == "passed", (result.reason, [f.title for f in result.failures])
    assert "cuts=6 lost=0 corrupted=0" in result.transcript  # append, update, delete: each cut twice


@pytest.mark.parametrize("name, op", [("RewritesInPlace", "delete"), ("UpdateInPlace", "update")])
def test_a_rewrite_in_place_loses_lines_when_cut(name: str, op: str) -> None:
    assert set(COMMAND_KILLS) == {"RewritesInPlace", "UpdateInPlace"}
    assert COMMAND_KILLS[name] == {"emp.writer_killed_mid_write"}
    for _ in range(2):  # the cut is at a byte, not a moment: the same verdict every time
        result = killed(command("memconform.suites.emp.mutants", name))
        assert result.outcome.value == "failed"
        assert [f.title for f in result.failures] == [f"a write cut short during {op} lost other apps' lines"]


def test_in_process_targets_are_not_applicable() -> None:
    result = killed("reference:emp")
    assert result.outcome.value == "skipped" and result.not_applicable
