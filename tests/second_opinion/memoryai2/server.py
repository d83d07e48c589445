"""memoryai2: a blind second implementation of the MemoryAI Protocol v1 (HTTP profile, spec §4).

Written from fixtures/specs/memoryai-protocol-v1.md alone (a copy is served at GET /v1/spec).
Python 3.11 standard library only.  Start:

    python tests/second_opinion/memoryai2/server.py --port 0

The first line of stdout is the base URL (http://127.0.0.1:PORT); it then serves until killed.
Planted bugs: SECOND_OPINION_BUGS=name1,name2 (see bugs.json); state: $SECOND_OPINION_STATE.
See README.md for the readings taken where the spec is silent.
"""

from __future__ import annotations

import argparse
import base64
import binascii
import contextlib
import email.parser
import email.policy
import fcntl
import hashlib
import json
import math
import os
import re
import signal
import struct
import sys
import tempfile
import threading
import uuid
from datetime import UTC, datetime
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

GENERATOR = "memoryai2/1.0.0"
FORMAT = "memoryai-bundle"
MAX_VERSION = 1
DEFAULT_MODEL = "memoryai2-hash-embed-v1"
DEFAULT_DIM = 8
MAX_BODY = 64 * 1024 * 1024

KNOWN_BUGS = frozenset(
    {
        "version_max_off_by_one",
        "checksum_keeps_field",
        "embedding_big_endian",
        "duplicate_overwrites",
        "edge_weight_summed",
        "entity_is_dna_overwritten",
        "pinned_not_dna",
        "exports_deleted",
    }
)

BASE_TYPES = frozenset({"fact", "episodic", "goal", "error", "life_event"})
DNA_TYPES = frozenset({"preference", "decision", "identity", "pitfall", "procedure"})
DNA_ZONES = frozenset({"critical", "important"})
ZONES = frozenset({"standard", "important", "critical", "ephemeral"})
TIERS = frozenset({"hot", "warm", "cold"})
SCOPES = frozenset({"full", "dna_only", "since"})
COLLECTIONS = ("chunks", "memory_edges", "entities", "l2_sessions", "mood_states", "agents")
HEX64 = re.compile(r"^[0-9a-fA-F]{64}$")

DECAY_FACTOR = 0.5  # one decay pass halves a non-DNA chunk's decay_score
DECAY_FLOOR = 0.1  # below this (after the pass) a non-DNA chunk is auto-deleted

# metadata keys never exported (§6: no API keys, audit logs or other credentials)
_SECRET_EXACT = {"authorization", "auth", "bearer", "cookie", "setcookie", "apikeys"}
_SECRET_SUFFIX = (
    "apikey",
    "secret",
    "password",
    "passwd",
    "token",
    "credential",
    "credentials",
    "privatekey",
    "auditlog",
    "auditlogs",
    "sessionkey",
)

BUGS: frozenset[str] = frozenset()
SPEC_PATH = Path(__file__).with_name("spec.md")


# ----------------------------------------------------------------- helpers


def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_time(value: Any) -> datetime | None:
    """ISO-8601 string -> aware datetime (naive taken as UTC); None when not a valid timestamp."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    try:
        parsed = datetime.fromisoformat(text)
    except ValueError:
        return None
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return parsed


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return (isinstance(value, (int, float)) and not isinstance(value, bool)
            and math.isfinite(value))


def canonical_bytes(obj: Any, ensure_ascii: bool = False) -> bytes:
    """§3.6: sorted keys, no whitespace, UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=ensure_ascii,
                      allow_nan=False).encode("utf-8")


def bundle_checksum(bundle: dict) -> str:
    body = json.loads(json.dumps(bundle))
    manifest = body.get("manifest")
    if isinstance(manifest, dict):
        if "checksum_keeps_field" in BUGS:
            manifest["checksum"] = ""
        else:
            manifest.pop("checksum", None)
    return hashlib.sha256(canonical_bytes(body)).hexdigest()


def checksum_candidates(bundle: dict) -> set[str]:
    body = json.loads(json.dumps(bundle))
    body["manifest"].pop("checksum", None)
    return {hashlib.sha256(canonical_bytes(body, ascii_)).hexdigest() for ascii_ in (False, True)}


def _reject_constant(name: str) -> Any:
    raise ValueError(f"non-JSON constant {name}")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):
        raise ValueError(f"number {text} is out of range")
    return value


def loads_strict(raw: bytes) -> Any:
    text = raw.decode("utf-8-sig")
    return json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float)


def encode_embedding(values: list[float]) -> str:
    order = ">" if "embedding_big_endian" in BUGS else "<"
    return base64.b64encode(struct.pack(f"{order}{len(values)}f", *values)).decode("ascii")


