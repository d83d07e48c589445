"""No blame for an accepted reading: fuzzing and hostile-input checks blame only what a sentence forbids.
Each case is a small fake with the behaviour a public implementation showed, and its control (the
same fake with a behaviour no reading allows) is still caught."""

from __future__ import annotations

import json
from types import SimpleNamespace
from typing import Any

import pytest
from memconform.core.check_context import NoTarget
from memconform.core.profile import Profile
from memconform.core.results import Outcome
from memconform.core.runner import Context
from memconform.core.suite import get_suite
from memconform.kit.hostile import BadInput
from memconform.kit.hostile_check import Surface, run_battery
from memconform.run.session import execute_run
from memconform.suites.emp.reference import ReferenceEmpApp
from memconform.suites.omp.fuzzing.accepted import accepted_reading
from memconform.suites.omp.rules import served_sanely
from memconform.targets.base import Reply


def omp_ctx(**options: str) -> Context:
    return Context(suite=get_suite("omp"), target=NoTarget(), profile=Profile.named("ci", options={
        f"omp.{k}": v for k, v in options.items()}))


# ---- fuzzing: what the errata accept is recorded, not blamed -------------------------------------

def case(method: str, path: str, described: str, query: dict[str, Any] | None = None, negative: tuple[str, ...] = ()) -> Any:
    from schemathesis.generation.meta import ParameterLocation

    locations = {ParameterLocation(n): SimpleNamespace(mode=SimpleNamespace(is_negative=True)) for n in negative}
    meta = SimpleNamespace(components=locations, is_negative_at=lambda loc: loc in locations)
    return SimpleNamespace(method=method, operation=SimpleNamespace(path=path, method=described), query=query or {}, meta=meta)


def response(status: int, body: Any = None) -> Any:
    return SimpleNamespace(status_code=status, content=json.dumps(body).encode() if body is not None else b"")


PAGE = {"memories": [], "total": 0, "limit": 20, "offset": 0}


def test_an_unsupported_method_answered_501_or_405_is_not_blamed() -> None:
    options = case("OPTIONS", "/v1/memories", "get")
    assert accepted_reading(omp_ctx(), options, response(501)) == ("O32", "an unsupported method answered 501")
    assert accepted_reading(omp_ctx(), options, response(405)) == ("O32", "an unsupported method answered 405")
    assert accepted_reading(omp_ctx(), options, response(500)) is None  # the control: a crash stays blamed
    assert accepted_reading(omp_ctx(), options, response(200, PAGE)) is None


def test_a_bad_query_parameter_served_as_a_sane_page_is_not_blamed() -> None:
    bad = case("GET", "/v1/memories", "get", {"limit": "abc"}, negative=("query",))
    assert accepted_reading(omp_ctx(), bad, response(200, PAGE)) == ("O9", "a bad query parameter served as a sane page")
    assert accepted_reading(omp_ctx(bad_params="reject"), bad, response(200, PAGE)) is None  # pinned: blamed
    junk = {"memories": [{"no": "memory"}]}
    assert accepted_reading(omp_ctx(), bad, response(200, junk)) is None  # not a page of memories


def test_a_page_past_the_maximum_is_blamed_and_the_failure_says_why_no_reading_applies() -> None:
    from memconform.suites.omp.fuzzing.accepted import why_no_reading

    # the public OMP server hands limit=-32268 to SQLite, where a negative LIMIT means none
    bad = case("GET", "/v1/memories", "get", {"limit": "-32268", "offset": "3.5e-275"}, negative=("query",))
    memory = {"id": "mem_0123456789abcdef", "content": "x", "type": "semantic"}
    flood = {"memories": [memory] * 101, "total": 101, "limit": -32268, "offset": 3}
    assert accepted_reading(omp_ctx(), bad, response(200, flood)) is None
    assert "101 memories served, more than the maximum 100" in why_no_reading(bad, response(200, flood))
    assert why_no_reading(bad, response(200, {"memories": [memory]})) == ""  # a sane page: O9 applies
    assert why_no_reading(case("POST", "/v1/memories", "post", negative=("body",)), response(201, {})) == ""


def test_an_empty_query_parameter_served_as_a_sane_page_is_not_blamed() -> None:
    empty = case("GET", "/v1/memories", "get", {"type": ""}, negative=("query",))
    assert accepted_reading(omp_ctx(bad_params="reject"), empty, response(200, PAGE)) == (
        "O30", "an empty query parameter served as a sane page")


