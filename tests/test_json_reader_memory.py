"""The strict JSON reader builds at most a small multiple of its input in Python objects.

Texts whose every byte is expensive as objects (one-letter keys, short strings, empty objects, small
objects, small integers, strings widened by one character past U+FFFF) are refused before anything
is built when they would pass `memory_bound` (MEMORY_FACTOR bytes per byte and MEMORY_FLOOR); what
is accepted keeps under it, measured with tracemalloc. While it parses, orjson's parser (yyjson)
also reserves a pool of about 13 bytes per byte of text whatever the text holds (measured: 13.0 for
one long string, 13.6 for an array of nulls), freed when the parse ends and mostly never touched;
the peak bound states it as ORJSON_POOL.
"""

from __future__ import annotations

import gc
import tracemalloc
from collections.abc import Callable

import pytest
from memconform.core.json_reader import (
    FILE,
    MEMORY_FACTOR,
    MEMORY_FLOOR,
    REPLY,
    STRICT,
    JsonRejected,
    Policy,
    read_json,
)

pytestmark = pytest.mark.slow

SIZE = 4 << 20  # large enough that MEMORY_FACTOR, not the floor, decides
ORJSON_POOL = 16  # bytes per byte of text orjson reserves while it parses (measured about 13), with room


def _array(item: bytes, size: int = SIZE) -> bytes:
    return b"[" + b",".join([item] * (size // (len(item) + 1))) + b"]"


def _keys(size: int = SIZE) -> bytes:
    count = size // 10
    return b"{" + b",".join(b'"%x":1' % i for i in range(count)) + b"}"


ADVERSARIAL: dict[str, Callable[[], bytes]] = {
    "one-letter strings": lambda: _array(b'"a"'),
    "empty strings": lambda: _array(b'""'),
    "distinct short keys": _keys,
    "empty objects": lambda: _array(b"{}"),
    "empty arrays": lambda: _array(b"[]"),
    "small objects": lambda: _array(b'{"a":1}'),
    "small integers": lambda: _array(b"7"),
    "large integers": lambda: _array(b"123456789012"),
    "floats": lambda: _array(b"1.5"),
    "nulls": lambda: _array(b"null"),
    "eight-letter strings": lambda: _array(b'"abcdefgh"'),
    "strings widened past U+FFFF": lambda: _array('"aaaaaaaaaaaaaaaaaaaaaaaaaaaaa\U0001f600"'.encode()),
    "strings of two-byte characters": lambda: _array('"aaaaaaaaé"'.encode()),
}


def _memory_of_read(text: bytes, policy: Policy) -> tuple[int, int, str | None]:
    """(bytes still held with the value read, peak bytes while reading, the refusal's kind or None)."""
    gc.collect()
    tracemalloc.start()
    try:
        try:
            value = read_json(text, policy)
        except JsonRejected as exc:
            held, peak = tracemalloc.get_traced_memory()
            return held, peak, exc.kind
        held, peak = tracemalloc.get_traced_memory()
        del value
        return held, peak, None
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("policy", [FILE, REPLY, STRICT], ids=["file", "reply", "strict"])
@pytest.mark.parametrize("name", list(ADVERSARIAL))
def test_memory_stays_under_the_bound(name: str, policy: Policy) -> None:
    text = ADVERSARIAL[name]()
    held, peak, refused = _memory_of_read(text, policy)
    assert refused in (None, "memory", "containers")
    assert held <= MEMORY_FACTOR * len(text) + MEMORY_FLOOR, (name, refused, held / len(text))
    # while reading: the objects, orjson's pool, and the reader's own copies of the text (the counted
    # characters; on the stdlib path the decoded text, at most four bytes a character)
    assert peak <= (MEMORY_FACTOR + ORJSON_POOL + 4) * len(text) + MEMORY_FLOOR, (name, refused, peak / len(text))


@pytest.mark.parametrize("name", ["one-letter strings", "empty strings", "empty objects", "empty arrays",
                                  "small objects", "small integers"])
def test_the_costliest_shapes_are_refused_before_they_are_built(name: str) -> None:
    """The 14-25x amplifiers are refused, with a message naming the bound, and build nothing."""
    text = ADVERSARIAL[name]()
    with pytest.raises(JsonRejected) as caught:
        read_json(text, FILE)
    assert caught.value.kind in ("memory", "containers")
    _, peak, _ = _memory_of_read(text, FILE)
    assert peak <= 4 * len(text)  # the counting passes' copies at most: nothing the size of the objects


def test_the_refusal_says_why() -> None:
    with pytest.raises(JsonRejected) as caught:
        read_json(ADVERSARIAL["one-letter strings"](), FILE)
    assert caught.value.kind == "memory" and "MiB" in caught.value.message and "strings" in caught.value.message


def test_quotes_and_commas_inside_strings_are_not_counted() -> None:
    """A text of long strings full of escaped quotes and commas builds little: it is read."""
    text = _array(b'"' + b'\\",' * 2000 + b'"')
    assert len(read_json(text, FILE)) == SIZE // 6002


def test_small_texts_are_never_refused_for_memory() -> None:
    """Under MEMORY_FLOOR / 84 bytes (the costliest shape, an empty object per 3 bytes) nothing is refused."""
    for item in (b"{}", b'"a"', b"[]", b"1"):
        text = _array(item, MEMORY_FLOOR // 84)
        try:
            read_json(text, FILE)
        except JsonRejected as exc:
            assert exc.kind == "containers", exc.message  # the container bound (one per 16 bytes) is its own
