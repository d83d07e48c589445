"""Reference MemoryAI Protocol v1 brain: a real producer + consumer on SQLite.

Operations (called by PythonTarget as `method(body, **params)`):
    export({"scope", "since"})        -> sealed Bundle
    export_stream({"scope", "since"}) -> bytes, NDJSON (envelope line, then one line per record)
    import_bundle(bundle)             -> ImportReport (§4); raises Rejected on an invalid envelope
    import_file(raw bytes)            -> same as import_bundle
    spec(None)                        -> bytes, markdown
    decay(None)                       -> {"decayed": n, "deleted": m}   (x-memconform hook)
    delete_chunk({"content_hash": h}) -> {"deleted": 0|1}              (x-memconform hook)
    delete_chunks({"content_hashes": [h, ...]}) -> {"deleted": n}      (x-memconform hook: the run's cleanup)

Each rule sits in a small overridable method so a mutant can break exactly one of them.
Storage is store.py; the producer rules producer.py, the consumer rules
consumer.py; this module holds the operations.
"""

from __future__ import annotations

import json
from typing import Any

from memconform.kit.hostile import strict_loads
from memconform.suites.memoryai.format import is_dna
from memconform.suites.memoryai.reference.consumer import ConsumerHooks
from memconform.suites.memoryai.reference.producer import ProducerHooks
from memconform.suites.memoryai.reference.store import (
    _is_number,
)
from memconform.targets.base import Rejected

__all__ = ["ReferenceBrain"]


class ReferenceBrain(ProducerHooks, ConsumerHooks):
    """Producer and consumer on one store: every operation the suite calls."""

    def export(self, body: Any = None, **params: Any) -> dict[str, Any]:
        return self._seal(self._build(body))

    def export_stream(self, body: Any = None, **params: Any) -> bytes:
        return b"".join(self._stream_lines(self.export(body)))

    def import_bundle(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, (bytes, bytearray)):
            try:
                body = strict_loads(body)  # strict: no duplicate names, NaN, lone surrogates, BOM, deep nesting
            except ValueError as exc:
                raise self._rejection(None, [f"body is not JSON: {exc}"]) from None
        problems = self._envelope_problems(body)
        if problems:
            raise self._rejection(body, problems)
        manifest = body["manifest"]
        match = self._model_matches(manifest)
        report = self._counters()
        warning = self._verify_checksum(body)
        if warning:
            report["warnings"].append(warning)
        if not match:
            report["warnings"].append(
                f"embedding model mismatch: bundle {manifest.get('embedding_model')!r}, local {self.embedding_model!r}; "
                "embeddings dropped, will re-embed lazily")
        with self.lock, self.db:
            self.tenant_id = self._tenant_id_for_import(manifest)
            idmap = self._import_chunks(body, match, report)
            self._import_edges(body, idmap, report)
            self._import_entities(body, report)
            self._import_blobs(body, report)
        return self._report(body, success=True, match=match, counters=report)

    def import_file(self, body: Any = None, **params: Any) -> dict[str, Any]:
        if isinstance(body, str):
            body = body.encode("utf-8")
        return self.import_bundle(body, **params)

    def spec(self, body: Any = None, **params: Any) -> bytes:
        return (
            "# MemoryAI Protocol v1\n\n"
            f"Implementation: {self.generator} (MemoryAI-Protocol-compatible reference).\n\n"
            "Supported conformance levels:\n\n"
            "- Level 1 — Producer\n- Level 2 — Consumer\n- Level 3 — Bidirectional\n\n"
            f"Local embedding model: {self.embedding_model} (dim {self.embedding_dim}). Max bundle version: {self._max_version()}.\n"
        ).encode()

    def _protect(self, chunk: dict[str, Any]) -> bool:
        """§3.7: DNA chunks (union rule) are never decayed or deleted."""
        return is_dna(chunk)

    def decay(self, body: Any = None, **params: Any) -> dict[str, int]:
        decayed = deleted = 0
        with self.lock, self.db:
            rows = self.db.execute("SELECT id, doc FROM chunks WHERE deleted=0").fetchall()
            for cid, doc in rows:
                chunk = json.loads(doc)
                if self._protect(chunk):
                    continue
                score = chunk.get("decay_score")
                score = (float(score) if _is_number(score) else 1.0) * 0.5
                if score < 0.05:
                    self.db.execute("DELETE FROM chunks WHERE id=?", (cid,))
                    deleted += 1
                else:
                    chunk["decay_score"] = score
                    self.db.execute("UPDATE chunks SET doc=? WHERE id=?", (json.dumps(chunk, ensure_ascii=False), cid))
                    decayed += 1
        return {"decayed": decayed, "deleted": deleted}

    def delete_chunk(self, body: Any = None, **params: Any) -> dict[str, int]:
        hash_ = body.get("content_hash") if isinstance(body, dict) else None
        with self.lock, self.db:
            cur = self.db.execute("UPDATE chunks SET deleted=1 WHERE deleted=0 AND (content_hash=? OR "
                                  "json_extract(doc, '$.content_hash')=?)", (hash_, hash_))
        return {"deleted": 1 if cur.rowcount else 0}

    def delete_chunks(self, body: Any = None, **params: Any) -> dict[str, int]:
        hashes = body.get("content_hashes") if isinstance(body, dict) else None
        if not isinstance(hashes, list) or not all(isinstance(h, str) for h in hashes):
            raise Rejected({"error": "content_hashes must be an array of strings"})
        return {"deleted": sum(self.delete_chunk({"content_hash": h})["deleted"] for h in hashes)}

