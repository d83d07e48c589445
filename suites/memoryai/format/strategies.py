"""Hypothesis strategies: valid sealed bundles, and targeted invalid ones labelled by the rule they break."""

from __future__ import annotations

import copy
import functools
from typing import Any

from hypothesis import strategies as st
from memconform.suites.memoryai.format import (
    CORE_TYPES,
    FORMAT,
    TIERS,
    ZONES,
    content_hash,
    encode_embedding,
    seal,
)

ISO = st.datetimes(min_value=__import__("datetime").datetime(2000, 1, 1), max_value=__import__("datetime").datetime(2099, 1, 1)).map(
    lambda d: d.strftime("%Y-%m-%dT%H:%M:%SZ"))
# any text a user may write, astral planes included; no lone surrogates (not valid UTF-8)
TEXT = st.text(st.characters(exclude_categories=["Cs"]), max_size=40)
UNIT = st.one_of(st.sampled_from([0.0, 1.0, 0.5]), st.floats(min_value=0, max_value=1, allow_nan=False))
FLOAT32 = st.floats(width=32, allow_nan=False, allow_infinity=False)
MEMORY_TYPES = st.one_of(st.sampled_from(CORE_TYPES), st.from_regex(r"x_[a-z][a-z0-9_]{0,12}", fullmatch=True))
JSON_VALUES = st.recursive(st.none() | st.booleans() | st.integers(-2**53, 2**53) | TEXT,
                           lambda inner: st.lists(inner, max_size=3) | st.dictionaries(TEXT, inner, max_size=3), max_leaves=6)


METADATA = st.dictionaries(TEXT, JSON_VALUES, max_size=3)
TAGS = st.lists(TEXT, max_size=3, unique=True)
MAYBE_ISO = st.one_of(st.none(), ISO)
# a few float32 values (extremes included) repeated to the dimension: a 384-dim vector costs 8 draws, not 384
EMBEDDING_PIECES = st.one_of(st.none(), st.lists(FLOAT32, min_size=1, max_size=8))


@functools.lru_cache(maxsize=64)
def _vector_text(dim: int, pieces: tuple[float, ...]) -> str:
    return encode_embedding([pieces[i % len(pieces)] for i in range(dim)])


@st.composite
def chunk(draw: Any, index: int, dim: int, model: str, prefix: str) -> dict[str, Any]:
    content = f"{prefix}#{index} {draw(TEXT)}"
    pieces = draw(EMBEDDING_PIECES)
    embedding = None if pieces is None or dim == 0 else _vector_text(dim, tuple(pieces))
    return {
        "id": index + 1, "content": content, "content_hash": content_hash(content), "memory_type": draw(MEMORY_TYPES),
        "embedding": embedding, "embedding_model": model, "tags": draw(TAGS),
        "zone": draw(st.sampled_from(ZONES)), "importance": draw(UNIT), "is_pinned": draw(st.booleans()),
        "decay_score": draw(UNIT), "tier": draw(st.sampled_from(TIERS)), "created_at": draw(ISO), "accessed_at": draw(ISO),
        "valid_until": draw(MAYBE_ISO), "metadata": draw(METADATA),
    }


