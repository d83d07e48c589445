"""GET /v1/memories `sort` (§3.3), judged against the order the harness knows, on memories created at
distinct times, and the query-parameter spellings real clients send (empty and repeated parameters)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.model import Failure
from memconform.suites.omp import client as c
from memconform.suites.omp import controls as ev
from memconform.suites.omp import format as omp
from memconform.suites.omp import model as m
from memconform.suites.omp import rules
from memconform.suites.omp.checks.listing import dataset, ids, page
from memconform.suites.omp.suite import SUITE
from memconform.targets.base import Reply

SORT_SEED = 4
DISTINCT_WAIT_S = 1.2  # a server stamping whole seconds needs a new second; bounded, never a verdict


def _distinct_creates(ctx: CheckContext, tag: str) -> list[dict[str, Any]]:
    """SORT_SEED memories, each with a created_at strictly later than the one before (as the target says)."""
    made: list[dict[str, Any]] = []
    deadline = time.monotonic() + SORT_SEED * 2 * DISTINCT_WAIT_S
    while len(made) < SORT_SEED and time.monotonic() < deadline:
        mem = c.created(ctx, c.memory(ctx, f"sort{len(made)}", tags=[tag]))
        now, before = rules.instant(mem.get("created_at")), rules.instant(made[-1].get("created_at")) if made else None
        if made and (now is None or before is None or not now > before):
            c.delete(ctx, mem["id"], quiet=True)  # same stamp as the one before: wait for the clock and make it again
            time.sleep(DISTINCT_WAIT_S / 4)
            continue
        made.append(mem)
    ev.need(len(made) == SORT_SEED, "could not create memories with distinct created_at: order cannot be observed")
    return made


def _order(ctx: CheckContext, tag: str, sort: str | None) -> list[Any]:
    params = {"tags": tag, "limit": "100", **({"sort": sort} if sort else {})}
    return ids(page(ctx, params)["memories"])


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='`sort` string `created_at_desc` (default), `created_at_asc`, `updated_at_desc`')
def list_sort_orders(ctx: CheckContext) -> Iterator[Failure]:
    tag = f"sort-{c.word()}"
    made = _distinct_creates(ctx, tag)
    model = m.Model.seeded(made)  # their created_at strictly increase: the model's order is one order
    for sort in ("created_at_asc", "created_at_desc", None):
        request = m.Request.list({"tags": tag, "limit": "100", **({"sort": sort} if sort else {})})
        wanted = [mem["id"] for mem in model.list_page(request)[1]]
        seen = _order(ctx, tag, sort)
        if seen != wanted:
            yield Failure(f"sort={sort or '(default: created_at_desc)'}: memories created one after the other are out of order",
                          seen, wanted, "$.memories[*].id")
    # updated_at_desc: touch the oldest, then the second: the second comes first, then the oldest
    for mem in (made[0], made[1]):
        c.update(ctx, mem["id"], {"metadata": {"memconform_run": ctx.run_id, "touched": mem["id"]}}).accepted_json(dict,
                  "updating a memory of the sort data")
    seen = _order(ctx, tag, "updated_at_desc")
    if seen[:2] != [made[1]["id"], made[0]["id"]]:
        yield Failure("sort=updated_at_desc: the memories updated last are not first, latest first", seen[:2],
                      [made[1]["id"], made[0]["id"]], "$.memories[*].id")
    yield from _dataset_order(ctx)


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


def _raw_list(ctx: CheckContext, query: str) -> Reply:
    return c.send(ctx, "GET", f"/memories?{query}")


def _served_ids(answer: Reply) -> set[Any] | None:
    body = answer.body if answer.ok and isinstance(answer.body, dict) else None
    if body is None or not isinstance(body.get("memories"), list):
        return None
    return set(ids(body["memories"]))


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='`tags` string Comma-separated tags (AND logic)')
def list_empty_and_repeated_parameters(ctx: CheckContext) -> Iterator[Failure]:
    """Empty (`type=`) and repeated (`tags=a&tags=b`) parameters: a 4xx with the envelope, or a sane page
    under one of the plausible readings (absent; last, first or all values); never a 5xx (errata O30)."""
    ds = dataset(ctx)
    ev.control(_raw_list(ctx, f"tags={ds['a']}&limit=100"), "the same list with one tags parameter")
    a = {m["id"] for m in ds["memories"] if ds["a"] in m["tags"]}
    b = {m["id"] for m in ds["memories"] if ds["b"] in m["tags"]}
    everything = {m["id"] for m in ds["memories"]}
    cases = (
        (f"tags={ds['tag']}&type=&limit=100", "empty"),
        (f"tags={ds['a']}&tags={ds['b']}&limit=100", "repeated"),
        (f"tags={ds['tag']}&limit=", "empty-limit"),
        (f"tags={ds['tag']}&namespace=&tool=&limit=100", "empty"),
    )
    readings = {"all values (AND)": a & b, "last value": b, "first value": a}
    for query, kind in cases:
        answer = _raw_list(ctx, query)
        served = _served_ids(answer) if answer.ok else None
        seen = ctx.observe("O30", o30_predictions(kind, answer, served, readings, everything),
                           title=f"GET /v1/memories?{query}: the answer fits none of the readings", path="$.memories")
        if seen.failure and answer.status >= 500:
            yield from rules.error_failures(ctx, answer, None, None)  # says "a server error"
        elif seen.failure:
            seen.failure.received = answer.brief() if served is None else f"{answer.status}: {len(served)} memories"
            yield seen.failure
        elif not answer.ok:
            yield from rules.error_failures(ctx, answer, None, None)


def o30_predictions(kind: str, answer: Reply, served: set[str] | None, repeated: dict[str, set[str]],
                    everything: set[str]) -> dict[str, bool]:
    """What each reading of an empty or repeated parameter predicts (errata O30): refused with a 4xx, or
    a page under one of its readings."""
    predictions = {f"{kind} parameter: refused with a 4xx": 400 <= answer.status < 500}
    if served is None:
        return predictions
    if kind == "repeated":
        predictions.update({f"repeated tags: {name}": served == wanted for name, wanted in repeated.items()})
    elif kind == "empty-limit":
        predictions.update({"empty limit: served as absent (20)": len(served) == omp.DEFAULT_LIMIT,
                            "empty limit: served as 10": len(served) == 10,
                            "empty limit: served as the maximum (100)": len(served) == omp.MAX_LIMIT})
    else:
        whole = min(len(everything), omp.MAX_LIMIT)
        predictions.update({"empty parameter: served as absent": served <= everything and len(served) == whole,
                            "empty parameter: served as a value matching nothing": not served})
    return predictions
