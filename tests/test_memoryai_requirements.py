"""The MemoryAI requirement map is honest: verbatim quotes, every check mapped, sentences quoted with their keyword."""

from __future__ import annotations

import json
import re
from importlib import resources
from pathlib import Path

import jsonschema
import pytest
from memconform.core.registry import REGISTRY

SPEC_FILE = Path(__file__).resolve().parents[1] / "fixtures" / "specs" / "memoryai-protocol-v1.md"
MAP = json.loads((Path(__file__).resolve().parents[1] / "suites" / "memoryai" / "requirements.json").read_text("utf-8"))
CHECKS = {c.id: c for c in REGISTRY.for_suite("memoryai")}


def normal(text: str) -> str:
    return re.sub(r"\s+", " ", text).strip()


@pytest.fixture(scope="module")
def spec_text() -> str:
    return normal(SPEC_FILE.read_text("utf-8"))


def test_map_is_schema_valid_with_unique_ids():
    schema = json.loads(resources.files("memconform").joinpath("schemas/requirements.schema.json").read_text("utf-8"))
    jsonschema.Draft202012Validator(schema).validate(MAP)
    ids = [s["id"] for s in MAP["statements"]]
    assert len(ids) == len(set(ids))


def test_every_quote_is_verbatim(spec_text):
    missing = [s["id"] for s in MAP["statements"] if normal(s["quote"]) not in spec_text]
    assert missing == []


def test_every_check_sentence_is_verbatim(spec_text):
    missing = {cid: c.sentence for cid, c in CHECKS.items() if normal(c.sentence) not in spec_text}
    assert missing == {}


def test_every_check_is_mapped_and_every_mapped_check_exists():
    mapped = {c for s in MAP["statements"] for c in s["checks"]}
    assert sorted(set(CHECKS) - mapped) == []
    assert sorted(mapped - set(CHECKS)) == []


def test_observable_statements_are_covered():
    uncovered = [s["id"] for s in MAP["statements"] if s["observable"] and not s["checks"]]
    assert uncovered == []


@pytest.mark.parametrize("check_id", sorted(CHECKS))
def test_a_keyword_check_quotes_a_sentence_with_that_keyword(check_id):
    check = CHECKS[check_id]
    words = set(re.findall(r"\b(MUST|SHOULD|MAY)\b", check.sentence))
    if words:  # a quoted RFC 2119 sentence: the check carries its keyword (MUST NOT counts as MUST)
        assert check.keyword.value in words, (check.keyword.value, check.sentence)
