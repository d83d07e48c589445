"""The MemoryAI reference brain as a consumer (Level 2): envelope and chunk validation, the
duplicate and merge rules of §3.8, and the ImportReport (§4). Each rule is a method a mutant can
override."""

from __future__ import annotations

import json
from typing import Any

from memconform.kit.shared_rules import is_int, parse_datetime
from memconform.suites.memoryai.format import (
    FORMAT,
    TIERS,
    ZONES,
    checksum,
    content_hash,
    decode_embedding,
)
from memconform.suites.memoryai.reference.store import BrainStore, _is_number, _now, _ts
from memconform.targets.base import Rejected


class ConsumerHooks(BrainStore):
    """Checking and storing an imported bundle; the operations are ReferenceBrain's."""

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
            problem = self._entity_problem(ent)
            if problem is not None:
                report["warnings"].append(f"entities[{i}] skipped: {problem}")
                continue
            row = self.db.execute("SELECT doc FROM entities WHERE name=?", (ent["name"],)).fetchone()
            doc = self._merge_entity(json.loads(row[0]), ent) if row else dict(ent)
            self.db.execute("INSERT OR REPLACE INTO entities VALUES (?, ?)", (ent["name"], json.dumps(doc, ensure_ascii=False)))
            report["entities"]["upserted"] += 1

    def _entity_problem(self, ent: Any) -> str | None:
        """Why an entity is skipped: no name, or a field of another type than §3.4's shape gives (stored, it
        would be exported so, and the export would break the shape)."""
        if not isinstance(ent, dict) or not isinstance(ent.get("name"), str) or not ent["name"]:
            return "name is not a non-empty string"
        if "frequency" in ent and not is_int(ent["frequency"]):
            return "frequency is not an integer"
        if "is_dna" in ent and not isinstance(ent["is_dna"], bool):
            return "is_dna is not a boolean"
        for key in ("first_seen", "last_seen"):
            if key in ent and parse_datetime(ent[key], "memoryai") is None:
                return f"{key} is not an ISO-8601 date-time"
        return None

    def _import_blobs(self, bundle: dict[str, Any], report: dict[str, Any]) -> None:
        for section, counter in (("l2_sessions", "inserted"), ("mood_states", "upserted"), ("agents", "upserted")):
            records = bundle.get(section) or []
            for rec in records if isinstance(records, list) else []:
                self.db.execute("INSERT INTO blobs (section, doc) VALUES (?, ?)", (section, json.dumps(rec, ensure_ascii=False)))
                report[section][counter] += 1
