"""AMPS's producer/consumer pairing for the interop-hole sweep (harness/matrix/interop_sweep.py): a Producer writes
every `export` field of the domain table into an export, an importer reads it (`import`). Each class is placed by
the builders the consumer checks use (domain_fields.py for the scalar fields; checks/domain_envelope.py's for the
envelope, ids, provenance and links, reached through the check's registration), so the document checks judge the
export the consumer check sends."""

from __future__ import annotations

from typing import Any

from memconform.kit import domain
from memconform.kit.interop_pairing import Pairing, UniqueNames, check_module
from memconform.suites.amps.client import make_export, sourced
from memconform.suites.amps.domain_fields import drawn_fields, with_value
from memconform.suites.amps.domain_support import DERIVATION

SCALARS, ENVELOPE = "amps.imports_every_schema_class", "amps.imports_every_envelope_and_id_class"



def _scalars() -> dict[str, tuple[str, str]]:
    return {field.id: (place, name) for field, place, name in drawn_fields()}


def documents(field: domain.Field, vc: domain.ValueClass) -> list[dict[str, Any]]:
    names = UniqueNames()
    scalar = _scalars().get(field.id)
    if scalar is None:
        return list(check_module("amps", ENVELOPE).docs_for(names, field.id, vc))  # the builders ask only `unique`
    out = []
    for value in vc.values():
        atom, art = sourced(names, f"interop-{vc.key}", DERIVATION)  # type: ignore[arg-type]
        out.append(with_value(make_export(names.unique("subject"), [atom], [art]), *scalar, value))
    return out


def expectation(vc: domain.ValueClass) -> str:
    """The class checks judge each class by the table's word (open: either answer, recorded under A57)."""
    return vc.expect


def consumer_checks(field: domain.Field) -> tuple[str, ...]:
    return (SCALARS,) if field.id in _scalars() else (ENVELOPE,)


def pairing() -> Pairing:
    placed = frozenset([*_scalars(), *(f.id for f in check_module("amps", ENVELOPE).drawn_here())])
    return Pairing("amps", "export", "import", documents, expectation, consumer_checks, fields=placed)
