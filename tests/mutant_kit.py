"""Shared assertions of the mutant tests: a mutant is caught by its checks, and errors none."""

from __future__ import annotations


def assert_mutant_caught(name: str, outcomes: dict[str, str], expected: set[str]) -> None:
    assert expected, f"mutant {name} names no check that should catch it"
    not_failed = {c: outcomes.get(c, "absent") for c in expected if outcomes.get(c) != "failed"}
    assert not_failed == {}, f"{name}: expected these checks to fail"
    errored = {c: o for c, o in outcomes.items() if o == "errored"}
    assert errored == {}, f"{name}: a broken rule must fail a check, not error it"
