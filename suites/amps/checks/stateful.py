"""A model-based check: random sequences of imports (valid and refused) and artifact deletions for one
subject, the subject's export compared with the model after every step.

The model is what the spec (and the import semantics the target was seen to follow, errata A12) says the
subject holds: its atoms with their text, sensitivity and sources, its artifacts with their private flag.
A refused import changes nothing; a deletion drops the artifact, removes it from every atom's sources,
and an inferred or observed atom left without a source is deleted or re-flagged unsourced (A5).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from memconform.core import history_counts, model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.core.model import Failure, TargetError
from memconform.suites.amps import format as amps
from memconform.suites.amps.client import (
    AmpsRun,
    artifacts_by_id,
    atoms_by_id,
    delete_artifact,
    export,
    import_export,
    import_semantics,
    make_artifact,
    make_atom,
    make_export,
)
from memconform.suites.amps.suite import SUITE


@dataclass
class Model:
    atoms: dict[str, dict[str, Any]] = field(default_factory=dict)  # atom id -> the atom as imported (sources kept current)
    artifacts: dict[str, bool] = field(default_factory=dict)  # artifact id -> private
    unsourced: set[str] = field(default_factory=set)  # atoms that may be deleted or kept flagged (A5)
    steps: list[str] = field(default_factory=list)
    deleted: set[str] = field(default_factory=set)  # artifacts deleted
    acknowledged: int = 0  # atoms and artifacts in accepted imports, and deletions
    tally: dict[str, int] = field(default_factory=history_counts.counts)  # the last comparison's counts


class Divergence(model_based.Divergence):
    """The subject's export left the model: hypothesis shrinks the sequence that caused it."""


def expected_of(subject_id: str, model: Model) -> dict[str, Any]:
    """What the model says the subject's export holds: language-neutral, for the sequence file."""
    return {"subject_id": subject_id, "unsourced": sorted(model.unsourced), "artifacts": dict(model.artifacts),
            "atoms": {i: {"text": a.get("text"), "sensitivity": a.get("sensitivity"),
                          "artifact_ids": sorted(map(str, amps.artifact_ids_of(a)))} for i, a in model.atoms.items()}}


def export_differs(doc: Any, want: dict[str, Any]) -> str | None:
    """What differs between the subject's export and the model's expectation (None: nothing)."""
    if not isinstance(doc, dict):
        return f"the export is {type(doc).__name__}, not an object"
    atoms, arts = atoms_by_id(doc), artifacts_by_id(doc)
    model_atoms, unsourced, model_arts = want["atoms"], set(want["unsourced"]), want["artifacts"]
    extra = set(atoms) - set(model_atoms) - unsourced
    missing = set(model_atoms) - set(atoms) - unsourced
    if extra or missing:
        return f"the export holds atoms {sorted(map(str, extra))} it should not and lacks {sorted(missing)}"
    for atom_id, atom in atoms.items():
        if atom_id in unsourced and atom_id not in model_atoms:
            if amps.has_sources(atom) or not amps.is_flagged_unsourced(atom):
                return f"atom {atom_id} lost its last source but is neither deleted nor flagged unsourced"
            continue
        sent = model_atoms[atom_id]
        for key in ("text", "sensitivity"):
            if atom.get(key) != sent.get(key):
                return f"atom {atom_id} has {key} {atom.get(key)!r}, not {sent.get(key)!r}"
        if sorted(map(str, amps.artifact_ids_of(atom))) != sent["artifact_ids"]:
            return f"atom {atom_id} cites {amps.artifact_ids_of(atom)}, not {sent['artifact_ids']}"
    if set(arts) != set(model_arts):
        return (f"the export holds artifacts {sorted(map(str, set(arts) - set(model_arts)))} it should "
                f"not and lacks {sorted(set(model_arts) - set(arts))}")
    for artifact_id, private in model_arts.items():
        if private and arts[artifact_id].get("private") is not True:
            return f"artifact {artifact_id} lost private: true"
    return None


@sequence.comparator("amps.export")
def _replayed_export(ctx: CheckContext, reply: Any, want: Any) -> str | None:
    return export_differs(reply.json() if reply is not None else None, want)


def tally(doc: dict[str, Any], model: Model) -> dict[str, int]:
    """Jepsen-style counts of the subject's atoms and artifacts in one export."""
    atoms, arts = atoms_by_id(doc), artifacts_by_id(doc)
    return history_counts.counts(
        acknowledged=model.acknowledged,
        lost=len(set(model.atoms) - set(atoms) - model.unsourced) + len(set(model.artifacts) - set(arts)),
        resurrected=len(model.deleted & set(arts)),
        corrupted=sum(1 for i, a in model.atoms.items() if i in atoms
                      and any(atoms[i].get(k) != a.get(k) for k in ("text", "sensitivity"))))


def compare(ctx: CheckContext, subject_id: str, model: Model) -> None:
    doc = export(ctx, subject_id)
    model.tally = tally(doc, model)
    problem = export_differs(doc, expected_of(subject_id, model))
    if problem:
        raise Divergence(sequence.expect(ctx, "amps.export", expected_of(subject_id, model), problem))


