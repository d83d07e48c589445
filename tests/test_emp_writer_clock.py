"""A mutant's verdict must not depend on how fast the machine is: the EMP writers stamp `ts` from the wall clock
(max(now in ms, the entry's ts + 1)), so two updates in one millisecond are simulated by freezing that clock.
ShortLineBuffer (a reader cutting lines at 64 KiB) once failed emp.writer_updates_every_class at load 35: its
update read the entry through the short buffer, missed the > 64 KiB line the update before had written, and
stamped the ts of that line again whenever both updates fell in the same millisecond; ExactVersionOnly (a reader
dropping every v but "1.0") did the same with the frozen clock, every EMP mutant's writer checks compared."""

from __future__ import annotations

import time
from types import SimpleNamespace

import pytest
from memconform.core.profile import Profile
from memconform.core.suite import get_suite
from memconform.run.session import execute_run
from memconform.suites.emp import reference

FROZEN_S = 1_796_558_400.0
WRITER_CHECKS = ["emp.writer_updates_every_class", "emp.writer_update_same_id", "emp.writer_deletes_every_class"]


def verdicts(row: str, checks: list[str]) -> dict[str, str]:
    table = get_suite("emp").mutant_table()
    assert table is not None
    target = table.target(row) if row != "reference" else None
    outcome = execute_run(["emp"], target, Profile.named("ci"), report_dir=None, check_ids=checks)
    return {r.check_id: r.outcome.value for r in outcome.results}


@pytest.fixture
def one_millisecond(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every write the EMP reference (and its mutants) stamps falls in the same millisecond."""
    monkeypatch.setattr(reference, "time", SimpleNamespace(time=lambda: FROZEN_S, monotonic=time.monotonic,
                                                           sleep=time.sleep))


@pytest.mark.parametrize("row", ["reference", "ShortLineBuffer", "ExactVersionOnly"])
def test_writes_within_one_millisecond_are_judged_as_any_others(row: str, one_millisecond: None) -> None:
    assert verdicts(row, WRITER_CHECKS) == dict.fromkeys(WRITER_CHECKS, "passed")


@pytest.mark.parametrize(("row", "check"), [("ShortLineBuffer", "emp.reader_long_content"),
                                            ("ExactVersionOnly", "emp.reader_unknown_ignored")])
def test_a_mutant_broken_when_reading_still_fails_its_reading_check(row: str, check: str, one_millisecond: None) -> None:
    assert verdicts(row, [check]) == {check: "failed"}
