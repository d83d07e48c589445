"""OMP evidence and isolation: two runs on one instance with unrelated data preloaded give the
same verdicts and leave only that data; a server that refuses everything passes no negative check; a
faithful server taking the other plausible readings passes with no failure and no warning."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import httpx
import pytest
from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.run.session import execute_run
from memconform.suites.omp.reference.api import (
    ApiError,
    OmpApi,
    Out,
    Principal,
    Req,
)
from memconform.suites.omp.reference.serve import (
    ServedTarget,
    ServerSpec,
    serve_target,
)
from memconform.suites.omp.reference.store import Filters, Scope

pytestmark = pytest.mark.mutants  # the mutants tier: runs known-broken implementations (mutants, planted bugs, hostile fakes)

# the schemathesis phase and the rate-limit burst belong to other tests; everything else runs
SLOW = {"omp.fuzz_no_server_error", "omp.fuzz_status_codes", "omp.fuzz_response_schemas", "omp.fuzz_error_envelopes",
        "omp.fuzz_negative_data_rejected", "omp.fuzz_ignored_auth", "omp.fuzz_stateful_crud", "omp.rate_limited_per_key",
        "omp.fuzz_valid_data_accepted"}


def omp_checks() -> list[str]:
    from memconform.core.registry import REGISTRY
    from memconform.suites.omp import suite as checks  # noqa: F401  (registers the suite)

    return [ch.id.split(".", 1)[1] for ch in REGISTRY.for_suite("omp") if ch.id not in SLOW]


def run_against(target: ServedTarget, tmp_path: Path, **options: str) -> dict[str, str]:
    creds = tmp_path / "credentials.json"
    creds.write_text(json.dumps({"tool_keys": target.api.keys.tool_keys, "other_user_key": target.api.keys.other_user_key}))
    profile = Profile.named("ci", options={"omp.credentials": str(creds), "omp.ai_endpoints": "no-key",
                                           "omp.server_log": str(target.api.audit_file),  # as `serve omp` prints it
                                           **{f"omp.{k}": v for k, v in options.items()}})
    outcome = execute_run(["omp"], target.base_url, profile, report_dir=None, api_key=target.api.keys.global_key,
                          check_ids=omp_checks())
    return {r.check_id: r.outcome.value + (" (not applicable)" if r.not_applicable else "")
            + ("" if not r.failures else f": {r.failures[0].title}") + (f": {r.reason}" if r.reason else "") for r in outcome.results}


def preload(target: ServedTarget) -> None:
    """Unrelated data of another tool, user and namespace, with tags the suite also uses as words."""
    headers = {"Authorization": f"Bearer {target.api.keys.global_key}"}
    for i in range(30):
        body = {"content": f"vendor note {i} about memconform probe sort ds semantic", "type": ["semantic", "episodic"][i % 2],
                "source": {"tool": ["memconform", "cursor"][i % 2], "timestamp": "2025-01-01T00:00:00Z"},
                "tags": ["vendor", f"v{i % 3}"], "namespace": "project:vendor", "expires_at": None, "metadata": {"n": i}}
        assert httpx.post(f"{target.base_url}/v1/memories", json=body, headers=headers).status_code == 201


def test_two_runs_on_one_preloaded_instance(tmp_path: Path) -> None:
    target = serve_target(ServerSpec())
    try:
        preload(target)
        first = run_against(target, tmp_path)
        second = run_against(target, tmp_path)
        assert first == second
        assert {k: v for k, v in first.items() if not v.startswith("passed")} == {}
        # what the runs wrote is gone; the vendor's 30 memories are all there
        assert target.api.store.count() == 30
    finally:
        target.close()


class RefusesEverything(OmpApi):
    """Answers every authenticated request with 400 and the envelope: it cannot be shown to reject anything."""

    def dispatch(self, op: str, handler: Any, req: Req) -> Out:
        if op in self.public_ops:
            return super().dispatch(op, handler, req)
        return self.error_out(ApiError("bad_request", "refused", status=400))


def test_a_server_refusing_everything_passes_no_negative_check(tmp_path: Path) -> None:
    target = serve_target(ServerSpec(api_class=RefusesEverything))
    try:
        creds = tmp_path / "c.json"
        creds.write_text(json.dumps({"tool_keys": target.api.keys.tool_keys, "other_user_key": target.api.keys.other_user_key}))
        outcome = execute_run(["omp"], target.base_url, Profile.named("ci", options={"omp.credentials": str(creds)}),
                              report_dir=None, api_key=target.api.keys.global_key, check_ids=omp_checks())
    finally:
        target.close()
    passed = sorted(r.check_id for r in outcome.results if r.outcome is Outcome.PASSED)
    # health needs no key, and the key length is the harness's own knowledge: nothing else may pass
    assert passed == ["omp.api_keys_at_least_32_chars", "omp.health_declares_level", "omp.health_without_key"]


class OtherReadings(OmpApi):
    """A careful implementer's other readings of open text (errata O1, O2, O7, O8, O9, O15, O17, O19)."""

    compliance = "OMP-Full"
    tags_match = "all"

    def error_body(self, err: ApiError) -> dict[str, Any]:
        return {"error": err.code}  # O15: the §3.3 404 example has error alone

    def search_memories(self, scope: Scope, filters: Filters, q: str, mode: str) -> tuple[list[dict[str, Any]], str]:
        if mode != "keyword":
            return super().search_memories(scope, filters, q, mode)
        if filters.tags:  # O2: search tags match any one tag
            found: dict[str, dict[str, Any]] = {}
            for tag in filters.tags:
                one = Filters(filters.type, filters.tool, (tag,), "all", filters.namespace)
                for word in {w for w in q.split() if w}:  # O2: any word of q
                    found.update({d["id"]: d for d in self.store.keyword(scope, one, word)})
            return list(found.values()), "keyword"
        found = {}
        for word in {w for w in q.split() if w}:
            found.update({d["id"]: d for d in self.store.keyword(scope, filters, word)})
        return list(found.values()), "keyword"

    def body_limit(self, value: Any) -> int:
        return 10 if value is None else super().body_limit(value)  # O2: the request example's 10

    def op_search(self, who: Principal, req: Req) -> Out:
        status, body, headers = super().op_search(who, req)
        return status, {**body, "total": len(body["memories"])}, headers  # O2: total = what was returned

    def int_param(self, params: Any, name: str, default: int, low: int, high: int | None) -> int:
        raw = params.get(name)  # O9: out-of-range paging clamped, junk ignored
        if raw is None or not raw.lstrip("-").isdigit():
            return default
        value = max(low, int(raw))
        return min(value, high) if high is not None else value

    def conflict_strategy(self, req: Req, body: dict[str, Any]) -> str:
        return super().conflict_strategy(Req({}, req.path, req.raw, req.headers), body)  # O1: the body field only

    def validate_memory(self, body: dict[str, Any], *, partial: bool) -> dict[str, Any]:
        if partial and "namespace" in body and body["namespace"] is None:
            raise self.invalid("type", "namespace", "namespace must be a string")  # O8: null is not a string
        out = super().validate_memory(body, partial=partial)
        for name, limit in (("content", 10_000), ("namespace", 100)):  # O19: UTF-16 code units, as JavaScript counts
            if isinstance(out.get(name), str) and len(out[name].encode("utf-16-le")) // 2 > limit:
                raise self.invalid("limit", name, f"{name} over {limit} UTF-16 code units")
        return out

    def op_import(self, who: Principal, req: Req) -> Out:
        body = self.json_object(req)  # O7: one invalid memory refuses the whole file, nothing imported
        for item in body.get("memories") or []:
            self.validate_memory(item if isinstance(item, dict) else {}, partial=False)
        return super().op_import(who, req)

    def visible(self, who: Principal, memory_id: str) -> dict[str, Any]:
        try:
            return super().visible(who, memory_id)
        except ApiError as err:  # O17: another tool's memory is simply not there for this key
            if err.code == "forbidden":
                raise ApiError("memory_not_found", "no such memory") from None
            raise

    def op_extract(self, who: Principal, req: Req) -> Out:
        raise ApiError("not_found", "no such route (a v0.1 server)", status=404)

    op_compress = op_extract


def test_other_plausible_readings_pass(tmp_path: Path) -> None:
    target = serve_target(ServerSpec(api_class=OtherReadings))
    try:
        verdicts = run_against(target, tmp_path, conflict_in="both")
    finally:
        target.close()
    bad = {k: v for k, v in verdicts.items() if not (v.startswith("passed") or v.startswith("skipped (not applicable)"))}
    assert bad == {}
