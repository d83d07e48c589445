"""The value classes of a domain table as concrete values: one generator per kind of class, named by
the table's `gen` with its `args` (harness/kit/domain.py loads the tables and uses these)."""

from __future__ import annotations

import json
import unicodedata
from collections.abc import Callable
from typing import Any


class _Absent:
    """The value of the "absent" class: the field or parameter is left out."""

    def __repr__(self) -> str:
        return "<absent>"


ABSENT = _Absent()

# ---- generators: a class's concrete values -----------------------------------------------------

GENERATORS: dict[str, Callable[..., list[Any]]] = {}


def generator(name: str) -> Callable[[Callable[..., list[Any]]], Callable[..., list[Any]]]:
    def register(fn: Callable[..., list[Any]]) -> Callable[..., list[Any]]:
        GENERATORS[name] = fn
        return fn
    return register


def generate(name: str, **args: Any) -> list[Any]:
    if name not in GENERATORS:
        raise ValueError(f"unknown generator {name!r}")
    return GENERATORS[name](**args)


# characters of each string class; each is one code point, so a length counts code points
ALPHABETS = {
    "ascii": "abcdefghij",
    "bmp": "äöüßéñçøłž",          # Latin-1 and Latin Extended: two UTF-8 bytes each
    "cjk": "記憶中文字日本語한국",    # three UTF-8 bytes each
    "astral": "😀🎉🚀𝄞𝔸🀄🌍🧠📎🔥",  # outside the BMP: four UTF-8 bytes, two UTF-16 units each
}
STRING_SAMPLES = {
    "ascii": ["plain ascii text"],
    "bmp": ["Größe café ✓ 記憶"],
    "astral": ["rocket 🚀 clef 𝄞 brain 🧠"],
    "combining": ["e\u0301 a\u0308 n\u0303"],  # base letters with combining marks
    "nfc_nfd": [unicodedata.normalize("NFC", "Café résumé"), unicodedata.normalize("NFD", "Café résumé")],
    "case_pair": ["Preferences", "preferences"],
    "prefix_pair": ["ab", "abc"],
    "separators": ["a,b c\tsemi;colon:slash/dot.pipe|"],
    "control": ["bell\u0007 nul-free \u001f unit \u007f del"],
    "newline": ["line one\nline two\r\nthree"],
    "whitespace_only": ["   "],
    "bidi": ["\u202eevil\u202c rtl"],
    "zero_width": ["zero\u200bwidth\ufeffbom"],
    # raw in a JSON string (RFC 8259 allows it) but a line break to str.splitlines and to JavaScript's old parsers
    "unicode_line_breaks": ["line\u2028separator\u2029paragraph\x85next\x0bvt\x0cff\x1cfs"],
}


@generator("absent")
def _absent() -> list[Any]:
    return [ABSENT]


@generator("null")
def _null() -> list[Any]:
    return [None]


@generator("literal")
def _literal(value: Any) -> list[Any]:
    return [value]


@generator("literals")
def _literals(values: list[Any]) -> list[Any]:
    if not values:
        raise ValueError("literals needs at least one value")
    return list(values)


@generator("string")
def _string(kind: str) -> list[Any]:
    if kind not in STRING_SAMPLES:
        raise ValueError(f"unknown string kind {kind!r}")
    return list(STRING_SAMPLES[kind])


@generator("string_len")
def _string_len(length: int, alphabet: str = "ascii") -> list[Any]:
    """A string of exactly `length` code points from one alphabet."""
    if alphabet not in ALPHABETS or length < 0:
        raise ValueError(f"bad string_len arguments {length!r}, {alphabet!r}")
    letters = ALPHABETS[alphabet]
    return ["".join(letters[i % len(letters)] for i in range(length))]


@generator("number")
def _number(text: str) -> list[Any]:
    """A JSON number as its text says: -0.0 stays a negative-zero float, 2^53+1 an exact int."""
    value = json.loads(text)
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise ValueError(f"{text!r} is not a JSON number")
    return [value]


@generator("array_of")
def _array_of(count: int, item_len: int = 4, alphabet: str = "ascii", distinct: bool = True) -> list[Any]:
    """An array of `count` strings of `item_len` code points (distinct ones when asked)."""
    if count < 0 or item_len < 1:
        raise ValueError("array_of needs count >= 0 and item_len >= 1")
    letters = ALPHABETS[alphabet]
    items = []
    for i in range(count):
        stem = f"{i}" if distinct else "0"
        fill = "".join(letters[j % len(letters)] for j in range(max(item_len - len(stem), 0)))
        items.append((fill + stem)[-item_len:] if item_len >= len(stem) else stem[:item_len])
    return [items]


@generator("numbers")
def _numbers(texts: list[str]) -> list[Any]:
    return [[json.loads(t) for t in texts]]


@generator("object_keys")
def _object_keys(count: int) -> list[Any]:
    if count < 0:
        raise ValueError("object_keys needs count >= 0")
    return [{f"k{i}": i for i in range(count)}]


