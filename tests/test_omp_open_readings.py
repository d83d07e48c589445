"""Open points of OMP that an independent implementation (tests/second_opinion/omp2) read the other way,
each fed to the check through a small fake: the reading is accepted and recorded by default, and the
option that pins the other reading turns the same answer into a failure.

- errata O36: a create or import item without `source.timestamp`, stamped by the server;
- errata O37: `null` for a field §2.1 marks optional without `| null` (`metadata?`, `namespace?`, ...),
  refused with 422; in the domain checks and in the fuzzer's valid-data phase;
- errata O14: an update setting `expires_at` in the past, after which the memory is no longer served.
"""

from __future__ import annotations

import datetime as dt
from typing import Any

import pytest
from memconform.core.profile import CI_SEED, Profile
from memconform.core.results import Outcome
from memconform.run.session import execute_run
from memconform.suites.omp.reference.api import OmpApi, Principal
from memconform.suites.omp.reference.parts import ApiError

pytestmark = pytest.mark.slow  # each test runs checks against a served fake (seconds each)

NULL_OPTIONAL = ("namespace", "metadata", "embedding")
SOURCE_OPTIONAL = ("session_id", "user_id")


class StampsSourceRefusesNullHidesExpired(OmpApi):
    """omp2's readings on the reference: a source without timestamp is stamped now; null for an optional
    field is refused (422 naming it); a memory whose expires_at has passed answers 404."""

    def validate_memory(self, body: dict[str, Any], *, partial: bool) -> dict[str, Any]:
        for name in NULL_OPTIONAL:
            if name in body and body[name] is None and not (partial and name in ("namespace", "embedding")):
                raise self.invalid("type", name, f"{name} must not be null")
        source = body.get("source")
        if isinstance(source, dict):
            for name in SOURCE_OPTIONAL:
                if name in source and source[name] is None:
                    raise self.invalid("type", f"source.{name}", f"source.{name} must not be null")
            if "timestamp" not in source and not partial:
                stamp = dt.datetime.now(dt.UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
                body = {**body, "source": {**source, "timestamp": stamp}}
        return super().validate_memory(body, partial=partial)

    def visible(self, who: Principal, memory_id: str) -> dict[str, Any]:
        doc = super().visible(who, memory_id)
        expires = doc.get("expires_at")
        if isinstance(expires, str) and dt.datetime.fromisoformat(expires.replace("Z", "+00:00")) < dt.datetime.now(dt.UTC):
            raise ApiError("memory_not_found", f"no memory with id {memory_id!r}", {})
        return doc


class AlsoRefusesEmptyTextAndNullFilters(StampsSourceRefusesNullHidesExpired):
    """The fuzzer's view of omp2: besides the above, "" is refused where the spec gives a maximum only
    (errata O34), and a search filter sent as null is refused, each with a 422 naming the field."""

    def check_string(self, value: Any, name: str, max_len: int | None = None, limit_kind: str = "limit") -> str:
        if value == "":
            raise self.invalid("value", name, f"{name} must not be empty")
        return super().check_string(value, name, max_len, limit_kind)

    def op_search(self, who: Principal, req: Any) -> Any:
        body = self.json_object(req)
        for name in ("type", "tags", "namespace", "limit", "mode"):
            if name in body and body[name] is None:
                raise self.invalid("type", name, f"{name} must not be null")
        return super().op_search(who, req)


def omp2_fuzzing_readings() -> Any:
    from memconform.suites.omp.reference.serve import ServerSpec, serve_target

    return serve_target(ServerSpec(api_class=AlsoRefusesEmptyTextAndNullFilters), label="fake:omp:omp2-fuzzing-readings")


def omp2_readings() -> Any:
    """`python:tests.test_omp_open_readings:omp2_readings`: the fake, served on loopback."""
    from memconform.suites.omp.reference.serve import ServerSpec, serve_target

    return serve_target(ServerSpec(api_class=StampsSourceRefusesNullHidesExpired), label="fake:omp:omp2-readings")


TARGET = f"python:{__name__}:omp2_readings"
WRITES = ["domain_create_every_class", "domain_update_every_class", "domain_import_every_class"]


def run(checks: list[str], **options: str) -> Any:
    profile = Profile.named("ci", options={f"omp.{k}": v for k, v in options.items()})
    return execute_run(["omp"], TARGET, profile, report_dir=None, check_ids=checks)


def seen(outcome: Any) -> set[tuple[str, str]]:
    return {(r["point"], s) for r in outcome.readings for s in r["seen"]}


def titles(outcome: Any) -> list[str]:
    return [f.title for r in outcome.results for f in r.failures]


def test_the_write_checks_accept_and_record_the_other_readings() -> None:
    outcome = run(WRITES)
    assert {r.check_id: r.outcome for r in outcome.results} == {f"omp.{c}": Outcome.PASSED for c in WRITES}, titles(outcome)
    found = seen(outcome)
    assert ("O36", "source.timestamp left out: stamped by the server") in found
    assert ("O37", "null on an optional field: refused") in found
    assert ("O14", "an expired memory is no longer served") in found


def test_pinning_null_as_absent_fails_the_refusal() -> None:
    outcome = run(["domain_create_every_class"], null_optional="absent")
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED]
    assert any(t.startswith("memory.metadata:null = null: an allowed value was refused") for t in titles(outcome)), titles(outcome)