def machine(ctx: CheckContext, merge: bool) -> type:
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule

    sensitivities = st.sampled_from(amps.SENSITIVITIES)

    class AmpsSubject(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.subject_id = ctx.unique("subject-model")
            self.model = Model()
            ctx.state(AmpsRun).models.append(self.model)
            sequence.begin(ctx)

        def step(self, text: str) -> None:
            self.model.steps.append(text)
            compare(ctx, self.subject_id, self.model)

        def built(self, data: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
            arts = [make_artifact(ctx, "m", [], private=data.draw(st.booleans(), label="private"))
                    for _ in range(data.draw(st.integers(1, 2), label="artifacts"))]
            atoms = []
            for _ in range(data.draw(st.integers(1, 3), label="atoms")):
                derivation = data.draw(st.sampled_from(amps.DERIVATIONS), label="derivation")
                cites = data.draw(st.lists(st.sampled_from(arts), min_size=derivation != "stated", max_size=2,
                                           unique_by=lambda a: a["artifact_id"]), label="cites")
                atom = make_atom(ctx, "m", derivation, [a["artifact_id"] for a in cites],
                                 sensitivity=data.draw(sensitivities, label="sensitivity"))
                for a in cites:
                    a["atom_ids"].append(atom["atom_id"])
                atoms.append(atom)
            return atoms, arts

        def imported(self, atoms: list[dict[str, Any]], arts: list[dict[str, Any]]) -> None:
            reply = import_export(ctx, make_export(self.subject_id, atoms, arts))
            if not reply.ok:
                raise TargetError(f"a conformant export was refused: {reply.raw[:200]!r}")
            self.model.acknowledged += len(atoms) + len(arts)
            if not merge:
                self.model.atoms, self.model.artifacts, self.model.unsourced = {}, {}, set()
            self.model.atoms.update({a["atom_id"]: a for a in atoms})
            self.model.artifacts.update({a["artifact_id"]: a["private"] for a in arts})
            self.step(f"import {len(atoms)} atoms, {len(arts)} artifacts")

        # every sequence opens with two imports of one sourced atom each, so what a second import does to
        # the first one's atoms and artifacts is seen whatever the random steps after it draw
        @initialize()
        def two_imports(self) -> None:
            for label in ("first", "second"):
                art = make_artifact(ctx, f"m-{label}", [], private=label == "second")
                atom = make_atom(ctx, f"m-{label}", "observed", [art["artifact_id"]])
                art["atom_ids"] = [atom["atom_id"]]
                self.imported([atom], [art])

        @rule(data=st.data())
        def import_valid(self, data: Any) -> None:
            self.imported(*self.built(data))

        @rule(data=st.data(), broken=st.sampled_from(["confidence", "kind", "unzoned", "no-subject-id"]))
        def import_refused(self, data: Any, broken: str) -> None:
            atoms, arts = self.built(data)
            doc = make_export(self.subject_id, atoms, arts)
            if broken == "confidence":
                atoms[0]["confidence"] = 2
            elif broken == "kind":
                atoms[0]["kind"] = "rumour"
            elif broken == "unzoned":
                arts[0]["captured_at"] = "2026-01-01T00:00:00"
            else:
                del doc["subject"]["subject_id"]
            if import_export(ctx, doc).ok:
                raise Divergence(sequence.expect(ctx, "reply", {"ok": False}, f"an export with a broken {broken} was accepted"))
            self.step(f"import refused ({broken})")

        @precondition(lambda self: bool(self.model.artifacts))
        @rule(data=st.data())
        def delete(self, data: Any) -> None:
            artifact_id = data.draw(st.sampled_from(sorted(self.model.artifacts)), label="artifact")
            delete_artifact(ctx, self.subject_id, artifact_id)
            del self.model.artifacts[artifact_id]
            self.model.deleted.add(artifact_id)
            self.model.acknowledged += 1
            for atom_id, atom in list(self.model.atoms.items()):
                refs = amps.artifact_ids_of(atom)
                if artifact_id not in refs:
                    continue
                kept = [r for r in refs if r != artifact_id]
                atom = {**atom, "provenance": {**atom["provenance"], "artifact_ids": kept}}
                if not kept and atom["provenance"]["derivation"] != "stated":
                    del self.model.atoms[atom_id]
                    self.model.unsourced.add(atom_id)
                else:
                    self.model.atoms[atom_id] = atom
            self.step(f"delete artifact {artifact_id}")

    return AmpsSubject


@SUITE.check(level="consumer", section="Privacy invariants", keyword="MUST",
                sentence="Deleting an artifact must re-evaluate every atom whose provenance depends on it.")
def model_sequences(ctx: CheckContext) -> Iterator[Failure]:
    """Random sequences of imports (valid and refused) and deletions: after every step the subject's export
    equals the model: nothing lost, nothing half-done, nothing resurrected."""

    merge = import_semantics(ctx) == "merge"
    diverged = model_based.run_sequences(ctx, machine(ctx, merge), model_based.budget(ctx, (4, 6), (25, 15)),
                                         ctx.state(AmpsRun).models)
    if diverged is not None:
        yield diverged.failure("the subject left the model", "the export the spec and the import semantics (A12) describe",
                               readings=(f"A12:{'merge' if merge else 'replace'}",))
