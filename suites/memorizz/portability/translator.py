"""MemoRizz archives to and from the canonical record: every {id, data} record of the 13 stores is a
record, its store is its type. `data` is MemoRizz's own place for portable fields, so it is the hatch."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

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
from memconform.portability.tables import table
from memconform.suites.memorizz import format as memorizz

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
    for r, rid in written_records(doc, ledger):
        store, rec = _rec(t, doc, r, rid, used, ledger)
        archive["stores"][store].append(rec)
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
    if sum(len(v) for v in archive["stores"].values()) > limit:
        raise Refused(f"{sum(len(v) for v in archive['stores'].values())} records: over the archive limit of {limit} "
                      "(mapping table memorizz, row id)")
    external = sorted(memorizz.external_references(archive))
    if external:
        archive["manifest"]["external_references"] = external
    _declare(archive, ledger)
    return memorizz.seal(archive)


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