@generator("object_value")
def _object_value(kind: str) -> list[Any]:
    """One-key objects whose value is of a JSON kind (metadata values must be JSON-serialisable)."""
    kinds: dict[str, Any] = {"nested": {"a": {"b": [1, {"c": None}]}}, "number_edges": {"z": -0.0, "big": 1e21, "small": 1e-7,
                             "exact": 2**53 + 1}, "unicode": {"ключ": "𝄞"}, "empty_key": {"": "x"}, "null_value": {"n": None}}
    if kind not in kinds:
        raise ValueError(f"unknown object kind {kind!r}")
    return [kinds[kind]]


@generator("timestamp")
def _timestamp(kind: str) -> list[Any]:
    kinds = {"utc_z": "2026-06-29T12:00:00Z", "utc_offset": "2026-06-29T12:00:00+00:00", "fraction": "2026-06-29T12:00:00.123456Z",
             "leap_day": "2028-02-29T23:59:59Z", "epoch": "1970-01-01T00:00:00Z", "far_future": "9999-12-31T23:59:59Z",
             "non_utc": "2026-06-29T14:00:00+02:00", "no_zone": "2026-06-29T12:00:00", "date_only": "2026-06-29",
             "not_a_date": "yesterday", "impossible": "2026-02-30T12:00:00Z", "lowercase": "2026-06-29t12:00:00z",
             "future_z": "2099-06-29T12:00:00Z", "future_offset": "2099-06-29T12:00:00+00:00",
             "future_fraction": "2099-06-29T12:00:00.123456Z",
             # the ends of the offsets in use, and odd minutes; each instant beside 12:00Z, on the other side of it
             # than its text (so an ordering of the strings and one of the instants disagree with utc_z)
             "offset_plus_14": "2026-06-30T01:59:00+14:00", "offset_minus_12": "2026-06-29T00:01:00-12:00",
             "offset_plus_12_45": "2026-06-30T00:44:00+12:45", "offset_minus_09_30": "2026-06-29T02:31:00-09:30"}
    if kind not in kinds:
        raise ValueError(f"unknown timestamp kind {kind!r}")
    return [kinds[kind]]


@generator("millis")
def _millis(kind: str) -> list[Any]:
    kinds: dict[str, Any] = {"now": 1701234567890, "zero": 0, "negative": -1, "seconds": 1701234567, "float": 1701234567890.5,
                             "max_safe": 2**53 - 1, "above_safe": 2**53 + 1, "string": "1701234567890", "exponent": 1.70123456789e12}
    if kind not in kinds:
        raise ValueError(f"unknown millis kind {kind!r}")
    return [kinds[kind]]


@generator("uuid")
def _uuid(kind: str) -> list[Any]:
    kinds = {"v4": "550e8400-e29b-41d4-a716-446655440000", "v4_upper": "550E8400-E29B-41D4-A716-446655440000",
             "v1": "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "short": "550e8400-e29b-41d4-a716-44665544000",
             "long": "550e8400-e29b-41d4-a716-4466554400001", "no_dashes": "550e8400e29b41d4a716446655440000",
             "braced": "{550e8400-e29b-41d4-a716-446655440000}", "not_hex": "550e8400-e29b-41d4-a716-44665544zzzz"}
    if kind not in kinds:
        raise ValueError(f"unknown uuid kind {kind!r}")
    return [kinds[kind]]


@generator("prefixed_id")
def _prefixed_id(prefix: str, length: int, alphabet: str = "alnum") -> list[Any]:
    """prefix + `length` characters (alnum, or with a character outside [A-Za-z0-9])."""
    letters = "a1B2c3D4e5F6g7H8" * 4
    body = letters[:length]
    if alphabet == "symbol" and length:
        body = body[:-1] + "-"
    return [prefix + body]


@generator("query")
def _query(values: list[str]) -> list[Any]:
    """A query parameter as sent: one value, or a list for a repeated parameter."""
    if not values:
        raise ValueError("query needs at least one value")
    return [values if len(values) > 1 else values[0]]


def number_edges() -> list[tuple[str, str]]:
    """The number edges of canonical forms, as (class id, JSON text)."""
    return [("negative_zero", "-0.0"), ("integral_float", "5.0"), ("exp_21", "1e21"), ("small_1e_6", "1e-6"),
            ("small_1e_7", "1e-7"), ("huge_exponent", "1e308"), ("tiny_exponent", "5e-324"), ("above_2_53", "9007199254740993")]


def fill(value: Any, names: dict[str, str]) -> Any:
    """A class value with its placeholders ({tag}, {word}, ...) replaced by what this run made: the
    table names the role of a value (a tag of the data set, a prefix of it), the check supplies it."""
    if isinstance(value, str):
        return value.format_map(names) if "{" in value else value
    if isinstance(value, list):
        return [fill(v, names) for v in value]
    if isinstance(value, dict):
        return {k: fill(v, names) for k, v in value.items()}
    return value
