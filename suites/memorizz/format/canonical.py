"""Canonical JSON of an archive (what the checksum covers), sealing, and an empty archive to fill."""

from __future__ import annotations

import datetime as dt
import functools
import hashlib
import json
import math
import os
import re
from collections.abc import Callable
from typing import Any

import orjson
from memconform.suites.memorizz.format.canonical_fast import TextFacts, plain_canonical_facts
from memconform.suites.memorizz.format.constants import FORMAT, STORES, TAXONOMY, VERSION


@functools.lru_cache(maxsize=4096)  # the same few special floats (1.0, 0.0, 1e-7) recur across records
def number_text(value: float) -> str:
    """A float as the spec writes it: shortest round-trip digits, decimal from 1e-6 to below 1e21."""
    if not math.isfinite(value):
        raise ValueError(f"{value!r} is not a finite number")
    if value == 0:
        return "0"  # also negative zero
    shortest = repr(value)
    if 1e-6 <= abs(value) < 1e21:
        # only a float the number rules write: validate of an archive of plain floats starts without decimal
        from decimal import Decimal

        text = format(Decimal(shortest), "f")
        return text.rstrip("0").rstrip(".") if "." in text else text
    mantissa, _, exponent = shortest.partition("e")
    if mantissa.endswith(".0"):
        mantissa = mantissa[:-2]
    exp = int(exponent)
    return f"{mantissa}e{'+' if exp >= 0 else '-'}{abs(exp)}"


def float_is_plain(value: float) -> bool:
    """True when Python's repr of the float is already the spec's form (no special number rule applies)."""
    return math.isfinite(value) and not value.is_integer() and 1e-4 <= abs(value) < 1e16


def _sort_key(order: str) -> Callable[[str], Any] | None:
    return (lambda k: k.encode("utf-16-be")) if order == "utf16" else None


def canonical_text_exact(value: Any, key_order: str = "codepoint") -> str:
    """The spec's canonical JSON, written node by node (the slow path, exact for every number)."""
    key = _sort_key(key_order)
    dumps = json.dumps
    out: list[str] = []
    push = out.append

    def write(node: Any) -> None:
        if isinstance(node, str):
            push(dumps(node, ensure_ascii=False))
        elif isinstance(node, dict):
            push("{")
            for i, k in enumerate(sorted(node, key=key)):
                if not isinstance(k, str):
                    raise ValueError(f"object key {k!r} is not a string")
                if i:
                    push(",")
                push(dumps(k, ensure_ascii=False))
                push(":")
                write(node[k])
            push("}")
        elif isinstance(node, list | tuple):
            push("[")
            for i, item in enumerate(node):
                if i:
                    push(",")
                write(item)
            push("]")
        elif node is None or isinstance(node, bool | int):
            push(dumps(node))
        elif isinstance(node, float):
            push(number_text(node))
        else:
            raise ValueError(f"{type(node).__name__} is not a JSON value")

    write(value)
    return "".join(out)


def needs_exact_writer(value: Any) -> bool:
    """Does any float in the value need a special number rule (or is it not finite)?"""
    stack = [value]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
        elif isinstance(node, float) and not float_is_plain(node):
            return True
    return False


def _dumps(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False)


_SCALARS = frozenset({str, int, bool, type(None)})


def canonical_text_marked(value: Any) -> str:
    """The C encoder, with each float needing a special rule swapped for a marker string, then written in.

    The swap is made in place and undone before returning, so nothing is copied. A marker is a random
    nonce and an index; if the data itself happens to hold such a string, the count of markers found
    differs and the exact writer is used instead.
    """
    if type(value) is float:
        return number_text(value)
    nonce = "\u2063mz" + os.urandom(8).hex() + "-"  # an invisible separator: never escaped, never in ids
    swapped = _swap_special_floats(value, nonce)
    try:
        text = _dumps(value)
    finally:
        for node, k, v in swapped:
            node[k] = v
    parts = re.split('"' + nonce + r'(\d+)"', text)
    if len(parts) != 2 * len(swapped) + 1:
        return canonical_text_exact(value)
    parts[1::2] = [number_text(swapped[int(i)][2]) for i in parts[1::2]]
    return "".join(parts)


def marked_bytes(value: dict[str, Any]) -> bytes | None:
    """The canonical bytes with orjson writing the text (a finite value only: orjson writes no NaN), each
    float needing a special number rule swapped for an orjson fragment of its spec text (no marker to find
    in the text afterwards: measured 25 -> 16 ms for 10,000 records); None where orjson cannot write it."""
    swapped = _swap_special_floats(value, None)
    try:
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    except (TypeError, orjson.JSONEncodeError):
        return None
    finally:
        for node, k, v in swapped:
            node[k] = v


