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
import json
from types import SimpleNamespace
from typing import Any

from memconform.core.check_context import NoTarget
from memconform.core.model import Outcome
from memconform.core.profile import Profile
from memconform.core.runner import Context
from memconform.core.suite import get_suite
from memconform.session import execute_run
from memconform.suites.omp.fuzzing.accepted import accepted_reading
from memconform.suites.omp.reference.api import OmpApi, Principal
from memconform.suites.omp.reference.parts import ApiError

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


# ---- the fuzzer's valid-data phase: a null refused with a 422 naming it ---------------------------

def ctx(**options: str) -> Context:
    return Context(suite=get_suite("omp"), target=NoTarget(), profile=Profile.named("ci", options={
        f"omp.{k}": v for k, v in options.items()}))


def post(path: str, body: dict[str, Any]) -> Any:
    return SimpleNamespace(method="POST", operation=SimpleNamespace(path=path, method="post"), query={}, body=body,
                           meta=None)


def refusal(field: str) -> Any:
    body = {"error": "validation_error", "message": f"{field} must be an object", "details": {"field": field}}
    return SimpleNamespace(status_code=422, content=json.dumps(body).encode())


def test_fuzzing_records_a_null_refused_with_a_422_naming_it() -> None:
    create = post("/v1/memories", {"content": "x", "type": "semantic", "source": {"tool": "t", "timestamp": "2010-11-09T13:49:11Z"},
                                   "metadata": None})
    assert accepted_reading(ctx(), create, refusal("metadata")) == ("O37", "null on an optional field: refused")
    search = post("/v1/memories/search", {"q": "x", "limit": None})
    assert accepted_reading(ctx(), search, refusal("limit")) == ("O37", "null on an optional field: refused")


def test_fuzzing_still_blames_a_refusal_of_something_else_or_under_the_pin() -> None:
    create = post("/v1/memories", {"content": "x", "type": "semantic", "source": {"tool": "t", "timestamp": "2010-11-09T13:49:11Z"},
                                   "metadata": None})
    assert accepted_reading(ctx(), create, refusal("type")) is None  # the 422 names a field that was not null
    assert accepted_reading(ctx(null_optional="absent"), create, refusal("metadata")) is None
    expiring = post("/v1/memories", {"content": "x", "expires_at": None})
    assert accepted_reading(ctx(), expiring, refusal("expires_at")) is None  # `string | null`: null is valid


def test_fuzzing_records_empty_text_refused_only_when_the_422_names_it() -> None:
    empty = post("/v1/memories", {"content": "", "type": "semantic"})
    assert accepted_reading(ctx(), empty, refusal("content")) == ("O34", "empty text refused")
    assert accepted_reading(ctx(), empty, refusal("type")) is None
