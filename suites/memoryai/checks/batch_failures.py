"""A bundle whose middle chunk is of a class real consumers choke on (§3.2 fields: an optional field
absent, a value at its limit, an unknown memory_type, a value over its limit, a required field absent),
imported after a chunk the tenant already holds.

The spec lets a consumer report a chunk it refuses and import the rest (§4 ImportReport:
`skipped_invalid`), and says nothing against refusing the whole bundle; both are accepted for a chunk
§3.2 forbids, and the one seen recorded (errata E41). A chunk §3.2 allows must be imported with the
others. Whatever the answer, the chunk held before the import is there afterwards, unchanged.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Observation
from memconform.core.results import Failure
from memconform.kit import batch_failures, domain
from memconform.kit.domain_values import ABSENT
from memconform.suites.memoryai import answers, client, reading_kinds, readings
from memconform.suites.memoryai.suite import SUITE

# (field of suites/memoryai/domain.json, class): each goes alone into the middle of a bundle of its own
MIDDLE_CLASSES = (("chunk.importance", "absent"), ("chunk.importance", "at_maximum"), ("chunk.memory_type", "unknown"),
                  ("chunk.importance", "beyond_maximum"), ("chunk.memory_type", "absent"))
FIELDS = ("content", "memory_type", "tags", "zone", "importance", "is_pinned")


def middle_item(expect: str) -> Callable[..., Observation]:
    """E41 asked of the table (kit/batch_failures.judge's `ask`), for a middle chunk of a class expected `expect`."""
    return lambda ctx, point, outcome, **how: readings.observe(ctx, point, reading_kinds.MiddleItem(expect), outcome, **how)


def with_class(chunk: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    out = dict(chunk)
    if value is ABSENT:
        out.pop(name, None)
    else:
        out[name] = value
    return out


def held(ctx: CheckContext, hashes: list[str]) -> dict[str, Any]:
    rows = client.by_hash(client.export(ctx, "full"))
    return {h: {k: rows[h][0].get(k) for k in FIELDS} for h in hashes if rows.get(h)}


@SUITE.check(section="§5 Level 2", keyword="MUST", level="2", sentence="if it can ingest any spec-conformant Bundle")
def import_batch_middle_item(ctx: CheckContext) -> Iterator[Failure]:
    """Five bundles of five chunks, the middle one of one class each: an allowed class imported with the
    rest; a forbidden one reported (skipped_invalid) with the rest imported, or the bundle refused and
    nothing of it imported; never the first chunks kept and the rest dropped; the chunk held before kept."""
    table = domain.load(SUITE.name)
    assert table is not None, "the memoryai domain table is packaged with the suite"
    earlier = client.chunk(ctx, "batch-earlier")
    client.seed(ctx, client.bundle(ctx, [earlier]), "a chunk held before the batches")
    before = held(ctx, [earlier["content_hash"]])
    answers.control(client.import_bundle(ctx, client.bundle(ctx, [client.chunk(ctx, f"batch-control{i}") for i in range(batch_failures.BATCH)])),
              "a bundle of five valid chunks")
    ledger = ctx.state(domain.DomainLedger)
    for field_id, class_id in MIDDLE_CLASSES:
        cls = table.field(field_id).cls(class_id)
        chunks = [client.chunk(ctx, f"batch-{class_id}-{i}") for i in range(batch_failures.BATCH)]
        chunks[batch_failures.MIDDLE] = with_class(chunks[batch_failures.MIDDLE], field_id.split(".", 1)[1], cls.value())
        reply = client.import_bundle(ctx, client.bundle(ctx, chunks))
        report = answers.report_or_none(reply) or {}
        skipped = answers.counter(report, "chunks", "skipped_invalid") if report else None
        rows = client.by_hash(client.export(ctx, "full"))
        outcome = batch_failures.BatchResult(accepted=reply.ok, reported=isinstance(skipped, int) and skipped >= 1,
                             stored=tuple(bool(rows.get(ch["content_hash"])) for ch in chunks))
        label = f"a bundle whose middle chunk has {cls.key}"
        yield from batch_failures.judge(ctx, "E41", label, cls.expect, outcome, batch_failures.EITHER, ask=middle_item(cls.expect))
        ledger.judge([cls.key])
        yield from batch_failures.kept(label, before, held(ctx, list(before)))
