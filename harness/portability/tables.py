"""The mapping tables (each suite's portability/mapping.json, named by its Portable) read and checked against their schema, with the questions
the translators ask of them: what becomes of a canonical field in a format, and how a type crosses."""

from __future__ import annotations

import functools
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from memconform.core.results import HarnessError

from .canonical import FIELDS
from .formats import portable

SCHEMA = Path(__file__).parent.parent / "schemas" / "mapping.schema.json"


@dataclass(frozen=True)
class Row:
    canonical: str
    native: str | None
    into: str  # kept | carried | lost
    limit: dict[str, Any] | None
    note: str
    sentences: tuple[str, ...]


@dataclass(frozen=True)
class Table:
    format: str
    raw: dict[str, Any]

    @functools.cached_property
    def rows(self) -> dict[str, Row]:
        return {r["canonical"]: _row(r) for r in self.raw["fields"]}

    @functools.cached_property
    def document_rows(self) -> dict[str, Row]:
        return {r["canonical"]: _row(r) for r in self.raw["document"]}

    def into(self, name: str) -> str:
        return self.rows[name].into

    def limit(self, name: str, key: str) -> Any:
        lim = self.rows[name].limit or {}
        return lim.get(key)

    def invented_rule(self, native: str) -> str:
        for row in self.raw["invented"]:
            if row["native"] == native:
                return str(row["rule"])
        raise HarnessError(f"mapping table {self.format}: no invented row for {native!r}")

    # ---- types --------------------------------------------------------------------------------

    def type_to_canonical(self, native: str) -> str:
        types = self.raw["types"]
        if types.get("free"):
            return native
        prefix = types.get("vendor_prefix")
        if native in types["to_canonical"]:
            return str(types["to_canonical"][native])
        if prefix and native.startswith(prefix):
            return native[len(prefix):]
        return native

    def type_from_canonical(self, canonical: str) -> str:
        types = self.raw["types"]
        if types.get("free"):
            return canonical
        if canonical in types["from_canonical"]:
            return str(types["from_canonical"][canonical])
        prefix = types.get("vendor_prefix")
        if prefix:
            return prefix + canonical
        return str(types["default"])

    def type_exact(self, canonical: str) -> bool:
        """Does the canonical type come back as itself from this format's native name for it?"""
        return self.type_to_canonical(self.type_from_canonical(canonical)) == canonical


def _row(r: dict[str, Any]) -> Row:
    return Row(r["canonical"], r.get("native"), r["into"], r.get("limit"), r.get("note", ""), tuple(r["sentences"]))


def schema_errors(doc: Any) -> list[str]:
    import jsonschema

    validator = jsonschema.Draft202012Validator(json.loads(SCHEMA.read_text(encoding="utf-8")))
    return [f"{'/'.join(map(str, e.absolute_path)) or '$'}: {e.message}" for e in validator.iter_errors(doc)]


def table_problems(fmt: str, doc: Any) -> list[str]:
    """Schema errors, then what the schema cannot say: one row per canonical field, no unknown field."""
    problems = schema_errors(doc)
    if problems:
        return problems
    names = [r["canonical"] for r in doc["fields"]]
    missing = [f for f in FIELDS if f not in names]
    unknown = [n for n in names if n not in FIELDS]
    dupes = sorted({n for n in names if names.count(n) > 1})
    if doc["format"] != fmt:
        problems.append(f"format is {doc['format']!r}, the file is named for {fmt!r}")
    problems += [f"no row for canonical field {f!r}" for f in missing]
    problems += [f"row for unknown canonical field {n!r}" for n in unknown]
    problems += [f"more than one row for {n!r}" for n in dupes]
    return problems


@functools.cache
def table(fmt: str) -> Table:
    path = portable(fmt).mapping
    doc = json.loads(path.read_text(encoding="utf-8"))
    problems = table_problems(fmt, doc)
    if problems:
        raise HarnessError(f"mapping table {path.name} is not valid: " + "; ".join(problems[:5]))
    return Table(fmt, doc)
