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
from memconform.suites.amps import model
from memconform.suites.amps.client import atoms_by_id, export, import_export, make_export, sourced
from memconform.suites.amps.domain_fields import drawn_fields, table, with_value
from memconform.suites.amps.suite import SUITE

__all__ = ["drawn_fields", "table", "with_value"]  # the table's fields, kept importable from here

OPEN_POINT = "A57"  # errata: the value classes the spec is silent on, as the target was seen to take them
DERIVATION = "observed"  # cites an artifact and needs no extractor: every provenance field stays optional


def read_back(doc: dict[str, Any], place: str, name: str, atom: dict[str, Any], exported: dict[str, Any]) -> Any:
    if place == "atom":
        return atoms_by_id(exported).get(atom["atom_id"], {}).get(name, domain.ABSENT)
    if place == "provenance":
        return (atoms_by_id(exported).get(atom["atom_id"], {}).get("provenance") or {}).get(name, domain.ABSENT)
    if place == "artifact":
        arts = {a.get("artifact_id"): a for a in exported.get("artifacts", []) if isinstance(a, dict)}
        return arts.get(doc["artifacts"][0]["artifact_id"], {}).get(name, domain.ABSENT)
    return (exported.get("subject") or {}).get(name, domain.ABSENT)


def same(sent: Any, got: Any) -> bool:
    if isinstance(sent, (int, float)) and isinstance(got, (int, float)) and not isinstance(sent, bool):
        return domain.same_number(got, sent, "double")  # the schema's one number, confidence, is "type": "number"
    return bool(sent == got)


def readings(ctx: CheckContext) -> model.Readings:
    return model.Readings.from_options(ctx.option)


def subject_id_of(doc: dict[str, Any]) -> Any:
    subject = doc.get("subject")
    return subject.get("subject_id") if isinstance(subject, dict) else None


def held_before(ctx: CheckContext, doc: dict[str, Any]) -> model.State:
    """For an export that must be refused: the subject it names first holds one atom of a control export,
    so that a refusal can be seen to change nothing (none where no subject id can be asked for)."""
    sid = subject_id_of(doc)
    if not isinstance(sid, str) or not sid:
        return model.EMPTY
    atom, art = sourced(ctx, "held", DERIVATION)
    control = make_export(sid, [atom], [art])
    accepted = [o for o in model.import_answers(model.EMPTY, control, readings(ctx)) if o.accepted]
    if not accepted or not import_export(ctx, control).ok:
        raise ControlRefused("an export of one atom for the subject was refused")
    return accepted[0].state


@dataclass(frozen=True)
class Judged:
    """One import judged: accepted or not, the failure (None when the answer fits the model), and the
    subject's export read to judge it (None when none was read), which the read-back uses again."""

    accepted: bool
    failure: Failure | None = None
    exported: dict[str, Any] | None = None


def judge(ctx: CheckContext, doc: dict[str, Any], label: str, open_point: str,
          state: model.State = model.EMPTY) -> Judged:
    """Import the export into `state`: (whether it was accepted, the failure or None). The reply must be an
    answer the model accepts; after it the subject's export must be what the model's state says (read only
    where the subject id can be asked for, after a refusal only where the subject held something, and not
    after an open value was accepted)."""
    answers = model.import_answers(state, doc, readings(ctx), open_point)
    reply = import_export(ctx, doc)
    fits = model.fitting(answers, reply.ok)
    if not fits:
        allowed = sorted({"imported" if a.accepted else f"refused ({a.why[:80]})" for a in answers})
        title = "a forbidden value was imported" if reply.ok else "an allowed value was refused"
        return Judged(reply.ok, Failure(f"{label}: {title}", f"{reply.status} {reply.raw[:160]!r}", " or ".join(allowed)))
    sid = subject_id_of(doc)
    if not isinstance(sid, str) or not sid or (not reply.ok and sid not in state):
        return Judged(reply.ok)
    if reply.ok and open_point:  # a value the spec is silent on may be kept as sent or normalised: not read back
        return Judged(True)
    stored = export(ctx, sid)
    problems = [model.export_differs(stored, sid, o.state[sid], readings(ctx)) for o in fits if sid in o.state]
    if problems and all(problems):
        title = "the export does not hold what was imported" if reply.ok else "refused, but what the subject holds changed"
        return Judged(reply.ok, Failure(f"{label}: {title}", problems[0], "the subject as the model says"), stored)
    return Judged(reply.ok, None, stored)


def observe_open(ctx: CheckContext, vc: domain.ValueClass, accepted: bool) -> None:
    ctx.observe(OPEN_POINT, {f"{vc.key} accepted": lambda answer: answer is True,
                             f"{vc.key} refused": lambda answer: answer is False}, accepted)


def judge_class(ctx: CheckContext, vc: domain.ValueClass, doc: dict[str, Any], label: str) -> Judged:
    """One export carrying a class, imported and judged by the model; an open class's answer recorded."""
    open_point = OPEN_POINT if vc.expect == "open" else ""
    held = held_before(ctx, doc) if vc.expect == "invalid" else model.EMPTY
    judged = judge(ctx, doc, label, open_point, held)
    if judged.failure is None and open_point:
        observe_open(ctx, vc, judged.accepted)
    return judged


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
    A row of one is its item's own export, as every profile but ci sends it; a longer row holds only
    allowed values (rows_for packs no others)."""
    if len(row) == 1:
        doc, judged = row[0].doc, judge_class(ctx, row[0].vc, row[0].doc, row[0].label)
    else:
        doc = together(ctx, row)
        judged = judge(ctx, doc, f"{len(row)} allowed values in one export ({', '.join(d.vc.key for d in row[:4])} ...)", "")
    ctx.state(domain.DomainLedger).judge(d.vc.key for d in row)
    if judged.failure is not None:
        return [judged.failure]
    exported, found = judged.exported, []
    for d in row:
        if d.vc.expect == "open" or not judged.accepted or d.value is domain.ABSENT:
            continue
        exported = exported or export(ctx, subject_id_of(doc))
        got = read_back(d.doc, d.place, d.name, d.atom, exported)
        if not same(d.value, got):
            found.append(Failure(f"{d.label}: not exported back as written", repr(got)[:120], repr(d.value)[:120],
                                 f"$.{d.place}.{d.name}"))
    return found


@SUITE.check(sweep=True, level="consumer", section="Schema", keyword="MUST", sentence='"required": ["atom_id", "kind", "text", "created_at", "provenance"],')
def imports_every_schema_class(ctx: CheckContext) -> Iterator[Failure]:
    """Each value of each class in an export of a subject of its own (an observed atom citing one
    artifact), judged by the model (suites/amps/model.py): `valid` imported, the subject's export as the
    model's state says and the value read back as written (numbers as doubles), `invalid` refused, `open`
    either way (the answer seen recorded under A57). Under ci the allowed values go together, each in
    its own atom and artifact of one export (harness/kit/domain_plan.py; a failing export is split)."""
    subject = ctx.unique("subject-domain")
    atom, art = sourced(ctx, "domain-control", DERIVATION)
    if not import_export(ctx, make_export(subject, [atom], [art])).ok:
        raise ControlRefused("an export of the same shape with every field as usual was refused")
    rows = domain_plan.rows_for(drawn_values(ctx), ctx.profile.name, group=lambda d: "allowed" if d.vc.expect == "valid" else None,
                                slot=lambda d: d.name if d.place == "subject" else None)
    yield from domain_plan.judge_rows(rows, lambda row: import_row(ctx, row))
