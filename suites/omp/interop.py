"""OMP's producer/consumer pairing for the interop-hole sweep (harness/matrix/interop_sweep.py). `POST /v1/import`
takes "OMP export JSON object" (§3.3), so the fields an import body carries (the domain table's `import` fields:
the export envelope and a whole Memory) are the fields a server writes into `GET /v1/export`: the producer is an
exporting server, judged by the export document checks, the consumer an importing server. Each class is placed
by the builders the import check sends (domain_data.cases over a whole Memory, the envelope around one), in an
export file."""

from __future__ import annotations

from typing import Any

from memconform.kit import domain
from memconform.kit.interop_pairing import Pairing
from memconform.suites.omp import client, domain_data
from memconform.suites.omp.options import OPTIONS

IMPORTS = "omp.domain_import_every_class"


class _Run:
    """What the builders and the expectation ask of a check's context: unique names, a run id, the options'
    defaults (every open point either way, as a run does unless pinned)."""

    run_id = "interop"

    def __init__(self) -> None:
        self.made = 0

    def unique(self, label: str) -> str:
        self.made += 1
        return f"interop-{label}-{self.made}"

    def option(self, name: str) -> str:
        return OPTIONS.defaults()[name]


def documents(field: domain.Field, vc: domain.ValueClass) -> list[dict[str, Any]]:
    run = _Run()
    if field.where == "envelope":
        out = []
        for value in vc.values():
            doc = client.export_file([client.full_memory(run, "interop")])  # type: ignore[arg-type]
            name = field.id.split(".", 1)[1]
            if value is domain.ABSENT:
                doc.pop(name, None)
            else:
                doc[name] = value
            out.append(doc)
        return out
    cases = domain_data.cases(run, (field.id,), "interop", full=True)  # type: ignore[arg-type]
    return [client.export_file([case.body]) for case in cases if case.cls.id == vc.id]


def expectation(vc: domain.ValueClass) -> str:
    """The import check's word: an envelope class by the table, a Memory's through its open points' options."""
    return vc.expect if vc.field.startswith("export.") else domain_data.expectation(_Run(), vc)  # type: ignore[arg-type]


def consumer_checks(field: domain.Field) -> tuple[str, ...]:
    return (IMPORTS,)


def pairing() -> Pairing:
    placed = frozenset(f.id for f in domain_data.table().for_operation("import", where=("record", "envelope")))
    return Pairing("omp", "import", "import", documents, expectation, consumer_checks, fields=placed)
