"""Edge Memory Protocol v1.0: reference, mutants, fixture corpus and strategies agree."""

from __future__ import annotations

import json

import pytest
from hypothesis import HealthCheck, given, settings

from harness.core.profile import Profile
from harness.core.registry import REGISTRY
from harness.fixtures_loader import iter_cases
from harness.formats import emp
from harness.formats.emp import strategies
from harness.mutants.emp import EXPECTED_KILLS, MUTANTS
from harness.session import execute_run, validate_document

CASES = [(p, c) for p, c in iter_cases("emp") if isinstance(c, dict) and "document" in c]
FUZZ = settings(max_examples=40, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def run_against(target: str) -> dict[str, str]:
    outcome = execute_run(["emp"], target, Profile.named("ci"), report_dir=None)
    return {r.check_id: r.outcome.value for r in outcome.results}


@pytest.fixture(scope="module")
def mutant_outcomes() -> dict[str, dict[str, str]]:
    return {name: run_against(f"python:harness.mutants.emp:{name}") for name in MUTANTS}


def test_reference_passes_every_check() -> None:
    outcomes = run_against("reference:emp")
    ids = {c.id for c in REGISTRY.for_suite("emp")}
    assert set(outcomes) == ids
    assert {k: v for k, v in outcomes.items() if v != "passed"} == {}


@pytest.mark.parametrize("name", sorted(EXPECTED_KILLS))
def test_mutant_is_killed(name: str, mutant_outcomes: dict[str, dict[str, str]]) -> None:
    outcomes = mutant_outcomes[name]
    assert {c for c in EXPECTED_KILLS[name] if outcomes.get(c) != "failed"} == set()
    assert {c for c, o in outcomes.items() if o == "errored"} == set()


def test_every_check_is_killed(mutant_outcomes: dict[str, dict[str, str]]) -> None:
    killed = {c for o in mutant_outcomes.values() for c, v in o.items() if v == "failed"}
    killed |= {b for _, c in CASES if c["verdict"] == "invalid" for b in c["breaks"]}
    assert {c.id for c in REGISTRY.for_suite("emp")} - killed == set()


def test_fixtures_have_both_verdicts() -> None:
    assert {c["verdict"] for _, c in CASES} == {"valid", "invalid"}


@pytest.mark.parametrize("case", [c for _, c in CASES], ids=[c["id"] for _, c in CASES])
def test_fixture_verdict(case: dict) -> None:
    results = validate_document(emp.as_lines(case["document"]), "emp", Profile.named("ci"))
    failed = {r.check_id for r in results if r.outcome.value == "failed"}
    assert {r.check_id for r in results if r.outcome.value == "errored"} == set()
    if case["verdict"] == "valid":
        assert failed == set()
    else:
        assert failed == set(case["breaks"])


def test_fixtures_match_schema() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    from pathlib import Path

    import harness
    schema = json.loads((Path(harness.__file__).parent / "schemas" / "fixtures.schema.json").read_text())
    for _, case in CASES:
        jsonschema.validate(case, schema)


def test_corrupt_line_reported_by_number_and_rest_checked() -> None:
    doc = '{"v":"1.0","id":\n{"v":"1.0","id":"x","ts":1,"src":"com.a.b","content":"c"}\n'
    results = {r.check_id: r for r in validate_document(emp.as_lines(doc), "emp", Profile.named("ci"))}
    assert [f.path for f in results["emp.lines_are_json_objects"].failures] == ["line 1"]
    assert [f.path for f in results["emp.id_uuid4"].failures] == ["line 2"]


def test_detect() -> None:
    assert emp.detect(b'{"v":"1.0","id":"a","ts":1,"src":"com.a.b","content":""}\n')
    assert not emp.detect(b'{"export_version": "0.1"}')


@FUZZ
@given(strategies.files)
def test_strategy_files_are_valid(text: str) -> None:
    for _, _, e in emp.iter_text(text):
        assert isinstance(e, dict) and list(emp.field_errors(e)) == []


@FUZZ
@given(strategies.invalid_lines)
def test_invalid_lines_break_their_check(labelled: tuple[str, str]) -> None:
    check, raw = labelled
    assert check in {rule for rule, _, _ in emp.field_errors(json.loads(raw))}


def test_resolve_newest_ts_and_tombstones() -> None:
    a = {"v": "1.0", "id": "a", "ts": 2, "src": "com.x.y", "content": "new"}
    lines = [(1, "", a), (2, "", dict(a, ts=1, content="old")), (3, "", "bad"),
             (4, "", {"v": "1.0", "id": "b", "ts": 1, "src": "com.x.y", "content": "gone"}),
             (5, "", emp.tombstone("b", 2, "com.x.y", "type-tombstone"))]
    assert [e["content"] for e in emp.resolve(lines)] == ["new"]
