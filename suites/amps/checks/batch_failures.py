"""An export whose middle atom is of a class real importers choke on (an optional field absent, a value
at its limit, an unknown enum value, a value over its limit, a case variant the schema is silent on),
imported for a subject that already holds an atom.

The spec's importer validates the whole export against the schema and throws ("Enough to reject
malformed exports"): all or nothing. An atom the schema forbids makes the whole export refused with
none of its atoms stored; one it allows is imported with the others; one it is silent on either way
(errata A36). Whatever the answer, the subject's earlier atom survives (a refused import changes
nothing; an accepted one keeps it under the merge reading of A12).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import ControlRefused, Failure
from memconform.kit import batch_failures, domain, domain_plan
from memconform.kit.domain_values import ABSENT
from memconform.suites.amps.client import (
    atoms_by_id,
    export,
    import_export,
    import_semantics,
    make_atom,
    make_export,
    seed,
)
from memconform.suites.amps.suite import SUITE

PLACE = "export.atoms[]."
# (field of suites/amps/domain.json, class): each goes alone into the middle of an export of its own
MIDDLE_CLASSES = (("confidence", "absent"), ("confidence", "at_maximum"), ("text", "at_max"), ("kind", "case_variant"),
                  ("sensitivity", "unknown"), ("confidence", "beyond_maximum"), ("text", "above_max"))
KEPT = ("text", "kind", "sensitivity", "confidence")


def with_class(atom: dict[str, Any], name: str, value: Any) -> dict[str, Any]:
    out = dict(atom)
    if value is ABSENT:
        out.pop(name, None)
    else:
        out[name] = value
    return out


def earlier_view(exported: dict[str, Any], atom_id: str) -> dict[str, Any]:
    atom = atoms_by_id(exported).get(atom_id)
    return {atom_id: {k: atom.get(k) for k in KEPT}} if atom is not None else {}


@SUITE.check(level="consumer", section="Reference implementation", keyword="MUST",
             sentence="A twenty-line TypeScript validator using ajv. Enough to reject malformed exports and hand you a typed payload.")
def import_batch_middle_item(ctx: CheckContext) -> Iterator[Failure]:
    """Seven exports of five atoms, the middle atom of one class each: an allowed class imported with the
    rest, a forbidden one refusing the whole export with none of its atoms stored, never the first atoms
    kept and the rest dropped; the subject's earlier atom survives."""
    table = domain.load(SUITE.name)
    assert table is not None, "the amps domain table is packaged with the suite"
    merge = import_semantics(ctx) == "merge"
    control = import_export(ctx, make_export(ctx.unique("subject-batch-control"),
                                             [make_atom(ctx, f"batch-control{i}") for i in range(batch_failures.BATCH)], []))
    if not control.ok:
        raise ControlRefused(f"an export of five valid atoms was refused: {control.raw[:200]!r}")
    ledger = ctx.state(domain.DomainLedger)
    # under ci the classes go in turn to one subject holding the earlier atom (one seed and one read, not one
    # a class); a new one after a failure, so a failure is its class's, and after an accepted export under
    # the replace reading, which leaves no earlier atom (every other profile: a subject a class)
    held: tuple[str, str, dict[str, Any]] | None = None
    for name, class_id in MIDDLE_CLASSES:
        cls = table.field(PLACE + name).cls(class_id)
        if held is None or not domain_plan.packs(ctx.profile.name):
            subject_id = ctx.unique("subject-batch")
            earlier = make_atom(ctx, "batch-earlier")
            seed(ctx, make_export(subject_id, [earlier], []), "an export of the subject's earlier atom")
            held = (subject_id, earlier["atom_id"], earlier_view(export(ctx, subject_id), earlier["atom_id"]))
        subject_id, earlier_id, before = held
        atoms = [make_atom(ctx, f"batch-{class_id}-{i}") for i in range(batch_failures.BATCH)]
        atoms[batch_failures.MIDDLE] = with_class(atoms[batch_failures.MIDDLE], name, cls.value())
        reply = import_export(ctx, make_export(subject_id, atoms, []))
        after = export(ctx, subject_id)  # one read: the batch's atoms and the earlier atom
        stored = atoms_by_id(after)
        outcome = batch_failures.BatchResult(accepted=reply.ok, reported=False, stored=tuple(a["atom_id"] in stored for a in atoms))
        label = f"an export whose middle atom has {cls.key}"
        found = list(batch_failures.judge(ctx, "A36", label, cls.expect, outcome, batch_failures.WHOLE))
        ledger.judge([cls.key])
        if merge or not reply.ok:  # under the replace reading (A12) an accepted export is the subject's whole snapshot
            found += batch_failures.kept(label, before, earlier_view(after, earlier_id))
        yield from found
        if found or (reply.ok and not merge):
            held = None
