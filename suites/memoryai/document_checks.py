"""Level 1 checks on a bundle document: run by `memconform validate` and on a target's export."""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import re
from collections.abc import Iterator
from functools import partial
from typing import Any

from memconform.core.model import Failure
from memconform.core.registry import check
from memconform.formats import memoryai as mai

SPEC = "MemoryAI Protocol v1"
doc_check = partial(check, suite=mai.SUITE, spec=SPEC, kind="document")

CREDENTIAL_KEYS = re.compile(r"(?i)^(api[_-]?key|apikey|secret|password|passwd|access[_-]?token|refresh[_-]?token|auth[_-]?token|authorization|private[_-]?key|credentials?)$")
CREDENTIAL_VALUES = re.compile(r"\b(sk-[A-Za-z0-9_-]{8,}|sk_live_[A-Za-z0-9]{8,}|ghp_[A-Za-z0-9]{20,}|AKIA[0-9A-Z]{16}|xox[bp]-[A-Za-z0-9-]{10,}|Bearer\s+[A-Za-z0-9._-]{12,})")
AUDIT_KEYS = re.compile(r"(?i)^(audit_logs?|audit_trail|access_logs?)$")


# every alternative of CREDENTIAL_VALUES starts with one of these literals: a string holding none of
# them cannot match, so the regex runs only on documents where a literal occurs
_VALUE_MARKERS = ("sk-", "sk_live_", "ghp_", "AKIA", "xoxb-", "xoxp-", "Bearer")
_AKIA_TAIL = re.compile(r"[0-9A-Z]{16}")


def canonical(doc: Any, ctx: Any) -> bytes:
    """The §3.6 canonical bytes (literal reading), computed once per document and shared by checks."""
    return ctx.once("canonical-literal", lambda: mai.canonical_bytes(doc, "literal"))  # type: ignore[no-any-return]


def embedding_sizes(doc: Any, ctx: Any) -> dict[int, int | ValueError]:
    """Decoded byte length of every string embedding (or why it does not decode), once per document."""

    def decode_all() -> dict[int, int | ValueError]:
        sizes: dict[int, int | ValueError] = {}
        for i, chunk in records(doc, "chunks"):
            if isinstance(chunk, dict) and isinstance(chunk.get("embedding"), str):
                try:
                    sizes[i] = len(mai.decode_embedding(chunk["embedding"]))
                except ValueError as exc:
                    sizes[i] = exc
        return sizes

    return ctx.once("embedding-sizes", decode_all)  # type: ignore[no-any-return]


def is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def records(doc: dict[str, Any], section: str) -> list[tuple[int, Any]]:
    value = doc.get(section)
    return list(enumerate(value)) if isinstance(value, list) else []


def iso_ok(value: Any) -> bool:
    if not isinstance(value, str):
        return False
    try:
        dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
        return True
    except ValueError:
        return False


@doc_check(section="§3.1", keyword="MUST", level="1",
           sentence='The `format` field MUST equal the literal string "memoryai-bundle".')
def envelope_format_literal(doc: Any, ctx: Any) -> Iterator[Failure]:
    if not isinstance(doc, dict):
        yield Failure("bundle is not a JSON object", type(doc).__name__, "object")
    elif doc.get("format") != mai.FORMAT:
        yield Failure("format is not the literal memoryai-bundle", doc.get("format", "<absent>"), mai.FORMAT, "$.format")


@doc_check(section="§3.1", keyword="MUST", level="1", sentence="The `version` field MUST be an integer ≥ 1.")
def envelope_version_integer(doc: Any, ctx: Any) -> Iterator[Failure]:
    version = doc.get("version", "<absent>") if isinstance(doc, dict) else "<no object>"
    if not is_int(version) or version < 1:
        yield Failure("version is not an integer >= 1 (a JSON true or 1.0 is not an integer)", version, "integer >= 1", "$.version")


@doc_check(section="§3.1", keyword="MUST", level="1",
           sentence="The `manifest` object MUST contain `scope`, `embedding_model`, and `embedding_dim`.")
