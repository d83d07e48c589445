"""EMP's domain sweeps planned by harness/kit/domain_plan.py: under ci classes of different fields share a
request (an appended entry, an update, a line deleted), the same classes are judged with the same outcome as
one class a request (default), in fewer calls, and a failure planted on one class in the middle of a shared
request is split out until it names that class, as the class alone would have."""

from __future__ import annotations

import functools
import json
from typing import Any

import domain_plan_kit
import pytest
from domain_plan_kit import judged
from memconform.suites.emp.reference import ReferenceEmpApp
from memconform.targets.base import Rejected

SWEEPS = ["emp.writer_appends_every_class", "emp.writer_updates_every_class", "emp.writer_deletes_every_class"]
PLANTED_TYPE = "plain ascii text"  # entry.type:ascii, a valid class packed among others under ci
PLANTED_META: dict[str, Any] = {"n": None}  # entry.meta:null_value, valid too


class RefusesToDeleteOneType(ReferenceEmpApp):
    """Refuses the delete of an entry whose type is entry.type:ascii's value; right on every other class."""

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        current = {e["id"]: e for e in self.view(body["path"])}.get(body["id"], {})
        if current.get("type") == PLANTED_TYPE:
            raise Rejected({"error": "this type cannot be deleted"}, "refused")
        return super().delete(body)


class KeepsOneMetaAfterDelete(ReferenceEmpApp):
    """Acknowledges the delete of an entry whose meta is entry.meta:null_value's value but writes nothing."""

    def delete(self, body: dict[str, Any]) -> dict[str, Any]:
        current = {e["id"]: e for e in self.view(body["path"])}.get(body["id"], {})
        if current.get("meta") == PLANTED_META:
            return {"ok": True}
        return super().delete(body)


class LosesTheLineAfterSpaces(ReferenceEmpApp):
    """Its reader leaves out the entry that follows a line of spaces (file.lines:whitespace_line); right on the
    other line forms."""

    def resolve(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        with open(body["path"], "rb") as fh:
            raw = fh.read()
        lost = {json.loads(part.split(b"\n", 1)[0]).get("id") for part in raw.split(b"\n   \n")[1:]}
        return [e for e in super().resolve(body) if e.get("id") not in lost]


sweep = functools.partial(domain_plan_kit.sweep, "emp")  # (check, profile, target=None)


@pytest.mark.parametrize("check", SWEEPS)
def test_ci_judges_the_same_classes_as_default_in_fewer_calls(check: str) -> None:
    domain_plan_kit.ci_judges_as_default("emp", check)


@pytest.mark.parametrize("mutant, title", [
    ("RefusesToDeleteOneType", "a delete of a valid entry (entry.type:ascii) was refused"),
    ("KeepsOneMetaAfterDelete", "an acknowledged delete (entry.meta:null_value) left the entry in the view"),
])
def test_a_failure_in_the_middle_of_a_shared_line_is_named_by_its_class(mutant: str, title: str) -> None:
    target = f"python:{__name__}:{mutant}"
    ci, ci_calls = sweep("emp.writer_deletes_every_class", "ci", target)
    alone, alone_calls = sweep("emp.writer_deletes_every_class", "default", target)
    [packed], [single] = ci.results, alone.results
    assert packed.outcome.value == single.outcome.value == "failed"
    assert [f.title for f in packed.failures] == [f.title for f in single.failures] == [title]
    assert judged(ci) == judged(alone)
    assert ci_calls < alone_calls  # the split costs a few calls, far fewer than every class alone


def test_the_shared_line_held_the_planted_class_with_others() -> None:
    """The planted class is not alone on its line under ci (else the test above would prove nothing)."""
    from memconform.kit import domain_plan
    from memconform.suites.emp import format as emp
    from memconform.suites.emp.checks.domain_common import class_lines
    from memconform.suites.emp.checks.domain_writer import field_name

    class Ctx:
        drawn = 0

        def unique(self, label: str = "x") -> str:
            Ctx.drawn += 1
            return f"{label}-{Ctx.drawn}"

    readable = [item for item in class_lines(Ctx()) if emp.readable(item[1])]  # type: ignore[arg-type]
    rows = domain_plan.rows_for(readable, "ci", slot=field_name, group=lambda item: None if field_name(item) == "id" else "line")
    for key in ("entry.type:ascii", "entry.meta:null_value"):
        [row] = [row for row in rows if key in {vc.key for vc, _ in row}]
        assert len(row) > 2, (key, [vc.key for vc, _ in row])


@pytest.mark.parametrize("check", ["emp.writer_appends_every_class", "emp.writer_updates_every_class"])
def test_a_writer_dropping_one_valid_class_is_named_by_it_in_a_shared_entry(check: str) -> None:
    """The packed appends and updates: a writer leaving out null values of `meta` fails on that class alone,
    under ci (shared entries, split) as under default (one class an entry)."""
    target = "python:memconform.suites.emp.mutants:DropsNullMetaValues"
    ci, _ = sweep(check, "ci", target)
    alone, _ = sweep(check, "default", target)
    titles = [f.title for f in ci.results[0].failures]
    assert titles == [f.title for f in alone.results[0].failures] and len(titles) == 1
    assert "(entry.meta:null_value)" in titles[0]


def test_a_reader_losing_one_line_form_is_named_by_it_in_a_shared_file() -> None:
    """The line forms a file may hold anywhere share one file under ci; a reader wrong on one of them fails on
    that form alone, as under default."""
    target = f"python:{__name__}:LosesTheLineAfterSpaces"
    ci, ci_calls = sweep("emp.file_every_line_form", "ci", target)
    alone, alone_calls = sweep("emp.file_every_line_form", "default", target)
    titles = [f.title for f in ci.results[0].failures]
    assert titles == [f.title for f in alone.results[0].failures] == ["a file with a whitespace line: the view is not the model's"]
    assert judged(ci) == judged(alone)
    reference, reference_calls = sweep("emp.file_every_line_form", "ci")
    assert [r.outcome.value for r in reference.results] == ["passed"] and reference_calls < alone_calls
