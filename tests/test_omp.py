"""Open Memory Protocol suite, what only OMP has: the reference's concurrency counts, readings pinned by
options, the TCP_NODELAY stall note, levels a server does not claim, the envelope rules. The reference
run and the mutant kills every suite shares are in tests/test_suite_contract.py."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from contract_kit import reference_run
from made_once import shared_folder
from memconform.core.profile import Profile
from memconform.core.registry import REGISTRY
from memconform.core.report import read_report
from memconform.core.results import Outcome, Result
from memconform.run.session import execute_run
from memconform.suites.omp import client as c
from memconform.suites.omp import rules
from memconform.suites.omp.mutants import OPTION_KILLS
from memconform.targets.base import Reply

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)


def target_of(name: str) -> str:
    return f"python:memconform.suites.omp.mutants:{name}"


def omp_ids() -> list[str]:
    return [ch.id for ch in REGISTRY.for_suite("omp")]


def run(target: str, check_ids: list[str] | None = None, **options: str) -> dict[str, Result]:
    outcome = execute_run(["omp"], target, Profile.named("ci", options=options), report_dir=None, check_ids=check_ids)
    return {r.check_id: r for r in outcome.results}




def test_reference_counts_its_concurrent_writes_and_shows_no_stall(tmp_path_factory: pytest.TempPathFactory) -> None:
    """The reference's whole `ci` run, made once per session: the contract's every-check test reads the same run."""
    results = reference_run("omp", shared_folder(tmp_path_factory))
    assert set(results) == set(omp_ids())
    assert {i: (outcome, reason) for i, (outcome, reason, _) in results.items() if outcome != Outcome.PASSED.value} == {}
    concurrency = results["omp.concurrent_writers_nothing_lost"][2]
    assert any(line.startswith("acknowledged 90, lost 0") for line in concurrency), concurrency
    assert not any("TCP_NODELAY" in line for _, _, transcript in results.values() for line in transcript)


@pytest.mark.parametrize("name", sorted(OPTION_KILLS))
def test_reading_mutant_passes_by_default_and_fails_when_pinned(name: str) -> None:
    """A server taking another plausible reading passes by default and fails only when an option pins the reading."""
    options, checks = OPTION_KILLS[name]
    default = run(target_of(name), sorted(checks))
    assert {i: r.outcome.value for i, r in default.items()} == dict.fromkeys(checks, "passed")
    pinned = run(target_of(name), sorted(checks), **{f"omp.{k}": v for k, v in options.items()})
    assert {i: r.outcome.value for i, r in pinned.items()} == dict.fromkeys(checks, "failed")
    assert all(f.readings for r in pinned.values() for f in r.failures)


def test_lost_update_counts_are_printed() -> None:
    result = run(target_of("lost_update_under_concurrency"), ["concurrent_writers_nothing_lost"])[
        "omp.concurrent_writers_nothing_lost"]
    assert result.outcome is Outcome.FAILED
    detail = result.failures[0].detail
    for word in ("acknowledged", "lost", "duplicated", "resurrected"):
        assert word in detail


def test_nodelay_stall_noted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The stall is named in the notes, and is no failure: no 429 within 100 requests is the SHOULD
    probe's own verdict (a burst under the bucket of 200), not a verdict on latency. The measurements
    are injected (small exchanges at 40 ms, large answers at 3 ms): the test never depends on the load."""
    monkeypatch.setattr(c, "stall_samples", lambda ctx: ([0.040] * 30, [0.003] * 10))
    # one run (the burst made 100 so the probe's requests are fewer) whose check, run and report all say so
    outcome = execute_run(["omp"], target_of("nagle_stall"), Profile.named("ci", options={"omp.rate_limit_burst": "100"}),
                          report_dir=tmp_path, check_ids=["rate_limited_per_key"])
    result = {r.check_id: r for r in outcome.results}
    notes = result["omp.rate_limited_per_key"].transcript
    assert any("may not set TCP_NODELAY" in line for line in notes), notes
    # and the run itself says so, in the footer and on the command line
    assert any("may not set TCP_NODELAY" in n["note"] for n in outcome.notes), outcome.notes
    _, _, footer = read_report(tmp_path / "report.jsonl")
    assert footer is not None and any("TCP_NODELAY" in n["note"] for n in footer["notes"])
    assert "TCP\\_NODELAY" in (tmp_path / "summary.md").read_text()  # Markdown-escaped: it renders as TCP_NODELAY
    assert not any("TCP_NODELAY" in f.title for f in result["omp.rate_limited_per_key"].failures)


def test_nodelay_band() -> None:
    assert c.nodelay_stall([0.040] * 30) is not None
    assert c.nodelay_stall([0.002] * 30) is None
    assert c.nodelay_stall([0.040] * 5) is None  # too few to say
    assert "confirmed" in (c.nodelay_stall([0.040] * 30, [0.003] * 10) or "")
    assert c.nodelay_stall([0.040] * 30, [0.042] * 10) is None  # large answers as slow: the machine is busy


