"""Only the levels a target claims are labelled claimed (issue 34 item 4): a Core-only OMP server's health says
"OMP-Core", so its report says "claims: core" and marks OMP-Core alone as claimed; the 0.2 AI endpoints and §7
are judged whatever a server claims (Level.always_judged), so they run and are never called claimed; OMP-Search
and OMP-Full are "not claimed". The control: the reference declares OMP-Full and claims all three."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.render.markdown import render_markdown
from memconform.render.terminal import render_terminal
from memconform.run.session import execute_run
from memconform.suites.omp.reference.api import OmpApi
from memconform.suites.omp.reference.serve import ServedTarget, ServerSpec, serve_target

CHECKS = ["list_response_shape", "semantic_search", "list_filter_namespace", "extract_without_ai_key",
          "api_keys_at_least_32_chars"]  # one per level: core, search, full, ai, security


class CoreOnly(OmpApi):
    """The reference, declaring OMP-Core in /v1/health."""

    compliance = "OMP-Core"


def core_only() -> ServedTarget:
    return serve_target(ServerSpec(api_class=CoreOnly), label="fake:omp:core-only")


def full() -> ServedTarget:
    return serve_target(ServerSpec(api_class=OmpApi), label="fake:omp:full")


def _run(factory: str, folder: Path) -> tuple[Any, dict[str, dict[str, Any]], str]:
    outcome = execute_run(["omp"], f"python:{__name__}:{factory}", Profile.named("ci"), report_dir=folder, check_ids=CHECKS)
    footer = json.loads((folder / "report.jsonl").read_text("utf-8").splitlines()[-1])
    levels = {lv["level"]: lv for lv in footer["levels"]}
    return outcome, levels, (folder / "report.html").read_text("utf-8")


def _claim_label(page: str, title: str) -> str:
    """What report.html's verdict table says beside a level's title."""
    row = page[page.index(f"{title} <small>"):]
    return row[len(f"{title} <small>"):row.index("</small>")]


@pytest.fixture(scope="module")
def core_run(tmp_path_factory: pytest.TempPathFactory) -> tuple[Any, dict[str, dict[str, Any]], str]:
    return _run("core_only", tmp_path_factory.mktemp("core") / "report")


def test_a_core_only_server_claims_core_and_only_core(core_run: tuple[Any, dict[str, dict[str, Any]], str]) -> None:
    outcome, levels, _ = core_run
    by_id = {r.check_id: r for r in outcome.results}
    for check, level in (("omp.semantic_search", "search"), ("omp.list_filter_namespace", "full")):
        r = by_id[check]
        assert r.outcome is Outcome.SKIPPED and r.not_applicable
        assert r.reason == f"target does not claim level {level!r} (claims: core; judged whatever it claims: ai, security)"
    for check in ("omp.list_response_shape", "omp.extract_without_ai_key", "omp.api_keys_at_least_32_chars"):
        assert "does not claim" not in by_id[check].reason, by_id[check].reason  # run, whatever the claim
    assert by_id["omp.list_response_shape"].outcome is Outcome.PASSED
    assert {k: lv["claimed"] for k, lv in levels.items()} == {
        "core": True, "search": False, "full": False, "ai": None, "security": None}
    assert levels["search"]["status"] == levels["full"]["status"] == "not claimed"


def test_no_rendering_calls_ai_or_security_claimed(core_run: tuple[Any, dict[str, dict[str, Any]], str]) -> None:
    outcome, levels, page = core_run
    assert _claim_label(page, "OMP-Core") == "claimed"
    assert _claim_label(page, "OMP-Search") == _claim_label(page, "OMP-Full") == "not claimed"
    assert _claim_label(page, "§7 Security considerations") == ""
    assert _claim_label(page, "0.2 extract/compress (no AI key configured)") == ""
    assert "(claims: core; judged whatever it claims: ai, security)" in page
    summary = render_markdown(outcome.report)
    for text in (page, render_terminal(outcome.report, None, verbose=True), summary):
        assert not re.search(r"(?<!whatever it )claims: (ai|core, |security)", text)


def test_the_control_a_full_server_claims_all_three(tmp_path: Path) -> None:
    outcome, levels, page = _run("full", tmp_path / "report")
    assert not [r.reason for r in outcome.results if "does not claim" in r.reason]
    assert {k: lv["claimed"] for k, lv in levels.items()} == {
        "core": True, "search": True, "full": True, "ai": None, "security": None}
    assert [_claim_label(page, t) for t in ("OMP-Core", "OMP-Search", "OMP-Full", "§7 Security considerations")] == [
        "claimed", "claimed", "claimed", ""]
