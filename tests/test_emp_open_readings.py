"""EMP behaviours an independent writer (tests/second_opinion/emp2) showed, fed to the checks through
small fakes: a reading no sentence forbids is recorded (or noted) and passes by default, the option that
pins memconform's advice fails it; and a reader folding ASCII letters only is caught by the content
query's case pairs, drawn from the domain table."""

from __future__ import annotations

import json
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.run.session import execute_run
from memconform.suites.emp.checks.reader import case_pairs
from memconform.suites.emp.reference import ReferenceEmpApp
from memconform.targets.base import Rejected

pytestmark = pytest.mark.slow  # each test runs checks against a served fake (seconds each)


class GivesUpOnAnyLock(ReferenceEmpApp):
    """Waits a little with backoff for any lock, stale or not, then refuses (emp2's reading of E2)."""

    MAX_WAIT_S = 1.0
    STALE_S = float("inf")

    def append(self, body: Any) -> dict[str, Any]:
        try:
            return super().append(body)
        except TimeoutError:
            raise Rejected({"error": "the lock is held by another writer"}, "lock held") from None


class CrashesOnBadBytes(ReferenceEmpApp):
    """Reads request bytes with plain json.loads and lets its error escape (a crash that writes nothing)."""

    def append(self, body: Any) -> dict[str, Any]:
        if isinstance(body, (bytes, bytearray)):
            body = json.loads(bytes(body).decode("utf-8"))  # raises on bad bytes: the call crashes
        return super().append(body)


class FoldsAsciiOnly(ReferenceEmpApp):
    """The content search lowers ASCII letters only (bytes.lower), so CAFÉ does not find café."""

    def query(self, body: dict[str, Any]) -> list[dict[str, Any]]:
        text = body.get("text")
        if text is None:
            return super().query(body)
        wanted = text.encode("utf-8").lower()
        return [e for e in super().query({**body, "text": None}) if wanted in e["content"].encode("utf-8").lower()]


def run(impl: str, checks: list[str], **options: str) -> Any:
    profile = Profile.named("ci", options={f"emp.{k}": v for k, v in options.items()})
    return execute_run(["emp"], f"python:{__name__}:{impl}", profile, report_dir=None, check_ids=checks)


def outcomes(outcome: Any) -> dict[str, Outcome]:
    return {r.check_id: r.outcome for r in outcome.results}


STALE = ["emp.writer_stale_lock", "emp.writer_after_killed_writer"]


def test_a_writer_giving_up_on_a_stale_lock_is_a_recorded_reading() -> None:
    outcome = run("GivesUpOnAnyLock", STALE)
    assert outcomes(outcome) == dict.fromkeys(STALE, Outcome.PASSED), [f.title for r in outcome.results for f in r.failures]
    seen = {(r["point"], s) for r in outcome.readings for s in r["seen"]}
    assert ("E2", "waits on a stale lock, then gives up") in seen


def test_pinning_the_takeover_fails_the_same_writer() -> None:
    outcome = run("GivesUpOnAnyLock", STALE, stale_lock_takeover="required")
    assert outcomes(outcome) == dict.fromkeys(STALE, Outcome.FAILED)
    assert "the append was refused because of a stale lock" in [f.title for r in outcome.results for f in r.failures]


def test_a_crash_on_bad_bytes_that_writes_nothing_is_a_note_by_default() -> None:
    outcome = run("CrashesOnBadBytes", ["emp.hostile_json_refused"])
    (result,) = outcome.results
    assert result.outcome is Outcome.PASSED, [f.title for f in result.failures]
    assert any("answered with a crash that stored nothing" in line for line in result.transcript)


def test_pinning_a_clear_refusal_fails_the_crash() -> None:
    outcome = run("CrashesOnBadBytes", ["emp.hostile_json_refused"], hostile_refusal="clear")
    (result,) = outcome.results
    assert result.outcome is Outcome.FAILED
    assert any(": crashed on " in f.title for f in result.failures), [f.title for f in result.failures]


def test_the_content_query_draws_non_ascii_case_pairs_from_the_domain_table() -> None:
    pairs = case_pairs()
    assert pairs and all(not a.isascii() and a.lower() == b.lower() and a != b for a, b in pairs)


def test_a_reader_folding_ascii_only_is_caught_and_the_reference_is_not() -> None:
    caught = run("FoldsAsciiOnly", ["emp.query_content"])
    assert outcomes(caught) == {"emp.query_content": Outcome.FAILED}
    assert {f.title for r in caught.results for f in r.failures} == {"query left out a matching entry"}
    reference = execute_run(["emp"], "reference:emp", Profile.named("ci"), report_dir=None, check_ids=["emp.query_content"])
    assert outcomes(reference) == {"emp.query_content": Outcome.PASSED}
