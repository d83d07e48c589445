"""The MemoryAI reference brain as a producer (Level 1): which records leave, in which form, and
the sealed bundle or NDJSON stream they leave in. Each rule is a method a mutant can override."""

from __future__ import annotations

import json
from typing import Any

from memconform.suites.memoryai.format import (
    FORMAT,
    RECORD_SECTIONS,
    SCOPES,
    checksum,
    embedding_floats,
    encode_embedding,
    is_dna,
)
from memconform.suites.memoryai.reference.store import BLOB_SECTIONS, BrainStore, _now, _ts
from memconform.targets.base import Rejected


class ProducerHooks(BrainStore):
    """Building and sealing an export (§3, §5); the operations are ReferenceBrain's."""

    def _envelope(self) -> dict[str, Any]:
        return {"format": FORMAT, "version": 1, "generator": self.generator, "exported_at": _now()}

    def _manifest(self, scope: str, since: str | None) -> dict[str, Any]:
        return {"tenant_id": self.tenant_id, "tenant_name": self.tenant_name, "tenant_plan": self.tenant_plan,
                "scope": scope, "since": since, "embedding_model": self.embedding_model,
                "embedding_dim": self.embedding_dim}

    def _exportable(self, chunk: dict[str, Any], deleted: bool, scope: str, since: str | None) -> bool:
        """Deleted chunks never leave; dna_only keeps DNA chunks; since keeps created_at >= since."""
        if deleted:
            return False
        if scope == "dna_only":
            return is_dna(chunk)
        if scope == "since" and since is not None:
            created, cut = _ts(chunk.get("created_at")), _ts(since)
            return cut is None or (created is not None and created >= cut)
        return True

    def _encode_embedding(self, values: list[float]) -> str:
        """§3.5: base64 of little-endian float32."""
        return encode_embedding(values)

    def _exported_chunk(self, chunk: dict[str, Any]) -> dict[str, Any]:
        """The chunk record as exported (embedding re-encoded per §3.5)."""
        record = dict(chunk)
        emb = record.get("embedding")
        if isinstance(emb, str):
            record["embedding"] = self._encode_embedding(list(embedding_floats(emb)))
        return record

    def _export_entity(self, doc: dict[str, Any], scope: str) -> bool:
        return scope != "dna_only" or doc.get("is_dna") is True

    def _exported_entities(self, entities: list[dict[str, Any]]) -> list[dict[str, Any]]:
        return entities

    def _counts_for(self, bundle: dict[str, Any]) -> dict[str, int]:
        return {s: len(bundle.get(s, [])) for s in RECORD_SECTIONS if isinstance(bundle.get(s), list)}

    def _checksum_for(self, bundle: dict[str, Any]) -> str:
        return checksum(bundle)

    def _seal(self, bundle: dict[str, Any]) -> dict[str, Any]:
        manifest = bundle["manifest"]
        manifest["counts"] = self._counts_for(bundle)
        manifest.pop("checksum", None)
        manifest["checksum"] = self._checksum_for(bundle)
        return bundle

    def _build(self, body: Any) -> dict[str, Any]:
        body = body if isinstance(body, dict) else {}
        scope = body.get("scope", "full")
        since_raw = body.get("since")
        if scope not in SCOPES:
            raise Rejected({"success": False, "error": f"unknown scope {scope!r}"}, "bad scope")
        since = _ts(since_raw) if since_raw is not None else None
        if scope == "since" and since_raw is not None and since is None:
            raise Rejected({"success": False, "error": f"since is not an ISO-8601 datetime: {since_raw!r}"}, "bad since")
        with self.lock:
            chunks, exported_ids = [], set()
            for cid, deleted, doc in self.db.execute("SELECT id, deleted, doc FROM chunks ORDER BY id"):
                rec = json.loads(doc)
                if self._exportable(rec, bool(deleted), scope, since_raw if scope == "since" else None):
                    chunks.append(self._exported_chunk({"id": cid, **rec}))
                    exported_ids.add(cid)
            edges = []
            for a, b, doc in self.db.execute("SELECT chunk_a, chunk_b, doc FROM edges ORDER BY chunk_a, chunk_b, edge_type"):
                if a in exported_ids and b in exported_ids:
                    edges.append(json.loads(doc))
            entities = [json.loads(d) for (d,) in self.db.execute("SELECT doc FROM entities ORDER BY name")]
            entities = self._exported_entities([e for e in entities if self._export_entity(e, scope)])
            blobs: dict[str, list[Any]] = {s: [] for s in BLOB_SECTIONS}
            if scope != "dna_only":
                for section, doc in self.db.execute("SELECT section, doc FROM blobs ORDER BY seq"):
                    blobs.setdefault(section, []).append(json.loads(doc))
        bundle = self._envelope()
        bundle["manifest"] = self._manifest(scope, since_raw if scope == "since" else None)
        bundle.update({"chunks": chunks, "memory_edges": edges, "entities": entities, **blobs})
        return bundle

    def _stream_lines(self, bundle: dict[str, Any]) -> list[bytes]:
        envelope = {k: bundle[k] for k in ("format", "version", "generator", "exported_at", "manifest") if k in bundle}
        lines = [json.dumps(envelope, ensure_ascii=False).encode("utf-8") + b"\n"]
        for section in RECORD_SECTIONS:
            for record in bundle.get(section, []):
                lines.append(json.dumps({"section": section, "record": record}, ensure_ascii=False).encode("utf-8") + b"\n")
        return lines
