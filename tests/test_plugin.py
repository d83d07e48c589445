"""The pytest plugin end to end: same checks, same verdicts, four outcomes kept apart."""

from __future__ import annotations

import pytest

pytestmark = pytest.mark.slow  # the slow tier: builds packages, starts browsers or whole suites in subprocesses

pytest_plugins = ["pytester"]


def test_suite_passes_on_the_reference(pytester):
    result = pytester.runpytest_subprocess("--pyargs", "memconform.suites.memoryai", "-q", "-p", "no:cacheprovider")
    # rejection_status and export_filename_json are not applicable in process (status codes and file
    # names exist only over HTTP)
    result.assert_outcomes(passed=len(_ids()) - 2, skipped=2)


def test_mutant_fails_and_reproduce_line_is_printed(pytester):
    result = pytester.runpytest_subprocess(
        "--pyargs", "memconform.suites.memoryai", "-q", "-p", "no:cacheprovider",
        "--mc-target", "python:memconform.suites.memoryai.mutants:TenantIdAdopted", "-k", "tenant_id_not_adopted",
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(["*Reproduce with: memconform run --suite memoryai*--check memoryai.tenant_id_not_adopted*"])


def test_crashing_target_is_an_error_not_a_failure(pytester):
    result = pytester.runpytest_subprocess(
        "--pyargs", "memconform.suites.memoryai", "-q", "-p", "no:cacheprovider",
        "--mc-target", "python:memconform.suites.memoryai.mutants:CrashesOnImport", "-k", "reimport_inserts_nothing",
    )
    result.assert_outcomes(errors=1)


def test_bad_profile_is_a_usage_error_naming_its_source(pytester, monkeypatch):
    monkeypatch.setenv("MEMCONFORM_PROFILE", "nosuch")
    result = pytester.runpytest_subprocess("--pyargs", "memconform.suites.memoryai", "-q", "-p", "no:cacheprovider")
    result.stderr.fnmatch_lines(["*unknown profile 'nosuch'*MEMCONFORM_PROFILE*"])


def _ids():
    from memconform.core.registry import REGISTRY

    return [c.id for c in REGISTRY.for_suite("memoryai")]


def test_report_footer_carries_level_verdicts(pytester, tmp_path):
    from memconform.core.report import read_report

    result = pytester.runpytest_subprocess(
        "--pyargs", "memconform.suites.memoryai", "-q", "-p", "no:cacheprovider", "--mc-report-dir", str(tmp_path),
        "--mc-target", "python:memconform.suites.memoryai.mutants:TenantIdAdopted",
    )
    result.assert_outcomes(failed=1, passed=len(_ids()) - 3, skipped=2)
    _, results, footer = read_report(tmp_path / "report.jsonl")
    assert len(results) == len(_ids())
    verdicts = {v["level"]: v["verdict"] for v in footer["levels"] if v["suite"] == "memoryai"}
    assert verdicts["1"] == "Level 1 Producer: conformant"
    assert verdicts["2"] == "Level 2 Consumer: not conformant (1 failed check: tenant_id_not_adopted)"
    assert verdicts["3"].startswith("Level 3 Bidirectional: not conformant")
    assert footer["exit_code"] == 1
