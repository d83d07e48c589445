"""The fixture corpus lints itself: schema-valid cases, unique ids and descriptions, verdict = folder."""

from __future__ import annotations

import json
from importlib import resources

import jsonschema
import pytest
from memconform.kit.fixtures_loader import fixture_root

SCHEMA = json.loads(resources.files("memconform").joinpath("schemas/fixtures.schema.json").read_text("utf-8"))
CASE_FILES = sorted(p for p in fixture_root().rglob("*.json") if p.parent.name in ("valid", "invalid"))


def test_corpus_is_not_empty():
    assert len([p for p in CASE_FILES if p.parts[-3] == "memoryai"]) >= 30


@pytest.mark.parametrize("path", CASE_FILES, ids=lambda p: f"{p.parts[-3]}/{p.parent.name}/{p.stem}")
def test_case_is_well_formed(path):
    case = json.loads(path.read_text("utf-8"))
    jsonschema.Draft202012Validator(SCHEMA).validate(case)
    assert case["id"] == path.stem
    assert case["verdict"] == path.parent.name


def test_ids_and_descriptions_are_unique_per_suite():
    seen: dict[tuple[str, str], str] = {}
    for path in CASE_FILES:
        case = json.loads(path.read_text("utf-8"))
        for key in ("id", "description"):
            k = (path.parts[-3], case[key])
            assert k not in seen, f"{path} repeats the {key} of {seen[k]}"
            seen[k] = str(path)