def decode_embedding(value: str, dim: int) -> list[float]:
    try:
        raw = base64.b64decode(value.encode("ascii"), validate=True)
    except (binascii.Error, ValueError, UnicodeEncodeError) as exc:
        raise ValueError(f"embedding is not valid base64 ({exc})") from None
    if len(raw) % 4:
        raise ValueError(f"embedding has {len(raw)} bytes, not a whole number of float32 values")
    if len(raw) // 4 != dim:
        raise ValueError(f"embedding has {len(raw) // 4} float32 values, manifest.embedding_dim is {dim}")
    return list(struct.unpack(f"<{dim}f", raw))


def is_dna(chunk: dict, *, for_decay: bool = False) -> bool:
    """§3.7: memory_type in DNA_TYPES, or zone critical/important, or is_pinned; any suffices."""
    if chunk.get("memory_type") in DNA_TYPES:
        return True
    if for_decay and "pinned_not_dna" in BUGS:
        return False
    return chunk.get("zone") in DNA_ZONES or chunk.get("is_pinned") is True


def _secret_key(key: str) -> bool:
    norm = re.sub(r"[^a-z0-9]", "", key.lower())
    return norm in _SECRET_EXACT or norm.endswith(_SECRET_SUFFIX)


def scrub(value: Any) -> Any:
    """Drop credential-looking keys (and 'Bearer ...' strings) from exported metadata."""
    if isinstance(value, dict):
        return {k: scrub(v) for k, v in value.items() if not _secret_key(str(k))}
    if isinstance(value, list):
        return [scrub(v) for v in value if not (isinstance(v, str) and v.lower().startswith("bearer "))]
    if isinstance(value, str) and value.lower().startswith("bearer "):
        return "[redacted]"
    return value


class BadRequest(Exception):
    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status
        self.message = message
        self.report: dict | None = None


# ----------------------------------------------------------------- state store


class Store:
    """One brain (tenant) in STATE/state.json, guarded by flock on STATE/state.lock, atomic replace."""

    def __init__(self, folder: Path):
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.path = folder / "state.json"
        self.lock_path = folder / "state.lock"
        self._thread_lock = threading.Lock()

    @staticmethod
    def _empty() -> dict:
        return {
            "tenant_id": str(uuid.uuid4()),
            "tenant_name": None,
            "tenant_plan": None,
            "next_chunk_id": 1,
            "chunks": [],
            "edges": [],
            "entities": {},
            "l2_sessions": [],
            "mood_states": {},
            "agents": {},
        }

    @contextlib.contextmanager
    def transaction(self, write: bool):
        """Exclusive flock for the whole read-modify-write; the file is replaced atomically."""
        with self._thread_lock, open(self.lock_path, "a+") as lock_file:
            fcntl.flock(lock_file.fileno(), fcntl.LOCK_EX)
            try:
                try:
                    state, created = json.loads(self.path.read_text("utf-8")), False
                except FileNotFoundError:
                    state, created = self._empty(), True
                box = {"state": state}
                yield box
                if write or created:
                    self._save(box["state"])
            finally:
                fcntl.flock(lock_file.fileno(), fcntl.LOCK_UN)

    def _save(self, state: dict) -> None:
        fd, tmp = tempfile.mkstemp(prefix=".state.", suffix=".tmp", dir=self.folder)
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                json.dump(state, handle, ensure_ascii=False, separators=(",", ":"))
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise


# ----------------------------------------------------------------- the brain


