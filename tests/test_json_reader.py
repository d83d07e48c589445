"""The one strict JSON reader (harness/core/json_reader.py): same values as the stdlib where both read a
text, its bounds (depth, containers, UTF-8 without BOM), and each caller's policy."""

from __future__ import annotations

import json
import random

import orjson
import pytest
from memconform.core.json_reader import (
    FILE,
    ORJSON_DEPTH,
    REPLY,
    STRICT,
    JsonRejected,
    depth_passed_at,
    read_json,
    read_json_noting_path,
)
from memconform.run.validate import NotWellFormed
from memconform.run.validate import parse_json as parse_file
from memconform.targets.base import parse_json as parse_reply


def test_orjson_depth_bound_is_the_one_the_fast_path_relies_on() -> None:
    orjson.loads(b"[" * ORJSON_DEPTH + b"]" * ORJSON_DEPTH)
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(b"[" * (ORJSON_DEPTH + 1) + b"]" * (ORJSON_DEPTH + 1))


@pytest.mark.parametrize("policy", [REPLY, FILE, STRICT], ids=["reply", "file", "strict"])
def test_depth_bound_is_exact_for_arrays_and_objects(policy) -> None:
    limit = policy.max_depth
    assert read_json(b"[" * limit + b"]" * limit, policy) is not None
    assert read_json(b'{"a":' * limit + b"1" + b"}" * limit, policy) is not None
    for text in (b"[" * (limit + 1) + b"]" * (limit + 1), b'{"a":' * (limit + 1) + b"1" + b"}" * (limit + 1)):
        with pytest.raises(JsonRejected) as caught:
            read_json(text, policy)
        assert caught.value.kind == "depth"


@pytest.mark.parametrize("text", [b"", b"  ", b"1,2", b"1],[2", b"[1]],[[2", b"],[", b"1]", b"[1"])
def test_a_text_cannot_close_the_fast_paths_wrapping_arrays(text: bytes) -> None:
    """The depth bound wraps the text in arrays: a text that closes them itself is still refused."""
    with pytest.raises(JsonRejected):
        read_json(text, REPLY)


def _random_doc(rng: random.Random, depth: int = 0) -> object:
    pick = rng.randrange(9 if depth < 4 else 5)
    if pick == 0:
        return rng.choice([None, True, False])
    if pick == 1:
        return rng.choice([0, -0, 1, -1, 2**53 + 1, 2**63 - 1, -(2**63), 2**64 - 1, 10**19])
    if pick == 2:
        return rng.choice([0.1, -0.0, 1e-7, 1.0, 1e21, 5e-324, 1.7976931348623157e308, rng.random()])
    if pick in (3, 4):
        return "".join(rng.choice(["a", "é", "\u2028", "\x00", '"', "\\", "😀", "\ufeff", "/"]) for _ in range(5))
    if pick in (5, 6):
        return [_random_doc(rng, depth + 1) for _ in range(rng.randrange(4))]
    return {f"k{rng.randrange(3)}": _random_doc(rng, depth + 1) for _ in range(rng.randrange(4))}


def test_same_values_as_the_stdlib_on_random_documents() -> None:
    rng = random.Random(11)
    for _ in range(500):
        doc = _random_doc(rng)
        text = json.dumps(doc, ensure_ascii=rng.random() < 0.5).encode("utf-8")
        expected = json.loads(text)
        for policy in (REPLY, FILE, STRICT):
            got = read_json(text, policy)
            assert got == expected and json.dumps(got) == json.dumps(expected), text


def test_wide_integers_stay_exact() -> None:
    """orjson reads integers past 64 bits as floats: those texts take the exact path."""
    for n in (2**64, -(2**64) - 1, 10**30, -(10**300)):
        value = read_json(f"[{n}]".encode(), FILE)
        assert value == [n] and type(value[0]) is int


