"""EMP root causes seen against the public SDK (issue 35 item 1): a reader that returns every line of an id,
not the newest, is named once by emp.reader_newest_ts_wins, and the query failures that fault alone explains
say so ("explained by emp.reader_newest_ts_wins"); a query fault of its own is not explained by it."""

from __future__ import annotations

from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Failure
from memconform.run.session import execute_run
from memconform.suites.emp import format as emp
from memconform.suites.emp.reference import ReferenceEmpApp

CHECKS = ["emp.reader_newest_ts_wins", "emp.query_time", "emp.query_tags", "emp.query_every_parameter_pair"]


class EveryLineReader(ReferenceEmpApp):
    """Reads every readable line as an entry (no id resolved to its newest ts), then filters, as the SDK does."""

    def view(self, path: str) -> list[dict[str, Any]]:
        return [e for _, _, e in self.lines(path) if emp.readable(e) and not emp.is_tombstone(e)]


class EveryLineUnfiltered(EveryLineReader):
    """The control: besides, query ignores every filter (a fault no resolution would mend)."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return self.view(body["path"])


def run(name: str) -> Any:
    return execute_run(["emp"], f"python:{__name__}:{name}", Profile.named("ci"), report_dir=None, check_ids=CHECKS)


def failures(outcome: Any, check: str) -> list[Failure]:
    return [f for r in outcome.results if r.check_id == check for f in r.failures]


@pytest.mark.slow
def test_query_failures_of_a_reader_not_resolving_ids_are_explained_by_the_newest_ts_check() -> None:
    outcome = run("EveryLineReader")
    assert failures(outcome, "emp.reader_newest_ts_wins")
    for check in ("emp.query_time", "emp.query_tags", "emp.query_every_parameter_pair"):
        found = failures(outcome, check)
        assert found and all(f.explained_by == "emp.reader_newest_ts_wins" for f in found), \
            (check, [(f.title, f.explained_by) for f in found])
    assert any("deviations established" in n["note"] for n in outcome.notes)


@pytest.mark.slow
def test_a_query_ignoring_its_filters_is_not_explained_by_the_missing_resolution() -> None:
    outcome = run("EveryLineUnfiltered")
    found = [f for f in failures(outcome, "emp.query_every_parameter_pair") if "is not what the query must return" in f.title]
    assert found and not any(f.explained_by for f in found), [(f.title, f.explained_by) for f in found]
    # a value the spec is silent on that reads as no filter (start null): its only fault is the resolution
    odd = [f for f in failures(outcome, "emp.query_every_parameter_pair") if "(query.start:null)" in f.title]
    assert odd and all(f.explained_by == "emp.reader_newest_ts_wins" for f in odd)
    wrong = [f for f in failures(outcome, "emp.query_time") if "does not match" in f.title and "superseded" not in f.title]
    assert wrong and not any(f.explained_by for f in wrong)


@pytest.mark.slow
def test_the_reference_establishes_nothing() -> None:
    outcome = execute_run(["emp"], "reference:emp", Profile.named("ci"), report_dir=None, check_ids=CHECKS)
    assert [r.outcome.value for r in outcome.results] == ["passed"] * len(CHECKS)
    assert not any("deviations established" in n["note"] for n in outcome.notes)


@pytest.mark.slow
def test_updates_of_every_class_written_under_a_new_id_are_explained_by_the_same_id_check() -> None:
    checks = ["emp.writer_update_same_id", "emp.writer_updates_every_class"]
    outcome = execute_run(["emp"], "python:memconform.suites.emp.mutants:UpdateAsNewId", Profile.named("ci"),
                          report_dir=None, check_ids=checks)
    assert failures(outcome, "emp.writer_update_same_id")
    later = failures(outcome, "emp.writer_updates_every_class")
    new_id = [f for f in later if "did not append exactly one line of the id" in f.title]
    assert new_id and all(f.explained_by == "emp.writer_update_same_id" for f in new_id), [(f.title, f.explained_by) for f in later]
    # its updates are not validated either: a fault of its own, not explained by the new id
    assert all(not f.explained_by for f in later if "was written invalid" in f.title)
    alone = execute_run(["emp"], "python:memconform.suites.emp.mutants:UpdateAsNewId", Profile.named("ci"),
                        report_dir=None, check_ids=checks[1:])  # nothing established: each failure its own
    assert failures(alone, "emp.writer_updates_every_class") and not any(f.explained_by for f in failures(alone, "emp.writer_updates_every_class"))