class Brain:
    def __init__(self, store: Store, model: str, dim: int):
        self.store = store
        self.model = model
        self.dim = dim

    # ---------------- export

    def _export_chunk(self, chunk: dict) -> dict:
        emb = chunk.get("embedding")
        return {
            "id": chunk["id"],
            "content": chunk["content"],
            "content_hash": chunk["content_hash"],
            "memory_type": chunk["memory_type"],
            "embedding": encode_embedding(emb) if emb is not None else None,
            "embedding_model": self.model,
            "tags": list(chunk["tags"]),
            "zone": chunk["zone"],
            "importance": chunk["importance"],
            "is_pinned": chunk["is_pinned"],
            "decay_score": chunk["decay_score"],
            "tier": chunk["tier"],
            "created_at": chunk["created_at"],
            "accessed_at": chunk["accessed_at"],
            "valid_until": chunk["valid_until"],
            "metadata": scrub(chunk["metadata"]),
        }

    @staticmethod
    def _record_time(rec: dict) -> datetime | None:
        for key in ("updated_at", "ended_at", "created_at", "started_at", "timestamp", "recorded_at"):
            when = parse_time(rec.get(key))
            if when is not None:
                return when
        return None

    def build_bundle(self, request: Any) -> dict:
        if request is None:
            request = {}
        if not isinstance(request, dict):
            raise BadRequest(400, "export request body must be a JSON object {scope, since?}")
        scope = request.get("scope")
        if scope is None:  # absent scope: "since" when a since is given, else "full"
            scope = "since" if request.get("since") is not None else "full"
        if scope not in SCOPES:
            raise BadRequest(422, f"scope must be one of full, dna_only, since (got {scope!r})")
        since_raw = request.get("since")
        since = None
        if scope == "since":
            since = parse_time(since_raw)
            if since is None:
                raise BadRequest(422, "scope 'since' needs 'since' as an ISO-8601 datetime")
        with self.store.transaction(write=False) as box:
            state = box["state"]
        chunks = [c for c in state["chunks"] if not c.get("deleted") or "exports_deleted" in BUGS]
        edges = list(state["edges"])
        entities = list(state["entities"].values())
        sessions = list(state["l2_sessions"])
        moods = list(state["mood_states"].values())
        agents = list(state["agents"].values())
        if scope == "dna_only":
            chunks = [c for c in chunks if is_dna(c)]
            entities = [e for e in entities if e.get("is_dna") is True]
            sessions, moods = [], []
        elif scope == "since":
            chunks = [c for c in chunks if (parse_time(c["created_at"]) or since) >= since]
            entities = [e for e in entities
                        if (parse_time(e.get("last_seen")) or parse_time(e.get("first_seen")) or since) >= since]
            sessions = [s for s in sessions if (self._record_time(s) or since) >= since]
            moods = [m for m in moods if (self._record_time(m) or since) >= since]
        ids = {c["id"] for c in chunks}
        edges = [e for e in edges if e["chunk_a"] in ids and e["chunk_b"] in ids]
        body = {
            "chunks": [self._export_chunk(c) for c in chunks],
            "memory_edges": [dict(e) for e in edges],
            "entities": [{k: v for k, v in e.items() if v is not None} for e in entities],
            "l2_sessions": [scrub(s) for s in sessions],
            "mood_states": [scrub(m) for m in moods],
            "agents": [scrub(a) for a in agents],
        }
        bundle = {
            "format": FORMAT,
            "version": MAX_VERSION,
            "generator": GENERATOR,
            "exported_at": now_iso(),
            "manifest": {
                "tenant_id": state["tenant_id"],
                "tenant_name": state.get("tenant_name"),
                "tenant_plan": state.get("tenant_plan"),
                "scope": scope,
                "since": since_raw if scope == "since" else None,
                "embedding_model": self.model,
                "embedding_dim": self.dim,
                "counts": {name: len(body[name]) for name in COLLECTIONS},
            },
            **body,
        }
        bundle["manifest"]["checksum"] = bundle_checksum(bundle)
        return bundle

    # ---------------- import

    @staticmethod
    def empty_report(fmt: Any = None, version: Any = None) -> dict:
        return {
            "bundle_format": fmt if isinstance(fmt, str) else None,
            "bundle_version": version if is_int(version) else None,
            "embedding_model_match": False,
            "chunks": {"inserted": 0, "skipped_duplicate": 0, "skipped_invalid": 0},
            "memory_edges": {"upserted": 0, "skipped": 0},
            "entities": {"upserted": 0},
            "l2_sessions": {"inserted": 0},
            "mood_states": {"upserted": 0},
            "agents": {"upserted": 0},
            "warnings": [],
        }

    @staticmethod
    def validate_envelope(bundle: Any) -> None:
        """§3.1; raises BadRequest(422) for a Bundle that must be rejected as a whole."""
        if not isinstance(bundle, dict):
            raise BadRequest(422, "a Bundle must be a JSON object")
        if "format" not in bundle:
            raise BadRequest(422, "missing required field 'format'")
        if bundle["format"] != FORMAT:
            raise BadRequest(422, f"format must be the literal string {FORMAT!r}")
        if "version" not in bundle:
            raise BadRequest(422, "missing required field 'version'")
        version = bundle["version"]
        if not is_int(version) or version < 1:
            raise BadRequest(422, "version must be an integer >= 1")
        limit = MAX_VERSION + 1 if "version_max_off_by_one" in BUGS else MAX_VERSION
        if version > limit:
            raise BadRequest(422, f"unsupported bundle version {version} (maximum supported: {MAX_VERSION})")
        manifest = bundle.get("manifest")
        if "manifest" not in bundle:
            raise BadRequest(422, "missing required field 'manifest'")
        if not isinstance(manifest, dict):
            raise BadRequest(422, "manifest must be an object")
        for key in ("scope", "embedding_model", "embedding_dim"):
            if key not in manifest:
                raise BadRequest(422, f"manifest is missing required field {key!r}")
        if manifest["scope"] not in SCOPES:
            raise BadRequest(422, "manifest.scope must be one of full, dna_only, since")
        if not isinstance(manifest["embedding_model"], str):
            raise BadRequest(422, "manifest.embedding_model must be a string")
        dim = manifest["embedding_dim"]
        if not is_int(dim) or dim < 1:
            raise BadRequest(422, "manifest.embedding_dim must be a positive integer")
        for name in COLLECTIONS:
            if name in bundle and not isinstance(bundle[name], list):
                raise BadRequest(422, f"{name} must be an array")

    def _check_chunk(self, rec: Any, dim: int) -> tuple[dict | None, str | None, list[float] | None]:
        """Validate one ChunkRecord; returns (normalized fields, error, decoded embedding)."""
        if not isinstance(rec, dict):
            return None, "not an object", None
        content = rec.get("content")
        if not isinstance(content, str) or not content.strip():
            return None, "content (REQUIRED) missing or not a non-empty string", None
        mtype = rec.get("memory_type")
        if not isinstance(mtype, str) or not (mtype in BASE_TYPES or mtype in DNA_TYPES
                                              or (mtype.startswith("x_") and len(mtype) > 2)):
            return None, f"memory_type {mtype!r} is missing or not a recognised / x_-prefixed value", None
        out: dict = {"content": content, "memory_type": mtype}

        def opt(key: str) -> Any:
            return rec.get(key)

        chash = opt("content_hash")
        if chash is None:
            chash = hashlib.sha256(content.encode("utf-8")).hexdigest()
        elif not isinstance(chash, str) or not HEX64.match(chash):
            return None, "content_hash is not a sha256 hex digest", None
        out["content_hash"] = chash  # kept as written; compared case-insensitively
        if chash.lower() != hashlib.sha256(content.encode("utf-8")).hexdigest():
            out["_hash_note"] = "content_hash differs from sha256(content); kept as declared"
        if opt("id") is not None and not is_int(opt("id")):
            return None, "id is not an integer", None
        tags = opt("tags")
        if tags is not None and (not isinstance(tags, list) or not all(isinstance(t, str) for t in tags)):
            return None, "tags is not an array of strings", None
        out["tags"] = list(tags or [])
        zone = opt("zone")
        if zone is not None and zone not in ZONES:
            return None, f"zone {zone!r} is not one of standard, important, critical, ephemeral", None
        out["zone"] = zone or "standard"
        tier = opt("tier")
        if tier is not None and tier not in TIERS:
            return None, f"tier {tier!r} is not one of hot, warm, cold", None
        out["tier"] = tier or "hot"
        for key, default in (("importance", 0.5), ("decay_score", 1.0)):
            val = opt(key)
            if val is not None and (not is_number(val) or not 0 <= val <= 1):
                return None, f"{key} is not a number in 0..1", None
            out[key] = default if val is None else val
        pinned = opt("is_pinned")
        if pinned is not None and not isinstance(pinned, bool):
            return None, "is_pinned is not a boolean", None
        out["is_pinned"] = bool(pinned)
        for key in ("created_at", "accessed_at", "valid_until"):
            val = opt(key)
            if val is not None and parse_time(val) is None:
                return None, f"{key} is not an ISO-8601 datetime", None
        stamp = now_iso()
        out["created_at"] = opt("created_at") or stamp
        out["accessed_at"] = opt("accessed_at") or out["created_at"]
        out["valid_until"] = opt("valid_until")
        meta = opt("metadata")
        if meta is not None and not isinstance(meta, dict):
            return None, "metadata is not an object", None
        out["metadata"] = meta or {}
        cmodel = opt("embedding_model")
        if cmodel is not None and not isinstance(cmodel, str):
            return None, "embedding_model is not a string", None
        out["_chunk_model"] = cmodel
        emb = opt("embedding")
        vector = None
        if emb is not None:
            if not isinstance(emb, str):
                return None, "embedding is neither null nor a base64 string", None
            try:
                vector = decode_embedding(emb, dim)
            except ValueError as exc:
                return None, str(exc), None
        return out, None, vector

    def import_bundle(self, bundle: Any, extra_warnings: list[str] | None = None) -> dict:
        try:
            self.validate_envelope(bundle)
        except BadRequest as exc:
            if isinstance(bundle, dict):
                exc.report = self.empty_report(bundle.get("format"), bundle.get("version"))
            raise
        manifest = bundle["manifest"]
        report = self.empty_report(bundle["format"], bundle["version"])
        warnings: list[str] = report["warnings"]
        warnings.extend(extra_warnings or [])
        dim = manifest["embedding_dim"]
        model_match = manifest["embedding_model"] == self.model
        report["embedding_model_match"] = model_match
        keep_embeddings = model_match and dim == self.dim
        if not model_match:
            warnings.append(
                f"embedding model mismatch: bundle {manifest['embedding_model']!r}, local {self.model!r}; "
                "embeddings dropped (null), to be re-embedded lazily")
        elif dim != self.dim:
            warnings.append(f"embedding_dim {dim} differs from local {self.dim}; embeddings dropped")
        # §3.6 checksum: verify, warn (never reject)
        declared = manifest.get("checksum")
        if declared is None:
            warnings.append("manifest.checksum absent: integrity not verified")
        elif not isinstance(declared, str) or declared.lower() not in checksum_candidates(bundle):
            warnings.append("manifest.checksum mismatch: the bundle does not match its declared checksum")
        counts = manifest.get("counts")
        if isinstance(counts, dict):
            for name in COLLECTIONS:
                if name in counts and counts[name] != len(bundle.get(name) or []):
                    warnings.append(f"manifest.counts.{name} is {counts[name]!r} but the bundle holds "
                                    f"{len(bundle.get(name) or [])}")
        elif counts is not None:
            warnings.append("manifest.counts is not an object")
        # manifest.tenant_id is informational only (§3.8): never adopted, never stored.
        with self.store.transaction(write=True) as box:
            state = box["state"]
            self._merge(state, bundle, report, keep_embeddings)
        report["embedding_model_match"] = model_match
        return report

    def _merge(self, state: dict, bundle: dict, report: dict, keep_embeddings: bool) -> None:
        warnings = report["warnings"]
        dim = bundle["manifest"]["embedding_dim"]
        by_hash = {c["content_hash"].lower(): c for c in state["chunks"]}
        id_map: dict[int, int] = {}
        stamp = now_iso()
        crep = report["chunks"]
        for index, rec in enumerate(bundle.get("chunks") or []):
            fields, error, vector = self._check_chunk(rec, dim)
            if error:
                crep["skipped_invalid"] += 1
                warnings.append(f"chunks[{index}] skipped: {error}")
                continue
            src_id = rec.get("id")
            chunk_model = fields.pop("_chunk_model")
            note = fields.pop("_hash_note", None)
            if note:
                warnings.append(f"chunks[{index}]: {note}")
            existing = by_hash.get(fields["content_hash"].lower())
            if existing is not None:
                crep["skipped_duplicate"] += 1
                if "duplicate_overwrites" in BUGS:
                    for key, value in fields.items():
                        if key not in ("content_hash",):
                            existing[key] = value
                if src_id is not None:
                    id_map.setdefault(src_id, existing["id"])
                continue
            if vector is not None and (not keep_embeddings or (chunk_model not in (None, self.model))):
                vector = None
            chunk = {"id": state["next_chunk_id"], **fields, "embedding": vector}
            state["next_chunk_id"] += 1
            state["chunks"].append(chunk)
            by_hash[chunk["content_hash"].lower()] = chunk
            crep["inserted"] += 1
            if src_id is not None:
                id_map.setdefault(src_id, chunk["id"])

        erep = report["memory_edges"]
        edge_index = {(e["chunk_a"], e["chunk_b"], e["edge_type"]): e for e in state["edges"]}
        for index, rec in enumerate(bundle.get("memory_edges") or []):
            error = None
            if not isinstance(rec, dict):
                error = "not an object"
            elif not is_int(rec.get("chunk_a")) or not is_int(rec.get("chunk_b")):
                error = "chunk_a/chunk_b are not integers"
            elif not isinstance(rec.get("edge_type"), str) or not rec["edge_type"]:
                error = "edge_type is not a non-empty string"
            elif rec.get("weight") is not None and not is_number(rec["weight"]):
                error = "weight is not a number"
            elif rec.get("co_activation_count") is not None and (
                    not is_int(rec["co_activation_count"]) or rec["co_activation_count"] < 0):
                error = "co_activation_count is not a non-negative integer"
            elif any(rec.get(k) is not None and parse_time(rec[k]) is None for k in ("created_at", "updated_at")):
                error = "created_at/updated_at is not an ISO-8601 datetime"
            elif rec["chunk_a"] not in id_map or rec["chunk_b"] not in id_map:
                error = "chunk_a/chunk_b does not name a chunk of this bundle"
            if error:
                erep["skipped"] += 1
                warnings.append(f"memory_edges[{index}] skipped: {error}")
                continue
            key = (id_map[rec["chunk_a"]], id_map[rec["chunk_b"]], rec["edge_type"])
            weight = rec.get("weight")
            count = rec.get("co_activation_count") or 0
            edge = edge_index.get(key)
            if edge is None:
                edge = {
                    "chunk_a": key[0], "chunk_b": key[1], "edge_type": key[2],
                    "weight": 0.0 if weight is None else weight,
                    "co_activation_count": count,
                    "created_at": rec.get("created_at") or stamp,
                    "updated_at": rec.get("updated_at") or stamp,
                }
                state["edges"].append(edge)
                edge_index[key] = edge
            else:
                edge["co_activation_count"] += count
                if weight is not None:
                    if "edge_weight_summed" in BUGS:
                        edge["weight"] = edge["weight"] + weight
                    else:
                        edge["weight"] = max(edge["weight"], weight)
                edge["updated_at"] = stamp
            erep["upserted"] += 1

        entities = state["entities"]
        for index, rec in enumerate(bundle.get("entities") or []):
            error = None
            if not isinstance(rec, dict):
                error = "not an object"
            elif not isinstance(rec.get("name"), str) or not rec["name"]:
                error = "name (REQUIRED) missing or not a non-empty string"
            elif rec.get("frequency") is not None and (not is_int(rec["frequency"]) or rec["frequency"] < 0):
                error = "frequency is not a non-negative integer"
            elif rec.get("is_dna") is not None and not isinstance(rec["is_dna"], bool):
                error = "is_dna is not a boolean"
            elif any(rec.get(k) is not None and parse_time(rec[k]) is None for k in ("first_seen", "last_seen")):
                error = "first_seen/last_seen is not an ISO-8601 datetime"
            if error:
                warnings.append(f"entities[{index}] skipped: {error}")
                continue
            name = rec["name"]
            cur = entities.get(name)
            incoming_dna = rec.get("is_dna") is True
            if cur is None:
                entities[name] = {
                    "name": name,
                    "frequency": rec.get("frequency") or 0,
                    "first_seen": rec.get("first_seen"),
                    "last_seen": rec.get("last_seen"),
                    "is_dna": incoming_dna,
                }
            else:
                cur["frequency"] += rec.get("frequency") or 0
                cur["last_seen"] = _pick_time(cur.get("last_seen"), rec.get("last_seen"), latest=True)
                cur["first_seen"] = _pick_time(cur.get("first_seen"), rec.get("first_seen"), latest=False)
                if "entity_is_dna_overwritten" in BUGS:
                    cur["is_dna"] = incoming_dna
                else:
                    cur["is_dna"] = bool(cur.get("is_dna")) or incoming_dna
            report["entities"]["upserted"] += 1

        seen_sessions = {canonical_bytes(s) for s in state["l2_sessions"]}
        for index, rec in enumerate(bundle.get("l2_sessions") or []):
            if not isinstance(rec, dict):
                warnings.append(f"l2_sessions[{index}] skipped: not an object")
                continue
            key = canonical_bytes(rec)
            if key in seen_sessions:
                continue
            seen_sessions.add(key)
            state["l2_sessions"].append(rec)
            report["l2_sessions"]["inserted"] += 1

        for name, keys in (("mood_states", ("id",)), ("agents", ("id", "agent_id", "name"))):
            table = state[name]
            for index, rec in enumerate(bundle.get(name) or []):
                if not isinstance(rec, dict):
                    warnings.append(f"{name}[{index}] skipped: not an object")
                    continue
                key = next((f"{k}={json.dumps(rec[k], sort_keys=True)}" for k in keys
                            if rec.get(k) is not None), None)
                if key is None:
                    key = "record=" + canonical_bytes(rec).decode("utf-8")
                table[key] = {**table.get(key, {}), **rec}
                report[name]["upserted"] += 1

    # ---------------- hooks

    def decay(self) -> dict:
        result: dict = {"ran": True, "decayed": [], "deleted": [], "protected": [], "factor": DECAY_FACTOR,
                        "floor": DECAY_FLOOR}
        now = datetime.now(UTC)
        with self.store.transaction(write=True) as box:
            state = box["state"]
            keep = []
            removed_ids = set()
            for chunk in state["chunks"]:
                if chunk.get("deleted"):
                    keep.append(chunk)
                    continue
                if is_dna(chunk, for_decay=True):
                    result["protected"].append(chunk["content_hash"])
                    keep.append(chunk)
                    continue
                score = round(float(chunk["decay_score"]) * DECAY_FACTOR, 6)
                expiry = parse_time(chunk.get("valid_until"))
                if score < DECAY_FLOOR or (expiry is not None and expiry <= now):
                    result["deleted"].append(chunk["content_hash"])
                    removed_ids.add(chunk["id"])
                    continue
                chunk["decay_score"] = score
                result["decayed"].append(chunk["content_hash"])
                keep.append(chunk)
            state["chunks"] = keep
            state["edges"] = [e for e in state["edges"]
                              if e["chunk_a"] not in removed_ids and e["chunk_b"] not in removed_ids]
        result["counts"] = {k: len(result[k]) for k in ("decayed", "deleted", "protected")}
        return result

    def delete_chunk(self, body: Any) -> dict:
        if not isinstance(body, dict) or not isinstance(body.get("content_hash"), str) or not body["content_hash"]:
            raise BadRequest(400, 'body must be {"content_hash": "<sha256 hex>"}')
        target = body["content_hash"].lower()
        with self.store.transaction(write=True) as box:
            state = box["state"]
            hits = [c for c in state["chunks"] if c["content_hash"].lower() == target and not c.get("deleted")]
            if "exports_deleted" in BUGS:
                for chunk in hits:
                    chunk["deleted"] = True
            else:
                ids = {c["id"] for c in hits}
                state["chunks"] = [c for c in state["chunks"] if c["id"] not in ids]
                state["edges"] = [e for e in state["edges"] if e["chunk_a"] not in ids and e["chunk_b"] not in ids]
        return {"deleted": bool(hits), "content_hash": target, "count": len(hits)}