def test_an_empty_conflict_read_as_absent_is_not_blamed() -> None:
    empty = case("POST", "/v1/import", "post", {"conflict": ""}, negative=("query",))
    assert accepted_reading(omp_ctx(), empty, response(200, {"imported": 1, "skipped": 0, "errors": []})) == (
        "O30", "an empty conflict= read as absent")
    unknown = case("POST", "/v1/import", "post", {"conflict": "merge"}, negative=("query",))
    assert accepted_reading(omp_ctx(), unknown, response(200, {"imported": 1})) is None  # O7: refused


def test_negative_body_data_accepted_is_still_blamed() -> None:
    body = case("POST", "/v1/memories", "post", negative=("body",))
    assert accepted_reading(omp_ctx(), body, response(201, {"id": "mem_0123456789abcdef"})) is None


def test_the_description_sets_no_minimum_on_content_or_source_tool() -> None:
    from memconform.suites.omp.fuzzing.openapi_description import shipped_description

    schemas = shipped_description()["components"]["schemas"]
    assert "minLength" not in schemas["Content"]
    assert all("minLength" not in schemas[name]["properties"]["tool"] for name in ("SourceRequest", "Source"))


# ---- valid data refused where a reading allows it: an empty text (O34), a null optional field (O37) --

def post(path: str, body: dict[str, Any]) -> Any:
    return SimpleNamespace(method="POST", operation=SimpleNamespace(path=path, method="post"), query={}, body=body,
                           meta=None)


def refusal(field: str) -> Any:
    return response(422, {"error": "validation_error", "message": f"{field} is not accepted", "details": {"field": field}})


SOURCE = {"tool": "t", "timestamp": "2010-11-09T13:49:11Z"}


def test_a_null_optional_field_refused_with_a_422_naming_it_is_not_blamed() -> None:
    create = post("/v1/memories", {"content": "x", "type": "semantic", "source": SOURCE, "metadata": None})
    assert accepted_reading(omp_ctx(), create, refusal("metadata")) == ("O37", "null on an optional field: refused")
    search = post("/v1/memories/search", {"q": "x", "limit": None})
    assert accepted_reading(omp_ctx(), search, refusal("limit")) == ("O37", "null on an optional field: refused")


def test_a_refusal_of_something_else_or_under_the_pin_is_still_blamed() -> None:
    create = post("/v1/memories", {"content": "x", "type": "semantic", "source": SOURCE, "metadata": None})
    assert accepted_reading(omp_ctx(), create, refusal("type")) is None  # the 422 names a field that was not null
    assert accepted_reading(omp_ctx(null_optional="absent"), create, refusal("metadata")) is None
    expiring = post("/v1/memories", {"content": "x", "type": "semantic", "source": SOURCE, "expires_at": None})
    assert accepted_reading(omp_ctx(), expiring, refusal("expires_at")) is None  # `string | null`: null is valid


def test_an_empty_text_refused_is_not_blamed_only_when_the_422_names_it() -> None:
    empty = post("/v1/memories", {"content": "", "type": "semantic", "source": SOURCE})
    assert accepted_reading(omp_ctx(), empty, refusal("content")) == ("O34", "empty text refused")
    assert accepted_reading(omp_ctx(), empty, refusal("type")) is None


def zod_refusal(**field_errors: str) -> Any:
    """A 422 in the shape a zod-validating server sends (the public OMP server does)."""
    return response(422, {"error": "validation_error", "message": "Request body failed schema validation",
                          "details": {"formErrors": [], "fieldErrors": {f: [m] for f, m in field_errors.items()}}})


