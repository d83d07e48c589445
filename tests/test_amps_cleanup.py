"""AMPS's cleanup: the run's subjects removed in one delete_subjects call (memconform's own optional operation,
errata A11) where the target offers it and its answer names each one, else one delete_subject each; nothing left
behind either way, and a target with neither is reported as not cleaned, never as cleaned."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.run.session import execute_run
from memconform.suites.amps import client
from memconform.suites.amps.reference import ReferenceAmpsStore
from memconform.targets.pyobj import PythonTarget


class OneAtATime(ReferenceAmpsStore):
    """Offers only delete_subject, as the second-opinion apps do (the spec names no delete)."""

    delete_subjects = None


class NamesOnlyTheFirst(ReferenceAmpsStore):
    """Answers delete_subjects ok but removes and names only the first subject."""

    def delete_subjects(self, body: Any = None, **params: Any) -> dict[str, Any]:
        return {"deleted": self.remove_subjects(body["subject_ids"][:1])}


class SaysTrueForEach(ReferenceAmpsStore):
    """Answers delete_subjects ok naming each subject with `true`, not the records removed, and removes nothing."""

    def delete_subjects(self, body: Any = None, **params: Any) -> dict[str, Any]:
        return {"deleted": dict.fromkeys(body["subject_ids"], True)}


class NoDeleteAtAll(ReferenceAmpsStore):
    delete_subjects = None
    delete_subject = None


def seeded(impl: ReferenceAmpsStore, count: int = 3) -> tuple[SimpleNamespace, list[str]]:
    """`count` subjects imported into impl (one atom and its artifact each) and a context whose target is impl."""
    drawn = iter(range(10**6))
    ctx = SimpleNamespace(target=PythonTarget(impl, "cleanup"), unique=lambda label="x": f"{label}-{next(drawn)}",
                          note=lambda line: None)
    names = []
    for _ in range(count):
        subject = ctx.unique("subject")
        atom, art = client.sourced(ctx, "cleanup", "observed")  # type: ignore[arg-type]
        impl.import_export(client.make_export(subject, [atom], [art]))
        names.append(subject)
    return ctx, names


def held(impl: ReferenceAmpsStore, names: list[str]) -> set[str]:
    found = set()
    for table in ("subjects", "atoms", "artifacts"):
        found |= {sid for (sid,) in impl.db.execute(f"SELECT subject_id FROM {table}")}
    return found & set(names)


def test_the_reference_removes_every_subject_in_one_call() -> None:
    impl = ReferenceAmpsStore()
    ctx, names = seeded(impl)
    other = "someone-else"  # a subject not the run's: it stays
    atom, art = client.sourced(ctx, "other", "observed")  # type: ignore[arg-type]
    impl.import_export(client.make_export(other, [atom], [art]))
    before = ctx.target.calls
    assert client._delete_all(ctx, names) is True  # type: ignore[arg-type]
    assert ctx.target.calls - before == 1
    assert held(impl, names) == set()
    assert held(impl, [other]) == {other}


def test_a_target_without_delete_subjects_is_cleaned_one_subject_a_call() -> None:
    impl = OneAtATime()
    ctx, names = seeded(impl)
    before = ctx.target.calls
    assert client._delete_all(ctx, names) is True  # type: ignore[arg-type]
    assert ctx.target.calls - before == 1 + len(names)  # the batch asked (not offered), then each alone
    assert held(impl, names) == set()


@pytest.mark.parametrize("store, alone", [(NamesOnlyTheFirst, 2), (SaysTrueForEach, 3)])
def test_a_subject_the_answer_does_not_name_with_a_count_is_deleted_alone(store: type, alone: int) -> None:
    impl = store()
    ctx, names = seeded(impl)
    before = ctx.target.calls
    assert client._delete_all(ctx, names) is True  # type: ignore[arg-type]
    assert ctx.target.calls - before == 1 + alone
    assert held(impl, names) == set()


def test_the_run_is_split_into_bounded_requests(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(client, "SUBJECTS_PER_CALL", 2)
    impl = ReferenceAmpsStore()
    ctx, names = seeded(impl, 5)
    before = ctx.target.calls
    assert client._delete_all(ctx, names) is True  # type: ignore[arg-type]
    assert ctx.target.calls - before == 3  # 2 + 2 in two calls, the fifth alone (a batch of one is delete_subject)
    assert held(impl, names) == set()


def test_a_target_with_no_delete_is_reported_as_not_cleaned() -> None:
    impl = NoDeleteAtAll()
    ctx, names = seeded(impl)
    assert client._delete_all(ctx, names) is False  # type: ignore[arg-type]
    assert held(impl, names) == set(names)


def test_delete_subjects_refuses_what_is_not_a_list_of_ids() -> None:
    target = PythonTarget(ReferenceAmpsStore(), "cleanup")
    for body in ({}, {"subject_ids": []}, {"subject_ids": "s"}, {"subject_ids": ["s", 3]}, ["s"]):
        assert not target.call("delete_subjects", body).ok, body


class Recorded(ReferenceAmpsStore):
    """The reference, each instance and each cleanup operation it is asked recorded (class-wide: a python:
    target makes its own instance)."""

    instances: list[Recorded] = []
    asked: list[str] = []

    def __init__(self) -> None:
        super().__init__()
        self.instances.append(self)

    def close(self) -> None:
        """Kept open after the run, so the test reads what it holds."""

    def delete_subject(self, body: Any = None, **params: Any) -> dict[str, Any]:
        self.asked.append("delete_subject")
        return super().delete_subject(body, **params)

    def delete_subjects(self, body: Any = None, **params: Any) -> dict[str, Any]:
        self.asked.append("delete_subjects")
        return super().delete_subjects(body, **params)


class RecordedOneAtATime(Recorded):
    instances: list[Recorded] = []
    asked: list[str] = []
    delete_subjects = None  # type: ignore[assignment]


@pytest.mark.parametrize("store", [Recorded, RecordedOneAtATime])
def test_a_run_leaves_none_of_its_subjects_behind(store: type[Recorded]) -> None:
    """End to end (one check, ci): every subject the run imported is gone afterwards, through one delete_subjects
    call, or one delete_subject a subject where the target does not offer it."""
    store.instances.clear()
    store.asked.clear()
    outcome = execute_run(["amps"], f"python:{__name__}:{store.__name__}", Profile.named("ci"), None,
                          check_ids=["amps.rejects_malformed_export"])
    assert [r.outcome.value for r in outcome.results] == ["passed"]
    [impl] = store.instances
    assert not [row for table in ("subjects", "atoms", "artifacts")
                for row in impl.db.execute(f"SELECT subject_id FROM {table}")]
    if store is Recorded:
        assert store.asked == ["delete_subjects"]
    else:
        assert store.asked.count("delete_subject") >= 2 and "delete_subjects" not in store.asked
