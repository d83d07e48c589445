"""MemoRizz archives to and from the canonical record: every {id, data} record of the 13 stores is a
record, its store is its type. `data` is MemoRizz's own place for portable fields, so it is the hatch."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Iterator
from typing import IO, Any

from memconform.portability.canonical import (
    HATCH_KEY,
    Document,
    Reading,
    Record,
    digest,
    instant,
    jcopy,
    now_canonical,
    written_records,
)
from memconform.portability.hatch import apply, split
from memconform.portability.ledger import Ledger
from memconform.portability.placement import (
    Placement,
    Refused,
    note_document,
    note_envelope,
    place_export_time,
    place_producer,
)
from memconform.portability.streamed import Spill, spill, spill_file, written
from memconform.portability.tables import table
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz.format.records import links_of

FORMAT = "memorizz"
# manifest members a translation reads or recomputes (counts, record_count and the version describe the archive
# written, not the memories); `includes` and `warnings` say what the source left out and are named when set
ARCHIVE = ("format", "version", "taxonomy", "manifest", "stores", "integrity")
MANIFEST = ("created_at", "source_provider", "scope", "counts", "record_count", "memorizz_version",
            "external_references", "omitted_fields")


def key(store: str, rid: str) -> str:
    """A record's id across the archive (ids are unique only within a store)."""
    return f"{store}/{rid}"


def _begin(doc: dict[str, Any]) -> tuple[Document, None]:
    manifest: dict[str, Any] = doc["manifest"] if isinstance(doc.get("manifest"), dict) else {}
    out = Document(FORMAT, producer=manifest.get("source_provider"), exported_at=instant(manifest.get("created_at")),
                   exported_spelled=manifest.get("created_at") if isinstance(manifest.get("created_at"), str) else None)
    # what the manifest says beyond the export time, producer and scope: named, so a ledger can say it is lost
    out.envelope = {f"manifest.{k}": v for k, v in manifest.items()
                    if k not in MANIFEST and v not in (None, [], {}, False)}
    out.envelope.update({k: v for k, v in doc.items() if k not in ARCHIVE and v not in (None, [], {}, False)})
    if isinstance(manifest.get("scope"), dict):
        out.subject = {"format": FORMAT, "scope": jcopy(manifest["scope"])}
    return out, None


def _records(state: None, store: str, recs: Iterable[Any]) -> Iterator[Record]:
    t = table(FORMAT)
    for rec in recs:
        if isinstance(rec, dict) and isinstance(rec.get("data"), dict):
            yield _record(t, store, rec)


READING = Reading(tuple(memorizz.STORES), _begin, _records, group="stores")
read = READING.read


def _record(t: Any, store: str, rec: dict[str, Any]) -> Record:
    found, rest = split(rec["data"])
    rest = dict(rest or {})
    r = Record(ids={FORMAT: key(store, str(rec.get("id")))})
    v = r.values
    v["type"] = t.type_to_canonical(store)
    if isinstance(rest.get("content"), str):
        v["text"] = rest.pop("content")
    if "memory_id" in rest and rest["memory_id"] is not None:
        v["namespace"] = rest.pop("memory_id")
    if isinstance(rest.get("user_id"), str):
        v["origin_user"] = rest.pop("user_id")
    emb = rest.get("embedding")
    if isinstance(emb, list) and emb and all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in emb):
        v["embedding"] = rest.pop("embedding")
    if rest:
        v["extensions"] = {"format": FORMAT, "value": rest}
    apply(r, found, FORMAT, t)
    return r


def _record_id(r: Record, source: str, store: str, used: set[tuple[str, str]]) -> tuple[str, bool]:
    own = r.ids.get(FORMAT)
    candidates = []
    if isinstance(own, str) and "/" in own and own.split("/", 1)[0] == store:
        candidates.append(own.split("/", 1)[1])
    if source != FORMAT:
        candidates.append(r.key(source))
    for c in candidates:
        if c and len(c) <= memorizz.MAX_ID_CHARS and (store, c) not in used:
            return c, True
    salt = 0
    while (store, made := digest(FORMAT, sorted(r.ids.items()), salt).hex()) in used:
        salt += 1
    return made, False


