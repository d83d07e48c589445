"""What the MemoryAI domain checks share (checks/domain_imports.py, domain_records.py, domain_pairs.py): the
domain table and its ledger, a call that errs as a Failure, the markers and placeholders of written records.
Not a check module: the checks import it, never one another."""

from __future__ import annotations

import math
import struct
import unicodedata
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, TargetError
from memconform.kit import domain
from memconform.suites.memoryai import answers, client, model, reading_kinds, readings
from memconform.suites.memoryai import format as memoryai
from memconform.targets.base import Reply


def table() -> domain.Domain:
    return domain.required("memoryai")


ledger = domain.ledger


def server_error(reply: Reply) -> bool:
    return reply.http_status is not None and reply.http_status >= 500


def call_or_failure(ctx: CheckContext, label: str, call: Callable[[], Reply]) -> Reply | Failure:
    """A server error answers nothing the spec allows: a failure naming the class sent (the HTTP seam raises
    it as the target's error, which every other check reports as errored)."""
    try:
        return call()
    except TargetError as exc:
        if "server error" not in str(exc):
            raise
        return Failure(f"{label}: a server error", str(exc)[:200], "an answer, or a refusal with a 4xx", "$")


def marked(ctx: CheckContext, label: str) -> tuple[str, dict[str, Any]]:
    """(marker, a valid chunk tagged with it)."""
    marker = ctx.unique(label)
    return marker, client.chunk(ctx, label, tags=["memconform", marker])


def placeholder(value: Any, names: dict[str, Any]) -> Any:
    """A class value naming a role ("{model}", "{hash}", ...) as what this run made; any other value as it is
    (a braced uuid is a value, not a placeholder)."""
    if isinstance(value, str) and value.startswith("{") and value.endswith("}") and value[1:-1] in names:
        return names[value[1:-1]]
    return value


def no_instant_observed(ctx: CheckContext, body: dict[str, Any], reply: Reply, doc: Any) -> bool:
    """E63: scope since without a since, served or refused (a bundle rejection): the answer seen is recorded.
    False when the request names an instant (or another scope): the caller judges it."""
    if not model.may_refuse_export(body.get("scope"), body.get("since")):
        return False
    answer = "served" if doc is not None else "refused" if answers.is_bundle_rejection(reply) else "other"
    seen = readings.observe(ctx, "E63", reading_kinds.ExportWithoutInstant(), answer,
                            title="an export of scope since without since: neither a bundle nor a refusal")
    return seen.failure is None


CHUNK_FIELDS = ("chunk.content", "chunk.memory_type", "chunk.importance", "chunk.embedding", "chunk.id", "chunk.content_hash",
                "chunk.embedding_model", "chunk.tags", "chunk.zone", "chunk.is_pinned", "chunk.decay_score", "chunk.tier",
                "chunk.created_at", "chunk.accessed_at", "chunk.valid_until", "chunk.metadata")


# E11: the user's fields, read back as written; the others are the consumer's state or informational, read
# back only as a value §3.2 allows (or left out)
READ_BACK_EXACT = frozenset({"content", "memory_type", "importance", "embedding", "tags", "zone", "is_pinned", "valid_until",
                             "metadata", "content_hash"})


