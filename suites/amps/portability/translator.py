"""AMPS exports to and from the canonical record. An atom is a record; the artifacts it cites travel with
it inside its provenance (so they survive a hop through a format with no artifacts); uncited artifacts are
the document's graph."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Iterator
from typing import Any

from memconform.portability.canonical import (
    NO_ID,
    OUTSIDE,
    Document,
    Reading,
    Record,
    digest,
    id_lists,
    instant,
    jcopy,
    now_canonical,
    offset_of,
    seconds_form,
    written_records,
)
from memconform.portability.hatch import apply, split
from memconform.portability.ledger import Ledger
from memconform.portability.placement import (
    Placement,
    note_document,
    note_envelope,
    place_export_time,
    place_producer,
)
from memconform.portability.streamed import later, records
from memconform.portability.tables import table
from memconform.suites.amps import format as amps

FORMAT = "amps"
ENVELOPE = ("export_version", "exported_at", "source_provider", "subject", "atoms", "artifacts")
ATOM = ("atom_id", "text", "kind", "created_at", "valid_from", "valid_to", "sensitivity", "confidence", "provenance",
        "x-provider")
ARTIFACTS = "artifacts"  # inside a canonical provenance: the cited artifacts, without their atom_ids


def _begin(doc: dict[str, Any]) -> tuple[Document, dict[str, Any]]:
    out = Document(FORMAT, producer=doc.get("source_provider"), exported_at=instant(doc.get("exported_at")),
                   exported_spelled=doc.get("exported_at") if isinstance(doc.get("exported_at"), str) else None)
    out.envelope = {k: v for k, v in doc.items() if k not in ENVELOPE and v not in (None, [], {})}
    if isinstance(doc.get("subject"), dict):
        out.subject = {"format": FORMAT, **doc["subject"]}
    return out, {"artifacts": {a.get("artifact_id"): a for _, a in amps.artifacts(doc)}, "cited": set()}


def _records(state: dict[str, Any], section: str, atoms: Iterable[Any]) -> Iterator[Record]:
    t, artifacts, cited = table(FORMAT), state["artifacts"], state["cited"]
    for atom in atoms:
        if isinstance(atom, dict):
            cited |= set(amps.artifact_ids_of(atom))
            yield _record(t, atom, artifacts)


def _finish(out: Document, state: dict[str, Any]) -> None:
    out.graph = [{"kind": f"{FORMAT}.artifacts", "item": a} for aid, a in state["artifacts"].items()
                 if aid not in state["cited"]]


READING = Reading(("atoms",), _begin, _records, _finish)
read = READING.read


def _record(t: Any, atom: dict[str, Any], artifacts: dict[Any, dict[str, Any]]) -> Record:
    found, rest = split(atom.get("x-provider"))
    r = Record(ids={FORMAT: str(atom.get("atom_id"))})
    v = r.values
    v["text"] = atom.get("text")
    if isinstance(atom.get("kind"), str):
        v["type"] = t.type_to_canonical(atom["kind"])
        r.spelled["type"] = atom["kind"]
    for native, name in (("created_at", "created_at"), ("valid_from", "valid_from"), ("valid_to", "valid_until")):
        if atom.get(native) is not None:
            r.time(name, atom[native])
    for name in ("sensitivity", "confidence"):
        if atom.get(name) is not None:
            v[name] = atom[name]
    if isinstance(atom.get("provenance"), dict):
        prov = jcopy(atom["provenance"])
        cites = [jcopy(artifacts[a]) for a in amps.artifact_ids_of(atom) if a in artifacts]
        for art in cites:
            art.pop("atom_ids", None)
        if cites:
            prov[ARTIFACTS] = cites
        v["provenance"] = prov
    outside = {k: jcopy(x) for k, x in atom.items() if k not in ATOM}
    if rest or outside:
        v["extensions"] = {"format": FORMAT, "value": rest or {}, **({OUTSIDE: outside} if outside else {})}
    apply(r, found, FORMAT, t)
    return r


def write(doc: Document, ledger: Ledger) -> dict[str, Any]:
    """The AMPS export; inside streaming() its atoms are made as they are written and its artifacts (which name
    the atoms citing them) once the atoms are (streamed.py)."""
    t = table(FORMAT)
    exported = doc.exported_at or now_canonical()
    artifacts: dict[str, dict[str, Any]] = {}
    used: set[str] = set()
    subject_seed = None if _own_subject(doc) else id_lists(doc)
    own = [g["item"] for g in doc.graph if g["kind"] == f"{FORMAT}.artifacts"]
    citing: dict[str, list[Any]] = {}  # artifact id -> the atoms that cite it, as the atoms are made

    def atoms() -> Iterator[dict[str, Any]]:
        for r, rid in written_records(doc, ledger):
            atom = _atom(t, doc, r, rid, used, exported, ledger, artifacts)
            for cited_id in dict.fromkeys(map(str, amps.artifact_ids_of(atom))):
                citing.setdefault(cited_id, []).append(atom["atom_id"])
            yield atom

    def cited() -> list[dict[str, Any]]:
        for art in own:
            artifacts.setdefault(str(art.get("artifact_id")), jcopy(art))
        own_ids = {str(a.get("artifact_id")) for a in own}
        for aid, art in artifacts.items():
            if aid not in own_ids:
                art["atom_ids"] = citing.get(aid, [])
        return list(artifacts.values())

    # the envelope depends on no atom: it and its ledger lines come first
    note_document(ledger, t, "graph", len(doc.graph), len(own))
    note_document(ledger, t, "other_objects", len(doc.other_objects))
    out: dict[str, Any] = {"export_version": amps.EXPORT_VERSION, "exported_at": seconds_form(exported, keep_leap=True)}
    place_export_time(ledger, doc, out["exported_at"])
    if doc.producer:
        out["source_provider"] = str(doc.producer)
    place_producer(ledger, doc, out.get("source_provider"))
    note_envelope(ledger, doc)
    out["subject"] = _subject(doc, ledger, t, subject_seed)
    out["atoms"] = records("atoms", atoms())
    out["artifacts"] = later("artifacts", cited)
    return out


def _own_subject(doc: Document) -> bool:
    return bool(doc.subject and doc.subject.get("format") == FORMAT and isinstance(doc.subject.get("subject_id"), str))


def _subject(doc: Document, ledger: Ledger, t: Any, seed: Any) -> dict[str, Any]:
    """The source's own AMPS subject, or one invented from `seed` (every record's ids, taken before the records
    were written and let go)."""
    if doc.subject and _own_subject(doc):
        ledger.note_document("subject", "kept", 1)
        return {k: jcopy(v) for k, v in doc.subject.items() if k != "format"}
    if doc.subject:
        ledger.note_document("subject", "lost", 1)
    ledger.invent("(document)", "subject.subject_id", t.invented_rule("subject.subject_id"))
    return {"subject_id": "subject-" + digest(FORMAT, seed).hex()[:16]}


def _atom(t: Any, doc: Document, r: Record, rid: str, used: set[str], exported: str, ledger: Ledger,
          artifacts: dict[str, dict[str, Any]]) -> dict[str, Any]:
    p = Placement(t, r, ledger, rid)
    atom_id = next((c for c in (r.ids.get(FORMAT), r.key(doc.source)) if isinstance(c, str) and c and not c.startswith(NO_ID)
                    and c not in used), None)
    if atom_id is None:
        atom_id = "atom-" + digest(FORMAT, sorted(r.ids.items()), len(used)).hex()[:16]
        p.new_id("atoms[].atom_id")
    else:
        p.place_id(doc.source, atom_id, "atoms[].atom_id")
    used.add(atom_id)
    ledger.map_id(rid, atom_id)
    atom: dict[str, Any] = {"atom_id": atom_id}
    _kind(p, atom)
    _text(p, atom)
    _times(p, atom, exported)
    _provenance(p, atom, artifacts)
    _labels(p, atom)
    hatch = p.hatch(atom, ATOM, {FORMAT: atom_id})
    if hatch:
        atom["x-provider"] = hatch
    return atom


def _kind(p: Placement, atom: dict[str, Any]) -> None:
    atom["kind"] = p.write_type("fact", "atoms[].kind")


def _text(p: Placement, atom: dict[str, Any]) -> None:
    text = p.text("atoms[].text")
    limit = int(p.table.limit("text", "max_chars"))
    atom["text"] = text[:limit]  # maxLength counts code points (JSON Schema 2020-12, ajv alike)
    if len(text) > limit:
        p.lose("text", f"cut to {limit} characters")
    elif "text" not in p.handled:
        p.keep("text")


def _instant(p: Placement, name: str) -> str | None:
    value = p.value(name)
    return instant(value) if isinstance(value, str) and instant(value) else None


def _spelled(p: Placement, name: str, canonical: str) -> str:
    """A date-time as AMPS writes it: with the offset the record was written with (the schema's date-time
    allows any offset), else in UTC."""
    for candidate in (p.record.spelled.get(name), p.value(name)):
        if isinstance(candidate, str) and instant(candidate) == canonical and offset_of(candidate) not in (None, dt.timedelta(0)):
            return candidate
    return seconds_form(canonical, keep_leap=True)


def _times(p: Placement, atom: dict[str, Any], exported: str) -> None:
    created = _instant(p, "created_at")
    atom["created_at"] = _spelled(p, "created_at", created) if created else \
        seconds_form(_instant(p, "updated_at") or exported, keep_leap=True)
    if created:
        p.time("created_at", atom["created_at"])
    else:
        created = _instant(p, "updated_at") or exported
        p.invent("created_at", "atoms[].created_at")
    until = _instant(p, "valid_until")
    start = _instant(p, "valid_from")
    atom["valid_from"] = _spelled(p, "valid_from", start) if start else \
        seconds_form(min(created, until) if until else created, keep_leap=True)
    if start:
        p.time("valid_from", atom["valid_from"])
    else:
        p.invent("valid_from", "atoms[].valid_from")
    if until:
        atom["valid_to"] = _spelled(p, "valid_until", until)
        p.time("valid_until", atom["valid_to"])


def _provenance(p: Placement, atom: dict[str, Any], artifacts: dict[str, dict[str, Any]]) -> None:
    prov = p.value("provenance")
    if isinstance(prov, dict) and prov.get("derivation") in amps.DERIVATIONS:
        native = {k: jcopy(v) for k, v in prov.items() if k != ARTIFACTS}
        for art in prov.get(ARTIFACTS) or []:
            if isinstance(art, dict) and isinstance(art.get("artifact_id"), str):
                artifacts.setdefault(art["artifact_id"], {**jcopy(art), "atom_ids": []})
        atom["provenance"] = native
        p.keep("provenance")
        return
    if prov is not None:
        p.carry("provenance", "not an AMPS provenance")
    atom["provenance"] = {"derivation": "stated"}
    p.invent("provenance", "atoms[].provenance.derivation")


def _labels(p: Placement, atom: dict[str, Any]) -> None:
    sensitivity = p.value("sensitivity")
    if sensitivity in amps.SENSITIVITIES:
        atom["sensitivity"] = sensitivity
        p.keep("sensitivity")
    else:
        if sensitivity is not None:
            p.carry("sensitivity", "not one of the five labels")
        atom["sensitivity"] = "private"
        p.invent("sensitivity", "atoms[].sensitivity")
    confidence = p.value("confidence")
    if isinstance(confidence, (int, float)) and not isinstance(confidence, bool) and 0 <= confidence <= 1:
        atom["confidence"] = confidence
        p.keep("confidence")
    elif confidence is not None:
        p.carry("confidence", "not a number in 0..1")
