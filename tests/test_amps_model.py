"""The AMPS oracle (suites/amps/model.py): its answers agree with the domain table's classes, each reading
gives the outcome it names, pinning one narrows the set, and the export comparison explains what it refuses."""

from __future__ import annotations

from typing import Any

import pytest
from memconform.kit import domain
from memconform.suites.amps import model
from memconform.suites.amps.checks.domain_imports import drawn_fields, with_value


def atom(atom_id: str, derivation: str = "observed", cites: tuple[str, ...] = ("art-1",), **fields: Any) -> dict[str, Any]:
    prov: dict[str, Any] = {"derivation": derivation}
    if cites:
        prov["artifact_ids"] = list(cites)
    return {"atom_id": atom_id, "kind": "fact", "text": f"fact {atom_id}", "sensitivity": "public",
            "created_at": "2026-01-01T00:00:00Z", "provenance": prov, **fields}


def artifact(artifact_id: str = "art-1", **fields: Any) -> dict[str, Any]:
    return {"artifact_id": artifact_id, "kind": "chat", "captured_at": "2026-01-01T00:00:00Z", "atom_ids": [], **fields}


def export_of(subject_id: str, atoms: list[dict[str, Any]], arts: list[dict[str, Any]]) -> dict[str, Any]:
    return {"export_version": "0.1.0", "exported_at": "2026-01-02T00:00:00Z", "subject": {"subject_id": subject_id},
            "atoms": atoms, "artifacts": arts}


def only(outcomes: tuple[model.Answer, ...]) -> model.Answer:
    assert len(outcomes) == 1, outcomes
    return outcomes[0]


def test_the_model_agrees_with_every_valid_and_invalid_class_of_the_scalar_fields() -> None:
    """Each class the domain check draws alone: the table says valid, the model accepts; invalid, it refuses."""
    disagree = []
    for field, place, name in drawn_fields():
        for vc in field.classes:
            if vc.expect == "open":
                continue
            for value in vc.values():
                base = export_of("s", [atom("a-1")], [artifact()])
                doc = with_value(base, place, name, value)
                accepted = {o.accepted for o in model.import_answers(model.EMPTY, doc)}
                if accepted != {vc.expect == "valid"}:
                    disagree.append((vc.key, accepted))
    assert disagree == []


def test_a_refused_import_changes_nothing_and_an_open_class_may_go_either_way() -> None:
    state = only(model.import_answers(model.EMPTY, export_of("s", [atom("a-1")], [artifact()]))).state
    broken = export_of("s", [atom("a-2", confidence=2)], [artifact()])
    assert only(model.import_answers(state, broken)) == model.Answer(False, state, why=only(model.import_answers(state, broken)).why)
    both = model.import_answers(state, broken, open_point="A57")
    assert [o.accepted for o in both] == [False, True, True]
    assert [o.reading for o in both if o.accepted] == ["A57:accepted, A12:merge", "A57:accepted, A12:replace"]


@pytest.mark.parametrize(("semantics", "held"), [("merge", {"a-1", "a-2"}), ("replace", {"a-2"})])
def test_a12_a_second_import_merges_or_replaces_and_pinning_narrows(semantics: str, held: set[str]) -> None:
    first = only(model.import_answers(model.EMPTY, export_of("s", [atom("a-1")], [artifact()]))).state
    second = export_of("s", [atom("a-2")], [artifact()])
    either = model.import_answers(first, second)
    assert {o.reading for o in either} == {"A12:merge", "A12:replace"}
    pinned = only(model.import_answers(first, second, model.Readings(import_semantics=semantics)))
    assert set(pinned.state["s"].atoms) == held


def test_a4_an_unsourced_inferred_atom_refuses_the_export_or_is_dropped_when_pinned() -> None:
    doc = export_of("s", [atom("a-1"), atom("a-2", "inferred", (), provenance={"derivation": "inferred", "extractor": "x"})],
                    [artifact()])
    assert [o.accepted for o in model.import_answers(model.EMPTY, doc)] == [False]
    dropped = model.import_answers(model.EMPTY, doc, model.Readings(unsourced_inferred="drop-atom"))
    assert [o.accepted for o in dropped] == [False, True]
    assert set(dropped[1].state["s"].atoms) == {"a-1"}


def test_a56_an_atom_that_expires_before_it_is_valid_may_be_refused() -> None:
    doc = export_of("s", [atom("a-1", valid_from="2026-02-01T00:00:00Z", valid_to="2026-01-01T00:00:00Z")], [artifact()])
    assert sorted((o.accepted, o.reading) for o in model.import_answers(model.EMPTY, doc)) == [(False, "A56:refused"), (True, "")]


