"""memconform's OpenAPI description of OMP, and the schemathesis fuzz checks built on it.

The description validates as OpenAPI 3.1 and names every §3.3 route. Each fuzz check passes on a
small conforming OMP app and on the reference, and fails on a throwaway app that breaks its rule
(served on loopback; the mutants in suites/omp/mutants do the same against the reference).
"""

from __future__ import annotations

import json
import secrets
import string
from typing import Any

import pytest
import yaml
from made_once import made_once, shared_folder
from memconform.core.profile import Profile
from memconform.core.redact import Redactor
from memconform.core.registry import REGISTRY
from memconform.core.results import TargetError
from memconform.core.runner import Context, run_one
from memconform.core.suite import get_suite
from memconform.kit.fixtures_loader import fixture_root
from memconform.kit.loopback import serve_in_thread
from memconform.suites.omp import format as omp
from memconform.suites.omp.checks import fuzz as fuzz_checks
from memconform.suites.omp.fuzzing import openapi_description
from memconform.targets.http import HttpTarget
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

DESCRIPTION = yaml.safe_load((fixture_root() / "omp" / "openapi.yaml").read_text("utf-8"))
# the §3.3 routes as the spec writes them, :id as {id}
SPEC_ROUTES = {
    ("post", "/v1/memories"), ("get", "/v1/memories"), ("get", "/v1/memories/{id}"), ("put", "/v1/memories/{id}"),
    ("delete", "/v1/memories/{id}"), ("post", "/v1/memories/search"), ("get", "/v1/export"), ("post", "/v1/import"),
    ("post", "/v1/extract"), ("post", "/v1/compress"), ("get", "/v1/health"),
}
FUZZ_CHECKS = ["omp.fuzz_no_server_error", "omp.fuzz_status_codes", "omp.fuzz_response_schemas",
               "omp.fuzz_error_envelopes", "omp.fuzz_negative_data_rejected", "omp.fuzz_ignored_auth",
               "omp.fuzz_stateful_crud", "omp.fuzz_valid_data_accepted"]


# ---- the description ----------------------------------------------------------------------------

def test_description_is_valid_openapi_3_1() -> None:
    from openapi_spec_validator import validate
    from openapi_spec_validator.validation import OpenAPIV31SpecValidator

    validate(DESCRIPTION, cls=OpenAPIV31SpecValidator)
    assert DESCRIPTION["openapi"].startswith("3.1")


def test_description_names_every_spec_route() -> None:
    described = {(m, p) for p, item in DESCRIPTION["paths"].items() for m in item if m in ("get", "post", "put", "delete")}
    assert described == SPEC_ROUTES


def test_every_route_but_health_needs_the_bearer_key() -> None:
    assert DESCRIPTION["security"] == [{"bearerAuth": []}]
    assert DESCRIPTION["components"]["securitySchemes"]["bearerAuth"] == {
        **DESCRIPTION["components"]["securitySchemes"]["bearerAuth"], "type": "http", "scheme": "bearer"}
    open_routes = {(m, p) for p, item in DESCRIPTION["paths"].items() for m, op in item.items()
                   if isinstance(op, dict) and op.get("security") == []}
    assert open_routes == {("get", "/v1/health")}


def test_limits_match_the_format_module() -> None:
    schemas = DESCRIPTION["components"]["schemas"]
    params = DESCRIPTION["components"]["parameters"]
    assert schemas["Content"]["maxLength"] == omp.MAX_CONTENT
    assert schemas["Tags"]["maxItems"] == omp.MAX_TAGS and schemas["Tags"]["items"]["maxLength"] == omp.MAX_TAG_LEN
    assert schemas["Namespace"]["maxLength"] == omp.MAX_NAMESPACE
    assert schemas["Metadata"]["maxProperties"] == omp.MAX_METADATA_KEYS
    assert tuple(schemas["MemoryType"]["enum"]) == omp.TYPES
    assert schemas["MemoryId"]["pattern"] == omp.ID_RE.pattern
    assert schemas["UtcTimestamp"]["pattern"] == omp.UTC_RE.pattern
    assert (params["limit"]["schema"]["minimum"], params["limit"]["schema"]["maximum"]) == (1, omp.MAX_LIMIT)
    assert params["limit"]["schema"]["default"] == omp.DEFAULT_LIMIT and params["offset"]["schema"]["minimum"] == 0
    listing = DESCRIPTION["paths"]["/v1/memories"]["get"]["parameters"]
    assert tuple(next(p for p in listing if p.get("name") == "sort")["schema"]["enum"]) == omp.SORTS
    conflict = DESCRIPTION["paths"]["/v1/import"]["post"]["parameters"][0]
    assert (conflict["in"], tuple(conflict["schema"]["enum"])) == ("query", omp.CONFLICTS)
    assert tuple(schemas["SearchResult"]["properties"]["mode_used"]["enum"]) == omp.SEARCH_MODES