def write(doc: Document, ledger: Ledger) -> dict[str, Any]:
    t = table(FORMAT)
    exported = doc.exported_at or now_canonical()
    archive = memorizz.empty_archive(created_at=exported, memorizz_version="memconform-port",
                               source_provider=str(doc.producer if doc.producer is not None else "memconform-port"))
    ledger.invent("(document)", "manifest.memorizz_version", t.invented_rule("manifest.memorizz_version"))
    used: set[tuple[str, str]] = set()
    # inside streaming() each store's records go to a temporary file as they are made, summed for the integrity
    # digest as they go: the manifest before the stores needs their counts, their external references and what
    # their writing told the ledger, so no list of every record is held
    held = {store: spill(store) for store in archive["stores"]}
    summed = Integrity(held) if any(isinstance(h, Spill) for h in held.values()) else None
    if summed is None:
        archive["stores"] = held
    for r, rid in written_records(doc, ledger):
        store, rec = _rec(t, doc, r, rid, used, ledger)
        held[store].append(rec)
        if summed is not None:
            summed.add(store, rec)
    place_export_time(ledger, doc, archive["manifest"]["created_at"])
    place_producer(ledger, doc, archive["manifest"]["source_provider"])
    note_envelope(ledger, doc)
    if doc.subject and doc.subject.get("format") == FORMAT:
        archive["manifest"]["scope"] = jcopy(doc.subject["scope"])
        ledger.note_document("subject", "kept", 1)
    elif doc.subject:
        ledger.note_document("subject", "lost", 1)
    note_document(ledger, t, "graph", len(doc.graph))
    note_document(ledger, t, "other_objects", len(doc.other_objects))
    limit = int(t.limit("id", "max_items"))
    if sum(len(v) for v in held.values()) > limit:
        raise Refused(f"{sum(len(v) for v in held.values())} records: over the archive limit of {limit} "
                      "(mapping table memorizz, row id)")
    external = sorted(memorizz.external_references(archive)) if summed is None else summed.external()
    if external:
        archive["manifest"]["external_references"] = external
    _declare(archive, ledger)
    if summed is None:
        return memorizz.seal(archive)
    archive["stores"] = {store: written(records) for store, records in held.items()}
    return summed.seal(archive)


class Integrity:
    """memorizz.seal's counts, record count and integrity digest of an archive whose records are summed one by one
    as they are made, never held together; the external references (memorizz.external_references) found on the
    way. The digest covers the canonical text sorted by key, so each store's canonical records go to a temporary
    file of their own, joined in the stores' sorted order at the end. The same manifest and digest as memorizz.seal
    of the whole archive (tests/test_portability_written.py)."""

    def __init__(self, stores: Iterable[str]) -> None:
        self.parts: dict[str, IO[bytes]] = {store: spill_file() for store in stores}
        self.counts = dict.fromkeys(self.parts, 0)
        self.ids: set[str] = set()
        self.refs: set[str] = set()

    def add(self, store: str, rec: dict[str, Any]) -> None:
        data = rec["data"]
        if isinstance(rec.get("id"), str):
            self.ids.add(rec["id"])
        if isinstance(data.get("record_id"), str):
            self.ids.add(data["record_id"])
        self.refs.update(ref for _, ref in links_of(data))
        part = self.parts[store]
        if self.counts[store]:
            part.write(b",")
        part.write(memorizz.canonical_text(rec).encode("utf-8"))
        self.counts[store] += 1

    def external(self) -> list[str]:
        return sorted(self.refs - self.ids)

    def seal(self, archive: dict[str, Any]) -> dict[str, Any]:
        if sorted(archive["stores"]) != sorted(self.parts):  # a store written that was not summed: a harness bug
            raise RuntimeError(f"the MemoRizz archive's stores {sorted(archive['stores'])} are not the "
                               f"{sorted(self.parts)} summed")
        manifest = archive.setdefault("manifest", {})
        manifest["counts"] = dict(self.counts)
        manifest["record_count"] = sum(self.counts.values())
        archive.pop("integrity", None)
        digest = hashlib.sha256(b"{")
        for i, key in enumerate(sorted(archive)):
            digest.update((b"," if i else b"") + _key(key))
            if key != "stores":
                digest.update(memorizz.canonical_text(archive[key]).encode("utf-8"))
                continue
            digest.update(b"{")
            for j, store in enumerate(sorted(self.parts)):
                digest.update((b"," if j else b"") + _key(store) + b"[")
                part = self.parts[store]
                part.seek(0)
                while block := part.read(1 << 20):
                    digest.update(block)
                part.close()
                digest.update(b"]")
            digest.update(b"}")
        digest.update(b"}")
        archive["integrity"] = {"algorithm": "sha256", "digest": digest.hexdigest()}
        return archive


