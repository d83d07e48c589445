"""MemoRizz's producer/consumer pairing for the interop-hole sweep (harness/matrix/interop_sweep.py): an exporter
writes every `export` field of the domain table into an archive, a consumer restores it (`import`). Each class is
placed in an archive by the very builders the consumer checks restore (checks/domain_imports.py's for errata M35's
fields, checks/domain_archive.py's for M60's, reached through the checks' registration), so the document checks
judge the archive the consumer check sends."""

from __future__ import annotations

from typing import Any

from memconform.kit import domain
from memconform.kit.interop_pairing import Pairing, UniqueNames, check_module
from memconform.suites.memorizz import readings
from memconform.suites.memorizz.client import small_archive

# the consumer check of each field group, as readings.OPEN_CLASS_CHECKS names them
CHECKS = {fields: (point, f"memorizz.{check}") for point, groups in readings.OPEN_CLASS_CHECKS.items()
          for fields, check in groups.items()}



def _group(field_id: str) -> tuple[str, str]:
    return next(point_check for fields, point_check in CHECKS.items() if field_id in fields)


def document(field: domain.Field, vc: domain.ValueClass, value: Any) -> dict[str, Any]:
    names = UniqueNames()
    domain_imports = check_module("memorizz", "memorizz.domain_records_every_class")
    domain_archive = check_module("memorizz", "memorizz.domain_archive_every_class")
    if field.id in readings.M35_RECORD_FIELDS:
        data: dict[str, Any] = {"memory_id": "interop-ns", "content": "interop sweep record"}
        record: dict[str, Any] = {"data": data}
        rid = domain_imports.unique_id("interop-rec", value) if field.id == "record.id" else "interop-rec"
        if field.id != "record.id":
            data["value"] = value
        if rid is not domain.ABSENT:
            record["id"] = rid
        return dict(domain_imports.archive_of([record]))
    archive, ns = small_archive(names, "interop")  # type: ignore[arg-type]  # the builders ask only `unique`
    if field.id in readings.M35_ENVELOPE_FIELDS:
        return dict(domain_imports.with_envelope_class(archive, vc, value))
    return dict(domain_archive.with_structure_class(names, vc, ns, archive))


def documents(field: domain.Field, vc: domain.ValueClass) -> list[dict[str, Any]]:
    return [document(field, vc, value) for value in vc.values()]


def expectation(vc: domain.ValueClass) -> str:
    return readings.expectation(_group(vc.field)[0], vc)


def consumer_checks(field: domain.Field) -> tuple[str, ...]:
    return (_group(field.id)[1],)


def pairing() -> Pairing:
    placed = frozenset(f for fields in CHECKS for f in fields)
    return Pairing("memorizz", "export", "import", documents, expectation, consumer_checks, fields=placed)
