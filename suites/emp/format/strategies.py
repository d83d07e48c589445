"""Hypothesis strategies: valid EMP lines and files, and invalid lines labelled by the check they break."""

from __future__ import annotations

import json
import uuid

from hypothesis import strategies as st
from memconform.suites.emp.format import VERSION

uuid4s = st.uuids(version=4).map(str)
srcs = st.from_regex(r"\A(com|org|io)\.[a-z]{1,8}\.[a-z]{1,8}\Z")
tags = st.lists(st.from_regex(r"\A[a-z0-9:]{1,10}\Z"), max_size=4)
texts = st.text(max_size=40)

entries = st.fixed_dictionaries(
    {"v": st.just(VERSION), "id": uuid4s, "ts": st.integers(0, 2**45), "src": srcs, "content": texts},
    optional={"type": st.sampled_from(["preference", "fact", "event", "conversation", "note"]),
              "tags": tags, "meta": st.dictionaries(st.text(max_size=5), st.integers(), max_size=3),
              "emb": st.lists(st.floats(allow_nan=False, allow_infinity=False, width=32), max_size=4)},
)

files = st.lists(entries, max_size=6).map(lambda es: "".join(json.dumps(e) + "\n" for e in es))

_BASE = {"v": VERSION, "id": str(uuid.UUID(int=0x4000 << 64 | 1, version=4)), "ts": 1701234567890,
         "src": "com.example.app", "content": "x"}

INVALID: dict[str, list[dict]] = {
    "required_fields": [{k: v for k, v in _BASE.items() if k != "src"}],
    "version_format": [dict(_BASE, v="1"), dict(_BASE, v=1.0)],
    "id_uuid4": [dict(_BASE, id="not-a-uuid"), dict(_BASE, id="6ba7b810-9dad-11d1-80b4-00c04fd430c8")],
    "ts_millis": [dict(_BASE, ts=True), dict(_BASE, ts="1701234567890"), dict(_BASE, ts=1.5)],
    "src_reverse_domain": [dict(_BASE, src="My App")],
    "content_string": [dict(_BASE, content=42)],
    "tags_lowercase": [dict(_BASE, tags=["UI"])],
    "optional_field_types": [dict(_BASE, meta=[1]), dict(_BASE, emb=["a"])],
    "encrypted_content_form": [dict(_BASE, content="encrypted:AES256:not base64!")],
}

invalid_lines = st.sampled_from([(check, json.dumps(line)) for check, lines in INVALID.items() for line in lines])
