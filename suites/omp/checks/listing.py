"""GET /v1/memories (§3.3): paging, total, filters and sort, over a run-unique data set."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlencode

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.readings import Observation
from memconform.core.results import Failure, TargetError
from memconform.suites.omp import ask, rules
from memconform.suites.omp import client as c
from memconform.suites.omp import controls as ev
from memconform.suites.omp import format as omp
from memconform.suites.omp import model as m
from memconform.suites.omp.deviations import FILTERS_AFTER_PAGING
from memconform.suites.omp.root_causes import explained_if_tags_late, tags_filtered_late
from memconform.suites.omp.suite import SUITE

DATASET = 101  # one more than the maximum page


def _dataset(ctx: CheckContext) -> dict[str, Any]:
    """101 memories in one import, with known types, tools, tags, namespaces and distinct created_at;
    the ids are those the target stored (read back by content), not the file's."""
    ds: dict[str, Any] = {"tag": f"ds-{ctx.run_id}", "word": c.word(), "tool": f"mc-alt-{ctx.run_id}", "a": f"a-{ctx.run_id}",
          "b": f"b-{ctx.run_id}", "namespace": f"project:mc-{ctx.run_id}"}
    memories = []
    for i in range(DATASET):
        tags = [ds["tag"]] + ([ds["a"]] if i % 2 == 0 else []) + ([ds["b"]] if i % 3 == 0 else [])
        mem = c.full_memory(ctx, f"ds{i}", type=omp.TYPES[i % 3], tool=ds["tool"] if i % 5 == 0 else c.OWN_TOOL,
                            created_at=f"2026-01-{1 + i // 24:02d}T{i % 24:02d}:00:00Z")
        mem["content"] += f" {ds['word']}"
        mem["tags"] += tags
        if i % 4 == 0:
            mem["namespace"] = ds["namespace"]
        memories.append(mem)
    answer = c.import_(ctx, c.export_file(memories))
    report = answer.body if answer.ok and isinstance(answer.body, dict) else None
    ev.need(report is not None and report.get("imported") == DATASET,
            f"the 101-memory data set could not be seeded by one import: {answer.brief()}")
    stored = {m.get("content"): m for m in c.with_marker(c.exported(ctx), ds["word"])}
    missing = [m["content"] for m in memories if m["content"] not in stored]
    if missing:
        raise TargetError(f"import reported 101 memories imported, yet {len(missing)} are not in the export")
    for mem in memories:
        mem["id"] = stored[mem["content"]].get("id")
    kept = sum(1 for m in memories if rules.instant(stored[m["content"]].get("created_at")) == rules.instant(m["created_at"]))
    observe_created_at(ctx, kept, DATASET)
    ds["memories"] = memories
    ds["stored"] = [stored[m["content"]] for m in memories]  # as the target keeps them: what the model holds
    return ds


def observe_created_at(ctx: CheckContext, kept: int, imported: int) -> Observation:
    """O26: an import keeps every item's created_at, or stamps every one anew."""
    seen = ctx.observe("O26", {"import keeps created_at": kept == imported, "import stamps created_at": kept == 0})
    if seen.failure:  # seeding judges nothing; the created_at checks say which memories lost it
        ctx.note(f"O26: {kept} of {imported} imported memories kept created_at: neither reading")
    return seen


def dataset(ctx: CheckContext) -> dict[str, Any]:
    return ctx.once("omp_dataset", lambda: _dataset(ctx))


def count(ds: dict[str, Any], test: Any) -> int:
    return sum(1 for m in ds["memories"] if test(m))


def model(ctx: CheckContext, ds: dict[str, Any]) -> m.Model:
    """The OMP model holding the data set as stored: the page and total any list of it must give."""
    return m.Model.seeded(ds["stored"], m.Readings.from_options(ctx.option))


def filter_test(params: dict[str, str]) -> Any:
    """Whether a served memory fits these list filters, as the model reads them."""
    fit = m.Filters(type=params.get("type"), tool=params.get("tool"), namespace=params.get("namespace"),
                    tags=m.comma_tags(params.get("tags", "")))
    return fit.fit


def matching(ctx: CheckContext, ds: dict[str, Any], params: dict[str, str]) -> list[dict[str, Any]]:
    """Every memory of the data set the model says these list parameters match."""
    return model(ctx, ds).list_page(m.Request.list(params))[0]


def page(ctx: CheckContext, params: dict[str, str]) -> dict[str, Any]:
    return page_of(c.list_(ctx, params), params)


def page_of(answer: Any, params: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = answer.accepted_json(dict, f"listing {params}")
    if not isinstance(body.get("memories"), list):
        raise TargetError(f"a list answer has no memories array: {body!r:.200}")
    return body


def ids(memories: list[Any]) -> list[Any]:
    return [m.get("id") for m in memories if isinstance(m, dict)]


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='List memories with optional filters.')
def list_response_shape(ctx: CheckContext) -> Iterator[Failure]:
    ds = dataset(ctx)
    answer = c.list_(ctx, {"tags": ds["tag"], "limit": "5", "offset": "2"})
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
    request = m.Request.list(params)
    answer = c.list_(ctx, params)
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
    answer = c.list_(ctx, params)
    seen = ask.observe(ctx, "O9", m.Request.list(params), answer, seeded=lambda r: m.Model.seeded(ds["stored"], r),
                       pins=("limit_over_max",), path="$.limit",
                       title=f"GET /v1/memories?{urlencode(params)}: limit=101 was neither served with at most 100 memories "
                             "nor refused with a 4xx")
    if seen.failure and answer.status >= 500:
        yield from rules.validation_failures(ctx, answer)  # says "a server error"
    elif seen.failure:
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
        answers[label] = c.list_(ctx, params)
        failure = ask.judged(model(ctx, ds), m.Request.list(params), answers[label],
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
        answer = c.list_(ctx, params)
        body = page_of(answer, params)
        if body.get("total") != wanted:
            failure = Failure(f"total is not the number of matches for {params}", body.get("total", "<absent>"), wanted, "$.total")
            yield explained_if_tags_late(ctx, failure, params, answer)


def filter_failures(ctx: CheckContext, params: dict[str, str], test: Any, wanted: list[dict[str, Any]], what: str) -> Iterator[Failure]:
    body = page(ctx, {**params, "limit": "100"})
    wrong = [m.get("content", "")[:60] for m in body["memories"] if not test(m)]
    if wrong:
        yield Failure(f"the {what} filter returned memories that do not match", wrong[:3], f"only memories with {params}", "$.memories")
    missing = sorted(set(ids(wanted)) - set(ids(body["memories"])))
    if missing:
        yield Failure(f"the {what} filter left out matching memories", f"{len(missing)} missing, e.g. {missing[0]}", f"all {len(wanted)}", "$.memories")
    # a filter applied to the page after paging serves short pages: 10 asked, 10 matches exist
    small_params = {**params, "limit": "10"}
    small_answer = c.list_(ctx, small_params)
    small = page_of(small_answer, small_params)
    if len(wanted) >= 10 and len(small["memories"]) != 10:
        failure = Failure(f"the {what} filter with limit 10 served {len(small['memories'])} of {len(wanted)} matches "
                          "(filtered after paging?)", len(small["memories"]), 10, "$.memories")
        if set(params) != {"tags"} and tags_filtered_late(ctx, small_params, small_answer):
            yield established.explained(ctx, failure, FILTERS_AFTER_PAGING)  # the tags beside it, not this filter
            return
        established.establish(ctx, FILTERS_AFTER_PAGING, "list filters applied to the page after paging (short pages)")
        yield failure


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