def cascade_state() -> model.State:
    doc = export_of("s", [atom("sourced"), atom("stated", "stated"), atom("two", cites=("art-1", "art-2"))],
                    [artifact(private=True), artifact("art-2")])
    held = only(model.import_answers(model.EMPTY, doc)).state
    return only(model.delete_answers(held, "s", "art-1")).state


def test_a5_a_deletion_leaves_the_sourced_atom_deleted_or_flagged_and_the_stated_one_kept_or_dropped() -> None:
    held = cascade_state()["s"]
    assert held.unsourced == {"sourced"} and held.droppable == {"stated"} and set(held.artifacts) == {"art-2"}
    assert held.atoms["two"]["provenance"]["artifact_ids"] == ["art-2"]
    kept = export_of("s", [atom("stated", "stated", ()), atom("two", cites=("art-2",))], [artifact("art-2")])
    assert model.export_differs(kept, "s", held) is None
    flagged = export_of("s", [*kept["atoms"], atom("sourced", cites=(), **{"x-unsourced": True})], [artifact("art-2")])
    assert model.export_differs(flagged, "s", held) is None
    assert "kept" in str(model.export_differs(flagged, "s", held, model.Readings(unsourced_after_delete="delete")))
    unflagged = export_of("s", [*kept["atoms"], atom("sourced", cites=())], [artifact("art-2")])
    assert "neither deleted nor flagged" in str(model.export_differs(unflagged, "s", held))


@pytest.mark.parametrize(("change", "words"), [
    (lambda d: d["subject"].update(subject_id="S"), "subject_id"),
    (lambda d: d["atoms"].pop(), "lacks"),
    (lambda d: d["atoms"][0].update(sensitivity="private"), "sensitivity"),
    (lambda d: d["atoms"][1]["provenance"].update(artifact_ids=["art-1", "art-2"]), "cites"),
    (lambda d: d["artifacts"].append(artifact("art-1")), "artifacts"),
])
def test_the_export_comparison_names_what_no_acceptable_state_explains(change: Any, words: str) -> None:
    doc = export_of("s", [atom("stated", "stated", ()), atom("two", cites=("art-2",))], [artifact("art-2")])
    change(doc)
    assert words in str(model.export_differs(doc, "s", cascade_state()["s"]))


def test_a_private_artifact_must_stay_private() -> None:
    held = only(model.import_answers(model.EMPTY, export_of("s", [atom("a-1")], [artifact(private=True)]))).state["s"]
    assert model.export_differs(export_of("s", [atom("a-1")], [artifact(private=True)]), "s", held) is None
    assert "private" in str(model.export_differs(export_of("s", [atom("a-1")], [artifact(private=False)]), "s", held))


def test_every_open_class_is_answered_both_ways() -> None:
    table = domain.load("amps")
    assert table is not None
    for field, place, name in drawn_fields():
        for vc in field.of("open"):
            doc = with_value(export_of("s", [atom("a-1")], [artifact()]), place, name, vc.value())
            assert sorted(o.accepted for o in model.import_answers(model.EMPTY, doc, open_point="A57")) == [False, True], vc.key


def test_an_id_named_twice_may_come_back_once() -> None:
    doc = export_of("s", [atom("a-1", "stated", ("art-1", "art-1"))], [artifact()])
    held = [o for o in model.import_answers(model.EMPTY, doc, open_point="A57") if o.accepted][0].state["s"]
    assert model.export_differs(export_of("s", [atom("a-1", "stated", ("art-1",))], [artifact()]), "s", held) is None
    assert "cites" in str(model.export_differs(export_of("s", [atom("a-1", "stated", ())], [artifact()]), "s", held))


class _Ids:
    """What the export builders ask of a check context: unique labels."""

    def __init__(self) -> None:
        self.n = 0

    def unique(self, label: str) -> str:
        self.n += 1
        return f"{label}-{self.n}"


def test_the_model_agrees_with_every_valid_and_invalid_class_of_the_envelope_ids_and_links() -> None:
    from memconform.suites.amps.checks.domain_envelope import docs_for, drawn_here

    ctx: Any = _Ids()
    disagree = []
    for field in drawn_here():
        for vc in field.classes:
            if vc.expect == "open":
                continue
            for doc in docs_for(ctx, field.id, vc):
                accepted = {o.accepted for o in model.import_answers(model.EMPTY, doc)}
                if accepted != {vc.expect == "valid"}:
                    disagree.append((vc.key, accepted))
    assert disagree == []
