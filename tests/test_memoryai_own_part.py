"""What a round trip imports back of a target's export: only the records the run wrote (and the edges
between its chunks), sealed again in the reading the export's checksum followed; nothing of others."""

from __future__ import annotations

from memconform.suites.memoryai import client as c
from memconform.suites.memoryai import format as mai


def export_of(mine: str) -> dict:
    chunks = [{"id": 1, "content": f"{mine} é a", "memory_type": "fact"}, {"id": 2, "content": f"{mine} b", "memory_type": "fact"},
              {"id": 3, "content": "someone else's", "memory_type": "fact"}]
    edges = [{"chunk_a": 1, "chunk_b": 2, "edge_type": "related"}, {"chunk_a": 1, "chunk_b": 3, "edge_type": "related"},
             {"chunk_a": [1], "chunk_b": 2, "edge_type": "odd"}]
    doc = {"format": "memoryai-bundle", "version": 1, "manifest": {"scope": "full", "embedding_model": "m", "embedding_dim": 4},
           "chunks": chunks, "memory_edges": edges, "entities": [{"name": f"{mine} e"}, {"name": "other"}]}
    return mai.seal(doc, "ascii", "python")


def test_only_the_runs_records_and_their_edges_sealed_in_the_same_reading() -> None:
    doc = export_of("memconform-run1")
    part = c.own_part(doc, "memconform-run1")
    assert [ch["id"] for ch in part["chunks"]] == [1, 2]
    assert part["memory_edges"] == [{"chunk_a": 1, "chunk_b": 2, "edge_type": "related"}]
    assert [e["name"] for e in part["entities"]] == ["memconform-run1 e"]
    assert part["manifest"]["counts"] == {"chunks": 2, "memory_edges": 1, "entities": 1}
    assert mai.checksum_reading_of(part) == "ascii-escapes"
    assert len(doc["chunks"]) == 3 and "l2_sessions" not in part  # the export untouched; absent sections stay absent


def test_an_export_whose_checksum_follows_no_reading_keeps_its_checksum() -> None:
    doc = export_of("memconform-run1")
    doc["manifest"]["checksum"] = "not a digest"
    assert c.own_part(doc, "memconform-run1")["manifest"]["checksum"] == "not a digest"
