"""MemoryAI verdicts need evidence: other readings pass, refusals never pass, empty or hook-less targets are not assessed."""

from __future__ import annotations

import json

import pytest
from memconform.core.profile import Profile
from memconform.kit.fixtures_loader import iter_cases
from memconform.kit.loopback import serve_in_thread
from memconform.run.session import execute_run
from memconform.suites.memoryai import mutants
from memconform.suites.memoryai.reference.brain import ReferenceBrain
from memconform.suites.memoryai.reference.http_app import make_app
from memconform.suites.memoryai.reference.readings import OtherReadingsBrain
from starlette.applications import Starlette
from starlette.responses import HTMLResponse
from starlette.routing import Route

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)


def run(target: str, **kw):
    return execute_run(["memoryai"], target, Profile.named("ci"), report_dir=None, **kw)


def levels(outcome) -> dict[str, object]:
    return {v.key: v for v in outcome.levels["memoryai"]}


def outcomes(outcome) -> dict[str, str]:
    return {r.check_id: r.outcome.value for r in outcome.results}


def served(app):
    url, stop = serve_in_thread(app)
    return url, stop


def test_other_readings_pass_with_no_failure_and_no_warning():
    out = run("python:memconform.suites.memoryai.reference.readings:OtherReadingsBrain")
    failed = {r.check_id: [f.title for f in r.failures] for r in out.results if r.outcome.value in ("failed", "errored")}
    assert failed == {}
    assert [v.status for v in out.levels["memoryai"]][:3] == ["conformant"] * 3
    seen = {point: entry["seen"] for point, entry in out.readings.get("memoryai", {}).items()} if isinstance(
        out.readings, dict) else {}
    if seen:  # the readings table names the other readings
        assert "ascii-escapes+ecmascript-numbers" in seen.get("E1", []) and "_kind lines" in seen.get("E3", [])


def test_other_readings_pass_over_http():
    url, stop = served(make_app(OtherReadingsBrain(), multipart_field="bundle", rejection_status=400))
    try:
        out = run(url)
    finally:
        stop()
    bad = {r.check_id: r.reason or [f.title for f in r.failures] for r in out.results if r.outcome.value in ("failed", "errored")}
    assert bad == {}
    assert all(v.status == "conformant" for v in out.levels["memoryai"]), [(v.key, v.status, v.why) for v in out.levels["memoryai"]]
    assert out.exit_code == 0


def test_a_target_that_refuses_everything_passes_nothing():
    out = run("python:memconform.suites.memoryai.mutants:RefusesEverything")
    assert [c for c, o in outcomes(out).items() if o == "passed"] == []
    assert outcomes(out)["memoryai.rejects_newer_version"] == "errored"
    assert out.exit_code == 1


class RefusesImports(ReferenceBrain):
    """Exports, but refuses every import (as a bundle rejection)."""

    def import_bundle(self, body=None, **params):
        from memconform.targets.base import Rejected

        raise Rejected({"success": False, "report": {"warnings": ["no"]}}, "refused")


def test_negative_checks_error_on_their_refused_control():
    out = run(f"python:{__name__}:RefusesImports")
    reasons = {r.check_id: (r.outcome.value, r.reason) for r in out.results}
    for check in ("rejects_newer_version", "checksum_mismatch_warned", "invalid_chunks_skipped"):
        outcome, reason = reasons[f"memoryai.{check}"]
        assert outcome == "errored" and "positive control refused" in reason, (check, outcome, reason)
    assert [c for c, o in outcomes(out).items() if o == "passed" and "reject" in c] == []


def test_an_html_400_to_everything_passes_nothing():
    async def refuse(request):
        return HTMLResponse("<html><body>400 Bad Request</body></html>", status_code=400)

    app = Starlette(routes=[Route("/{path:path}", refuse, methods=["GET", "POST"])])
    url, stop = served(app)
    try:
        out = run(url)
    finally:
        stop()
    assert [c for c, o in outcomes(out).items() if o == "passed"] == []
    assert all(v.status != "conformant" for v in out.levels["memoryai"])


