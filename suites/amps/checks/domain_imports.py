"""An importer fed every class of every scalar atom, artifact and subject field of the domain table
(suites/amps/domain.json), each in an export of its own: allowed values imported and exported back as
written, forbidden ones refused with nothing stored, values the schema is silent on either way."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import ControlRefused, Failure
from memconform.kit import domain
from memconform.suites.amps.client import atoms_by_id, export, import_export, make_export, sourced
from memconform.suites.amps.domain_fields import drawn_fields, table, with_value
from memconform.suites.amps.domain_support import DERIVATION, judge_class, same
from memconform.suites.amps.suite import SUITE

__all__ = ["drawn_fields", "table", "with_value"]  # the table's fields, kept importable from here


def read_back(doc: dict[str, Any], place: str, name: str, atom: dict[str, Any], exported: dict[str, Any]) -> Any:
    if place == "atom":
        return atoms_by_id(exported).get(atom["atom_id"], {}).get(name, domain.ABSENT)
    if place == "provenance":
        return (atoms_by_id(exported).get(atom["atom_id"], {}).get("provenance") or {}).get(name, domain.ABSENT)
    if place == "artifact":
        arts = {a.get("artifact_id"): a for a in exported.get("artifacts", []) if isinstance(a, dict)}
        return arts.get(doc["artifacts"][0]["artifact_id"], {}).get(name, domain.ABSENT)
    return (exported.get("subject") or {}).get(name, domain.ABSENT)


@SUITE.check(sweep=True, level="consumer", section="Schema", keyword="MUST", sentence='"required": ["atom_id", "kind", "text", "created_at", "provenance"],')
def imports_every_schema_class(ctx: CheckContext) -> Iterator[Failure]:
    """Each value of each class alone in an export of a subject of its own (an observed atom citing one
    artifact), judged by the model (suites/amps/model.py): `valid` imported, the subject's export as the
    model's state says and the value read back as written (numbers as doubles), `invalid` refused, `open`
    either way (the answer seen recorded under A57)."""
    subject = ctx.unique("subject-domain")
    atom, art = sourced(ctx, "domain-control", DERIVATION)
    if not import_export(ctx, make_export(subject, [atom], [art])).ok:
        raise ControlRefused("an export of the same shape with every field as usual was refused")
    ledger = ctx.state(domain.DomainLedger)
    for field, place, name in drawn_fields():
        for vc in field.classes:
            for i, value in enumerate(vc.values()):
                subject = ctx.unique(f"subject-{vc.key}-{i}")
                atom, art = sourced(ctx, f"d-{vc.key}-{i}", DERIVATION)
                doc = with_value(make_export(subject, [atom], [art]), place, name, value)
                label = f"{vc.key} = {'<absent>' if value is domain.ABSENT else repr(value)[:60]}"
                judged = judge_class(ctx, vc, doc, label)
                if judged.failure is not None:
                    yield judged.failure
                elif vc.expect != "open" and judged.accepted and value is not domain.ABSENT:
                    got = read_back(doc, place, name, atom, judged.exported or export(ctx, subject))
                    if not same(value, got):
                        yield Failure(f"{label}: not exported back as written", repr(got)[:120], repr(value)[:120], f"$.{place}.{name}")
                ledger.judge([vc.key])
