"""MemoryAI bundles to and from the canonical record (chunks are the records; edges and entities the graph)."""

from __future__ import annotations

import functools
import hashlib
import json
import struct
from collections import Counter
from collections.abc import Iterable, Iterator
from typing import Any

from memconform.portability.canonical import (
    NO_ID,
    OUTSIDE,
    Document,
    Reading,
    Record,
    again,
    drain,
    instant,
    jcopy,
    now_canonical,
    seconds_form,
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
from memconform.portability.streamed import Spill, spill, written
from memconform.portability.tables import table
from memconform.suites.memoryai import format as memoryai

FORMAT = "memoryai"
PROTECTION = ("zone", "importance", "is_pinned", "decay_score", "tier")
GRAPH = ("memory_edges", "entities")
CHUNK = ("id", "content", "memory_type", "created_at", "accessed_at", "valid_until", "tags", "embedding",
         "embedding_model", "content_hash", "metadata") + PROTECTION
OTHERS = ("l2_sessions", "mood_states", "agents")
BUNDLE = ("format", "version", "generator", "exported_at", "manifest", "chunks", "checksum", "counts") + GRAPH + OTHERS
# scope and since say which chunks an export holds; the model and dimension are read per chunk; counts and
# checksum are recomputed for what is written
MANIFEST = ("tenant_id", "tenant_name", "tenant_plan", "embedding_model", "embedding_dim", "checksum", "counts", "scope")


def _begin(doc: dict[str, Any]) -> tuple[Document, Any]:
    manifest: dict[str, Any] = doc["manifest"] if isinstance(doc.get("manifest"), dict) else {}
    out = Document(FORMAT, producer=doc.get("generator"), exported_at=instant(doc.get("exported_at")),
                   exported_spelled=doc.get("exported_at") if isinstance(doc.get("exported_at"), str) else None)
    out.envelope = {k: v for k, v in doc.items() if k not in BUNDLE and v not in (None, [], {})}
    out.envelope.update({f"manifest.{k}": v for k, v in manifest.items() if k not in MANIFEST and v not in (None, [], {})})
    tenant = {k: manifest[k] for k in ("tenant_id", "tenant_name", "tenant_plan") if manifest.get(k) is not None}
    out.subject = {"format": FORMAT, **tenant} if tenant else None
    for section in GRAPH:
        out.graph += [{"kind": f"{FORMAT}.{section}", "item": item} for item in doc.get(section) or []]
    for section in OTHERS:
        out.other_objects += [{"kind": f"{FORMAT}.{section}", "item": item} for item in doc.get(section) or []]
    return out, manifest.get("embedding_model")


def _records(bundle_model: Any, section: str, chunks: Iterable[Any]) -> Iterator[Record]:
    t = table(FORMAT)
    for i, chunk in enumerate(chunks):  # a chunk's position names it when it has no id
        if isinstance(chunk, dict):
            yield _record(t, chunk, bundle_model, i)


READING = Reading(("chunks",), _begin, _records)
read = READING.read


def _record(t: Any, chunk: dict[str, Any], bundle_model: Any, index: int) -> Record:
    found, rest = split(chunk.get("metadata"))
    # an id is optional in a chunk: one without is named by its position (the id it gets elsewhere is invented)
    r = Record(ids={FORMAT: str(chunk["id"]) if "id" in chunk else f"{NO_ID}{index + 1}"})
    v = r.values
    v["text"] = chunk.get("content")
    if isinstance(chunk.get("memory_type"), str):
        v["type"] = t.type_to_canonical(chunk["memory_type"])
        r.spelled["type"] = chunk["memory_type"]
    for name in ("created_at", "accessed_at", "valid_until"):
        if chunk.get(name) is not None:
            r.time(name, chunk[name])
    if isinstance(chunk.get("tags"), list):
        v["tags"] = list(chunk["tags"])
    protection = {k: chunk[k] for k in PROTECTION if k in chunk}
    if protection:
        v["protection"] = protection
    v["dna"] = memoryai.is_dna(chunk)
    if isinstance(chunk.get("embedding"), str):
        try:
            v["embedding"] = list(memoryai.embedding_floats(chunk["embedding"]))
        except ValueError:
            pass
    model = chunk.get("embedding_model") or (bundle_model if "embedding" in v else None)
    if model is not None:
        v["embedding_model"] = model
    if chunk.get("content_hash") is not None:
        v["content_hash"] = chunk["content_hash"]
    outside = {k: jcopy(x) for k, x in chunk.items() if k not in CHUNK}
    if rest or outside:
        v["extensions"] = {"format": FORMAT, "value": rest or {}, **({OUTSIDE: outside} if outside else {})}
    apply(r, found, FORMAT, t)
    return r


def _float32_exact(values: list[float]) -> bool:
    try:
        packed = struct.unpack(f"<{len(values)}f", struct.pack(f"<{len(values)}f", *values))
    except (struct.error, OverflowError, TypeError):
        return False
    return list(packed) == [float(x) for x in values]


def _int_id(text: str | None) -> int | None:
    if text is None or not text.isdigit() or len(text) > 15:
        return None
    return int(text)


def write(doc: Document, ledger: Ledger) -> dict[str, Any]:
    t = table(FORMAT)
    # what the manifest and the ids need of every record, in a pass of its own (canonical.again: a OnePass's records
    # made anew, none held); the pass below writes them, letting each go once written (consuming)
    dims: Counter[int] = Counter()
    models: Counter[str] = Counter()
    wanted: list[int | None] = []
    hashes: Counter[str] = Counter()
    for r in again(doc):
        if r.get("deleted"):
            ledger.note(r.name(doc.source), "deleted", "lost", "a deleted record is not written")
            continue
        if isinstance(r.get("embedding"), list) and r.get("embedding"):
            dims[len(r.get("embedding"))] += 1
        if r.has("embedding_model"):
            models[str(r.get("embedding_model"))] += 1
        wanted.append(_int_id(r.ids.get(FORMAT)) or _int_id(r.key(doc.source)))
        hashes[memoryai.content_hash(r.get("text") or "")] += 1
    dim = dims.most_common(1)[0][0] if dims else 0
    model = models.most_common(1)[0][0] if models else None
    used = Ids()
    # the graph and the other objects first: a streamed checksum (below) takes `agents`, which sorts before `chunks`
    sections = {section: [jcopy(g["item"]) for g in doc.graph + doc.other_objects if g["kind"] == f"{FORMAT}.{section}"]
                for section in GRAPH + OTHERS}
    # inside streaming() the chunks go to a temporary file as they are made, summed into the checksum as they go:
    # the manifest's counts and checksum precede them in the text, so no list of every chunk is held
    chunks = spill("chunks")
    summed = Checksum({s: v for s, v in sections.items() if s < "chunks"}) if isinstance(chunks, Spill) else None
    for r, want in zip((r for r in drain(doc.records) if not r.get("deleted")), wanted, strict=True):
        chunk = _chunk(t, doc, r, want, used, dim, ledger, hashes)
        chunks.append(chunk)
        if summed is not None:
            summed.add(chunk)
    count = len(chunks)
    bundle: dict[str, Any] = {
        "format": memoryai.FORMAT, "version": 1,
        # a blank producer names no implementation, which a bundle's generator must (§3): the ledger says it was lost
        "generator": str(doc.producer) if doc.producer is not None and str(doc.producer).strip() else "memconform-port/1",
        "exported_at": seconds_form(doc.exported_at or now_canonical()),
        "manifest": {"tenant_id": None, "tenant_name": None, "tenant_plan": None, "scope": "full", "since": None,
                     "embedding_model": model or "none", "embedding_dim": dim},
        "chunks": written(chunks),
    }
    place_export_time(ledger, doc, bundle["exported_at"])
    place_producer(ledger, doc, bundle["generator"])
    note_envelope(ledger, doc)
    if doc.subject and doc.subject.get("format") == FORMAT:
        bundle["manifest"].update({k: v for k, v in doc.subject.items() if k != "format"})
        ledger.note_document("subject", "kept", 1)
    elif doc.subject:
        ledger.note_document("subject", "lost", 1)
    bundle.update(sections)
    note_document(ledger, t, "graph", len(doc.graph), sum(1 for g in doc.graph if g["kind"].startswith(FORMAT + ".")))
    note_document(ledger, t, "other_objects", len(doc.other_objects),
                  sum(1 for g in doc.other_objects if g["kind"].startswith(FORMAT + ".")))
    if model is None or not dims:
        ledger.invent("(document)", "manifest.scope, embedding_model, embedding_dim",
                      t.invented_rule("manifest.scope, embedding_model, embedding_dim"))
    return summed.seal(bundle, count) if summed is not None else memoryai.seal(bundle)


class Checksum:
    """§3.6's checksum (memoryai.seal's: the literal reading, Python's numbers) of a bundle whose chunks are summed
    one by one as they are made, never held together: the canonical text is sorted by key, so the hash takes the
    members before `chunks` first (`before`), then each chunk's canonical bytes, then the rest once known. The
    same digest as memoryai.checksum of the whole bundle (tests/test_portability_written.py)."""

    def __init__(self, before: dict[str, Any]) -> None:
        self.before = sorted(before)
        self.hash = hashlib.sha256(b"{")
        for key in self.before:
            self.hash.update(_member(key, before[key]) + b",")
        self.hash.update(b'"chunks":[')
        self.first = True

    def add(self, chunk: dict[str, Any]) -> None:
        self.hash.update(memoryai.canonical_value_bytes(chunk) if self.first else
                         b"," + memoryai.canonical_value_bytes(chunk))
        self.first = False

    def seal(self, bundle: dict[str, Any], count: int) -> dict[str, Any]:
        """memoryai.seal's counts and checksum, with `count` chunks (the bundle's `chunks` is a streamed list)."""
        if sorted(k for k in bundle if k < "chunks") != self.before:  # a member summed before it was known: a bug
            raise RuntimeError(f"the MemoryAI bundle's members before 'chunks' are {sorted(bundle)}, "
                               f"not the {self.before} summed first")
        manifest = bundle.setdefault("manifest", {})
        manifest["counts"] = {s: count if s == "chunks" else len(bundle[s]) for s in memoryai.RECORD_SECTIONS
                              if s == "chunks" or isinstance(bundle.get(s), list)}
        manifest.pop("checksum", None)
        self.hash.update(b"]")
        for key in sorted(k for k in bundle if k > "chunks"):
            self.hash.update(b"," + _member(key, bundle[key]))
        self.hash.update(b"}")
        manifest["checksum"] = self.hash.hexdigest()
        return bundle


def _member(key: str, value: Any) -> bytes:
    """`"key":value` as the canonical text writes a member."""
    return json.dumps(key, ensure_ascii=False).encode("utf-8") + b":" + memoryai.canonical_value_bytes(value)


class Ids(set[int]):
    """The chunk ids given so far, with the largest kept as they are added (a new id is above all of them,
    found in constant time: 100k chunks, not 100k scans of the set)."""

    top = 0

    def add(self, value: int) -> None:
        super().add(value)
        self.top = max(self.top, value)


def _chunk(t: Any, doc: Document, r: Record, want: int | None, used: Ids, dim: int, ledger: Ledger,
           hashes: Counter[str]) -> dict[str, Any]:
    rid = r.name(doc.source)
    p = Placement(t, r, ledger, rid)
    if want is not None and want not in used:
        cid = want
        p.place_id(doc.source, cid, "chunks[].id")
    else:
        cid = max(used.top, len(used)) + 1
        p.new_id("chunks[].id")
    used.add(cid)
    ledger.map_id(rid, str(cid))
    text = p.text("chunks[].content")
    chunk: dict[str, Any] = {"id": cid, "content": text}
    if "text" not in p.handled:
        p.keep("text")
    if hashes[memoryai.content_hash(text)] > 1:  # written all the same: the document holds it, a consumer may not
        ledger.note(rid, "text", "kept", "another record has the same content: a consumer skips it (§3.8)")
        ledger.warnings.append(f"record {rid!r}: another record has the same content, so a MemoryAI consumer "
                               "skips one of them (§3.8)")
    _type(p, chunk)
    _hash(p, chunk, text)
    _embedding(p, chunk, dim)
    if r.has("embedding_model"):
        chunk["embedding_model"] = r.get("embedding_model")
        p.keep("embedding_model")
    if isinstance(r.get("tags"), list) and all(isinstance(x, str) for x in r.get("tags")):
        chunk["tags"] = list(r.get("tags"))
        p.keep("tags")
    elif r.get("tags") is not None:
        p.carry("tags", "not a list of strings")
    _protection(p, chunk)
    for name in ("created_at", "accessed_at", "valid_until"):
        if isinstance(r.get(name), str) and instant(r.get(name)):
            chunk[name] = seconds_form(instant(r.get(name)) or "")
            p.time(name, chunk[name])
    metadata, dropped = without_credentials(p.hatch(chunk, CHUNK, {FORMAT: str(cid)}))
    if dropped:
        ledger.note(rid, "extensions", "lost", f"{dropped} credential-named field(s) left out: \"{NO_CREDENTIALS}\"")
    chunk["metadata"] = metadata
    return chunk


NO_CREDENTIALS = "Bundles MUST NOT include API keys, audit logs, or other credentials."


@functools.lru_cache(maxsize=4096)
def _credential_key(key: str) -> bool:
    """The MemoryAI suite's reading of a key name, remembered: the same few keys recur in every chunk."""
    from memconform.suites.memoryai.credentials import credential_key

    return bool(credential_key(key))


def _has_credentials(value: Any, search: Any) -> bool:
    """Is there anything without_credentials would leave out? (Asked first: most metadata has nothing, and a
    walk that builds nothing is several times cheaper than one that rebuilds every object.)"""
    if isinstance(value, dict):
        return any(isinstance(k, str) and _credential_key(k) and v not in (None, "", [], {}, False, 0)
                   or _has_credentials(v, search) for k, v in value.items())
    if isinstance(value, list):
        return any(_has_credentials(v, search) for v in value)
    return isinstance(value, str) and search(value) is not None


def without_credentials(value: Any) -> tuple[Any, int]:
    """The value with every field the MemoryAI suite reads as a credential left out, and how many were."""
    from memconform.suites.memoryai.credentials import CREDENTIAL_VALUES

    if not _has_credentials(value, CREDENTIAL_VALUES.search):
        return value, 0

    if isinstance(value, dict):
        out, dropped = {}, 0
        for key, item in value.items():
            if isinstance(key, str) and _credential_key(key) and item not in (None, "", [], {}, False, 0):
                dropped += 1
                continue
            if isinstance(item, str) and CREDENTIAL_VALUES.search(item):
                dropped += 1
                continue
            out[key], n = without_credentials(item)
            dropped += n
        return out, dropped
    if isinstance(value, list):
        pairs = [without_credentials(item) for item in value if not (isinstance(item, str) and CREDENTIAL_VALUES.search(item))]
        return [v for v, _ in pairs], sum(n for _, n in pairs) + len(value) - len(pairs)
    return value, 0


def _type(p: Placement, chunk: dict[str, Any]) -> None:
    chunk["memory_type"] = p.write_type("fact", "chunks[].memory_type")


def _hash(p: Placement, chunk: dict[str, Any], text: str) -> None:
    computed = memoryai.content_hash(text)
    given = p.value("content_hash")
    chunk["content_hash"] = computed
    if isinstance(given, str) and given.lower() == computed:  # the same digest in upper-case hex is kept as written
        chunk["content_hash"] = given
        p.keep("content_hash")
    elif given is not None:
        p.carry("content_hash", "not the sha256 of the content as written")
    else:
        p.invent("content_hash", "chunks[].content_hash")


def _embedding(p: Placement, chunk: dict[str, Any], dim: int) -> None:
    values = p.value("embedding")
    if not isinstance(values, list) or not values or not all(isinstance(x, (int, float)) and not isinstance(x, bool) for x in values):
        if values is not None:
            chunk["embedding"] = None
            p.carry("embedding", "not a non-empty list of numbers")
        return
    if len(values) != dim:
        chunk["embedding"] = None
        p.carry("embedding", "a dimension other than the bundle's")
    elif not _float32_exact(values):
        chunk["embedding"] = None
        p.carry("embedding", "float32 cannot hold the values exactly")
    else:
        chunk["embedding"] = memoryai.encode_embedding([float(x) for x in values])
        p.keep("embedding")


def _protection(p: Placement, chunk: dict[str, Any]) -> None:
    protection = p.value("protection")
    if isinstance(protection, dict):
        chunk.update({k: protection[k] for k in PROTECTION if k in protection})
        p.keep("protection")
    dna = p.value("dna")
    if dna is True and not memoryai.is_dna(chunk):
        chunk["is_pinned"] = True
        p.keep("dna", "pinned to stay DNA (§3.7)")
    elif dna is True or dna is False and not memoryai.is_dna(chunk):
        p.keep("dna")
    elif memoryai.is_dna(chunk):  # a type that is DNA in MemoryAI: a protection the source never stated
        p.handled.add("dna")
        p.invented_fields.append("dna")
        p.ledger.note(p.rid, "dna", "invented", f"DNA by its memory_type {chunk.get('memory_type')}")
