"""The call plan of a domain sweep (harness/kit/domain_plan.py): packed rows under ci, every item alone
elsewhere, and a failing row split until each failure names its item."""

from __future__ import annotations

import pytest
from memconform.core.results import Failure
from memconform.kit import domain_plan


def test_pack_keeps_one_item_per_slot_and_the_limit() -> None:
    items = [("a", 1), ("a", 2), ("b", 1), (None, 1), (None, 2), ("a", 3)]
    rows = domain_plan.pack(items, slot=lambda item: item[0], limit=3)
    assert sorted(map(repr, sum(rows, []))) == sorted(map(repr, items))  # every item once
    for row in rows:
        slots = [s for s, _ in row if s is not None]
        assert len(slots) == len(set(slots)) and len(row) <= 3
    assert rows[0] == [("a", 1), ("b", 1), (None, 1)]  # first fit, in order
    with pytest.raises(ValueError):
        domain_plan.pack(items, slot=lambda item: None, limit=0)


def test_ci_packs_each_group_and_sends_the_rest_alone() -> None:
    items = list(range(10))
    group = lambda n: "even" if n % 2 == 0 else (None if n < 5 else "big-odd")  # noqa: E731
    rows = domain_plan.rows_for(items, "ci", group=group)
    assert rows == [[0, 2, 4, 6, 8], [5, 7, 9], [1], [3]]
    assert domain_plan.rows_for(items, "default", group=group) == [[n] for n in items]
    assert domain_plan.rows_for(items, "thorough", group=group) == [[n] for n in items]


def test_a_failing_row_is_split_until_each_failure_names_its_item() -> None:
    sent: list[list[int]] = []

    def attempt(row: list[int]) -> list[Failure]:
        sent.append(row)
        return [Failure(f"row {row}")] if any(n in (3, 6) for n in row) else []

    found = list(domain_plan.judge_rows([list(range(8))], attempt))
    assert [f.title for f in found] == ["row [3]", "row [6]"]
    assert sent[0] == list(range(8)) and len(sent) < 2 * 8  # halving, not every item again


def test_a_passing_row_is_sent_once() -> None:
    sent: list[list[int]] = []
    found = list(domain_plan.judge_rows([[1, 2, 3], [4]], lambda row: sent.append(row) or []))
    assert found == [] and sent == [[1, 2, 3], [4]]


def test_a_failure_only_the_items_together_cause_is_the_rows() -> None:
    def attempt(row: list[int]) -> list[Failure]:
        return [Failure(f"{len(row)} together")] if len(row) > 2 else []

    assert [f.title for f in domain_plan.judge_rows([[1, 2, 3, 4]], attempt)] == ["4 together"]


def test_a_row_whose_answer_names_no_item_is_split_and_reports_only_its_items() -> None:
    """None: the row's answer does not say which item it is about (one refusal among values the spec is
    silent on); the row is judged in halves, nothing of its own is reported, and each item is judged alone
    at the latest."""
    sent: list[list[int]] = []

    def attempt(row: list[int]) -> list[Failure] | None:
        sent.append(row)
        if 5 in row and len(row) > 1:
            return None
        return [Failure(f"item {row[0]}")] if row == [5] else []

    found = list(domain_plan.judge_rows([list(range(8))], attempt))
    assert [f.title for f in found] == ["item 5"]
    assert sent == [list(range(8)), [0, 1, 2, 3], [4, 5, 6, 7], [4, 5], [4], [5], [6, 7]]
    assert list(domain_plan.judge_rows([[1, 2]], lambda row: None if len(row) > 1 else [])) == []  # nothing of the row's


def test_a_row_of_one_is_always_judged() -> None:
    with pytest.raises(ValueError):
        list(domain_plan.judge_rows([[1]], lambda row: None))


def test_a_packed_sweep_judges_every_class_in_fewer_calls_than_one_a_value() -> None:
    """AMPS's schema sweep on its reference: the same outcome and the same classes judged under ci (packed)
    and default (one value a request), ci with fewer calls."""
    from memconform.core.profile import Profile
    from memconform.run.session import execute_run

    seen = {}
    for profile in ("ci", "default"):
        outcome = execute_run(["amps"], None, Profile.named(profile), None, check_ids=["amps.imports_every_schema_class"])
        [result] = outcome.results
        [note] = [n for n in outcome.notes if "domain" in n]
        seen[profile] = (result.outcome.value, note["domain"]["classes_judged"], outcome.calls["amps"]["calls"])
    assert seen["ci"][:2] == seen["default"][:2] and seen["ci"][0] == "passed"
    assert seen["ci"][2] < seen["default"][2] / 2
