"""The MemoryAI oracle (suites/memoryai/model.py): import outcomes and the chunk sets of each export scope,
under the default readings and pinned ones."""

from __future__ import annotations

from typing import Any

from memconform.suites.memoryai import format as mai
from memconform.suites.memoryai import model as oracle


def chunk(text: str, created_at: str = "2026-01-01T10:00:00Z", **fields: Any) -> dict[str, Any]:
    return {"content": text, "content_hash": mai.content_hash(text), "memory_type": "fact", "created_at": created_at, **fields}


def bundle(chunks: list[Any], entities: list[Any] | None = None, version: int = 1) -> dict[str, Any]:
    return {"format": mai.FORMAT, "version": version,
            "manifest": {"scope": "full", "embedding_model": "m", "embedding_dim": 4},
            "chunks": chunks, "entities": entities or []}


def only(outcomes: tuple[oracle.Answer, ...]) -> oracle.Answer:
    assert len(outcomes) == 1, outcomes
    return outcomes[0]


def test_a_newer_version_is_refused_and_changes_nothing() -> None:
    state = only(oracle.import_answers(oracle.State(), bundle([chunk("a")]))).state
    refused = only(oracle.import_answers(state, bundle([chunk("b")], version=999)))
    assert not refused.accepted and refused.state == state


def test_a_duplicate_keeps_the_first_row() -> None:
    first = only(oracle.import_answers(oracle.State(), bundle([chunk("a", tags=["first"])]))).state
    rival = only(oracle.import_answers(first, bundle([chunk("a", tags=["rival"])]))).state
    assert rival.chunks[mai.content_hash("a")]["tags"] == ["first"] and len(rival.chunks) == 1


def test_an_invalid_chunk_is_skipped_or_refuses_the_bundle_unless_pinned() -> None:
    mixed = bundle([chunk("a"), {"memory_type": "fact"}, chunk("b")])
    outcomes = oracle.import_answers(oracle.State(), mixed)
    assert {(o.accepted, len(o.state.chunks)) for o in outcomes} == {(False, 0), (True, 2)}
    pinned = oracle.import_answers(oracle.State(), mixed, oracle.Readings(invalid_chunks="skip"))
    assert [o.accepted for o in pinned] == [True]


def test_the_same_bundle_again_accumulates_or_leaves_the_counters_e6() -> None:
    same = bundle([chunk("a")], [{"name": "Mira", "frequency": 2, "last_seen": "2026-01-01T00:00:00Z", "is_dna": False}])
    once = only(oracle.import_answers(oracle.State(), same)).state
    again = oracle.import_answers(once, same)
    assert {o.reading: o.state.entities["Mira"]["frequency"] for o in again} == {"accumulate": 4, "stable": 2}
    pinned = oracle.import_answers(once, same, oracle.Readings(reimport_counters="stable"))
    assert [o.state.entities["Mira"]["frequency"] for o in pinned] == [2]


def test_entities_merge_latest_last_seen_and_or_is_dna() -> None:
    a = {"name": "Mira", "frequency": 1, "last_seen": "2026-01-02T00:00:00+05:30", "is_dna": True}
    b = {"name": "Mira", "frequency": 1, "last_seen": "2026-01-01T20:00:00Z", "is_dna": False}
    state = only(oracle.import_answers(oracle.State(), bundle([], [a]))).state
    merged = only(oracle.import_answers(state, bundle([chunk("x")], [b]))).state.entities["Mira"]
    assert merged["last_seen"] == "2026-01-01T20:00:00Z" and merged["is_dna"] is True and merged["frequency"] == 2


def test_deleted_chunks_are_never_exported_nor_imported_again() -> None:
    state = only(oracle.import_answers(oracle.State(), bundle([chunk("a"), chunk("b")]))).state
    gone = oracle.delete(state, mai.content_hash("a"))
    back = only(oracle.import_answers(gone, bundle([chunk("a")]))).state
    assert only(oracle.export_answers(back, "full")).hashes == {mai.content_hash("b")}  # type: ignore[arg-type]


def test_dna_only_holds_the_union_rule_chunks() -> None:
    chunks = [chunk("t", memory_type="decision"), chunk("z", zone="critical"), chunk("p", is_pinned=True), chunk("f")]
    state = only(oracle.import_answers(oracle.State(), bundle(chunks))).state
    assert only(oracle.export_answers(state, "dna_only")).hashes == {mai.content_hash(t) for t in "tzp"}


def test_since_in_any_offset_selects_the_same_chunks_and_the_chunk_at_it_is_open() -> None:
    chunks = [chunk("early", "2026-01-01T09:59:59Z"), chunk("at", "2026-01-01T10:00:00Z"), chunk("late", "2026-01-01T10:00:01Z")]
    state = only(oracle.import_answers(oracle.State(), bundle(chunks))).state
    for spelling in ("2026-01-01T10:00:00Z", "2026-01-01T15:30:00+05:30", "2026-01-01T10:00:00.000+00:00"):
        sets = {a.reading: a.hashes for a in oracle.export_answers(state, "since", spelling)}
        assert sets == {"inclusive": {mai.content_hash("at"), mai.content_hash("late")},
                        "exclusive": {mai.content_hash("late")}}
    pinned = oracle.export_answers(state, "since", "2026-01-01T10:00:00Z", oracle.Readings(since_boundary="exclusive"))
    assert [a.reading for a in pinned] == ["exclusive"]
