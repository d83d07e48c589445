"""GET /v1/memories `sort` (§3.3), judged against the order the harness knows, on memories created at
distinct times, and the query-parameter spellings real clients send (empty and repeated parameters)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qsl

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import ask, client, controls, rules
from memconform.suites.omp.dataset import dataset, ids, page
from memconform.suites.omp.deviations import FILTERS_AFTER_PAGING, SORT_IGNORED, STORES_INVALID
from memconform.suites.omp.model import Model, Readings, Request
from memconform.suites.omp.suite import SUITE
from memconform.targets.base import Reply

SORT_SEED = 4
DISTINCT_WAIT_S = 1.2  # a server stamping whole seconds needs a new second; bounded, never a verdict


def _distinct_creates(ctx: CheckContext, tag: str) -> list[dict[str, Any]]:
    """SORT_SEED memories, each with a created_at strictly later than the one before (as the target says)."""
    made: list[dict[str, Any]] = []
    deadline = time.monotonic() + SORT_SEED * 2 * DISTINCT_WAIT_S
    while len(made) < SORT_SEED and time.monotonic() < deadline:
        mem = client.created(ctx, client.memory(ctx, f"sort{len(made)}", tags=[tag]))
        now, before = rules.instant(mem.get("created_at")), rules.instant(made[-1].get("created_at")) if made else None
        if made and (now is None or before is None or not now > before):
            client.delete(ctx, mem["id"], quiet=True)  # same stamp as the one before: wait for the clock and make it again
            time.sleep(DISTINCT_WAIT_S / 4)
            continue
        made.append(mem)
    controls.need(len(made) == SORT_SEED, "could not create memories with distinct created_at: order cannot be observed")
    return made


def _order(ctx: CheckContext, tag: str, sort: str | None) -> list[Any]:
    params = {"tags": tag, "limit": "100", **({"sort": sort} if sort else {})}
    return ids(page(ctx, params)["memories"])


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='`sort` string `created_at_desc` (default), `created_at_asc`, `updated_at_desc`')
def list_sort_orders(ctx: CheckContext) -> Iterator[Failure]:
    tag = f"sort-{client.word()}"
    made = _distinct_creates(ctx, tag)
    model = Model.seeded(made)  # their created_at strictly increase: the model's order is one order
    orders = {}
    for sort in ("created_at_asc", "created_at_desc", None):
        request = Request.list({"tags": tag, "limit": "100", **({"sort": sort} if sort else {})})
        wanted = [mem["id"] for mem in model.list_page(request)[1]]
        seen = orders[sort] = _order(ctx, tag, sort)
        if seen != wanted:
            yield Failure(f"sort={sort or '(default: created_at_desc)'}: memories created one after the other are out of order",
                          seen, wanted, "$.memories[*].id")
    if orders["created_at_asc"] == orders[None] != list(reversed(orders[None])):  # asc asked, the default served
        established.establish(ctx, SORT_IGNORED, "sort is ignored: every list comes in the default order")
    yield from _updated_order(ctx, tag, made)
    yield from _dataset_order(ctx)


def _updated_order(ctx: CheckContext, tag: str, made: list[dict[str, Any]]) -> Iterator[Failure]:
    """updated_at_desc: touch the oldest, then the second; the model, following each update's answer (its
    updated_at moved on, errata O6), gives the order: the second first, then the oldest, then the rest."""
    model = Model.seeded(made, Readings.from_options(ctx.option))
    for mem in (made[0], made[1]):
        patch = {"metadata": {"memconform_run": ctx.run_id, "touched": mem["id"]}}
        answer = client.update(ctx, mem["id"], patch)
        controls.control(answer, "updating a memory of the sort data")
        reason = model.step(Request("update", id=mem["id"], body=patch), answer)
        if reason is not None:
            yield Failure(f"sort=updated_at_desc: updating a memory of the sort data: {reason.title}", ask.summary(answer),
                          reason.expected, "$.updated_at")
            return
    params = {"tags": tag, "limit": "100", "sort": "updated_at_desc"}
    answer = client.list_(ctx, params)
    reason = model.accepts(Request.list(params), answer)
    if reason is not None:
        wanted = [mem["id"] for mem in model.list_page(Request.list(params))[1]]
        yield Failure(f"sort=updated_at_desc: the memories updated last are not first, latest first ({reason.title})",
                      ask.summary(answer), {"order": wanted, **reason.expected}, "$.memories[*].id")


def _dataset_order(ctx: CheckContext) -> Iterator[Failure]:
    """The 101 imported memories carry distinct historical created_at; where the target kept them, 100 in order."""
    ds = dataset(ctx)
    asc = page(ctx, {"tags": ds["tag"], "sort": "created_at_asc", "limit": "100"})["memories"]
    stamps = [rules.instant(m.get("created_at")) for m in asc]
    if len({s for s in stamps if s is not None}) < 2:
        ctx.note("the imported data set reports one created_at for all: only the created memories judged the order")
        return
    pairs = [(i, a, b) for i, (a, b) in enumerate(zip(stamps, stamps[1:], strict=False)) if a is not None and b is not None]
    bad = [i for i, a, b in pairs if a > b]
    if bad:
        i = bad[0]
        yield Failure("sort=created_at_asc over 100 imported memories: out of order", [asc[i].get("created_at"), asc[i + 1].get("created_at")],
                      "created_at ascending", f"$.memories[{i}]")


POISON_PAGES = 20  # pages of 100 read to find a memory that breaks listing: bounded


def poisoned_page(ctx: CheckContext) -> int | None:
    """The offset of a page of the key's plain list (limit 100, no filter) that answers 5xx, or None: a memory
    stored earlier (by this run or another) then breaks every listing that reaches it, whatever its parameters."""
    for offset in range(0, 100 * POISON_PAGES, 100):
        answer = _raw_list(ctx, f"limit=100&offset={offset}")
        if answer.status >= 500:
            return offset
        memories = answer.body.get("memories") if answer.ok and isinstance(answer.body, dict) else None
        if not isinstance(memories, list) or len(memories) < 100:
            return None
    return None


def short_page_of_known(answer: Reply, known: list[dict[str, Any]]) -> bool:
    """A 200 page holding only memories of the data set, fewer than it has: what filtering after paging serves."""
    memories = answer.body.get("memories") if answer.ok and isinstance(answer.body, dict) else None
    return isinstance(memories, list) and set(ids(memories)) < set(ids(known))


def _raw_list(ctx: CheckContext, query: str) -> Reply:
    return client.send(ctx, "GET", f"/memories?{query}")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='`tags` string Comma-separated tags (AND logic)')
def list_empty_and_repeated_parameters(ctx: CheckContext) -> Iterator[Failure]:
    """Empty (`type=`) and repeated (`tags=a&tags=b`) parameters: a 4xx with the envelope, or a sane page
    under one of the plausible readings (absent; last, first or all values); never a 5xx (errata O30).
    The readings and the page each one predicts are the model's."""
    ds = dataset(ctx)
    controls.control(_raw_list(ctx, f"tags={ds['a']}&limit=100"), "the same list with one tags parameter")
    for query in (f"tags={ds['tag']}&type=&limit=100", f"tags={ds['a']}&tags={ds['b']}&limit=100",
                  f"tags={ds['tag']}&limit=", f"tags={ds['tag']}&namespace=&tool=&limit=100"):
        answer = _raw_list(ctx, query)
        request = Request.list(parse_qsl(query, keep_blank_values=True))
        seen = ask.observe(ctx, "O30", request, answer, seeded=lambda r: Model.seeded(ds["stored"], r), pins=("bad_params",),
                           title=f"GET /v1/memories?{query}: the answer fits none of the readings", path="$.memories")
        if seen.failure and answer.status >= 500:
            poisoned = ctx.once("omp.list_poisoned_at", lambda: poisoned_page(ctx))
            for failure in rules.error_failures(ctx, answer, None, None):  # says "a server error"
                if poisoned is not None:  # the state, not the parameter: name it (and what established it)
                    failure.detail = (f"the key's own plain list (limit=100, no filter) answers 5xx too at offset {poisoned}: "
                                      "a memory stored earlier breaks every listing that reaches it" + (f"; {failure.detail}" if failure.detail else ""))
                    yield established.explained(ctx, failure, STORES_INVALID)
                else:
                    yield failure
        elif seen.failure and short_page_of_known(answer, ds["stored"]):
            yield established.explained(ctx, seen.failure, FILTERS_AFTER_PAGING)
        elif seen.failure:
            yield seen.failure
        elif not answer.ok:
            yield from rules.error_failures(ctx, answer, None, None)
