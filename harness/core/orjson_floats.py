"""Floats as json.dumps writes them, for text written by orjson: orjson writes strings, keys, integers and
most floats byte for byte as the stdlib does, but a float of magnitude below 1e-4 its own way (1e-7 for
Python's 1e-07), so those go in as fragments of Python's repr. Shared by the MemoryAI checksum's fast path
(suites/memoryai/format/bundle.py) and the indented writer of translate (harness/portability/jsontext.py)."""

from __future__ import annotations

from typing import Any

import orjson

ORJSON_FLOATS_FROM = 1e-4  # orjson and repr() agree on every finite float of magnitude 1e-4 and above


class NotFinite(ValueError):
    """A NaN or an infinity: json.dumps(allow_nan=False) refuses it, so the caller falls back or refuses."""


def python_float(value: float) -> Any:
    if value - value != 0:  # NaN or infinity
        raise NotFinite("not finite")
    return orjson.Fragment(repr(value).encode()) if 0 < abs(value) < ORJSON_FLOATS_FROM else value


def python_floats(node: Any) -> Any:
    """`node`, or a copy along the paths to floats orjson writes otherwise than json, those floats as
    fragments of Python's text (only containers holding such a float are copied)."""
    kind = type(node)
    if kind is float:
        return python_float(node)
    if kind is not dict and kind is not list:
        return node
    patched: Any = None
    for key, member in (node.items() if kind is dict else enumerate(node)):
        inner = type(member)
        if inner is float:
            new = python_float(member)
        elif inner is dict or inner is list:
            new = python_floats(member)
        else:
            continue
        if new is not member:
            if patched is None:
                patched = dict(node) if kind is dict else list(node)
            patched[key] = new
    return node if patched is None else patched
