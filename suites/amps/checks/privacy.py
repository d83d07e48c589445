"""Consumer level, its clause: the four privacy invariants, with data that tells right from wrong.

Labels contradict the text they sit on (a classifier re-deriving them gets them wrong); private
artifacts come in several kinds; a cascade must follow provenance, not the artifact's back-links;
every invariant is checked again on a downstream copy (the re-export imported as another subject).
"""

from __future__ import annotations

import copy
import re
from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Asked
from memconform.core.results import Failure, Inconclusive
from memconform.suites.amps import format as amps
from memconform.suites.amps import model, readings, table
from memconform.suites.amps.client import (
    artifacts_by_id,
    atoms_by_id,
    delete_artifact,
    export,
    import_export,
    make_artifact,
    make_atom,
    make_export,
    seed,
)
from memconform.suites.amps.suite import SUITE

# each label on two texts that suggest another one: two atoms per label tell a filter on the label (every one
# left out, errata A9) from a loss (one left out beside the other)
_LABELLED = {
    "public": ("Takes insulin twice a day for type 1 diabetes.", "Was sued by a former landlord last year."),
    "medical": ("Enjoys hiking on weekends.", "Has 12,000 dollars in a savings account."),
    "financial": ("Likes jazz more than rock.", "Was diagnosed with asthma as a child."),
    "legal": ("Prefers tea to coffee.", "Pays 900 dollars a month in rent."),
    "private": ("Owes the bank 40,000 dollars on a mortgage.", "Is a party to a custody hearing in May."),
}


def downstream_copy(ctx: CheckContext, doc: dict[str, Any], label: str) -> tuple[str, dict[str, Any]] | Failure:
    """The target's own export imported again as another subject, and that subject's export. Refused: the
    invariant cannot hold in a downstream copy the target will not make of its own export, a failure of
    the check that needed the copy (not a skip: the target answered, and the answer breaks the rule)."""
    copy_doc = copy.deepcopy(doc)
    subject_id = ctx.unique(label)
    copy_doc["subject"] = {**(copy_doc.get("subject") or {}), "subject_id": subject_id}
    reply = import_export(ctx, copy_doc)
    if not reply.ok:
        return Failure("the target refused to import its own export (as another subject): no downstream copy keeps the invariant",
                       f"{reply.status} {reply.raw[:200]!r}", "its own export imported", "$")
    return subject_id, export(ctx, subject_id)


@SUITE.check(level="consumer", section="Privacy invariants", keyword="MUST",
                sentence="Sensitivity travels. An atom marked medical in the source must remain medical in every "
                         "downstream copy.")
def sensitivity_travels(ctx: CheckContext) -> Iterator[Failure]:
    subject_id = ctx.unique("subject")
    sent = {label: [make_atom(ctx, f"sens-{label}-{n}", sensitivity=label, text=f"{text} ({ctx.unique('t')})")
                    for n, text in enumerate(texts)] for label, texts in _LABELLED.items()}
    seed(ctx, make_export(subject_id, [atom for atoms in sent.values() for atom in atoms], []))
    first = export(ctx, subject_id)
    copied = downstream_copy(ctx, first, "subject-copy")
    if isinstance(copied, Failure):
        yield copied
    hops = [("the re-export", first)] + ([] if isinstance(copied, Failure) else [("a downstream copy", copied[1])])
    compared = 0
    for hop, doc in hops:
        stored = atoms_by_id(doc)
        for label, atoms in sent.items():
            ids = [atom["atom_id"] for atom in atoms]
            got = tuple(None if i not in stored else stored[i].get("sensitivity", "<absent>") for i in ids)
            failure = label_verdict(ctx, label, got, label_title(label, dict(zip(ids, got, strict=True)), hop))
            compared += sum(g is not None for g in got)
            if failure is not None:
                yield failure
    if not compared and not isinstance(copied, Failure):
        raise Inconclusive("no imported atom came back in an export: there is no copy to compare")


def label_title(label: str, exported: dict[str, Any], hop: str) -> str:
    """What an answer fitting no A9 reading did: atoms of a label lost (some left out, or a public one), or relabelled."""
    lost = [i for i, got in exported.items() if got is None]
    changed = [i for i, got in exported.items() if got is not None and got != label]
    parts = ([f"{len(lost)} of {len(exported)} {label} atoms missing from {hop} (lost: a filter on the label leaves "
              f"out every one of a label other than public) {lost}"] if lost else []) \
        + ([f"sensitivity changed between import and {hop} {changed}"] if changed else [])
    return "; ".join(parts) or f"{label} atoms in {hop}"