def test_a_422_listing_only_empty_texts_and_nulls_is_not_blamed_and_records_both_readings() -> None:
    empty = post("/v1/memories", {"content": "", "type": "episodic", "source": {"tool": "", "timestamp": "2000-01-01T00:00:00Z"}})
    assert accepted_reading(omp_ctx(), empty, zod_refusal(content="too short", source="too short")) == ("O34", "empty text refused")
    search = post("/v1/memories/search", {"q": "x", "namespace": None, "limit": None})
    assert accepted_reading(omp_ctx(), search, zod_refusal(namespace="null", limit="null")) == ("O37", "null on an optional field: refused")
    both = post("/v1/memories", {"content": "", "type": "episodic", "source": SOURCE, "metadata": None})
    ctx = omp_ctx()
    recorded: list[tuple[str, str]] = []
    ctx.observe = lambda point, predictions, *a, **k: recorded.extend((point, r) for r in predictions)  # type: ignore[method-assign]
    from memconform.suites.omp.fuzzing.accepted import excused
    assert excused(ctx, SimpleNamespace(case=both, response=zod_refusal(content="too short", metadata="null")))
    assert recorded == [("O34", "empty text refused"), ("O37", "null on an optional field: refused")]


def test_a_422_that_also_names_a_valid_field_is_still_blamed() -> None:
    # the public OMP server refused a tag holding a control character next to the nulls it may refuse
    update = post("/v1/memories/mem_RAKLbqpEhR0cSzD8", {"content": "j", "type": "episodic", "source": SOURCE,
                                                      "metadata": None, "tags": ["\u009e(4l"]})
    assert accepted_reading(omp_ctx(), update, zod_refusal(metadata="null", tags="Invalid")) is None
    issues = response(422, {"error": "validation_error", "message": "bad", "details": [{"loc": ["body", "type"], "msg": "x"}]})
    assert accepted_reading(omp_ctx(), update, issues) is None
    nulls = response(422, {"error": "validation_error", "message": "bad", "details": [{"loc": ["body", "metadata"], "msg": "x"}]})
    assert accepted_reading(omp_ctx(), update, nulls) == ("O37", "null on an optional field: refused")


# ---- search tags given as a string -------------------------------------------------------------

def test_search_tags_as_a_string_served_as_an_empty_page_fits_o9() -> None:
    fixture = {"document": {"method": "POST", "path": "/memories/search", "body": {"q": "memconform", "tags": "x"}}}
    page = Reply(status=200, body={"memories": [], "total": 0, "mode_used": "keyword"})
    assert served_sanely(page, fixture)
    holding = {"id": "mem_0123456789abcdef", "content": "c", "type": "semantic", "tags": ["x"]}
    assert served_sanely(Reply(status=200, body={"memories": [holding], "mode_used": "keyword"}), fixture)
    other = dict(holding, tags=["y"])  # the control: a memory without the tag means the filter was dropped
    assert not served_sanely(Reply(status=200, body={"memories": [other], "mode_used": "keyword"}), fixture)


# ---- hostile JSON that RFC 8259 allows: a note, unless I-JSON is pinned --------------------------

class LastDuplicateWins:
    """A store that reads with json.loads: the last duplicate name wins, an escaped lone surrogate is kept."""

    def __init__(self) -> None:
        self.stored: list[bytes] = []

    def send(self, item: BadInput) -> Reply:
        try:
            doc = json.loads(item.data)
        except (ValueError, RecursionError):
            return Reply(status="rejected", body=None)
        if not isinstance(doc, dict):
            return Reply(status="rejected", body=None)
        self.stored.append(item.data)
        return Reply(status="ok", body={})

    def export(self) -> bytes:
        return b"\n".join(self.stored)


def battery_failures(i_json: bool) -> tuple[list[Any], list[str]]:
    store = LastDuplicateWins()
    ctx = Context(suite=get_suite("amps"), target=NoTarget(), profile=Profile.named("ci"))
    surface = Surface("import", lambda marker: {"content": f"{marker} probe", "n": 1}, store.send, store.export)
    return list(run_battery(ctx, surface, i_json=i_json)), ctx.transcript


def test_duplicate_names_and_lone_surrogates_stored_are_a_note_by_default() -> None:
    failures, notes = battery_failures(i_json=False)
    titles = [f.title for f in failures]
    assert not any("duplicate-key" in t or "lone-surrogate" in t for t in titles), titles
    assert any("duplicate-key" in n and "RFC 8259 allows it" in n for n in notes)


def test_duplicate_names_stored_fail_when_i_json_is_pinned() -> None:
    failures, _ = battery_failures(i_json=True)
    titles = [f.title for f in failures]
    assert any(t.startswith("import: stored anyway on") and "duplicate-key" in t for t in titles), titles
    assert any("lone-surrogate" in t for t in titles), titles


# ---- what a stored hostile input does afterwards is judged (a MUST) ------------------------------

