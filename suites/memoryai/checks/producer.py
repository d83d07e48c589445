"""Level 1 Producer checks on a live target: deletion honoured in every export view, and the scoped
exports' counts and checksums (the document checks judge the full export)."""

from __future__ import annotations

import math
import struct
from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, SkipCheck, TargetError, Unsupported
from memconform.suites.memoryai import client
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.bundle_rules import checksum_of, counts_of
from memconform.suites.memoryai.suite import SUITE


def _deletion_views(ctx: CheckContext) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every way a producer lets data out: full, dna_only and since exports, and the stream."""
    yield "export scope full", client.export(ctx, "full")
    for scope, since in (("dna_only", None), ("since", "2000-01-01T00:00:00Z")):
        reply = ctx.target.call("export", client.export_body(ctx, scope, since))
        if reply.ok and isinstance(reply.json(), dict):
            yield f"export scope {scope}", reply.json()
    try:
        reply = ctx.target.call("export_stream", client.export_body(ctx, "full"))
    except Unsupported:
        return
    if reply.ok:
        from memconform.suites.memoryai.stream import parse_stream

        yield "export/stream", parse_stream(ctx, reply.raw)[0]


@SUITE.check(section="§6", keyword="MUST", level="1",
              sentence="Producers MUST NOT export memory data the user has marked deleted.")
def deleted_not_exported(ctx: CheckContext) -> Iterator[Failure]:
    doomed, doomed_dna, kept = client.chunk(ctx, "doomed"), client.chunk(ctx, "doomed-dna", "decision"), client.chunk(ctx, "kept")
    client.seed(ctx, client.bundle(ctx, [doomed, doomed_dna, kept]), "deletion")
    texts = [doomed["content"], doomed_dna["content"], kept["content"]]
    rows = client.by_hash(client.export(ctx, "full"))
    if doomed["content_hash"] not in rows:
        mistyped = list(client.mistyped_hashes(texts, rows))
        if mistyped:  # the chunk is there, with a content_hash that is not a string: no deletion can be asked
            yield from mistyped
            return
        raise Inconclusive("the chunk to delete never appeared in the export, so its deletion cannot be observed")
    for ch in (doomed, doomed_dna):
        client.hook(ctx, "delete_chunk", {"content_hash": ch["content_hash"]}, "deletion")
    reported: set[str] = set()  # texts whose mistyped content_hash was reported (once over the views)
    for view, doc in _deletion_views(ctx):
        rows = client.by_hash(doc)
        for f in client.mistyped_hashes([t for t in texts if t not in reported], rows):
            f.title = f"{f.title} ({view})"
            yield f
        reported |= {r["content"] for r in rows.get(client.MISTYPED_HASH, []) if r.get("content") in texts}
        for ch in (doomed, doomed_dna):
            if ch["content_hash"] in rows:
                yield Failure(f"a chunk marked deleted is still exported ({view})", ch["content"], "absent", "$.chunks")
        if view == "export scope full" and kept["content_hash"] not in rows:
            yield Failure("deleting one chunk also removed another from the export", "absent", kept["content"], "$.chunks")


def _scoped_exports(ctx: CheckContext) -> dict[str, dict[str, Any]]:
    """dna_only and since exports of a seeded target (once per run); scopes the producer refuses are left out."""
    def make() -> dict[str, dict[str, Any]]:
        try:
            client.import_bundle(ctx, client.bundle(ctx, [client.chunk(ctx, "scoped-dna", "identity"), client.chunk(ctx, "scoped-plain"),
                                                 client.chunk(ctx, "scoped-new", created_at=client.now_iso(-5))]))
        except (SkipCheck, TargetError) as exc:
            ctx.note(f"could not seed before the scoped exports: {exc}")
        out = {}
        for scope, since in (("dna_only", None), ("since", client.now_iso(-600))):
            reply = ctx.target.call("export", client.export_body(ctx, scope, since))
            if reply.ok and isinstance(reply.json(), dict):
                out[scope] = reply.json()
        return out
    found: dict[str, dict[str, Any]] = ctx.once("memoryai-scoped-exports", make)
    if not found:
        raise SkipCheck("the producer offers no dna_only or since scope", not_applicable=True)
    if not any(d.get("chunks") for d in found.values()):
        raise client.nothing_to_examine(ctx, "chunks in scoped exports")
    return found


@SUITE.check(section="§5 Level 1", keyword="MUST", level="1", sentence="declares accurate `manifest.counts`")
def counts_accurate_scoped(ctx: CheckContext) -> Iterator[Failure]:
    """Counts describe the bundle as sent: a scoped export counts its own records, not the whole store."""
    for scope, doc in _scoped_exports(ctx).items():
        for f in counts_of(doc):
            f.title = f"{f.title} (export scope {scope})"
            yield f


@SUITE.check(section="§3.6", keyword="SHOULD", level="1", sentence="`manifest.checksum` is the SHA-256 hex digest of:")
def checksum_valid_scoped(ctx: CheckContext) -> Iterator[Failure]:
    """§5 Level 1 "includes a valid `checksum`" holds for every bundle the producer emits, scoped ones too."""
    for scope, doc in _scoped_exports(ctx).items():
        for f in checksum_of(doc, ctx):
            f.title = f"{f.title} (export scope {scope})"
            yield f


# values whose float32 bytes read the other way round are far from them (a big-endian 0.25 reads as ~1e-41)
KNOWN_VECTOR_SEED = 11


def _floats(raw: bytes, order: str) -> list[float]:
    return list(struct.unpack(f"{order}{len(raw) // 4}f", raw[:len(raw) // 4 * 4]))


def _same_floats(got: list[float], want: list[float]) -> bool:
    return len(got) == len(want) and all(math.isclose(a, b, rel_tol=1e-6, abs_tol=1e-9) for a, b in zip(got, want, strict=True))


@SUITE.check(section="§3.5", keyword="MUST", level="1",
              sentence="A **base64-encoded** little-endian array of `float32` values.")
def embedding_little_endian(ctx: CheckContext) -> Iterator[Failure]:
    """§5 Level 1 "correctly encodes embeddings per § 3.5": a chunk seeded with a known vector in the
    target's own model comes out of the export decoding, little-endian, to the same float32 values. The
    document checks see only lengths; byte order shows only against values known in advance."""
    model, dim = client.target_model(ctx)
    if dim < 1:
        raise SkipCheck(f"the target's embedding_dim is {dim}: no embedding to compare", not_applicable=True)
    want = _floats(memoryai.decode_embedding(memoryai.encode_embedding(client.vector(dim, KNOWN_VECTOR_SEED))), "<")
    ch = client.chunk(ctx, "known-embedding", embedding=memoryai.encode_embedding(want), embedding_model=model)
    client.seed(ctx, client.bundle(ctx, [ch], model=model, dim=dim), "judging the byte order of an exported embedding")
    rows = client.by_hash(client.export(ctx, "full"))
    yield from client.mistyped_hashes([ch["content"]], rows)
    found = rows.get(ch["content_hash"], [])
    if not found:
        raise Inconclusive("the chunk seeded with a known embedding is not in the export, so its bytes cannot be read")
    value = found[0].get("embedding")
    if value == ch["embedding"]:
        return
    if not isinstance(value, str):  # null (re-embed lazily) or another type: embedding_base64_float32 judges the type
        raise SkipCheck(f"the producer exported the seeded chunk's embedding as {type(value).__name__}, not the vector "
                        "it was given: its byte order cannot be compared with known values", not_applicable=True)
    try:
        raw = memoryai.decode_embedding(value)
    except ValueError:
        return  # not base64: embedding_base64_float32 says so
    if _same_floats(_floats(raw, "<"), want):
        return  # the same float32 values, encoded again
    if _same_floats(_floats(raw, ">"), want):
        yield Failure("the embedding is written big-endian: read little-endian it is not the vector imported",
                      _floats(raw, "<")[:3], want[:3], "$.chunks[?].embedding",
                      f"read big-endian the {len(want)} values are exactly the {model} vector the chunk was imported with")
        return
    raise SkipCheck("the producer exported other values than the seeded vector (re-embedded?): its byte order "
                    "cannot be compared with known values", not_applicable=True)
