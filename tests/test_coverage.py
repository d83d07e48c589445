"""Requirement maps: valid against their schema, quotes verbatim from the spec texts, every check mapped
to a statement and every mapped check real; `memconform coverage` counts them honestly."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from memconform.cli.main import main
from memconform.core.registry import REGISTRY
from memconform.core.suite import Level, SuiteSpec, all_suites
from memconform.run.coverage import coverage, map_path, schema_errors

ROOT = Path(__file__).resolve().parents[1]
SPECS = ROOT / "fixtures" / "specs"  # the spec texts as published; no check reads them
SUITES = {s.name: s for s in all_suites()}


def load_map(name: str) -> dict | None:
    path = map_path(SUITES[name])
    return json.loads(path.read_text("utf-8")) if path.is_file() else None


def squash(text: str) -> str:
    return " ".join(text.split())


@pytest.mark.parametrize("name", sorted(SUITES))
def test_map_validates_against_the_schema(name):
    doc = load_map(name)
    if doc is None:
        pytest.skip(f"{name}: no requirement map yet")
    assert schema_errors(doc) == []
    assert doc["spec"] == name
    ids = [s["id"] for s in doc["statements"]]
    assert sorted({i for i in ids if ids.count(i) > 1}) == [], "statement ids must be unique"


@pytest.mark.parametrize("name", sorted(SUITES))
def test_every_quote_is_verbatim_in_the_spec(name):
    doc = load_map(name)
    if doc is None:
        pytest.skip(f"{name}: no requirement map yet")
    text = squash((SPECS / doc["source"]).read_text("utf-8"))
    assert [s["id"] for s in doc["statements"] if squash(s["quote"]) not in text] == []


@pytest.mark.parametrize("name", sorted(SUITES))
def test_every_check_maps_to_a_statement(name):
    doc = load_map(name)
    assert doc is not None, f"{name}: no requirement map (suites/{name}/requirements.json)"
    mapped = {c for s in doc["statements"] for c in s["checks"]}
    assert sorted(c.id for c in REGISTRY.for_suite(name) if c.id not in mapped) == []


@pytest.mark.parametrize("name", sorted(SUITES))
def test_no_statement_names_a_missing_check(name):
    doc = load_map(name)
    if doc is None:
        pytest.skip(f"{name}: no requirement map yet")
    registered = {c.id for c in REGISTRY.for_suite(name)}
    assert sorted({c for s in doc["statements"] for c in s["checks"]} - registered) == []


def toy_suite(tmp_path: Path, statements: list[dict]) -> SuiteSpec:
    path = tmp_path / "requirements.json"
    path.write_text(json.dumps({"spec": "amps", "source": "x.md", "statements": statements}))
    return SuiteSpec(name="amps", spec_title="t", version="1", levels=[Level("producer", "P")], requirements=path)


def st(i: str, keyword: str, checks: list[str], observable: bool = True) -> dict:
    out = {"id": f"AMPS-1-{i}", "section": "1", "quote": f"q{i}", "keyword": keyword, "level": None,
           "observable": observable, "checks": checks}
    if not observable:
        out["reason"] = "nothing shows it"
    return out


def test_coverage_counts_must_and_should_apart(tmp_path):
    real = sorted(c.id for c in REGISTRY.for_suite("amps"))[:2]
    cov = coverage(toy_suite(tmp_path, [
        st("01", "MUST", [real[0]]), st("02", "MUST NOT", []), st("03", "SHOULD", [real[1]]),
        st("04", "RECOMMENDED", ["amps.no_such_check"]), st("05", "MAY", [], observable=False),
    ]))
    assert cov.counts == {"MUST": [1, 2], "SHOULD": [1, 2]}
    assert [s["id"] for s in cov.uncovered] == ["AMPS-1-02", "AMPS-1-04"]
    assert [s["id"] for s in cov.unobservable] == ["AMPS-1-05"]
    assert cov.unknown_checks == ["AMPS-1-04: amps.no_such_check"]
    assert real[0] not in cov.unmapped_checks and len(cov.unmapped_checks) == len(REGISTRY.for_suite("amps")) - 2


def test_a_map_that_breaks_the_schema_is_a_problem_not_a_count(tmp_path):
    cov = coverage(toy_suite(tmp_path, [st("01", "MUST", [], observable=False) | {"reason": ""}]))
    assert cov.counts == {} and cov.problems and "schema" in cov.problems[0]


def test_no_map_says_so(tmp_path):
    suite = SuiteSpec(name="amps", spec_title="t", version="1", levels=[], requirements=tmp_path / "absent.json")
    cov = coverage(suite)
    assert cov.map_file is None and cov.problems == ["no requirement map"]


def test_coverage_command_text_and_json(capsys):
    assert main(["coverage", "--json"]) in (0, 1)
    reports = {r["suite"]: r for r in json.loads(capsys.readouterr().out)["suites"]}
    assert set(reports) == set(SUITES)
    for r in reports.values():
        if r["map"] is None:
            assert r["problems"] == ["no requirement map"]
        else:
            assert 0 <= r["covered"] <= r["testable"]
    assert main(["coverage", "--suite", "amps"]) in (0, 1)
    assert capsys.readouterr().out.startswith("amps")
