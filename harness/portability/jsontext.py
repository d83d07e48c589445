"""A translation's JSON text, byte for byte as `json.dumps(value, ensure_ascii=False, indent=2,
allow_nan=False)` writes it, in pieces and at orjson's speed: the stdlib writes indented JSON in pure
Python (half the time of a 100k-record translation), orjson in C.

The outer containers are written here a member at a time; each record (any container small enough) is one
orjson call, its lines shifted to its depth. A raw line break never occurs inside a JSON string (it is
written as \\n), so shifting every line break of a piece is exact. Where orjson writes a value otherwise
than json does (a float of magnitude below 1e-4: 1e-7 for Python's 1e-07) Python's text is put in place as
a fragment; where orjson refuses (an integer past 64 bits, a key that is not a string, a lone surrogate,
NaN) the piece is written by json itself, so its errors are json's errors.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import orjson
from memconform.core.orjson_floats import python_floats

from .streamed import Streamed

INDENT = "  "
# containers with more members than this are written a member at a time at any depth (a record array
# of 100k records two levels down, as some formats nest them); smaller ones below the top two levels are one piece
STREAM_ABOVE = 64


def pieces(value: Any, level: int = 0) -> Iterator[str]:
    """The indented JSON text of `value` (without a final line break), in pieces a file can take one by one. A
    Streamed list (streamed.py) is written as the list it would be, each item as it is made."""
    kind = type(value)
    if kind is Streamed:
        yield from _streamed(value, level)
        return
    if (kind is dict or kind is list) and value and (level < 2 or len(value) > STREAM_ABOVE) and (
            kind is list or all(type(k) is str for k in value)):
        inner = "\n" + INDENT * (level + 1)
        yield "{" if kind is dict else "["
        first = True
        for key, member in (value.items() if kind is dict else ((None, m) for m in value)):
            yield inner if first else "," + inner
            first = False
            if key is not None:
                yield json.dumps(key, ensure_ascii=False) + ": "
            yield from pieces(member, level + 1)
        yield "\n" + INDENT * level + ("}" if kind is dict else "]")
        return
    yield _leaf(value, level)


def _streamed(value: Streamed, level: int) -> Iterator[str]:
    inner = "\n" + INDENT * (level + 1)
    first = True
    for member in value:
        yield ("[" + inner) if first else ("," + inner)
        first = False
        yield from pieces(member, level + 1)
    yield "[]" if first else "\n" + INDENT * level + "]"


def _leaf(value: Any, level: int) -> str:
    try:
        text = orjson.dumps(python_floats(value), option=orjson.OPT_INDENT_2).decode("utf-8")
    except (TypeError, ValueError, orjson.JSONEncodeError):
        text = json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
    return text.replace("\n", "\n" + INDENT * level) if level and "\n" in text else text