def by_marker(doc: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """Exported chunks by each of their tags, and by their content under CONTENT + content (a chunk of a
    tags class carries no marker tag; its content is unique to the run all the same)."""
    out: dict[str, dict[str, Any]] = {}
    for chunk in client.array_at(doc, "chunks"):
        if not isinstance(chunk, dict):
            continue
        tags = chunk.get("tags")
        for tag in tags if isinstance(tags, list) else []:
            if isinstance(tag, str):
                out.setdefault(tag, chunk)
        if isinstance(chunk.get("content"), str):
            out.setdefault(CONTENT + chunk["content"], chunk)
    return out


CONTENT = "\x00content:"


def located(found: dict[str, dict[str, Any]], marker: str, case: ChunkCase | None) -> dict[str, Any] | None:
    got = found.get(marker)
    if got is None and case is not None and isinstance(case.chunk.get("content"), str):
        got = found.get(CONTENT + case.chunk["content"])
    return got


def keeper(ctx: CheckContext) -> tuple[str, dict[str, Any]]:
    """A chunk imported before the domain imports (the positive control): its marker and how it is exported."""
    marker, chunk = marked(ctx, "dom-keep")
    answers.control(client.import_bundle(ctx, client.bundle(ctx, [chunk])), "a valid bundle of one chunk")
    kept = by_marker(client.export(ctx, "full")).get(marker)
    if kept is None:
        raise Inconclusive("the imported control chunk is not in the full export: nothing to compare the domain "
                           "imports with (ingests_conformant_bundles judges that)")
    return marker, kept


def kept_failures(exported: dict[str, Any], marker: str, before: dict[str, Any]) -> Iterator[Failure]:
    now = by_marker(exported).get(marker)
    fields = ("content", "content_hash", "memory_type", "importance", "tags")
    if now is None:
        yield Failure("a chunk imported before the domain imports was lost", "absent", before.get("content"), "$.chunks")
    elif any(now.get(k) != before.get(k) for k in fields):
        yield Failure("a chunk imported before the domain imports was changed", {k: now.get(k) for k in fields},
                      {k: before.get(k) for k in fields}, "$.chunks")


def embedding_value(class_id: str, dim: int) -> Any:
    floats = client.vector(dim, 7)
    if class_id == "little_endian":
        return memoryai.encode_embedding(floats)
    if class_id == "big_endian":
        import base64

        return base64.b64encode(struct.pack(f">{dim}f", *floats)).decode("ascii")
    if class_id == "wrong_length":
        return memoryai.encode_embedding(floats[:-1] if dim > 1 else floats * 2)
    return None


def chunk_value(ctx: CheckContext, vc: domain.ValueClass, value: Any, marker: str, dim: int, chunk: dict[str, Any]) -> Any:
    """The value sent for one class: content prefixed with the marker (unique to the run, keeping its class),
    embeddings of the target's dimension, hashes of the chunk's own content, the rest as the table gives it."""
    if vc.field == "chunk.embedding":
        return embedding_value(vc.id, dim)
    if vc.field == "chunk.content" and isinstance(value, str) and value:
        return f"{marker} {value}"
    content = str(chunk.get("content"))
    digest = memoryai.content_hash(content)
    return placeholder(value, {"model": client.target_model(ctx)[0], "hash": digest, "HASH": digest.upper(),
                               "nfc_hash": memoryai.content_hash(unicodedata.normalize("NFC", content)),
                               "other_hash": memoryai.content_hash(f"{marker} another content")})


@dataclass(frozen=True)
class ChunkCase:
    cls: domain.ValueClass
    value: Any
    marker: str
    chunk: dict[str, Any]


@dataclass(frozen=True)
class ChunkClass:
    """A class's value of a chunk field, the n-th the sweep draws: made into a chunk of its own (chunk_case)
    each time it is sent, so a bundle sent again carries fresh chunks (never duplicates of stored ones)."""

    n: int
    cls: domain.ValueClass
    value: Any


def chunk_classes() -> list[ChunkClass]:
    every = [(k, v) for f in CHUNK_FIELDS for k in table().field(f).classes for v in k.values()]
    return [ChunkClass(n, vc, value) for n, (vc, value) in enumerate(every)]


def chunk_case(ctx: CheckContext, drawn: ChunkClass, dim: int) -> ChunkCase:
    marker, chunk = marked(ctx, "dom")
    chunk["id"] = 1000 + drawn.n  # distinct from every id class, so no two chunks of a bundle share one
    if drawn.cls.field == "chunk.content_hash":  # content not in NFC, so the hash of its NFC form differs (E2)
        chunk["content"] = f"{chunk['content']} cafe\u0301"
    sent = chunk_value(ctx, drawn.cls, drawn.value, marker, dim, chunk)
    case = ChunkCase(drawn.cls, sent, marker, chunk)
    reapply(case)
    if drawn.cls.field == "chunk.content" and isinstance(sent, str):
        chunk["content_hash"] = memoryai.content_hash(sent)
    return case


def chunk_cases(ctx: CheckContext, dim: int) -> Iterator[ChunkCase]:
    for drawn in chunk_classes():
        yield chunk_case(ctx, drawn, dim)


def reapply(case: ChunkCase) -> None:
    """Put the class's value (or its absence) back in the chunk: c.bundle numbers ids and names the model."""
    name = case.cls.field.split(".", 1)[1]
    if case.value is domain.ABSENT:
        case.chunk.pop(name, None)
    else:
        case.chunk[name] = case.value


def bundle_of(ctx: CheckContext, chunks: list[dict[str, Any]], cases: list[ChunkCase]) -> dict[str, Any]:
    bundle = client.bundle(ctx, chunks)
    for case in cases:
        reapply(case)
    return memoryai.seal(bundle)


def same_value(field: str, sent: Any, got: Any) -> bool:
    if field == "tags" and isinstance(sent, list) and isinstance(got, list):  # E11: tags as a set
        return all(isinstance(t, str) for t in got) and set(got) == set(sent)
    if field == "valid_until" and isinstance(sent, str) and client.instant(sent) is not None:
        return client.instant(got) == client.instant(sent)
    if field == "content_hash" and isinstance(sent, str):
        return isinstance(got, str) and got.lower() == sent.lower()
    if field == "importance":
        return (isinstance(got, int | float) and not isinstance(got, bool) and math.isfinite(got)
                and got == sent)
    if field == "embedding" and isinstance(sent, str) and isinstance(got, str):
        try:
            return memoryai.decode_embedding(got) == memoryai.decode_embedding(sent)
        except ValueError:
            return False
    return bool(got == sent)


def valid_now(field: str, got: Any, dim: int) -> bool:
    """Is an exported chunk's value one §3.2/§3.5 allow (a forbidden value repaired counts)?"""
    if field == "content":
        return isinstance(got, str)
    if field == "memory_type":
        return isinstance(got, str)
    if field in ("importance", "decay_score"):
        return got is None or (isinstance(got, int | float) and not isinstance(got, bool) and 0 <= got <= 1)
    if field == "zone":
        return got is None or got in memoryai.ZONES
    if field == "tier":
        return got is None or got in memoryai.TIERS
    if field in ("content_hash", "embedding_model"):
        return got is None or isinstance(got, str)
    if field == "id":
        return isinstance(got, int | str) and not isinstance(got, bool)
    if field in ("created_at", "accessed_at"):
        return got is None or client.instant(got) is not None
    if field == "embedding":
        if got is None:
            return True
        try:
            return isinstance(got, str) and len(memoryai.decode_embedding(got)) == dim * 4
        except ValueError:
            return False
    return True


def read_back_failures(case: ChunkCase, got: dict[str, Any] | None, dim: int) -> Iterator[Failure]:
    field = case.cls.field.split(".", 1)[1]
    label = f"{case.cls.key} = {case.value!r:.40}"
    if got is None:
        yield Failure(f"{label}: an imported chunk is not in the full export", "absent", case.marker, "$.chunks")
    elif case.value is domain.ABSENT:  # an optional field left out: absent, null or a default the spec allows
        if field in got and not valid_now(field, got[field], dim):
            yield Failure(f"{label}: a field left out came back with a value the spec forbids", got[field], "absent, null or "
                          "a value §3.2 allows", f"$.chunks[?].{field}")
    elif field not in READ_BACK_EXACT:  # the consumer's state (E11): any value §3.2 allows
        if field in got and not valid_now(field, got[field], dim):
            yield Failure(f"{label}: the field came back with a value the spec forbids", got[field], "a value §3.2 allows",
                          f"$.chunks[?].{field}")
    elif not same_value(field, case.value, got.get(field, "<absent>")):
        yield Failure(f"{label}: the value changed between import and export", got.get(field, "<absent>"), case.value,
                      f"$.chunks[?].{field}")
