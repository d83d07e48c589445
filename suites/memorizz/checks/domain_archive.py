"""The structural classes of the domain table (suites/memorizz/domain.json) through a restore: the six
envelope fields, the taxonomy, the 13 store keys, a record's shape and identities, the manifest's fields
and the integrity algorithm.

Each class is a change (`set` members, `drop` members, `replace` the value) to one member of a small
valid archive (an agent, its persona, a knowledge-base note, in a namespace of its own), after which the
archive is sealed again so that only that member differs: counts follow the records unless the class is
about the counts, the digest is recomputed unless the class is about the integrity object. Allowed
classes restored (every record of the namespace in an export of it), forbidden ones refused with nothing
written, open ones either way (the reading seen is recorded, errata M60). A consumer may restore what only
memconform's reading of the manifest's types refuses (errata M5 and M60): those are open for it.
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.kit import domain, domain_plan
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz import reading_kinds, readings
from memconform.suites.memorizz.client import export, forget_namespaces_at_end, import_archive, small_archive
from memconform.suites.memorizz.domain_support import (
    class_answer_failures,
    keeper,
    kept_failures,
    per_namespace,
    table,
    written_in,
)
from memconform.suites.memorizz.sentences import REJECTS
from memconform.suites.memorizz.suite import SUITE

ENVELOPE_FIELDS = readings.M60_ENVELOPE_FIELDS
RECORD_MANIFEST_FIELDS = readings.M60_RECORD_MANIFEST_FIELDS
IDS = "When present, data.id and data._id must match the enclosing id."
KB = "knowledge_base"


def expectation(vc: domain.ValueClass) -> str:
    """A class as a consumer meets it here (the table's M60_CONSUMER_OPEN)."""
    return readings.expectation("M60", vc)


def apply_change(member: dict[str, Any], change: dict[str, Any], ids: dict[str, str]) -> Any:
    """The member after a class's change; `<id>` and `<other>` stand for the record's id and another one."""
    if "replace" in change:
        return copy.deepcopy(change["replace"])
    for key in change.get("drop", []):
        member.pop(key, None)
    for key, value in change.get("set", {}).items():
        member[key] = ids.get(value, value) if isinstance(value, str) else copy.deepcopy(value)
    return member


def record_in(ctx: CheckContext, archive: dict[str, Any], store: str, ns: str) -> dict[str, Any]:
    """The first record of a store, one added (in the namespace) when the store is empty."""
    records = archive["stores"][store]
    if not records:
        rid = ctx.unique(f"dom-{store}")
        records.append({"id": rid, "data": {"memory_id": ns, "content": ctx.unique(f"{store}-prose")}})
    record: dict[str, Any] = records[0]
    return record


def with_structure_class(ctx: CheckContext, vc: domain.ValueClass, ns: str, archive: dict[str, Any]) -> dict[str, Any]:
    """The small archive carrying one structural class, sealed so that only the class's member differs."""
    change: dict[str, Any] = vc.value()
    field = vc.field
    if field.startswith("record."):
        change_record(ctx, vc, change, ns, archive)
        return memorizz.seal(archive)  # counts follow the records
    if field == "archive.stores" and change.get("fill"):
        for store in memorizz.STORES:
            record_in(ctx, archive, store, ns)
        return memorizz.seal(archive)
    if field == "archive.integrity.algorithm":
        apply_change(archive["integrity"], change, {})
        return archive
    manifest = archive["manifest"]
    owner, key = {"archive.envelope": (None, ""), "archive.taxonomy": (archive, "taxonomy"), "archive.stores": (archive, "stores"),
                  "manifest.required": (None, "manifest"), "manifest.scope.user_scoped": (manifest, "scope"),
                  "manifest.counts": (manifest, "counts"), "manifest.includes": (manifest, "includes")}.get(field, (None, "manifest"))
    if owner is None:
        apply_change(archive if key == "" else manifest, change, {})
    else:
        owner[key] = apply_change(owner[key], change, {})
    memorizz.reseal(archive)
    if field == "archive.envelope":
        apply_change(archive, {"drop": change.get("drop", [])}, {})  # resealing put an absent integrity back
    return archive


def change_record(ctx: CheckContext, vc: domain.ValueClass, change: dict[str, Any], ns: str, archive: dict[str, Any]) -> None:
    stores = archive["stores"]
    if "twice" in change:  # the knowledge-base note's id again, in its own store or in another
        kb = stores[KB][0]
        stores[change["twice"]].append({"id": kb["id"], "data": {"memory_id": ns, "content": ctx.unique("twin-prose")}})
        return
    store = change.get("store", KB)
    record = record_in(ctx, archive, store, ns)
    ids = {"<id>": record["id"], "<other>": ctx.unique("other-id")}
    if vc.field == "record.shape":
        at = stores[store].index(record)
        stores[store][at] = apply_change(record, change, ids)
        return
    if vc.field == "record.data.id":
        record["data"].pop("id", None)
        record["data"].pop("_id", None)
    apply_change(record["data"], change, ids)


def namespace_records(archive: dict[str, Any], ns: str) -> int:
    """How many of the archive's records an export of the namespace holds when the archive is restored."""
    return sum(1 for _, r in memorizz.records_of(archive) if isinstance(r, dict) and isinstance(r.get("data"), dict)
               and (r["data"].get("memory_id") == ns or ns in (r["data"].get("memory_ids") or [])))


def judged_open(ctx: CheckContext, vc: domain.ValueClass, accepted: bool) -> None:
    """A class the page leaves open: the answer the target gave is the reading recorded (errata M60, the table's rows)."""
    readings.observe(ctx, "M60", reading_kinds.OpenClass("M60", vc.key), accepted)


def judge_classes(ctx: CheckContext, field_ids: tuple[str, ...], label: str) -> Iterator[Failure]:
    """Each class of these fields restored on an archive of its own (one call each), then one export of
    everything to see what each namespace holds (a target driven through a slow CLI stays in the budget),
    trusted only when a valid archive restored last shows in it (else each namespace is read alone:
    domain_support.written_in, as an export that pages or truncates could hide what a refused archive wrote);
    a namespace restored before all of it neither lost nor changed. Under ci the allowed classes of
    different fields share an archive, restored and exported at once (harness/kit/domain_plan.py: an
    archive refused or not restored whole is split until each failure names its class)."""
    kept_ns, before = keeper(ctx, f"{label}-keep")
    classes = [vc for field_id in field_ids for vc in table().field(field_id).classes]
    together = [vc for vc in classes if domain_plan.packs(ctx.profile.name) and expectation(vc) == "valid"]
    yield from domain_plan.judge_rows(domain_plan.pack(together, slot=lambda vc: vc.field),
                                      lambda row: restored_together(ctx, row, label))
    domain.ledger(ctx).judge(vc.key for vc in together)
    sent = []
    for vc in (vc for vc in classes if vc not in together):
        archive, ns = small_archive(ctx, label)
        with_structure_class(ctx, vc, ns, archive)
        accepted, body = import_archive(ctx, archive, "restore")
        if accepted:
            forget_namespaces_at_end(ctx, ns)
        sent.append((vc, accepted, body, ns, namespace_records(archive, ns)))
    written: Callable[[str], int] = written_in(ctx, f"{label}-last") if sent else (lambda ns: 0)
    for vc, accepted, body, ns, expected in sent:
        yield from answer_failures(ctx, vc, accepted, body, ns, expected, written(ns))
        domain.ledger(ctx).judge([vc.key])
    yield from kept_failures(ctx, kept_ns, before)


def restored_together(ctx: CheckContext, row: list[domain.ValueClass], label: str) -> list[Failure]:
    """Allowed classes of different fields on one archive: restored, and every record of it in an export of
    its namespace. The record and store changes go first: they seal the archive again (counts follow the
    records), which a manifest class after them keeps."""
    archive, ns = small_archive(ctx, label)
    for vc in sorted(row, key=lambda vc: not vc.field.startswith(("record.", "archive.stores"))):
        with_structure_class(ctx, vc, ns, archive)
    accepted, body = import_archive(ctx, archive, "restore")
    if accepted:
        forget_namespaces_at_end(ctx, ns)
    written = per_namespace(export(ctx, memory_id=ns)).get(ns, 0)
    if len(row) == 1:
        return list(answer_failures(ctx, row[0], accepted, body, ns, namespace_records(archive, ns), written))
    shown = "an archive with " + ", ".join(vc.key for vc in row)
    return list(class_answer_failures(ctx, row[0], shown, accepted, body, ns, namespace_records(archive, ns), written,
                                      "valid", judged_open))


@SUITE.check(sweep=True, level="consumer", section="Integrity and validation", keyword="MUST", sentence=REJECTS)
def domain_archive_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """Each class of the envelope, taxonomy, stores and integrity algorithm on a valid archive of its own:
    allowed ones restored whole, forbidden ones refused with nothing written, open ones either way."""
    yield from judge_classes(ctx, ENVELOPE_FIELDS, "dom-arc")


@SUITE.check(sweep=True, level="consumer", section="Records and relationships", keyword="MUST", sentence=IDS)
def domain_records_and_manifest_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """Each class of a record's shape and identities and of the manifest's fields on a valid archive of its
    own: allowed ones restored whole, forbidden ones refused with nothing written, open ones either way."""
    yield from judge_classes(ctx, RECORD_MANIFEST_FIELDS, "dom-rmf")


def answer_failures(ctx: CheckContext, vc: domain.ValueClass, accepted: bool, body: Any, ns: str,
                    expected: int, written: int) -> Iterator[Failure]:
    label = f"an archive with {vc.key}" + (f" ({vc.why})" if vc.why else "")
    yield from class_answer_failures(ctx, vc, label, accepted, body, ns, expected, written, expectation(vc), judged_open)
