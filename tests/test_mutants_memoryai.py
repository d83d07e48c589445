"""Known-broken implementations: every MemoryAI check must be killed by at least one of them.

The reference passes every check; each mutant breaks one rule and must be caught by the checks
named for it. Document checks may instead be killed by an invalid fixture of the corpus.
"""

from __future__ import annotations

import pytest
from memconform.core.model import Outcome
from memconform.core.profile import Profile
from memconform.core.registry import REGISTRY
from memconform.fixtures_loader import iter_cases
from memconform.session import execute_run
from memconform.suites.memoryai.mutants import EXPECTED_FAILURES, EXPECTED_KILLS, MUTANTS
from mutant_kit import assert_mutant_caught

# in process an absent operation is not applicable; only HTTP shows a 404 on a profile endpoint
HTTP_ONLY_IN_PROCESS_BLIND = {"NoSpecNoStream", "ExportFilenameNotJson"}


TITLES: dict[str, dict[str, list[str]]] = {}  # mutant -> check -> failure titles, filled by the fixture


def run_against(target: str, name: str = "") -> dict[str, str]:
    outcome = execute_run(["memoryai"], target, Profile.named("ci"), report_dir=None)
    TITLES[name] = {r.check_id: [f.title for f in r.failures] for r in outcome.results}
    return {r.check_id: r.outcome.value for r in outcome.results}


@pytest.fixture(scope="module")
def mutant_outcomes() -> dict[str, dict[str, str]]:
    return {name: run_against(f"python:memconform.suites.memoryai.mutants:{cls.__name__}", name) for name, cls in MUTANTS.items()}


@pytest.mark.parametrize("name", sorted(EXPECTED_FAILURES))
def test_mutant_fails_the_intended_branch(name, mutant_outcomes):
    for check, words in EXPECTED_FAILURES[name].items():
        titles = TITLES[name].get(f"memoryai.{check}", [])
        assert any(words in t for t in titles), (name, check, words, titles)


def test_reference_passes_every_check():
    outcomes = run_against("reference:memoryai")
    assert outcomes, "no check ran"
    # status codes exist only over HTTP: tests/test_reference_http.py runs that one
    assert {k: v for k, v in outcomes.items() if v != "passed"} == {"memoryai.rejection_status": "skipped",
                                                                   "memoryai.export_filename_json": "skipped"}


def http_kills() -> set[str]:
    """Checks only an HTTP target can fail: run those mutants over real loopback HTTP
    (tests/test_memoryai_verdicts.py asserts each is caught by its expected checks)."""
    from memconform.loopback import serve_in_thread
    from memconform.suites.memoryai.mutants import HTTP_ONLY
    from memconform.suites.memoryai.reference.http_app import make_app

    killed: set[str] = set()
    for name in sorted(HTTP_ONLY):
        url, stop = serve_in_thread(make_app(MUTANTS[name]()))
        try:
            outcome = execute_run(["memoryai"], url, Profile.named("ci"), None,
                                  check_ids=sorted(c.split(".", 1)[1] for c in EXPECTED_KILLS[name] | {"memoryai.rejection_status"}))
        finally:
            stop()
        killed |= {r.check_id for r in outcome.results if r.outcome is Outcome.FAILED}
    return killed


@pytest.mark.parametrize("name", sorted(set(MUTANTS) - HTTP_ONLY_IN_PROCESS_BLIND))
def test_mutant_is_caught_by_its_checks(name, mutant_outcomes):
    assert_mutant_caught(name, mutant_outcomes[name], EXPECTED_KILLS[name])


def test_every_check_is_killed(mutant_outcomes):
    killed = {c for outcomes in mutant_outcomes.values() for c, o in outcomes.items() if o == "failed"}
    killed |= http_kills()
    assert "memoryai.rejection_status" in killed
    killed |= {b for _, case in iter_cases("memoryai") for b in case.get("breaks", []) + case.get("warnings", [])}
    survivors = sorted(c.id for c in REGISTRY.for_suite("memoryai") if c.id not in killed)
    assert survivors == [], "checks no mutant or invalid fixture kills (they could be unable to fail)"