def test_error_codes_go_with_their_status() -> None:
    responses = DESCRIPTION["components"]["responses"]
    schemas = DESCRIPTION["components"]["schemas"]
    for path, item in DESCRIPTION["paths"].items():
        for method, op in item.items():
            if not isinstance(op, dict) or "responses" not in op:
                continue
            for status, ref in op["responses"].items():
                if int(status) < 400 or status == "400":
                    continue
                schema_ref = responses[ref["$ref"].rsplit("/", 1)[1]]["content"]["application/json"]["schema"]["$ref"]
                code = schemas[schema_ref.rsplit("/", 1)[1]]["allOf"][1]["properties"]["error"]
                codes = code.get("enum") or [code["const"]]
                assert {omp.ERRORS[c] for c in codes} == {int(status)}, f"{method} {path} {status}: {codes}"


def test_links_chain_create_get_update_delete() -> None:
    links = DESCRIPTION["paths"]["/v1/memories"]["post"]["responses"]["201"]["links"]
    assert {(v["operationId"], v["parameters"]["id"]) for v in links.values()} == {
        ("getMemory", "$response.body#/id"), ("updateMemory", "$response.body#/id"), ("deleteMemory", "$response.body#/id")}
    after_delete = DESCRIPTION["paths"]["/v1/memories/{id}"]["delete"]["responses"]["204"]["links"]
    assert [v["operationId"] for v in after_delete.values()] == ["getMemory"]


def test_ai_bodies_never_describe_an_api_key() -> None:
    props = DESCRIPTION["components"]["schemas"]["TranscriptRequest"]["properties"]
    assert "api_key" not in props and "provider" not in props


# ---- a small OMP app, conforming unless told which rule to break --------------------------------

def _validator(name: str) -> Any:
    import jsonschema
    from referencing import Registry
    from referencing.jsonschema import DRAFT202012

    registry = Registry().with_resource("urn:omp", DRAFT202012.create_resource(DESCRIPTION))
    return jsonschema.Draft202012Validator({"$ref": f"urn:omp#/components/schemas/{name}"}, registry=registry)


VALIDATORS = {name: _validator(name) for name in ("MemoryCreate", "MemoryUpdate", "SearchRequest", "ImportRequest",
                                                  "TranscriptRequest")}
ALNUM = string.ascii_letters + string.digits


class Invalid(Exception):
    pass


