"""The suites' contract, once for every installed suite: what a mutant run and the reference's run saw, computed
once per session.

A suite's mutants are read as one validated table, `SuiteSpec.mutant_table()` (harness/core/mutants.py says
what a mutants module holds).
"""

from __future__ import annotations

import functools
from pathlib import Path
from typing import Any

from made_once import made_once
from memconform.core.mutants import Mutants
from memconform.core.profile import Profile
from memconform.core.registry import REGISTRY
from memconform.core.suite import SuiteSpec, all_suites
from memconform.kit.fixtures_loader import iter_cases
from memconform.run.session import execute_run

SUITES: dict[str, SuiteSpec] = {s.name: s for s in all_suites()}
WITH_MUTANTS = sorted(name for name, s in SUITES.items() if s.mutants is not None)


@functools.cache
def mutants_of(suite: str) -> Mutants:
    table = SUITES[suite].mutant_table()
    assert table is not None
    return table


def registered(suite: str) -> set[str]:
    return {c.id for c in REGISTRY.for_suite(suite)}


def expected_kills(suite: str, name: str) -> set[str]:
    return set(mutants_of(suite).kills[name])


def expected_branches(suite: str, name: str) -> set[tuple[str, str]]:
    """(check id, words of the failure title) that must be seen on this mutant, whatever table names them."""
    return set(mutants_of(suite).branches.get(name, ()))


def checks_run_on(suite: str, name: str) -> list[str]:
    return mutants_of(suite).checks_run_on(name)


MutantRun = dict[str, tuple[str, tuple[str, ...], str]]
ReferenceRun = dict[str, tuple[str, str, tuple[str, ...]]]  # check id -> (outcome, reason, transcript)


@functools.cache
def reference_run(suite: str, shared: Path | None = None) -> ReferenceRun:
    """The embedded reference's `ci` run in process, every check: made once per test session and read by every
    test of that run (the contract's, and a suite's own about its transcripts)."""
    seen = made_once(shared, f"reference-{suite}", lambda: _run_reference(suite))
    return {check: (outcome, reason, tuple(transcript)) for check, (outcome, reason, transcript) in seen.items()}


def _run_reference(suite: str) -> dict[str, tuple[str, str, list[str]]]:
    outcome = execute_run([suite], f"reference:{suite}", Profile.named("ci"), report_dir=None)
    return {r.check_id: (r.outcome.value, r.reason, list(r.transcript)) for r in outcome.results}


@functools.cache
def mutant_run(suite: str, name: str, shared: Path | None = None) -> MutantRun:
    """check id -> (outcome, failure titles, reason) of one run of the mutant: run once per test session.
    `shared`: made_once's folder, so a run is made once per session however xdist spreads the tests."""
    seen = made_once(shared, f"contract-{suite}.{name}", lambda: _run_mutant(suite, name))
    return {check: (outcome, tuple(titles), reason) for check, (outcome, titles, reason) in seen.items()}


def _run_mutant(suite: str, name: str) -> MutantRun:
    table = mutants_of(suite)
    stop = None
    if name in table.http_only and table.http_app is not None:  # only HTTP shows it (a status code, a route)
        from memconform.kit.loopback import serve_in_thread

        target, stop = serve_in_thread(table.http_app(name))
    else:
        target = table.target(name)
    try:
        outcome = execute_run([suite], target, Profile.named("ci"), report_dir=None, check_ids=checks_run_on(suite, name))
    finally:
        if stop is not None:
            stop()
    return {r.check_id: (r.outcome.value, tuple(f.title for f in r.failures), r.reason) for r in outcome.results}


def document_cases(suite: str) -> list[dict[str, Any]]:
    """The suite's fixture documents (valid/ and invalid/ right under fixtures/<suite>/; request cases
    in deeper folders are not documents)."""
    return [case for path, case in iter_cases(suite)
            if path.parent.parent.name == suite and isinstance(case, dict) and "document" in case]


def fixture_document(suite: str, document: Any) -> Any:
    """A fixture holds the document as JSON, or as text for a format that is not JSON (EMP lines)."""
    parse = SUITES[suite].parse
    if isinstance(document, str) and parse is not None:
        return parse(document.encode("utf-8"))
    return document


def fixture_kills(suite: str) -> set[str]:
    """Checks a fixture is asserted to fail (tests/test_suite_contract.py::test_fixture_verdict)."""
    return {c for case in document_cases(suite) for c in [*case.get("breaks", []), *case.get("warnings", [])]}
