"""A model-based check: random sequences of imports (valid and refused) and artifact deletions for one
subject, the subject's export compared after every step with the oracle, suites/amps/model.py.

The oracle says what the subject holds (its atoms with their text, sensitivity and sources, its artifacts
with their private flag) under the import semantics the target was seen to follow (errata A12): a refused
import changes nothing; a deletion drops the artifact, removes it from every atom's sources, and an
inferred or observed atom left without a source is deleted or re-flagged unsourced (A5).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

from hypothesis import strategies as st
from hypothesis.stateful import RuleBasedStateMachine, initialize, precondition, rule
from memconform.core import history_counts, model_based, sequence
from memconform.core.check_context import CheckContext
from memconform.suites.amps import format as amps
from memconform.suites.amps.client import (
    AmpsRun,
    artifacts_by_id,
    atoms_by_id,
    delete_artifact,
    export,
    import_export,
    make_artifact,
    make_atom,
    make_export,
)
from memconform.suites.amps.domain_fields import drawn_fields, with_value
from memconform.suites.amps.model import (
    DEFAULT,
    Answer,
    Readings,
    State,
    Subject,
    delete_answers,
    fitting,
    import_answers,
    withheld_atoms,
)
from memconform.suites.amps.model import export_differs as subject_export_differs


@dataclass
class Model:
    subject_id: str = ""
    readings: Readings = DEFAULT  # the import semantics seen (A12), the options' other readings
    state: State = field(default_factory=dict)  # the oracle's state after the last step
    steps: list[str] = field(default_factory=list)
    deleted: set[str] = field(default_factory=set)  # artifacts deleted
    acknowledged: int = 0  # atoms and artifacts in accepted imports, and deletions
    tally: dict[str, int] = field(default_factory=history_counts.counts)  # the last comparison's counts

    @property
    def held(self) -> Subject:
        return self.state.get(self.subject_id, Subject())


class Divergence(model_based.Divergence):
    """The subject's export left the model: hypothesis shrinks the sequence that caused it."""


def expected_of(subject_id: str, held: Subject) -> dict[str, Any]:
    """What the oracle says the subject holds, language-neutral, for the sequence file (and its replay)."""
    return {"subject_id": subject_id, "unsourced": sorted(held.unsourced), "droppable": sorted(held.droppable),
            "atoms": {str(i): dict(a) for i, a in held.atoms.items()},
            "artifacts": {str(i): dict(a) for i, a in held.artifacts.items()}}


def subject_of(want: dict[str, Any]) -> Subject:
    return Subject(want["atoms"], want["artifacts"], frozenset(want["unsourced"]), frozenset(want.get("droppable", ())))


def export_differs(doc: Any, want: dict[str, Any]) -> str | None:
    """What differs between the subject's export and the oracle's expectation (None: nothing)."""
    return subject_export_differs(doc, want["subject_id"], subject_of(want))


def tally(doc: dict[str, Any], model: Model) -> dict[str, int]:
    """Jepsen-style counts of the subject's atoms and artifacts in one export."""
    atoms, arts, held = atoms_by_id(doc), artifacts_by_id(doc), model.held
    return history_counts.counts(
        acknowledged=model.acknowledged,
        lost=len(set(held.atoms) - set(atoms) - held.droppable - withheld_atoms(atoms, held, model.readings))
        + len(set(held.artifacts) - set(arts)),
        resurrected=len(model.deleted & set(arts)),
        corrupted=sum(1 for i, a in held.atoms.items() if i in atoms
                      and any(atoms[i].get(k) != a.get(k) for k in ("text", "sensitivity"))))


def compare(ctx: CheckContext, model: Model) -> None:
    doc = export(ctx, model.subject_id)
    model.tally = tally(doc, model)
    want = expected_of(model.subject_id, model.held)
    problem = subject_export_differs(doc, model.subject_id, model.held, model.readings)
    if problem:
        raise Divergence(sequence.expect(ctx, "amps.export", want, problem))


def take(ctx: CheckContext, model: Model, outcomes: tuple[Answer, ...], accepted: bool, what: str) -> None:
    """The oracle's outcome the target's reply fits becomes the next state; none fits: a divergence."""
    fits = fitting(outcomes, accepted)
    if not fits:
        allowed = [("accepted" if o.accepted else "refused") + (f" ({o.reading})" if o.reading else "") for o in outcomes]
        raise Divergence(sequence.expect(ctx, "reply", {"ok": not accepted},
                                         f"{what}: {'accepted' if accepted else 'refused'}; the model allows {', '.join(allowed)}"))
    model.state = fits[0].state


