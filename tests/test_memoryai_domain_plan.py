"""MemoryAI's domain sweeps planned by harness/kit/domain_plan.py: under ci the classes of one kind and one
expectation share a bundle; the same classes are judged, with the same outcome and the same readings
recorded, as one class a bundle (default), in fewer calls; and a bundle a target answers wrongly is sent
again in halves until each failure names its class, as the class alone would have."""

from __future__ import annotations

import functools
from typing import Any

import domain_plan_kit
import pytest
from domain_plan_kit import judged, open_answers
from memconform.suites.memoryai.reference.brain import ReferenceBrain

SWEEPS = ["memoryai.domain_import_every_record_class", "memoryai.domain_import_every_class"]
BMP = "Größe café ✓ 記憶"


def records(body: Any, section: str) -> list[dict[str, Any]]:
    found = body.get(section) if isinstance(body, dict) else None
    return [r for r in found if isinstance(r, dict)] if isinstance(found, list) else []


class WrongOnRecordClasses(ReferenceBrain):
    """Right on every record class but three, each in the middle of a ci bundle: refuses an edge of a BMP
    edge_type (allowed), counts a nameless entity (forbidden, skipped) as upserted, and refuses a bundle with
    an entity frequency of -1 (open: a reading, not a failure, which must be recorded as alone)."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if any(e.get("edge_type") == BMP for e in records(body, "memory_edges")):
            raise self._rejection(body, ["an edge_type outside ASCII refused"])
        if any(e.get("frequency") == -1 for e in records(body, "entities")):
            raise self._rejection(body, ["a negative frequency refused"])
        answer = super().import_bundle(body, **params)
        nameless = sum(1 for e in records(body, "entities") if "name" not in e)
        answer["report"]["entities"]["upserted"] += nameless
        return answer


sweep = functools.partial(domain_plan_kit.sweep, "memoryai")  # (check, profile, target=None)


@pytest.mark.parametrize("check", SWEEPS)
def test_ci_judges_the_same_classes_as_default_in_fewer_calls(check: str) -> None:
    domain_plan_kit.ci_judges_as_default("memoryai", check, fewer_than=0.5, answers=True, some_answers=True)


def test_a_record_bundle_answered_wrongly_is_split_until_each_failure_names_its_class() -> None:
    check, target = "memoryai.domain_import_every_record_class", f"python:{__name__}:WrongOnRecordClasses"
    ci, alone, titles = domain_plan_kit.packed_as_alone("memoryai", check, target)
    assert [t for t in titles if t.startswith("a bundle with edge.edge_type:bmp ") and t.endswith(" was refused")], titles
    assert [t for t in titles if t.startswith("a bundle with entity.name:absent ") and "counts a record" in t], titles
    assert len(titles) == 2 and not [t for t in titles if "records" in t.split(":")[0]]  # never a whole bundle's
    assert open_answers(ci) == open_answers(alone)  # the refused frequency -1 recorded as alone
    assert "entity.frequency:beyond_minimum refused" in open_answers(ci)["E61"]
    assert judged(ci) == judged(alone)


class WrongOnChunkClasses(ReferenceBrain):
    """Right on every envelope and chunk class but three, each in the middle of a ci bundle: refuses a BMP
    generator (allowed; its bundle merged with other envelope values), stores a chunk of an unlisted tier
    (forbidden) as it came, and refuses a bundle with a chunk of memory_type 'whim' (open: a reading)."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, dict) and body.get("generator") == BMP:
            raise self._rejection(body, ["a generator outside ASCII refused"])
        if any(c.get("memory_type") == "whim" for c in records(body, "chunks")):
            raise self._rejection(body, ["memory_type whim refused"])
        return super().import_bundle(body, **params)

    def _validate_chunk(self, chunk: Any, dim: Any) -> str | None:
        if isinstance(chunk, dict) and chunk.get("tier") == "not-a-listed-value":
            return None
        return super()._validate_chunk(chunk, dim)  # type: ignore[no-any-return]


def test_a_chunk_or_envelope_bundle_answered_wrongly_is_split_until_each_failure_names_its_class() -> None:
    check, target = "memoryai.domain_import_every_class", f"python:{__name__}:WrongOnChunkClasses"
    ci, alone, titles = domain_plan_kit.packed_as_alone("memoryai", check, target)
    assert [t for t in titles if t.startswith("a bundle with bundle.generator:bmp ") and t.endswith(" was refused")], titles
    assert [t for t in titles if t.startswith("chunk.tier:unknown ") and "stored and exported as such" in t], titles
    assert len(titles) == 2, titles
    assert open_answers(ci) == open_answers(alone)  # the refused memory_type recorded as alone
    assert "chunk.memory_type:unknown refused" in open_answers(ci)["E42"]
    assert judged(ci) == judged(alone)


class CountsDeletions(ReferenceBrain):
    """The reference, counting the deletion calls the harness makes (class-wide: the harness makes the
    instance; the reference's delete_chunks deletes through its own delete_chunk, not counted)."""

    ops: list[str] = []
    inside = False

    def delete_chunk(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if not self.inside:
            CountsDeletions.ops.append("delete_chunk")
        return super().delete_chunk(body, **params)  # type: ignore[no-any-return]

    def delete_chunks(self, body: Any = None, **params: Any) -> dict[str, Any]:
        CountsDeletions.ops.append("delete_chunks")
        self.inside = True
        try:
            return super().delete_chunks(body, **params)  # type: ignore[no-any-return]
        finally:
            self.inside = False


def test_the_large_round_trip_removes_its_chunks_many_a_call() -> None:
    """memoryai.own_export_imported_back_large removes the chunks it seeded as the run's cleanup does: one
    delete_chunks call for hundreds of chunks where the target offers it, not one call a chunk."""
    CountsDeletions.ops.clear()
    outcome, calls = sweep("memoryai.own_export_imported_back_large", "ci", f"python:{__name__}:CountsDeletions")
    assert [r.outcome.value for r in outcome.results] == ["passed"]
    assert "delete_chunk" not in CountsDeletions.ops and 1 <= CountsDeletions.ops.count("delete_chunks") <= 3
    assert calls < 20


class LosesEdgeFloats(ReferenceBrain):
    """Answers a bundle holding a chunk 'edge floats' (the fixture embedding_float_edges, in the middle of the
    fixtures) as ingested but stores none of its chunks; right on every other fixture."""

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if any(str(c.get("content", "")).endswith(" edge floats") for c in records(body, "chunks")):
            return self._report(body, success=True)  # type: ignore[no-any-return]
        return super().import_bundle(body, **params)


def test_conformant_fixtures_share_one_read_and_a_lost_one_is_named_alone() -> None:
    """memoryai.ingests_conformant_bundles under ci: the fixtures imported in turn, the full export read once;
    a store losing one fixture's chunks is named by that fixture, as a read after each import names it."""
    check, target = "memoryai.ingests_conformant_bundles", f"python:{__name__}:LosesEdgeFloats"
    ci, ci_calls = sweep(check, "ci", target)
    alone, alone_calls = sweep(check, "default", target)
    titles = sorted(f.title for r in ci.results for f in r.failures)
    assert titles == ["chunks of a conformant bundle were not stored (embedding_float_edges)"]
    assert titles == sorted(f.title for r in alone.results for f in r.failures)
    reference, reference_calls = sweep(check, "ci")
    assert [r.outcome.value for r in reference.results] == ["passed"]
    assert reference_calls < alone_calls < ci_calls  # one read, not one a fixture; a failing row costs more: split