def toy_app(key: str, breaks: str = "") -> Starlette:
    """OMP over an in-memory dict. `breaks` names the one rule it gets wrong."""
    store: dict[str, dict[str, Any]] = {}
    clock = [0]

    def stamp() -> str:
        clock[0] += 1
        return f"2026-06-29T12:{clock[0] // 60 % 60:02d}:{clock[0] % 60:02d}.000Z"

    def error(status: int, code: str, message: str) -> Response:
        if breaks == "bad_envelope":  # a framework's default errors: JSON of its own, and HTML for 404
            if status == 404:
                return Response(f"<html><body><h1>Not Found</h1>{message}</body></html>", 404, media_type="text/html")
            return JSONResponse({"detail": message}, status)
        return JSONResponse({"error": code, "message": message, "details": {}}, status)

    def invalid(message: str) -> Response:
        if breaks == "crash":
            return error(500, "internal_error", "boom")
        return error(422, "validation_error", message)

    async def body_of(request: Request, schema: str) -> Any:
        try:
            body = json.loads(await request.body())
        except ValueError:
            raise Invalid("body is not JSON") from None
        if breaks != "lenient":
            errors = list(VALIDATORS[schema].iter_errors(body))
            if errors:
                raise Invalid(errors[0].message[:200])
        elif not isinstance(body, dict):
            raise Invalid("body is not an object")
        return body

    def memory_of(body: dict[str, Any], mem_id: str, created: str) -> dict[str, Any]:
        now = stamp()
        return {"id": mem_id, "content": body.get("content"), "type": body.get("type"), "source": body.get("source"),
                "tags": body.get("tags", []), "namespace": body.get("namespace"), "created_at": created,
                "updated_at": now, "expires_at": body.get("expires_at"), "metadata": body.get("metadata", {})}

    served = [0]

    def guarded(handler: Any) -> Any:
        async def endpoint(request: Request) -> Response:
            if breaks != "no_auth" and request.headers.get("authorization") != f"Bearer {key}":
                return error(401, "unauthorized", "missing or invalid API key")
            served[0] += 1
            if breaks == "rate_limit_20" and served[0] > 20:
                return JSONResponse({"error": "rate_limited", "message": "slow down", "details": {}}, 429,
                                    headers={"Retry-After": "10"})
            try:
                return await handler(request)
            except Invalid as exc:
                return invalid(str(exc))
            except Exception as exc:  # a bug the lenient variant walks into: a 500, not a dropped connection
                return error(500, "internal_error", type(exc).__name__)
        return endpoint

    async def create(request: Request) -> Response:
        body = await body_of(request, "MemoryCreate")
        if breaks == "strict" and body.get("tags"):  # a rule of its own: valid tags refused
            raise Invalid("tags are not accepted here")
        mem_id = "mem_" + "".join(secrets.choice(ALNUM) for _ in range(16))
        store[mem_id] = memory_of(body, mem_id, stamp())
        return JSONResponse(store[mem_id], 200 if breaks == "status_200" else 201)

    def int_param(request: Request, name: str, default: int, low: int, high: int) -> int:
        raw = request.query_params.get(name)
        if raw is None:
            return default
        if not raw.isdigit() or not low <= int(raw) <= high:
            raise Invalid(f"{name} must be an integer in {low}..{high}")
        return int(raw)

    async def listing(request: Request) -> Response:
        q = request.query_params
        limit = int_param(request, "limit", 20, 1, 100)
        offset = int_param(request, "offset", 0, 0, 10**9)
        if q.get("sort", "created_at_desc") not in omp.SORTS or ("type" in q and q["type"] not in omp.TYPES):
            raise Invalid("unknown sort or type")
        found = [m for m in store.values() if q.get("type", m["type"]) == m["type"]]
        page = {"memories": found[offset:offset + limit], "total": len(found), "limit": limit, "offset": offset}
        if breaks == "no_total":
            del page["total"]
        return JSONResponse(page)

    async def one(request: Request) -> Response:
        mem_id = request.path_params["id"]
        if mem_id not in store:
            return error(404, "memory_not_found", "no such memory")
        if request.method == "GET":
            return JSONResponse(store[mem_id])
        if request.method == "DELETE":
            if breaks != "zombie":
                del store[mem_id]
            return Response(status_code=204)
        patch = await body_of(request, "MemoryUpdate")
        old = store[mem_id]
        store[mem_id] = {**old, **{k: v for k, v in patch.items() if k not in ("id", "created_at")}, "updated_at": stamp()}
        return JSONResponse(store[mem_id])

    async def search(request: Request) -> Response:
        body = await body_of(request, "SearchRequest")
        words = str(body.get("q", "")).lower().split()
        found = [m for m in store.values() if all(w in str(m["content"]).lower() for w in words)]
        return JSONResponse({"memories": found[: int(body.get("limit") or 20)], "total": len(found), "mode_used": "keyword"})

    async def export(request: Request) -> Response:
        return JSONResponse({"omp_version": "0.1", "exported_at": stamp(), "server": "toy", "memories": list(store.values())})

    async def import_(request: Request) -> Response:
        if request.query_params.get("conflict", "skip") not in omp.CONFLICTS:
            raise Invalid("unknown conflict strategy")
        body = await body_of(request, "ImportRequest")
        items = body.get("memories") if isinstance(body.get("memories"), list) else []
        errors = [{"index": i, "error": "validation_error", "message": "not imported"} for i in range(len(items))]
        return JSONResponse({"imported": 0, "skipped": 0, "errors": errors})

    async def ai(request: Request) -> Response:
        await body_of(request, "TranscriptRequest")
        return error(422, "no_api_key", "no AI API key configured")

    async def health(request: Request) -> Response:
        return JSONResponse({"status": "ok", "version": "0.1", "memories_count": len(store), "compliance": "OMP-Core"})

    return Starlette(routes=[
        Route("/v1/health", health, methods=["GET"]),
        Route("/v1/memories/search", guarded(search), methods=["POST"]),
        Route("/v1/memories", guarded(create), methods=["POST"]),
        Route("/v1/memories", guarded(listing), methods=["GET"]),
        Route("/v1/memories/{id}", guarded(one), methods=["GET", "PUT", "DELETE"]),
        Route("/v1/export", guarded(export), methods=["GET"]),
        Route("/v1/import", guarded(import_), methods=["POST"]),
        Route("/v1/extract", guarded(ai), methods=["POST"]),
        Route("/v1/compress", guarded(ai), methods=["POST"]),
    ])


