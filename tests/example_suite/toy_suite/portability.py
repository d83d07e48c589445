"""The Toy Counter format's part in `memconform translate`, the loss matrix and `port`: a note is a record (its
`text` and `id`; its `meta` the escape hatch where every other canonical field travels), the document's
`count` an envelope member no other format holds. SuiteSpec.portability names `portable` below."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from memconform.portability.canonical import NO_ID, Document, Record, digest
from memconform.portability.formats import Endpoint, Portable, refused
from memconform.portability.hatch import apply, split
from memconform.portability.ledger import Ledger
from memconform.portability.placement import (
    Placement,
    note_document,
    note_envelope,
    place_export_time,
    place_producer,
)
from memconform.portability.tables import table
from memconform.portability.witness import Named, Seen, Witness, outside, seen

FORMAT = "toy"
HERE = Path(__file__).parent
NOTE_FIELDS = ("id", "text", "meta")


def detect(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("toy") == "counter"


def read(doc: Any) -> Document:
    t = table(FORMAT)
    out = Document(FORMAT)
    if "count" in doc:
        out.envelope["count"] = doc["count"]
    for note in doc.get("notes") or []:
        r = Record(ids={FORMAT: str(note.get("id"))})
        if isinstance(note.get("text"), str):
            r.values["text"] = note["text"]
        found, rest = split(note.get("meta"))
        if rest:
            r.values["extensions"] = {"format": FORMAT, "value": rest}
        apply(r, found, FORMAT, t)
        out.records.append(r)
    return out


def write(doc: Document, ledger: Ledger) -> dict[str, Any]:
    t = table(FORMAT)
    notes: list[dict[str, Any]] = []
    used: set[str] = set()
    for r in doc.records:
        rid = r.name(doc.source)
        if r.get("deleted"):
            ledger.note(rid, "deleted", "lost", "a deleted record is not written")
            continue
        notes.append(_note(t, doc, r, rid, used, ledger))
    for name in ("graph", "other_objects"):
        note_document(ledger, t, name, len(getattr(doc, name)))
    note_document(ledger, t, "subject", 1 if doc.subject else 0)
    place_producer(ledger, doc, None)
    place_export_time(ledger, doc, None)
    note_envelope(ledger, doc)
    ledger.invent("(document)", "count", t.invented_rule("count"))
    return {"toy": "counter", "count": 0, "notes": notes}


def _note(t: Any, doc: Document, r: Record, rid: str, used: set[str], ledger: Ledger) -> dict[str, Any]:
    p = Placement(t, r, ledger, rid)
    note_id = next((c for c in (r.ids.get(FORMAT), r.key(doc.source)) if isinstance(c, str) and c
                    and not c.startswith(NO_ID) and c not in used), None)
    if note_id is None:
        note_id = "note-" + digest(FORMAT, sorted(r.ids.items()), len(used)).hex()[:16]
        p.new_id("notes[].id")
    else:
        p.place_id(doc.source, note_id, "notes[].id")
    used.add(note_id)
    ledger.map_id(rid, note_id)
    note: dict[str, Any] = {"id": note_id, "text": p.text("notes[].text")}
    if "text" not in p.handled:
        p.keep("text")
    meta = p.hatch(note, NOTE_FIELDS, {FORMAT: note_id})
    if meta:
        note["meta"] = meta
    return note


def witnessed(doc: Any) -> dict[str, Seen]:
    """The notes as a reader of SPEC.md sees them (apart from `read` above, which the ledger is judged against)."""
    out = Named()
    for note in doc.get("notes") or [] if isinstance(doc, dict) else []:
        s = seen({"text": ("text",)}, str(note.get("id")), note, note.get("meta"))
        outside(s, note, set(NOTE_FIELDS))
        out.add(s.native_id, s)
    return out


def export(end: Endpoint) -> Any:
    return end.ctx.target.call("get").accepted_json(dict, "toy get")


def import_(end: Endpoint, doc: Any) -> None:
    refused(end, end.ctx.target.call("load", doc))


def portable() -> Portable:
    return Portable(
        name=FORMAT, mapping=HERE / "mapping.json", read=read, write=write, detect=detect,
        samples=lambda: [HERE / "sample-notes.json"], seed="sample-notes.json", export=export, import_=import_,
        witness=Witness(witnessed, native={"text": ("text",)}, spoken_for=frozenset({"toy", "notes"})))
