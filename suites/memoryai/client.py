"""Suite-side helpers: the MemoryAI operations over any target, and bundles with unique content."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import (
    Failure,
    Inconclusive,
    NeedsHook,
    SkipCheck,
    TargetError,
    Unsupported,
)
from memconform.kit.shared_rules import now_iso, parse_datetime
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai import reading_kinds, readings
from memconform.targets.base import Reply


@dataclass
class MemoryaiRun:
    """What the MemoryAI checks share during one run (ctx.state(MemoryaiRun))."""

    multipart: str | None = None  # the multipart field name the target accepted (E4)
    written: list[str] = field(default_factory=list)  # content hashes this run imported, deleted at the end
    cleanup_registered: bool = False
    seed: str = "not tried"  # what became of the seed import before the producer checks' export
    models: list[Any] = field(default_factory=list)  # the state machine's models, one per example


def iso(at: dt.datetime, offset_s: int = 0, zone: str = "Z", fraction: bool = False) -> str:
    """One instant in another spelling: `Z`, `+00:00`, `+05:30`, with or without fractional seconds."""
    sign, hours, minutes = (1, 0, 0) if zone == "Z" else (1 if zone[0] == "+" else -1, int(zone[1:3]), int(zone[4:6]))
    tz = dt.timezone(sign * dt.timedelta(hours=hours, minutes=minutes))
    local = (at + dt.timedelta(seconds=offset_s)).astimezone(tz)
    text = local.strftime("%Y-%m-%dT%H:%M:%S") + (".000" if fraction else "")
    return text + ("Z" if zone == "Z" else zone)


def export_body(ctx: CheckContext, scope: str = "full", since: str | None = None) -> dict[str, Any]:
    """The export request (§4 `{scope, since?}`), naming the tenant when the user chose one."""
    body: dict[str, Any] = {"scope": scope}
    if since is not None:
        body["since"] = since
    if ctx.option("tenant"):
        body["tenant_id"] = ctx.option("tenant")
    return body


def export(ctx: CheckContext, scope: str = "full", since: str | None = None) -> dict[str, Any]:
    reply = ctx.target.call("export", export_body(ctx, scope, since))
    ctx.note(f"export scope={scope} -> {reply.status} {reply.http_status or ''} {len(reply.raw)} bytes")
    doc: dict[str, Any] = reply.accepted_json(dict, f"export (scope {scope})")
    return doc


def import_bundle(ctx: CheckContext, bundle: Any, op: str = "import_bundle", remember: bool = True) -> Reply:
    """Import a bundle; its chunks are deleted at the end of the run where the target offers deletion
    (`remember=False` for a bundle the target itself exported: the run must not delete the target's data)."""
    if remember:
        remember_written(ctx, bundle)
    if op == "import_file":
        raw = json.dumps(bundle, ensure_ascii=False).encode("utf-8")
        reply = import_file(ctx, raw)
    else:
        reply = ctx.target.call(op, bundle)
    ctx.note(f"{op} -> {reply.status} {reply.http_status or ''}: {reply.raw[:300].decode('utf-8', 'replace')}")
    return reply


def import_file(ctx: CheckContext, raw: bytes) -> Reply:
    """POST /v1/brain/import/file; the multipart field name is open (errata E4): `file`, else `bundle`.

    The name a target accepted once is used from then on, so a negative request is read by the same field."""
    request = reading_kinds.MultipartImport()
    found = ctx.state(MemoryaiRun).multipart
    names = (found,) if found else readings.accepted_names(ctx, "E4", request)  # the readings the options accept, in order
    replies = []
    for name in names:
        reply = ctx.target.call("import_file", raw=raw, filename="bundle.json", params={"_field": name})
        if reply.ok:
            ctx.state(MemoryaiRun).multipart = name
            readings.observe(ctx, "E4", request, name)
            return reply
        replies.append(reply)
    return replies[0]


def remember_written(ctx: CheckContext, bundle: Any) -> None:
    """Every chunk the run writes is removed at the end, where the target offers deletion (isolation)."""
    if not isinstance(bundle, dict) or not isinstance(bundle.get("chunks"), list):
        return
    run = ctx.state(MemoryaiRun)
    written = run.written
    if not run.cleanup_registered:
        run.cleanup_registered = True
        ctx.cleanup("memoryai chunks this run imported", lambda: _delete_written(ctx, written))
    written.extend(c["content_hash"] if isinstance(c.get("content_hash"), str) else memoryai.content_hash(c["content"])
                   for c in bundle["chunks"]
                   if isinstance(c, dict) and (isinstance(c.get("content_hash"), str) or isinstance(c.get("content"), str)))


DELETE_BATCH = 500  # content hashes per delete_chunks call


def _delete_written(ctx: CheckContext, written: list[str]) -> bool:
    """The run's chunks removed: many a call through delete_chunks, the rest (all, where that hook is not
    offered) one a call through delete_chunk."""
    hashes = list(dict.fromkeys(written))
    try:
        for h in hashes[_deleted_in_batches(ctx, hashes):]:
            if not ctx.target.call("delete_chunk", {"content_hash": h}).ok:
                return False
    except (SkipCheck, TargetError):
        return False  # no deletion hook: the footer says what could not be removed
    return True


def delete_now(ctx: CheckContext, hashes: list[str]) -> bool:
    """Chunks a check wrote removed before it ends (as the run's cleanup does it: many a call where the
    target offers delete_chunks); False where they could not be (they stay until the run's cleanup)."""
    return _delete_written(ctx, hashes)


def _deleted_in_batches(ctx: CheckContext, hashes: list[str]) -> int:
    """How many of `hashes`, from the first, the delete_chunks hook removed (0 where it is not offered)."""
    done = 0
    try:
        while done < len(hashes):
            part = hashes[done:done + DELETE_BATCH]
            if not ctx.target.call("delete_chunks", {"content_hashes": part}).ok:
                break
            done += len(part)
    except Unsupported:
        pass
    return done


def hook(ctx: CheckContext, op: str, body: Any, why: str) -> Reply:
    """Call an x-memconform hook (errata E13); without it the behaviour cannot be observed: inconclusive."""
    try:
        reply = ctx.target.call(op, body)
    except Unsupported as exc:
        raise NeedsHook(why, op, f"errata E13; {exc.reason}") from None
    if not reply.ok:
        raise Inconclusive(f"{why} needs the {op} hook (errata E13), which refused: {reply.raw[:200]!r}")
    return reply


def seed(ctx: CheckContext, bundle: dict[str, Any], why: str) -> Reply:
    """Import the data a check observes; a refused or absent import leaves nothing to observe."""
    try:
        reply = import_bundle(ctx, bundle)
    except Unsupported as exc:
        raise Inconclusive(f"{why} needs data written through import, which the target does not offer: {exc.reason}") from None
    if not reply.ok:
        raise Inconclusive(f"{why}: the target refused the seed import: {reply.raw[:200]!r}")
    return reply


def profile_call(ctx: CheckContext, op: str, body: Any = None, **kw: Any) -> Reply | Failure:
    """An endpoint of the §4 table: on an HTTP target a 404/405/501 is the profile's endpoint missing."""
    try:
        return ctx.target.call(op, body, **kw) if body is not None or not kw else ctx.target.call(op, **kw)
    except Unsupported as exc:
        if ctx.target.kind == "http":
            return Failure("an endpoint of the HTTP profile is not exposed", exc.reason, f"the {op} endpoint of §4")
        raise


def instant(value: Any) -> dt.datetime | None:
    """An ISO-8601 time as an instant (so 'Z', '+00:00' and other offsets compare equal); None if unreadable."""
    return parse_datetime(value, "memoryai")


def own_instant(text: str) -> dt.datetime:
    """An instant from a time this suite wrote (now_iso, iso): always readable."""
    moment = instant(text)
    assert moment is not None, f"the suite wrote a time it cannot read: {text!r}"
    return moment


def target_model(ctx: CheckContext) -> tuple[str, int]:
    """The target's own embedding model and dimension, read from an export of it."""
    def probe() -> tuple[str, int]:
        try:
            manifest = export(ctx, "dna_only").get("manifest", {})
        except TargetError:  # a producer without the dna_only scope: the full export says the same
            manifest = export(ctx, "full").get("manifest", {})
        if not isinstance(manifest, dict):
            raise TargetError(f"cannot learn the target's embedding model: its export manifest is {type(manifest).__name__}, "
                              "not an object")
        model, dim = manifest.get("embedding_model"), manifest.get("embedding_dim")
        if not isinstance(model, str) or not isinstance(dim, int) or isinstance(dim, bool):
            raise TargetError(f"cannot learn the target's embedding model from its export manifest: {model!r}, {dim!r}")
        return model, dim
    return ctx.once("target_model", probe)


def chunk(ctx: CheckContext, label: str, memory_type: str = "fact", **fields: Any) -> dict[str, Any]:
    content = fields.pop("content", None) or f"{ctx.unique(label)} — unique memory ✓ 記憶 🧠"
    record = {
        "id": fields.pop("id", 0),
        "content": content,
        "content_hash": memoryai.content_hash(content),
        "memory_type": memory_type,
        "embedding": None,
        "tags": ["memconform", label],
        "zone": "standard",
        "importance": 0.5,
        "is_pinned": False,
        "decay_score": 0.5,
        "tier": "warm",
        "created_at": now_iso(-3600),
        "accessed_at": now_iso(-60),
        "valid_until": None,
        "metadata": {"memconform_run": ctx.run_id},
    }
    record.update(fields)
    return record


def bundle(ctx: CheckContext, chunks: list[dict[str, Any]], *, model: str | None = None, dim: int | None = None,
           edges: list[dict[str, Any]] | None = None, entities: list[dict[str, Any]] | None = None,
           version: int = 1, tenant_id: str | None = None) -> dict[str, Any]:
    if model is None or dim is None:
        model, dim = target_model(ctx)
    for i, c in enumerate(chunks, 1):
        c["id"] = c.get("id") or i
        c.setdefault("embedding_model", model)
    doc = {
        "format": memoryai.FORMAT,
        "version": version,
        "generator": "memconform/0.1",
        "exported_at": now_iso(),
        "manifest": {
            "tenant_id": tenant_id or str(uuid.uuid4()),
            "tenant_name": "memconform probe tenant",
            "tenant_plan": None,
            "scope": "full",
            "since": None,
            "embedding_model": model,
            "embedding_dim": dim,
        },
        "chunks": chunks,
        "memory_edges": edges or [],
        "entities": entities or [],
        "l2_sessions": [],
        "mood_states": [],
        "agents": [],
    }
    return memoryai.seal(doc)


def vector(dim: int, seed: int) -> list[float]:
    return [((seed * 31 + i * 17) % 97) / 97.0 - 0.5 for i in range(dim)]


# The key of exported chunks that have neither a content_hash nor text: keys are lower-cased, so this one
# (with capitals) equals no hash, and such chunks group together, matching nothing this suite wrote.
NO_HASH = "<NO CONTENT HASH>"
# The key of exported chunks whose content_hash is there but not a string (a number, array, object,
# boolean): it matches no hash either, so comparisons by hash skip them; mistyped_hashes reports them.
MISTYPED_HASH = "<CONTENT HASH NOT A STRING>"


def array_at(doc: dict[str, Any], key: str) -> list[Any]:
    """doc[key] when it is an array, else [] (absent, null or another type: nothing to iterate)."""
    value = doc.get(key)
    return value if isinstance(value, list) else []


def _scalar(value: object) -> bool:
    """A JSON scalar (hashable, so usable as a key); an array or object is not."""
    return value is None or isinstance(value, str | int | float)


def by_hash(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Chunks keyed by their content_hash lower-cased ("<sha256 hex>" of either case); a chunk without one
    (absent, null or "") by the hash of its text, else under NO_HASH; one whose content_hash is not a
    string under MISTYPED_HASH."""
    out: dict[str, list[dict[str, Any]]] = {}
    for c in array_at(doc, "chunks"):
        if isinstance(c, dict):
            h = c.get("content_hash")
            if h is None or h == "":
                key = memoryai.content_hash(c["content"]) if isinstance(c.get("content"), str) else NO_HASH
            else:
                key = h.lower() if isinstance(h, str) else MISTYPED_HASH
            out.setdefault(key, []).append(c)
    return out


def mistyped_hashes(contents: Iterable[str], *exports: dict[str, list[dict[str, Any]]]) -> Iterator[Failure]:
    """A Failure for each exported chunk holding one of `contents` (what the check wrote) whose content_hash
    is not a string: by_hash keys it under MISTYPED_HASH, so the check's comparisons by hash skip it. Each
    content is reported once over the given by_hash results."""
    wanted, seen = set(contents), set()
    for rows in exports:
        for row in rows.get(MISTYPED_HASH, []):
            text = row.get("content")
            if isinstance(text, str) and text in wanted and text not in seen:
                seen.add(text)
                value = row.get("content_hash")
                yield Failure("an exported chunk's content_hash is not a string", value,
                              "a string (sha256 hex)", "$.chunks[?].content_hash",
                              f"{type(value).__name__}, for the chunk {text[:60]!r}")


def entities_by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in array_at(doc, "entities") if isinstance(e, dict) and isinstance(e.get("name"), str)}


def edges_by_hash(doc: dict[str, Any]) -> dict[tuple[str | None, str | None, object], dict[str, Any]]:
    """Edges keyed by the content hashes of their ends (None: no exported chunk has that id, or the id is an
    array or object) and their edge_type as exported (None for an array or object): ids are local to each
    implementation."""
    id_to_hash = {c.get("id"): h for h, cs in by_hash(doc).items() for c in cs if _scalar(c.get("id"))}
    out: dict[tuple[str | None, str | None, object], dict[str, Any]] = {}
    for e in array_at(doc, "memory_edges"):
        if isinstance(e, dict):
            a, b, kind = e.get("chunk_a"), e.get("chunk_b"), e.get("edge_type")
            key = (id_to_hash.get(a) if _scalar(a) else None, id_to_hash.get(b) if _scalar(b) else None,
                   kind if _scalar(kind) else None)
            out[key] = e
    return out


def own_part(doc: dict[str, Any], marker: str) -> dict[str, Any]:
    """The target's export holding only the records this run wrote (those holding `marker`, and the edges
    between such chunks), sealed again in the §3.6 reading its checksum followed (when it followed one):
    what a check imports back of an instance others share, so that it never writes back what others
    wrote, or deleted, between the export and the import."""
    part = {k: v for k, v in doc.items() if k not in memoryai.RECORD_SECTIONS}
    chunks = [ch for ch in array_at(doc, "chunks") if marker in dumps(ch)]
    ids = {ch.get("id") for ch in chunks if _scalar(ch.get("id"))}
    for section in memoryai.RECORD_SECTIONS:
        if isinstance(doc.get(section), list):
            part[section] = [r for r in doc[section] if marker in dumps(r) or section == "memory_edges" and isinstance(r, dict)
                             and _scalar(r.get("chunk_a")) and _scalar(r.get("chunk_b")) and {r["chunk_a"], r["chunk_b"]} <= ids]
    part["manifest"] = dict(doc["manifest"]) if isinstance(doc.get("manifest"), dict) else doc.get("manifest")
    reading = memoryai.checksum_reading_of(doc) if isinstance(part["manifest"], dict) else None
    if reading is not None:
        memoryai.seal(part, *memoryai.CHECKSUM_READINGS[reading])
    return part


def seed_and_export(ctx: CheckContext) -> dict[str, Any]:
    """The document producer checks read: seed known records (where the target imports), then export."""
    ctx.state(MemoryaiRun).seed = "not tried"
    try:
        model, dim = target_model(ctx)
        records = [
            chunk(ctx, "seed-fact", "fact", embedding=memoryai.encode_embedding(vector(dim, 1))),
            chunk(ctx, "seed-dna", "preference", zone="critical"),
            chunk(ctx, "seed-vendor", "x_memconform_note", is_pinned=True),
        ]
        doc = bundle(ctx, records, model=model, dim=dim,
                     edges=[{"chunk_a": 1, "chunk_b": 2, "edge_type": "related", "weight": 0.5, "co_activation_count": 1,
                             "created_at": now_iso(-100), "updated_at": now_iso(-100)}],
                     entities=[{"name": ctx.unique("entity"), "frequency": 1, "first_seen": now_iso(-100),
                                "last_seen": now_iso(-50), "is_dna": False}])
        reply = import_bundle(ctx, doc)
        ctx.note(f"seeded the target before exporting: {reply.status}")
        ctx.state(MemoryaiRun).seed = "accepted" if reply.ok else f"refused ({reply.status} {reply.http_status or ''})"
    except (TargetError, SkipCheck) as exc:  # best effort: a producer-only target still gets its export checked
        ctx.note(f"could not seed the target: {exc}")
        ctx.state(MemoryaiRun).seed = f"not possible: {getattr(exc, 'reason', exc)}"
    return export(ctx, "full")


def nothing_to_examine(ctx: CheckContext, what: str) -> Inconclusive:
    """Why a producer check saw no records: an empty export it could not seed, or an export that lost the seed."""
    state = ctx.state(MemoryaiRun).seed
    if state == "accepted":
        return Inconclusive(f"no {what} to examine: the target exported none, although it accepted the seed import")
    return Inconclusive(f"no {what} to examine: the target exported an empty brain and could not be seeded ({state})")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
