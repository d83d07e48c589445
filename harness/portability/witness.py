"""What a reader of a format sees, apart from its translator: a record's native id, its fields by canonical name and
its translation block (`Seen`), and the `Witness` a suite declares with its format (suites/<spec>/portability/
witness.py), built from the helpers here. ledger_truth.py judges every ledger line by what the witnesses see."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

HATCH = "memconform_port"


@dataclass(frozen=True)
class Witness:
    """A reader of one format apart from its translator: its records as a reader of the format sees them, and
    where its envelope holds the document's export time and producer."""

    records: Callable[[Any], dict[str, Seen]]  # the records by the key a ledger names them with
    native: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # canonical name -> native path in a record
    envelope: Mapping[str, tuple[str, ...]] = field(default_factory=dict)  # canonical name -> native path
    # envelope members the document lines already speak for (records, export time, producer, subject, graph and
    # other objects) or that describe the file itself (version, counts, checksums, integrity)
    spoken_for: frozenset[str] = frozenset()
    manifest: bool = False  # a `manifest` object's members are envelope members too


@dataclass
class Seen:
    """One record as a reader of its format sees it: its native id, its fields, its translation block."""

    native_id: str
    fields: dict[str, Any] = field(default_factory=dict)
    block: dict[str, Any] = field(default_factory=dict)


def walk(obj: Any, path: tuple[str, ...]) -> Any:
    for step in path:
        if not isinstance(obj, dict):
            return None
        obj = obj.get(step)
    return obj


def split_hatch(hatch: Any) -> tuple[dict[str, Any], dict[str, Any] | None]:
    if not isinstance(hatch, dict):
        return {}, None
    found = hatch.get(HATCH)
    block: dict[str, Any] = found if isinstance(found, dict) else {}
    rest = {k: v for k, v in hatch.items() if k != HATCH}
    return block, (rest or None)


def seen(native: Mapping[str, tuple[str, ...]], native_id: str, rec: dict[str, Any], hatch: Any) -> Seen:
    """One record as its reader sees it: `native` names where the format keeps each canonical field."""
    s = Seen(native_id)
    for name, path in native.items():
        value = walk(rec, path)
        if value is not None:
            s.fields[name] = value
    s.block, rest = split_hatch(hatch)
    if rest:
        s.fields["extensions"] = rest
    return s


class Named(dict[str, Seen]):
    """Records by key; a key seen before gets its ordinal."""

    def __init__(self) -> None:
        super().__init__()
        self.seen: dict[str, int] = {}

    def add(self, key: str, s: Seen) -> None:
        self.seen[key] = self.seen.get(key, 0) + 1
        self[key if self.seen[key] == 1 else f"{key} (#{self.seen[key]} of that id)"] = s


def outside(s: Seen, rec: dict[str, Any], named: set[str]) -> None:
    """A record's own fields its spec does not name (x- fields, a field of a newer minor version):
    they belong to the record's extensions as much as its extension object does."""
    others = {k: v for k, v in rec.items() if k not in named}
    if others:
        s.fields["extensions"] = {**(s.fields.get("extensions") or {}), **{"(outside)": others}}
