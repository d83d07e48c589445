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

INDENT = "  "
# containers with more members than this are written a member at a time at any depth (a record array
# of 100k records two levels down, as some formats nest them); smaller ones below the top two levels are one piece
STREAM_ABOVE = 64
_ORJSON_FLOATS_FROM = 1e-4  # orjson and repr() agree on every finite float of magnitude 1e-4 and above


def pieces(value: Any, level: int = 0) -> Iterator[str]:
    """The indented JSON text of `value` (without a final line break), in pieces a file can take one by one."""
    kind = type(value)
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


def _leaf(value: Any, level: int) -> str:
    try:
        text = orjson.dumps(_python_floats(value), option=orjson.OPT_INDENT_2).decode("utf-8")
    except (TypeError, ValueError, orjson.JSONEncodeError):
        text = json.dumps(value, ensure_ascii=False, indent=2, allow_nan=False)
    return text.replace("\n", "\n" + INDENT * level) if level and "\n" in text else text


def _python_float(value: float) -> Any:
    if value - value != 0:  # NaN or infinity: json refuses it (allow_nan=False), with its own message
        raise ValueError("not finite")
    return orjson.Fragment(repr(value).encode()) if 0 < abs(value) < _ORJSON_FLOATS_FROM else value


def _python_floats(node: Any) -> Any:
    """`node`, or a copy along the paths to floats orjson writes otherwise than json, those floats as
    fragments of Python's text (only containers holding such a float are copied)."""
    kind = type(node)
    if kind is float:
        return _python_float(node)
    if kind is not dict and kind is not list:
        return node
    patched: Any = None
    for key, member in (node.items() if kind is dict else enumerate(node)):
        inner = type(member)
        if inner is float:
            new = _python_float(member)
        elif inner is dict or inner is list:
            new = _python_floats(member)
        else:
            continue
        if new is not member:
            if patched is None:
                patched = dict(node) if kind is dict else list(node)
            patched[key] = new
    return node if patched is None else patched
