"""Hypothesis strategies: JSON values (for the canonical form) and valid, sealed MemoRizz archives.

`archives()` draws archives that pass every memorizz document check: all 13 stores, unique ids per
store, data.id/_id and natural ids equal to the record id, links only to records in the archive,
manifest counts and record_count right, a UTC created_at and a correct checksum.
"""

from __future__ import annotations

from typing import Any

from hypothesis import strategies as st
from memconform.suites.memorizz.format import NATURAL_IDS_IMPLIED, STORES, empty_archive, seal

_text = st.text(st.characters(exclude_categories=["Cs"]), max_size=20)
_floats = st.one_of(
    st.floats(allow_nan=False, allow_infinity=False),
    st.sampled_from([0.0, -0.0, 1.0, 1e-6, 1e-7, 1e21, 1e20, 1e16, 1e-5, 123456789012345680000.0]),
)
_scalars = st.one_of(st.none(), st.booleans(), st.integers(-(2**63), 2**63), _floats, _text)
json_values = st.recursive(
    _scalars,
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(_text, inner, max_size=5)),
    max_leaves=30,
)
# what an archive holds: integers within JavaScript's safe range (the spec asks for strings beyond it)
_archive_values = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-(2**53 - 1), 2**53 - 1), _floats, _text),
    lambda inner: st.one_of(st.lists(inner, max_size=5), st.dictionaries(_text, inner, max_size=5)),
    max_leaves=30,
)
_ids = st.text("abcdefghijklmnopqrstuvwxyz0123456789-", min_size=1, max_size=16)


@st.composite
def archives(draw: Any) -> dict[str, Any]:
    archive = empty_archive(created_at="2026-05-01T12:00:00+00:00")
    for store in draw(st.lists(st.sampled_from(STORES), max_size=6, unique=True)):
        for rid in draw(st.lists(_ids, min_size=1, max_size=3, unique=True)):
            data: dict[str, Any] = {"memory_id": "harbor-demo", "content": draw(_text),
                                    "extra": draw(st.dictionaries(_text, _archive_values, max_size=3))}
            data.pop("embedding", None)
            natural = NATURAL_IDS_IMPLIED.get(store)
            for key in draw(st.sets(st.sampled_from(["id", "_id", "natural"]))):
                if key != "natural":
                    data[key] = rid
                elif natural:
                    data[natural] = rid
            archive["stores"][store].append({"id": rid, "data": data})
    return seal(archive)
