"""The implementation's own export, past 1 MB (`ci`) or 10 MB (option `memoryai.large_export_mb`), imported back.

Level 3's clause at the size real brains reach: the round trip §5 names, and the Abstract's promise that
a brain "can move between cloud services, on-prem installations, and third-party implementations".

Seeded through the target's own import in bounded steps (a few hundred kB each), so only the export
imported back is large: a consumer that caps request bodies, or a producer whose export is cut short
once it grows, fails here and nowhere else. What it wrote is deleted at once (megabytes would slow
every later export of the run); the run's cleanup removes the rest.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from memconform.core import history_counts
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive
from memconform.kit import large_export
from memconform.suites.memoryai import client
from memconform.suites.memoryai.suite import SUITE

BATCH, SIZE = 30, 10_000  # ~10,000 characters of mixed UTF-8 each (~15 kB): imports of about 450 kB
FIELDS = ("content", "memory_type", "tags", "zone", "importance", "is_pinned")


def filler(i: int) -> str:
    return (f"record {i}: Größe ✓ 記憶 🧠 " * (SIZE // 20 + 1))[:SIZE]


def ours(rows_by_hash: dict[str, list[dict[str, Any]]], prefix: str) -> dict[str, list[dict[str, Any]]]:
    """The groups of c.by_hash holding a seeded chunk; those whose content_hash is not a string are left out
    (c.mistyped_hashes reports them): every key is then a string, so the keys sort."""
    return {h: rows for h, rows in rows_by_hash.items()
            if h != client.MISTYPED_HASH and any(isinstance(r.get("content"), str) and r["content"].startswith(prefix) for r in rows)}


def text_of(rows: list[dict[str, Any]]) -> str:
    """The first 60 characters of a group's seeded text (a group may also hold rows whose content is not text)."""
    return next((r["content"][:60] for r in rows if isinstance(r.get("content"), str)), "")


@SUITE.check(section="§5 Level 3", keyword="MAY", level="3",
              sentence="can round-trip a Bundle (export → import → re-export) producing an equivalent Bundle (same "
                       "`chunks` set by `content_hash`, same `entities` by name)")
def own_export_imported_back_large(ctx: CheckContext) -> Iterator[Failure]:
    """The target's own full export, past 1 MB (ci) or 10 MB, imported back: accepted, and afterwards every seeded chunk
    is there once, as it was (nothing lost, duplicated or changed)."""
    prefix = ctx.unique("rt-mb")

    def make(i: int) -> dict[str, Any]:
        return client.chunk(ctx, "rt-mb", content=f"{prefix} #{i} {filler(i)}", tags=["memconform", f"t{i % 7}"],
                       importance=round((i % 10) / 10, 1))

    records = large_export.records_for(ctx, len(json.dumps(make(0), ensure_ascii=False).encode("utf-8")))
    chunks = [make(i) for i in range(records)]
    try:
        for start in range(0, records, BATCH):  # small imports: only the export imported back is large
            client.seed(ctx, client.bundle(ctx, chunks[start:start + BATCH]), "the large round trip")
        yield from _round_trip(ctx, prefix, chunks)
    finally:
        if not client.delete_now(ctx, [ch["content_hash"] for ch in chunks]):
            ctx.note("no delete_chunk hook: the seeded chunks stay until the run's cleanup")


def _round_trip(ctx: CheckContext, prefix: str, chunks: list[dict[str, Any]]) -> Iterator[Failure]:
    sent = {ch["content_hash"]: ch for ch in chunks}
    texts = [ch["content"] for ch in chunks]
    doc = client.export(ctx, "full")
    exported = client.by_hash(doc)
    mistyped = list(client.mistyped_hashes(texts, exported))
    yield from mistyped
    before = ours(exported, prefix)
    if not before:
        if mistyped:  # the seeded chunks are there, each with a content_hash that is not a string
            return
        raise Inconclusive("none of the seeded chunks is in the export: nothing to import back")
    size = len(json.dumps(doc, ensure_ascii=False).encode("utf-8"))
    ctx.note(f"the export holds {len(before)} of {len(chunks)} seeded chunks; {size / 1e6:.1f} MB")
    lost_at_export = sorted(set(sent) - set(before))
    if lost_at_export:
        yield Failure(f"the export holds {len(before)} of the {len(chunks)} chunks imported (it grew to {size / 1e6:.1f} MB)",
                      len(before), len(chunks), "$.chunks", f"first missing: {sent[lost_at_export[0]]['content'][:60]!r}")
    # the target's own export, of this run's records only: never write back what others wrote or deleted
    reply = client.import_bundle(ctx, client.own_part(doc, prefix), remember=False)
    if not reply.ok:
        history_counts.record(ctx, history_counts.counts(acknowledged=len(before)))
        yield Failure(f"the target's own export ({size / 1e6:.1f} MB) was refused when imported back",
                      f"{reply.status} {reply.raw[:200].decode('utf-8', 'replace')}", "accepted", "$")
        return
    exported_again = client.by_hash(client.export(ctx, "full"))
    reported = {r["content"] for r in exported.get(client.MISTYPED_HASH, []) if isinstance(r.get("content"), str)}
    yield from client.mistyped_hashes(set(texts) - reported, exported_again)  # only those new after the import back
    after = ours(exported_again, prefix)
    lost = sorted(set(before) - set(after))
    duplicated = sorted(h for h, rows in after.items() if len(rows) > 1)
    changed = sorted(h for h in set(before) & set(after)
                     if any(after[h][0].get(k) != before[h][0].get(k) for k in FIELDS))
    history_counts.record(ctx, history_counts.counts(acknowledged=len(before), lost=len(lost), duplicated=len(duplicated),
                                     corrupted=len(changed)))
    if lost:
        yield Failure("chunks were lost by importing the target's own export back", len(lost), 0, "$.chunks",
                      f"first: {text_of(before[lost[0]])!r}")
    if duplicated:
        yield Failure("importing the target's own export back duplicated chunks (§3.8: skip existing content_hash)",
                      len(duplicated), 0, "$.chunks")
    if changed:
        h = changed[0]
        yield Failure("importing the target's own export back changed stored chunks",
                      {k: after[h][0].get(k) for k in FIELDS if after[h][0].get(k) != before[h][0].get(k)},
                      {k: before[h][0].get(k) for k in FIELDS if after[h][0].get(k) != before[h][0].get(k)}, "$.chunks")
