"""MemoRizz documents for the round-trip properties: the suite's own valid archives, and an archive with one
edge of the domain put in (sealed again, so the edge is the only thing wrong or odd about it)."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st
from memconform.portability.strategies import ASTRAL_COMBINING, edge_text
from memconform.suites.memorizz import format as memorizz


def documents() -> st.SearchStrategy[Any]:
    from memconform.suites.memorizz.format.strategies import archives

    return archives()


def edge(doc: Any, name: str) -> Any:
    """The archive with one edge (harness/portability/strategies.py EDGES) put in its first record (a record
    holds no date-time of its own: the time edges leave it as it is)."""
    doc = copy.deepcopy(doc)
    rec = next((r for store in (doc.get("stores") or {}).values() for r in store or []), None)
    if rec is None:
        return doc
    if name == "text":
        rec["data"]["content"] = edge_text(2_000)
    elif name == "no_text":
        rec["data"].pop("content", None)
    elif name == "structured":
        rec["data"]["content"] = {"blackboard": [{"step": 1, "note": ASTRAL_COMBINING}]}
    elif name == "unknown":
        rec["x_extra"] = {"kept": True}
    return memorizz.seal(doc)
