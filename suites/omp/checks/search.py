"""POST /v1/memories/search (§3.3): keyword matching, filters, limit and total, mode_used."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, SkipCheck
from memconform.suites.omp import ask, client, controls, rules
from memconform.suites.omp.dataset import DATASET, dataset, ids
from memconform.suites.omp.model import Model, Readings, Request
from memconform.suites.omp.searching import (
    observe_keyword_match,
    observe_pinned,
    observe_search_tags,
    overlap_pair,
    search_body,
)
from memconform.suites.omp.suite import SUITE


def asked(ctx: CheckContext, model: Model, query: dict[str, Any], what: str, path: str = "$.memories") -> Iterator[Failure]:
    """POST /v1/memories/search with this body, judged by the model."""
    failure = ask.judged(model, Request("search", body=query), client.search(ctx, query), f"search {query} ({what})", path)
    if failure is not None:
        yield failure


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='keyword — full-text keyword search (MUST be supported by all implementations)')
def search_keyword(ctx: CheckContext) -> Iterator[Failure]:
    """One memory holds a run-unique word: the model's keyword page for it is that memory, with
    `mode_used: keyword` and an integer total."""
    key = client.word()
    made = client.created(ctx, client.memory(ctx, "search", content=f"{ctx.unique('search')} likes {key} a lot"))
    model = Model.seeded([made], Readings.from_options(ctx.option))
    yield from asked(ctx, model, {"q": key, "mode": "keyword"}, "a word one memory holds")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='keyword — full-text keyword search (MUST be supported by all implementations)')
def search_keyword_case_insensitive(ctx: CheckContext) -> Iterator[Failure]:
    key = client.word()
    made = client.created(ctx, client.memory(ctx, "case", content=f"{ctx.unique('case')} prefers {key.capitalize()} mode"))
    hits = ids(search_body(ctx, {"q": key.upper(), "mode": "keyword"})["memories"])
    if made["id"] not in hits:
        yield Failure("keyword search is case-sensitive", f"q={key.upper()!r} found {len(hits)}", made["content"], "$.memories")


KEYWORD_READINGS = ("all-words", "substring", "any-word")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='keyword — full-text keyword search (MUST be supported by all implementations)')
def search_keyword_all_words(ctx: CheckContext) -> Iterator[Failure]:
    """Which words of q must a memory hold? Every plausible reading is accepted by default (errata O2):
    every word, q as a substring, or any one word; a memory holding none is never a match."""
    w1, w2 = client.word(), client.word()
    made = {
        "phrase": client.created(ctx, client.memory(ctx, "kw-both", content=f"{ctx.unique('kw')} {w2} then {w1} {w2}")),
        "apart": client.created(ctx, client.memory(ctx, "kw-apart", content=f"{ctx.unique('kw')} {w2} far from {w1}")),
        "one": client.created(ctx, client.memory(ctx, "kw-one", content=f"{ctx.unique('kw')} only {w1}")),
        "none": client.created(ctx, client.memory(ctx, "kw-none", content=f"{ctx.unique('kw')} only {client.word()}")),
    }
    query = {"q": f"{w1} {w2}", "mode": "keyword", "limit": 100}
    hits = set(ids(search_body(ctx, query)["memories"]))
    found = {name for name, mem in made.items() if mem["id"] in hits}
    seen = observe_keyword_match(ctx, made, query, found)
    if "none" in found:
        yield Failure("a memory holding no word of q was found", made["none"]["content"], "not found", "$.memories")
    elif "phrase" not in found:
        yield Failure("a memory holding q as a phrase is not found", sorted(found), "found", "$.memories")
    elif seen.failure:
        yield seen.failure


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='"q": "coding preferences", "type": "semantic", "tags": ["preferences"],')
def search_filters(ctx: CheckContext) -> Iterator[Failure]:
    """type and tags filter the matches; tags AND (like list) or any one tag (errata O2): a filter that is
    ignored returns the memory holding neither tag, and the one of another type."""
    key, x, y = client.word(), f"x-{client.word()}", f"y-{client.word()}"
    a = client.created(ctx, client.memory(ctx, "sf-a", content=f"{ctx.unique('sf')} {key}", tags=[x, y], type="procedural"))
    b = client.created(ctx, client.memory(ctx, "sf-b", content=f"{ctx.unique('sf')} {key}", tags=[x], type="procedural"))
    d = client.created(ctx, client.memory(ctx, "sf-d", content=f"{ctx.unique('sf')} {key}", tags=[x, y], type="episodic"))
    e = client.created(ctx, client.memory(ctx, "sf-e", content=f"{ctx.unique('sf')} {key}", tags=[], type="semantic"))
    every = {mem["id"] for mem in (a, b, d, e)}
    unfiltered = set(ids(search_body(ctx, {"q": key, "mode": "keyword", "limit": 100})["memories"]))
    controls.need(every <= unfiltered, "the four memories holding the word are not all found without filters: nothing to filter")
    model = Model.seeded([a, b, d, e], Readings(keyword_match="all-words"))  # q is one word: every keyword reading agrees
    query = {"q": key, "mode": "keyword", "type": "procedural", "limit": 100}
    hits = set(ids(search_body(ctx, query)["memories"]))
    (wanted,) = model.search_sets(Request("search", body=query)).values()
    if hits != wanted:
        yield Failure("search with type did not return exactly the matches of that type", sorted(hits), sorted(wanted), "$.memories")
    query = {"q": key, "mode": "keyword", "tags": [x, y], "limit": 100}
    seen = observe_search_tags(ctx, model, query, set(ids(search_body(ctx, query)["memories"])))
    if seen.failure:
        yield seen.failure
    query = {"q": key, "mode": "keyword", "type": "procedural", "tags": [y], "limit": 100}
    hits = set(ids(search_body(ctx, query)["memories"]))
    (wanted,) = model.search_sets(Request("search", body=query)).values()
    if hits != wanted:
        yield Failure("search with type and tags did not apply both", sorted(hits), sorted(wanted), "$.memories")


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='"namespace": "project:myapp", "limit": 10, "mode": "keyword"')
def search_limit_and_total(ctx: CheckContext) -> Iterator[Failure]:
    """limit caps the matches (default 20 like list, or 10 like the request example); total counts the
    matches before the limit, or, reading the example's 3 as what was returned, the page (errata O2).
    Each reading's prediction is the model's under that reading."""
    ds = dataset(ctx)
    for query, option, values, reading, title in (
            ({"q": ds["word"], "mode": "keyword"}, "search_default_limit", ("20", "10"), "search default limit {}",
             f"search without limit over {DATASET} matches did not return the default page"),
            ({"q": ds["word"], "mode": "keyword", "limit": 5}, "search_total", ("matches", "page"), "search total: {}",
             "search with limit 5: not 5 memories, or a total that is neither the matches nor the page")):
        seen = observe_pinned(ctx, ds["stored"], query, client.search(ctx, query), option, values, reading, title)
        if seen.failure:
            yield seen.failure


@SUITE.check(section="§3.3", keyword="MUST", level="core",
           sentence='semantic — vector similarity search (OPTIONAL, requires embeddings)')
def search_mode_used_honest(ctx: CheckContext) -> Iterator[Failure]:
    """A semantic or hybrid search may be refused at OMP-Core; served, its `mode_used` names what ran: the
    model says a page saying semantic or hybrid finds the memory sharing two of three query words (a
    keyword search presented as semantic does not), and a page saying keyword is a keyword page."""
    near, far, query, tag = overlap_pair(ctx)
    model = Model.seeded([near, far], Readings.from_options(ctx.option))
    refused: list[str] = []
    for mode in ("semantic", "hybrid"):
        body = {"q": query, "mode": mode, "tags": [client.run_tag(ctx), tag]}
        answer = client.search(ctx, body)
        failure = ask.judged(model, Request("search", body=body), answer, f"search {body}", "$.mode_used")
        if failure is not None:
            yield failure
        elif not answer.ok:
            yield from rules.error_failures(ctx, answer, None, None)  # an optional mode refused: the §4 envelope
            refused.append(f"{mode}: {answer.status}")
    if len(refused) == 2:
        raise SkipCheck(f"semantic and hybrid search are not offered ({', '.join(refused)}): optional at OMP-Core", not_applicable=True)
