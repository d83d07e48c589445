"""MemoryAI's literal canonical bytes through orjson are json.dumps's bytes, on any document.

§3.6's literal reading is Python's json.dumps(sort_keys=True, separators=(",", ":"),
ensure_ascii=False); `canonical_bytes` takes orjson's output where it is byte for byte the same and
writes the floats orjson writes otherwise (magnitude below 1e-4) with Python's repr.
"""

from __future__ import annotations

import json
import math
import random
import struct
from typing import Any

import pytest
from memconform.suites.memoryai import format as mai


def _reference(doc: dict[str, Any]) -> bytes:
    body = dict(doc)
    manifest = body.get("manifest")
    if isinstance(manifest, dict) and "checksum" in manifest:
        body["manifest"] = {k: v for k, v in manifest.items() if k != "checksum"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def _float(rng: random.Random) -> float:
    while True:
        pick = rng.random()
        if pick < 0.4:
            value = struct.unpack("<d", struct.pack("<Q", rng.getrandbits(64)))[0]
        elif pick < 0.8:
            value = rng.random() * 10.0 ** rng.randrange(-12, 22)
        else:
            value = rng.choice([0.0, -0.0, 1e-4, 9.99e-5, 1e-5, 1e16, 1e15, 5e-324, 1.7976931348623157e308, 0.1])
        if math.isfinite(value):
            return -value if rng.random() < 0.3 else value


def _text(rng: random.Random) -> str:
    return "".join(chr(c) for c in (rng.choice([rng.randrange(0x80), rng.randrange(0x800), rng.randrange(0xD800),
                                                 rng.randrange(0xE000, 0x110000)]) for _ in range(rng.randrange(6))))


def _value(rng: random.Random, depth: int = 0) -> Any:
    pick = rng.random()
    if depth > 3 or pick < 0.5:
        return rng.choice([_float(rng), _float(rng), rng.randrange(-(2**63), 2**63), _text(rng), None, True, False])
    if pick < 0.75:
        return [_value(rng, depth + 1) for _ in range(rng.randrange(5))]
    return {_text(rng): _value(rng, depth + 1) for _ in range(rng.randrange(5))}


def test_orjson_bytes_are_json_dumps_bytes_on_random_documents() -> None:
    rng = random.Random(8785)
    for _ in range(3000):
        doc = {"format": "memoryai-bundle", "manifest": {"checksum": "x", "n": _value(rng)},
               "chunks": [{"importance": _float(rng), "x": _value(rng)} for _ in range(rng.randrange(4))]}
        assert mai.canonical_bytes(doc, "literal") == _reference(doc)


def test_the_document_is_left_as_it_was() -> None:
    doc = {"manifest": {"checksum": "c"}, "chunks": [{"importance": 1e-7, "tags": [2e-9, 0.5]}]}
    before = json.dumps(doc)
    assert mai.canonical_bytes(doc) == _reference(doc) and b"1e-07" in mai.canonical_bytes(doc)
    assert json.dumps(doc) == before


@pytest.mark.parametrize("odd", [float("nan"), float("inf"), -float("inf")])
def test_non_finite_numbers_are_still_refused(odd: float) -> None:
    with pytest.raises(ValueError):
        mai.canonical_bytes({"chunks": [{"importance": odd}]})


@pytest.mark.parametrize("doc", [
    {"n": 2**64}, {"n": -(2**70)}, {"a": [{"b": 10**30, "c": 1e-6}]},
])
def test_what_orjson_refuses_is_written_by_json_dumps(doc: dict[str, Any]) -> None:
    assert mai.canonical_bytes(doc) == json.dumps(doc, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def test_a_lone_surrogate_has_no_literal_bytes_as_before() -> None:
    with pytest.raises(UnicodeEncodeError):
        mai.canonical_bytes({"s": "\ud800"})