def manifest_required_fields(doc: Any, ctx: Any) -> Iterator[Failure]:
    manifest = doc.get("manifest") if isinstance(doc, dict) else None
    if not isinstance(manifest, dict):
        yield Failure("manifest is missing or not an object", manifest, "object", "$.manifest")
        return
    for name in ("scope", "embedding_model", "embedding_dim"):
        if name not in manifest:
            yield Failure(f"manifest.{name} is missing", "<absent>", name, f"$.manifest.{name}")
    if "scope" in manifest and manifest["scope"] not in mai.SCOPES:
        yield Failure("manifest.scope is not one of full, dna_only, since", manifest["scope"], list(mai.SCOPES), "$.manifest.scope")
    if "embedding_model" in manifest and not isinstance(manifest["embedding_model"], str):
        yield Failure("manifest.embedding_model is not a string", manifest["embedding_model"], "string", "$.manifest.embedding_model")
    if "embedding_dim" in manifest and (not is_int(manifest["embedding_dim"]) or manifest["embedding_dim"] < 0):
        yield Failure("manifest.embedding_dim is not a non-negative integer", manifest["embedding_dim"], "integer", "$.manifest.embedding_dim")


@doc_check(section="§3.2", keyword="MUST", level="1",
           sentence="ChunkRecord: `content` (REQUIRED) string; `memory_type` (REQUIRED) string.")
def chunk_required_fields(doc: Any, ctx: Any) -> Iterator[Failure]:
    for i, chunk in records(doc, "chunks"):
        path = f"$.chunks[{i}]"
        if not isinstance(chunk, dict):
            yield Failure("chunk is not an object", chunk, "object", path)
            continue
        if not isinstance(chunk.get("content"), str):
            yield Failure("chunk content is missing or not a string", chunk.get("content", "<absent>"), "string", path + ".content")
        if not isinstance(chunk.get("memory_type"), str):
            yield Failure("chunk memory_type is missing or not a string", chunk.get("memory_type", "<absent>"), "string", path + ".memory_type")


_SHA256_HEX = re.compile(r"[0-9a-f]{64}")
_CHUNK_TYPES: dict[str, tuple[str, Any]] = {
    "id": ("integer", is_int),
    "content_hash": ("sha256 hex string", lambda v: isinstance(v, str) and _SHA256_HEX.fullmatch(v) is not None),
    "embedding_model": ("string", lambda v: isinstance(v, str)),
    "tags": ("array of strings", lambda v: isinstance(v, list) and all(isinstance(t, str) for t in v)),
    "importance": ("number", is_number),
    "is_pinned": ("boolean", lambda v: isinstance(v, bool)),
    "decay_score": ("number", is_number),
    "created_at": ("ISO-8601 string", iso_ok),
    "accessed_at": ("ISO-8601 string", iso_ok),
    "valid_until": ("ISO-8601 string or null", lambda v: v is None or iso_ok(v)),
    "metadata": ("object", lambda v: isinstance(v, dict)),
}


@doc_check(section="§3.2", keyword="MUST", level="1",
           sentence="ChunkRecord fields have the types the record shape gives (id integer, tags strings, is_pinned bool, ISO-8601 times, metadata object).")
def chunk_field_types(doc: Any, ctx: Any) -> Iterator[Failure]:
    for i, chunk in records(doc, "chunks"):
        if not isinstance(chunk, dict):
            continue
        for name, (expected, ok) in _CHUNK_TYPES.items():
            if name in chunk and not ok(chunk[name]):
                yield Failure(f"chunk {name} is not a {expected}", chunk[name], expected, f"$.chunks[{i}].{name}")


@doc_check(section="§3.2", keyword="MUST", level="1",
           sentence='zone is "standard" | "important" | "critical" | "ephemeral"; importance and decay_score are floats 0..1; tier is "hot" | "warm" | "cold".')
def chunk_enums_and_ranges(doc: Any, ctx: Any) -> Iterator[Failure]:
    for i, chunk in records(doc, "chunks"):
        if not isinstance(chunk, dict):
            continue
        path = f"$.chunks[{i}]"
        if "zone" in chunk and chunk["zone"] not in mai.ZONES:
            yield Failure("zone is not one of the four zones", chunk["zone"], list(mai.ZONES), path + ".zone")
        if "tier" in chunk and chunk["tier"] not in mai.TIERS:
            yield Failure("tier is not hot, warm or cold", chunk["tier"], list(mai.TIERS), path + ".tier")
        for name in ("importance", "decay_score"):
            value = chunk.get(name)
            if is_number(value) and not 0 <= value <= 1:
                yield Failure(f"{name} is outside 0..1", value, "0 <= x <= 1", f"{path}.{name}")


