"""MemoRizz's cleanup: the run's namespaces removed in one delete_namespaces call where the target offers it
and its answer names each one, else one delete_namespace each; nothing left behind either way."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from memconform.suites.memorizz import client
from memconform.suites.memorizz.reference import ReferenceArchiveStore
from memconform.targets.pyobj import PythonTarget


class OneAtATime(ReferenceArchiveStore):
    """Offers only delete_namespace, as the spec's own tools would (the spec names no delete)."""

    delete_namespaces = None


class NamesOnlyTheFirst(ReferenceArchiveStore):
    """Answers delete_namespaces ok but removes and names only the first namespace."""

    def delete_namespaces(self, body: Any = None, **params: Any) -> dict[str, Any]:
        first = body["memory_ids"][0]
        return {"deleted": self.remove_namespaces([first])}


def seeded(impl: ReferenceArchiveStore) -> tuple[SimpleNamespace, list[str]]:
    """Three namespaces restored into impl (a small archive each) and a context whose target is impl."""
    target = PythonTarget(impl, "cleanup")
    drawn = iter(range(10**6))
    ctx = SimpleNamespace(target=target, unique=lambda label="x": f"{label}-{next(drawn)}", note=lambda line: None)
    names = []
    for label in ("a", "b", "c"):
        archive, ns = client.small_archive(ctx, label)
        assert client.import_archive(ctx, archive, "restore")[0]
        names.append(ns)
    return ctx, names


def held(impl: ReferenceArchiveStore, names: list[str]) -> set[str]:
    return {r["data"].get("memory_id") for records in impl.rows().values() for r in records} & set(names)


def test_the_reference_removes_every_namespace_in_one_call() -> None:
    impl = ReferenceArchiveStore()
    ctx, names = seeded(impl)
    before = ctx.target.calls
    assert client._delete_all(ctx, names) is True
    assert ctx.target.calls - before == 1
    assert held(impl, names) == set()


def test_a_target_without_delete_namespaces_is_cleaned_one_namespace_a_call() -> None:
    impl = OneAtATime()
    ctx, names = seeded(impl)
    before = ctx.target.calls
    assert client._delete_all(ctx, names) is True
    assert ctx.target.calls - before == 1 + len(names)  # the batch asked (not offered), then each alone
    assert held(impl, names) == set()


def test_a_namespace_the_answer_does_not_name_is_deleted_alone() -> None:
    impl = NamesOnlyTheFirst()
    ctx, names = seeded(impl)
    before = ctx.target.calls
    assert client._delete_all(ctx, names) is True
    assert ctx.target.calls - before == 1 + 2
    assert held(impl, names) == set()


def test_delete_namespaces_refuses_what_is_not_a_list_of_names() -> None:
    impl = ReferenceArchiveStore()
    target = PythonTarget(impl, "cleanup")
    for body in ({}, {"memory_ids": []}, {"memory_ids": "ns"}, {"memory_ids": ["ns", 3]}):
        assert not target.call("delete_namespaces", body).ok, body
