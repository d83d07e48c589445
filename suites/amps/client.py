"""Talking to an AMPS target: its operations, exports built with content unique to the run, cleanup.

Operations a target offers (suites/amps/errata.md A11 explains the bodies):
    import_export   body: an export document          -> ok, or rejected
    export          body: {"subject_id": S}            -> the export of that subject's memory
    delete_artifact body: {"subject_id": S, "artifact_id": A}
    delete_subject  body: {"subject_id": S}            optional: removes what a run wrote (the spec names no API)
    delete_subjects body: {"subject_ids": [S, ...]}    optional, memconform's own: the same for many subjects in
                                                       one call -> {"deleted": {S: records removed}}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Asked
from memconform.core.results import Inconclusive, SkipCheck, TargetError, Unsupported
from memconform.suites.amps import format as amps
from memconform.suites.amps import readings, table
from memconform.targets.base import Reply


def import_export(ctx: CheckContext, doc: Any) -> Reply:
    subject = doc.get("subject") if isinstance(doc, dict) else None
    if isinstance(subject, dict) and isinstance(subject.get("subject_id"), str):
        forget_subject_at_end(ctx, subject["subject_id"])
    reply = ctx.target.call("import_export", doc)
    ctx.note(f"import_export -> {reply.status} {reply.http_status or ''}: {reply.raw[:300].decode('utf-8', 'replace')}")
    return reply


def seed(ctx: CheckContext, doc: dict[str, Any], what: str = "a conformant export") -> None:
    """Import data a check then reads: refused, the check has nothing to observe (amps.accepts_valid_export
    is the check that fails for it)."""
    reply = import_export(ctx, doc)
    if not reply.ok:
        raise Inconclusive(f"the target refused to import {what}: {reply.status} {reply.raw[:200]!r}")


def export(ctx: CheckContext, subject_id: str) -> dict[str, Any]:
    reply = ctx.target.call("export", {"subject_id": subject_id})
    ctx.note(f"export subject_id={subject_id} -> {reply.status} {len(reply.raw)} bytes")
    doc: dict[str, Any] = reply.accepted_json(dict, "export")
    return doc


def delete_artifact(ctx: CheckContext, subject_id: str, artifact_id: str) -> None:
    try:
        reply = ctx.target.call("delete_artifact", {"subject_id": subject_id, "artifact_id": artifact_id})
    except Unsupported:
        raise Inconclusive("the target offers no delete_artifact operation, so a cascade cannot be caused") from None
    ctx.note(f"delete_artifact {artifact_id} -> {reply.status}")
    if not reply.ok:
        raise TargetError(f"delete_artifact was refused: {reply.raw[:200]!r}")


@dataclass
class AmpsRun:
    """What the AMPS checks share during one run (ctx.state(AmpsRun))."""

    subjects: list[str] = field(default_factory=list)  # this run's subjects, removed at the end
    models: list[Any] = field(default_factory=list)  # the state machine's models, one per example


def forget_subject_at_end(ctx: CheckContext, subject_id: str) -> None:
    """Ask the target to remove the run's subjects after the suite (only where it offers a delete)."""
    pending = ctx.state(AmpsRun).subjects
    if not pending:
        ctx.cleanup("amps run data (the subjects this run imported)", lambda: _delete_all(ctx, pending))
    if subject_id not in pending:
        pending.append(subject_id)


SUBJECTS_PER_CALL = 200  # a delete_subjects request stays small (a few kB) whatever the run wrote


def _delete_all(ctx: CheckContext, subjects: list[str]) -> bool:
    """Every subject of the run removed: through delete_subjects where the target offers it and its answer
    names each subject, else (or for those it did not name) one delete_subject each."""
    removed: set[str] = set()
    for start in range(0, len(subjects), SUBJECTS_PER_CALL):
        batch = _deleted_at_once(ctx, subjects[start:start + SUBJECTS_PER_CALL])
        if batch is None:
            break  # not offered (or refused): asked once, the rest go one at a time
        removed |= batch
    try:
        return all(ctx.target.call("delete_subject", {"subject_id": s}).ok for s in subjects if s not in removed)
    except Unsupported:
        return False  # listed as "could not remove": the spec names no delete


def _deleted_at_once(ctx: CheckContext, subjects: list[str]) -> set[str] | None:
    """The subjects one delete_subjects call says it removed (its `deleted` object names each one, with the
    records removed); None when the target does not offer it, refuses it or answers anything but an object."""
    if len(subjects) < 2:
        return set()
    try:
        reply = ctx.target.call("delete_subjects", {"subject_ids": list(subjects)})
        body = reply.json() if reply.ok else None
    except (Unsupported, TargetError):
        return None
    deleted = body.get("deleted") if isinstance(body, dict) else None
    if not isinstance(deleted, dict):
        return None
    return {s for s in subjects if isinstance(deleted.get(s), int) and not isinstance(deleted.get(s), bool)}


