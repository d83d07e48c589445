"""The MemoRizz oracle (suites/memorizz/model.py): the answers it allows for each import mode, conflict policy
and armed failure, in a state holding records and in an empty one."""

from __future__ import annotations

import pytest
from memconform.suites.memorizz import model as oracle

HELD = {("knowledge_base", "a"): {"memory_id": "ns", "content": "old a"}}


def request(*ids: str, **how: object) -> oracle.ImportRequest:
    return oracle.ImportRequest(tuple(("knowledge_base", rid, {"memory_id": "ns", "content": f"new {rid}"}) for rid in ids),
                                **how)  # type: ignore[arg-type]


def test_a_preview_writes_nothing_and_lists_the_conflicts() -> None:
    (only,) = oracle.answers(HELD, request("a", "b", mode="preview", conflict="skip")).outcomes
    assert only.accepted and only.state == HELD and only.conflicts == {("knowledge_base", "a")}


def test_a_preview_of_conflicts_under_error_may_say_ok_or_not() -> None:
    """errata M62: the preview succeeded, or it says the restore it previews would be refused; both write nothing."""
    says_ok, says_not = oracle.answers(HELD, request("a", "b", mode="preview")).outcomes
    assert (says_ok.accepted, says_not.accepted) == (True, False)
    assert all(o.state == HELD and o.conflicts == {("knowledge_base", "a")} and o.imported == 0 for o in (says_ok, says_not))
    (fresh,) = oracle.answers({}, request("a", "b", mode="preview")).outcomes
    assert fresh.accepted and fresh.conflicts == frozenset()


@pytest.mark.parametrize(("conflict", "accepted", "a", "b"), [
    ("error", False, "old a", None), ("skip", True, "old a", "new b"), ("replace", True, "new a", "new b")])
def test_each_conflict_policy_over_an_existing_record(conflict: str, accepted: bool, a: str, b: str | None) -> None:
    (only,) = oracle.answers(HELD, request("a", "b", conflict=conflict)).outcomes
    assert only.accepted is accepted and only.state is not None
    assert only.state[("knowledge_base", "a")]["content"] == a
    assert (only.state.get(("knowledge_base", "b")) or {}).get("content") == b


def test_an_archive_validation_rejects_changes_nothing_whatever_the_policy() -> None:
    for conflict in oracle.CONFLICTS:
        (only,) = oracle.answers(HELD, request("b", conflict=conflict, valid=False)).outcomes
        assert not only.accepted and only.state == HELD


def test_an_armed_failure_leaves_the_committed_writes_or_none_and_reports_them() -> None:
    found = oracle.answers({}, request("a", "b", "c", "d", fail_after=2))
    assert sorted((o.accepted, o.imported, len(o.state or {})) for o in found.outcomes) == [(False, 0, 0), (False, 2, 2)]
    assert found.fitting(False, 2) and found.fitting(False, 0) and not found.fitting(False, 1) and not found.fitting(True)


def test_a_failure_armed_past_the_last_write_is_a_plain_restore() -> None:
    (only,) = oracle.answers({}, request("a", "b", fail_after=5)).outcomes
    assert only.accepted and only.imported == 2


def test_a_clone_adds_every_record_under_new_ids_with_either_namespace_rule_unless_pinned() -> None:
    found = oracle.answers(HELD, request("a", "b", mode="clone", conflict="error"))
    assert {(o.accepted, o.added, o.namespaces) for o in found.outcomes} == {(True, 2, "kept"), (True, 2, "rewritten")}
    pinned = oracle.answers(HELD, request("a", mode="clone"), oracle.Readings(namespaces="rewrite"))
    assert [o.namespaces for o in pinned.outcomes] == ["rewritten"]


def test_an_unknown_mode_or_policy_is_refused() -> None:
    assert not oracle.answers(HELD, request("b", mode="merge")).outcomes[0].accepted
    assert not oracle.answers(HELD, request("b", conflict="overwrite")).outcomes[0].accepted


def test_an_export_holds_the_selected_namespace_and_stores() -> None:
    state = {**HELD, ("personas", "p"): {"memory_id": "ns"}, ("knowledge_base", "x"): {"memory_id": "other"}}
    assert set(oracle.export_records(state, "ns")) == {("knowledge_base", "a"), ("personas", "p")}
    assert set(oracle.export_records(state, "ns", ["personas"])) == {("personas", "p")}


def test_an_agent_selection_holds_the_agent_its_delegates_and_their_namespaces() -> None:
    state = {("agents", "owner"): {"memory_ids": ["ns"], "delegates": ["helper", "gone"]},
             ("agents", "helper"): {"memory_ids": ["private"], "delegates": []},
             ("agents", "stranger"): {"memory_ids": ["elsewhere"], "delegates": []},
             ("knowledge_base", "a"): {"memory_id": "ns"}, ("knowledge_base", "b"): {"memory_id": "private"},
             ("knowledge_base", "c"): {"memory_id": "elsewhere"}}
    assert set(oracle.export_records(state, agent_id="owner")) == {
        ("agents", "owner"), ("agents", "helper"), ("knowledge_base", "a"), ("knowledge_base", "b")}
    assert set(oracle.export_records(state, agent_id="helper")) == {("agents", "helper"), ("knowledge_base", "b")}