def _pick_time(current: Any, incoming: Any, *, latest: bool) -> Any:
    a, b = parse_time(current), parse_time(incoming)
    if b is None:
        return current
    if a is None:
        return incoming
    if latest:
        return incoming if b > a else current
    return incoming if b < a else current


# ----------------------------------------------------------------- multipart


def extract_upload(content_type: str, body: bytes) -> tuple[bytes, str | None]:
    """Return (file bytes, filename) from a multipart/form-data body, or the raw body otherwise."""
    if not content_type.lower().startswith("multipart/"):
        return body, None
    message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
        b"Content-Type: " + content_type.encode("latin-1") + b"\r\nMIME-Version: 1.0\r\n\r\n" + body)
    if not message.is_multipart():
        raise BadRequest(400, "malformed multipart body")
    parts = [p for p in message.iter_parts()]
    if not parts:
        raise BadRequest(400, "multipart body holds no part")
    chosen = None
    for pred in (lambda p: p.get_param("name", header="content-disposition") in ("file", "bundle"),
                 lambda p: p.get_filename() is not None,
                 lambda p: True):
        chosen = next((p for p in parts if pred(p)), None)
        if chosen is not None:
            break
    payload = chosen.get_payload(decode=True)
    if payload is None:
        payload = b""
    return payload, chosen.get_filename()


