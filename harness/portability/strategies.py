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