def test_an_empty_export_only_producer_is_not_assessed():
    out = run("python:memconform.suites.memoryai.mutants:EmptyExportOnly")
    level1 = levels(out)["1"]
    assert level1.status == "not assessed"
    assert any("no chunks to examine: the target exported an empty brain and could not be seeded" in w for w in level1.why)
    assert levels(out)["2"].status != "conformant"
    assert out.exit_code == 1


def test_a_checksum_computed_before_exported_at_is_not_level_1():
    out = run("python:memconform.suites.memoryai.mutants:ChecksumBeforeExportedAt")
    assert levels(out)["1"].status == "not conformant"
    assert out.exit_code == 1


def test_no_checksum_is_not_level_1():
    assert levels(run("python:memconform.suites.memoryai.mutants:NoChecksum"))["1"].status == "not conformant"


class NoHooks(ReferenceBrain):
    """A conforming brain that offers neither the decay nor the delete hook."""

    def decay(self, body=None, **params):
        from memconform.core.results import Unsupported

        raise Unsupported("decay")

    def delete_chunk(self, body=None, **params):
        from memconform.core.results import Unsupported

        raise Unsupported("delete_chunk")


def test_missing_hooks_leave_levels_1_and_2_not_assessed_without_failing_the_run():
    out = run(f"python:{__name__}:NoHooks")
    by_key = levels(out)
    assert by_key["1"].status == "not assessed" and any("delete_chunk hook" in w for w in by_key["1"].needs)
    assert by_key["2"].status == "not assessed" and any("decay hook" in w for w in by_key["2"].needs)
    assert by_key["2"].line().startswith("Level 2 Consumer: conformant on every rule observable through the spec's "
                                         "interface; not assessed: DNA protection, needs the decay hook"), by_key["2"].line()
    assert {c: o for c, o in outcomes(out).items() if o == "failed"} == {}
    assert out.exit_code == 0


def test_missing_hooks_fail_the_run_when_hooks_are_required():
    profile = Profile.named("ci")
    profile.require_hooks = True
    out = execute_run(["memoryai"], f"python:{__name__}:NoHooks", profile, report_dir=None)
    assert levels(out)["2"].gating and out.exit_code == 1


def test_missing_profile_endpoints_fail_the_http_profile():
    url, stop = served(make_app(mutants.NoSpecNoStream()))
    try:
        out = run(url)
    finally:
        stop()
    assert levels(out)["http"].status == "not conformant"
    assert {"memoryai.spec_endpoint", "memoryai.export_stream_equivalent"} <= {
        r.check_id for r in out.results if r.outcome.value == "failed"}


def test_two_runs_on_one_preloaded_instance_give_the_same_verdicts():
    brain = ReferenceBrain()
    for _, case in iter_cases("memoryai"):
        if case["verdict"] == "valid" and not case.get("warnings"):
            brain.import_bundle(json.loads(json.dumps(case["document"])))
    url, stop = served(make_app(brain))
    try:
        first, second = run(url), run(url)
    finally:
        stop()
        brain.close()
    assert outcomes(first) == outcomes(second)
    assert {k: v for k, v in outcomes(first).items() if v != "passed"} == {}
    assert [v.status for v in first.levels["memoryai"]] == [v.status for v in second.levels["memoryai"]]


@pytest.mark.parametrize("name", sorted(mutants.HTTP_ONLY))
def test_http_only_mutants_are_caught_over_http(name):
    from mutant_kit import assert_mutant_caught

    url, stop = served(make_app(mutants.MUTANTS[name]()))
    try:
        out = run(url)
    finally:
        stop()
    assert_mutant_caught(name, outcomes(out), mutants.EXPECTED_KILLS[name])