@doc_check(section="§3.7", keyword="MUST", level="1",
           sentence="memory_type values: the ten core types; vendor-specific values MUST be prefixed with `x_`.")
def memory_type_known_or_vendor(doc: Any, ctx: Any) -> Iterator[Failure]:
    for i, chunk in records(doc, "chunks"):
        mtype = chunk.get("memory_type") if isinstance(chunk, dict) else None
        if isinstance(mtype, str) and mtype not in mai.CORE_TYPES and not mtype.startswith("x_"):
            yield Failure("memory_type is neither a core type nor an x_ vendor type", mtype, "core type or x_*", f"$.chunks[{i}].memory_type")


@doc_check(section="§3.3", keyword="MUST", level="1",
           sentence="EdgeRecord: chunk_a and chunk_b integers, edge_type string, weight float, co_activation_count int.")
def edge_fields(doc: Any, ctx: Any) -> Iterator[Failure]:
    checks = {"chunk_a": ("integer", is_int), "chunk_b": ("integer", is_int), "edge_type": ("string", lambda v: isinstance(v, str)),
              "weight": ("number", is_number), "co_activation_count": ("integer", is_int),
              "created_at": ("ISO-8601 string", iso_ok), "updated_at": ("ISO-8601 string", iso_ok)}
    for i, edge in records(doc, "memory_edges"):
        if not isinstance(edge, dict):
            yield Failure("edge is not an object", edge, "object", f"$.memory_edges[{i}]")
            continue
        for name, (expected, ok) in checks.items():
            if name in edge and not ok(edge[name]):
                yield Failure(f"edge {name} is not a {expected}", edge[name], expected, f"$.memory_edges[{i}].{name}")
        for name in ("chunk_a", "chunk_b", "edge_type"):
            if name not in edge:
                yield Failure(f"edge {name} is missing (edges upsert on it, §3.8)", "<absent>", name, f"$.memory_edges[{i}]")


@doc_check(section="§3.4", keyword="MUST", level="1",
           sentence="EntityRecord: `name` (REQUIRED) string; frequency int; first_seen, last_seen ISO-8601; is_dna bool.")
def entity_required_fields(doc: Any, ctx: Any) -> Iterator[Failure]:
    for i, entity in records(doc, "entities"):
        path = f"$.entities[{i}]"
        if not isinstance(entity, dict) or not isinstance(entity.get("name"), str):
            yield Failure("entity has no string name", entity.get("name", "<absent>") if isinstance(entity, dict) else entity, "string", path + ".name")
            continue
        if "frequency" in entity and not is_int(entity["frequency"]):
            yield Failure("entity frequency is not an integer", entity["frequency"], "integer", path + ".frequency")
        if "is_dna" in entity and not isinstance(entity["is_dna"], bool):
            yield Failure("entity is_dna is not a boolean", entity["is_dna"], "boolean", path + ".is_dna")
        for name in ("first_seen", "last_seen"):
            if name in entity and not iso_ok(entity[name]):
                yield Failure(f"entity {name} is not ISO-8601", entity[name], "ISO-8601", f"{path}.{name}")


@doc_check(section="§3.5", keyword="MUST", level="1",
           sentence="`embedding` fields MUST be one of: null, or a base64-encoded little-endian array of float32 values.")
def embedding_base64_float32(doc: Any, ctx: Any) -> Iterator[Failure]:
    for i, chunk in records(doc, "chunks"):
        if not isinstance(chunk, dict) or chunk.get("embedding") is None:
            continue
        value = chunk["embedding"]
        path = f"$.chunks[{i}].embedding"
        if not isinstance(value, str):
            yield Failure("embedding is neither null nor a base64 string", value, "null or base64 string", path)
            continue
        size = embedding_sizes(doc, ctx)[i]
        if isinstance(size, ValueError):
            yield Failure("embedding is not valid base64", value, "base64 of float32 values", path, str(size))
            continue
        if size % 4:
            yield Failure("embedding byte length is not a multiple of 4 (float32)", size, "multiple of 4", path)