@pytest.mark.parametrize("n", [-(2**63) - 1, -(10**18) * 9 - 9, 2**64 - 1, 2**64, -(2**63)])
@pytest.mark.parametrize("shape", ["{n}", "[{n}]", '{{"a": {n}}}', "[1,\n {n} ]", '{{"a":[{n},1]}}'])
def test_integers_near_64_bits_stay_exact_wherever_they_stand(n: int, shape: str) -> None:
    """A negative integer of 19 digits can be past 64 bits too; every place a number stands is seen."""
    text = shape.format(n=n).encode()
    for policy in (REPLY, FILE):
        assert read_json(text, policy) == json.loads(text) and str(n) in json.dumps(read_json(text, policy))


def test_digit_runs_inside_strings_keep_the_fast_path() -> None:
    """A sha256 hex digest or base64 with 20 digits in a row is no integer: orjson still reads it."""
    text = json.dumps({"hash": "d15fcad0b3543c3eed20941785272289738752ab82c449a8c57bcacec1", "id": "x-12345678901234567890",
                       "n": 12345678901234567.5}).encode()
    value, fast = read_json_noting_path(text, FILE)
    assert fast and value == json.loads(text)


def test_integers_over_python_bound_are_marked_or_refused() -> None:
    text = b'{"a": [1, ' + b"7" * 5000 + b"]}"
    with pytest.raises(JsonRejected) as caught:
        read_json(text, FILE)
    assert caught.value.kind == "huge-int" and caught.value.path == "$.a[1]"
    with pytest.raises(JsonRejected) as caught:
        read_json(text, REPLY)
    assert caught.value.kind == "huge-int"
    with pytest.raises(NotWellFormed) as refused:
        parse_file(text)
    assert "5000 digits" in refused.value.failure.title and refused.value.failure.path == "$.a[1]"


@pytest.mark.parametrize("body", [
    "{\"a\": 1}".encode("utf-16"), "{\"a\": 1}".encode("utf-16-le"), "{\"a\": 1}".encode("utf-32"),
    b"\xef\xbb\xbf{\"a\": 1}", b'{"a": "\xed\xa0\x80"}',
])
def test_replies_must_be_utf8_without_bom(body: bytes) -> None:
    """RFC 8259 §8.1: the reply parser no longer guesses UTF-16, nor skips a BOM."""
    value, why = parse_reply(body)
    assert value is None and why


def test_policies_differ_only_where_their_callers_do() -> None:
    dup = b'{"a": 1, "a": 2}'
    assert read_json(dup, REPLY) == {"a": 2} and read_json(dup, FILE) == {"a": 2}
    with pytest.raises(JsonRejected, match="duplicate"):
        read_json(dup, STRICT)
    lone = b'["\\ud800"]'
    assert read_json(lone, REPLY) == ["\ud800"]
    with pytest.raises(JsonRejected, match="surrogate"):
        read_json(lone, STRICT)
    assert read_json(b"[1e400]", FILE) == [float("inf")]
    with pytest.raises(JsonRejected, match="out of range"):
        read_json(b"[1e400]", STRICT)
    with pytest.raises(JsonRejected) as caught:
        read_json(b'{"x": [1, NaN, Infinity]}', FILE)
    assert caught.value.kind == "constant" and caught.value.path == "$.x[2]" and "1 more" in caught.value.message


def test_containers_are_bounded_before_parsing() -> None:
    bomb = b"[" + b"[]," * 400_000 + b"[]]"
    with pytest.raises(JsonRejected) as caught:
        read_json(bomb, FILE)
    assert caught.value.kind == "containers"
    objects = b"[" + b"{}," * 400_000 + b"{}]"
    with pytest.raises(JsonRejected, match="arrays and objects"):
        read_json(objects, REPLY)
    brackets_in_strings = json.dumps(["[{" * 10] * 40_000).encode()  # 800k brackets, none of them built
    assert len(read_json(brackets_in_strings, FILE)) == 40_000


def test_depth_offset_is_outside_strings() -> None:
    text = b'{"s": "[[[[", "a": [[[1]]]}'
    assert depth_passed_at(text, 2) == text.index(b"[[[1") + 1
    assert depth_passed_at(text, 4) is None
    assert depth_passed_at(b'"\\"\\"\\"', 0) is None  # an unterminated string ends the scan
