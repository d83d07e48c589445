"""MemoRizz canonical bytes from orjson: the same bytes as the exact writer whenever they are used."""

from __future__ import annotations

import math
import random

import orjson
import pytest
from memconform.suites.memorizz.format.canonical import canonical_bytes, canonical_text_exact, number_text
from memconform.suites.memorizz.format.canonical_fast import needs_number_rules, plain_canonical


@pytest.mark.parametrize(("text", "needs"), [
    (b'{"a":1.0}', True), (b"[1.5,2.25]", False), (b"[1e-7]", True), (b"[1e+16]", True), (b"[0.0]", True),
    (b'{"a":-3.0,"b":2}', True), (b"[10.05]", False), (b'{"a":[1,2.0]}', True),
    (b'{"id":"0000000e-859c"}', False), (b'{"c":"v2.0, ok"}', False),
    (b'{"x":"a,1e-5]"}', True),  # number-shaped text inside a string: only the exact writers then
])
def test_number_tokens_that_need_the_rules_are_found(text: bytes, needs: bool) -> None:
    assert needs_number_rules(text) is needs


def test_orjson_floats_differ_from_the_spec_only_where_the_search_looks() -> None:
    rng = random.Random(5)
    for _ in range(50_000):
        value = rng.choice([1, -1]) * 10.0 ** rng.uniform(-320, 307) * rng.random()
        if rng.random() < 0.3:
            value = float(round(value))
        if not math.isfinite(value):
            continue
        written = orjson.dumps([value])
        assert written == f"[{number_text(value)}]".encode() or needs_number_rules(written), value


def test_same_bytes_as_the_exact_writer() -> None:
    rng = random.Random(9)
    for _ in range(300):
        doc = {"format": "memorizz.memory", "n": rng.choice([1, 0.5, 1.0, 1e-7, 3.25, 2**60, "é☂", None]),
               "stores": {"b": [{"id": f"{rng.getrandbits(32):08x}-e-1", "w": rng.random()}], "a": []},
               "integrity": {"digest": "x"}}
        expected = canonical_text_exact({k: v for k, v in doc.items() if k != "integrity"}).encode()
        assert canonical_bytes(doc, finite=True) == expected
        fast = plain_canonical({k: v for k, v in doc.items() if k != "integrity"})
        assert fast is None or fast == expected
