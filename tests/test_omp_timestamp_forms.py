"""Errata O53: a timestamp a client sends in another form (`+02:00`, no offset, a date alone, lower-case
`t`/`z`). A server may store the same instant (and serve it in UTC, as O6 asks) or refuse it; by default
both are readings, recorded from what the target did; `omp.timestamp_form` pins one. A server that keeps a
different instant (the wall-clock time read as UTC) is blamed under every reading.

A blind OMP implementation (tests/second_opinion/omp3) normalises to `Z` and was blamed "not read back as
written" by `omp.domain_create_every_class`, because the sent value was parsed under the served-form rule.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.run.session import execute_run
from memconform.suites.omp import rules
from memconform.suites.omp.model import shapes
from memconform.suites.omp.reference.api import OmpApi

pytestmark = pytest.mark.slow  # each test runs the domain write checks against a served fake (seconds each)

CHECKS = ["domain_create_every_class", "domain_update_every_class"]
OTHER_FORM = "O53"
STORED, REFUSED = "a timestamp in another form: stored as the same instant", "a timestamp in another form: refused"


def _parse(value: str) -> dt.datetime | None:
    try:
        when = dt.datetime.fromisoformat(value.upper().replace("Z", "+00:00"))
    except ValueError:
        return None
    return when if when.tzinfo else when.replace(tzinfo=dt.UTC)


class NormalisesToUtc(OmpApi):
    """Any ISO 8601 date-time accepted and stored as the same instant written with `Z` (the blind server)."""

    shift = False

    def check_utc(self, value: Any, name: str) -> str:
        when = _parse(value) if isinstance(value, str) else None
        if when is None:
            return super().check_utc(value, name)
        if self.shift:  # the wall clock kept, the offset dropped: another instant
            when = when.replace(tzinfo=dt.UTC)
        return when.astimezone(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f") + "Z"  # every form normalised, even a plain Z


class KeepsWallClock(NormalisesToUtc):
    shift = True


def normalises_to_utc() -> Any:
    from memconform.suites.omp.reference.serve import ServerSpec, serve_target

    return serve_target(ServerSpec(api_class=NormalisesToUtc), label="fake:omp:normalises-to-utc")


def keeps_wall_clock() -> Any:
    from memconform.suites.omp.reference.serve import ServerSpec, serve_target

    return serve_target(ServerSpec(api_class=KeepsWallClock), label="fake:omp:keeps-wall-clock")


def run(target: str, **options: str) -> Any:
    profile = Profile.named("ci", options={f"omp.{k}": v for k, v in options.items()})
    return execute_run(["omp"], f"python:{__name__}:{target}" if ":" not in target else target, profile,
                       report_dir=None, check_ids=CHECKS)


def seen(outcome: Any) -> set[tuple[str, str]]:
    return {(r["point"], s) for r in outcome.readings for s in r["seen"]}


def titles(outcome: Any) -> list[str]:
    return [f.title for r in outcome.results for f in r.failures]


def test_the_same_instant_in_utc_is_a_reading_by_default_and_fails_when_refuse_is_pinned() -> None:
    default = run("normalises_to_utc")
    assert [r.outcome for r in default.results] == [Outcome.PASSED, Outcome.PASSED], titles(default)
    assert (OTHER_FORM, STORED) in seen(default)
    pinned = run("normalises_to_utc", timestamp_form="refuse")
    assert any("memory.source.timestamp:non_utc" in t for t in titles(pinned)), titles(pinned)


def test_refusing_another_form_is_a_reading_and_fails_when_instant_is_pinned() -> None:
    default = run("reference:omp")
    assert [r.outcome for r in default.results] == [Outcome.PASSED, Outcome.PASSED], titles(default)
    assert (OTHER_FORM, REFUSED) in seen(default)
    pinned = run("reference:omp", timestamp_form="instant")
    assert any("memory.source.timestamp:non_utc" in t and "an allowed value was refused" in t for t in titles(pinned)), titles(pinned)


def test_another_instant_kept_is_blamed_on_create_and_update() -> None:
    """The negative: 14:00+02:00 stored as 14:00Z is no reading; both write checks say so."""
    outcome = run("keeps_wall_clock")
    failed = {r.check_id: [f.title for f in r.failures] for r in outcome.results if r.outcome is Outcome.FAILED}
    assert set(failed) == {f"omp.{c}" for c in CHECKS}, titles(outcome)
    for check in failed.values():
        assert any("non_utc" in t and "not read back as written" in t for t in check), check


def test_the_model_compares_instants_and_leaves_the_form_to_o6() -> None:
    sent = {"content": "x", "type": "semantic", "source": {"tool": "t", "timestamp": "2026-06-29T14:00:00+02:00"},
            "expires_at": "2026-06-29T14:00:00+02:00"}
    normalised = {**sent, "source": {"tool": "t", "timestamp": "2026-06-29T12:00:00Z"}, "expires_at": "2026-06-29T12:00:00.000Z"}
    assert shapes.fields_differ(normalised, sent) is None
    wall_clock = {**sent, "source": {"tool": "t", "timestamp": "2026-06-29T14:00:00Z"}}
    assert "source.timestamp" in str(shapes.fields_differ(wall_clock, sent))
    assert rules.sent_instant("2026-06-29T14:00:00+02:00") == rules.instant("2026-06-29T12:00:00Z")
    assert rules.instant("2026-06-29T14:00:00+02:00") is None  # served in that form: still no UTC timestamp (O6)
