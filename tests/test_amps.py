"""AI Memory Portability Standard v0.1: reference, mutants, fixture corpus and strategies agree.

The reference passes every amps check; each mutant breaks one rule and fails the checks named for
it without erroring any; every check is killed by some mutant or invalid fixture; each fixture's
verdict matches what the document checks say; the strategies draw schema-valid exports.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from memconform.core.profile import Profile
from memconform.core.registry import REGISTRY
from memconform.core.results import Outcome
from memconform.kit.fixtures_loader import iter_cases
from memconform.run.document_run import validate_document
from memconform.run.session import execute_run
from memconform.suites.amps import format as amps
from memconform.suites.amps.format import strategies

CASES = [(p, c) for p, c in iter_cases("amps") if isinstance(c, dict) and "document" in c]
STRICT_LABELS = {"amps.atom_labels": "required"}
FUZZ = settings(max_examples=40, deadline=None, database=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def run_against(target: str, options: dict[str, str] | None = None) -> dict[str, str]:
    outcome = execute_run(["amps"], target, Profile.named("ci", options=options), report_dir=None)
    return {r.check_id: r.outcome.value for r in outcome.results}


def test_reference_passes_every_check_with_atom_labels_required():
    """The default run is the contract's (tests/test_suite_contract.py); pinned, the labels SHOULD runs too."""
    outcomes = run_against("reference:amps", STRICT_LABELS)
    assert set(outcomes) == {c.id for c in REGISTRY.for_suite("amps")}
    assert {k: v for k, v in outcomes.items() if v != "passed"} == {}


def test_fixture_cases_are_well_formed():
    ids = {c.id for c in REGISTRY.for_suite("amps")}
    seen = set()
    schema_path = Path(__file__).resolve().parents[1] / "harness" / "schemas" / "fixtures.schema.json"
    validator = None
    if schema_path.exists():
        from jsonschema import Draft202012Validator

        validator = Draft202012Validator(json.loads(schema_path.read_text("utf-8")))
    for path, case in CASES:
        assert {"id", "description", "spec", "section", "verdict", "breaks", "document"} <= set(case), path.name
        assert case["id"] == path.stem and case["id"] not in seen
        seen.add(case["id"])
        assert set(case["breaks"]) | set(case.get("warnings", [])) <= ids, path.name
        assert (case["verdict"] == "invalid") == bool(case["breaks"]), path.name
        if validator is not None:
            assert list(validator.iter_errors(case)) == [], path.name


def test_spec_example_is_a_fixture_and_schema_is_published_one():
    spec = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "ai-memory-portability-standard-v0.1.md"
    example = next(c for _, c in CASES if c["id"] == "spec-worked-example")["document"]
    assert example["atoms"][0]["provenance"]["artifact_ids"] == ["art_101", "art_144"]
    assert amps.schema()["$id"] == "https://konshus.ai/schemas/ai-memory-portability/v0.1.json"
    text = spec.read_text("utf-8")  # the published text (fixtures/specs)
    start = text.index("ai-memory-portability.v0.1.json\n\n") + len("ai-memory-portability.v0.1.json\n\n")
    published = json.loads(text[start:text.index("\nExample\n", start)])
    assert published == amps.schema()


def test_validator_formats():
    assert amps.is_date_time("2026-07-13T14:22:00Z") and amps.is_date_time("2026-07-13T14:22:00.5+02:00")
    assert not amps.is_date_time("2026-07-13T14:22:00") and not amps.is_date_time("2026-13-01T00:00:00Z")
    assert amps.is_uri("https://a.example/x") and not amps.is_uri("not a uri")


@FUZZ
@given(strategies.exports())
def test_strategy_exports_pass_every_document_check(doc):
    assert amps.schema_errors(doc) == []
    results = validate_document(doc, "amps", Profile.named("ci", options=STRICT_LABELS))
    assert {r.check_id: [f.title for f in r.failures] for r in results if r.outcome is not Outcome.PASSED} == {}


