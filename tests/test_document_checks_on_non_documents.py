"""No document check passes on a non-document (issue 31, item 9).

A rule about a document's records, fields or content that is handed something that is no document of
its format (a JSON value of another type, an EMP file none of whose lines is a memory) has nothing to
judge: it fails (the envelope rules) or is inconclusive, never passed. The scan covers every document
check of every installed suite; the positive control shows the same checks do pass on a valid document.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.registry import REGISTRY
from memconform.core.suite import all_suites, get_suite
from memconform.run.document_run import validate_document

FIXTURES = Path(__file__).parents[1] / "fixtures"
# per format, what its document is not: the JSON-object formats get every other JSON type; EMP (JSON Lines,
# read as text or as its lines) gets values that are neither
OBJECT_FORMATS_NOT = {"array": [], "array of objects": [{"id": "x"}], "string": "not a document", "number": 42,
                      "true": True, "null": None}
LINES_NOT = {"number": 42, "true": True, "object": {"id": "x"}, "null": None, "list of numbers": [1, 2]}


def document_suites() -> list[str]:
    return [s.name for s in all_suites() if any(c.kind == "document" for c in REGISTRY.for_suite(s.name))]


def non_documents(suite: str) -> dict[str, Any]:
    return LINES_NOT if get_suite(suite).parse is not None else OBJECT_FORMATS_NOT


@pytest.mark.parametrize("suite", document_suites())
def test_no_document_check_passes_on_a_non_document(suite: str) -> None:
    checks = [c.id for c in REGISTRY.for_suite(suite) if c.kind == "document"]
    assert checks
    passed: dict[str, list[str]] = {}
    for label, value in non_documents(suite).items():
        results = validate_document(value, suite, Profile.named("ci"))
        assert {r.check_id for r in results} == set(checks)  # every document check was asked
        passed.update({label: [r.check_id for r in results if r.outcome.value == "passed"]})
    assert not any(passed.values()), passed


def test_an_emp_file_with_no_memory_line_passes_no_memory_rule() -> None:
    results = validate_document("not json\n[1, 2]\n", "emp", Profile.named("ci"))
    passed = {r.check_id for r in results if r.outcome.value == "passed"}
    assert passed <= {"emp.lines_utf8"}, passed  # its lines are UTF-8: judged, and true
    assert any(r.check_id == "emp.lines_are_json_objects" and r.outcome.value == "failed" for r in results)


def test_memoryai_no_credentials_in_bundle_is_not_passed_on_an_export_that_is_no_bundle() -> None:
    for value in ([], "sk-not-a-bundle", 42, [{"api_key": "sk-" + "a" * 40}]):
        (result,) = validate_document(value, "memoryai", Profile.named("ci"), ["no_credentials_in_bundle"])
        assert result.outcome.value == "skipped" and result.inconclusive, (value, result)


def _valid(suite: str) -> Any:
    for path in sorted((FIXTURES / suite / "valid").glob("*.json")):
        case = json.loads(path.read_text("utf-8"))
        if "document" in case:
            document = case["document"]
            return document if get_suite(suite).parse is None else (
                document if isinstance(document, (str, list)) else None)
    return None


@pytest.mark.parametrize("suite", document_suites())
def test_positive_control_the_same_checks_pass_on_a_valid_document(suite: str) -> None:
    document = _valid(suite)
    if document is None:
        pytest.skip(f"no valid {suite} fixture holds its document inline")
    results = validate_document(document, suite, Profile.named("ci"))
    assert any(r.outcome.value == "passed" for r in results)
    assert not [r.check_id for r in results if r.outcome.value == "failed" and not r.warning]