def atoms_by_id(doc: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    return {a.get("atom_id"): a for _, a in amps.atoms(doc)}


def artifacts_by_id(doc: dict[str, Any]) -> dict[Any, dict[str, Any]]:
    return {a.get("artifact_id"): a for _, a in amps.artifacts(doc)}


# ---- building exports with unique content ------------------------------------------------------

def make_atom(ctx: CheckContext, label: str, derivation: str = "stated", artifact_ids: list[str] | None = None,
              **fields: Any) -> dict[str, Any]:
    prov: dict[str, Any] = {"derivation": derivation}
    if artifact_ids is not None:
        prov["artifact_ids"] = list(artifact_ids)
    if derivation == "inferred":
        prov["extractor"] = "memconform"
    atom = {
        "atom_id": ctx.unique(f"atom-{label}"),
        "kind": "fact",
        "text": f"Probe fact {ctx.unique(label)}.",
        "confidence": 0.75,
        "sensitivity": "public",
        "valid_from": amps.now_iso(-86400),
        "valid_to": None,
        "created_at": amps.now_iso(-3600),
        "provenance": prov,
    }
    atom.update(fields)
    return atom


def make_artifact(ctx: CheckContext, label: str, atom_ids: list[str], **fields: Any) -> dict[str, Any]:
    art = {
        "artifact_id": ctx.unique(f"art-{label}"),
        "kind": "chat",
        "title": f"probe {label}",
        "body": f"transcript {ctx.unique(label)}",
        "captured_at": amps.now_iso(-7200),
        "source": "manual",
        "atom_ids": list(atom_ids),
        "private": False,
    }
    art.update(fields)
    return art


def make_export(subject_id: str, atoms: list[dict[str, Any]], artifacts: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "export_version": amps.EXPORT_VERSION,
        "exported_at": amps.now_iso(),
        "source_provider": "memconform",
        "subject": {"subject_id": subject_id, "display_name": "memconform probe", "locale": "en-US"},
        "atoms": atoms,
        "artifacts": artifacts,
    }


def sourced(ctx: CheckContext, label: str, derivation: str = "inferred", **atom_fields: Any) -> tuple[dict[str, Any], dict[str, Any]]:
    """One atom and the artifact it cites, linked both ways."""
    art = make_artifact(ctx, label, [])
    atom = make_atom(ctx, label, derivation, [art["artifact_id"]], **atom_fields)
    art["atom_ids"] = [atom["atom_id"]]
    return atom, art


def seed_and_export(ctx: CheckContext) -> dict[str, Any]:
    """The document Producer checks read: the subject the user named, else a seed covering every
    derivation imported and exported again (a producer that cannot import then needs the option)."""
    named = ctx.option("export_subject_id")
    if named:
        return export(ctx, named)
    subject_id = ctx.unique("subject")
    inferred, chat = sourced(ctx, "seed-inferred", "inferred", sensitivity="medical", kind="preference")
    observed, cal = sourced(ctx, "seed-observed", "observed", kind="goal",
                            valid_from=amps.now_iso(-86400), valid_to=amps.now_iso(86400))
    cal["kind"] = "calendar"
    chat["private"] = True
    stated = make_atom(ctx, "seed-stated", "stated", kind="relationship", sensitivity="private")
    doc = make_export(subject_id, [inferred, observed, stated], [chat, cal])
    try:
        seed(ctx, doc, "the seed export")
    except Unsupported:
        raise Inconclusive("the target cannot import and no subject was named "
                           "(--option amps.export_subject_id=...): there is nothing known to export") from None
    except (TargetError, SkipCheck) as exc:
        raise Inconclusive(f"could not seed the target: {exc}") from None
    return export(ctx, subject_id)


def second_import_seen(ctx: CheckContext, merged: bool) -> str:
    """The second atom is there: the first kept (merge) or gone (replace), recorded from the table's A12 rows."""
    table.observe(ctx, "A12", Asked(readings.SECOND_IMPORT), merged)
    return "merge" if merged else "replace"


def import_semantics(ctx: CheckContext) -> str:
    """Errata A12, seen once per run: does a second import for a subject add to it ("merge") or replace its
    snapshot ("replace")? Two exports of one atom each, then the subject's export."""

    def probe() -> str:
        subject_id = ctx.unique("subject-semantics")
        first, second = make_atom(ctx, "first"), make_atom(ctx, "second")
        seed(ctx, make_export(subject_id, [first], []), "an export of one atom")
        seed(ctx, make_export(subject_id, [second], []), "a second export of one atom")
        stored = atoms_by_id(export(ctx, subject_id))
        if second["atom_id"] not in stored:
            raise Inconclusive("an imported atom is missing from the subject's export")
        return second_import_seen(ctx, first["atom_id"] in stored)

    value: str = ctx.once("amps-import-semantics", probe)
    pinned = ctx.option("import_semantics")
    if pinned != "either" and value != pinned:
        ctx.note(f"import semantics seen: {value}; the profile pins {pinned}")
    return value
