"""EMP documents for the round-trip properties: files of the suite's own valid entries (a tombstone deletes the
first when it has company), and a file with one edge of the domain put in its first line."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st
from memconform.portability.strategies import ASTRAL_COMBINING
from memconform.suites.emp import format as emp


def documents() -> st.SearchStrategy[Any]:
    from memconform.suites.emp.format.strategies import entries

    return st.lists(entries, min_size=1, max_size=5).map(_with_tombstone)


def _with_tombstone(entries: list[dict[str, Any]]) -> str:
    """An EMP file whose first entry, when it has company, is deleted by a later tombstone line."""
    lines = list(entries)
    if len(lines) > 1:
        first = lines[0]
        lines.append(emp.tombstone(first["id"], int(first["ts"]) + 1, first["src"]))
    return "".join(json.dumps(e) + "\n" for e in lines)


def edge(doc: Any, name: str) -> Any:
    """The file with one edge (harness/portability/strategies.py EDGES) put in its first line: a ts of 1e21, text
    at no limit (EMP sets none), an unknown field of a newer minor version."""
    lines = [json.loads(x) for x in doc.split("\n") if x.strip()]
    if not lines:
        return doc
    first = lines[0]
    if name == "far" and not first.get("type") == "tombstone":
        first["ts"] = 1e21
    elif name == "text" and isinstance(first.get("content"), str) and not first["content"].startswith("encrypted:"):
        first["content"] = ASTRAL_COMBINING * 20
    elif name == "unknown":
        first["x_future"] = {"a": [1, "b"]}
    return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