def _swap_special_floats(value: Any, nonce: str | None) -> list[tuple[Any, Any, float]]:
    """Each float needing a special number rule replaced in place by a marker string (`nonce` and its
    index) or, with no nonce, by an orjson fragment of its spec text; (container, key, float) of each,
    to put back."""
    swapped: list[tuple[Any, Any, float]] = []
    plain, scalars = float_is_plain, _SCALARS
    stack = [value]
    try:
        while stack:
            node = stack.pop()
            for k, v in (node.items() if type(node) is dict else enumerate(node)):
                tv = type(v)
                if tv in scalars:
                    continue
                if tv is dict or tv is list:
                    stack.append(v)
                elif tv is float and not plain(v):
                    if nonce is None:
                        node[k] = orjson.Fragment(number_text(v).encode("ascii"))
                    else:
                        node[k] = f"{nonce}{len(swapped)}"
                    swapped.append((node, k, v))
    except BaseException:
        for node, k, v in swapped:
            node[k] = v
        raise
    return swapped


def canonical_text(value: Any, key_order: str = "codepoint", exact: bool | None = None) -> str:
    """Canonical JSON text. `exact`: whether a special float is known to be present (None: look)."""
    if key_order != "codepoint":
        return canonical_text_exact(value, key_order)
    if not (needs_exact_writer(value) if exact is None else exact):
        # every float prints the same under repr, so the C encoder gives the very same text
        return _dumps(value)
    return canonical_text_marked(value)


# UTF-8 lead bytes of U+E000 and above: only there do code point and UTF-16 code unit orders differ
# (a character from U+E000 to U+FFFF sorts before a supplementary one by UTF-16 units, after it by code points)
_ORDER_SENSITIVE_LEADS = tuple(bytes([lead]) for lead in range(0xEE, 0xF5))


def key_orders_agree(canonical: bytes) -> bool:
    """Do both key orders give the same canonical text? True when the text (either order's: they hold the
    same characters) has no character at or above U+E000, so no two keys can sort differently."""
    return canonical.isascii() or not any(lead in canonical for lead in _ORDER_SENSITIVE_LEADS)  # memchr speed


def without_integrity(archive: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in archive.items() if k != "integrity"}


def canonical_bytes(archive: dict[str, Any], key_order: str = "codepoint", exact: bool | None = None,
                    finite: bool = False) -> bytes:
    """What the checksum covers: canonical UTF-8 JSON of every field except integrity. `finite`: the
    archive is known to hold no NaN or infinity (read by orjson), so orjson's text may be used."""
    return canonical_bytes_and_facts(archive, key_order, exact, finite)[0]


def canonical_bytes_and_facts(archive: dict[str, Any], key_order: str = "codepoint", exact: bool | None = None,
                              finite: bool = False) -> tuple[bytes, TextFacts | None]:
    """canonical_bytes, and what the look at orjson's text found when that text is the one used."""
    body = without_integrity(archive)
    if key_order == "codepoint" and (exact is False or finite):
        fast = plain_canonical_facts(body)
        if fast is not None:
            return fast
        marked = marked_bytes(body)  # floats needing the number rules: orjson writes the rest
        if marked is not None:
            return marked, None
        if exact is None:
            exact = True  # the marked writer walks the archive once; no walk first to decide
    return canonical_text(body, key_order, exact).encode("utf-8"), None


def digest(archive: dict[str, Any], key_order: str = "codepoint", exact: bool | None = None) -> str:
    return hashlib.sha256(canonical_bytes(archive, key_order, exact)).hexdigest()


def seal(archive: dict[str, Any], key_order: str = "codepoint", exact: bool | None = None) -> dict[str, Any]:
    """Fill counts, record_count and integrity, as a producer must (the archive is changed in place)."""
    stores = archive.get("stores", {})
    manifest = archive.setdefault("manifest", {})
    manifest["counts"] = {k: len(v) for k, v in stores.items()}
    manifest["record_count"] = sum(len(v) for v in stores.values())
    return reseal(archive, key_order, exact)


def reseal(archive: dict[str, Any], key_order: str = "codepoint", exact: bool | None = None) -> dict[str, Any]:
    """Recompute only the integrity digest (counts stay as they are: a wrong count stays wrong).
    `exact` False: the caller knows no float needs the number rules (no walk to find out)."""
    archive.pop("integrity", None)
    archive["integrity"] = {"algorithm": "sha256", "digest": digest(archive, key_order, exact)}
    return archive


def empty_archive(**manifest: Any) -> dict[str, Any]:
    man = {"created_at": utc_now(), "memorizz_version": "memconform", "source_provider": "memconform",
           "scope": {"agent_id": None, "memory_id": None, "agent_ids": [], "user_id": None, "user_scoped": False,
                     "application_id": None},
           "counts": {}, "record_count": 0,
           "includes": {"delegates": True, "history": True, "context": True, "embeddings": False},
           "warnings": []}
    man.update(manifest)
    return {"format": FORMAT, "version": VERSION, "taxonomy": dict(TAXONOMY), "manifest": man,
            "stores": {k: [] for k in STORES}}


def utc_now() -> str:
    return dt.datetime.now(dt.UTC).isoformat()
