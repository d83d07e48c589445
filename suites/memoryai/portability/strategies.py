"""MemoryAI documents for the round-trip properties: the suite's own valid bundles, and a bundle with one edge of
the domain put in (its checksums made again, so the edge is the only thing wrong or odd about it)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st
from memconform.portability.strategies import EDGE_TIMES, edge_text
from memconform.suites.memoryai import format as memoryai


def documents() -> st.SearchStrategy[Any]:
    from memconform.suites.memoryai.format.strategies import bundles

    return bundles(max_chunks=4)


def edge(doc: Any, name: str) -> Any:
    """The bundle with one edge (harness/portability/strategies.py EDGES) put in its first chunk."""
    doc = copy.deepcopy(doc)
    chunks = doc.get("chunks") or []
    if not chunks:
        return doc
    rec = chunks[0]
    if name in EDGE_TIMES:
        rec["created_at"] = EDGE_TIMES[name]
    elif name == "text":
        rec["content"] = edge_text(2_000)
    elif name == "duplicate_id":
        twin = copy.deepcopy(rec)
        twin["content"] = "the twin of the first chunk"
        doc["chunks"].append(twin)
    elif name == "unknown":
        rec["x_extra"] = {"kept": True}
    for chunk in doc.get("chunks") or []:
        if isinstance(chunk.get("content"), str):
            chunk["content_hash"] = memoryai.content_hash(chunk["content"])
    return memoryai.seal(doc)
