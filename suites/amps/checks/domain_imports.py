"""An importer fed every class of every scalar atom, artifact and subject field of the domain table
(suites/amps/domain.json), each in an export of its own: allowed values imported and exported back as
written, forbidden ones refused with nothing stored, values the schema is silent on either way."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import ControlRefused, Failure
from memconform.kit import domain, domain_plan
from memconform.suites.amps.client import atoms_by_id, export, import_export, make_export, sourced
from memconform.suites.amps.domain_fields import drawn_fields, table, with_value
from memconform.suites.amps.domain_support import (
    DERIVATION,
    OPEN_PACKED,
    judge,
    judge_class,
    open_in_turn,
    open_packed,
    plan_group,
    refused_in_turn,
    same,
    subject_id_of,
)
from memconform.suites.amps.suite import SUITE

__all__ = ["drawn_fields", "table", "with_value"]  # the table's fields, kept importable from here


NOT_EXPORTED = "<the record holding it is not in the export>"


def read_back(doc: dict[str, Any], place: str, name: str, atom: dict[str, Any], exported: dict[str, Any]) -> Any:
    """The value as exported: domain.ABSENT when its record has no such field, NOT_EXPORTED when the record
    itself (the atom or the artifact) is not in the export."""
    if place in ("atom", "provenance"):
        record = atoms_by_id(exported).get(atom["atom_id"])
        if record is None:
            return NOT_EXPORTED
        return (record if place == "atom" else record.get("provenance") or {}).get(name, domain.ABSENT)
    if place == "artifact":
        arts = {a.get("artifact_id"): a for a in exported.get("artifacts", []) if isinstance(a, dict)}
        art = arts.get(doc["artifacts"][0]["artifact_id"])
        return NOT_EXPORTED if art is None else art.get(name, domain.ABSENT)
    return (exported.get("subject") or {}).get(name, domain.ABSENT)


@dataclass(frozen=True)
class Drawn:
    """One value of one class, in an export of its own (an observed atom citing one artifact)."""

    vc: domain.ValueClass
    place: str
    name: str
    value: Any
    subject: str
    atom: dict[str, Any]
    doc: dict[str, Any]

    @property
    def label(self) -> str:
        return f"{self.vc.key} = {'<absent>' if self.value is domain.ABSENT else repr(self.value)[:60]}"


def drawn_values(ctx: CheckContext) -> list[Drawn]:
    out = []
    for field, place, name in drawn_fields():
        for vc in field.classes:
            for i, value in enumerate(vc.values()):
                subject = ctx.unique(f"subject-{vc.key}-{i}")
                atom, art = sourced(ctx, f"d-{vc.key}-{i}", DERIVATION)
                out.append(Drawn(vc, place, name, value, subject, atom,
                                 with_value(make_export(subject, [atom], [art]), place, name, value)))
    return out


def together(ctx: CheckContext, row: list[Drawn]) -> dict[str, Any]:
    """One export holding every item's atom and artifact (each as its own export has it), its subject
    carrying the subject fields of the row (pack gives a row one item per subject field at most)."""
    doc = make_export(ctx.unique("subject-domain-row"), [d.doc["atoms"][0] for d in row], [d.doc["artifacts"][0] for d in row])
    for d in row:
        if d.place == "subject":
            doc = with_value(doc, "subject", d.name, d.value)
    return doc


def import_row(ctx: CheckContext, row: list[Drawn]) -> list[Failure]:
    """A row imported and judged by the model; each allowed value read back from the export as written.
    A row of one is its item's own export, as every profile but ci sends it; a longer row here holds only
    allowed values (judged_row sends the others' rows elsewhere)."""
    if len(row) == 1:
        doc, judged = row[0].doc, judge_class(ctx, row[0].vc, row[0].doc, row[0].label)
    else:
        doc = together(ctx, row)
        judged = judge(ctx, doc, f"{len(row)} allowed values in one export ({', '.join(d.vc.key for d in row[:4])} ...)", "")
    ctx.state(domain.DomainLedger).judge(d.vc.key for d in row)
    if judged.failure is not None:
        return [judged.failure]
    exported, found = judged.exported, []
    # the export the model compared (judge): a record it lets be left out (errata A9: withheld by its label, a
    # private artifact) has no value to read back; one read here afresh was not compared, so its absence fails
    compared = exported is not None
    for d in row:
        if d.vc.expect == "open" or not judged.accepted or d.value is domain.ABSENT:
            continue
        exported = exported or export(ctx, subject_id_of(doc))
        got = read_back(d.doc, d.place, d.name, d.atom, exported)
        if got is NOT_EXPORTED and compared:
            continue
        if not same(d.value, got):
            found.append(Failure(f"{d.label}: not exported back as written", repr(got)[:120], repr(d.value)[:120],
                                 f"$.{d.place}.{d.name}"))
    return found


def judged_row(ctx: CheckContext, row: list[Drawn]) -> list[Failure] | None:
    if len(row) > 1 and row[0].vc.expect == "invalid":
        return refused_in_turn(ctx, row)
    if len(row) > 1 and plan_group(row[0].vc, row[0].doc) == OPEN_PACKED:
        return open_packed(ctx, row, together(ctx, row))
    if len(row) > 1 and row[0].vc.expect == "open":
        return open_in_turn(ctx, row)
    return import_row(ctx, row)


def group_of(d: Drawn) -> str:
    return plan_group(d.vc, d.doc)


def slot_of(d: Drawn) -> str | None:
    """What a packed row holds once: a subject field's value (one export, one subject)."""
    return d.name if d.place == "subject" and group_of(d) in ("valid", OPEN_PACKED) else None


@SUITE.check(sweep=True, level="consumer", section="Schema", keyword="MUST", sentence='"required": ["atom_id", "kind", "text", "created_at", "provenance"],')
def imports_every_schema_class(ctx: CheckContext) -> Iterator[Failure]:
    """Each value of each class in an export of a subject of its own (an observed atom citing one
    artifact), judged by the model (suites/amps/model.py): `valid` imported, the subject's export as the
    model's state says and the value read back as written (numbers as doubles), `invalid` refused, `open`
    either way (the answer seen recorded under A57). Under ci the allowed values go together, each in
    its own atom and artifact of one export; the forbidden ones go in turn into one subject read back
    once; the open ones the published schema accepts together in one export (accepted: each seen accepted),
    the other open ones in turn into one subject (harness/kit/domain_plan.py; a row not answered as expected
    is split, down to each value alone)."""
    subject = ctx.unique("subject-domain")
    atom, art = sourced(ctx, "domain-control", DERIVATION)
    if not import_export(ctx, make_export(subject, [atom], [art])).ok:
        raise ControlRefused("an export of the same shape with every field as usual was refused")
    # one export holds one value of a subject field; forbidden and open values each go in an export of their own
    rows = domain_plan.rows_for(drawn_values(ctx), ctx.profile.name, group=group_of, slot=slot_of)
    yield from domain_plan.judge_rows(rows, lambda row: judged_row(ctx, row))
