"""An OMP export document (the `GET /v1/export` body, §3.3) judged as a file: `memconform validate
export.json` runs these. The envelope of §3.3's example and, over every memory, the §2.1 / §2.3 rules the
target checks apply to what a server returns (suites/omp/rules.py), plus what only a whole export shows:
ids unique across it.

Against a live target they judge the target's own export (GET /v1/export, after one memory of the run
was created so that the memory rules have something to look at), like the other suites' document checks.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, SkipCheck
from memconform.suites.omp import format as omp
from memconform.suites.omp import rules
from memconform.suites.omp.export_memories import each_memory, memories
from memconform.suites.omp.suite import SUITE


def target_export(ctx: CheckContext) -> Any:
    """The document of a run against a target: its export, holding at least one memory this run wrote."""
    from memconform.suites.omp import client
    from memconform.targets import is_http

    if not is_http(ctx.target):
        raise SkipCheck("needs an http:// target (OMP is an HTTP API)", not_applicable=True)
    client.created(ctx, client.memory(ctx, "export-document"))
    return client.export(ctx, record=False).accepted_json(dict, "exporting")


SUITE.document_source = target_export


@SUITE.check(kind="document", section="§3.3", keyword="MUST", level="core",
             sentence="Export all memories as a portable JSON file.")
def export_document_envelope(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    if not isinstance(doc, dict):
        yield Failure("the export is not a JSON object", type(doc).__name__, "{omp_version, exported_at, server, memories}", "$")
        return
    if doc.get("omp_version") != omp.VERSION:
        yield Failure('omp_version is not "0.1"', doc.get("omp_version", "<absent>"), omp.VERSION, "$.omp_version")
    if rules.instant(doc.get("exported_at")) is None:
        yield Failure("exported_at is not an ISO 8601 UTC timestamp", doc.get("exported_at", "<absent>"), "ISO 8601 UTC",
                      "$.exported_at")
    if not isinstance(doc.get("server"), str):
        yield Failure("server is missing or not a string", doc.get("server", "<absent>"), "a string", "$.server")
    if not isinstance(doc.get("memories"), list):
        yield Failure("memories is not an array", doc.get("memories", "<absent>"), "Memory[]", "$.memories")


@SUITE.check(kind="document", section="§2.1", keyword="MUST", level="core",
             sentence='id: string // Unique ID, format: "mem_" + 16 char alphanumeric')
def export_document_memory_ids(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    yield from each_memory(doc, ctx, rules.id_failures)
    first: dict[str, str] = {}
    for where, mem in memories(doc):
        if isinstance(mem, dict) and isinstance(mem.get("id"), str):
            if mem["id"] in first:
                yield Failure("two memories of the export have one id", mem["id"], f"unique (first at {first[mem['id']]})",
                              f"{where}.id")
            first.setdefault(mem["id"], where)


@SUITE.check(kind="document", section="§2.1", keyword="MUST", level="core",
             sentence="content: string // The memory text. Plain natural language. Max 10,000 chars.")
def export_document_content_and_type(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    yield from each_memory(doc, ctx, rules.content_type_failures)


@SUITE.check(kind="document", section="§2.1", keyword="MUST", level="core",
             sentence="tags: string[] // Arbitrary tags for filtering. Max 20 tags, 50 chars each.")
def export_document_tags_namespace_metadata(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    yield from each_memory(doc, ctx, rules.organisation_failures)


@SUITE.check(kind="document", section="§2.1", keyword="MUST", level="core",
             sentence="created_at: string // ISO 8601 UTC timestamp")
def export_document_timestamps_utc(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    yield from each_memory(doc, ctx, rules.timestamp_failures)


@SUITE.check(kind="document", section="§2.3", keyword="MUST", level="core",
             sentence="source: MemorySource // Where this memory came from (see §2.3)")
def export_document_source_object(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    yield from each_memory(doc, ctx, rules.source_failures)


@SUITE.check(kind="document", section="§2.1", keyword="MUST", level="core",
             sentence="embedding?: number[] // Vector embedding of content (implementation-defined dimensions)")
def export_document_embedding(doc: Any, ctx: CheckContext) -> Iterator[Failure]:
    """Optional: a handed file without embeddings breaks nothing; a target's export without any is no evidence."""
    if ctx.document is None and not any(isinstance(mem, dict) and mem.get("embedding") is not None for _, mem in memories(doc)):
        raise SkipCheck("the target's export holds no embedding: nothing of §2.1's `embedding?: number[]` to judge",
                        not_applicable=True)
    yield from each_memory(doc, ctx, rules.embedding_failures)
