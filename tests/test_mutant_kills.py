"""Every check of every installed suite can fail: one kill test over all suites.

A suite's mutants module (SuiteSpec.mutants) holds MUTANTS {name: factory} and EXPECTED_KILLS
{name: {check ids that must fail on it}}; optionally NOTE_ONLY (mutants that only produce a run
note), HTTP_ONLY (mutants only HTTP reveals, served here from `http_app(name)` on loopback) and
KILLED_ELSEWHERE {check id: the test that kills it}. Each mutant runs against its expected checks
only; a check is killed when a mutant's expected kill or an invalid fixture's `breaks` names it
(both asserted here), so every kill is declared, never incidental.
"""

from __future__ import annotations

import json
from typing import Any

import pytest
from memconform.core.model import Outcome
from memconform.core.profile import Profile
from memconform.core.registry import REGISTRY
from memconform.core.suite import SuiteSpec, all_suites
from memconform.fixtures_loader import iter_cases
from memconform.session import execute_run, validate_document
from mutant_kit import assert_mutant_caught

SUITES: dict[str, SuiteSpec] = {s.name: s for s in all_suites() if s.mutants is not None}


def mutants_of(suite: str) -> Any:
    make = SUITES[suite].mutants
    assert make is not None
    return make()


def registered(suite: str) -> set[str]:
    return {c.id for c in REGISTRY.for_suite(suite)}


def invalid_cases(suite: str) -> list[dict[str, Any]]:
    """Documents in fixtures/<suite>/invalid/ (request cases in deeper folders are not documents)."""
    return [c for p, c in iter_cases(suite)
            if p.parent.name == "invalid" and p.parent.parent.name == suite and c.get("verdict") == "invalid"]


def fixture_document(suite: str, document: Any) -> Any:
    """A fixture holds the document as JSON, or as text for a format that is not JSON (EMP lines)."""
    parse = SUITES[suite].parse
    if isinstance(document, str) and parse is not None:
        return parse(document.encode("utf-8"))
    return document


MUTANT_CASES = [(s, name) for s in sorted(SUITES) for name in sorted(mutants_of(s).EXPECTED_KILLS)]
FIXTURE_CASES = [(s, c) for s in sorted(SUITES) for c in invalid_cases(s)]


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_mutant_tables_agree(suite: str) -> None:
    module = mutants_of(suite)
    note_only = set(getattr(module, "NOTE_ONLY", ()))
    pinned_only = set(getattr(module, "OPTION_KILLS", {}))  # broken only under a pinned reading
    assert set(module.EXPECTED_KILLS) == set(module.MUTANTS) - note_only - pinned_only
    assert set().union(*module.EXPECTED_KILLS.values()) - registered(suite) == set(), "expected kills that are no check"


@pytest.mark.parametrize("suite,name", MUTANT_CASES, ids=[f"{s}:{n}" for s, n in MUTANT_CASES])
def test_mutant_is_caught_by_its_checks(suite: str, name: str) -> None:
    module = mutants_of(suite)
    expected = set(module.EXPECTED_KILLS[name])
    stop = None
    if name in getattr(module, "HTTP_ONLY", ()):  # only HTTP shows it (a status code, an absent route)
        from memconform.loopback import serve_in_thread

        target, stop = serve_in_thread(module.http_app(name))
    else:
        target = f"python:{module.__name__}:{name}"
    try:
        outcome = execute_run([suite], target, Profile.named("ci"), report_dir=None, check_ids=sorted(expected))
    finally:
        if stop is not None:
            stop()
    assert_mutant_caught(name, {r.check_id: r.outcome.value for r in outcome.results}, expected)


@pytest.mark.parametrize("suite,case", FIXTURE_CASES, ids=[f"{s}:{c['id']}" for s, c in FIXTURE_CASES])
def test_invalid_fixture_fails_the_checks_it_names(suite: str, case: dict[str, Any]) -> None:
    profile = Profile.named(case.get("profile", "ci"), options=case.get("options"))
    results = validate_document(fixture_document(suite, case["document"]), suite, profile)
    failed = {r.check_id for r in results if r.outcome is Outcome.FAILED}
    assert set(case["breaks"]) - failed == set(), json.dumps(sorted(failed))


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_every_check_is_killed(suite: str) -> None:
    module = mutants_of(suite)
    killed = set().union(*module.EXPECTED_KILLS.values())
    killed |= {b for c in invalid_cases(suite) for b in c["breaks"]}
    killed |= set(getattr(module, "KILLED_ELSEWHERE", {}))
    survivors = sorted(registered(suite) - killed)
    assert survivors == [], "checks no mutant or invalid fixture kills (they could be unable to fail)"
