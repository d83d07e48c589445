"""MemoryAI Protocol v1 brain: state, bundle producer and consumer, decay and deletion.

Plain functions over a "store": a dict holding the brain state (JSON-able), a re-entrant lock, an
optional file the state is persisted to (atomically, after every change) and the set of switched-on
bugs. Nothing here knows about HTTP; `server.py` is the HTTP profile over these functions.

Written from the text of MemoryAI Protocol v1 (working draft 2026-05-28) alone.
"""

from __future__ import annotations

import base64
import binascii
import copy
import hashlib
import json
import math
import os
import re
import struct
import tempfile
import threading
import uuid
from datetime import UTC, datetime
from typing import Any

# -- constants ---------------------------------------------------------------------------------

FORMAT = "memoryai-bundle"
MAX_VERSION = 1  # the highest bundle version this consumer understands (§3.1)
GENERATOR = "memoryai-second-opinion/1.0"
EMBEDDING_MODEL = "so-hash-embed-v1"  # this brain's local embedding model
EMBEDDING_DIM = 16

SECTIONS = ("chunks", "memory_edges", "entities", "l2_sessions", "mood_states", "agents")
SCOPES = ("full", "dna_only", "since")
BASE_TYPES = frozenset({"fact", "episodic", "goal", "error", "preference", "decision", "identity",
                        "pitfall", "procedure", "life_event"})
DNA_TYPES = frozenset({"preference", "decision", "identity", "pitfall", "procedure"})
DNA_ZONES = frozenset({"critical", "important"})
ZONES = frozenset({"standard", "important", "critical", "ephemeral"})
TIERS = frozenset({"hot", "warm", "cold"})
CHUNK_FIELDS = ("id", "content", "content_hash", "memory_type", "embedding", "embedding_model", "tags",
                "zone", "importance", "is_pinned", "decay_score", "tier", "created_at", "accessed_at",
                "valid_until", "metadata")
EDGE_FIELDS = ("chunk_a", "chunk_b", "edge_type", "weight", "co_activation_count", "created_at", "updated_at")
ENTITY_FIELDS = ("name", "frequency", "first_seen", "last_seen", "is_dna")

DECAY_STEP = 0.25  # one decay pass takes this much decay score from a non-DNA chunk
_HEX64 = re.compile(r"[0-9a-fA-F]{64}")

BUGS = (
    "checksum_ascii_escaped",
    "counts_unfiltered",
    "stream_exports_deleted",
    "pinned_not_protected",
    "duplicate_hash_overwrites",
    "edge_weight_last_wins",
    "entity_is_dna_overwritten",
    "version_off_by_one",
    "foreign_embeddings_kept",
    "file_upload_latin1",
)


def bugs_from_env(environ: dict[str, str] | None = None) -> frozenset[str]:
    """The bugs named in SECOND_OPINION_BUGS (comma-separated); an unknown name is an error."""
    raw = (environ if environ is not None else os.environ).get("SECOND_OPINION_BUGS", "")
    names = frozenset(n.strip() for n in raw.split(",") if n.strip())
    unknown = sorted(names - set(BUGS))
    if unknown:
        raise ValueError(f"unknown bug name(s) in SECOND_OPINION_BUGS: {', '.join(unknown)}; known: {', '.join(BUGS)}")
    return names


class BundleRejected(Exception):
    """The bundle as a whole is refused (envelope invalid, unsupported version)."""

    def __init__(self, errors: list[str], bundle: Any = None) -> None:
        super().__init__("; ".join(errors))
        self.errors = errors
        self.bundle = bundle


# -- time and JSON helpers ---------------------------------------------------------------------

def now_iso() -> str:
    return datetime.now(UTC).isoformat(timespec="microseconds").replace("+00:00", "Z")


