"""MemoryAI §3.5 "A base64-encoded little-endian array of float32 values", judged at Level 1.

A producer writing big-endian float32 has the right base64 and the right length, so the document checks
pass it; a blind implementation (tests/second_opinion/memoryai3, `embedding_big_endian`) was blamed only
at Levels 2 and 3. `memoryai.embedding_little_endian` seeds a chunk with a known vector in the target's
own model and reads the export back little-endian.
"""

from __future__ import annotations

from typing import Any

from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.run.session import execute_run
from memconform.suites.memoryai.reference.brain import ReferenceBrain

CHECK = "embedding_little_endian"


class DropsEmbeddings(ReferenceBrain):
    """Keeps no vector it was given (re-embeds lazily): exports null."""

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        return dict(super()._exported_chunk(chunk), embedding=None)


def run(target: str) -> Any:
    outcome = execute_run(["memoryai"], target, Profile.named("ci"), report_dir=None, check_ids=[CHECK])
    assert len(outcome.results) == 1, outcome.results
    return outcome.results[0]


def test_the_reference_writes_little_endian() -> None:
    result = run("reference:memoryai")
    assert result.outcome is Outcome.PASSED, [f.title for f in result.failures]


def test_a_big_endian_producer_fails_level_1_naming_the_byte_order() -> None:
    result = run("python:memconform.suites.memoryai.mutants:EmbeddingBigEndian")
    assert result.outcome is Outcome.FAILED
    assert any("big-endian" in f.title for f in result.failures), [f.title for f in result.failures]


def test_a_producer_that_keeps_no_vector_is_skipped_with_the_reason() -> None:
    result = run(f"python:{__name__}:DropsEmbeddings")
    assert result.outcome is Outcome.SKIPPED
    assert "byte order cannot be compared" in str(result.reason), result.reason
