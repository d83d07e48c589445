"""Suite-side helpers: the MemoryAI operations over any target, and bundles with unique content."""

from __future__ import annotations

import datetime as dt
import json
import uuid
from typing import Any

from memconform.core.model import Failure, SkipCheck, TargetError
from memconform.formats import memoryai as mai
from memconform.targets.base import Reply

REPORT_COUNTERS = {
    "chunks": ("inserted", "skipped_duplicate", "skipped_invalid"),
    "memory_edges": ("upserted", "skipped"),
    "entities": ("upserted",),
    "l2_sessions": ("inserted",),
    "mood_states": ("upserted",),
    "agents": ("upserted",),
}


def now_iso(offset_s: int = 0) -> str:
    return (dt.datetime.now(dt.UTC) + dt.timedelta(seconds=offset_s)).strftime("%Y-%m-%dT%H:%M:%SZ")


def export(ctx: Any, scope: str = "full", since: str | None = None) -> dict[str, Any]:
    body: dict[str, Any] = {"scope": scope}
    if since is not None:
        body["since"] = since
    reply = ctx.target.call("export", body)
    ctx.note(f"export scope={scope} -> {reply.status} {reply.http_status or ''} {len(reply.raw)} bytes")
    doc: dict[str, Any] = reply.accepted_json(dict, f"export (scope {scope})")
    return doc


def import_bundle(ctx: Any, bundle: Any) -> Reply:
    reply = ctx.target.call("import_bundle", bundle)
    ctx.note(f"import_bundle -> {reply.status} {reply.http_status or ''}: {reply.raw[:300].decode('utf-8', 'replace')}")
    return reply


def report_of(reply: Reply) -> dict[str, Any]:
    """The `report` object of an ImportReport, or a TargetError if there is none to read."""
    body = reply.json()
    if not isinstance(body, dict) or not isinstance(body.get("report"), dict):
        raise TargetError(f"import answered no ImportReport object: {reply.raw[:200]!r}")
    return body["report"]


def counter(report: dict[str, Any], section: str, name: str) -> Any:
    value = report.get(section, {})
    return value.get(name) if isinstance(value, dict) else None


def target_model(ctx: Any) -> tuple[str, int]:
    """The target's own embedding model and dimension, read from an export of it."""
    def probe() -> tuple[str, int]:
        manifest = export(ctx, "dna_only").get("manifest", {})
        model, dim = manifest.get("embedding_model"), manifest.get("embedding_dim")
        if not isinstance(model, str) or not isinstance(dim, int) or isinstance(dim, bool):
            raise TargetError(f"cannot learn the target's embedding model from its export manifest: {model!r}, {dim!r}")
        return model, dim
    return ctx.once("target_model", probe)


def chunk(ctx: Any, label: str, memory_type: str = "fact", **fields: Any) -> dict[str, Any]:
    content = fields.pop("content", None) or f"{ctx.unique(label)} — unique memory ✓ 記憶 🧠"
    record = {
        "id": fields.pop("id", 0),
        "content": content,
        "content_hash": mai.content_hash(content),
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


def bundle(ctx: Any, chunks: list[dict[str, Any]], *, model: str | None = None, dim: int | None = None,
           edges: list[dict[str, Any]] | None = None, entities: list[dict[str, Any]] | None = None,
           version: int = 1, tenant_id: str | None = None) -> dict[str, Any]:
    if model is None or dim is None:
        model, dim = target_model(ctx)
    for i, c in enumerate(chunks, 1):
        c["id"] = c.get("id") or i
        c.setdefault("embedding_model", model)
    doc = {
        "format": mai.FORMAT,
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
    return mai.seal(doc)


def vector(dim: int, seed: int) -> list[float]:
    return [((seed * 31 + i * 17) % 97) / 97.0 - 0.5 for i in range(dim)]


def by_hash(doc: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    out: dict[str, list[dict[str, Any]]] = {}
    for c in doc.get("chunks", []) or []:
        if isinstance(c, dict):
            h = c.get("content_hash") or (mai.content_hash(c["content"]) if isinstance(c.get("content"), str) else None)
            out.setdefault(h, []).append(c)
    return out


def entities_by_name(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {e["name"]: e for e in doc.get("entities", []) or [] if isinstance(e, dict) and isinstance(e.get("name"), str)}


def edges_by_hash(doc: dict[str, Any]) -> dict[tuple[str, str, str], dict[str, Any]]:
    """Edges keyed by the content hashes of their ends: ids are local to each implementation."""
    id_to_hash = {c.get("id"): h for h, cs in by_hash(doc).items() for c in cs}
    out = {}
    for e in doc.get("memory_edges", []) or []:
        if isinstance(e, dict):
            key = (id_to_hash.get(e.get("chunk_a")), id_to_hash.get(e.get("chunk_b")), e.get("edge_type"))
            out[key] = e
    return out


def expect_accepted(reply: Reply, what: str) -> list[Failure]:
    if reply.ok:
        return []
    return [Failure(f"{what}: the consumer refused a conformant bundle", f"{reply.status} {reply.http_status or ''} {reply.raw[:200]!r}", "accepted")]


def seed_and_export(ctx: Any) -> dict[str, Any]:
    """The document producer checks read: seed known records (where the target imports), then export."""
    try:
        model, dim = target_model(ctx)
        records = [
            chunk(ctx, "seed-fact", "fact", embedding=mai.encode_embedding(vector(dim, 1))),
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
    except (TargetError, SkipCheck) as exc:  # best effort: a producer-only target still gets its export checked
        ctx.note(f"could not seed the target: {exc}")
    return export(ctx, "full")


def dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, sort_keys=True)