# ----------------------------------------------------------------- HTTP


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "memoryai2/1.0"
    brain: Brain  # set on the class at start-up

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - quiet: never log content
        return

    def _read_body(self) -> bytes:
        if "chunked" in self.headers.get("Transfer-Encoding", "").lower():
            chunks, total = [], 0
            while True:
                line = self.rfile.readline(65537)
                size = int(line.split(b";")[0].strip() or b"0", 16)
                if size == 0:
                    while self.rfile.readline(65537) not in (b"\r\n", b"\n", b""):
                        pass
                    break
                data = self.rfile.read(size)
                self.rfile.readline(65537)
                total += size
                if total <= MAX_BODY:
                    chunks.append(data)
            if total > MAX_BODY:
                raise BadRequest(413, "request body too large")
            return b"".join(chunks)
        try:
            length = int(self.headers.get("Content-Length") or 0)
        except ValueError:
            self.close_connection = True
            raise BadRequest(400, "bad Content-Length") from None
        if length > MAX_BODY:
            remaining = length
            while remaining > 0:
                got = self.rfile.read(min(remaining, 1 << 20))
                if not got:
                    break
                remaining -= len(got)
            raise BadRequest(413, "request body too large")
        return self.rfile.read(length) if length > 0 else b""

    def _send(self, status: int, payload: bytes, content_type: str, extra: dict | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(payload)))
        self.send_header("Cache-Control", "no-store")
        for key, value in (extra or {}).items():
            self.send_header(key, value)
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def _json(self, status: int, obj: Any, extra: dict | None = None) -> None:
        data = json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        self._send(status, data, "application/json; charset=utf-8", extra)

    def _error(self, status: int, message: str) -> None:
        self._json(status, {"success": False, "error": {"code": HTTPStatus(status).phrase.lower().replace(" ", "_"),
                                                        "message": message}})

    def _parse_json(self, raw: bytes, *, empty_ok: bool) -> Any:
        if not raw.strip():
            if empty_ok:
                return None
            raise BadRequest(400, "empty request body")
        try:
            return loads_strict(raw)
        except (UnicodeDecodeError, ValueError) as exc:
            raise BadRequest(400, f"request body is not valid JSON ({exc.__class__.__name__})") from None

    ROUTES = {
        "/v1/brain/export": "POST",
        "/v1/brain/export/stream": "POST",
        "/v1/brain/import": "POST",
        "/v1/brain/import/file": "POST",
        "/v1/spec": "GET",
        "/v1/x-memconform/decay": "POST",
        "/v1/x-memconform/delete": "POST",
    }

    def _dispatch(self) -> None:
        try:
            raw = self._read_body()
        except BadRequest as exc:
            self._error(exc.status, exc.message)
            return
        path = self.path.split("?", 1)[0].rstrip("/") or "/"
        method = self.ROUTES.get(path)
        if method is None:
            self._error(404, f"no such endpoint {path}")
            return
        if self.command != method and not (method == "GET" and self.command == "HEAD"):
            self.send_response(405)
            data = json.dumps({"success": False, "error": {"code": "method_not_allowed",
                                                           "message": f"use {method}"}}).encode()
            self.send_header("Allow", method)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
            return
        try:
            self._route(path, raw)
        except BadRequest as exc:
            if path.startswith("/v1/brain/import"):
                report = exc.report or Brain.empty_report()
                report["warnings"].append(exc.message)
                self._json(exc.status, {"success": False, "error": {"code": "invalid_bundle" if exc.status == 422
                                                                    else "bad_request", "message": exc.message},
                                        "report": report})
            else:
                self._error(exc.status, exc.message)
        except Exception as exc:  # pragma: no cover - last resort, keeps the connection sane
            self._error(500, f"internal error: {exc.__class__.__name__}")

    def _route(self, path: str, raw: bytes) -> None:
        brain = self.brain
        if path == "/v1/spec":
            accept = self.headers.get("Accept", "")
            text = SPEC_PATH.read_text("utf-8")
            if "application/json" in accept and "text/" not in accept:
                self._json(200, {"protocol": "MemoryAI Protocol", "version": MAX_VERSION, "format": FORMAT,
                                 "max_supported_version": MAX_VERSION,
                                 "levels": ["Producer", "Consumer", "Bidirectional"],
                                 "generator": GENERATOR, "document": text})
            else:
                self._send(200, text.encode("utf-8"), "text/markdown; charset=utf-8")
            return
        if path in ("/v1/brain/export", "/v1/brain/export/stream"):
            bundle = brain.build_bundle(self._parse_json(raw, empty_ok=True))
            stamp = bundle["exported_at"].replace(":", "").replace("-", "").split(".")[0]
            if path.endswith("/stream"):
                lines = [{key: bundle[key] for key in ("format", "version", "generator", "exported_at", "manifest")}]
                for name in COLLECTIONS:
                    lines.extend({"section": name, "record": rec} for rec in bundle[name])
                data = b"".join(json.dumps(line, ensure_ascii=False, separators=(",", ":")).encode("utf-8") + b"\n"
                                for line in lines)
                self._send(200, data, "application/x-ndjson; charset=utf-8",
                           {"Content-Disposition": f'attachment; filename="memoryai-bundle-{stamp}.ndjson"'})
            else:
                self._json(200, bundle,
                           {"Content-Disposition": f'attachment; filename="memoryai-bundle-{stamp}.json"'})
            return
        if path == "/v1/brain/import":
            report = brain.import_bundle(self._parse_json(raw, empty_ok=False))
            self._json(200, {"success": True, "report": report})
            return
        if path == "/v1/brain/import/file":
            payload, filename = extract_upload(self.headers.get("Content-Type", ""), raw)
            warnings = []
            if filename is not None and not filename.lower().endswith(".json"):
                warnings.append(f"bundle file name {filename!r} does not use the .json extension")
            report = brain.import_bundle(self._parse_json(payload, empty_ok=False), warnings)
            self._json(200, {"success": True, "report": report})
            return
        if path == "/v1/x-memconform/decay":
            self._json(200, brain.decay())
            return
        if path == "/v1/x-memconform/delete":
            self._json(200, brain.delete_chunk(self._parse_json(raw, empty_ok=False)))
            return

    do_GET = do_POST = do_PUT = do_DELETE = do_PATCH = do_HEAD = _dispatch