def parse_time(value: Any) -> datetime | None:
    """An ISO-8601 string as an aware datetime (naive means UTC); None if it is not one."""
    if not isinstance(value, str) or not value.strip():
        return None
    try:
        parsed = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def canonical_bytes(obj: Any, ascii_escaped: bool = False) -> bytes:
    """§3.6: JSON with sorted keys, no whitespace, encoded as UTF-8."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=ascii_escaped,
                      allow_nan=False).encode("utf-8")


def bundle_checksum(bundle: dict[str, Any], ascii_escaped: bool = False) -> str:
    """SHA-256 hex of the bundle with `manifest.checksum` removed (the key, not just its value)."""
    body = dict(bundle)
    manifest = body.get("manifest")
    if isinstance(manifest, dict):
        body["manifest"] = {k: v for k, v in manifest.items() if k != "checksum"}
    return hashlib.sha256(canonical_bytes(body, ascii_escaped)).hexdigest()


def _is_int(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool)


def _is_num(v: Any) -> bool:
    return (isinstance(v, (int, float)) and not isinstance(v, bool)) and math.isfinite(v)


# -- credential scrubbing (§6: bundles MUST NOT include API keys or other credentials) -------------

_CREDENTIAL_KEYS = frozenset({
    "api_key", "apikey", "x_api_key", "secret", "client_secret", "secret_key", "password", "passwd",
    "token", "access_token", "refresh_token", "auth_token", "id_token", "session_token", "bearer",
    "authorization", "credential", "credentials", "private_key", "cookie", "audit_log", "audit_logs",
})
_SECRET_PATTERNS = (
    re.compile(r"-----BEGIN [A-Z ]*PRIVATE KEY-----.*?-----END [A-Z ]*PRIVATE KEY-----", re.DOTALL),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{16,}"),
    re.compile(r"\b(?:AKIA|ASIA)[0-9A-Z]{16}\b"),
    re.compile(r"\bgh[pousr]_[A-Za-z0-9]{30,}\b"),
    re.compile(r"\bxox[abprs]-[A-Za-z0-9\-]{10,}"),
    re.compile(r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    re.compile(r"(?i)\bbearer\s+[A-Za-z0-9._~+/=\-]{16,}"),
    re.compile(r"(?i)\b(api[_-]?key|secret|password|token)(\s*[:=]\s*)[\"']?[^\s\"',;]{8,}"),
)
_REDACTED = "[REDACTED]"
_UNSCRUBBED = frozenset({"content_hash", "embedding", "embedding_model"})


def _redact(text: str) -> str:
    for pattern in _SECRET_PATTERNS:
        if pattern.groups >= 2:
            text = pattern.sub(lambda m: m.group(1) + m.group(2) + _REDACTED, text)
        else:
            text = pattern.sub(_REDACTED, text)
    return text


def scrub(value: Any, key: str | None = None) -> Any:
    """A copy of `value` without credential-named keys and with secret-looking strings redacted."""
    if isinstance(value, dict):
        return {k: scrub(v, k) for k, v in value.items()
                if not (isinstance(k, str) and k.lower().replace("-", "_") in _CREDENTIAL_KEYS)}
    if isinstance(value, list):
        return [scrub(v) for v in value]
    if isinstance(value, str) and key not in _UNSCRUBBED:
        return _redact(value)
    return value


# -- the store ---------------------------------------------------------------------------------

def new_state() -> dict[str, Any]:
    return {
        "tenant_id": str(uuid.uuid4()),  # this brain's own tenant; a bundle's tenant_id is never adopted
        "tenant_name": None,
        "tenant_plan": None,
        "next_chunk_id": 1,
        "chunks": {},        # str(local id) -> {"rec": ChunkRecord, "deleted_at": str|None}
        "by_hash": {},       # content_hash -> local id (live and user-deleted chunks)
        "edges": {},         # json [a, b, edge_type] -> EdgeRecord (local chunk ids)
        "entities": {},      # name -> EntityRecord
        "l2_sessions": {},   # key -> record
        "mood_states": {},   # key -> record
        "agents": {},        # key -> record
    }


def open_store(path: str | None = None, bugs: frozenset[str] | set[str] = frozenset()) -> dict[str, Any]:
    state = new_state()
    if path and os.path.exists(path):
        with open(path, encoding="utf-8") as fh:
            loaded = json.load(fh)
        state.update(loaded)
    return {"state": state, "lock": threading.RLock(), "path": path, "bugs": frozenset(bugs)}


def _persist(store: dict[str, Any], state: dict[str, Any]) -> None:
    """Write the state atomically (temp file, fsync, rename); a failure leaves the old file intact."""
    path = store["path"]
    if not path:
        return
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".brain-", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            json.dump(state, fh, ensure_ascii=False, separators=(",", ":"))
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def _commit(store: dict[str, Any], staged: dict[str, Any]) -> None:
    """Persist then swap in the staged state (caller holds the lock): all or nothing."""
    _persist(store, staged)
    store["state"] = staged


def is_dna(rec: dict[str, Any], bugs: frozenset[str] = frozenset()) -> bool:
    """§3.7: DNA by memory_type, or zone critical/important, or pinned; any one is sufficient."""
    if rec.get("memory_type") in DNA_TYPES or rec.get("zone") in DNA_ZONES:
        return True
    if "pinned_not_protected" in bugs:
        return False
    return rec.get("is_pinned") is True


# -- producer ----------------------------------------------------------------------------------

def validate_export_request(body: Any) -> tuple[str, str | None, datetime | None]:
    """(scope, since string, since datetime) from an export request body; ValueError when it is wrong."""
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise ValueError("the export request must be a JSON object {scope, since?}")
    scope = body.get("scope", "full")
    if scope not in SCOPES:
        raise ValueError(f"scope must be one of {', '.join(SCOPES)}; got {scope!r}")
    if scope != "since":
        return scope, None, None
    since = body.get("since")
    since_dt = parse_time(since)
    if since_dt is None:
        raise ValueError("scope 'since' needs 'since', an ISO-8601 datetime")
    return scope, since.strip(), since_dt


def _at_or_after(value: Any, since_dt: datetime) -> bool:
    t = parse_time(value)
    return t is None or t >= since_dt  # a record without a usable timestamp cannot be shown to be older


def _select(state: dict[str, Any], scope: str, since_dt: datetime | None,
            live_only: bool = True) -> dict[str, list[dict[str, Any]]]:
    """The records a bundle of this scope carries (copies, local ids, internal fields dropped)."""
    chunks = []
    for key in sorted(state["chunks"], key=int):
        row = state["chunks"][key]
        rec = row["rec"]
        if live_only and row["deleted_at"] is not None:
            continue
        if scope == "dna_only" and not is_dna(rec):
            continue
        if scope == "since" and not _at_or_after(rec.get("created_at"), since_dt):
            continue
        chunks.append(copy.deepcopy(rec))
    exported_ids = {c["id"] for c in chunks}
    edges = [copy.deepcopy(e) for e in state["edges"].values()
             if e["chunk_a"] in exported_ids and e["chunk_b"] in exported_ids]
    entities = []
    for ent in state["entities"].values():
        if scope == "dna_only" and not ent.get("is_dna"):
            continue
        if scope == "since" and not _at_or_after(ent.get("last_seen") or ent.get("first_seen"), since_dt):
            continue
        entities.append(copy.deepcopy(ent))
    others: dict[str, list[dict[str, Any]]] = {}
    for section in ("l2_sessions", "mood_states", "agents"):
        if scope == "dna_only":
            others[section] = []
            continue
        records = list(state[section].values())
        if scope == "since":
            records = [r for r in records
                       if _at_or_after(r.get("updated_at") or r.get("ended_at") or r.get("created_at")
                                       or r.get("started_at"), since_dt)]
        others[section] = copy.deepcopy(records)
    return {"chunks": chunks, "memory_edges": edges, "entities": entities, **others}


def _live_counts(state: dict[str, Any]) -> dict[str, int]:
    live = {int(k) for k, row in state["chunks"].items() if row["deleted_at"] is None}
    return {
        "chunks": len(live),
        "memory_edges": sum(1 for e in state["edges"].values() if e["chunk_a"] in live and e["chunk_b"] in live),
        "entities": len(state["entities"]),
        "l2_sessions": len(state["l2_sessions"]),
        "mood_states": len(state["mood_states"]),
        "agents": len(state["agents"]),
    }


def _envelope(store: dict[str, Any], state: dict[str, Any], scope: str, since: str | None,
              sections: dict[str, list[dict[str, Any]]]) -> dict[str, Any]:
    bugs = store["bugs"]
    counts = _live_counts(state) if "counts_unfiltered" in bugs else {s: len(sections[s]) for s in SECTIONS}
    bundle: dict[str, Any] = {
        "format": FORMAT,
        "version": MAX_VERSION,
        "generator": GENERATOR,
        "exported_at": now_iso(),
        "manifest": {
            "tenant_id": state["tenant_id"],
            "tenant_name": state["tenant_name"],
            "tenant_plan": state["tenant_plan"],
            "scope": scope,
            "since": since,
            "embedding_model": EMBEDDING_MODEL,
            "embedding_dim": EMBEDDING_DIM,
            "counts": counts,
        },
        **sections,
    }
    bundle["manifest"]["checksum"] = bundle_checksum(bundle, ascii_escaped="checksum_ascii_escaped" in bugs)
    return bundle


def export_bundle(store: dict[str, Any], scope: str = "full", since: str | None = None) -> dict[str, Any]:
    """A complete Bundle (§3) of this scope; deleted chunks are never in it (§6)."""
    since_dt = parse_time(since) if since else None
    with store["lock"]:
        state = store["state"]
        sections = scrub(_select(state, scope, since_dt))
        return _envelope(store, state, scope, since if scope == "since" else None, sections)


def export_stream(store: dict[str, Any], scope: str = "full", since: str | None = None) -> list[dict[str, Any]]:
    """The NDJSON lines of a streamed export: a header (the bundle without its arrays), one line per
    record (`{"kind": section, "record": ...}`), then `{"kind": "end", "records": N}`.

    The header's manifest is the one the equivalent bundle carries, so a reader that puts the records
    back into their arrays gets a bundle whose checksum verifies."""
    since_dt = parse_time(since) if since else None
    with store["lock"]:
        state = store["state"]
        live_only = "stream_exports_deleted" not in store["bugs"]
        sections = scrub(_select(state, scope, since_dt, live_only=live_only))
        bundle = _envelope(store, state, scope, since if scope == "since" else None, sections)
    lines = [{"kind": "header", **{k: v for k, v in bundle.items() if k not in SECTIONS}}]
    for section in SECTIONS:
        lines.extend({"kind": section, "record": rec} for rec in bundle[section])
    lines.append({"kind": "end", "records": len(lines) - 1})
    return lines


# -- consumer ----------------------------------------------------------------------------------

def empty_report(bundle: Any) -> dict[str, Any]:
    fmt = bundle.get("format") if isinstance(bundle, dict) else None
    ver = bundle.get("version") if isinstance(bundle, dict) else None
    return {
        "bundle_format": fmt if isinstance(fmt, str) else None,
        "bundle_version": ver if _is_int(ver) else None,
        "embedding_model_match": False,
        "chunks": {"inserted": 0, "skipped_duplicate": 0, "skipped_invalid": 0},
        "memory_edges": {"upserted": 0, "skipped": 0},
        "entities": {"upserted": 0},
        "l2_sessions": {"inserted": 0},
        "mood_states": {"upserted": 0},
        "agents": {"upserted": 0},
        "warnings": [],
    }


def validate_envelope(bundle: Any, bugs: frozenset[str] = frozenset()) -> list[str]:
    """§3.1 envelope problems (empty list: acceptable)."""
    if not isinstance(bundle, dict):
        return ["a bundle must be a JSON object"]
    errors = []
    if bundle.get("format") != FORMAT:
        errors.append(f"format must be the string {FORMAT!r}; got {bundle.get('format')!r}")
    version = bundle.get("version")
    if not _is_int(version) or version < 1:
        errors.append(f"version must be an integer >= 1; got {version!r}")
    else:
        limit = MAX_VERSION + 1 if "version_off_by_one" in bugs else MAX_VERSION
        if version > limit:
            errors.append(f"bundle version {version} is newer than the highest supported ({MAX_VERSION})")
    manifest = bundle.get("manifest")
    if not isinstance(manifest, dict):
        errors.append("manifest must be an object")
    else:
        if "scope" not in manifest:
            errors.append("manifest.scope is missing")
        elif manifest["scope"] not in SCOPES:
            errors.append(f"manifest.scope must be one of {', '.join(SCOPES)}; got {manifest['scope']!r}")
        if not isinstance(manifest.get("embedding_model"), str):
            errors.append("manifest.embedding_model must be a string")
        dim = manifest.get("embedding_dim")
        if not _is_int(dim) or dim < 0:
            errors.append(f"manifest.embedding_dim must be a non-negative integer; got {dim!r}")
    for section in SECTIONS:
        if section in bundle and bundle[section] is not None and not isinstance(bundle[section], list):
            errors.append(f"{section} must be an array")
    return errors


def _decode_embedding(value: str, dim: int) -> str | None:
    """The embedding re-encoded canonically, or None when it is not `dim` little-endian finite float32s."""
    try:
        raw = base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        return None
    if dim <= 0 or len(raw) != 4 * dim:
        return None
    floats = struct.unpack(f"<{dim}f", raw)
    if not all(math.isfinite(f) for f in floats):
        return None
    return base64.b64encode(raw).decode("ascii")


def _normalize_chunk(raw: Any, where: str, dim: int, model_match: bool, warnings: list[str],
                     now: str) -> dict[str, Any] | None:
    """A stored ChunkRecord from a bundle's, or None (with a warning) when it is invalid."""
    def bad(why: str) -> None:
        warnings.append(f"{where}: skipped, {why}")

    if not isinstance(raw, dict):
        return bad("not an object")
    content = raw.get("content")
    if not isinstance(content, str) or not content.strip():
        return bad("content is required (a non-empty string)")
    mtype = raw.get("memory_type")
    if not isinstance(mtype, str) or not (mtype in BASE_TYPES or (mtype.startswith("x_") and len(mtype) > 2)):
        return bad(f"memory_type {mtype!r} is neither a v1 type nor an x_ vendor type")
    cid = raw.get("id")
    if cid is not None and not _is_int(cid):
        return bad(f"id must be an integer; got {cid!r}")
    rec: dict[str, Any] = {k: copy.deepcopy(v) for k, v in raw.items() if k not in CHUNK_FIELDS}
    computed = hashlib.sha256(content.encode("utf-8")).hexdigest()
    given = raw.get("content_hash")
    if given is None:
        content_hash = computed
    elif isinstance(given, str) and _HEX64.fullmatch(given):
        content_hash = given.lower()
        if content_hash != computed:
            warnings.append(f"{where}: content_hash is not the SHA-256 of its content; kept as given")
    else:
        return bad(f"content_hash must be a SHA-256 hex digest; got {given!r}")
    tags = raw.get("tags")
    if tags is None:
        tags = []
    if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
        return bad("tags must be an array of strings")
    zone = raw.get("zone") if raw.get("zone") is not None else "standard"
    if zone not in ZONES:
        return bad(f"zone {zone!r} is not one of {', '.join(sorted(ZONES))}")
    tier = raw.get("tier") if raw.get("tier") is not None else "warm"
    if tier not in TIERS:
        return bad(f"tier {tier!r} is not one of {', '.join(sorted(TIERS))}")
    numbers = {}
    for name, default in (("importance", 0.5), ("decay_score", 1.0)):
        v = raw.get(name)
        if v is None:
            v = default
        if not _is_num(v) or not 0 <= v <= 1:
            return bad(f"{name} must be a number in 0..1; got {v!r}")
        numbers[name] = v
    pinned = raw.get("is_pinned")
    if pinned is None:
        pinned = False
    if not isinstance(pinned, bool):
        return bad("is_pinned must be a boolean")
    metadata = raw.get("metadata")
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        return bad("metadata must be an object")
    times = {}
    for name in ("created_at", "accessed_at", "valid_until"):
        v = raw.get(name)
        if v is not None and parse_time(v) is None:
            return bad(f"{name} must be an ISO-8601 datetime; got {v!r}")
        times[name] = v
    created_at = times["created_at"] or now
    embedding = raw.get("embedding")
    if embedding is not None:
        if not model_match:
            embedding = None  # §3.5: another model's vectors are dropped, re-embedded lazily
        elif not isinstance(embedding, str) or (embedding := _decode_embedding(embedding, dim)) is None:
            warnings.append(f"{where}: embedding is not base64 of {dim} float32 values; dropped (re-embedded lazily)")
            embedding = None
    rec.update({
        "id": cid,
        "content": content,
        "content_hash": content_hash,
        "memory_type": mtype,
        "embedding": embedding,
        "embedding_model": EMBEDDING_MODEL,
        "tags": list(tags),
        "zone": zone,
        "importance": numbers["importance"],
        "is_pinned": pinned,
        "decay_score": numbers["decay_score"],
        "tier": tier,
        "created_at": created_at,
        "accessed_at": times["accessed_at"] or created_at,
        "valid_until": times["valid_until"],
        "metadata": copy.deepcopy(metadata),
    })
    return rec


