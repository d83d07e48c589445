"""AMPS documents for the round-trip properties: the suite's own valid exports, and an export with one edge of
the domain put in."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st
from memconform.portability.strategies import EDGE_TIMES, edge_text


def documents() -> st.SearchStrategy[Any]:
    from memconform.suites.amps.format.strategies import exports

    return exports(max_atoms=4, max_artifacts=3)


def edge(doc: Any, name: str) -> Any:
    """The export with one edge (harness/portability/strategies.py EDGES) put in its first atom."""
    doc = copy.deepcopy(doc)
    rec = (doc.get("atoms") or [None])[0]
    if rec is None:
        return doc
    if name in EDGE_TIMES:
        for field in ("created_at", "valid_from"):
            rec[field] = EDGE_TIMES[name]
    elif name == "text":
        rec["text"] = edge_text(500)
    elif name == "duplicate_id":
        twin = copy.deepcopy(rec)
        twin["text"] = "the twin of the first atom"
        doc["atoms"].append(twin)
    elif name == "unknown":
        rec["x-extra"] = {"kept": True}
    return doc