# ----------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    global BUGS
    parser = argparse.ArgumentParser(description="memoryai2: MemoryAI Protocol v1 HTTP server (second opinion)")
    parser.add_argument("--port", type=int, default=0, help="TCP port (0: ephemeral)")
    parser.add_argument("--host", default="127.0.0.1")
    parser.add_argument("--state", default=None, help="state folder (default $SECOND_OPINION_STATE or a temp folder)")
    parser.add_argument("--embedding-model", default=os.environ.get("MEMORYAI2_EMBEDDING_MODEL", DEFAULT_MODEL))
    parser.add_argument("--embedding-dim", type=int,
                        default=int(os.environ.get("MEMORYAI2_EMBEDDING_DIM", DEFAULT_DIM)))
    args = parser.parse_args(argv)
    wanted = {b.strip() for b in os.environ.get("SECOND_OPINION_BUGS", "").split(",") if b.strip()}
    unknown = wanted - KNOWN_BUGS
    if unknown:
        print(f"memoryai2: unknown bug name(s): {', '.join(sorted(unknown))}; known: {', '.join(sorted(KNOWN_BUGS))}",
              file=sys.stderr)
        return 2
    if args.embedding_dim < 1:
        print("memoryai2: --embedding-dim must be >= 1", file=sys.stderr)
        return 2
    BUGS = frozenset(wanted)
    folder = Path(args.state or os.environ.get("SECOND_OPINION_STATE")
                  or Path(tempfile.gettempdir()) / f"memoryai2-state-{os.getuid()}")
    Handler.brain = Brain(Store(folder), args.embedding_model, args.embedding_dim)
    try:
        server = ThreadingHTTPServer((args.host, args.port), Handler)
    except OSError as exc:
        print(f"memoryai2: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    server.daemon_threads = True
    host, port = server.server_address[:2]
    print(f"http://{host}:{port}", flush=True)
    signal.signal(signal.SIGTERM, lambda *_: threading.Thread(target=server.shutdown, daemon=True).start())
    try:
        server.serve_forever(poll_interval=0.05)
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
