"""An in-process reply capped like an HTTP one: the byte cap holds on its serialized form.

Serializing first and measuring after would build the whole text (a two-million-chunk export
is gigabytes of it). So the reply is first walked, counting the fewest bytes its JSON text can
take, and refused as soon as that passes the cap; only a reply under the cap is serialized.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.model import TargetError

MAX_SHARED_VISITS = 1000  # one container met this often is a cycle, or sharing no target needs


def serialized(op: str, value: Any, cap: int) -> bytes:
    """`value` as UTF-8 JSON bytes (bytes pass through), or TargetError when over `cap` or not JSON data."""
    if isinstance(value, (bytes, bytearray)):
        if len(value) > cap:
            raise TargetError(f"{op}: answered {len(value)} bytes, over the cap of {cap} bytes")
        return bytes(value)
    least = least_size(value, cap)
    if least > cap:
        raise TargetError(f"{op}: the reply exceeds the cap of {cap} bytes once serialized "
                          "(refused before serializing it)")
    try:
        text = json.dumps(value, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as exc:
        raise TargetError(f"{op}: answered a value that is not JSON data ({type(exc).__name__}: {exc})"[:300]) from None
    try:
        raw = text.encode("utf-8")
    except UnicodeEncodeError:  # lone surrogates: escaped, so the bytes stay valid UTF-8
        raw = json.dumps(value).encode("ascii")
    if len(raw) > cap:
        raise TargetError(f"{op}: the reply is {len(raw)} bytes once serialized, over the cap of {cap} bytes")
    return raw


def least_size(value: Any, cap: int) -> int:
    """A lower bound of the bytes of `value`'s JSON text, counted no further than just past `cap`."""
    total = 0
    stack = [value]
    visits: dict[int, int] = {}
    while stack:
        item = stack.pop()
        if isinstance(item, (dict, list, tuple)):
            visits[id(item)] = visits.get(id(item), 0) + 1
            if visits[id(item)] > MAX_SHARED_VISITS:
                return total  # a cycle (or a value shared this often): json.dumps says which
        if isinstance(item, str):
            total += len(item) + 3  # quotes and a separator
        elif isinstance(item, dict):
            total += 2 + len(item)
            for key, val in item.items():
                stack.append(val)
                total += len(key) + 3 if isinstance(key, str) else 1
        elif isinstance(item, (list, tuple)):
            total += 2 + len(item)
            stack.extend(item)
        else:
            total += 1
        if total > cap or len(stack) > cap:
            return cap + 1
    return total