class ToyTarget(HttpTarget):
    """A toy app on loopback, stating (like the reference) that it has no AI key."""

    def __init__(self, breaks: str = "") -> None:
        key = secrets.token_urlsafe(32)
        url, self._stop = serve_in_thread(toy_app(key, breaks))
        super().__init__(url, {}, Profile.named("ci").limits, key)
        self.state_facts("omp", omp.TargetFacts(ai_key_configured=False))

    def close(self) -> None:
        super().close()
        self._stop()


def fuzz_outcomes(target: HttpTarget, checks: list[str] = FUZZ_CHECKS) -> dict[str, str]:
    """Run fuzz checks alone (ci profile), as `memconform run --check` would."""
    key = target.api_key
    assert key
    ctx = Context(suite=get_suite("omp"), target=target, profile=Profile.named("ci"), redactor=Redactor([key]))
    results = {cid: run_one(REGISTRY.get(cid), ctx) for cid in checks}
    for result in results.values():
        assert key not in json.dumps(result.to_json())
        for failure in result.failures:  # every failure says how to replay it
            assert "Reproduce with: curl " in failure.detail and "schemathesis seed 20260528" in failure.detail
    return {cid: r.outcome.value + (f": {r.reason}" if r.reason else "") for cid, r in results.items()}


# broken rule -> the fuzz checks it must fail
KILLS = {
    "crash": {"omp.fuzz_no_server_error"},
    "status_200": {"omp.fuzz_status_codes"},
    "no_total": {"omp.fuzz_response_schemas"},
    "bad_envelope": {"omp.fuzz_error_envelopes"},
    "lenient": {"omp.fuzz_negative_data_rejected"},
    "strict": {"omp.fuzz_valid_data_accepted"},
    "no_auth": {"omp.fuzz_ignored_auth"},
    "zombie": {"omp.fuzz_stateful_crud"},
}


def _toy_outcomes() -> dict[str, dict[str, str]]:
    outcomes: dict[str, dict[str, str]] = {}
    for breaks in ("", *sorted(KILLS)):
        toy = ToyTarget(breaks)
        with toy:
            outcomes[breaks] = fuzz_outcomes(toy, sorted(KILLS[breaks]) if breaks else FUZZ_CHECKS)
    return outcomes


@pytest.fixture(scope="module")
def toy_outcomes(tmp_path_factory: pytest.TempPathFactory) -> dict[str, dict[str, str]]:
    """The conforming app runs every fuzz check; a broken one runs the checks that must catch it (once per
    session: this module's tests may be spread over xdist's workers)."""
    outcomes: dict[str, dict[str, str]] = made_once(shared_folder(tmp_path_factory), "omp-openapi-toy-outcomes",
                                                    _toy_outcomes)
    return outcomes


def test_fuzz_checks_are_registered_with_the_suite() -> None:
    ids = {c.id for c in REGISTRY.for_suite("omp")}
    assert set(FUZZ_CHECKS) <= ids
    assert {c.level for c in REGISTRY.for_suite("omp") if c.id in FUZZ_CHECKS} == {"core"}
    assert fuzz_checks.__doc__ and all(cid in fuzz_checks.__doc__ for cid in FUZZ_CHECKS)


def test_conforming_app_passes_every_fuzz_check(toy_outcomes: dict[str, dict[str, str]]) -> None:
    assert {c: o for c, o in toy_outcomes[""].items() if o != "passed"} == {}