def test_pinning_a_required_source_timestamp_fails_the_stamp() -> None:
    outcome = run(["domain_create_every_class"], source_timestamp="required")
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED]
    assert any(t.startswith("memory.source.timestamp:absent = <absent>: POST /memories: accepted instead of refused")
               for t in titles(outcome)), titles(outcome)


def test_the_reference_fits_the_default_and_fails_the_pinned_other_reading() -> None:
    """The reference reads null as absent and requires source.timestamp: the other pins fail it."""
    profile = Profile.named("ci", options={"omp.null_optional": "refuse", "omp.source_timestamp": "stamped"})
    outcome = execute_run(["omp"], "reference:omp", profile, report_dir=None, check_ids=["domain_create_every_class"])
    found = titles(outcome)
    assert any(t.startswith("memory.metadata:null = null: POST /memories: accepted instead of refused") for t in found), found
    assert any(t.startswith("memory.source.timestamp:absent = <absent>: an allowed value was refused") for t in found), found


# ---- the fuzzer's valid-data phase, end to end (the answers one by one: tests/test_no_blame.py) ----

# The fake refuses every null and empty value, so `ci`'s few derandomized examples may all be refused on
# one Hypothesis build and not on another (then the check is honestly skipped: nothing reached a 2xx);
# `default` generates enough for some to be accepted on any build.
# default's 25 examples an operation, with a fixed seed: the fake refuses every create holding an empty text
# or a null, so only enough draws are sure to create a memory too (the fuzzer's evidence that it reached the
# handlers); default's own seed is random, and ci's 5 draws held no clean create under another hypothesis
FUZZ_PROFILE = Profile.named("default", seed=CI_SEED)


def test_the_valid_data_fuzzing_records_the_refusals_and_blames_nothing() -> None:
    outcome = execute_run(["omp"], f"python:{__name__}:omp2_fuzzing_readings", FUZZ_PROFILE, report_dir=None,
                          check_ids=["fuzz_valid_data_accepted"])
    assert [r.outcome for r in outcome.results] == [Outcome.PASSED], titles(outcome)
    found = seen(outcome)
    assert ("O37", "null on an optional field: refused") in found, found


def test_without_the_reading_the_same_refusals_would_be_blamed(monkeypatch: Any) -> None:
    """The control: the fake does reach the blame the readings remove."""
    import memconform.suites.omp.fuzzing.accepted as accepted

    monkeypatch.setattr(accepted, "excused", lambda ctx, exchange: False)
    outcome = execute_run(["omp"], f"python:{__name__}:omp2_fuzzing_readings", FUZZ_PROFILE, report_dir=None,
                          check_ids=["fuzz_valid_data_accepted"])
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED]


# ---- errata O52: UTC written +00:00, refused by a validator that knows only `Z` (the public OMP server) ----

class RefusesUtcOffset(OmpApi):
    def validate_memory(self, body: dict[str, Any], *, partial: bool) -> dict[str, Any]:
        stamps = [body.get("expires_at"), (body.get("source") or {}).get("timestamp") if isinstance(body.get("source"), dict) else None]
        if any(isinstance(s, str) and s.endswith("+00:00") for s in stamps):
            raise self.invalid("value", "source.timestamp", "Invalid datetime")
        return super().validate_memory(body, partial=partial)


def refuses_utc_offset() -> Any:
    from memconform.suites.omp.reference.serve import ServerSpec, serve_target

    return serve_target(ServerSpec(api_class=RefusesUtcOffset), label="fake:omp:refuses-utc-offset")


def test_utc_offset_refused_is_a_reading_by_default_and_fails_when_accept_is_pinned() -> None:
    target = f"python:{__name__}:refuses_utc_offset"
    default = execute_run(["omp"], target, Profile.named("ci"), report_dir=None, check_ids=["domain_create_every_class"])
    assert [r.outcome for r in default.results] == [Outcome.PASSED], titles(default)
    assert ("O52", "UTC written +00:00: refused (Z only)") in seen(default)
    pinned = execute_run(["omp"], target, Profile.named("ci", options={"omp.utc_offset": "accept"}), report_dir=None,
                         check_ids=["domain_create_every_class"])
    assert any("memory.source.timestamp:utc_offset" in t and "an allowed value was refused" in t for t in titles(pinned)), titles(pinned)
    reference = execute_run(["omp"], "reference:omp", Profile.named("ci", options={"omp.utc_offset": "refuse"}),
                            report_dir=None, check_ids=["domain_create_every_class"])
    assert any("memory.source.timestamp:utc_offset" in t for t in titles(reference)), titles(reference)
    assert ("O52", "UTC written +00:00: read as UTC") in seen(execute_run(
        ["omp"], "reference:omp", Profile.named("ci"), report_dir=None, check_ids=["domain_create_every_class"]))


def test_a_null_search_filter_refused_is_the_o37_reading_and_fails_when_absent_is_pinned() -> None:
    target = f"python:{__name__}:omp2_fuzzing_readings"
    default = execute_run(["omp"], target, Profile.named("ci"), report_dir=None, check_ids=["domain_search_parameters"])
    assert [r.outcome for r in default.results] == [Outcome.PASSED], titles(default)
    assert ("O37", "null on an optional field: refused") in seen(default)
    pinned = execute_run(["omp"], target, Profile.named("ci", options={"omp.null_optional": "absent"}), report_dir=None,
                         check_ids=["domain_search_parameters"])
    assert any("search.type:null" in t and "an allowed value was refused" in t for t in titles(pinned)), titles(pinned)
