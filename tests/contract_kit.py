"""The suites' contract, once for every installed suite: what a mutant run saw, computed once per session.

A suite's mutants module (SuiteSpec.mutants) holds MUTANTS {name: factory} and EXPECTED_KILLS {name: the
check ids that must fail on it, or {check id: a words of the failure title}}, and optionally:
- NOTE_ONLY / OPTION_KILLS: mutants that break no default reading (a run note; a reading only a pinned
  option fails), so they are not in EXPECTED_KILLS;
- HTTP_ONLY: mutants only HTTP reveals, served on loopback from `http_app(name)`;
- ALSO_RUN: checks every mutant of the suite runs as well, so a broken set-up step errors visibly;
  KILLS_ONLY: mutants too slow for that, which run their kills alone;
- EXPECTED_TITLES {name: {(check id, words of the title)}} (EXPECTED_FAILURES {name: {short id: words}}):
  the failure branch that must fire, not only the check;
- KILLED_ELSEWHERE {check id: the test that kills it deterministically}.
"""

from __future__ import annotations

import functools
from pathlib import Path
from types import ModuleType
from typing import Any

from made_once import made_once
from memconform.core.profile import Profile
from memconform.core.registry import REGISTRY
from memconform.core.suite import SuiteSpec, all_suites
from memconform.kit.fixtures_loader import iter_cases
from memconform.run.session import execute_run

SUITES: dict[str, SuiteSpec] = {s.name: s for s in all_suites()}
WITH_MUTANTS = sorted(name for name, s in SUITES.items() if s.mutants is not None)


@functools.cache
def mutants_of(suite: str) -> ModuleType:
    make = SUITES[suite].mutants
    assert make is not None
    return make()


def registered(suite: str) -> set[str]:
    return {c.id for c in REGISTRY.for_suite(suite)}


def expected_kills(suite: str, name: str) -> set[str]:
    return set(mutants_of(suite).EXPECTED_KILLS[name])


def expected_branches(suite: str, name: str) -> set[tuple[str, str]]:
    """(check id, words of the failure title) that must be seen on this mutant, whatever table names them."""
    module = mutants_of(suite)
    kills = module.EXPECTED_KILLS[name]
    found = {(check, words) for check, words in kills.items()} if isinstance(kills, dict) else set()
    found |= set(getattr(module, "EXPECTED_TITLES", {}).get(name, ()))
    found |= {(f"{suite}.{short}", words) for short, words in getattr(module, "EXPECTED_FAILURES", {}).get(name, {}).items()}
    return found


def checks_run_on(suite: str, name: str) -> list[str]:
    module = mutants_of(suite)
    wanted = expected_kills(suite, name)
    if name not in getattr(module, "KILLS_ONLY", ()):
        wanted |= set(getattr(module, "ALSO_RUN", ()))
    return sorted(wanted)


MutantRun = dict[str, tuple[str, tuple[str, ...], str]]


@functools.cache
def mutant_run(suite: str, name: str, shared: Path | None = None) -> MutantRun:
    """check id -> (outcome, failure titles, reason) of one run of the mutant: run once per test session.
    `shared`: made_once's folder, so a run is made once per session however xdist spreads the tests."""
    seen = made_once(shared, f"contract-{suite}.{name}", lambda: _run_mutant(suite, name))
    return {check: (outcome, tuple(titles), reason) for check, (outcome, titles, reason) in seen.items()}


def _run_mutant(suite: str, name: str) -> MutantRun:
    module = mutants_of(suite)
    stop = None
    if name in getattr(module, "HTTP_ONLY", ()):  # only HTTP shows it (a status code, an absent route)
        from memconform.kit.loopback import serve_in_thread

        target, stop = serve_in_thread(module.http_app(name))
    else:
        target = f"python:{module.__name__}:{name}"
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
