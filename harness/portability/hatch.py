"""The block a translation leaves in a format's escape hatch: the canonical fields the format has no
place for, the record's ids in other formats, and which native values were invented (so that reading
them back does not mistake an invention for the record's own value)."""

from __future__ import annotations

from typing import Any

from .canonical import FIELDS, HATCH_KEY, Record, instant, jcopy, writable
from .formats import portable

TIMES = ("created_at", "updated_at", "accessed_at", "valid_from", "valid_until", "observed_at")

BLOCK_VERSION = 1


def block(carried: dict[str, Any], ids: dict[str, str], invented: list[str], extra: dict[str, Any] | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {"v": BLOCK_VERSION}
    if ids:
        out["ids"] = dict(sorted(ids.items()))
    if carried:
        out["fields"] = jcopy(carried)
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


def apply(record: Record, found: dict[str, Any] | None, fmt: str, table: Any = None) -> None:
    """Fold a block into a record read from `fmt`: carried fields restored, invented ones dropped.

    The block is part of a handed file, not a trusted record of the past: a carried value replaces a field
    the record shows only when writing that value in `fmt` could have produced what is shown (a type the
    format has no name for, a time the format cut, tags it lower-cased or left out). A value that
    contradicts the visible field is not restored (the record's `refused_restore` names it); every field
    restored is named in `record.restored` (the ledger lists them)."""
    if not found:
        return
    ids = found.get("ids")
    if isinstance(ids, dict):
        for name, value in ids.items():
            if isinstance(name, str) and isinstance(value, str) and name != fmt:
                record.ids.setdefault(name, value)
    for name in found.get("invented", []) if isinstance(found.get("invented"), list) else []:
        if isinstance(name, str) and name in FIELDS and name != "id":
            if name == "text" and record.values.get("text") not in ("", None):
                record.refused_restore.append("text")  # a writer invents only an empty text
                continue
            record.values.pop(name, None)
            record.spelled.pop(name, None)
    ext = record.values.get("extensions")
    if isinstance(found.get("ext_from"), str) and isinstance(ext, dict):
        ext["format"] = found["ext_from"]
    fields = found.get("fields")
    if isinstance(fields, dict):
        for name, value in fields.items():
            if not isinstance(name, str) or name not in FIELDS or name == "id" or value is None:
                continue
            shown = record.values.get(name)
            # a date-time is carried as it was written (its offset): held canonical, its spelling remembered
            canonical = instant(value) if name in TIMES and instant(value) else value
            if shown is not None and shown != canonical and not consistent(name, shown, value, fmt, table):
                record.refused_restore.append(name)
                continue
            if shown != canonical:
                record.restored.append(name)
            if shown is not None:
                record.shown[name] = shown
            record.values[name] = jcopy(canonical)
            if canonical is not value:
                record.spelled[name] = value
            else:
                record.spelled.pop(name, None)


def consistent(name: str, shown: Any, value: Any, fmt: str, table: Any) -> bool:
    """Could a writer of `fmt` have written `value` as `shown`? (Then the block may restore it.)"""
    if name in TIMES:
        exact, seen = instant(value), instant(shown)
        if exact is None or seen is None:
            return seen is None
        own = _own_answer(fmt, name, shown, value)
        if own is not None:
            return own
        return writable(exact)[:23] == writable(seen)[:23] or writable(exact)[:19] == seen[:19]
    own = _own_answer(fmt, name, shown, value)
    if own is not None:  # a writer's own rewrite its format declares (a time it cannot hold, a type it reserves)
        return own
    if name == "type" and table is not None and isinstance(value, str) and isinstance(shown, str):
        return not table.type_exact(value) or table.type_from_canonical(value) == table.type_from_canonical(shown)
    if name == "tags" and isinstance(shown, list) and isinstance(value, list):
        lowered = [x.lower() if isinstance(x, str) else x for x in value]
        return all(x in value for x in shown) or shown == list(dict.fromkeys(lowered))
    if name == "extensions" and isinstance(shown, dict) and isinstance(value, dict):
        inner, seen_inner = value.get("value"), shown.get("value")
        return isinstance(inner, dict) and isinstance(seen_inner, dict) and all(
            inner.get(k) == v for k, v in seen_inner.items())
    return False


def _own_answer(fmt: str, name: str, shown: Any, value: Any) -> bool | None:
    """The format's own answer (its Portable's `consistent`), or None when it leaves the field to the rule."""
    ask = portable(fmt).consistent if fmt else None
    return ask(name, shown, value) if ask is not None else None