@FUZZ
@given(strategies.invalid_exports())
def test_strategy_invalid_exports_break_their_check(pair):
    name, doc = pair
    results = {r.check_id: r for r in validate_document(doc, "amps", Profile.named("ci"))}
    assert results[name].outcome is Outcome.FAILED
    assert all(r.outcome is not Outcome.ERRORED for r in results.values())


class _FlagsUnsourced:
    """A store that keeps an atom whose only source was deleted, flagged x-unsourced (errata A5)."""

    def __new__(cls):
        from memconform.suites.amps.reference import ReferenceAmpsStore

        class FlagsUnsourced(ReferenceAmpsStore):
            def delete_artifact(self, body=None, **params):
                sid, aid = body["subject_id"], body["artifact_id"]
                doc = self.export({"subject_id": sid})
                with self.db:
                    self.db.execute("DELETE FROM artifacts WHERE subject_id = ? AND artifact_id = ?", (sid, aid))
                    for atom in doc["atoms"]:
                        refs = amps.artifact_ids_of(atom)
                        if aid in refs:
                            atom["provenance"]["artifact_ids"] = [r for r in refs if r != aid]
                            if not atom["provenance"]["artifact_ids"]:
                                atom["provenance"]["x-unsourced"] = True
                            self.db.execute("UPDATE atoms SET doc = ? WHERE subject_id = ? AND atom_id = ?",
                                            (json.dumps(atom), sid, atom["atom_id"]))
                return {"deleted": True}

        return FlagsUnsourced()


@pytest.mark.parametrize("reading,expected", [("delete-or-flag", Outcome.PASSED), ("delete", Outcome.FAILED)])
def test_delete_cascades_accepts_reflagging_only_under_its_reading(reading, expected):
    from memconform.core.runner import Context, run_one
    from memconform.core.suite import get_suite
    from memconform.targets.pyobj import PythonTarget

    ctx = Context(suite=get_suite("amps"), target=PythonTarget(_FlagsUnsourced(), "flags-unsourced"),
                  profile=Profile.named("ci", options={"amps.unsourced_after_delete": reading}))
    result = run_one(REGISTRY.get("amps.delete_cascades"), ctx)
    assert result.outcome is expected, (result.reason, [f.title for f in result.failures])


_REPLACEMENTS = [None, True, False, 0, 1, 2, -1, 0.5, float("nan"), "", "x", "x" * 501, "2020-01-01T00:00:00",
                 "2020-01-01T00:00:00Z", "2020-02-30T00:00:00Z", "not a uri", "https://a.example/", [], ["x"], [1],
                 {}, {"derivation": "stated"}, "fact", "chat", "stated", "medical", "0.1.0", "0.1"]


@st.composite
def _mutated_exports(draw):
    """A valid export with one value replaced or one key removed, anywhere in it."""
    doc = draw(strategies.exports(max_atoms=3, max_artifacts=2))
    places = []

    def walk(node):
        items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        for key, value in items:
            places.append((node, key))
            walk(value)

    walk(doc)
    node, key = draw(st.sampled_from(places))
    if isinstance(node, dict) and draw(st.booleans()):
        del node[key]
    else:
        node[key] = draw(st.sampled_from(_REPLACEMENTS))
    return doc


@settings(FUZZ, max_examples=120)
@given(st.one_of(strategies.exports(), _mutated_exports()))
def test_schema_fast_path_never_passes_what_jsonschema_fails(doc):
    errors = list(amps.validator().iter_errors(doc))
    if amps.schema_surely_valid(doc):
        assert errors == []
    else:
        assert amps.schema_errors(doc) == [(amps.json_path(e.absolute_path), e.message, e.instance) for e in
                                           sorted(errors, key=lambda e: (list(map(str, e.absolute_path)), e.message))]


@FUZZ
@given(strategies.exports())
def test_schema_fast_path_takes_every_valid_export(doc):
    assert amps.schema_surely_valid(doc)


def test_schema_fast_path_agrees_on_the_fixtures():
    for _, case in CASES:
        if amps.schema_surely_valid(case["document"]):
            assert list(amps.validator().iter_errors(case["document"])) == [], case["id"]


