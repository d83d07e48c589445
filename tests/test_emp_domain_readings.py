"""EMP errata E36: each accepted answer to an append of an open value class is recorded from what the
writer was seen to do, and an answer matching none (an open class written with a new problem) fails."""

from __future__ import annotations

from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.run.session import execute_run
from memconform.suites.emp import format as emp
from memconform.suites.emp.reference import ReferenceEmpApp
from memconform.targets.base import Rejected

CHECK = "emp.writer_appends_every_class"
GIVEN, REFUSED, CHANGED = ("an open class appended as given", "an open class refused", "an open class written valid, changed")


class RefusesAnyDoubt(ReferenceEmpApp):
    """Refuses every entry memconform's validator finds any problem with, under any reading."""

    def append(self, body: dict[str, Any]) -> dict[str, Any]:
        if isinstance(body, dict) and isinstance(body.get("entry"), dict) and list(emp.field_errors(body["entry"])):
            raise Rejected({"errors": ["in doubt"]}, "refused")
        return super().append(body)


class LowerCasesTags(ReferenceEmpApp):
    """Writes tags lower-cased (the spec's "Array of lowercase strings") instead of refusing them."""

    def append(self, body: dict[str, Any]) -> dict[str, Any]:
        if isinstance(body, dict) and isinstance(body.get("entry"), dict) and isinstance(body["entry"].get("tags"), list):
            body = {**body, "entry": {**body["entry"], "tags": [str(t).lower() for t in body["entry"]["tags"]]}}
        return super().append(body)


class EmptyTypeAsNumber(ReferenceEmpApp):
    """Writes an empty `type` as the number 0: an open class written with a problem it did not have."""

    def locked_append(self, path: str, lines: list[dict[str, Any]]) -> None:
        super().locked_append(path, [{**e, "type": 0} if e.get("type") == "" else e for e in lines])


def seen_and_failures(name: str) -> tuple[set[str], list[str]]:
    outcome = execute_run(["emp"], f"python:{__name__}:{name}", Profile.named("ci"), report_dir=None, check_ids=[CHECK])
    seen = {s for r in outcome.readings if r["point"] == "E36" for s in r["seen"]}
    return seen, [f.title for r in outcome.results for f in r.failures]


@pytest.mark.parametrize(("name", "reading"), [("RefusesAnyDoubt", REFUSED), ("LowerCasesTags", CHANGED)])
def test_each_reading_is_recorded_from_what_was_seen_and_passes(name: str, reading: str) -> None:
    seen, failures = seen_and_failures(name)
    assert failures == []
    assert reading in seen


def test_the_reference_is_seen_writing_open_classes_as_given() -> None:
    seen, failures = seen_and_failures("ReferenceEmpApp")
    assert failures == [] and GIVEN in seen


def test_an_answer_matching_no_reading_fails() -> None:
    seen, failures = seen_and_failures("EmptyTypeAsNumber")
    assert failures == ["an entry of class entry.type:empty was written changed and invalid"]