def _later(a: Any, b: Any) -> Any:
    ta, tb = parse_time(a), parse_time(b)
    if ta is None:
        return b
    if tb is None:
        return a
    return b if tb > ta else a


def _earlier(a: Any, b: Any) -> Any:
    ta, tb = parse_time(a), parse_time(b)
    if ta is None:
        return b
    if tb is None:
        return a
    return b if tb < ta else a


def _record_key(rec: dict[str, Any], fields: tuple[str, ...]) -> str:
    for name in fields:
        v = rec.get(name)
        if isinstance(v, (str, int)) and not isinstance(v, bool) and v != "":
            return json.dumps([name, v])
    return json.dumps(["sha256", hashlib.sha256(canonical_bytes(rec)).hexdigest()])


def import_bundle(store: dict[str, Any], bundle: Any) -> dict[str, Any]:
    """Ingest a bundle (§3.8 idempotency, §3.5 embeddings, §3.6 checksum); the ImportReport's `report`.

    Raises BundleRejected when the envelope is invalid or the version is unsupported; then nothing is
    written. Otherwise the whole bundle is applied to a staged copy and swapped in at once."""
    bugs = store["bugs"]
    errors = validate_envelope(bundle, bugs)
    if errors:
        raise BundleRejected(errors, bundle)
    report = empty_report(bundle)
    warnings: list[str] = report["warnings"]
    manifest = bundle["manifest"]
    dim = manifest["embedding_dim"]

    # §3.6: verify, warn (never reject) on mismatch
    given = manifest.get("checksum")
    if given is None:
        warnings.append("manifest.checksum is missing; the bundle's integrity was not verified")
    elif not isinstance(given, str) or given.lower() != bundle_checksum(bundle):
        warnings.append("manifest.checksum does not match the bundle's content (imported anyway)")
    counts = manifest.get("counts")
    if isinstance(counts, dict):
        for section in SECTIONS:
            if section in counts and counts[section] != len(bundle.get(section) or []):
                warnings.append(f"manifest.counts.{section} is {counts[section]!r} but the bundle holds "
                                f"{len(bundle.get(section) or [])}")
    elif counts is not None:
        warnings.append("manifest.counts is not an object")

    # §3.5: embedding model match
    if "foreign_embeddings_kept" in bugs:
        model_match = dim == EMBEDDING_DIM
    else:
        model_match = manifest["embedding_model"] == EMBEDDING_MODEL and dim == EMBEDDING_DIM
    report["embedding_model_match"] = model_match
    if not model_match and any(isinstance(c, dict) and c.get("embedding") is not None
                               for c in bundle.get("chunks") or []):
        warnings.append(f"embedding model {manifest['embedding_model']!r}/{dim} differs from the local "
                        f"{EMBEDDING_MODEL!r}/{EMBEDDING_DIM}: embeddings dropped, re-embedded lazily")

    now = now_iso()
    with store["lock"]:
        state = copy.deepcopy(store["state"])
        id_map: dict[int, int] = {}  # bundle chunk id -> local chunk id (live chunks only)
        restored_deleted = 0
        for i, raw in enumerate(bundle.get("chunks") or []):
            rec = _normalize_chunk(raw, f"chunks[{i}]", dim, model_match, warnings, now)
            if rec is None:
                report["chunks"]["skipped_invalid"] += 1
                continue
            source_id = rec["id"]
            existing = state["by_hash"].get(rec["content_hash"])
            if existing is not None:
                report["chunks"]["skipped_duplicate"] += 1
                row = state["chunks"][str(existing)]
                if row["deleted_at"] is not None:
                    restored_deleted += 1
                    continue
                if "duplicate_hash_overwrites" in bugs:
                    rec["id"] = existing
                    row["rec"] = rec
                if source_id is not None:
                    id_map[source_id] = existing
                continue
            local_id = state["next_chunk_id"]
            state["next_chunk_id"] += 1
            rec["id"] = local_id
            state["chunks"][str(local_id)] = {"rec": rec, "deleted_at": None}
            state["by_hash"][rec["content_hash"]] = local_id
            if source_id is not None:
                id_map[source_id] = local_id
            report["chunks"]["inserted"] += 1
        if restored_deleted:
            warnings.append(f"{restored_deleted} chunk(s) match chunks the user deleted; they stay deleted")

        for i, raw in enumerate(bundle.get("memory_edges") or []):
            if not (isinstance(raw, dict) and _is_int(raw.get("chunk_a")) and _is_int(raw.get("chunk_b"))
                    and isinstance(raw.get("edge_type"), str) and raw["edge_type"]):
                warnings.append(f"memory_edges[{i}]: skipped, needs integer chunk_a, chunk_b and an edge_type")
                report["memory_edges"]["skipped"] += 1
                continue
            weight = raw.get("weight", 0.0) if raw.get("weight") is not None else 0.0
            count = raw.get("co_activation_count") if raw.get("co_activation_count") is not None else 0
            if not _is_num(weight) or not _is_int(count) or count < 0 or any(
                    raw.get(t) is not None and parse_time(raw.get(t)) is None for t in ("created_at", "updated_at")):
                warnings.append(f"memory_edges[{i}]: skipped, weight/co_activation_count/timestamps malformed")
                report["memory_edges"]["skipped"] += 1
                continue
            a, b = id_map.get(raw["chunk_a"]), id_map.get(raw["chunk_b"])
            if a is None or b is None:
                warnings.append(f"memory_edges[{i}]: skipped, an endpoint is not a chunk imported from this bundle")
                report["memory_edges"]["skipped"] += 1
                continue
            key = json.dumps([a, b, raw["edge_type"]])
            edge = state["edges"].get(key)
            if edge is None:
                edge = {k: copy.deepcopy(v) for k, v in raw.items() if k not in EDGE_FIELDS}
                edge.update({"chunk_a": a, "chunk_b": b, "edge_type": raw["edge_type"], "weight": weight,
                             "co_activation_count": count, "created_at": raw.get("created_at") or now,
                             "updated_at": raw.get("updated_at") or now})
                state["edges"][key] = edge
            else:
                edge["co_activation_count"] += count
                if "edge_weight_last_wins" in bugs:
                    edge["weight"] = weight
                else:
                    edge["weight"] = max(edge["weight"], weight)
                edge["updated_at"] = _later(_later(edge["updated_at"], raw.get("updated_at")), now)
                edge["created_at"] = _earlier(edge.get("created_at"), raw.get("created_at"))
            report["memory_edges"]["upserted"] += 1

        for i, raw in enumerate(bundle.get("entities") or []):
            name = raw.get("name") if isinstance(raw, dict) else None
            freq = raw.get("frequency", 1) if isinstance(raw, dict) else None
            freq = 1 if freq is None else freq
            dna = (raw.get("is_dna") if raw.get("is_dna") is not None else False) if isinstance(raw, dict) else None
            if (not isinstance(name, str) or not name or not _is_int(freq) or freq < 0 or not isinstance(dna, bool)
                    or any(raw.get(t) is not None and parse_time(raw.get(t)) is None
                           for t in ("first_seen", "last_seen"))):
                warnings.append(f"entities[{i}]: skipped, needs a name, integer frequency, boolean is_dna, "
                                "ISO-8601 first_seen/last_seen")
                continue
            ent = state["entities"].get(name)
            if ent is None:
                ent = {k: copy.deepcopy(v) for k, v in raw.items() if k not in ENTITY_FIELDS}
                first = raw.get("first_seen") or raw.get("last_seen") or now  # first seen here, at the latest
                ent.update({"name": name, "frequency": freq, "first_seen": first,
                            "last_seen": raw.get("last_seen") or first, "is_dna": dna})
                state["entities"][name] = ent
            else:
                ent["frequency"] += freq
                ent["last_seen"] = _later(ent.get("last_seen"), raw.get("last_seen"))
                ent["first_seen"] = _earlier(ent.get("first_seen"), raw.get("first_seen"))
                ent["is_dna"] = dna if "entity_is_dna_overwritten" in bugs else (bool(ent.get("is_dna")) or dna)
            report["entities"]["upserted"] += 1

        for section, fields, verb, merge in (("l2_sessions", ("id", "session_id"), "inserted", False),
                                             ("mood_states", ("id", "mood_id"), "upserted", True),
                                             ("agents", ("id", "agent_id", "name"), "upserted", True)):
            for i, raw in enumerate(bundle.get(section) or []):
                if not isinstance(raw, dict):
                    warnings.append(f"{section}[{i}]: skipped, not an object")
                    continue
                key = _record_key(raw, fields)
                if key in state[section]:
                    if not merge:
                        continue
                    state[section][key].update(copy.deepcopy(raw))
                else:
                    state[section][key] = copy.deepcopy(raw)
                report[section][verb] += 1

        _commit(store, state)
    return report