@SUITE.check(level="consumer", section="Privacy invariants", keyword="MUST",
                sentence="Private is private. Artifacts with private: true are excluded from any AI training corpus "
                         "regardless of importer default.")
def private_stays_private(ctx: CheckContext) -> Iterator[Failure]:
    subject_id = ctx.unique("subject")
    atoms, arts = [], []
    for kind in ("chat", "voice", "email", "document"):
        art = make_artifact(ctx, f"private-{kind}", [], kind=kind, private=True)
        atom = make_atom(ctx, f"private-{kind}", "observed", [art["artifact_id"]])
        art["atom_ids"] = [atom["atom_id"]]
        atoms.append(atom)
        arts.append(art)
    seed(ctx, make_export(subject_id, atoms, arts))
    first = export(ctx, subject_id)
    copied = downstream_copy(ctx, first, "subject-copy")
    if isinstance(copied, Failure):
        yield copied
    hops = [("the re-export", first)] + ([] if isinstance(copied, Failure) else [("a downstream copy", copied[1])])
    compared = 0
    for hop, doc in hops:
        stored = artifacts_by_id(doc)
        for art in arts:
            got = stored.get(art["artifact_id"])
            failure = private_verdict(ctx, None if got is None else got.get("private", "<absent>"),
                                      f"a private {art['kind']} artifact lost private: true in {hop} ({art['artifact_id']})")
            compared += got is not None
            if failure is not None:
                yield failure
    if not compared and not isinstance(copied, Failure):
        raise Inconclusive("no private artifact came back in an export: whether the flag travels is not visible")


def label_verdict(ctx: CheckContext, label: str, exported: Any, title: str) -> Failure | None:
    """The atoms imported with `label`, each one's label as one export holds it (None: left out): the table's A9
    readings (all kept with the label, or all of a label other than public withheld)."""
    pinned = () if readings.withholding_allowed(ctx.option) else ("A9:none-withheld",)
    return table.observe(ctx, "A9", table.labelled(label), exported, title=title, path="$.atoms[?].sensitivity",
                         pinned=pinned).failure


def private_verdict(ctx: CheckContext, exported: Any, title: str) -> Failure | None:
    """A private artifact's flag as exported (None: the artifact withheld): the table's A9 readings."""
    return table.observe(ctx, "A9", Asked(readings.PRIVATE), exported, title=title,
                         path="$.artifacts[?].private").failure


def unsourced_verdict(ctx: CheckContext, exported: Any, atom_id: Any) -> Failure | None:
    """An atom whose only source was deleted, as exported (None: absent): the table's A5 readings (recorded)."""
    pinned = () if ctx.option("unsourced_after_delete") == "delete-or-flag" else ("A5:delete",)
    return table.observe(ctx, "A5", Asked(readings.UNSOURCED), exported, pinned=pinned, path="$.atoms[?]",
                         title=f"an atom whose only source was deleted is neither deleted nor re-flagged unsourced ({atom_id})",
                         ).failure


@SUITE.check(level="consumer", section="Privacy invariants", keyword="MUST",
                sentence="Delete cascades. Deleting an artifact must re-evaluate every atom whose provenance depends "
                         "on it. Atoms that drop below a minimum-source threshold are deleted or re-flagged as "
                         "unsourced.")
