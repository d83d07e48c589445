"""What the writers share: one record being placed into a target format, field by field, with the ledger
told what became of each canonical field and which native values were invented."""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable
from typing import Any

from memconform.core.results import HarnessError

from .canonical import FIELDS, HATCH_KEY, OUTSIDE, Record, instant, jcopy, offset_of, writable
from .formats import formats, portable
from .hatch import block
from .ledger import Ledger
from .tables import Table, table


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

    def restore_extensions(self, ext: dict[str, Any], into: dict[str, Any], own_fields: Any) -> None:
        """A canonical extension object's fields beside it (`outside`: the record's fields its format names
        nowhere) spread back onto `into` when they came from this format and clash with none of `own_fields`;
        from another format they are carried, never spread."""
        outside = ext.get(OUTSIDE)
        if ext.get("format") == self.table.format and isinstance(outside, dict) and not set(outside) & set(own_fields):
            into.update(jcopy(outside))
            self.keep_extensions(ext.get("format"))
        elif outside:
            self.carry("extensions", f"{ext.get('format')}'s fields beside its extension object", value=ext)
        else:
            self.keep_extensions(ext.get("format"))

    def hatch(self, into: dict[str, Any], own_fields: Any, target_ids: dict[str, str],
              accepts: Callable[[dict[str, Any]], bool] = lambda value: True, unfit: str = "not an object",
              not_object: str = "not an object") -> dict[str, Any]:
        """The end of a record: the escape hatch to write, its extension object's fields (their `outside` fields
        restored onto `into` by restore_extensions) and the translation's block (finish: every field left is
        placed). An extension object the hatch cannot take as it is (`accepts` says no, or it holds a block of
        its own) is carried, `unfit` saying why; a value that is no extension object is carried as `not_object`."""
        ext = self.record.get("extensions")
        hatch: dict[str, Any] = {}
        if isinstance(ext, dict) and isinstance(ext.get("value"), dict):
            if HATCH_KEY not in ext["value"] and accepts(ext["value"]):
                hatch = jcopy(ext["value"])
                self.restore_extensions(ext, into, own_fields)
            else:
                self.carry("extensions", unfit)
        elif ext is not None:
            self.carry("extensions", not_object)
        found = self.finish(target_ids)
        if found:
            hatch[HATCH_KEY] = found
        return hatch

    def keep(self, name: str, detail: str = "") -> None:
        self.handled.add(name)
        self.ledger.note(self.rid, name, "kept", detail)

    def respell(self, name: str, rule: str) -> None:
        """The value is in the target's own field, spelled by `rule` (the ledger names the rule)."""
        self.handled.add(name)
        self.ledger.note(self.rid, name, "respelled", rule)

    def text(self, native: str) -> str:
        """The text to write in a format that requires one; a record without text gets an empty one, invented."""
        text = self.record.get("text")
        if isinstance(text, str):
            return text
        self.handled.add("text")
        self.invented_fields.append("text")
        if text is None:
            self.ledger.note(self.rid, "text", "invented", "an empty text for a record without one")
        else:
            self.carry("text", "not a string: an empty text written in its place")
        self.ledger.invent(self.rid, native, "an empty text for a record without one")
        return ""

    def time(self, name: str, written: Any) -> None:
        """A date-time written natively: kept when it is the source's instant, precision and offset; respelled
        when only the offset differs; carried (the exact value in the block) when the target cut it."""
        value = self.record.get(name)
        spelled = self.record.spelled.get(name, value)
        exact = instant(value)
        got = written if isinstance(written, str) else None
        if got is None and isinstance(written, int):  # epoch milliseconds
            got = (dt.datetime(1970, 1, 1, tzinfo=dt.UTC) + dt.timedelta(milliseconds=written)).isoformat()
        if exact is None or instant(got) != exact:
            why = ("a leap second, written as the second after it" if exact and exact[16:19] == ":60" else
                   "cut to the target's precision" if exact and writable(exact)[:19] == (instant(got) or "")[:19] else
                   "before 1970: the target counts milliseconds from 1970 and cannot go below 0" if exact and exact < "1970" else
                   "not a date-time the target can hold")
            self.carry(name, f"{why}; the exact value carried")
        elif offset_of(spelled) not in (None, offset_of(got)):
            self.respell(name, f"written in UTC (the source's offset {_offset(offset_of(spelled))}; the same instant)")
        else:
            self.keep(name)

    def write_type(self, default: str, path: str) -> str:
        """The native type to write for the record's canonical type, placed (place_type); `default`, invented
        at `path`, when the record has none."""
        canonical = self.value("type")
        if not isinstance(canonical, str):
            self.invent("type", path)
            return default
        written = self.table.type_from_canonical(canonical)
        self.place_type(written)
        return written

    def place_type(self, written: str) -> None:
        """The native type written: kept when it is the source's own name, respelled when it reads back as the
        same type under another name, carried when the target has no name for it."""
        canonical = self.record.get("type")
        spelled = self.record.spelled.get("type", canonical)
        if not self.table.type_exact(str(canonical)):
            self.carry("type", f"{canonical} written as {written}")
        elif written == spelled:
            self.keep("type")
        elif (rule := _prefix_rule(str(written), str(spelled))) is not None:
            self.respell("type", rule)
        else:
            self.respell("type", f"the type crosswalk: {spelled} written as {written}")

    def place_id(self, source: str, written: Any, native: str) -> None:
        """The record's id in the target: kept when it is the source's own id, respelled when it is that id
        with the part a format names it by (its Portable's `respellings`: "id in key" of a source whose key holds
        more than the id, "id as key" of a target that writes such a key), carried (with the ids in the block)
        when the target's id is another."""
        came_from = portable(source)
        own = came_from.native_id(self.record.key(source))
        into = portable(self.table.format).respellings.get("id as key")
        if str(written) == own and not self.record.ledger_key:
            self.keep("id")
        elif str(written) == self.record.key(source) and not self.record.ledger_key:
            self.respell("id", came_from.respellings.get("id in key", "the key the source names the record by"))
        elif (into is not None and str(written).rsplit("/", 1)[-1] == own.rsplit("/", 1)[-1]
              and "id in key" not in came_from.respellings and not self.record.ledger_key):
            self.respell("id", into)
        else:
            self.new_id(native)

    def carry(self, name: str, detail: str = "", value: Any = None) -> None:
        self.handled.add(name)
        if value is None:
            value = self.record.get(name)
            spelled = self.record.spelled.get(name)
            if isinstance(spelled, str) and instant(spelled) == value and offset_of(spelled) not in (None, dt.timedelta(0)):
                value = spelled  # a date-time travels with the offset it was written with
        self.carried[name] = value
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
        self.handled.add("id")
        if self.record.ledger_key:
            self.ledger.note(self.rid, "id", "carried", "another record of the source has the same id: a new id made, "
                                                        "the record's own id carried")
        else:
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
        self.ledger.share(self.rid)
        other_ids = {k: v for k, v in self.record.ids.items() if target_ids.get(k) != v}
        if not (self.carried or other_ids or self.invented_fields or self.ext_from):
            return None
        return block(self.carried, other_ids, self.invented_fields, {"ext_from": self.ext_from} if self.ext_from else None)


