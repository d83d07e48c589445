"""A strict JSON reader: what a conforming implementation can use to refuse the hostile-JSON battery.

RFC 8259 with I-JSON's (RFC 7493) restrictions: UTF-8 without a byte order mark, no duplicate
names, no NaN or Infinity, no lone surrogates, numbers Python reads exactly or as finite floats,
and nesting at most MAX_DEPTH (checked by a linear scan before parsing, so never a RecursionError).
"""

from __future__ import annotations

import json
from typing import Any

MAX_DEPTH = 512
BOM = b"\xef\xbb\xbf"


class StrictJsonError(ValueError):
    pass


def _pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise StrictJsonError(f"duplicate name {key[:60]!r}")
        out[key] = value
    return out


def _constant(name: str) -> Any:
    raise StrictJsonError(f"{name} is not JSON")


def _has_surrogate(value: Any) -> bool:
    todo = [value]
    while todo:
        v = todo.pop()
        if isinstance(v, str):
            if any(0xD800 <= ord(ch) <= 0xDFFF for ch in v):
                return True
        elif isinstance(v, dict):
            todo.extend(v.keys())
            todo.extend(v.values())
        elif isinstance(v, list):
            todo.extend(v)
    return False


def depth_exceeds(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether brackets outside strings nest deeper than `limit` (a linear scan, no recursion)."""
    depth, in_string, escaped = 0, False, False
    for byte in raw:
        if in_string:
            if escaped:
                escaped = False
            elif byte == 0x5C:
                escaped = True
            elif byte == 0x22:
                in_string = False
        elif byte == 0x22:
            in_string = True
        elif byte in (0x5B, 0x7B):
            depth += 1
            if depth > limit:
                return True
        elif byte in (0x5D, 0x7D):
            depth -= 1
    return False


def strict_loads(raw: bytes | bytearray | str) -> Any:
    """Strict RFC 8259 / I-JSON: UTF-8 without BOM, no duplicate names, no NaN/Infinity, no lone
    surrogates, nesting at most MAX_DEPTH, numbers Python reads exactly or as finite floats."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    raw = bytes(raw)
    if raw.startswith(BOM):
        raise StrictJsonError("a byte order mark precedes the JSON text")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise StrictJsonError(f"not UTF-8 at byte {exc.start}") from None
    if raw.count(b"[") + raw.count(b"{") > MAX_DEPTH and depth_exceeds(raw):
        raise StrictJsonError(f"nested deeper than {MAX_DEPTH} levels")

    def finite(token: str) -> float:
        value = float(token)
        if value in (float("inf"), float("-inf")):
            raise StrictJsonError(f"number {token[:40]} is out of range")
        return value

    try:
        value = json.loads(text, object_pairs_hook=_pairs, parse_constant=_constant, parse_float=finite)
    except RecursionError:
        raise StrictJsonError(f"nested deeper than {MAX_DEPTH} levels") from None
    except StrictJsonError:
        raise
    except ValueError as exc:
        raise StrictJsonError(str(exc)[:200]) from None
    if _has_surrogate(value):
        raise StrictJsonError("a string holds a lone surrogate")
    return value


def parse_or_reject(body: Any) -> Any:
    """For an in-process implementation handed raw bytes: parsed by `strict_loads`, or refused."""
    if not isinstance(body, (bytes, bytearray)):
        return body
    from .targets.base import Rejected

    try:
        return strict_loads(body)
    except StrictJsonError as exc:
        raise Rejected({"error": f"not acceptable JSON: {exc}"}, f"not acceptable JSON: {exc}") from None