def test_a_stored_lone_surrogate_that_breaks_the_export_fails_a_must() -> None:
    outcome = execute_run(["omp"], "python:memconform.suites.omp.mutants:stores_lone_surrogates", Profile.named("ci"),
                          report_dir=None, check_ids=["hostile_json_create_refused", "hostile_json_leaves_export_working"])
    after = next(r for r in outcome.results if r.check_id == "omp.hostile_json_leaves_export_working")
    assert after.outcome is Outcome.FAILED and after.deciding, after.reason
    assert "GET /v1/export" in after.failures[0].title


def test_the_aftermath_check_needs_a_battery_before_it() -> None:
    outcome = execute_run(["omp"], "reference:omp", Profile.named("ci"), report_dir=None,
                          check_ids=["hostile_json_leaves_export_working"])
    (result,) = outcome.results
    assert result.outcome is Outcome.SKIPPED and result.inconclusive


def test_the_hostile_checks_run_last_and_at_omp_core() -> None:
    from memconform.core.registry import REGISTRY

    checks = REGISTRY.for_suite("omp")
    hostile = [c for c in checks if c.id.startswith("omp.hostile_json")]
    assert [c.id for c in checks[-len(hostile):]] == [c.id for c in hostile]
    assert {c.level for c in hostile} == {"core"}


# ---- EMP: a reader returning both lines is not "the older line won" ------------------------------

class ReturnsBothLines(ReferenceEmpApp):
    """Resolves nothing: every line of an id is in the view."""

    def view(self, path: str) -> list[dict[str, Any]]:
        from memconform.suites.emp import format as emp

        return [e for _, _, e in emp.iter_text(open(path, "rb").read()) if isinstance(e, dict)]


class OlderLineWins(ReferenceEmpApp):
    """The last line of an id wins, whatever its ts."""

    def view(self, path: str) -> list[dict[str, Any]]:
        from memconform.suites.emp import format as emp

        last: dict[str, dict[str, Any]] = {}
        for _, _, e in emp.iter_text(open(path, "rb").read()):
            if isinstance(e, dict):
                last[str(e.get("id"))] = e
        return list(last.values())


@pytest.mark.parametrize(("impl", "title"), [("ReturnsBothLines", "one id with two lines resolved to 2 entries"),
                                             ("OlderLineWins", "an older line written later won over the newer ts")])
def test_reader_newest_ts_wins_names_what_the_reader_did(impl: str, title: str) -> None:
    outcome = execute_run(["emp"], f"python:{__name__}:{impl}", Profile.named("ci"), report_dir=None,
                          check_ids=["reader_newest_ts_wins"])
    (result,) = outcome.results
    assert result.outcome is Outcome.FAILED and [f.title for f in result.failures] == [title]


# ---- end to end: a server answering 501 to a method a route lacks passes the fuzzing ------------

def Answers501ToMethodsItLacks() -> Any:  # noqa: N802  (a target factory, named like the fakes)
    """The reference, but a method a route does not have answers 501 (RFC 9110: not recognised), not 405."""
    from memconform.kit.loopback import serve_in_thread
    from memconform.suites.omp.reference.serve import ServedTarget, ServerSpec, make_app

    api = ServerSpec().build()
    inner = make_app(api)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        async def rewrite(message: Any) -> None:
            if message.get("type") == "http.response.start" and message.get("status") == 405:
                message = {**message, "status": 501}
            await send(message)

        await inner(scope, receive, rewrite)

    base_url, stop = serve_in_thread(app)
    return ServedTarget(base_url, stop, api, "fake:omp:501")


def test_fuzzing_records_501_to_a_method_a_route_lacks_and_blames_nothing() -> None:
    fuzz = ["fuzz_no_server_error", "fuzz_status_codes", "fuzz_negative_data_rejected"]
    outcome = execute_run(["omp"], f"python:{__name__}:Answers501ToMethodsItLacks", Profile.named("ci"), report_dir=None,
                          check_ids=fuzz)
    assert {r.check_id: r.outcome for r in outcome.results} == {f"omp.{c}": Outcome.PASSED for c in fuzz}, \
        [f.title for r in outcome.results for f in r.failures]
    seen = {(r["point"], s) for r in outcome.readings for s in r["seen"]}
    assert ("O32", "an unsupported method answered 501") in seen


