"""Reference MemoryAI Protocol v1 brain: a real producer + consumer on SQLite.

Operations (called by PythonTarget as `method(body, **params)`):
    export({"scope", "since"})        -> sealed Bundle
    export_stream({"scope", "since"}) -> bytes, NDJSON (envelope line, then one line per record)
    import_bundle(bundle)             -> ImportReport (§4); raises Rejected on an invalid envelope
    import_file(raw bytes)            -> same as import_bundle
    spec(None)                        -> bytes, markdown
    decay(None)                       -> {"decayed": n, "deleted": m}   (x-memconform hook)
    delete_chunk({"content_hash": h}) -> {"deleted": 0|1}              (x-memconform hook)

Each rule sits in a small overridable method so a mutant can break exactly one of them.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import uuid
from datetime import UTC, datetime
from typing import Any, TypeGuard

from memconform.formats.common import parse_datetime
from memconform.formats.memoryai import (
    FORMAT,
    MAX_VERSION,
    RECORD_SECTIONS,
    SCOPES,
    TIERS,
    ZONES,
    checksum,
    content_hash,
    decode_embedding,
    embedding_floats,
    encode_embedding,
    is_dna,
)
from memconform.hostile import strict_loads
from memconform.targets.base import Rejected

GENERATOR = "memconform-reference/0.1"
LOCAL_MODEL = "memconform-hash-384"
LOCAL_DIM = 384
BLOB_SECTIONS = ("l2_sessions", "mood_states", "agents")


def _now() -> str:
    return datetime.now(UTC).isoformat().replace("+00:00", "Z")


def _ts(value: Any) -> datetime | None:
    return parse_datetime(value, "memoryai")


def _is_number(v: Any) -> TypeGuard[int | float]:
    return isinstance(v, (int, float)) and not isinstance(v, bool)


class ReferenceBrain:
    generator = GENERATOR
    export_filename = "memoryai-brain.json"  # served as the export's Content-Disposition (§6)
    embedding_model = LOCAL_MODEL
    embedding_dim = LOCAL_DIM

    def __init__(self, path: str = ":memory:") -> None:
        self.lock = threading.RLock()
        self.db = sqlite3.connect(path, check_same_thread=False)
        self.db.executescript(
            """
            CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT);
            CREATE TABLE IF NOT EXISTS chunks (id INTEGER PRIMARY KEY AUTOINCREMENT, content_hash TEXT NOT NULL,
                                               deleted INTEGER NOT NULL DEFAULT 0, doc TEXT NOT NULL);
            CREATE INDEX IF NOT EXISTS chunks_hash ON chunks (content_hash);
            CREATE TABLE IF NOT EXISTS edges (chunk_a INTEGER, chunk_b INTEGER, edge_type TEXT, doc TEXT NOT NULL,
                                              PRIMARY KEY (chunk_a, chunk_b, edge_type));
            CREATE TABLE IF NOT EXISTS entities (name TEXT PRIMARY KEY, doc TEXT NOT NULL);
            CREATE TABLE IF NOT EXISTS blobs (seq INTEGER PRIMARY KEY AUTOINCREMENT, section TEXT, doc TEXT NOT NULL);
            """
        )
        row = self.db.execute("SELECT value FROM meta WHERE key='tenant_id'").fetchone()
        if row is None:
            self.db.execute("INSERT INTO meta VALUES ('tenant_id', ?)", (str(uuid.uuid4()),))
            self.db.commit()
            row = self.db.execute("SELECT value FROM meta WHERE key='tenant_id'").fetchone()
        self.tenant_id: str = row[0]
        self.tenant_name: str | None = "memconform reference"
        self.tenant_plan: str | None = "reference"

    # ======================================================================== producer hooks

    def _max_version(self) -> int:
        return MAX_VERSION

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

    # ======================================================================== consumer hooks

    def _envelope_problems(self, bundle: Any) -> list[str]:
        if not isinstance(bundle, dict):
            return ["bundle is not a JSON object"]
        out = []
        if bundle.get("format") != FORMAT:
            out.append(f"format must be {FORMAT!r}, got {bundle.get('format')!r}")
        version = bundle.get("version")
        if not isinstance(version, int) or isinstance(version, bool):
            out.append(f"version must be an integer, got {version!r}")
        elif version < 1:
            out.append(f"version must be >= 1, got {version}")
        elif version > self._max_version():
            out.append(f"version {version} is newer than the supported maximum {self._max_version()}")
        manifest = bundle.get("manifest")
        if not isinstance(manifest, dict):
            out.append("manifest is missing or not an object")
        else:
            for key in ("scope", "embedding_model", "embedding_dim"):
                if key not in manifest:
                    out.append(f"manifest lacks {key}")
        return out

    def _verify_checksum(self, bundle: dict[str, Any]) -> str | None:
        claimed = bundle["manifest"].get("checksum")
        try:
            ok = claimed is not None and checksum(bundle) == claimed
        except (TypeError, ValueError):
            ok = False
        if ok:
            return None
        return "checksum missing from manifest" if claimed is None else "checksum mismatch: bundle content does not match manifest.checksum"

    def _model_matches(self, manifest: dict[str, Any]) -> bool:
        return manifest.get("embedding_model") == self.embedding_model

    def _handle_model_mismatch(self, chunk: dict[str, Any]) -> dict[str, Any]:
        """§3.5 SHOULD: drop embeddings from another model."""
        return {**chunk, "embedding": None}

    def _validate_chunk(self, chunk: Any, dim: Any) -> str | None:
        if not isinstance(chunk, dict):
            return "chunk is not an object"
        content = chunk.get("content")
        if not isinstance(content, str) or not content:
            return "content is not a non-empty string"
        if not isinstance(chunk.get("memory_type"), str):
            return "memory_type is not a string"
        emb = chunk.get("embedding")
        if emb is not None:
            if not isinstance(emb, str):
                return "embedding is not a base64 string"
            try:
                raw = decode_embedding(emb)
            except ValueError:
                return "embedding is not valid base64"
            if not isinstance(dim, int) or isinstance(dim, bool) or len(raw) != dim * 4:
                return f"embedding is {len(raw)} bytes, expected embedding_dim*4"
        if "zone" in chunk and chunk["zone"] not in ZONES:
            return f"zone {chunk['zone']!r} not in {ZONES}"
        if "tier" in chunk and chunk["tier"] not in TIERS:
            return f"tier {chunk['tier']!r} not in {TIERS}"
        for key in ("importance", "decay_score"):
            if key in chunk and not (_is_number(chunk[key]) and 0 <= chunk[key] <= 1):
                return f"{key} {chunk[key]!r} outside 0..1"
        hash_ = chunk.get("content_hash")
        if hash_ is not None and not isinstance(hash_, str):
            return "content_hash is not a string"
        return None

    def _valid_chunk(self, chunk: Any, manifest: dict[str, Any]) -> bool:
        return self._validate_chunk(chunk, manifest.get("embedding_dim")) is None

    def _count_invalid(self, report: dict[str, Any]) -> None:
        report["chunks"]["skipped_invalid"] += 1

    def _on_invalid_chunk(self, index: int, reason: str, report: dict[str, Any]) -> None:
        self._count_invalid(report)
        report["warnings"].append(f"chunks[{index}] skipped: {reason}")

    def _existing(self, hash_: str) -> int | None:
        """Local id of a live chunk with this content_hash, or None."""
        row = self.db.execute("SELECT id FROM chunks WHERE content_hash=? AND deleted=0 ORDER BY id LIMIT 1",
                              (hash_,)).fetchone()
        return row[0] if row else None

    def _on_duplicate(self, local_id: int, chunk: dict[str, Any], report: dict[str, Any]) -> int:
        """§3.8.1: the existing row is preserved."""
        report["chunks"]["skipped_duplicate"] += 1
        return local_id

    def _storage_key(self, record: dict[str, Any]) -> str:
        return str(record["content_hash"])

    def _insert_chunk(self, hash_: str, doc: dict[str, Any]) -> int:
        cur = self.db.execute("INSERT INTO chunks (content_hash, doc) VALUES (?, ?)",
                              (self._storage_key(doc), json.dumps(doc, ensure_ascii=False)))
        assert cur.lastrowid is not None  # an INSERT always sets it
        return cur.lastrowid

    def _merge_edge(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """§3.8.2: accumulate co_activation_count, MAX weight, refresh updated_at."""
        merged = dict(old)
        merged["co_activation_count"] = int(old.get("co_activation_count") or 0) + int(new.get("co_activation_count") or 0)
        weights = [w for w in (old.get("weight"), new.get("weight")) if _is_number(w)]
        merged["weight"] = max(weights) if weights else old.get("weight")
        merged["updated_at"] = _now()
        return merged

    def _merge_entity(self, old: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
        """§3.8.3: accumulate frequency, latest last_seen, OR is_dna."""
        merged = {**old, **{k: v for k, v in new.items() if k not in old}}
        merged["frequency"] = int(old.get("frequency") or 0) + int(new.get("frequency") or 0)
        seen = [(t, s) for s in (old.get("last_seen"), new.get("last_seen")) if (t := _ts(s)) is not None]
        if seen:
            merged["last_seen"] = max(seen)[1]
        firsts = [(t, s) for s in (old.get("first_seen"), new.get("first_seen")) if (t := _ts(s)) is not None]
        if firsts:
            merged["first_seen"] = min(firsts)[1]
        merged["is_dna"] = bool(old.get("is_dna")) or bool(new.get("is_dna"))
        return merged

    def _tenant_id_for_import(self, manifest: dict[str, Any]) -> str:
        """§3.8: the bundle's tenant_id is informational only; keep our own."""
        return self.tenant_id

    @staticmethod
    def _counters() -> dict[str, Any]:
        return {"chunks": {"inserted": 0, "skipped_duplicate": 0, "skipped_invalid": 0},
                "memory_edges": {"upserted": 0, "skipped": 0}, "entities": {"upserted": 0},
                "l2_sessions": {"inserted": 0}, "mood_states": {"upserted": 0}, "agents": {"upserted": 0},
                "warnings": []}

    def _report(self, body: Any, *, warnings: list[str] | None = None, success: bool = True, match: bool = False,
                counters: dict[str, Any] | None = None) -> dict[str, Any]:
        """The whole ImportReport (§4)."""
        b = body if isinstance(body, dict) else {}
        report: dict[str, Any] = {"bundle_format": b.get("format"), "bundle_version": b.get("version"),
                                  "embedding_model_match": match}
        report.update(counters or self._counters())
        report["warnings"] = list(report.get("warnings") or []) + list(warnings or [])
        return {"success": success, "report": report}

    def _rejection(self, bundle: Any, problems: list[str]) -> Rejected:
        return Rejected(self._report(bundle, warnings=problems, success=False), "; ".join(problems) or "rejected")

    def _import_chunks(self, bundle: dict[str, Any], match: bool, report: dict[str, Any]) -> dict[Any, int]:
        dim = bundle["manifest"].get("embedding_dim")
        idmap: dict[Any, int] = {}
        chunks = bundle.get("chunks") or []
        for i, chunk in enumerate(chunks if isinstance(chunks, list) else []):
            reason = self._validate_chunk(chunk, dim)
            if reason is not None:
                self._on_invalid_chunk(i, reason, report)
                continue
            hash_ = chunk.get("content_hash") or content_hash(chunk["content"])
            existing = self._existing(hash_)
            if existing is not None:
                local = self._on_duplicate(existing, chunk, report)
            else:
                doc = {k: v for k, v in chunk.items() if k != "id"}
                doc["content_hash"] = hash_
                if not match:
                    doc = self._handle_model_mismatch(doc)
                local = self._insert_chunk(hash_, doc)
                report["chunks"]["inserted"] += 1
            if "id" in chunk and isinstance(chunk["id"], (int, str)) and not isinstance(chunk["id"], bool):
                idmap[chunk["id"]] = local
        return idmap

    def _import_edges(self, bundle: dict[str, Any], idmap: dict[Any, int], report: dict[str, Any]) -> None:
        edges = bundle.get("memory_edges") or []
        for edge in edges if isinstance(edges, list) else []:
            if not isinstance(edge, dict):
                report["memory_edges"]["skipped"] += 1
                continue
            a, b = idmap.get(edge.get("chunk_a")), idmap.get(edge.get("chunk_b"))
            etype = edge.get("edge_type")
            if a is None or b is None or not isinstance(etype, str):
                report["memory_edges"]["skipped"] += 1
                continue
            new = {**edge, "chunk_a": a, "chunk_b": b}
            row = self.db.execute("SELECT doc FROM edges WHERE chunk_a=? AND chunk_b=? AND edge_type=?",
                                  (a, b, etype)).fetchone()
            doc = self._merge_edge(json.loads(row[0]), new) if row else new
            self.db.execute("INSERT OR REPLACE INTO edges VALUES (?, ?, ?, ?)",
                            (a, b, etype, json.dumps(doc, ensure_ascii=False)))
            report["memory_edges"]["upserted"] += 1

    def _import_entities(self, bundle: dict[str, Any], report: dict[str, Any]) -> None:
        entities = bundle.get("entities") or []
        for i, ent in enumerate(entities if isinstance(entities, list) else []):
            if not isinstance(ent, dict) or not isinstance(ent.get("name"), str) or not ent["name"]:
                report["warnings"].append(f"entities[{i}] skipped: name is not a non-empty string")
                continue
            row = self.db.execute("SELECT doc FROM entities WHERE name=?", (ent["name"],)).fetchone()
            doc = self._merge_entity(json.loads(row[0]), ent) if row else dict(ent)
            self.db.execute("INSERT OR REPLACE INTO entities VALUES (?, ?)", (ent["name"], json.dumps(doc, ensure_ascii=False)))
            report["entities"]["upserted"] += 1

    def _import_blobs(self, bundle: dict[str, Any], report: dict[str, Any]) -> None:
        for section, counter in (("l2_sessions", "inserted"), ("mood_states", "upserted"), ("agents", "upserted")):
            records = bundle.get(section) or []
            for rec in records if isinstance(records, list) else []:
                self.db.execute("INSERT INTO blobs (section, doc) VALUES (?, ?)", (section, json.dumps(rec, ensure_ascii=False)))
                report[section][counter] += 1

    # ======================================================================== operations

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

    def close(self) -> None:
        with self.lock:
            try:
                self.db.close()
            except sqlite3.Error:
                pass
