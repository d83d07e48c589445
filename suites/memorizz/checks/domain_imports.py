"""Every class of every field of the domain table (suites/memorizz/domain.json) through the write path,
a restore of an archive.

Envelope classes: each on a small valid archive of its own (fresh namespace). Record classes: the allowed
ones together in one archive, each read back unchanged from an export of its namespace; every other one
as the middle record of an otherwise valid three-record archive. What the spec allows is then checked:
allowed classes restored and read back as written (numbers as the canonical form defines them: equal as
numbers, integers exact), forbidden ones refused with nothing of their archive written, classes the page
leaves open either way (the reading seen is recorded, errata M35); and a namespace restored before all
of it neither lost nor changed.

The table's record ids are made unique to the run by a prefix (a suite works on non-empty instances),
keeping their class: the prefix is ASCII, so an id of 512 characters stays 512 code points and a pair
stays a pair. The digest classes are forms of the archive's own digest (lowercase as sealed, upper
case, one digit short, one too many): a digest of any other value is a checksum mismatch, not a form.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.kit import domain, domain_plan
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz import reading_kinds, readings
from memconform.suites.memorizz.client import forget_namespaces_at_end, import_archive, small_archive
from memconform.suites.memorizz.domain_support import (
    class_answer_failures,
    keeper,
    kept_failures,
    namespace_export,
    table,
    written_in,
)
from memconform.suites.memorizz.sentences import REJECTS
from memconform.suites.memorizz.suite import SUITE

ENVELOPE_FIELDS = readings.M35_ENVELOPE_FIELDS
RECORD_FIELDS = readings.M35_RECORD_FIELDS
RECORD_STORE = "knowledge_base"
ID_SENTENCE = "id is a nonempty string, unique within its store, with at most 512 characters."


ledger = domain.ledger


def expectation(vc: domain.ValueClass) -> str:
    """A class as a consumer meets it here (the table's M35_CONSUMER_OPEN)."""
    return readings.expectation("M35", vc)


def judged_open(ctx: CheckContext, vc: domain.ValueClass, accepted: bool) -> None:
    """A class the page leaves open: the answer the target gave is the reading recorded (errata M35, the table's rows)."""
    readings.observe(ctx, "M35", reading_kinds.OpenClass("M35", vc.key), accepted)


# ---- envelope classes ----------------------------------------------------------------------------

def with_envelope_class(archive: dict[str, Any], vc: domain.ValueClass, value: Any) -> dict[str, Any]:
    """The archive carrying one class of one envelope field, sealed so that only that field differs."""
    if vc.field == "archive.integrity.digest":
        sealed = archive["integrity"]["digest"]
        archive["integrity"]["digest"] = {"lowercase_64": sealed, "uppercase": sealed.upper(),
                                          "short": sealed[:-1], "long": sealed + "0"}[vc.id]
        return archive
    if vc.field == "manifest.record_count":
        archive["manifest"]["record_count"] = memorizz.record_total(archive) + (1 if vc.id == "off_by_one" else 0)
        return memorizz.reseal(archive)
    owner, key = {"archive.format": (archive, "format"), "archive.version": (archive, "version"),
                  "manifest.created_at": (archive["manifest"], "created_at")}[vc.field]
    if value is domain.ABSENT:
        owner.pop(key, None)
    else:
        owner[key] = value
    return memorizz.reseal(archive)


@SUITE.check(sweep=True, level="consumer", section="Integrity and validation", keyword="MUST", sentence=REJECTS)
def domain_envelope_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """Each class of each envelope field of the domain table on a valid archive of its own: allowed ones
    restored (the records in an export of the namespace), forbidden ones refused with nothing written,
    open ones either way. Under ci the allowed values of different fields share an archive
    (harness/kit/domain_plan.py; one refused is split until each failure names its value). The forbidden and
    open values are each restored alone, then one export of everything shows what each namespace holds
    (a target driven through a slow CLI stays in the budget)."""
    kept_ns, before = keeper(ctx, "dom-env-keep")
    items = [(vc, value) for field_id in ENVELOPE_FIELDS for vc in table().field(field_id).classes for value in vc.values()]
    allowed = [item for item in items if expectation(item[0]) == "valid"]
    rows = domain_plan.rows_for(allowed, ctx.profile.name, group=lambda item: "allowed", slot=lambda item: item[0].field)
    yield from domain_plan.judge_rows(rows, lambda row: envelope_row_failures(ctx, row))
    sent = []
    for vc, value in (item for item in items if expectation(item[0]) != "valid"):
        archive, ns = small_archive(ctx, "dom-env")
        with_envelope_class(archive, vc, value)
        shown = archive["integrity"]["digest"] if vc.field == "archive.integrity.digest" else value
        accepted, body = import_archive(ctx, archive, "restore")
        if accepted:
            forget_namespaces_at_end(ctx, ns)
        sent.append((vc, shown, accepted, body, ns))
    written: Callable[[str], int] = written_in(ctx, "dom-env-last") if sent else (lambda ns: 0)
    for vc, shown, accepted, body, ns in sent:
        yield from envelope_answer_failures(ctx, vc, shown, accepted, body, ns, written(ns))
        ledger(ctx).judge([vc.key])
    yield from kept_failures(ctx, kept_ns, before)


def envelope_row_failures(ctx: CheckContext, row: list[tuple[domain.ValueClass, Any]]) -> list[Failure]:
    """One archive carrying the row's envelope values, restored; the digest's class goes last, since every
    other class seals the archive again."""
    archive, ns = small_archive(ctx, "dom-env")
    shown = []
    for vc, value in sorted(row, key=lambda item: item[0].field == "archive.integrity.digest"):
        with_envelope_class(archive, vc, value)
        shown.append((vc, archive["integrity"]["digest"] if vc.field == "archive.integrity.digest" else value))
    accepted, body = import_archive(ctx, archive, "restore")
    if accepted:
        forget_namespaces_at_end(ctx, ns)
    if len(row) == 1:
        found = list(envelope_answer_failures(ctx, row[0][0], shown[0][1], accepted, body, ns, len(namespace_export(ctx, ns))))
    else:
        label = "an archive with " + ", ".join(f"{vc.key} = {value!r:.40}" for vc, value in shown)
        found = list(class_answer_failures(ctx, row[0][0], label, accepted, body, ns, 3, len(namespace_export(ctx, ns)),
                                           "valid", judged_open))
    ledger(ctx).judge(vc.key for vc, _ in row)
    return found


def envelope_answer_failures(ctx: CheckContext, vc: domain.ValueClass, value: Any, accepted: bool, body: Any,
                             ns: str, written: int) -> Iterator[Failure]:
    """`written`: the records an export shows in the archive's namespace."""
    label = f"an archive with {vc.key} = {value!r:.40}"
    yield from class_answer_failures(ctx, vc, label, accepted, body, ns, 3, written, expectation(vc), judged_open)


# ---- record classes ------------------------------------------------------------------------------

@dataclass(frozen=True)
class RecordCase:
    cls: domain.ValueClass
    value: Any  # the class's value as the table gives it
    record: dict[str, Any]  # the record sent


def record_cases(ctx: CheckContext, ns: str) -> Iterator[RecordCase]:
    for field_id in RECORD_FIELDS:
        for vc in table().field(field_id).classes:
            for i, value in enumerate(vc.values()):
                rid = ctx.unique(f"rec{i}")
                data: dict[str, Any] = {"memory_id": ns, "content": ctx.unique("domain record")}
                if field_id == "record.id":
                    rid = unique_id(rid, value)
                else:
                    data["value"] = value
                record: dict[str, Any] = {"data": data}
                if rid is not domain.ABSENT:
                    record["id"] = rid
                yield RecordCase(vc, value, record)


def unique_id(prefix: str, value: Any) -> Any:
    """The class's id made unique to the run, keeping its class: a string keeps its length in code points
    and its characters after the prefix; the empty, absent and null classes stay as they are."""
    if not isinstance(value, str) or value == "":
        return value
    if len(value) >= 64:  # an id at or over a limit: the prefix replaces its first characters
        return prefix + value[len(prefix):]
    return f"{prefix}-{value}"


def archive_of(records: list[dict[str, Any]]) -> dict[str, Any]:
    archive = memorizz.empty_archive(source_provider="memconform-domain")
    archive["stores"][RECORD_STORE].extend(records)
    return memorizz.seal(archive)


def read_back_failures(case: RecordCase, got: dict[str, Any] | None) -> Iterator[Failure]:
    label = f"{case.cls.key} = {case.value!r:.40}"
    if got is None:
        yield Failure(f"{label}: a restored record is not in an export of its namespace", "absent",
                      case.record.get("id"), f"$.stores.{RECORD_STORE}")
        return
    if got.get("id") != case.record.get("id"):
        yield Failure(f"{label}: the record id changed", got.get("id"), case.record.get("id"), f"$.stores.{RECORD_STORE}[].id")
    if "value" in case.record["data"]:
        sent, now = case.record["data"]["value"], (got.get("data") or {}).get("value", "<absent>")
        if isinstance(sent, str):
            if now != sent:  # literal Unicode: never normalised, escaped or trimmed
                yield Failure(f"{label}: the text changed", now, sent, f"$.stores.{RECORD_STORE}[].data.value")
        elif not same_number(sent, now):
            yield Failure(f"{label}: the number changed", now, sent, f"$.stores.{RECORD_STORE}[].data.value",
                          "canonical numbers: equal as numbers; integers exact")


def same_number(sent: Any, got: Any) -> bool:
    """Equal as the canonical form defines numbers: -0 is 0, 5.0 is 5; an integer stays exact."""
    if isinstance(got, bool) or not isinstance(got, int | float):
        return False
    if isinstance(sent, int) and not isinstance(sent, bool):
        return got == sent and (isinstance(got, int) or abs(sent) < 2 ** 53)
    return math.isfinite(got) and got == sent


def by_content(records: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """The records whose data is an object, by their content (a record of another shape has none to match)."""
    return {str(r["data"].get("content")): r for r in records if isinstance(r, dict) and isinstance(r.get("data"), dict)}


@SUITE.check(sweep=True, level="consumer", section="Records and relationships", keyword="MUST", sentence=ID_SENTENCE)
def domain_records_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """The allowed classes of the record fields restored together and read back unchanged; each other class
    as the middle record of an otherwise valid archive: forbidden ones refused with the two beside them
    not written, open ones either way (and read back unchanged when restored); a namespace restored
    before neither lost nor changed."""
    kept_ns, before = keeper(ctx, "dom-rec-keep")
    cases = list(record_cases(ctx, ctx.unique("dom-rec-ns")))
    plain = [case for case in cases if expectation(case.cls) == "valid"]
    # under ci the allowed classes go as many records of one archive (harness/kit/domain_plan.py), each
    # record its own place; an archive refused, or a record not read back as written, is split
    rows = domain_plan.rows_for(plain, ctx.profile.name, group=lambda case: "allowed")
    yield from domain_plan.judge_rows(rows, lambda row: restored_row(ctx, row))
    ledger(ctx).judge(case.cls.key for case in plain)
    for case in (case for case in cases if expectation(case.cls) != "valid"):
        case, goods, accepted, body = middle_record_sent(ctx, case)
        # an export of the namespace alone: an export of everything can be paged past what it shows (a store of
        # many records), and absence seen there would prove nothing
        stored = by_content(namespace_export(ctx, case.record["data"]["memory_id"]))
        yield from middle_record_failures(ctx, case, goods, accepted, body, stored)
        ledger(ctx).judge([case.cls.key])
    yield from kept_failures(ctx, kept_ns, before)


def afresh(ctx: CheckContext, case: RecordCase, ns: str) -> RecordCase:
    """The case's record with an id, content and namespace of its own: a row judged again in halves
    restores records no earlier restore holds (restore refuses ids it holds)."""
    record = {**case.record, "data": {**case.record["data"], "memory_id": ns, "content": ctx.unique("domain record")}}
    if "id" in record:
        record["id"] = unique_id(ctx.unique("rec"), case.value) if case.cls.field == "record.id" else ctx.unique("rec")
    return RecordCase(case.cls, case.value, record)


def restored_row(ctx: CheckContext, row: list[RecordCase]) -> list[Failure]:
    """The row's records in one archive of a fresh namespace, restored and each read back unchanged."""
    ns = ctx.unique("dom-rec-ns")
    forget_namespaces_at_end(ctx, ns)
    sent = [afresh(ctx, case, ns) for case in row]
    accepted, body = import_archive(ctx, archive_of([case.record for case in sent]), "restore")
    if not accepted:
        listed = body.get("errors") if isinstance(body, dict) else None
        errors = json.dumps(listed if listed is not None else body, default=str, ensure_ascii=False)
        # the records its errors name: an id as the errors' JSON writes it (a tab or a quote escaped)
        named = sorted({case.cls.key for case in sent if json.dumps(str(case.record.get("id")), ensure_ascii=False)[1:-1] in errors})
        what = (f"an archive whose record has {sent[0].cls.key} = {sent[0].value!r:.40}" if len(sent) == 1
                else f"an archive of {len(sent)} records of allowed classes")
        # what the target said against it: its errors (the report's first 200 characters are its preamble)
        shown = listed[:3] if isinstance(listed, list) and listed else json.dumps(body, default=str)[:200]
        return [Failure(f"{what} was refused" + (f", its errors naming {', '.join(named)[:120]}" if named else ""),
                        shown, "restored", "$", ", ".join(sorted({case.cls.key for case in sent}))[:200])]
    stored = by_content(namespace_export(ctx, ns))
    return [f for case in sent for f in read_back_failures(case, stored.get(case.record["data"]["content"]))]


def refused_with_progress(ctx: CheckContext, body: Any, sent: list[dict[str, Any]], stored: dict[str, dict[str, Any]]) -> bool:
    """M34 from the table: a store refusing the open value in the middle, its committed progress reported."""
    written = tuple(str(record["data"].get("content")) in stored for record in sent)
    restored = reading_kinds.Restored(accepted=False, reported=False, stored=written, middle=len(sent) // 2,
                                 progress=readings.progress_reported(body, sum(written)))
    return readings.observe(ctx, "M34", reading_kinds.MiddleRecord("open"), restored, accepted=(readings.PARTIAL,),
                            shown=restored.summary()).failure is None


def middle_record_sent(ctx: CheckContext, case: RecordCase) -> tuple[RecordCase, list[dict[str, Any]], bool, Any]:
    """The case's record between two valid ones in an archive of a namespace of its own, restored: (the case,
    the two beside it, accepted, the answer)."""
    ns = case.record["data"]["memory_id"] = ctx.unique("dom-mid-ns")
    goods: list[dict[str, Any]] = [{"id": ctx.unique("good"), "data": {"memory_id": ns, "content": ctx.unique("beside")}} for _ in range(2)]
    accepted, body = import_archive(ctx, archive_of([goods[0], case.record, goods[1]]), "restore")
    if accepted:
        forget_namespaces_at_end(ctx, ns)
    return case, goods, accepted, body


def middle_record_failures(ctx: CheckContext, case: RecordCase, goods: list[dict[str, Any]], accepted: bool, body: Any,
                           stored: dict[str, dict[str, Any]]) -> Iterator[Failure]:
    """A middle record's restore judged by what its namespace holds (`stored`: its records by content)."""
    ns = case.record["data"]["memory_id"]
    label = f"an archive with {case.cls.key} = {case.value!r:.40} in its middle record"
    expect = expectation(case.cls)
    if expect == "invalid" and accepted:
        yield Failure(f"{label} was accepted", body.get("imported") if isinstance(body, dict) else body, "rejected", "$")
    elif not accepted and stored and expect == "open" and refused_with_progress(ctx, body, [goods[0], case.record, goods[1]], stored):
        # a value the page leaves open is no validation's to refuse: the store refused it mid-restore, and "a
        # provider failure can leave a partial import, with committed progress reported" (errata M34)
        forget_namespaces_at_end(ctx, ns)
        ctx.note(f"{label}: refused mid-restore with the progress committed ({body.get('imported')} of 3) reported")
    elif not accepted and stored:
        forget_namespaces_at_end(ctx, ns)
        yield Failure(f"{label} was refused, but records of it were written", sorted(stored)[:3], "nothing written",
                      f"$ (namespace {ns})")
    elif accepted:
        for good in goods:
            if good["data"]["content"] not in stored:
                yield Failure(f"{label} was restored, but a valid record beside it is missing", "absent", good["id"],
                              f"$ (namespace {ns})")
        yield from read_back_failures(case, stored.get(case.record["data"]["content"]))
    if expect == "open":
        judged_open(ctx, case.cls, accepted)
