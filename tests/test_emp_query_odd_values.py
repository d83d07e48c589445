"""emp.query_every_parameter_pair against values the spec is silent on (errata E61), as the EMP SDK run showed
them (issue 35): a value that names a tag (`tags: "ui"`, a string, not a list) answered as if the filter were
not given is no reading, and the failure says so with the sentence it breaks; superseded lines in the same
answer are a failure of their own, named by their cause (explained by emp.reader_newest_ts_wins when that
check established it), never mixed into the tags line. Readers that refuse the string, read it as one tag or
match nothing pass."""

from __future__ import annotations

from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Failure
from memconform.run.session import execute_run
from memconform.suites.emp import format as emp
from memconform.suites.emp.checks.domain_query import FILTER_SENTENCES
from memconform.suites.emp.reference import ReferenceEmpApp
from memconform.targets.base import Rejected

CHECKS = ["emp.reader_newest_ts_wins", "emp.query_every_parameter_pair"]
AS_STRING = "(query.tags:as_string)"
IGNORED = "(answered as if tags were not given)"


def tags_as_given(body: dict[str, Any], read: str) -> dict[str, Any]:
    """The query with a `tags` that is not a list read one way: left out, one tag, or matching nothing."""
    tags = body.get("tags")
    if tags is None or isinstance(tags, list):
        return body
    rest = {k: v for k, v in body.items() if k != "tags"}
    return {"ignored": rest, "one tag": {**rest, "tags": [str(tags)]}, "nothing": {**rest, "tags": ["\x00 no such tag"]}}[read]


class IgnoresStringTags(ReferenceEmpApp):
    """Right everywhere, but a `tags` that is not a list is dropped: the query answered as if unfiltered."""

    READ = "ignored"

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        return super().query(tags_as_given(body, self.READ))


class StringTagIsOneTag(IgnoresStringTags):
    READ = "one tag"


class StringTagMatchesNothing(IgnoresStringTags):
    READ = "nothing"


class RefusesStringTags(ReferenceEmpApp):
    """The reference's own behaviour, kept explicit: a `tags` that is not a list is refused."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        if "tags" in body and body["tags"] is not None and not isinstance(body["tags"], list):
            raise Rejected({"errors": ["tags must be a list"]}, "tags is not a list")
        return super().query(body)


class EveryLineIgnoresStringTags(IgnoresStringTags):
    """As the SDK seemed to be: every readable line an entry (no id resolved to its newest ts) and a `tags`
    string dropped."""

    def view(self, path: str) -> list[dict[str, Any]]:
        return [e for _, _, e in self.lines(path) if emp.readable(e) and not emp.is_tombstone(e)]


class EveryLineStringTagIsOneTag(EveryLineIgnoresStringTags):
    """The control: resolves no id, but reads the string as one tag (an E61 reading): its one fault is the resolution."""

    READ = "one tag"


def run(name: str, checks: list[str] = CHECKS) -> Any:
    return execute_run(["emp"], f"python:{__name__}:{name}", Profile.named("ci"), report_dir=None, check_ids=checks)


def failures(outcome: Any, check: str = "emp.query_every_parameter_pair") -> list[Failure]:
    return [f for r in outcome.results if r.check_id == check for f in r.failures]


def test_a_string_tag_answered_as_if_unfiltered_fails_naming_the_ignored_filter_and_its_sentence() -> None:
    outcome = run("IgnoresStringTags", CHECKS[1:])
    [result] = outcome.results
    assert result.outcome.value == "failed"
    [failure] = result.failures  # that value alone: every other class is answered as the reference does
    assert AS_STRING in failure.title and failure.title.endswith(IGNORED), failure.title
    assert '"ui" names a tag' in failure.detail and FILTER_SENTENCES["tags"] in failure.detail, failure.detail
    assert not failure.explained_by


@pytest.mark.parametrize("reader", ["StringTagIsOneTag", "StringTagMatchesNothing", "RefusesStringTags"])
def test_a_string_tag_refused_read_as_one_tag_or_matching_nothing_passes(reader: str) -> None:
    outcome = run(reader, CHECKS[1:])
    assert [r.outcome.value for r in outcome.results] == ["passed"], failures(outcome)


def test_superseded_lines_beside_an_ignored_string_tag_are_their_own_failure_explained_by_the_newest_ts_check() -> None:
    outcome = run("EveryLineIgnoresStringTags")
    assert failures(outcome, "emp.reader_newest_ts_wins")  # established
    found = failures(outcome)
    at_string = [f for f in found if AS_STRING in f.title]
    superseded = [f for f in at_string if "a newer line of the same id supersedes" in f.title]
    ignored = [f for f in at_string if f.title.endswith(IGNORED)]
    assert len(superseded) == 1 and len(ignored) == 1 and len(at_string) == 2, [(f.title, f.explained_by) for f in at_string]
    assert superseded[0].explained_by == "emp.reader_newest_ts_wins"
    assert superseded[0].detail.startswith("explained by emp.reader_newest_ts_wins")
    # the rest of the answer, superseded lines set aside, is the reader's own fault, judged on its own
    assert not ignored[0].explained_by and FILTER_SENTENCES["tags"] in ignored[0].detail
    assert all(id_ not in str(ignored[0].received) for id_ in superseded[0].received)
    # every other failure of the check is the resolution's alone
    others = [f for f in found if AS_STRING not in f.title]
    assert others and all(f.explained_by == "emp.reader_newest_ts_wins" for f in others), \
        [(f.title, f.explained_by) for f in others if not f.explained_by]


def test_a_reader_whose_one_fault_is_the_resolution_has_every_failure_explained() -> None:
    outcome = run("EveryLineStringTagIsOneTag")
    found = failures(outcome)
    assert found and all(f.explained_by == "emp.reader_newest_ts_wins" for f in found), \
        [(f.title, f.explained_by) for f in found if not f.explained_by]
    assert not any(f.title.endswith(IGNORED) for f in found)
