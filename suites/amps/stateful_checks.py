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
from functools import partial
from typing import Any

from memconform.core.model import Failure, Inconclusive, SkipCheck, TargetError
from memconform.core.registry import check
from memconform.formats import amps

from .client import (
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

consumer_check = partial(check, suite=amps.SUITE, spec=amps.SPEC, level="consumer")


@dataclass
class Model:
    atoms: dict[str, dict[str, Any]] = field(default_factory=dict)  # atom id -> the atom as imported (sources kept current)
    artifacts: dict[str, bool] = field(default_factory=dict)  # artifact id -> private
    unsourced: set[str] = field(default_factory=set)  # atoms that may be deleted or kept flagged (A5)
    steps: list[str] = field(default_factory=list)


class Divergence(AssertionError):
    """The subject's export left the model: hypothesis shrinks the sequence that caused it."""


def compare(ctx: Any, subject_id: str, model: Model) -> None:
    doc = export(ctx, subject_id)
    atoms, arts = atoms_by_id(doc), artifacts_by_id(doc)
    want = set(model.atoms)
    extra = set(atoms) - want - model.unsourced
    missing = want - set(atoms) - model.unsourced
    if extra or missing:
        raise Divergence(f"the export holds atoms {sorted(map(str, extra))} it should not and lacks {sorted(missing)}")
    for atom_id, atom in atoms.items():
        if atom_id in model.unsourced and atom_id not in model.atoms:
            if amps.has_sources(atom) or not amps.is_flagged_unsourced(atom):
                raise Divergence(f"atom {atom_id} lost its last source but is neither deleted nor flagged unsourced")
            continue
        sent = model.atoms[atom_id]
        for key in ("text", "sensitivity"):
            if atom.get(key) != sent.get(key):
                raise Divergence(f"atom {atom_id} has {key} {atom.get(key)!r}, not {sent.get(key)!r}")
        if sorted(map(str, amps.artifact_ids_of(atom))) != sorted(amps.artifact_ids_of(sent)):
            raise Divergence(f"atom {atom_id} cites {amps.artifact_ids_of(atom)}, not {amps.artifact_ids_of(sent)}")
    if set(arts) != set(model.artifacts):
        raise Divergence(f"the export holds artifacts {sorted(map(str, set(arts) - set(model.artifacts)))} it should "
                         f"not and lacks {sorted(set(model.artifacts) - set(arts))}")
    for artifact_id, private in model.artifacts.items():
        if private and arts[artifact_id].get("private") is not True:
            raise Divergence(f"artifact {artifact_id} lost private: true")


def machine(ctx: Any, merge: bool) -> type:
    from hypothesis import strategies as st
    from hypothesis.stateful import RuleBasedStateMachine, precondition, rule

    sensitivities = st.sampled_from(amps.SENSITIVITIES)

    class AmpsSubject(RuleBasedStateMachine):
        def __init__(self) -> None:
            super().__init__()
            self.subject_id = ctx.unique("subject-model")
            self.model = Model()
            ctx.cache.setdefault("amps.stateful-models", []).append(self.model)

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

        @rule(data=st.data())
        def import_valid(self, data: Any) -> None:
            atoms, arts = self.built(data)
            reply = import_export(ctx, make_export(self.subject_id, atoms, arts))
            if not reply.ok:
                raise TargetError(f"a conformant export was refused: {reply.raw[:200]!r}")
            if not merge:
                self.model.atoms, self.model.artifacts, self.model.unsourced = {}, {}, set()
            self.model.atoms.update({a["atom_id"]: a for a in atoms})
            self.model.artifacts.update({a["artifact_id"]: a["private"] for a in arts})
            self.step(f"import {len(atoms)} atoms, {len(arts)} artifacts")

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
                raise Divergence(f"an export with a broken {broken} was accepted")
            self.step(f"import refused ({broken})")

        @precondition(lambda self: bool(self.model.artifacts))
        @rule(data=st.data())
        def delete(self, data: Any) -> None:
            artifact_id = data.draw(st.sampled_from(sorted(self.model.artifacts)), label="artifact")
            delete_artifact(ctx, self.subject_id, artifact_id)
            del self.model.artifacts[artifact_id]
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


@consumer_check(section="Privacy invariants", keyword="MUST",
                sentence="Deleting an artifact must re-evaluate every atom whose provenance depends on it.")
def model_sequences(ctx: Any) -> Iterator[Failure]:
    """Random sequences of imports (valid and refused) and deletions: after every step the subject's export
    equals the model: nothing lost, nothing half-done, nothing resurrected."""
    from hypothesis import settings
    from hypothesis.errors import Flaky
    from hypothesis.stateful import run_state_machine_as_test

    merge = import_semantics(ctx) == "merge"
    base = ctx.profile.hypothesis_settings()
    try:
        run_state_machine_as_test(machine(ctx, merge), settings=settings(
            base, max_examples=min(base.max_examples, 4 if ctx.profile.derandomize else 25),
            stateful_step_count=6 if ctx.profile.derandomize else 15))
    except Divergence as exc:
        models = ctx.cache.get("amps.stateful-models") or [Model()]
        yield Failure(f"after a sequence of operations the subject left the model: {exc}", models[-1].steps,
                      "the export the spec and the import semantics (A12) describe",
                      detail=" -> ".join(models[-1].steps), readings=(f"A12:{'merge' if merge else 'replace'}",))
        return
    except SkipCheck:
        raise
    except Flaky as exc:  # the same sequence answered differently on replay: the target, not the harness
        raise TargetError(f"the target answered the same sequence of operations differently twice: {exc}") from None
    if not ctx.cache.get("amps.stateful-models"):
        raise Inconclusive("no sequence ran")