def open_classes() -> list[tuple[str, str, str, Any]]:
    """(class key, place, field, value) of every open class of the scalar fields whose value the export
    comparison does not read (text and sensitivity are compared as sent; an open one may be normalised)."""
    return [(vc.key, place, name, vc.value()) for field, place, name in drawn_fields() for vc in field.of("open")
            if name not in ("text", "sensitivity")]


SENSITIVITIES = st.sampled_from(amps.SENSITIVITIES)
OPEN_PICKS = st.deferred(lambda: st.sampled_from(open_classes()))  # the domain table is read on first draw


class AmpsSubject(RuleBasedStateMachine):
    """One subject's exports imported and artifacts deleted; bound to a run by `model_based.for_run`."""

    ctx: ClassVar[CheckContext]
    readings: ClassVar[Readings]  # the import semantics seen (A12) and the options' readings

    def __init__(self) -> None:
        super().__init__()
        self.subject_id = self.ctx.unique("subject-model")
        self.model = Model(self.subject_id, self.readings)
        self.ctx.state(AmpsRun).models.append(self.model)
        sequence.begin(self.ctx)

    def step(self, text: str) -> None:
        self.model.steps.append(text)
        compare(self.ctx, self.model)

    def built(self, data: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        arts = [make_artifact(self.ctx, "m", [], private=data.draw(st.booleans(), label="private"))
                for _ in range(data.draw(st.integers(1, 2), label="artifacts"))]
        atoms = []
        for _ in range(data.draw(st.integers(1, 3), label="atoms")):
            derivation = data.draw(st.sampled_from(amps.DERIVATIONS), label="derivation")
            cites = data.draw(st.lists(st.sampled_from(arts), min_size=derivation != "stated", max_size=2,
                                       unique_by=lambda a: a["artifact_id"]), label="cites")
            atom = make_atom(self.ctx, "m", derivation, [a["artifact_id"] for a in cites],
                             sensitivity=data.draw(SENSITIVITIES, label="sensitivity"))
            for a in cites:
                a["atom_ids"].append(atom["atom_id"])
            atoms.append(atom)
        return atoms, arts

    def imported(self, atoms: list[dict[str, Any]], arts: list[dict[str, Any]]) -> None:
        doc = make_export(self.subject_id, atoms, arts)
        outcomes = import_answers(self.model.state, doc, self.model.readings)
        reply = import_export(self.ctx, doc)
        take(self.ctx, self.model, outcomes, reply.ok, "a conformant export")
        self.model.acknowledged += len(atoms) + len(arts)
        self.step(f"import {len(atoms)} atoms, {len(arts)} artifacts")

    # every sequence opens with two imports of one sourced atom each, so what a second import does to
    # the first one's atoms and artifacts is seen whatever the random steps after it draw
    @initialize()
    def two_imports(self) -> None:
        for label in ("first", "second"):
            art = make_artifact(self.ctx, f"m-{label}", [], private=label == "second")
            atom = make_atom(self.ctx, f"m-{label}", "observed", [art["artifact_id"]])
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
        outcomes = import_answers(self.model.state, doc, self.model.readings)
        take(self.ctx, self.model, outcomes, import_export(self.ctx, doc).ok, f"an export with a broken {broken}")
        self.step(f"import refused ({broken})")

    # a value of a class the domain table marks open (errata A57) in the first atom, artifact or the
    # subject: accepted or refused, and the sequence goes on from the state the answer fits
    @rule(data=st.data(), picked=OPEN_PICKS)
    def import_open(self, data: Any, picked: tuple[str, str, str, Any]) -> None:
        key, place, name, value = picked
        doc = with_value(make_export(self.subject_id, *self.built(data)), place, name, value)
        outcomes = import_answers(self.model.state, doc, self.model.readings, "A57")
        take(self.ctx, self.model, outcomes, import_export(self.ctx, doc).ok, f"an export with {key}")
        self.step(f"import with {key}")

    @precondition(lambda self: bool(self.model.held.artifacts))
    @rule(data=st.data())
    def delete(self, data: Any) -> None:
        artifact_id = data.draw(st.sampled_from(sorted(self.model.held.artifacts)), label="artifact")
        delete_artifact(self.ctx, self.subject_id, artifact_id)
        take(self.ctx, self.model, delete_answers(self.model.state, self.subject_id, artifact_id), True, "delete_artifact")
        self.model.deleted.add(artifact_id)
        self.model.acknowledged += 1
        self.step(f"delete artifact {artifact_id}")


