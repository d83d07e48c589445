"""The contract every suite keeps, tested once over all installed suites (tests/contract_kit.py says
what a mutants module may hold):

- the embedded reference passes every check it can be judged on;
- each mutant fails the checks named for it, through the failure branch written for it, and errors none;
- every check is killed: by a mutant's expected kill, a fixture asserted to fail it, or a test named in
  KILLED_ELSEWHERE, and by nothing else (one definition of killed);
- each fixture document gets its declared verdict;
- the requirement map names every check and only real ones.
Sentences are verbatim in the spec text because registration refuses them otherwise (core/check.py).
Mutant runs are the `mutants` tier: `pytest -m "not mutants"` is the fast inner loop.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from contract_kit import (
    SUITES,
    WITH_MUTANTS,
    checks_run_on,
    document_cases,
    expected_branches,
    expected_kills,
    fixture_document,
    fixture_kills,
    mutant_run,
    mutants_of,
    reference_run,
    registered,
)
from made_once import shared_folder
from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.run.coverage import map_path
from memconform.run.document_run import validate_document

# checks the embedded reference cannot be judged on in process, with why
REFERENCE_SKIPS = {
    "memoryai.rejection_status": "status codes exist only over HTTP (tests/test_reference_http.py)",
    "memoryai.export_filename_json": "a file name exists only over HTTP (tests/test_reference_http.py)",
    "emp.writer_killed_mid_write": "needs a process to kill (tests/test_emp_crash.py runs the reference as a command)",
    "amps.atom_labels_required": "a SHOULD the reference answers only under amps.atom_labels=required",
}

MUTANT_CASES = [(s, n) for s in WITH_MUTANTS for n in sorted(mutants_of(s).kills)]
FIXTURE_CASES = [(s, c) for s in sorted(SUITES) for c in document_cases(s)]


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_reference_passes_every_check(suite: str, shared_runs: Path | None) -> None:
    outcomes = {check: (outcome, reason) for check, (outcome, reason, _) in reference_run(suite, shared_runs).items()}
    assert set(outcomes) == registered(suite)
    assert {c: o for c, o in outcomes.items() if o[0] != "passed" and c not in REFERENCE_SKIPS} == {}
    assert {c: o for c, o in outcomes.items() if c in REFERENCE_SKIPS and o[0] not in ("passed", "skipped")} == {}


@pytest.mark.parametrize("suite", WITH_MUTANTS)
def test_mutant_tables_agree(suite: str) -> None:
    table = mutants_of(suite)  # read and validated (harness/core/mutants.py): names, kills, branches agree
    assert table.problems() == []
    assert table.named_checks() - registered(suite) == set(), "tables name checks that do not exist"


@pytest.fixture(scope="session")
def shared_runs(tmp_path_factory: pytest.TempPathFactory) -> Path | None:
    """Under pytest-xdist the per-mutant tests and the every-check-killed test of a suite land on different
    workers: each mutant run, and each reference run, is made once for all of them (made_once.py). None in one
    process."""
    return shared_folder(tmp_path_factory)


@pytest.mark.mutants
@pytest.mark.parametrize("suite,name", MUTANT_CASES, ids=[f"{s}:{n}" for s, n in MUTANT_CASES])
def test_mutant_is_caught_by_its_branch(suite: str, name: str, shared_runs: Path | None) -> None:
    seen = mutant_run(suite, name, shared_runs)
    expected = expected_kills(suite, name)
    assert expected, f"mutant {name} names no check that should catch it"
    assert {c: seen.get(c, ("absent", (), ""))[::2] for c in expected if seen.get(c, ("",))[0] != "failed"} == {}, \
        f"{name}: expected these checks to fail"
    assert {c: o[2] for c, o in seen.items() if o[0] == "errored"} == {}, f"{name}: a broken rule must fail a check, not error it"
    missed = {(c, words) for c, words in expected_branches(suite, name) if not any(words in t for t in seen.get(c, ("", ()))[1])}
    assert missed == set(), f"{name}: these failure branches did not fire"
    assert set(seen) == set(checks_run_on(suite, name))


@pytest.mark.mutants
@pytest.mark.parametrize("suite", WITH_MUTANTS)
def test_every_check_is_killed(suite: str, shared_runs: Path | None) -> None:
    table = mutants_of(suite)
    killed = {c for name in table.kills for c in expected_kills(suite, name)
              if mutant_run(suite, name, shared_runs).get(c, ("",))[0] == "failed"}
    killed |= fixture_kills(suite) | set(table.killed_elsewhere)
    assert sorted(registered(suite) - killed) == [], "checks nothing kills (they could be unable to fail)"


@pytest.mark.parametrize("suite,case", FIXTURE_CASES, ids=[f"{s}:{c['id']}" for s, c in FIXTURE_CASES])
def test_fixture_verdict(suite: str, case: dict) -> None:
    profile = Profile.named(case.get("profile", "ci"), options=case.get("options"))
    results = validate_document(fixture_document(suite, case["document"]), suite, profile)
    assert [r.check_id for r in results if r.outcome is Outcome.ERRORED] == []
    assert bool(case.get("breaks")) == (case["verdict"] == "invalid"), "an invalid case names what it breaks"
    if any(r.blocking for r in results):
        assert case["verdict"] == "invalid", "a failure that blocks a level makes the document invalid"
    failed = {r.check_id for r in results if r.outcome is Outcome.FAILED}
    assert failed == set(case.get("breaks", [])) | set(case.get("warnings", [])), json.dumps(sorted(failed))


@pytest.mark.parametrize("suite", sorted(SUITES))
def test_requirement_map_names_every_check_and_only_real_ones(suite: str) -> None:
    path = map_path(SUITES[suite])
    assert path.is_file(), f"{suite}: no requirement map at {path}"
    mapped = {c for s in json.loads(path.read_text("utf-8"))["statements"] for c in s["checks"]}
    assert sorted(registered(suite) - mapped) == [], "checks no statement names"
    assert sorted(mapped - registered(suite)) == [], "statements name checks that do not exist"