@doc_check(section="§3.5", keyword="MUST", level="1",
           sentence="The array length MUST equal `manifest.embedding_dim`.")
def embedding_length_matches_dim(doc: Any, ctx: Any) -> Iterator[Failure]:
    manifest = doc.get("manifest") if isinstance(doc, dict) else None
    dim = manifest.get("embedding_dim") if isinstance(manifest, dict) else None
    for i, size in embedding_sizes(doc, ctx).items():
        if isinstance(size, ValueError):
            continue  # embedding_base64_float32 reports it
        if not is_int(dim):
            yield Failure("chunk has an embedding but manifest.embedding_dim is not an integer", dim, "integer", "$.manifest.embedding_dim")
            return
        if size != 4 * dim:
            yield Failure("embedding length differs from manifest.embedding_dim", size / 4, dim, f"$.chunks[{i}].embedding")


@doc_check(section="§3.6", keyword="SHOULD", level="1",
           sentence="`manifest.checksum` is the SHA-256 hex digest of the Bundle with `manifest.checksum` removed, serialized as JSON with sorted keys, no whitespace, encoded as UTF-8. (Level 1: includes a valid checksum.)")
def checksum_present_and_valid(doc: Any, ctx: Any) -> Iterator[Failure]:
    manifest = doc.get("manifest") if isinstance(doc, dict) else None
    if not isinstance(manifest, dict):
        return  # manifest_required_fields reports it
    claimed = manifest.get("checksum")
    if not isinstance(claimed, str):
        yield Failure("manifest.checksum is missing", claimed, "sha256 hex digest", "$.manifest.checksum")
        return
    reading = ctx.option("checksum_unicode")
    try:
        ok = (reading != "ascii" and hashlib.sha256(canonical(doc, ctx)).hexdigest() == claimed) or (
            reading != "literal" and mai.checksum(doc, "ascii") == claimed)
    except ValueError as exc:
        yield Failure("bundle cannot be serialised canonically (NaN or Infinity?)", str(exc), "finite JSON", "$")
        return
    if not ok:
        yield Failure("checksum does not match the canonical body", claimed, mai.checksum(doc, "ascii" if reading == "ascii" else "literal"),
                      "$.manifest.checksum", f"canonical form: sorted keys, no whitespace, non-ASCII {reading} (errata/memoryai.md E1)")


@doc_check(section="§5 Level 1", keyword="MUST", level="1", sentence="A Producer's bundle declares accurate `manifest.counts`.")
def counts_accurate(doc: Any, ctx: Any) -> Iterator[Failure]:
    manifest = doc.get("manifest") if isinstance(doc, dict) else None
    counts = manifest.get("counts") if isinstance(manifest, dict) else None
    if not isinstance(counts, dict):
        yield Failure("manifest.counts is missing or not an object", counts, "object of section counts", "$.manifest.counts")
        return
    for section in mai.RECORD_SECTIONS:
        actual = len(doc[section]) if isinstance(doc.get(section), list) else 0
        declared = counts.get(section, 0 if actual == 0 else "<absent>")
        if declared != actual:
            yield Failure(f"manifest.counts.{section} differs from the records present", declared, actual, f"$.manifest.counts.{section}")


def _scan_credentials(value: Any, path: str) -> Iterator[Failure]:
    if isinstance(value, dict):
        for key, item in value.items():
            sub = f"{path}.{key}"
            if isinstance(key, str) and (CREDENTIAL_KEYS.match(key) or AUDIT_KEYS.match(key)) and item not in (None, "", [], {}):
                yield Failure(f"bundle carries a credential or audit field {key!r}", "<redacted>", "no credentials or audit logs", sub)
            else:
                yield from _scan_credentials(item, sub)
    elif isinstance(value, list):
        for i, item in enumerate(value):
            yield from _scan_credentials(item, f"{path}[{i}]")
    elif isinstance(value, str) and len(value) < 100_000 and CREDENTIAL_VALUES.search(value):
        yield Failure("bundle carries what looks like a secret token", "<redacted>", "no credentials", path)


