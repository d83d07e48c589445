"""Documents for the round-trip properties: each suite's own valid-document strategy, and OMP exports
(the OMP suite fuzzes an API through schemathesis and has no document strategy of its own)."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st
from memconform.suites.omp import format as omp

_ALNUM = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
_TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
_ISO = st.datetimes(min_value=__import__("datetime").datetime(2000, 1, 1),
                    max_value=__import__("datetime").datetime(2099, 1, 1)).map(lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
_JSON = st.recursive(st.none() | st.booleans() | st.integers(-2**53, 2**53) | _TEXT,
                     lambda inner: st.lists(inner, max_size=3) | st.dictionaries(_TEXT, inner, max_size=3), max_leaves=6)


@st.composite
def omp_memory(draw: Any, index: int) -> dict[str, Any]:
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
def omp_exports(draw: Any, max_memories: int = 5) -> dict[str, Any]:
    """A valid OMP export: the §2.1 shape and limits, unique ids (the last character is the position)."""
    n = draw(st.integers(1, max_memories))
    mems = [draw(omp_memory(i)) for i in range(n)]
    return {"omp_version": omp.VERSION, "exported_at": draw(_ISO), "server": "memconform-strategies", "memories": mems}


def documents(fmt: str) -> st.SearchStrategy[Any]:
    """Valid documents of one format, drawn from the suites' own strategies."""
    if fmt == "memoryai":
        from memconform.suites.memoryai.format.strategies import bundles
        return bundles(max_chunks=4)
    if fmt == "amps":
        from memconform.suites.amps.format.strategies import exports
        return exports(max_atoms=4, max_artifacts=3)
    if fmt == "memorizz":
        from memconform.suites.memorizz.format.strategies import archives
        return archives()
    if fmt == "emp":
        from memconform.suites.emp.format.strategies import entries
        return st.lists(entries, min_size=1, max_size=5).map(_with_tombstone)
    return omp_exports()


def _with_tombstone(entries: list[dict[str, Any]]) -> str:
    """An EMP file whose first entry, when it has company, is deleted by a later tombstone line."""
    from memconform.suites.emp import format as emp

    lines = list(entries)
    if len(lines) > 1:
        first = lines[0]
        lines.append(emp.tombstone(first["id"], int(first["ts"]) + 1, first["src"]))
    return "".join(json.dumps(e) + "\n" for e in lines)


# ---- the edges of every format's domain (issue 32 item 2): each drawn document gets one of them ------------

LEAP, BEFORE_1970, FAR = "2016-12-31T23:59:60Z", "1969-07-20T20:17:40Z", "9999-12-31T23:59:59Z"
ASTRAL_COMBINING = "e\u0301\U0001d11e\u05d0\u0308"  # a combining accent, an astral clef, Hebrew with a diaeresis


def _fixtures(fmt: str) -> list[Any]:
    from .matrix import sample_files
    from .translate import load

    return [load(path, fmt)[1] for path in sample_files(fmt)]


def _first(doc: Any, fmt: str) -> dict[str, Any] | None:
    """The first record object of a document (EMP: None, its lines are text)."""
    if fmt == "memoryai":
        chunks = doc.get("chunks") or []
        return chunks[0] if chunks else None
    if fmt == "omp":
        return (doc.get("memories") or [None])[0]
    if fmt == "amps":
        return (doc.get("atoms") or [None])[0]
    if fmt == "memorizz":
        return next((r for store in (doc.get("stores") or {}).values() for r in store or []), None)
    return None


def _edge(fmt: str, doc: Any, edge: str) -> Any:
    import copy

    doc = copy.deepcopy(doc)
    if fmt == "emp":
        lines = [json.loads(x) for x in doc.split("\n") if x.strip()]
        if not lines:
            return doc
        first = lines[0]
        if edge == "far" and not first.get("type") == "tombstone":
            first["ts"] = 1e21
        elif edge == "text" and isinstance(first.get("content"), str) and not first["content"].startswith("encrypted:"):
            first["content"] = ASTRAL_COMBINING * 20
        elif edge == "unknown":
            first["x_future"] = {"a": [1, "b"]}
        return "".join(json.dumps(x, ensure_ascii=False) + "\n" for x in lines)
    rec = _first(doc, fmt)
    if rec is None:
        return doc
    times = {"memoryai": ("created_at",), "omp": ("created_at", "updated_at"), "amps": ("created_at", "valid_from")}.get(fmt, ())
    if edge in ("leap", "before_1970", "far") and times:
        for name in times:
            rec[name] = {"leap": LEAP, "before_1970": BEFORE_1970, "far": FAR}[edge]
        if fmt == "omp" and isinstance(rec.get("source"), dict):
            rec["source"]["timestamp"] = rec["created_at"]
    elif edge == "text":
        limit = {"amps": 500, "omp": 10_000}.get(fmt, 2_000)
        text = (ASTRAL_COMBINING * (limit // len(ASTRAL_COMBINING) + 1))[:limit]
        if fmt == "memorizz":
            rec["data"]["content"] = text
        else:
            rec["content" if fmt in ("memoryai", "omp") else "text"] = text
    elif edge == "no_text" and fmt == "memorizz":
        rec["data"].pop("content", None)
    elif edge == "structured" and fmt == "memorizz":
        rec["data"]["content"] = {"blackboard": [{"step": 1, "note": ASTRAL_COMBINING}]}
    elif edge == "duplicate_id" and fmt in ("amps", "memoryai"):
        twin = copy.deepcopy(rec)
        if fmt == "amps":
            twin["text"] = "the twin of the first atom"
            doc["atoms"].append(twin)
        else:
            twin["content"] = "the twin of the first chunk"
            doc["chunks"].append(twin)
    elif edge == "unknown":
        rec["x-extra" if fmt == "amps" else "x_extra"] = {"kept": True}
    return _resealed(fmt, doc)


def _resealed(fmt: str, doc: Any) -> Any:
    if fmt == "memoryai":
        from memconform.suites.memoryai import format as memoryai

        for chunk in doc.get("chunks") or []:
            if isinstance(chunk.get("content"), str):
                chunk["content_hash"] = memoryai.content_hash(chunk["content"])
        return memoryai.seal(doc)
    if fmt == "memorizz":
        from memconform.suites.memorizz import format as memorizz

        return memorizz.seal(doc)
    return doc


EDGES = ("none", "leap", "before_1970", "far", "text", "no_text", "structured", "duplicate_id", "unknown")


def edge_documents(fmt: str) -> st.SearchStrategy[Any]:
    """A document of the format (a reference fixture or one the suite's strategy draws) with one edge of the
    domain put in: a leap second, a date before 1970, a far or 1e21 time, astral and combining text at the
    format's limit, a record without text or with structured content, a duplicate id, an unknown field."""
    base = st.one_of(st.sampled_from(_fixtures(fmt)), documents(fmt))
    return st.tuples(base, st.sampled_from(EDGES)).map(lambda pair: _edge(fmt, pair[0], pair[1]))
