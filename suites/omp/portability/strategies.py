"""OMP documents for the round-trip properties: valid exports (the OMP suite fuzzes an API through schemathesis
and has no document strategy of its own), and a document with one edge of the domain put in."""

from __future__ import annotations

import copy
from typing import Any

from hypothesis import strategies as st
from memconform.portability.strategies import EDGE_TIMES, edge_text
from memconform.suites.omp import format as omp

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
_ISO = st.datetimes(min_value=__import__("datetime").datetime(2000, 1, 1),
                    max_value=__import__("datetime").datetime(2099, 1, 1)).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
_JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**53, 2**53) | _TEXT,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3), max_leaves=6)


@st.composite
def memory(draw: Any, index: int) -> dict[str, Any]:
    source: dict[str, Any] = {"tool": draw(st.sampled_from(["claude", "cursor", "gpt-4o", "com.example.app"])),
                              "timestamp": draw(_ISO)}
    for name in ("session_id", "user_id"):
        if draw(st.booleans()):
            source[name] = draw(_TEXT)
    mem: dict[str, Any] = {
        "id": f"mem_{draw(st.text(_ALNUM, min_size=15, max_size=15))}{_ALNUM[index % len(_ALNUM)]}",
        "content": draw(st.one_of(_TEXT, st.integers(0, 3).map(lambda n: "y" * (omp.MAX_CONTENT + n)))),
        "type": draw(st.sampled_from(omp.TYPES)), "source": source,
        "tags": draw(st.lists(st.text(st.characters(exclude_categories=["Cs"]), max_size=omp.MAX_TAG_LEN), max_size=4, unique=True)),
        "created_at": draw(_ISO), "updated_at": draw(_ISO), "expires_at": draw(st.one_of(st.none(), _ISO)),
        "metadata": draw(st.dictionaries(st.text("abcdefgh", min_size=1, max_size=6), _JSON, max_size=omp.MAX_METADATA_KEYS)),
    }
    if draw(st.booleans()):
        mem["namespace"] = draw(st.text(max_size=20))
    if draw(st.booleans()):
        mem["embedding"] = draw(st.lists(st.floats(allow_nan=False, allow_infinity=False), min_size=1, max_size=4))
    return mem


@st.composite
def exports(draw: Any, max_memories: int = 5) -> dict[str, Any]:
    """A valid OMP export: the §2.1 shape and limits, unique ids (the last character is the position)."""
    n = draw(st.integers(1, max_memories))
    mems = [draw(memory(i)) for i in range(n)]
    return {"omp_version": omp.VERSION, "exported_at": draw(_ISO), "server": "memconform-strategies", "memories": mems}


def documents() -> st.SearchStrategy[Any]:
    return exports()


def edge(doc: Any, name: str) -> Any:
    """The document with one edge (harness/portability/strategies.py EDGES) put in its first memory."""
    doc = copy.deepcopy(doc)
    rec = (doc.get("memories") or [None])[0]
    if rec is None:
        return doc
    if name in EDGE_TIMES:
        for field in ("created_at", "updated_at"):
            rec[field] = EDGE_TIMES[name]
        if isinstance(rec.get("source"), dict):
            rec["source"]["timestamp"] = rec["created_at"]
    elif name == "text":
        rec["content"] = edge_text(10_000)
    elif name == "unknown":
        rec["x_extra"] = {"kept": True}
    return doc