@st.composite
def bundles(draw: Any, dim: int = 4, model: str = "memconform-test-model", unique_prefix: str = "memconform",
            max_chunks: int = 6) -> dict[str, Any]:
    """A valid, sealed bundle: every record type, unique content (so runs never collide), values at limits."""
    n = draw(st.integers(1, max_chunks))
    prefix = f"{unique_prefix}-{draw(st.uuids()).hex[:12]}"  # distinct per example: examples share one target
    chunks = [draw(chunk(i, dim, model, prefix)) for i in range(n)]
    ids = [c["id"] for c in chunks]
    pairs = draw(st.lists(st.tuples(st.sampled_from(ids), st.sampled_from(ids), st.sampled_from(["related", "co_recall"])),
                          max_size=4, unique=True))
    edges = [{"chunk_a": a, "chunk_b": b, "edge_type": t, "weight": draw(UNIT), "co_activation_count": draw(st.integers(0, 10**6)),
              "created_at": draw(ISO), "updated_at": draw(ISO)} for a, b, t in pairs]
    names = draw(st.lists(TEXT, max_size=4, unique=True))
    entities = [{"name": f"{prefix}:{name}", "frequency": draw(st.integers(0, 10**6)), "first_seen": draw(ISO),
                 "last_seen": draw(ISO), "is_dna": draw(st.booleans())} for name in names]
    doc = {
        "format": FORMAT, "version": 1, "generator": "memconform-strategies/1", "exported_at": draw(ISO),
        "manifest": {"tenant_id": None, "tenant_name": draw(st.one_of(st.none(), TEXT)), "tenant_plan": None, "scope": "full",
                     "since": None, "embedding_model": model, "embedding_dim": dim},
        "chunks": chunks, "memory_edges": edges, "entities": entities,
        "l2_sessions": draw(st.lists(st.fixed_dictionaries({"summary": TEXT}), max_size=2)),
        "mood_states": draw(st.lists(st.fixed_dictionaries({"mood": TEXT}), max_size=2)),
        "agents": draw(st.lists(st.fixed_dictionaries({"name": TEXT}), max_size=2)),
    }
    return seal(doc)


def _set(path: tuple[Any, ...], value: Any, reseal: bool = True) -> Any:
    def mutate(doc: dict[str, Any]) -> dict[str, Any]:
        doc = copy.deepcopy(doc)
        node = doc
        for key in path[:-1]:
            node = node[key]
        if value is _DELETE:
            node.pop(path[-1], None)
        else:
            node[path[-1]] = value
        return seal(doc) if reseal else doc
    return mutate


_DELETE = object()

# check id broken -> mutation of a valid bundle
MUTATIONS: dict[str, list[Any]] = {
    "memoryai.envelope_format_literal": [_set(("format",), "memoryai_bundle"), _set(("format",), "MemoryAI-Bundle")],
    "memoryai.envelope_version_integer": [_set(("version",), True), _set(("version",), "1"), _set(("version",), 0), _set(("version",), 1.5),
                                           _set(("version",), 2)],
    "memoryai.manifest_required_fields": [_set(("manifest", "embedding_dim"), _DELETE), _set(("manifest", "scope"), "partial")],
    "memoryai.chunk_required_fields": [_set(("chunks", 0, "content"), _DELETE), _set(("chunks", 0, "memory_type"), 7)],
    "memoryai.chunk_enums_and_ranges": [_set(("chunks", 0, "zone"), "hot"), _set(("chunks", 0, "importance"), 1.5)],
    "memoryai.chunk_field_types": [_set(("chunks", 0, "is_pinned"), "yes"), _set(("chunks", 0, "tags"), "a,b")],
    "memoryai.embedding_length_matches_dim": [_set(("chunks", 0, "embedding"), encode_embedding([0.5] * 3))],
    "memoryai.embedding_base64_float32": [_set(("chunks", 0, "embedding"), "!!not base64!!")],
    "memoryai.counts_accurate": [lambda d: _set(("manifest", "counts", "chunks"), len(d["chunks"]) + 1, reseal=False)(d)],
    "memoryai.checksum_present_and_valid": [_set(("manifest", "checksum"), "0" * 64, reseal=False)],
    "memoryai.memory_type_known_or_vendor": [_set(("chunks", 0, "memory_type"), "Fact")],
    "memoryai.no_credentials_in_bundle": [_set(("chunks", 0, "metadata"), {"api_key": "sk-live-abcdefghijklmnop"})],
}


@st.composite
def invalid_bundles(draw: Any, dim: int = 4) -> tuple[str, dict[str, Any]]:
    """(check id it breaks, bundle): a valid bundle with one targeted mutation."""
    check_id = draw(st.sampled_from(sorted(MUTATIONS)))
    mutate = draw(st.sampled_from(MUTATIONS[check_id]))
    doc = draw(bundles(dim=dim))
    return check_id, mutate(doc)
