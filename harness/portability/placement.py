"""What the writers share: one record being placed into a target format, field by field, with the ledger
told what became of each canonical field and which native values were invented."""

from __future__ import annotations

from typing import Any

from memconform.core.results import HarnessError

from .canonical import FIELDS, Record
from .hatch import block
from .ledger import Ledger
from .tables import Table


class Refused(Exception):
    """The translation would break a limit the table says to refuse on, or the output would not validate."""


class Placement:
    def __init__(self, table: Table, record: Record, ledger: Ledger, rid: str) -> None:
        self.table, self.record, self.ledger, self.rid = table, record, ledger, rid
        self.carried: dict[str, Any] = {}
        self.invented_fields: list[str] = []
        self.handled: set[str] = set()
        self.ext_from: str | None = None  # another format's extension object spread into this one's hatch

    def value(self, name: str) -> Any:
        return self.record.get(name)

    def keep_extensions(self, source_format: Any) -> None:
        if source_format != self.table.format:
            self.ext_from = str(source_format)
        self.keep("extensions", "" if self.ext_from is None else f"{source_format}'s extension object")

    def keep(self, name: str, detail: str = "") -> None:
        self.handled.add(name)
        self.ledger.note(self.rid, name, "kept", detail)

    def carry(self, name: str, detail: str = "", value: Any = None) -> None:
        self.handled.add(name)
        self.carried[name] = self.record.get(name) if value is None else value
        self.ledger.note(self.rid, name, "carried", detail)

    def lose(self, name: str, detail: str = "") -> None:
        self.handled.add(name)
        self.ledger.note(self.rid, name, "lost", detail)

    def invent(self, canonical: str | None, native: str) -> None:
        """A required native value made up by the table's rule; its canonical field is dropped on reading."""
        if canonical:
            self.invented_fields.append(canonical)
            if canonical not in self.handled and self.record.get(canonical) is not None:
                self.carry(canonical, "a value the target cannot hold in its own field")
        self.ledger.invent(self.rid, native, self.table.invented_rule(native))

    def new_id(self, native: str) -> None:
        """The target cannot use the record's id: one is invented, the record's own ids travel in the hatch."""
        self.ledger.note(self.rid, "id", "carried", "an id of the target's form invented; the record's own id carried")
        self.ledger.invent(self.rid, native, self.table.invented_rule(native))

    def finish(self, target_ids: dict[str, str]) -> dict[str, Any] | None:
        """Place every field the writer left to the table; the block for the hatch (None when nothing to carry)."""
        for name in FIELDS:
            if name in self.handled or name == "id" or self.record.get(name) is None:
                continue
            into = self.table.into(name)
            if into == "kept":
                raise HarnessError(f"{self.table.format} writer: the table keeps {name!r} but the writer did not place it")
            if into == "carried":
                self.carry(name)
            else:
                self.lose(name)
        other_ids = {k: v for k, v in self.record.ids.items() if target_ids.get(k) != v}
        if not (self.carried or other_ids or self.invented_fields or self.ext_from):
            return None
        return block(self.carried, other_ids, self.invented_fields, {"ext_from": self.ext_from} if self.ext_from else None)


def note_document(ledger: Ledger, table: Table, name: str, count: int, own: int = 0) -> None:
    """Document-level items: `own` of the target's own kind are kept where the table keeps them, the rest lost."""
    row = table.document_rows[name]
    if row.into == "kept":
        ledger.note_document(name, "kept", own)
        ledger.note_document(name, "lost", count - own)
    else:
        ledger.note_document(name, "lost", count)
