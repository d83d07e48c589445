"""The cheap proof that a text nests shallowly (json_reader.nests_within), which lets a large text skip
the wrapped parse: it proves only what holds, and every text it cannot prove still meets the bound."""

from __future__ import annotations

import json

import orjson
import pytest
from memconform.core import json_reader
from memconform.core.json_reader import (
    _NOT_MARKS,
    FILE,
    MIN_CONTAINERS,
    SHALLOW_PASSES,
    JsonRejected,
    nests_within,
    read_json,
)


def proved(text: bytes, limit: int = 512) -> bool:
    return nests_within(text, text.translate(None, _NOT_MARKS), limit)


def nested(depth: int) -> bytes:
    return b"[" * depth + b"]" * depth


def test_a_shallow_text_is_proved_and_a_deeper_one_is_not():
    doc = json.dumps({"a": [{"b": [1, 2, {"c": "x, y: z"}]}], "d": "plain"}).encode()
    assert proved(doc)
    assert proved(nested(5), limit=5)
    assert not proved(nested(6), limit=5)  # positive control above: the same shape one level deeper


def test_brackets_inside_strings_are_never_taken_for_structure():
    # closers inside strings would hide the depth from a count that ignores strings
    camouflaged = b"[" * 40 + b'"]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]"' + b"]" * 40
    assert not proved(camouflaged, limit=10)
    assert not proved(b'["[", 1]')
    assert proved(b'["x", 1]')  # positive control: the same text without the bracket in its string


def test_a_backslash_leaves_the_text_unproved():
    assert not proved(b'["a\\"]"]')
    assert not proved(b'["a\\\\"]')
    assert proved(b'["a"]')


def test_nesting_past_the_passes_is_not_proved():
    assert proved(nested(SHALLOW_PASSES))
    assert not proved(nested(SHALLOW_PASSES + 1))


def _large(inner: bytes) -> bytes:
    filler = b'{"k": "' + b"v" * 100 + b'"}'
    count = MIN_CONTAINERS // len(filler) + 10
    return b"[" + b",".join([filler] * count + [inner]) + b"]"


@pytest.mark.parametrize("depth", [FILE.max_depth - 1, FILE.max_depth])
def test_a_large_text_at_the_limit_reads_as_orjson_reads_it(depth):
    text = _large(nested(depth - 1))  # inside the outer array: `depth` levels in all
    assert len(text) > MIN_CONTAINERS
    assert read_json(text, FILE) == orjson.loads(text)


def test_a_large_text_past_the_limit_is_refused_even_with_camouflage():
    deep = b"[" * FILE.max_depth + b'"]]]]"' + b"]" * FILE.max_depth
    for text in (_large(nested(FILE.max_depth)), _large(deep)):  # one level past the limit in all
        with pytest.raises(JsonRejected) as refused:
            read_json(text, FILE)
        assert refused.value.kind == "depth"


@pytest.mark.parametrize("proof_from", [0, 1 << 40])
def test_proved_or_wrapped_a_text_reads_the_same(proof_from, monkeypatch):
    """Below DEPTH_PROOF_FROM a text is read wrapped (no proof), from it proved first: the same values and
    the same refusals either way, whichever path the size picks."""
    monkeypatch.setattr(json_reader, "DEPTH_PROOF_FROM", proof_from)
    for depth in (FILE.max_depth - 1, FILE.max_depth):
        text = _large(nested(depth - 1))
        assert read_json(text, FILE) == orjson.loads(text)
    deep = b"[" * FILE.max_depth + b'"]]]]"' + b"]" * FILE.max_depth
    for text in (_large(nested(FILE.max_depth)), _large(deep)):
        with pytest.raises(JsonRejected) as refused:
            read_json(text, FILE)
        assert refused.value.kind == "depth"