def delete_cascades(ctx: CheckContext) -> Iterator[Failure]:
    subject_id = ctx.unique("subject")
    doomed, other = make_artifact(ctx, "doomed", []), make_artifact(ctx, "other", [])
    only = make_atom(ctx, "only-doomed", "inferred", [doomed["artifact_id"]])
    # depends on the artifact through its provenance only: the artifact's atom_ids does not list it
    watched = make_atom(ctx, "only-doomed-observed", "observed", [doomed["artifact_id"]])
    both = make_atom(ctx, "both", "inferred", [doomed["artifact_id"], other["artifact_id"]])
    said = make_atom(ctx, "stated-cites-doomed", "stated", [doomed["artifact_id"]])
    doomed["atom_ids"] = [only["atom_id"], both["atom_id"], said["atom_id"]]
    other["atom_ids"] = [both["atom_id"]]
    doc = make_export(subject_id, [only, watched, both, said], [doomed, other])
    seed(ctx, doc)
    if len(atoms_by_id(export(ctx, subject_id)).keys() & {only["atom_id"], watched["atom_id"], both["atom_id"]}) < 3:
        raise Inconclusive("the imported atoms are not all in the subject's export before the delete")
    # another subject (another user's vault) holds an artifact under the same id, and an atom citing it
    neighbour_id = ctx.unique("subject-neighbour")
    twin = make_artifact(ctx, "twin", [], artifact_id=doomed["artifact_id"])
    twin_atom = make_atom(ctx, "twin-cites", "observed", [twin["artifact_id"]])
    twin["atom_ids"] = [twin_atom["atom_id"]]
    seed(ctx, make_export(neighbour_id, [twin_atom], [twin]), "an export of another subject citing the same artifact id")
    delete_artifact(ctx, subject_id, doomed["artifact_id"])
    after = export(ctx, subject_id)
    found: list[Failure] = []
    neighbour = export(ctx, neighbour_id)
    if twin["artifact_id"] not in artifacts_by_id(neighbour) or twin_atom["atom_id"] not in atoms_by_id(neighbour):
        found.append(Failure("deleting an artifact of one subject deleted another subject's artifact of the same id, or "
                             "its atom", {"artifacts": sorted(map(str, artifacts_by_id(neighbour))),
                                          "atoms": sorted(map(str, atoms_by_id(neighbour)))},
                             {"artifacts": [twin["artifact_id"]], "atoms": [twin_atom["atom_id"]]}, "$",
                             "only the named subject's artifact goes"))
    stored = atoms_by_id(after)
    if doomed["artifact_id"] in artifacts_by_id(after):
        found.append(Failure("the deleted artifact is still exported", doomed["artifact_id"], "absent", "$.artifacts"))
    for atom in (only, watched):
        failure = unsourced_verdict(ctx, stored.get(atom["atom_id"]), atom["atom_id"])
        if failure is not None:
            found.append(failure)
    kept = stored.get(both["atom_id"])
    if kept is None:
        found.append(Failure("an atom that still has a source was deleted", "absent", both["atom_id"], "$.atoms"))
    elif doomed["artifact_id"] in amps.artifact_ids_of(kept):
        found.append(Failure("an atom still cites the deleted artifact", amps.artifact_ids_of(kept), [other["artifact_id"]],
                             "$.atoms[?].provenance.artifact_ids"))
    stated = stored.get(said["atom_id"])  # a stated atom needs no source: kept (re-evaluated) or dropped, both fine
    if stated is not None and doomed["artifact_id"] in amps.artifact_ids_of(stated):
        found.append(Failure("a stated atom still cites the deleted artifact", amps.artifact_ids_of(stated), [],
                             "$.atoms[?].provenance.artifact_ids", said["atom_id"]))
    yield from found
    if found:  # the model would name the same difference again
        return
    # the rest of the subject as the model says a deletion leaves it: the atoms it did not concern untouched
    readings = model.Readings.from_options(ctx.option)
    before = next(o.state for o in model.import_answers(model.EMPTY, doc, readings) if o.accepted)
    held = model.delete_answers(before, subject_id, doomed["artifact_id"])[0].state[subject_id]
    problem = model.export_differs(after, subject_id, held, readings)
    if problem:
        yield Failure("the subject's export after the delete is not what the model says it leaves", problem,
                      "every atom and artifact the deletion did not concern as imported")


_INTERNAL_ID = re.compile(r"(?i)(^|[_\-])(user_?|account_?|internal_?|provider_?)?id$")


@SUITE.check(level="consumer", section="Privacy invariants", keyword="MUST",
                sentence="Subject controls the ID. subject_id is opaque and controlled by the user. Providers cannot "
                         "bind their internal user IDs to the portable format.")
def subject_id_unchanged(ctx: CheckContext) -> Iterator[Failure]:
    # opaque: upper case, spaces, a slash, a decomposed é, an astral character; nothing to normalise
    subject_id = ctx.unique("Subject") + " Opaque/ID e\u0301 ✓ 𝄞"
    subject = {"subject_id": subject_id, "display_name": "memconform probe", "locale": "en-US"}
    doc = make_export(subject_id, [make_atom(ctx, "subject")], [])
    doc["subject"] = dict(subject)
    seed(ctx, doc)
    exported = export(ctx, subject_id)
    if doc["atoms"][0]["atom_id"] not in atoms_by_id(exported):
        yield Failure("the subject's memory is not found under the user's own subject_id", subject_id,
                      "the imported atom", "$.atoms")
    got = exported.get("subject")
    got = got if isinstance(got, dict) else {}
    if got.get("subject_id") != subject_id:
        yield Failure("the re-export does not carry the user's subject_id unchanged", got.get("subject_id"), subject_id,
                      "$.subject.subject_id")
    for key in sorted(set(got) - set(subject)):
        if _INTERNAL_ID.search(key):
            yield Failure("the re-export binds another identifier to the subject", {key: got[key]}, "only subject_id",
                          f"$.subject.{key}")