@pytest.mark.parametrize("breaks", sorted(KILLS))
def test_broken_app_fails_its_fuzz_check(breaks: str, toy_outcomes: dict[str, dict[str, str]]) -> None:
    outcomes = toy_outcomes[breaks]
    assert {c: outcomes[c] for c in KILLS[breaks] if not outcomes[c].startswith("failed")} == {}


def test_every_fuzz_check_is_killed() -> None:
    assert set(FUZZ_CHECKS) - set().union(*KILLS.values()) == set()


def test_reference_passes_every_fuzz_check() -> None:
    from memconform.targets import open_target

    with open_target("reference:omp") as target:
        assert isinstance(target, HttpTarget)
        outcomes = fuzz_outcomes(target)
    assert {c: o for c, o in outcomes.items() if o != "passed"} == {}


# ---- the description as a run adapts it ---------------------------------------------------------

def adapted(facts: omp.TargetFacts | None = None, **options: str) -> dict[str, Any]:
    target = HttpTarget("http://127.0.0.1:9", {}, Profile.named("ci").limits, "k" * 32)
    if facts is not None:
        target.state_facts("omp", facts)
    ctx = Context(suite=get_suite("omp"), target=target, profile=Profile.named("ci", options=options))
    try:
        return openapi_description.description(ctx)
    finally:
        target.close()


def test_ai_routes_fuzzed_only_without_an_ai_key() -> None:
    no_key = omp.TargetFacts(ai_key_configured=False)
    assert "/v1/extract" in adapted(no_key)["paths"] and "/v1/compress" in adapted(no_key)["paths"]
    for paths in (adapted()["paths"], adapted(omp.TargetFacts(ai_key_configured=True))["paths"],
                  adapted(no_key, ai_endpoints="skip")["paths"]):
        assert not {"/v1/extract", "/v1/compress"} & set(paths)
    assert "/v1/extract" in adapted(ai_endpoints="no-key")["paths"]


def test_options_change_the_description() -> None:
    # limit=101 is invalid data only where the reading is pinned to reject (the default accepts clamping too)
    assert adapted(limit_over_max="reject")["components"]["parameters"]["limit"]["schema"]["maximum"] == 100
    assert "maximum" not in adapted()["components"]["parameters"]["limit"]["schema"]
    assert "maximum" not in adapted(limit_over_max="clamp")["components"]["parameters"]["limit"]["schema"]
    body = adapted(conflict_in="body")
    assert "parameters" not in body["paths"]["/v1/import"]["post"]
    assert body["components"]["schemas"]["ImportRequest"]["properties"]["conflict"]["enum"] == list(omp.CONFLICTS)
    assert "400" in adapted()["paths"]["/v1/memories"]["post"]["responses"]
    assert "400" not in adapted(malformed_json_status="422")["paths"]["/v1/memories"]["post"]["responses"]


def test_a_rate_limit_ends_the_phase_without_a_failure() -> None:
    with ToyTarget("rate_limit_20") as target:
        ctx = Context(suite=get_suite("omp"), target=target, profile=Profile.named("ci"))
        results = [run_one(REGISTRY.get(cid), ctx) for cid in ("omp.fuzz_status_codes", "omp.fuzz_error_envelopes")]
    assert [r.outcome.value for r in results] == ["passed", "passed"]
    assert any("answered 429: the target rate-limits this key" in line for line in results[0].transcript)


def test_every_phase_is_bounded_by_time() -> None:
    with ToyTarget() as target:
        ctx = Context(suite=get_suite("omp"), target=target, profile=Profile.named("ci"))
        fuzz = fuzz_checks.fuzzer(ctx)
        fuzz.phase_budget_s = 0.0
        for run in (lambda: fuzz.run_phase(False), lambda: fuzz.run_phase(True), fuzz.run_stateful):
            with pytest.raises(TargetError, match="sent no request within its budget .*time budget"):
                run()


def test_non_http_targets_are_not_applicable() -> None:
    from memconform.targets import open_target

    with open_target("reference:emp") as target:
        ctx = Context(suite=get_suite("omp"), target=target, profile=Profile.named("ci"))
        result = run_one(REGISTRY.get("omp.fuzz_status_codes"), ctx)
    assert (result.outcome.value, result.not_applicable) == ("skipped", True)