def _prefix_rule(written: str, spelled: str) -> str | None:
    """The wording of a vendor prefix (a mapping table's `vendor_prefix`, its Portable's "type prefix") that makes
    `written` and `spelled` the same type name, or None."""
    for fmt in formats():
        prefix = table(fmt).raw["types"].get("vendor_prefix")
        rule = portable(fmt).respellings.get("type prefix")
        if prefix and rule and written.removeprefix(prefix) == spelled.removeprefix(prefix):
            return rule
    return None


def _offset(delta: dt.timedelta | None) -> str:
    minutes = int((delta or dt.timedelta(0)).total_seconds() // 60)
    return f"{'+' if minutes >= 0 else '-'}{abs(minutes) // 60:02d}:{abs(minutes) % 60:02d}"


def note_document(ledger: Ledger, table: Table, name: str, count: int, own: int = 0) -> None:
    """Document-level items: `own` of the target's own kind are kept where the table keeps them, the rest lost."""
    row = table.document_rows[name]
    if row.into == "kept":
        ledger.note_document(name, "kept", own)
        ledger.note_document(name, "lost", count - own)
    else:
        ledger.note_document(name, "lost", count)


def place_export_time(ledger: Ledger, doc: Any, written: str | None) -> None:
    """The document's export time: kept, respelled (offset), cut (precision: said, as lost), invented or lost."""
    exact = doc.exported_at
    if exact is None:
        if written is not None:
            ledger.note_document("exported_at", "invented", 1, "the source has no export time: the time of the translation")
        return
    if written is None:
        ledger.note_document("exported_at", "lost", 1, "the target has no export time")
    elif instant(written) != exact:
        why = "a leap second written as the second after it" if exact[16:19] == ":60" else "cut to the target's precision"
        ledger.note_document("exported_at", "lost", 1, f"{why} ({doc.exported_spelled or exact} written as {written})")
    elif offset_of(doc.exported_spelled) not in (None, offset_of(written)):
        ledger.note_document("exported_at", "respelled", 1, f"written in UTC (the source's offset "
                             f"{_offset(offset_of(doc.exported_spelled))}; the same instant)")
    else:
        ledger.note_document("exported_at", "kept", 1)


def place_producer(ledger: Ledger, doc: Any, written: str | None) -> None:
    if doc.producer is None:
        if written is not None:
            ledger.note_document("producer", "invented", 1, f"the source names no producer: {written!r}")
    elif written == doc.producer:
        ledger.note_document("producer", "kept", 1)
    else:
        ledger.note_document("producer", "lost", 1, "the target has no place for the producer" if written is None
                             else f"written as {written!r}")


def note_envelope(ledger: Ledger, doc: Any) -> None:
    """Envelope items of the source no other format has a place for: each one named, lost."""
    for path in sorted(doc.envelope):
        ledger.note_document(f"envelope.{path}", "lost", 1, "the target's envelope has no place for it")