def test_without_the_reading_the_same_501_would_be_blamed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the fake does reach the blame the reading removes."""
    import memconform.suites.omp.fuzzing.accepted as accepted

    monkeypatch.setattr(accepted, "excused", lambda ctx, exchange: False)
    outcome = execute_run(["omp"], f"python:{__name__}:Answers501ToMethodsItLacks", Profile.named("ci"), report_dir=None,
                          check_ids=["fuzz_no_server_error", "fuzz_status_codes", "fuzz_negative_data_rejected"])
    assert any(r.outcome is Outcome.FAILED for r in outcome.results)


# ---- end to end: a server serving a search bad only where O9/O35 leave it open passes the fuzzing -----

def _lax_search_body(body: Any) -> Any:
    """What a lax schema library makes of a search body: an integer limit clamped to 1-100 (also from
    `5.0` or `"5"`), an unknown mode as keyword, an unknown type dropped, a tags string split at commas.
    Anything else is left for the reference to refuse."""
    from memconform.suites.omp import format as omp

    if not isinstance(body, dict):
        return body
    lax = dict(body)
    limit = lax.get("limit")
    if isinstance(limit, str) and limit.lstrip("-").isdigit():
        limit = int(limit)
    if isinstance(limit, float) and limit.is_integer():
        limit = int(limit)
    if type(limit) is int:
        lax["limit"] = min(max(limit, 1), omp.MAX_LIMIT)
    if isinstance(lax.get("mode"), str) and lax["mode"] not in omp.SEARCH_MODES:
        lax["mode"] = "keyword"
    if isinstance(lax.get("type"), str) and lax["type"] not in omp.TYPES:
        del lax["type"]
    if isinstance(lax.get("tags"), str):
        lax["tags"] = [t.strip() for t in lax["tags"].split(",") if t.strip()]
    return lax


def ServesBadSearchSanely() -> Any:  # noqa: N802  (a target factory, named like the fakes)
    """The reference behind a lax search: what errata O9/O35 leave open is served as a sane page."""
    from memconform.kit.loopback import serve_in_thread
    from memconform.suites.omp.reference.serve import ServedTarget, ServerSpec, make_app

    api = ServerSpec().build()
    inner = make_app(api)

    async def app(scope: Any, receive: Any, send: Any) -> None:
        if scope.get("type") != "http" or scope.get("method") != "POST" or scope.get("path") != "/v1/memories/search":
            await inner(scope, receive, send)
            return
        raw = b""
        while True:
            message = await receive()
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            rewritten = json.dumps(_lax_search_body(json.loads(raw))).encode()
        except ValueError:
            rewritten = raw
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": rewritten, "more_body": False}

        headers = [(k, v) for k, v in scope.get("headers", []) if k.lower() != b"content-length"]
        headers.append((b"content-length", str(len(rewritten)).encode()))
        await inner({**scope, "headers": headers}, replay, send)

    base_url, stop = serve_in_thread(app)
    return ServedTarget(base_url, stop, api, "fake:omp:lax-search")


def test_fuzzing_records_a_bad_search_served_sanely_and_blames_nothing() -> None:
    outcome = execute_run(["omp"], f"python:{__name__}:ServesBadSearchSanely", Profile.named("ci"), report_dir=None,
                          check_ids=["fuzz_negative_data_rejected"])
    assert [r.outcome for r in outcome.results] == [Outcome.PASSED], [f.title for r in outcome.results for f in r.failures]
    seen = {(r["point"], s) for r in outcome.readings for s in r["seen"]}
    assert ("O9", "a bad search parameter served as a sane page") in seen


def test_without_the_reading_the_lax_search_would_be_blamed(monkeypatch: pytest.MonkeyPatch) -> None:
    """The control: the fake does reach the blame the reading removes."""
    import memconform.suites.omp.fuzzing.accepted as accepted

    monkeypatch.setattr(accepted, "excused", lambda ctx, exchange: False)
    outcome = execute_run(["omp"], f"python:{__name__}:ServesBadSearchSanely", Profile.named("ci"), report_dir=None,
                          check_ids=["fuzz_negative_data_rejected"])
    assert [r.outcome for r in outcome.results] == [Outcome.FAILED]
    assert any("/v1/memories/search" in f.title + str(f.detail) for r in outcome.results for f in r.failures)
