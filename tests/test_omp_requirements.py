"""The OMP requirement map and the checks' own sentences: every check quotes its spec sentence
verbatim with the keyword that sentence uses, and every check a §8/§5 level clause lists exists."""

from __future__ import annotations

import json
from pathlib import Path

from memconform.core.registry import REGISTRY
from memconform.suites.omp.suite import CORE_CLAUSE, FULL_CLAUSE, SEARCH_CLAUSE, SUITE

ROOT = Path(__file__).resolve().parents[1]
SPEC = ROOT / "fixtures" / "specs" / "open-memory-protocol-v0.1.md"
MAP = json.loads((ROOT / "suites" / "omp" / "requirements.json").read_text("utf-8"))


def squash(text: str) -> str:
    return " ".join(text.split())


def omp_checks() -> list:
    return list(REGISTRY.for_suite("omp"))


def test_every_check_sentence_is_verbatim() -> None:
    text = squash(SPEC.read_text("utf-8"))
    assert [c.id for c in omp_checks() if squash(c.sentence) not in text] == []


def test_keyword_follows_the_sentence() -> None:
    """A check quoting a MAY is not a MUST, nor one quoting a SHOULD (a level's clause may still require it)."""
    wrong = []
    for c in omp_checks():
        words = set(c.sentence.replace("(", " ").replace(")", " ").split())
        for kw in ("MAY", "SHOULD", "MUST"):
            if kw in words:
                if c.keyword.value.split()[0] != kw:
                    wrong.append((c.id, kw, c.keyword.value))
                break
    assert wrong == []


def test_clauses_name_real_checks_of_their_level() -> None:
    checks = {c.id.split(".", 1)[1]: c for c in omp_checks()}
    for key, clause in (("core", CORE_CLAUSE), ("search", SEARCH_CLAUSE), ("full", FULL_CLAUSE)):
        assert [n for n in clause if n not in checks] == []
        assert [n for n in clause if checks[n].level != key] == []
        assert next(lv for lv in SUITE.levels if lv.key == key).clause == clause


def test_every_check_is_mapped_and_unobservable_statements_say_why() -> None:
    mapped = {c for s in MAP["statements"] for c in s["checks"]}
    assert sorted(c.id for c in omp_checks() if c.id not in mapped) == []
    assert [s["id"] for s in MAP["statements"] if not s["observable"] and not s.get("reason")] == []
    assert [s["id"] for s in MAP["statements"] if s["observable"] and not s["checks"]] == []
