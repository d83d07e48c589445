"""MemoryAI Protocol v1: constants, canonical serialisation, checksum, embeddings, HTTP routes."""

from __future__ import annotations

import base64
import binascii
import hashlib
import json
import struct
from typing import Any

from ...core.profile import declare_option
from ...targets.base import Route

SUITE = "memoryai"
FORMAT = "memoryai-bundle"
MAX_VERSION = 1
RECORD_SECTIONS = ("chunks", "memory_edges", "entities", "l2_sessions", "mood_states", "agents")
SCOPES = ("full", "dna_only", "since")
ZONES = ("standard", "important", "critical", "ephemeral")
TIERS = ("hot", "warm", "cold")
CORE_TYPES = ("fact", "episodic", "goal", "error", "preference", "decision", "identity", "pitfall", "procedure", "life_event")
DNA_TYPES = frozenset({"preference", "decision", "identity", "pitfall", "procedure"})
DNA_ZONES = frozenset({"critical", "important"})

ROUTES: dict[str, Route] = {
    "export": Route("POST", "/v1/brain/export"),
    "export_stream": Route("POST", "/v1/brain/export/stream", response="ndjson"),
    "import_bundle": Route("POST", "/v1/brain/import"),
    "import_file": Route("POST", "/v1/brain/import/file", body="multipart"),
    "spec": Route("GET", "/v1/spec", body="none", response="text"),
    # not in the spec: optional hooks a target may offer so DNA protection and deletion can be tested
    "decay": Route("POST", "/v1/x-memconform/decay"),
    "delete_chunk": Route("POST", "/v1/x-memconform/delete"),
}

# Readings of ambiguous sentences: each is explained in errata/memoryai.md.
declare_option(SUITE, "checksum_unicode", "literal", ("literal", "ascii", "either"),
               "§3.6: non-ASCII in the canonical JSON as literal UTF-8, as \\u escapes, or accept either")
declare_option(SUITE, "content_hash", "sha256-utf8", ("sha256-utf8", "unchecked"),
               "§3.2: content_hash is sha256 of the UTF-8 content, or left unchecked")
declare_option(SUITE, "dna_rule", "union", ("union", "type-only"),
               "§3.7 union of type/zone/pinned, or §2 memory_type only")
declare_option(SUITE, "reimport_counters", "accumulate", ("accumulate", "stable"),
               "§3.8 edges/entities on re-import: counters accumulate, or stay as they were")
declare_option(SUITE, "rejection_status", "any-4xx", ("any-4xx", "400", "422"),
               "HTTP status for a rejected bundle")
declare_option(SUITE, "multipart_field", "file", ("file", "bundle"), "§4 multipart field name of import/file")
declare_option(SUITE, "embedding_mismatch", "drop", ("drop", "accept"),
               "§3.5 on model mismatch: drop embeddings (SHOULD), or accept (user opt-in)")


def canonical_bytes(bundle: dict[str, Any], unicode: str = "literal") -> bytes:
    """§3.6: the bundle without manifest.checksum, sorted keys, no whitespace, UTF-8."""
    body = dict(bundle)
    manifest = body.get("manifest")
    if isinstance(manifest, dict) and "checksum" in manifest:
        body["manifest"] = {k: v for k, v in manifest.items() if k != "checksum"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=(unicode == "ascii"),
                      allow_nan=False).encode("utf-8")


def checksum(bundle: dict[str, Any], unicode: str = "literal") -> str:
    return hashlib.sha256(canonical_bytes(bundle, unicode)).hexdigest()


def checksum_matches(bundle: dict[str, Any], unicode: str) -> bool:
    claimed = bundle.get("manifest", {}).get("checksum")
    readings = ("literal", "ascii") if unicode == "either" else (unicode,)
    return any(checksum(bundle, r) == claimed for r in readings)


def content_hash(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8")).hexdigest()


def encode_embedding(values: list[float]) -> str:
    return base64.b64encode(struct.pack(f"<{len(values)}f", *values)).decode("ascii")


def decode_embedding(text: str) -> bytes:
    """Strict base64 decode; raises ValueError on bad input."""
    try:
        # strict mode (3.11+): only the alphabet, padding only at the end; one C pass, no regex first
        return binascii.a2b_base64(text, strict_mode=True)
    except (binascii.Error, ValueError) as exc:
        raise ValueError(f"not base64: {exc}") from None


def embedding_floats(text: str) -> tuple[float, ...]:
    raw = decode_embedding(text)
    return struct.unpack(f"<{len(raw) // 4}f", raw[: len(raw) - len(raw) % 4])


def is_dna(chunk: dict[str, Any], rule: str = "union") -> bool:
    if chunk.get("memory_type") in DNA_TYPES:
        return True
    if rule == "type-only":
        return False
    return chunk.get("zone") in DNA_ZONES or chunk.get("is_pinned") is True


def detect(doc: Any) -> bool:
    return isinstance(doc, dict) and doc.get("format") == FORMAT


def seal(bundle: dict[str, Any], unicode: str = "literal") -> dict[str, Any]:
    """Fill manifest.counts and manifest.checksum, as a producer must."""
    manifest = bundle.setdefault("manifest", {})
    manifest["counts"] = {s: len(bundle.get(s, [])) for s in RECORD_SECTIONS if isinstance(bundle.get(s), list)}
    manifest.pop("checksum", None)
    manifest["checksum"] = checksum(bundle, unicode)
    return bundle
