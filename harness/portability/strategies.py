"""Documents for the round-trip properties: each format's valid documents (its Portable's `documents`, from
the suite's own strategies) and its sample documents with one edge of the domain put in (its Portable's
`edge`). The edges and the values that make them are shared here, so every format meets the same ones."""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st

from .formats import portable

# ---- the edges of every format's domain (issue 32 item 2): each drawn document gets one of them ------------

LEAP, BEFORE_1970, FAR = "2016-12-31T23:59:60Z", "1969-07-20T20:17:40Z", "9999-12-31T23:59:59Z"
EDGE_TIMES = {"leap": LEAP, "before_1970": BEFORE_1970, "far": FAR}  # the time edges: the value each writes
ASTRAL_COMBINING = "e\u0301\U0001d11e\u05d0\u0308"  # a combining accent, an astral clef, Hebrew with a diaeresis
EDGES = ("none", "leap", "before_1970", "far", "text", "no_text", "structured", "duplicate_id", "unknown")


def edge_text(limit: int) -> str:
    """Astral and combining text exactly `limit` code points long (a format's text limit)."""
    return (ASTRAL_COMBINING * (limit // len(ASTRAL_COMBINING) + 1))[:limit]


def documents(fmt: str) -> st.SearchStrategy[Any]:
    """Valid documents of one format, drawn from its suite's own strategies."""
    draw = portable(fmt).documents
    if draw is None:
        raise ValueError(f"the {fmt} format declares no document strategy (Portable.documents)")
    return draw()


def _fixtures(fmt: str) -> list[Any]:
    from .matrix import sample_files
    from .translate import load

    return [load(path, fmt)[1] for path in sample_files(fmt)]


def edge_documents(fmt: str) -> st.SearchStrategy[Any]:
    """A document of the format (a sample document or one the suite's strategy draws) with one edge of the
    domain put in: a leap second, a date before 1970, a far or 1e21 time, astral and combining text at the
    format's limit, a record without text or with structured content, a duplicate id, an unknown field."""
    edge = portable(fmt).edge
    if edge is None:
        raise ValueError(f"the {fmt} format declares no edges (Portable.edge)")
    base = st.one_of(st.sampled_from(_fixtures(fmt)), documents(fmt))
    return st.tuples(base, st.sampled_from(EDGES)).map(lambda pair: edge(pair[0], pair[1]))
