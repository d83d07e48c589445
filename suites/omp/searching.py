"""POST /v1/memories/search as the search checks send it: a page read back, and the pair of memories only
similarity tells apart. Not a check module: the checks import it, never one another."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Observation
from memconform.core.results import Failure, TargetError
from memconform.suites.omp import ask, client, rules
from memconform.suites.omp.model import Model, Readings, Request
from memconform.targets.base import Reply


def search_body(ctx: CheckContext, query: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = client.search(ctx, query).accepted_json(dict, f"searching {query}")
    if not isinstance(body.get("memories"), list):
        raise TargetError(f"a search answer has no memories array: {body!r:.200}")
    return body


def overlap_pair(ctx: CheckContext) -> tuple[dict[str, Any], dict[str, Any], str, str]:
    """A memory sharing two of three query words and one sharing none: only similarity finds the first."""
    w = [client.word() for _ in range(6)]
    tag = f"sem-{client.word()}"
    near = client.created(ctx, client.memory(ctx, "sem-near", content=f"{ctx.unique('sem')} {w[0]} {w[1]} {w[2]}", tags=[tag]))
    far = client.created(ctx, client.memory(ctx, "sem-far", content=f"{ctx.unique('sem')} {w[3]} {w[4]}", tags=[tag]))
    return near, far, f"{w[0]} {w[1]} {w[5]}", tag


def observe_keyword_match(ctx: CheckContext, made: dict[str, dict[str, Any]], query: dict[str, Any], found: set[str]) -> Observation:
    """O2: which memories (by name) each keyword reading matches, as the model says; the found ones fit one."""
    names = {mem["id"]: name for name, mem in made.items()}
    model = Model.seeded(made.values())  # every reading, whatever the option: the observation names the one seen
    expected = {reading.removeprefix("keyword match: "): {names[i] for i in wanted}
                for reading, wanted in model.search_sets(Request("search", body=query)).items()}
    pinned = ctx.option("keyword_match")
    seen = ctx.observe("O2", {f"keyword match: {name}": found == wanted for name, wanted in expected.items()}, sorted(found),
                       accepted=None if pinned == "any" else (f"keyword match: {pinned}",),
                       title="keyword matches fit no accepted reading (every word, substring, any word)", path="$.memories",
                       pinned=() if pinned == "any" else (f"keyword_match={pinned}",))
    if seen.failure:
        seen.failure.expected = {k: sorted(v) for k, v in expected.items() if pinned in ("any", k)}
    return seen


def observe_search_tags(ctx: CheckContext, model: Model, query: dict[str, Any], hits: set[str]) -> Observation:
    """O2: the ids the model says each reading of the search `tags` filter (all, any) matches; the hits fit one."""
    readings = {reading.split(", ")[0].removeprefix("search tags: "): wanted
                for reading, wanted in model.search_sets(Request("search", body=query)).items()}
    pinned = ctx.option("search_tags_match")
    return ctx.observe("O2", {f"search tags: {name}": hits == wanted for name, wanted in readings.items()}, sorted(hits),
                       accepted=None if pinned == "either" else (f"search tags: {pinned}",),
                       title="search with tags did not return exactly the memories with both tags (or, reading any, either tag)",
                       path="$.memories", pinned=() if pinned == "either" else (f"search_tags_match={pinned}",))


def observe_pinned(ctx: CheckContext, stored: list[dict[str, Any]], query: dict[str, Any], answer: Any, option: str,
                   values: tuple[str, ...], reading: str, title: str) -> Observation:
    """O2: the answer fits a reading when the model pinned to it (the option at that value) accepts it."""
    request = Request("search", body=query)
    base = Readings.from_options(ctx.option)
    pinned = {value: Model.seeded(stored, replace(base, **{option: value})) for value in values}  # type: ignore[arg-type]
    chosen = ctx.option(option)
    seen = ctx.observe("O2", {reading.format(v): model.accepts(request, answer) is None for v, model in pinned.items()},
                       answer, accepted=[reading.format(v) for v in values if chosen in ("either", v)],
                       title=f"search {query}: {title}", path="$.memories",
                       pinned=() if chosen == "either" else (f"{option}={chosen}",))
    if seen.failure:
        seen.failure.received = ask.summary(answer)
        seen.failure.expected = {reading.format(v): str(model.accepts(request, answer)) for v, model in pinned.items()
                                 if chosen in ("either", v)}
    return seen


def tool_status_failures(ctx: CheckContext, answer: Reply, creating: bool = False) -> Iterator[Failure]:
    """Another tool's memory: 403 forbidden, or (reading it as not visible) 404 memory_not_found (option tool_key_status)."""
    wanted = ctx.option("tool_key_status")
    if creating:  # nothing of the other tool is there to hide: the write is forbidden
        yield from rules.error_failures(ctx, answer, 403, "forbidden")
        return
    forbidden, hidden = "another tool's memory answers 403", "another tool's memory answers 404"
    seen = ctx.observe("O17", {forbidden: answer.status == 403, hidden: answer.status == 404}, answer.brief(),
                       accepted={"403": (forbidden,), "404": (hidden,)}.get(wanted, (forbidden, hidden)),
                       title="a tool's key reaching another tool's memory was answered neither 403 nor 404",
                       pinned=() if wanted == "either" else (f"tool_key_status={wanted}",))
    if seen.failure:
        yield seen.failure
    elif seen.fits(hidden):
        yield from rules.error_failures(ctx, answer, 404, "memory_not_found")
    else:
        yield from rules.error_failures(ctx, answer, 403, "forbidden")
