"""The block a translation leaves in a format's escape hatch: the canonical fields the format has no
place for, the record's ids in other formats, and which native values were invented (so that reading
them back does not mistake an invention for the record's own value)."""

from __future__ import annotations

import copy
from typing import Any

from .canonical import HATCH_KEY, Record

BLOCK_VERSION = 1


def block(carried: dict[str, Any], ids: dict[str, str], invented: list[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"v": BLOCK_VERSION}
    if ids:
        out["ids"] = dict(sorted(ids.items()))
    if carried:
        out["fields"] = copy.deepcopy(carried)
    if invented:
        out["invented"] = sorted(set(invented))
    out.update(extra or {})
    return out


def split(hatch: Any) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """(the translation's block, the rest of the hatch) from an escape-hatch object; the rest is None when empty."""
    if not isinstance(hatch, dict):
        return None, None
    found = hatch.get(HATCH_KEY)
    rest = {k: v for k, v in hatch.items() if k != HATCH_KEY}
    return (found if isinstance(found, dict) else None), (rest or None)


def apply(record: Record, found: dict[str, Any] | None, fmt: str) -> None:
    """Fold a block into a record read from `fmt`: carried fields restored, invented ones dropped."""
    if not found:
        return
    ids = found.get("ids")
    if isinstance(ids, dict):
        for name, value in ids.items():
            if isinstance(name, str) and isinstance(value, str) and name != fmt:
                record.ids.setdefault(name, value)
    for name in found.get("invented", []) if isinstance(found.get("invented"), list) else []:
        if isinstance(name, str):
            record.values.pop(name, None)
    ext = record.values.get("extensions")
    if isinstance(found.get("ext_from"), str) and isinstance(ext, dict):
        ext["format"] = found["ext_from"]
    fields = found.get("fields")
    if isinstance(fields, dict):
        for name, value in fields.items():
            record.values[name] = copy.deepcopy(value)
