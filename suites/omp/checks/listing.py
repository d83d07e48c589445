"""GET /v1/memories (§3.3): paging, total, filters and sort, over a run-unique data set."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import ask, client, rules
from memconform.suites.omp.dataset import (
    DATASET,
    dataset,
    filter_failures,
    filter_test,
    ids,
    matching,
    model,
    page_of,
)
from memconform.suites.omp.deviations import LIMIT_UNCAPPED
from memconform.suites.omp.model import Model, Request
from memconform.suites.omp.root_causes import explained_if_tags_late
from memconform.suites.omp.suite import SUITE


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='List memories with optional filters.')
def list_response_shape(ctx: CheckContext) -> Iterator[Failure]:
    ds = dataset(ctx)
    answer = client.list_(ctx, {"tags": ds["tag"], "limit": "5", "offset": "2"})
    if answer.status != 200 or not isinstance(answer.body, dict):
        yield Failure("list did not answer 200 with an object", answer.status, 200, "$")
        return
    body = answer.body
    if not isinstance(body.get("memories"), list) or not all(isinstance(m, dict) for m in body["memories"]):
        yield Failure("memories is not an array of Memory objects", body.get("memories", "<absent>"), "Memory[]", "$.memories")
    for name, wanted in (("total", DATASET), ("limit", 5), ("offset", 2)):
        if not rules.is_int(body.get(name)):
            yield Failure(f"{name} is missing or not an integer", body.get(name, "<absent>"), wanted, f"$.{name}")
        elif name != "total" and body[name] != wanted:
            yield Failure(f"{name} does not echo what was applied (errata O3)", body[name], wanted, f"$.{name}")


@SUITE.check(section="§3.3", keyword="MUST", level="core", sentence='`tags` string Comma-separated tags (AND logic)')
def list_filter_tags_and(ctx: CheckContext) -> Iterator[Failure]:
    """Registered before the other list checks: a server applying the tags filter to the page after paging
    is named here first, and the failures of the checks after it that this alone causes say so."""
    ds = dataset(ctx)
    params = {"tags": f"{ds['a']},{ds['b']}"}
    yield from filter_failures(ctx, params, filter_test(params), matching(ctx, ds, params),
                               "tags (AND)")


def asked(ctx: CheckContext, ds: dict[str, Any], params: dict[str, str], what: str, path: str = "$.memories") -> Iterator[Failure]:
    """GET /v1/memories with these parameters, judged by the model holding the data set."""
    request = Request.list(params)
    answer = client.list_(ctx, params)
    failure = ask.judged(model(ctx, ds), request, answer, f"GET /v1/memories?{urlencode(params)} ({what})", path)
    if failure is not None:
        yield explained_if_tags_late(ctx, failure, params, answer)


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='`limit` integer Max results (default 20, max 100)')
def list_default_limit_20(ctx: CheckContext) -> Iterator[Failure]:
    ds = dataset(ctx)
    yield from asked(ctx, ds, {"tags": ds["tag"]}, f"no limit over {DATASET} matches: the first 20, saying limit 20")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='`limit` integer Max results (default 20, max 100)')
def list_limit_max_100(ctx: CheckContext) -> Iterator[Failure]:
    ds = dataset(ctx)
    yield from asked(ctx, ds, {"tags": ds["tag"], "limit": "100"}, f"limit=100 over {DATASET} matches: the first 100")
    params = {"tags": ds["tag"], "limit": "101"}
    answer = client.list_(ctx, params)
    seen = ask.observe(ctx, "O9", Request.list(params), answer, seeded=lambda r: Model.seeded(ds["stored"], r),
                       pins=("limit_over_max",), path="$.limit",
                       title=f"GET /v1/memories?{urlencode(params)}: limit=101 was neither served with at most 100 memories "
                             "nor refused with a 4xx")
    if seen.failure and answer.status >= 500:
        yield from rules.validation_failures(ctx, answer)  # says "a server error"
    elif seen.failure:
        if answer.ok:  # served as asked: a fuzzed list whose answer echoes such a limit is explained by this
            established.establish(ctx, LIMIT_UNCAPPED, "a list limit over 100 served as asked, neither capped nor refused")
        yield seen.failure
    elif not answer.ok:
        yield from rules.validation_failures(ctx, answer)  # the refusal: 422 validation_error (errata O9)


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='`offset` integer Pagination offset')
def list_offset_pages(ctx: CheckContext) -> Iterator[Failure]:
    """Pages of the default order (created_at_desc): an order asked with `sort` is list_sort_orders' to judge,
    so a server that ignores `sort` is not blamed here for its pages."""
    ds = dataset(ctx)
    base = {"tags": ds["tag"]}
    answers = {}
    for label, params in (("whole", {**base, "limit": "20"}), ("first", {**base, "limit": "10", "offset": "0"}),
                          ("second", {**base, "limit": "10", "offset": "10"}), ("beyond", {**base, "offset": "500"})):
        answers[label] = client.list_(ctx, params)
        failure = ask.judged(model(ctx, ds), Request.list(params), answers[label],
                             f"GET /v1/memories?{urlencode(params)} ({label} page)", "$.memories")
        if failure is not None:
            yield explained_if_tags_late(ctx, failure, params, answers[label])
    # the pages agree with one another whatever the stamps (created_at may tie where a target restamps an import)
    whole, first, second = (ids(answers[k].body.get("memories") or []) if isinstance(answers[k].body, dict) else []
                            for k in ("whole", "first", "second"))
    if len(whole) == 20 and first + second != whole:
        yield Failure("offset 0 and offset 10 (limit 10) are not the first 20 in order", second[:3], whole[10:13], "$.memories")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='{ "memories": [...], "total": 142, "limit": 20, "offset": 0 }')
def list_total_counts_matches(ctx: CheckContext) -> Iterator[Failure]:
    ds = dataset(ctx)
    for params in ({"tags": ds["tag"], "limit": "5", "offset": "3"}, {"tags": ds["b"], "limit": "2"}):
        wanted = len(matching(ctx, ds, params))
        answer = client.list_(ctx, params)
        body = page_of(answer, params)
        if body.get("total") != wanted:
            failure = Failure(f"total is not the number of matches for {params}", body.get("total", "<absent>"), wanted, "$.total")
            yield explained_if_tags_late(ctx, failure, params, answer)


@SUITE.check(section="§3.3", keyword="MUST", level="core", sentence='`type` string Filter by memory type')
def list_filter_type(ctx: CheckContext) -> Iterator[Failure]:
    ds = dataset(ctx)
    params = {"tags": ds["tag"], "type": "procedural"}
    yield from filter_failures(ctx, params, filter_test(params), matching(ctx, ds, params), "type")


@SUITE.check(section="§3.3", keyword="MUST", level="core", sentence='`tool` string Filter by source tool')
def list_filter_tool(ctx: CheckContext) -> Iterator[Failure]:
    ds = dataset(ctx)
    params = {"tool": ds["tool"]}
    yield from filter_failures(ctx, params, filter_test(params), matching(ctx, ds, params), "tool")