# -- lifecycle: decay and user deletion --------------------------------------------------------

def decay_pass(store: dict[str, Any]) -> dict[str, int]:
    """One scheduled decay pass: every live non-DNA chunk loses DECAY_STEP of decay score; one whose
    score runs out is forgotten (removed with its edges). DNA chunks are never touched (§2, §3.7)."""
    bugs = store["bugs"]
    decayed = deleted = 0
    with store["lock"]:
        state = copy.deepcopy(store["state"])
        forgotten = []
        for key, row in state["chunks"].items():
            rec = row["rec"]
            if row["deleted_at"] is not None or is_dna(rec, bugs):
                continue
            score = round(max(0.0, float(rec.get("decay_score", 1.0)) - DECAY_STEP), 6)
            rec["decay_score"] = score
            decayed += 1
            if score <= 0:
                forgotten.append(key)
        for key in forgotten:
            rec = state["chunks"].pop(key)["rec"]
            state["by_hash"].pop(rec["content_hash"], None)
            local = int(key)
            state["edges"] = {k: e for k, e in state["edges"].items() if local not in (e["chunk_a"], e["chunk_b"])}
            deleted += 1
        _commit(store, state)
    return {"decayed": decayed, "deleted": deleted}


def delete_chunk(store: dict[str, Any], content_hash: str) -> int:
    """The user deletes a chunk: it is marked deleted and never exported again (§6). 1 if it was live."""
    with store["lock"]:
        local = store["state"]["by_hash"].get(content_hash.lower())
        if local is None or store["state"]["chunks"][str(local)]["deleted_at"] is not None:
            return 0
        state = copy.deepcopy(store["state"])
        state["chunks"][str(local)]["deleted_at"] = now_iso()
        _commit(store, state)
    return 1
