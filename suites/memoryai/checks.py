"""MemoryAI Protocol v1 suite: the SuiteSpec with its levels from §5, and the Level 1 checks on a live target.

Document checks (Level 1, on a bundle) live in document_checks.py, consumer checks (Level 2) in
consumer_checks.py, the round trip and the HTTP profile in profile_checks.py.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core import jepsen
from memconform.core.model import Failure, Inconclusive, SkipCheck, TargetError, Unsupported
from memconform.core.runner import Context
from memconform.core.suite import Level, SuiteSpec, answers_with, register_suite
from memconform.formats import memoryai as mai

from . import client as c
from . import document_checks
from .document_checks import SPEC

# §5, quoted in errata/memoryai.md E16: each bullet of a level's clause names the checks that decide it,
# whatever keyword the bullet's own section uses (§3.6's checksum is a SHOULD, §3.5's mismatch too).
LEVEL_1_CLAUSE = (
    # "passes the envelope check in § 3.1"
    "envelope_format_literal", "envelope_version_integer", "manifest_required_fields",
    # "correctly encodes embeddings per § 3.5"
    "embedding_base64_float32", "embedding_length_matches_dim",
    # "includes a valid `checksum` per § 3.6"
    "checksum_present_and_valid", "checksum_valid_scoped",
    # "declares accurate `manifest.counts`"
    "counts_accurate", "counts_accurate_scoped",
)
LEVEL_2_CLAUSE = (
    # "if it can ingest any spec-conformant Bundle"
    "ingests_conformant_bundles",
    # "enforce idempotency rules in § 3.8"
    "reimport_inserts_nothing", "existing_row_preserved", "edges_upserted", "entities_upserted", "tenant_id_not_adopted",
    # "enforce DNA-protection rules in § 3.7"
    "dna_never_decayed", "core_memory_types_recognized",
    # "handle embedding model mismatch per § 3.5"
    "embedding_mismatch_dropped",
)
LEVEL_3_CLAUSE = ("roundtrip_equivalent", "own_export_imported_back_large")
# §4 "Conforming HTTP implementations SHOULD expose at least:" the five endpoints of its table
HTTP_CLAUSE = ("export_scope_dna_only", "export_scope_since", "export_stream_equivalent", "import_file_multipart",
               "spec_endpoint", "import_report_shape")

# `memconform run` without --suite: a MemoryAI target exports a memoryai-bundle
_probe = answers_with("export", lambda: {"scope": "full"}, mai.detect)


def _reference() -> Any:
    """`reference:memoryai`: the embedded implementation."""
    from memconform.reference.memoryai import ReferenceBrain

    return ReferenceBrain()


def _mutants() -> Any:
    from memconform.mutants import memoryai as mutants

    return mutants


def _serve(**where: Any) -> None:
    """`memconform serve memoryai`: the reference over HTTP (host=, port=, db=)."""
    from memconform.reference.memoryai_http import serve_reference

    serve_reference(**where)


def _replay(ctx: Context, doc: Any) -> Iterator[Failure]:
    from .profile_checks import roundtrip_once

    return roundtrip_once(ctx, doc)


SUITE = register_suite(SuiteSpec(
    name=mai.SUITE,
    spec_title=SPEC,
    version="1",
    levels=[
        Level("1", "Level 1 Producer", clause=LEVEL_1_CLAUSE),
        Level("2", "Level 2 Consumer", clause=LEVEL_2_CLAUSE),
        Level("3", "Level 3 Bidirectional", requires=("1", "2"), clause=LEVEL_3_CLAUSE),
        Level("http", "HTTP profile (RECOMMENDED)", clause=HTTP_CLAUSE, optional=True),
    ],
    document_source=c.seed_and_export,
    detect=mai.detect,
    routes=mai.ROUTES,
    reference=_reference, mutants=_mutants, serve=_serve, replay=_replay, probe=_probe, run_notes=jepsen.with_counts(),
    hints=("generator", "exported_at", "chunks", "memory_edges", "entities", "l2_sessions", "mood_states", "agents"),
))

target_check = document_checks.target_check

from . import consumer_checks, hostile_input, profile_checks, roundtrip_checks, stateful_checks  # noqa: E402,F401  (register their checks after the SuiteSpec)

__all__ = ["SUITE", "document_checks"]


# ---- Level 1 Producer, on the live target ---------------------------------------------------

def _deletion_views(ctx: Context) -> Iterator[tuple[str, dict[str, Any]]]:
    """Every way a producer lets data out: full, dna_only and since exports, and the stream."""
    yield "export scope full", c.export(ctx, "full")
    for scope, since in (("dna_only", None), ("since", "2000-01-01T00:00:00Z")):
        reply = ctx.target.call("export", c.export_body(ctx, scope, since))
        if reply.ok and isinstance(reply.json(), dict):
            yield f"export scope {scope}", reply.json()
    try:
        reply = ctx.target.call("export_stream", c.export_body(ctx, "full"))
    except Unsupported:
        return
    if reply.ok:
        from .profile_checks import parse_stream

        yield "export/stream", parse_stream(ctx, reply.raw)[0]


@target_check(section="§6", keyword="MUST", level="1",
              sentence="Producers MUST NOT export memory data the user has marked deleted.")
def deleted_not_exported(ctx: Context) -> Iterator[Failure]:
    doomed, doomed_dna, kept = c.chunk(ctx, "doomed"), c.chunk(ctx, "doomed-dna", "decision"), c.chunk(ctx, "kept")
    c.seed(ctx, c.bundle(ctx, [doomed, doomed_dna, kept]), "deletion")
    texts = [doomed["content"], doomed_dna["content"], kept["content"]]
    rows = c.by_hash(c.export(ctx, "full"))
    if doomed["content_hash"] not in rows:
        mistyped = list(c.mistyped_hashes(texts, rows))
        if mistyped:  # the chunk is there, with a content_hash that is not a string: no deletion can be asked
            yield from mistyped
            return
        raise Inconclusive("the chunk to delete never appeared in the export, so its deletion cannot be observed")
    for ch in (doomed, doomed_dna):
        c.hook(ctx, "delete_chunk", {"content_hash": ch["content_hash"]}, "deletion")
    reported: set[str] = set()  # texts whose mistyped content_hash was reported (once over the views)
    for view, doc in _deletion_views(ctx):
        rows = c.by_hash(doc)
        for f in c.mistyped_hashes([t for t in texts if t not in reported], rows):
            f.title = f"{f.title} ({view})"
            yield f
        reported |= {r["content"] for r in rows.get(c.MISTYPED_HASH, []) if r.get("content") in texts}
        for ch in (doomed, doomed_dna):
            if ch["content_hash"] in rows:
                yield Failure(f"a chunk marked deleted is still exported ({view})", ch["content"], "absent", "$.chunks")
        if view == "export scope full" and kept["content_hash"] not in rows:
            yield Failure("deleting one chunk also removed another from the export", "absent", kept["content"], "$.chunks")


def _scoped_exports(ctx: Context) -> dict[str, dict[str, Any]]:
    """dna_only and since exports of a seeded target (once per run); scopes the producer refuses are left out."""
    def make() -> dict[str, dict[str, Any]]:
        try:
            c.import_bundle(ctx, c.bundle(ctx, [c.chunk(ctx, "scoped-dna", "identity"), c.chunk(ctx, "scoped-plain"),
                                                 c.chunk(ctx, "scoped-new", created_at=c.now_iso(-5))]))
        except (SkipCheck, TargetError) as exc:
            ctx.note(f"could not seed before the scoped exports: {exc}")
        out = {}
        for scope, since in (("dna_only", None), ("since", c.now_iso(-600))):
            reply = ctx.target.call("export", c.export_body(ctx, scope, since))
            if reply.ok and isinstance(reply.json(), dict):
                out[scope] = reply.json()
        return out
    found: dict[str, dict[str, Any]] = ctx.once("memoryai-scoped-exports", make)
    if not found:
        raise SkipCheck("the producer offers no dna_only or since scope", not_applicable=True)
    if not any(d.get("chunks") for d in found.values()):
        raise c.nothing_to_examine(ctx, "chunks in scoped exports")
    return found


@target_check(section="§5 Level 1", keyword="MUST", level="1", sentence="declares accurate `manifest.counts`")
def counts_accurate_scoped(ctx: Context) -> Iterator[Failure]:
    """Counts describe the bundle as sent: a scoped export counts its own records, not the whole store."""
    for scope, doc in _scoped_exports(ctx).items():
        for f in document_checks.counts_of(doc):
            f.title = f"{f.title} (export scope {scope})"
            yield f


@target_check(section="§3.6", keyword="SHOULD", level="1", sentence="`manifest.checksum` is the SHA-256 hex digest of:")
def checksum_valid_scoped(ctx: Context) -> Iterator[Failure]:
    """§5 Level 1 "includes a valid `checksum`" holds for every bundle the producer emits, scoped ones too."""
    for scope, doc in _scoped_exports(ctx).items():
        for f in document_checks.checksum_of(doc, ctx):
            f.title = f"{f.title} (export scope {scope})"
            yield f
