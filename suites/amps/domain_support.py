"""What the AMPS domain checks share (checks/domain_imports.py, domain_envelope.py): a class judged by its import
and read back, and when two values are the same. Not a check module: the checks import it, never one another."""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from memconform.core.check_context import CheckContext
from memconform.core.results import ControlRefused, Failure
from memconform.kit import domain
from memconform.suites.amps import model
from memconform.suites.amps.client import export, import_export, make_export, sourced
from memconform.suites.amps.readings import OPEN_VALUE, Asked
from memconform.suites.amps.table import observe

OPEN_POINT = "A57"  # errata: the value classes the spec is silent on, as the target was seen to take them


DERIVATION = "observed"  # cites an artifact and needs no extractor: every provenance field stays optional


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
    observe(ctx, OPEN_POINT, Asked(OPEN_VALUE, vc.key), accepted)  # the table's A57 rows


def judge_class(ctx: CheckContext, vc: domain.ValueClass, doc: dict[str, Any], label: str) -> Judged:
    """One export carrying a class, imported and judged by the model; an open class's answer recorded."""
    open_point = OPEN_POINT if vc.expect == "open" else ""
    held = held_before(ctx, doc) if vc.expect == "invalid" else model.EMPTY
    judged = judge(ctx, doc, label, open_point, held)
    if judged.failure is None and open_point:
        observe_open(ctx, vc, judged.accepted)
    return judged


# ---- rows of classes sent in turn into one subject (harness/kit/domain_plan.py, under ci) ----------

class ClassItem(Protocol):
    """A class's value in an export of its own, as a domain check draws it."""

    @property
    def vc(self) -> domain.ValueClass: ...
    @property
    def doc(self) -> dict[str, Any]: ...
    @property
    def label(self) -> str: ...


def in_subject(doc: dict[str, Any], subject: str) -> dict[str, Any]:
    """The export naming another subject (the doc has a subject object: classes of the subject's own are
    never sent in turn)."""
    out = copy.deepcopy(doc)
    out["subject"]["subject_id"] = subject
    return out


def refused_in_turn(ctx: CheckContext, row: Sequence[ClassItem]) -> list[Failure] | None:
    """A row of forbidden values, each in its own export naming one subject that first holds a control
    export: every import refused and the subject read back once, unchanged ([]); anything else (one
    imported, the subject changed) None, so the row is judged again in halves down to each value alone,
    whose failure is the one a request of that value alone makes."""
    subject = ctx.unique("subject-domain-refused")
    held = held_before(ctx, make_export(subject, [], []))
    for d in row:
        doc = in_subject(d.doc, subject)
        answers = model.import_answers(held, doc, readings(ctx))
        if import_export(ctx, doc).ok or not model.fitting(answers, False):
            return None
    if model.export_differs(export(ctx, subject), subject, held[subject], readings(ctx)):
        return None
    ctx.state(domain.DomainLedger).judge(d.vc.key for d in row)
    return []


OPEN_PACKED = "open, the published schema accepting it"  # a plan group: open values that may share one export


def plan_group(vc: domain.ValueClass, doc: dict[str, Any]) -> str:
    """The group a class is planned with under ci (harness/kit/domain_plan.py): its expectation, an open value
    apart when the published schema accepts its export (an importer is likely to take those, so one accepted
    export answers for many; the others, likely refused, go in turn: a refusal of several names none)."""
    if vc.expect == "open" and not model.import_problems(doc):
        return OPEN_PACKED
    return vc.expect


def open_packed(ctx: CheckContext, row: Sequence[ClassItem], doc: dict[str, Any]) -> list[Failure] | None:
    """A row of open values the schema accepts, in one export `doc` (each value where its own export has it):
    accepted, each value was seen accepted with the others beside it (A57, recorded per value, not read back,
    as alone); refused (or answered outside the model), None: the row is judged again in halves down to each
    value alone, so every refusal recorded is the value's own."""
    keys = [d.vc.key for d in row]
    judged = judge(ctx, doc, f"{len(row)} open values in one export ({', '.join(keys[:4])} ...)", OPEN_POINT)
    if judged.failure is not None or not judged.accepted:
        return None
    for d in row:
        observe_open(ctx, d.vc, True)
    ctx.state(domain.DomainLedger).judge(keys)
    return []


def open_in_turn(ctx: CheckContext, row: Sequence[ClassItem]) -> list[Failure]:
    """A row of values the spec is silent on, each in its own export as alone but naming one subject (one
    to remove at the end, not one a value): each answer judged and recorded (A57) as that value's alone.
    One refusal of several such values together would not say which it was for, so they are not packed."""
    subject, found = ctx.unique("subject-domain-open"), []
    for d in row:
        judged = judge_class(ctx, d.vc, in_subject(d.doc, subject), d.label)
        ctx.state(domain.DomainLedger).judge([d.vc.key])
        if judged.failure is not None:
            found.append(judged.failure)
    return found