def test_non_http_target_is_not_applicable() -> None:
    outcome = execute_run(["omp"], "reference:emp", Profile.named("ci"), report_dir=None, check_ids=["health_without_key"])
    (result,) = outcome.results
    assert result.outcome is Outcome.SKIPPED and result.not_applicable and "http://" in result.reason
    assert outcome.exit_code == 2


def test_levels_not_claimed_are_not_applicable() -> None:
    results = run(target_of("health_requires_auth"), ["users_isolated", "semantic_search", "rate_limited_per_key"])
    assert {i: (r.outcome.value, r.not_applicable) for i, r in results.items()} == {
        "omp.users_isolated": ("skipped", True), "omp.semantic_search": ("skipped", True),
        "omp.rate_limited_per_key": ("passed", False)}


def test_declared_level_fields() -> None:
    assert rules.declared_level({"compliance": "OMP-Full"}) == "full"
    assert rules.declared_level({"compliance_level": "OMP-Search"}) == "search"
    assert rules.declared_level({"level": "omp-core"}) == "core"
    assert rules.declared_level({"status": "ok"}) is None


def test_envelope_rules() -> None:
    def answer(status: int, body: Any) -> Reply:
        return Reply(status=status, body=body, raw=b"{}", content_type="application/json", method="GET", path="/x")

    ctx = options_of("any")
    assert list(rules.error_failures(ctx, answer(404, {"error": "memory_not_found", "message": "m", "details": {}}), 404, "memory_not_found")) == []
    assert [f.title for f in rules.error_failures(ctx, answer(404, {"detail": "x"}), 404, "memory_not_found")]
    assert [f.title for f in rules.error_failures(ctx, answer(500, None), 422, "validation_error")]
    assert [f.title for f in rules.error_failures(ctx, answer(422, {"error": "forbidden", "message": "m"}), None, None)]


def options_of(error_message: str) -> Any:
    from types import SimpleNamespace

    return SimpleNamespace(option=lambda name: {"error_message": error_message}[name])


def test_message_reading_belongs_to_each_run() -> None:
    """Errata O15: a bare {"error": code} passes by default and fails only where a run pins "required";
    two runs with different options see each their own (the reading is no module-level setting)."""
    bare = Reply(status=404, body={"error": "memory_not_found"}, raw=b"{}", content_type="application/json",
                    method="GET", path="/x")
    pinned, default = options_of("required"), options_of("any")
    assert [f.readings for f in rules.error_failures(pinned, bare, 404, "memory_not_found")] == [("O15:message-required",)]
    assert list(rules.error_failures(default, bare, 404, "memory_not_found")) == []


def test_ai_endpoints_never_called_without_word(monkeypatch: pytest.MonkeyPatch) -> None:
    """An external target that says nothing about its AI key: extract/compress are skipped, not called."""
    from memconform.suites.omp.reference import api as ref

    sent: list[str] = []
    original = ref.OmpApi.op_extract

    def spy(self: Any, who: Any, req: Any) -> Any:
        sent.append("extract")
        return original(self, who, req)

    monkeypatch.setattr(ref.OmpApi, "op_extract", spy)
    from memconform.suites.omp.reference.serve import reference_target

    target = reference_target()
    try:
        outcome = execute_run(["omp"], target.base_url, Profile.named("ci"), report_dir=None, api_key=target.api_key,
                              check_ids=["extract_without_ai_key", "auth_missing_key_401"])
    finally:
        target.close()
    verdicts = {r.check_id: r.outcome.value for r in outcome.results}
    assert verdicts == {"omp.auth_missing_key_401": "passed", "omp.extract_without_ai_key": "skipped"}
    assert sent == []


def test_short_key_length_not_leaked() -> None:
    result = run(target_of("short_keys"), ["api_keys_at_least_32_chars"])["omp.api_keys_at_least_32_chars"]
    assert result.outcome is Outcome.FAILED
    assert "16 characters" in str(result.failures[0].received)



def test_refused_or_missing_key_is_one_harness_error() -> None:
    """A wrong --api-key is the user's mistake, not 48 errored checks: one line, exit 2 from the CLI."""
    from memconform.core.results import HarnessError
    from memconform.suites.omp.reference.serve import reference_target

    target = reference_target()
    try:
        for key, words in (("not-the-key-" + "x" * 32, "refuses the given API key"), (None, "--api-key")):
            with pytest.raises(HarnessError, match=words):
                execute_run(["omp"], target.base_url, Profile.named("ci"), report_dir=None, api_key=key,
                            check_ids=["health_without_key"])
    finally:
        target.close()
