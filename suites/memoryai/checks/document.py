"""Level 1 checks on a bundle document: run by `memconform validate` and on a target's export."""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Callable, Iterator
from itertools import chain, repeat
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, SkipCheck
from memconform.kit.shared_rules import is_int
from memconform.suites.memoryai import credentials, reading_kinds, readings
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.bundle_rules import (
    a_bundle,
    canonical,
    checksum_of,
    counts_of,
    embedding_sizes,
    examined,
    is_number,
    iso_ok,
    optional_records,
    records,
)
from memconform.suites.memoryai.suite import SUITE


@SUITE.check(kind="document", section="§3.1", keyword="MUST", level="1",
           sentence='The `format` field MUST equal the literal string `"memoryai-bundle"`.')
def envelope_format_literal(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    if not isinstance(doc, dict):
        yield Failure("bundle is not a JSON object", type(doc).__name__, "object")
    elif doc.get("format") != memoryai.FORMAT:
        yield Failure("format is not the literal memoryai-bundle", doc.get("format", "<absent>"), memoryai.FORMAT, "$.format")


# What a producer of this protocol writes as `version`: §7 names the document v1 and says a later one bumps the field,
# and §3.1 has every consumer reject a version above its maximum, so a v1 bundle with any other number is refused by
# the v1 consumers it was written for.
LATER_VERSION = ('§7 "This document is **MemoryAI Protocol v1**. Future versions will: - Bump the `version` field in '
                 'the envelope." and §3.1 "A consumer MUST reject a Bundle whose `version` is greater than the maximum it '
                 'supports.": a v1 producer writes 1, and a bundle of a later version is refused by every v1 consumer')


@SUITE.check(kind="document", section="§3.1", keyword="MUST", level="1", sentence="The `version` field MUST be an integer ≥ 1.")
def envelope_version_integer(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    """An integer ≥ 1 (§3.1), and not above this protocol's own version (§7: see LATER_VERSION)."""
    version = doc.get("version", "<absent>") if isinstance(doc, dict) else "<no object>"
    if not is_int(version) or version < 1:
        yield Failure("version is not an integer >= 1 (a JSON true or 1.0 is not an integer)", version, "integer >= 1", "$.version")
    elif version > memoryai.MAX_VERSION:
        yield Failure(f"version {version} is later than MemoryAI Protocol v{memoryai.MAX_VERSION}, which memconform judges",
                      version, memoryai.MAX_VERSION, "$.version", LATER_VERSION)


@SUITE.check(kind="document", section="§3.1", keyword="MUST", level="1",
           sentence="The `manifest` object MUST contain `scope`, `embedding_model`, and `embedding_dim`.")
def manifest_required_fields(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    manifest = doc.get("manifest") if isinstance(doc, dict) else None
    if not isinstance(manifest, dict):
        yield Failure("manifest is missing or not an object", manifest, "object", "$.manifest")
        return
    for name in ("scope", "embedding_model", "embedding_dim"):
        if name not in manifest:
            yield Failure(f"manifest.{name} is missing", "<absent>", name, f"$.manifest.{name}")
    if "scope" in manifest and manifest["scope"] not in memoryai.SCOPES:
        yield Failure("manifest.scope is not one of full, dna_only, since", manifest["scope"], list(memoryai.SCOPES), "$.manifest.scope")
    if "embedding_model" in manifest and not isinstance(manifest["embedding_model"], str):
        yield Failure("manifest.embedding_model is not a string", manifest["embedding_model"], "string", "$.manifest.embedding_model")
    if "embedding_dim" in manifest and (not is_int(manifest["embedding_dim"]) or manifest["embedding_dim"] < 0):
        yield Failure("manifest.embedding_dim is not a non-negative integer", manifest["embedding_dim"], "integer", "$.manifest.embedding_dim")


@SUITE.check(kind="document", section="§3.2", keyword="MUST", level="1",
           sentence='"content": "<string>", (REQUIRED) "content_hash": "<sha256 hex>", "memory_type": "<string>", (REQUIRED, see § 3.7)')
def chunk_required_fields(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    for i, chunk in examined(doc, ctx):
        path = f"$.chunks[{i}]"
        if not isinstance(chunk, dict):
            yield Failure("chunk is not an object", chunk, "object", path)
            continue
        if not isinstance(chunk.get("content"), str):
            yield Failure("chunk content is missing or not a string", chunk.get("content", "<absent>"), "string", path + ".content")
        if not isinstance(chunk.get("memory_type"), str):
            yield Failure("chunk memory_type is missing or not a string", chunk.get("memory_type", "<absent>"), "string", path + ".memory_type")


# A field's type: (what it must be, in words; the test a value of it passes).
FieldType = tuple[str, Callable[[Any], bool]]
_SHA256_HEX = re.compile(r"[0-9a-fA-F]{64}")  # "<sha256 hex>": hex of either case (errata E2)
_CHUNK_TYPES: dict[str, FieldType] = {
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


class _Absent:
    """What a column holds for a chunk without the field."""


_ABSENT = _Absent()
# per field, the exact types a column may hold (an absent field aside) for its test to pass on every
# value without calling it (tests still called: content_hash's pattern, the date-times, tags' items)
_COLUMN_TYPES: dict[str, frozenset[type]] = {
    "id": frozenset({int}), "content_hash": frozenset({str}), "embedding_model": frozenset({str}),
    "tags": frozenset({list}), "importance": frozenset({int, float}), "is_pinned": frozenset({bool}),
    "decay_score": frozenset({int, float}), "created_at": frozenset({str}), "accessed_at": frozenset({str}),
    "valid_until": frozenset({str, type(None)}), "metadata": frozenset({dict}),
}
_COLUMN_VALUES: dict[str, Callable[[list[Any]], bool]] = {
    "content_hash": lambda values: all(map(_SHA256_HEX.fullmatch, values)),
    "tags": lambda values: {type(t) for t in chain.from_iterable(values)} <= {str},
    "created_at": lambda values: all(map(iso_ok, values)),
    "accessed_at": lambda values: all(map(iso_ok, values)),
    "valid_until": lambda values: all(v is None or iso_ok(v) for v in values),
}


def _chunk_types_all_hold(chunks: list[dict[str, Any]]) -> bool:
    """Does every chunk pass every _CHUNK_TYPES test? Judged a column (one field over all chunks) at a
    time, mostly in C: exact types first, then the tests that look into a value. True only when the
    per-chunk loop would find nothing; anything else (a wrong type, a subclass) goes to that loop,
    which words each failure."""
    for name in _CHUNK_TYPES:
        column = list(map(dict.get, chunks, repeat(name), repeat(_ABSENT)))
        types = set(map(type, column))
        if _Absent in types:
            types.discard(_Absent)
            column = [v for v in column if v is not _ABSENT]
        if not types <= _COLUMN_TYPES[name]:
            return False
        judge = _COLUMN_VALUES.get(name)
        if judge is not None and not judge(column):
            return False
    return True


@SUITE.check(kind="document", section="§3.2", keyword="MUST", level="1",
           sentence='"tags": [<string>, ...],')
def chunk_field_types(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    """The types of the ChunkRecord shape (id integer, tags strings, is_pinned bool, ISO-8601 times, metadata object)."""
    found = examined(doc, ctx)
    if _chunk_types_all_hold([chunk for _, chunk in found if isinstance(chunk, dict)]):
        return
    for i, chunk in found:
        if not isinstance(chunk, dict):
            continue
        for name, (expected, ok) in _CHUNK_TYPES.items():
            if name in chunk and not ok(chunk[name]):
                yield Failure(f"chunk {name} is not a {expected}", chunk[name], expected, f"$.chunks[{i}].{name}")


def _enums_and_ranges_all_hold(chunks: list[dict[str, Any]]) -> bool:
    """Would the per-chunk loop of chunk_enums_and_ranges find nothing? Judged a column at a time: the
    set of zones (tiers) written is one of the enum's strings each; the numbers of a range column lie
    within 0..1 (min and max; a NaN makes the sum unequal to itself). Anything else: the loop decides."""
    for name, allowed in (("zone", memoryai.ZONES), ("tier", memoryai.TIERS)):
        try:
            written = set(map(dict.get, chunks, repeat(name), repeat(allowed[0])))  # absent passes
        except TypeError:  # an unhashable value
            return False
        if not ({type(v) for v in written} <= {str} and written <= set(allowed)):
            return False
    for name in ("importance", "decay_score"):
        column = list(map(dict.get, chunks, repeat(name)))
        kinds = set(map(type, column))
        if not kinds <= {int, float, type(None)}:
            return False
        numbers: list[Any] = [v for v in column if v is not None] if type(None) in kinds else column
        try:
            if numbers and not (0 <= min(numbers) and max(numbers) <= 1 and sum(numbers) == sum(numbers)):
                return False
        except OverflowError:  # an integer too large for a float
            return False
    return True


@SUITE.check(kind="document", section="§3.2", keyword="MUST", level="1",
           sentence='"zone": "standard" | "important" | "critical" | "ephemeral", "importance": <float 0..1>,')
def chunk_enums_and_ranges(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    """zone and tier enums; importance and decay_score in 0..1."""
    found = examined(doc, ctx)
    if _enums_and_ranges_all_hold([chunk for _, chunk in found if isinstance(chunk, dict)]):
        return
    for i, chunk in found:
        if not isinstance(chunk, dict):
            continue
        path = f"$.chunks[{i}]"
        if "zone" in chunk and chunk["zone"] not in memoryai.ZONES:
            yield Failure("zone is not one of the four zones", chunk["zone"], list(memoryai.ZONES), path + ".zone")
        if "tier" in chunk and chunk["tier"] not in memoryai.TIERS:
            yield Failure("tier is not hot, warm or cold", chunk["tier"], list(memoryai.TIERS), path + ".tier")
        for name in ("importance", "decay_score"):
            value = chunk.get(name)
            if is_number(value) and not 0 <= value <= 1:
                yield Failure(f"{name} is outside 0..1", value, "0 <= x <= 1", f"{path}.{name}")


@SUITE.check(kind="document", section="§3.7", keyword="MAY", level="1",
           sentence="they MAY define additional vendor-specific values prefixed with `x_`")
def memory_type_known_or_vendor(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    """An informational finding, never a blocking one: the spec permits x_ vendor types and forbids nothing else."""
    for i, chunk in examined(doc, ctx):
        mtype = chunk.get("memory_type") if isinstance(chunk, dict) else None
        if isinstance(mtype, str) and mtype not in memoryai.CORE_TYPES and not mtype.startswith("x_"):
            yield Failure("memory_type is neither a core type nor an x_-prefixed vendor type (other consumers may not know it)",
                          mtype, "core type or x_*", f"$.chunks[{i}].memory_type")


@SUITE.check(kind="document", section="§3.3", keyword="MUST", level="1",
           sentence='{ "chunk_a": <int>, "chunk_b": <int>, "edge_type": "<string>",')
def edge_fields(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    checks: dict[str, FieldType] = {
        "chunk_a": ("integer", is_int), "chunk_b": ("integer", is_int), "edge_type": ("string", lambda v: isinstance(v, str)),
        "weight": ("number", is_number), "co_activation_count": ("integer", is_int),
        "created_at": ("ISO-8601 string", iso_ok), "updated_at": ("ISO-8601 string", iso_ok)}
    for i, edge in optional_records(doc, ctx, "memory_edges"):
        if not isinstance(edge, dict):
            yield Failure("edge is not an object", edge, "object", f"$.memory_edges[{i}]")
            continue
        for name, (expected, ok) in checks.items():
            if name in edge and not ok(edge[name]):
                yield Failure(f"edge {name} is not a {expected}", edge[name], expected, f"$.memory_edges[{i}].{name}")
        for name in ("chunk_a", "chunk_b", "edge_type"):
            if name not in edge:
                yield Failure(f"edge {name} is missing (edges upsert on it, §3.8)", "<absent>", name, f"$.memory_edges[{i}]")


@SUITE.check(kind="document", section="§3.4", keyword="MUST", level="1",
           sentence='{ "name": "<string>", (REQUIRED)')
def entity_required_fields(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    for i, entity in optional_records(doc, ctx, "entities"):
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


@SUITE.check(kind="document", section="§3.5", keyword="MUST", level="1",
           sentence="`embedding` fields MUST be one of:")
def embedding_base64_float32(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    """null, or a base64-encoded little-endian array of float32 values."""
    found = examined(doc, ctx)
    sizes = embedding_sizes(doc, ctx)
    if all(type(size) is int and size % 4 == 0 for size in sizes.values()) and \
            len(sizes) == sum(1 for _, chunk in found if isinstance(chunk, dict) and chunk.get("embedding") is not None):
        return  # every embedding present is a string (sizes has one per string) of whole float32 values
    for i, chunk in found:
        if not isinstance(chunk, dict) or chunk.get("embedding") is None:
            continue
        value = chunk["embedding"]
        path = f"$.chunks[{i}].embedding"
        if not isinstance(value, str):
            yield Failure("embedding is neither null nor a base64 string", value, "null or base64 string", path)
            continue
        size = sizes[i]
        if isinstance(size, ValueError):
            yield Failure("embedding is not valid base64", value, "base64 of float32 values", path, str(size))
            continue
        if size % 4:
            yield Failure("embedding byte length is not a multiple of 4 (float32)", size, "multiple of 4", path)


@SUITE.check(kind="document", section="§3.5", keyword="MUST", level="1",
           sentence="The array length MUST equal `manifest.embedding_dim`.")
def embedding_length_matches_dim(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    manifest = doc.get("manifest") if isinstance(doc, dict) else None
    dim = manifest.get("embedding_dim") if isinstance(manifest, dict) else None
    examined(doc, ctx)
    for i, size in embedding_sizes(doc, ctx).items():
        if isinstance(size, ValueError):
            continue  # embedding_base64_float32 reports it
        if not is_int(dim):
            yield Failure("chunk has an embedding but manifest.embedding_dim is not an integer", dim, "integer", "$.manifest.embedding_dim")
            return
        if size != 4 * dim:
            yield Failure("embedding length differs from manifest.embedding_dim", size / 4, dim, f"$.chunks[{i}].embedding")


@SUITE.check(kind="document", section="§3.6", keyword="SHOULD", level="1",
           sentence="`manifest.checksum` is the SHA-256 hex digest of:")
def checksum_present_and_valid(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    """§5 Level 1 "includes a valid `checksum` per § 3.6": a SHOULD in §3.6, but the Level 1 clause requires it.

    Every plausible reading of the canonical form is accepted by default (errata E1): non-ASCII literal or
    \\u-escaped, numbers as Python's json or JSON.stringify writes them."""
    yield from checksum_of(doc, ctx, canonical)


@SUITE.check(kind="document", section="§5 Level 1", keyword="MUST", level="1", sentence="declares accurate `manifest.counts`")
def counts_accurate(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    if ctx.document is None and not any(records(doc, s) for s in memoryai.RECORD_SECTIONS):
        from memconform.suites.memoryai.client import nothing_to_examine

        raise nothing_to_examine(ctx, "records")  # zero declared for zero present shows nothing
    yield from counts_of(doc)


@SUITE.check(kind="document", section="§6", keyword="MUST", level="1", sentence="Bundles MUST NOT include API keys, audit logs, or other credentials.")
def no_credentials_in_bundle(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    if not credentials.suspicious(a_bundle(doc)):  # an export that is no bundle was not scanned: never a pass
        return
    for key, value in doc.items():
        if key == "chunks":
            # embeddings are base64 noise: scan everything else in chunks
            for i, chunk in records(doc, "chunks"):
                if isinstance(chunk, dict):
                    yield from credentials.scan({k: v for k, v in chunk.items() if k != "embedding"}, f"$.chunks[{i}]")
                else:
                    yield from credentials.scan(chunk, f"$.chunks[{i}]")
        else:
            yield from credentials.scan({key: value}, "$")


@SUITE.check(kind="document", section="§3.2", keyword="SHOULD", level="1",
           sentence='"content_hash": "<sha256 hex>",')
def content_hash_matches(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    """Reading (errata E2): sha256 of the content's UTF-8 bytes, as written or NFC-normalised; hex of either case."""
    if ctx.option("content_hash") == "unchecked":
        raise SkipCheck("option memoryai.content_hash=unchecked", not_applicable=True)
    for i, chunk in examined(doc, ctx):
        if isinstance(chunk, dict) and isinstance(chunk.get("content"), str) and isinstance(chunk.get("content_hash"), str):
            claimed, content = chunk["content_hash"].lower(), chunk["content"]
            lone = memoryai.lone_surrogate_at(content)
            if lone is not None:  # a JSON escape can write one; no UTF-8 bytes exist to hash, so no claim can match
                yield Failure("content holds a lone surrogate, which has no UTF-8 bytes: content_hash cannot be their sha256",
                              f"U+{ord(content[lone]):04X} at index {lone}", "content of Unicode scalar values",
                              f"$.chunks[{i}].content")
                continue
            normalised = unicodedata.normalize("NFC", content)
            if normalised != content:  # only a text NFC changes shows which of the two readings was taken
                seen = readings.observe(ctx, "E2", reading_kinds.ContentHash(content), claimed,
                                     title="content_hash is not sha256 of the UTF-8 content, as written or NFC",
                                     path=f"$.chunks[{i}].content_hash")
                if seen.failure:
                    yield seen.failure
                continue
            if claimed == memoryai.content_hash(content):
                continue
            yield Failure("content_hash is not sha256 of the UTF-8 content", chunk["content_hash"], memoryai.content_hash(content),
                          f"$.chunks[{i}].content_hash")


_UUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")
_ENVELOPE_SHAPE: dict[str, tuple[str, Any]] = {
    "generator": ("string", lambda v: isinstance(v, str)),
    "exported_at": ("ISO-8601 datetime", iso_ok),
}
_MANIFEST_SHAPE: dict[str, tuple[str, Any]] = {
    "tenant_id": ("uuid or null", lambda v: v is None or (isinstance(v, str) and _UUID.fullmatch(v) is not None)),
    "tenant_name": ("string or null", lambda v: v is None or isinstance(v, str)),
    "tenant_plan": ("string or null", lambda v: v is None or isinstance(v, str)),
    "since": ("ISO-8601 datetime or null", lambda v: v is None or iso_ok(v)),
    "counts": ("object of integer counts", lambda v: isinstance(v, dict) and all(is_int(n) and n >= 0 for n in v.values())),
}


@SUITE.check(kind="document", section="§3", keyword="SHOULD", level="1", sentence='"exported_at": "<ISO-8601 datetime>",')
def envelope_optional_fields(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    """The §3 shape of the fields §3.1 does not require: present ones have the type the shape gives
    (generator, exported_at, tenant_id uuid|null, since, counts), and record sections are arrays."""
    if not isinstance(doc, dict) or not isinstance(doc.get("manifest"), dict):
        # not a bundle (manifest_required_fields reports it): its absent optional fields show nothing
        raise Inconclusive("the document is not a bundle with a manifest object: no envelope to check")
    manifest = doc["manifest"]
    for where, shape, node in (("$", _ENVELOPE_SHAPE, doc), ("$.manifest", _MANIFEST_SHAPE, manifest)):
        for name, (expected, ok) in shape.items():
            if name in node and not ok(node[name]):
                yield Failure(f"{name} is not a {expected}", node[name], expected, f"{where}.{name}")
    generator = doc.get("generator")
    if isinstance(generator, str) and not generator.strip():
        # blank names no implementation under any reading; any other string is taken as its name (errata E20)
        yield Failure("generator is blank: it names no implementation", generator, "<implementation-name>/<version>",
                      "$.generator", '§3 gives the envelope field as "generator": "<implementation-name>/<version>",')
    for section in memoryai.RECORD_SECTIONS:
        if section in doc and not isinstance(doc[section], list):
            yield Failure(f"{section} is not an array of records", type(doc[section]).__name__, "array", f"$.{section}")
