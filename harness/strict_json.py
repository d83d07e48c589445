"""A strict JSON reader: what a conforming implementation can use to refuse the hostile-JSON battery.

RFC 8259 with I-JSON's (RFC 7493) restrictions: UTF-8 without a byte order mark, no duplicate
names, no NaN or Infinity, no lone surrogates, numbers Python reads exactly or as finite floats,
and nesting at most MAX_DEPTH: json_reader.read_json under its STRICT policy.
"""

from __future__ import annotations

from typing import Any

from .json_reader import BOM as BOM
from .json_reader import STRICT, JsonRejected, depth_passed_at, read_json

MAX_DEPTH = STRICT.max_depth


class StrictJsonError(ValueError):
    pass


def depth_exceeds(raw: bytes, limit: int = MAX_DEPTH) -> bool:
    """Whether brackets outside strings nest deeper than `limit` (one linear pass, no recursion)."""
    return depth_passed_at(bytes(raw), limit) is not None


def strict_loads(raw: bytes | bytearray | str) -> Any:
    """Strict RFC 8259 / I-JSON: UTF-8 without BOM, no duplicate names, no NaN/Infinity, no lone
    surrogates, nesting at most MAX_DEPTH, numbers Python reads exactly or as finite floats
    (json_reader.STRICT)."""
    if isinstance(raw, str):
        raw = raw.encode("utf-8", "surrogatepass")
    try:
        return read_json(raw, STRICT)
    except JsonRejected as exc:
        if exc.kind == "depth":
            raise StrictJsonError(f"nested deeper than {MAX_DEPTH} levels") from None
        if exc.kind == "bom":
            raise StrictJsonError("a byte order mark precedes the JSON text") from None
        raise StrictJsonError(exc.message[:200]) from None


def parse_or_reject(body: Any) -> Any:
    """For an in-process implementation handed raw bytes: parsed by `strict_loads`, or refused."""
    if not isinstance(body, (bytes, bytearray)):
        return body
    from .targets.base import Rejected

    try:
        return strict_loads(body)
    except StrictJsonError as exc:
        raise Rejected({"error": f"not acceptable JSON: {exc}"}, f"not acceptable JSON: {exc}") from None
