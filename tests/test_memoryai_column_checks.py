"""MemoryAI's chunk checks judged a column at a time (suites/memoryai/checks/document.py): the column
pass may only end a check early when the per-chunk loop would find nothing, so every verdict and every
failure's wording are the loop's."""

from __future__ import annotations

import random
from types import SimpleNamespace
from typing import Any

import pytest
from memconform.suites.memoryai.checks import document


class _Text(str):
    pass


VALUES: dict[str, list[Any]] = {
    "id": [1, 7, True, 1.0, "1", None, 10**30],
    "content_hash": ["a" * 64, "A" * 64, "a" * 63, "g" * 64, 5, None, _Text("b" * 64)],
    "embedding_model": ["m", "", 3, None, ["m"]],
    "tags": [[], ["a", "b"], ["a", 1], "a", None, [None], [_Text("t")]],
    "importance": [0, 1, 0.5, 1.5, -0.1, float("nan"), float("inf"), True, "0.5", None, 10**400],
    "is_pinned": [True, False, 0, "true", None],
    "decay_score": [0.0, 0.99, 2, -1, None, "x"],
    "created_at": ["2026-01-01T00:00:00Z", "2026-01-01", "2026-02-30T00:00:00Z", "yesterday", 5, None,
                   "2026-01-01T00:00:00+05:30", "2026-01-01T00:00:00z", "x" * 80],
    "accessed_at": ["2026-01-02T00:00:00Z", "2026-13-01T00:00:00Z", None],
    "valid_until": [None, "2026-01-03T00:00:00Z", "soon", 0],
    "metadata": [{}, {"k": 1}, [], "m", None],
    "zone": ["standard", "important", "critical", "ephemeral", "Standard", "", 1, None, ["standard"],
             _Text("standard")],
    "tier": ["hot", "warm", "cold", "lukewarm", None, 2],
}
GOOD: dict[str, list[Any]] = {
    "id": [1, 7], "content_hash": ["a" * 64, "A" * 64], "embedding_model": ["m"], "tags": [[], ["a", "b"]],
    "importance": [0, 1, 0.5], "is_pinned": [True, False], "decay_score": [0.0, 0.99],
    "created_at": ["2026-01-01T00:00:00Z", "2026-01-01"], "accessed_at": ["2026-01-02T00:00:00Z"],
    "valid_until": [None, "2026-01-03T00:00:00Z"], "metadata": [{}, {"k": 1}], "zone": ["standard", "critical"],
    "tier": ["hot", "cold"],
}


def _chunks(rng: random.Random, values: dict[str, list[Any]], bad: float) -> list[Any]:
    chunks: list[Any] = []
    for i in range(rng.randrange(1, 8)):
        if rng.random() < 0.05:
            chunks.append(["not", "a", "chunk"])
            continue
        chunk: dict[str, Any] = {"content": f"c{i}", "memory_type": "fact"}
        for name in rng.sample(sorted(GOOD), rng.randrange(len(GOOD) + 1)):
            pool = values[name] if rng.random() < bad else GOOD[name]
            chunk[name] = rng.choice(pool)
        chunks.append(chunk)
    return chunks


def _failures(check: Any, doc: dict[str, Any]) -> list[Any]:
    return [f.to_json() for f in check(doc, SimpleNamespace(document=doc))]


@pytest.mark.parametrize("check, column_pass", [
    (document.chunk_field_types, "_chunk_types_all_hold"),
    (document.chunk_enums_and_ranges, "_enums_and_ranges_all_hold"),
])
def test_the_column_pass_changes_no_failure(check: Any, column_pass: str, monkeypatch: pytest.MonkeyPatch) -> None:
    rng = random.Random(9)
    ended_early = 0
    for _ in range(3000):
        doc = {"format": "memoryai-bundle", "chunks": _chunks(rng, VALUES, rng.choice([0.0, 0.05, 0.3]))}
        with_columns = _failures(check, doc)
        held = getattr(document, column_pass)([c for c in doc["chunks"] if isinstance(c, dict)])
        with monkeypatch.context() as patched:
            patched.setattr(document, column_pass, lambda chunks: False)  # the per-chunk loop alone
            by_loop = _failures(check, doc)
        assert with_columns == by_loop, doc
        assert not (held and by_loop), doc  # the pass says "all hold" only where the loop finds nothing
        ended_early += held
    assert ended_early > 300  # and it does say so, often: a positive control


def test_all_good_chunks_end_both_checks_early() -> None:
    rng = random.Random(10)
    chunks = [c for c in _chunks(rng, GOOD, 0.0) if isinstance(c, dict)] * 50
    assert document._chunk_types_all_hold(chunks) and document._enums_and_ranges_all_hold(chunks)
