"""A restore whose middle knowledge_base record is of a class real importers choke on (an optional data
field absent, an id at its 512-character limit or over it, an empty id, an id of astral characters at
the limit, a data.id that disagrees with the record's id, an id taken by another record of the store),
into a namespace holding a record that the batch's first record replaces (conflict=replace).

"Validation rejects ... duplicate or inconsistent IDs", and "Imports preview conflicts before writing":
a record validation refuses makes the whole archive refused, nothing of it written, and the record it
would have replaced left as it was; partial progress is the spec's answer to a provider failure, which
`failed_import_reports_progress` drives, and to an open value the store refuses mid-restore with its
committed progress reported (errata M34: a reading of suites/memorizz/table.py, as domain_records_every_class
reads it).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Observation
from memconform.core.results import ControlRefused, Failure
from memconform.kit import batch_failures, domain
from memconform.kit.domain_values import ABSENT
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz import reading_kinds, readings
from memconform.suites.memorizz.client import by_content, export, forget_namespaces_at_end, import_archive
from memconform.suites.memorizz.suite import SUITE

Record = dict[str, Any]


def with_id(value: Any) -> Callable[[list[Record]], None]:
    def apply(records: list[Record]) -> None:
        middle = records[batch_failures.MIDDLE]
        if value is ABSENT:
            middle.pop("id", None)
        else:
            middle["id"] = value
        middle["data"].pop("id", None)  # data.id, when present, must match: it goes with the record's id
    return apply


def without_user_id(records: list[Record]) -> None:
    records[batch_failures.MIDDLE]["data"].pop("user_id")


def data_id_disagrees(records: list[Record]) -> None:
    records[batch_failures.MIDDLE]["data"]["id"] = records[batch_failures.MIDDLE]["id"] + "-other"


def id_taken(records: list[Record]) -> None:
    records[batch_failures.MIDDLE]["id"] = records[1]["id"]
    records[batch_failures.MIDDLE]["data"]["id"] = records[1]["id"]


def cases(table: domain.Domain) -> list[tuple[str, str, str | None, Callable[[list[Record]], None]]]:
    """(label, expect, domain class key or None, how the middle record is changed)."""
    field = table.field("record.id")
    drawn = [(f"an id of class {cls.key}", cls.expect, cls.key, with_id(cls.value()))
             for cls in (field.cls(i) for i in ("at_max", "at_max_astral", "above_max", "empty"))]
    return [("an optional data field (user_id) absent", "valid", None, without_user_id), *drawn,
            ("a data.id that disagrees with the record's id", "invalid", None, data_id_disagrees),
            ("an id another record of the store holds", "invalid", None, id_taken)]


def middle_record(expect: str) -> Callable[..., Observation]:
    """M34 asked of the table (kit/batch_failures.judge's `ask`): for an open class every reading the table has
    for it (the store's refusal with its progress reported too), else those the kit's all-or-nothing allows."""
    return lambda ctx, point, outcome, accepted, **how: readings.observe(
        ctx, point, reading_kinds.MiddleRecord(expect), outcome, accepted=None if expect == "open" else accepted, **how)


def kb_record(ctx: CheckContext, ns: str, label: str, rid: str | None = None) -> Record:
    rid = rid or ctx.unique(f"kb-{label}")
    return {"id": rid, "data": {"id": rid, "memory_id": ns, "user_id": None, "content": ctx.unique(f"prose-{label}")}}


def archive_of(records: list[Record]) -> dict[str, Any]:
    archive = memorizz.empty_archive(source_provider="memconform-batch")
    archive["stores"]["knowledge_base"] = records
    return memorizz.seal(archive)


def texts(ctx: CheckContext, ns: str) -> dict[str, Any]:
    return {text: record.get("id") for text, (_, record) in by_content(export(ctx, memory_id=ns)).items()}


@SUITE.check(level="consumer", section="Integrity and validation", keyword="MUST",
             sentence="Validation rejects unsupported versions, unknown envelope fields, incorrect taxonomy, missing store keys, "
                      "duplicate or inconsistent IDs, incorrect counts, and checksum mismatches.")
def import_batch_middle_item(ctx: CheckContext) -> Iterator[Failure]:
    """Seven restores of five records (conflict=replace, the first replacing a record held before), the
    middle record of one class each: an allowed class restored with the rest; a forbidden one refusing the
    whole archive with nothing written and the held record unchanged; never the first records kept and the
    rest dropped."""
    table = domain.load(SUITE.name)
    assert table is not None, "the memorizz domain table is packaged with the suite"
    control_ns = ctx.unique("batch-control-ns")
    forget_namespaces_at_end(ctx, control_ns)
    accepted, body = import_archive(ctx, archive_of([kb_record(ctx, control_ns, f"c{i}") for i in range(batch_failures.BATCH)]), "restore")
    if not accepted:
        raise ControlRefused(f"a restore of five valid records was refused: {str(body)[:200]}")
    ledger = ctx.state(domain.DomainLedger)
    # every case's held record restored in one archive (a namespace each), then each case's batch and an export
    # of its namespace (one of everything can be paged past what it shows): 1 + 2 x 7 calls where 3 x 7 were
    planned = []
    for label, expect, key, change in cases(table):
        ns = ctx.unique("batch-ns")
        forget_namespaces_at_end(ctx, ns)
        planned.append((label, expect, key, change, ns, kb_record(ctx, ns, "held")))
    accepted, body = import_archive(ctx, archive_of([copy.deepcopy(held) for *_, held in planned]), "restore")
    if not accepted:
        raise ControlRefused(f"a restore of one valid record in each of {len(planned)} namespaces was refused: {str(body)[:200]}")
    sent = []
    for label, expect, key, change, ns, held in planned:
        records = [kb_record(ctx, ns, f"b{i}", rid=held["id"] if i == 0 else None) for i in range(batch_failures.BATCH)]
        change(records)
        accepted, body = import_archive(ctx, archive_of(records), "restore", "replace")
        sent.append((label, expect, key, ns, held, records, accepted, body, texts(ctx, ns)))
    for label, expect, key, _ns, held, records, accepted, body, after in sent:
        before = {held["data"]["content"]: held["id"]}
        errors = body.get("errors") if isinstance(body, dict) else None
        stored = tuple(r["data"]["content"] in after for r in records)
        outcome = reading_kinds.Restored(accepted=accepted, reported=bool(errors), stored=stored,
                                    progress=readings.progress_reported(body, sum(stored)))
        label = f"a restore whose middle record has {label}"
        yield from batch_failures.judge(ctx, "M34", label, expect, outcome, batch_failures.WHOLE, ask=middle_record(expect))
        if key is not None:
            ledger.judge([key])
        # refused: the record the first one would have replaced is as it was; but a store that refused the middle
        # record mid-restore with its progress reported (M34's shape) committed the first record, which replaced it
        # as conflict=replace asks: for an open value that is the reading, for any other class the partial restore
        # the line above already fails, never a second fault (the memorizz CLI refusing a 512-character id was
        # blamed twice for it)
        if not accepted and not (outcome.partial_with_progress() and stored[0]):
            yield from batch_failures.kept(label, before, {t: after[t] for t in before if t in after})
