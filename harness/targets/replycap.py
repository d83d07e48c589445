"""An in-process reply capped like an HTTP one: the byte cap holds on its serialized form.

Serializing first and measuring after would build the whole text (a two-million-chunk export
is gigabytes of it). So the reply is first walked, counting the fewest bytes its JSON text can
take, and refused as soon as that passes the cap; only a reply under the cap is serialized.
"""

from __future__ import annotations

import json
from typing import Any

from ..core.results import TargetError


def serialized(op: str, value: Any, cap: int) -> bytes:
    """`value` as UTF-8 JSON bytes (bytes pass through), or TargetError when over `cap` or not JSON data."""
    if isinstance(value, (bytes, bytearray)):
        if len(value) > cap:
            raise TargetError(f"{op}: answered {len(value)} bytes, over the cap of {cap} bytes")
        return bytes(value)
    try:
        least = least_size(value, cap)
    except ValueError as exc:
        raise TargetError(f"{op}: answered a value that is not JSON data ({exc})") from None
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
    """A lower bound of the bytes of `value`'s JSON text, counted no further than just past `cap`.
    A container met again is counted again from memory (sharing is legal JSON data, and costs its
    size each time it is written); one that contains itself raises ValueError. Memory: the depth."""
    if not isinstance(value, (dict, list, tuple)):
        return _scalar_size(value)
    known: dict[int, int] = {}
    open_ids: set[int] = set()
    frames: list[list[Any]] = []  # [container, iterator over its values, its size so far]
    total = 0

    def enter(container: Any) -> int:
        overhead = 2 + len(container)
        if isinstance(container, dict):
            overhead += sum(len(k) + 3 if isinstance(k, str) else 1 for k in container)
        open_ids.add(id(container))
        frames.append([container, iter(container.values() if isinstance(container, dict) else container), overhead])
        return overhead

    total += enter(value)
    while frames and total <= cap:
        frame = frames[-1]
        child = next(frame[1], _END)
        if child is _END:
            frames.pop()
            known[id(frame[0])] = frame[2]
            open_ids.discard(id(frame[0]))
            if frames:
                frames[-1][2] += frame[2]
        elif isinstance(child, (dict, list, tuple)):
            if id(child) in open_ids:
                raise ValueError("the value contains itself")
            if id(child) in known:
                frame[2] += known[id(child)]
                total += known[id(child)]
            else:
                total += enter(child)
        else:
            size = _scalar_size(child)
            frame[2] += size
            total += size
    return total if total <= cap else cap + 1


_END = object()


def _scalar_size(value: Any) -> int:
    return len(value) + 2 if isinstance(value, str) else 1