def _key(key: str) -> bytes:
    """`"key":` as the canonical text writes a member's name."""
    return json.dumps(key, ensure_ascii=False).encode("utf-8") + b":"


def _rec(t: Any, doc: Document, r: Record, rid: str, used: set[tuple[str, str]], ledger: Ledger) -> tuple[str, dict[str, Any]]:
    p = Placement(t, r, ledger, rid)
    canonical = r.get("type")
    if isinstance(canonical, str):
        store = t.type_from_canonical(canonical)
        p.place_type(store)
    else:
        store = str(t.raw["types"]["default"])
        p.invent("type", "the store of a record")
    rec_id, kept = _record_id(r, doc.source, store, used)
    used.add((store, rec_id))
    p.place_id(doc.source, rec_id, "id") if kept else p.new_id("id")
    ledger.map_id(rid, key(store, rec_id))
    data: dict[str, Any] = {}
    ext = r.get("extensions")
    if isinstance(ext, dict) and ext.get("format") == FORMAT and isinstance(ext.get("value"), dict):
        data.update(jcopy(ext["value"]))
        p.keep("extensions")
    elif ext is not None:
        p.carry("extensions", f"{ext.get('format') if isinstance(ext, dict) else '?'}'s extension object, inside data")
    if r.get("text") is not None:  # a record without text (an agent, a tool) is written without content
        if isinstance(r.get("text"), str) and not isinstance(data.get("content"), (dict, list)):
            data["content"] = r.get("text")
            p.keep("text")
        else:
            p.carry("text", "its data holds a content of its own")
    if r.get("namespace") is not None:
        data["memory_id"] = jcopy(r.get("namespace"))
        p.keep("namespace")
    if isinstance(r.get("origin_user"), str):
        data["user_id"] = r.get("origin_user")
        p.keep("origin_user")
    elif r.get("origin_user") is not None:
        p.carry("origin_user", "not a string")
    found = p.finish({FORMAT: key(store, rec_id)})
    if found:
        data[HATCH_KEY] = found
    return store, {"id": rec_id, "data": data}


def _declare(archive: dict[str, Any], ledger: Ledger) -> None:
    """MemoRizz alone can say what an export left out: every lost field goes to omitted_fields and warnings."""
    lost = {name: c["lost"] for name, c in ledger.counts().items() if c["lost"]}
    for (name, status), n in ledger.document.items():
        if status == "lost":
            lost[name] = lost.get(name, 0) + n
    if not lost:
        return
    manifest = archive["manifest"]
    manifest["omitted_fields"] = sorted(lost)
    manifest["warnings"] = [f"memconform translate from {ledger.source}: {name} lost for {n} "
                            f"{'record' if n == 1 else 'records'}" for name, n in sorted(lost.items())]
    ledger.declared_in_target += ["manifest.omitted_fields", "manifest.warnings"]