# ChunkRecord fields of §3.2; a chunk with only these keeps nested keys in metadata and tags alone
_CHUNK_SCALAR_OR_KNOWN = frozenset({
    "id", "content", "content_hash", "memory_type", "embedding", "embedding_model", "tags", "zone", "importance",
    "is_pinned", "decay_score", "tier", "created_at", "accessed_at", "valid_until", "metadata"})


def _all_keys(doc: dict[str, Any]) -> set[str]:
    """Every dict key of a bundle, visiting containers only (strings, numbers and embeddings are skipped)."""
    keys: set[str] = set()
    stack: list[Any] = []
    for key, value in doc.items():
        keys.add(key)
        if key == "chunks" and type(value) is list:
            for chunk in value:
                if type(chunk) is dict and chunk.keys() <= _CHUNK_SCALAR_OR_KNOWN:
                    # the common case, in C: only metadata and tags can hold nested keys
                    keys.update(chunk)
                    stack.extend(v for v in (chunk.get("metadata"), chunk.get("tags")) if type(v) is dict or type(v) is list)
                elif type(chunk) is dict or type(chunk) is list:
                    stack.append(chunk)
        elif type(value) is dict or type(value) is list:
            stack.append(value)
    while stack:
        node = stack.pop()
        if type(node) is dict:
            keys.update(node)
            stack.extend(v for v in node.values() if type(v) is dict or type(v) is list)
        else:
            stack.extend(v for v in node if type(v) is dict or type(v) is list)
    return keys


def _value_marker_in(doc: dict[str, Any]) -> bool:
    """Could a string of the bundle (chunk embeddings aside, as in the walk) hold a token? Every
    CREDENTIAL_VALUES match is ASCII that JSON writes as is, so a marker search over the bundle's JSON
    without chunk embeddings is a superset of the walk; the walk decides."""
    chunks = doc.get("chunks")
    if type(chunks) is list:
        doc = dict(doc, chunks=[{k: v for k, v in c.items() if k != "embedding"} if type(c) is dict else c
                                for c in chunks])
    try:
        text = json.dumps(doc, ensure_ascii=False, default=str)
    except ValueError:
        return True  # not writable as JSON (a cycle, say): let the walk look
    if any(m in text for m in _VALUE_MARKERS if m != "AKIA"):
        return True
    at = text.find("AKIA")
    while at != -1:
        if _AKIA_TAIL.match(text, at + 4):
            return True
        at = text.find("AKIA", at + 1)
    return False


@doc_check(section="§6", keyword="MUST", level="1", sentence="Bundles MUST NOT include API keys, audit logs, or other credentials.")
def no_credentials_in_bundle(doc: Any, ctx: Any) -> Iterator[Failure]:
    if not isinstance(doc, dict):
        return
    suspicious = any(CREDENTIAL_KEYS.match(k) or AUDIT_KEYS.match(k) for k in _all_keys(doc) if isinstance(k, str))
    if not suspicious and not _value_marker_in(doc):
        return
    for key, value in doc.items():
        if key == "chunks":
            # embeddings are base64 noise: scan everything else in chunks
            for i, chunk in records(doc, "chunks"):
                if isinstance(chunk, dict):
                    yield from _scan_credentials({k: v for k, v in chunk.items() if k != "embedding"}, f"$.chunks[{i}]")
                else:
                    yield from _scan_credentials(chunk, f"$.chunks[{i}]")
        else:
            yield from _scan_credentials({key: value}, "$")


@doc_check(section="§3.2", keyword="SHOULD", level="1",
           sentence="content_hash is the sha256 hex of the chunk content (reading: of its UTF-8 bytes; errata E2).")
def content_hash_matches(doc: Any, ctx: Any) -> Iterator[Failure]:
    if ctx.option("content_hash") == "unchecked":
        return
    for i, chunk in records(doc, "chunks"):
        if isinstance(chunk, dict) and isinstance(chunk.get("content"), str) and isinstance(chunk.get("content_hash"), str):
            expected = mai.content_hash(chunk["content"])
            if chunk["content_hash"] != expected:
                yield Failure("content_hash is not sha256 of the UTF-8 content", chunk["content_hash"], expected, f"$.chunks[{i}].content_hash")
