"""The run's 101-memory data set (one import, known types, tools, tags, namespaces and created_at) and what
the list, sort and search checks ask of it: its model, a page, the memories a filter matches, their ids.
Not a check module: the checks of suites/omp/checks/ import it, never one another."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.readings import Observation
from memconform.core.results import Failure, TargetError
from memconform.suites.omp import client, controls, rules
from memconform.suites.omp import format as omp
from memconform.suites.omp.deviations import FILTERS_AFTER_PAGING
from memconform.suites.omp.model import Filters, Model, Readings, Request, comma_tags
from memconform.suites.omp.root_causes import tags_filtered_late

DATASET = 101  # one more than the maximum page


def _dataset(ctx: CheckContext) -> dict[str, Any]:
    """101 memories in one import, with known types, tools, tags, namespaces and distinct created_at;
    the ids are those the target stored (read back by content), not the file's."""
    ds: dict[str, Any] = {"tag": f"ds-{ctx.run_id}", "word": client.word(), "tool": f"mc-alt-{ctx.run_id}", "a": f"a-{ctx.run_id}",
          "b": f"b-{ctx.run_id}", "namespace": f"project:mc-{ctx.run_id}"}
    memories = []
    for i in range(DATASET):
        tags = [ds["tag"]] + ([ds["a"]] if i % 2 == 0 else []) + ([ds["b"]] if i % 3 == 0 else [])
        mem = client.full_memory(ctx, f"ds{i}", type=omp.TYPES[i % 3], tool=ds["tool"] if i % 5 == 0 else client.OWN_TOOL,
                            created_at=f"2026-01-{1 + i // 24:02d}T{i % 24:02d}:00:00Z")
        mem["content"] += f" {ds['word']}"
        mem["tags"] += tags
        if i % 4 == 0:
            mem["namespace"] = ds["namespace"]
        memories.append(mem)
    answer = client.import_(ctx, client.export_file(memories))
    report = answer.body if answer.ok and isinstance(answer.body, dict) else None
    controls.need(report is not None and report.get("imported") == DATASET,
            f"the 101-memory data set could not be seeded by one import: {answer.brief()}")
    stored = {m.get("content"): m for m in client.with_marker(client.exported(ctx), ds["word"])}
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


def model(ctx: CheckContext, ds: dict[str, Any]) -> Model:
    """The OMP model holding the data set as stored: the page and total any list of it must give."""
    return Model.seeded(ds["stored"], Readings.from_options(ctx.option))


def filter_test(params: dict[str, str]) -> Any:
    """Whether a served memory fits these list filters, as the model reads them."""
    fit = Filters(type=params.get("type"), tool=params.get("tool"), namespace=params.get("namespace"),
                    tags=comma_tags(params.get("tags", "")))
    return fit.fit


def matching(ctx: CheckContext, ds: dict[str, Any], params: dict[str, str]) -> list[dict[str, Any]]:
    """Every memory of the data set the model says these list parameters match."""
    return model(ctx, ds).list_page(Request.list(params))[0]


def page(ctx: CheckContext, params: dict[str, str]) -> dict[str, Any]:
    return page_of(client.list_(ctx, params), params)


def page_of(answer: Any, params: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = answer.accepted_json(dict, f"listing {params}")
    if not isinstance(body.get("memories"), list):
        raise TargetError(f"a list answer has no memories array: {body!r:.200}")
    return body


def ids(memories: list[Any]) -> list[Any]:
    return [m.get("id") for m in memories if isinstance(m, dict)]


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
    small_answer = client.list_(ctx, small_params)
    small = page_of(small_answer, small_params)
    if len(wanted) >= 10 and len(small["memories"]) != 10:
        failure = Failure(f"the {what} filter with limit 10 served {len(small['memories'])} of {len(wanted)} matches "
                          "(filtered after paging?)", len(small["memories"]), 10, "$.memories")
        if set(params) != {"tags"} and tags_filtered_late(ctx, small_params, small_answer):
            yield established.explained(ctx, failure, FILTERS_AFTER_PAGING)  # the tags beside it, not this filter
            return
        established.establish(ctx, FILTERS_AFTER_PAGING, "list filters applied to the page after paging (short pages)")
        yield failure
