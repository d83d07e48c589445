"""The rows of OMP's table of readings (readings.py) for the open points the example checks and the model
meet: keyword search and its paging (O2), an invalid memory in an import (O7), namespace null on update (O8),
limit=101 and a bad list fixture (O9), an expired memory (O14), another tool's memory (O17), chars at the
limit (O19), created_at on import (O26), empty and repeated list parameters (O30), and the open classes of
the domain table (O36, O37, O52, O53).

A row's request is the form its checks meet the point in (a `Modelled` request the model judges in a state,
an import batch, a value class...), and its prediction runs the checks' own observation on a context that
only records (`Scratch`): the reading a row predicts is the reading the check records, never a second copy.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from memconform.core.readings import Reading
from memconform.suites.omp import model
from memconform.suites.omp.example_requests import (  # noqa: F401  rows and tests name them here too
    STAMP,
    BadListFixture,
    CreatedAtKept,
    Expired,
    ForeignMemory,
    ImportBatch,
    KeywordSearch,
    Modelled,
    OpenClass,
    PinnedSearch,
    Scratch,
    TagSearch,
    doc,
    ids,
    newest,
    page,
    reply,
    seen_by,
)
from memconform.targets.base import Reply


def predicted(kind: type, name: str) -> tuple[Callable[[Any], bool], Callable[[Any, Any], bool]]:
    """(meets, predicts) of a row: the request is of `kind`, and its checks' observation records `name`."""
    return (lambda request: isinstance(request, kind),
            lambda request, answer: name in request.readings(answer))


def row(point: str, name: str, kind: type, checks: tuple[str, ...], example: tuple[Any, Any], wrong: Any,
        accepted: Callable[[model.Readings], bool] = lambda pins: True, meets: Callable[[Any], bool] | None = None) -> Reading:
    met, predicts = predicted(kind, name)
    return Reading(point, name, meets=(lambda r: met(r) and meets(r)) if meets else met, predicts=predicts,
                   accepted=accepted, checks=checks, example=example, wrong=wrong)


def allows(option: str, value: str) -> Callable[[model.Readings], bool]:
    return lambda pins: pins.allows(option, value)


def modelled(point: str) -> Callable[[Any], bool]:
    return lambda request: request.point == point


# ---- the examples -------------------------------------------------------------------------------------

KEYWORD_DOCS = (("phrase", doc(1, content="kw beta then alpha beta")), ("apart", doc(2, content="kw beta far from alpha")),
                ("one", doc(3, content="kw only alpha")), ("none", doc(4, content="kw only gamma")))
KEYWORDS = KeywordSearch(KEYWORD_DOCS, {"q": "alpha beta", "mode": "keyword", "limit": 100})


def keyword_page(*names: str) -> Reply:
    return page(newest(d for n, d in KEYWORD_DOCS if n in names), total=len(names), mode_used="keyword")


TAG_DOCS = (doc(1, tags=["x", "y"]), doc(2, tags=["x"]), doc(3, tags=[]))
TAGS = TagSearch(TAG_DOCS, {"q": "common", "mode": "keyword", "tags": ["x", "y"], "limit": 100})
MANY = tuple(doc(i) for i in range(30))


def tag_page(*docs: dict[str, Any]) -> Reply:
    return page(newest(docs), total=len(docs), mode_used="keyword")

DEFAULT_LIMIT = PinnedSearch(MANY, {"q": "common", "mode": "keyword"}, "search_default_limit", ("20", "10"),
                             "search default limit {}")
TOTAL = PinnedSearch(MANY, {"q": "common", "mode": "keyword", "limit": 5}, "search_total", ("matches", "page"),
                     "search total: {}")


def many_page(n: int, total: int) -> Reply:
    return page(newest(MANY)[:n], total=total, mode_used="keyword")


NS_DOC = doc(1, namespace="project:a")
NAMESPACE_NULL = Modelled("O8", model.Request("update", id=NS_DOC["id"], body={"namespace": None}), (NS_DOC,), read_back=True)
CLEARED = {k: v for k, v in NS_DOC.items() if k != "namespace"} | {"updated_at": "2026-02-01T00:00:00Z"}
HUNDRED_AND_ONE = tuple(doc(i) for i in range(101))
LIMIT_101 = Modelled("O9", model.Request.list({"tags": "all", "limit": "101"}), HUNDRED_AND_ONE, pins=("limit_over_max",))
LIMIT_ABC = BadListFixture({"id": "list-limit-abc", "document": {"method": "GET", "path": "/memories", "params": {"limit": "abc"}}})
LISTED = tuple(doc(i, tags=["all"] + (["a"] if i % 2 == 0 else []) + (["b"] if i % 3 == 0 else [])) for i in range(12))


def listed(query: list[tuple[str, str]]) -> Modelled:
    return Modelled("O30", model.Request.list(query), LISTED, pins=("bad_params",))


def with_tags(*tags: str) -> list[dict[str, Any]]:
    return newest(d for d in LISTED if set(tags) <= set(d["tags"]))


EMPTY_TYPE = listed([("tags", "all"), ("type", ""), ("limit", "100")])
REPEATED_TAGS = listed([("tags", "a"), ("tags", "b"), ("limit", "100")])
EMPTY_LIMIT = listed([("tags", "all"), ("limit", "")])
REFUSAL = reply(422, {"error": "validation_error", "message": "refused"})
SERVER_ERROR = reply(500, {"error": "internal_error", "message": "failed"})

SEARCHES = ("model",)  # domain_search_parameters and model_based_sequences ask the model for every search
LISTINGS = ("model",)  # domain_list_parameters and model_based_sequences ask it for every list
WRITES = ("domain_create_every_class", "domain_update_every_class", "domain_import_every_class")
FULL_TOOL_KEYS = ("tool_key_forbidden_other_read", "tool_key_forbidden_other_write")


def _not_rejecting(pins: model.Readings) -> bool:
    return pins.bad_params != "reject"


def _served_unless_rejecting(name: str) -> Callable[[model.Readings], bool]:
    """A refusal is accepted whatever the pins; a parameter served is not under bad_params=reject."""
    return (lambda pins: True) if name.endswith("refused with a 4xx") else _not_rejecting


ROWS = [
    # O2: what keyword search matches (search_keyword_all_words; the model for every search)
    *(row("O2", f"keyword match: {name}", KeywordSearch, ("search_keyword_all_words", *SEARCHES), (KEYWORDS, keyword_page(*found)),
          keyword_page("phrase", "one"), accepted=allows("keyword_match", name))
      for name, found in (("all-words", ("phrase", "apart")), ("substring", ("phrase",)),
                          ("any-word", ("phrase", "apart", "one")))),
    # O2: search tags, default limit, total (search_filters, search_limit_and_total)
    row("O2", "search tags: all", TagSearch, ("search_filters", *SEARCHES), (TAGS, tag_page(TAG_DOCS[0])), tag_page(*TAG_DOCS),
        accepted=allows("search_tags_match", "all")),
    row("O2", "search tags: any", TagSearch, ("search_filters", *SEARCHES), (TAGS, tag_page(*TAG_DOCS[:2])), tag_page(*TAG_DOCS),
        accepted=allows("search_tags_match", "any")),
    row("O2", "search default limit 20", PinnedSearch, ("search_limit_and_total", *SEARCHES), (DEFAULT_LIMIT, many_page(20, 30)),
        many_page(15, 30), accepted=allows("search_default_limit", "20"), meets=lambda r: r.option == "search_default_limit"),
    row("O2", "search default limit 10", PinnedSearch, ("search_limit_and_total", *SEARCHES), (DEFAULT_LIMIT, many_page(10, 30)),
        many_page(15, 30), accepted=allows("search_default_limit", "10"), meets=lambda r: r.option == "search_default_limit"),
    row("O2", "search total: matches", PinnedSearch, ("search_limit_and_total", *SEARCHES), (TOTAL, many_page(5, 30)),
        many_page(5, 7), accepted=allows("search_total", "matches"), meets=lambda r: r.option == "search_total"),
    row("O2", "search total: page", PinnedSearch, ("search_limit_and_total", *SEARCHES), (TOTAL, many_page(5, 5)),
        many_page(5, 7), accepted=allows("search_total", "page"), meets=lambda r: r.option == "search_total"),
    # O7: one invalid memory in an import
    row("O7", "invalid memory reported, the rest imported", ImportBatch, ("import_bad_memory_reported",),
        (ImportBatch(), (reply(200, {"imported": 2, "skipped": 0, "errors": [{"index": 1, "error": "validation_error"}]}), 2)),
        (reply(200, {"imported": 2, "skipped": 0, "errors": []}), 2)),
    row("O7", "whole file refused", ImportBatch, ("import_bad_memory_reported",), (ImportBatch(), (REFUSAL, 0)),
        (REFUSAL, 1)),
    # O8: namespace null on update, judged with the read that follows (update_clears_nullable; the model)
    row("O8", "namespace null clears it", Modelled, ("update_clears_nullable", "model"),
        (NAMESPACE_NULL, (reply(200, CLEARED), reply(200, CLEARED))), (reply(200, CLEARED), reply(200, NS_DOC)),
        meets=modelled("O8")),
    row("O8", "namespace null refused, nothing changed", Modelled, ("update_clears_nullable", "model"),
        (NAMESPACE_NULL, (REFUSAL, reply(200, NS_DOC))), (REFUSAL, reply(200, CLEARED)), meets=modelled("O8")),
    # O9: limit=101 (list_limit_max_100; the model), a bad list fixture (list_rejects_bad_paging)
    row("O9", "limit=101 clamped", Modelled, ("list_limit_max_100", *LISTINGS),
        (LIMIT_101, page(newest(HUNDRED_AND_ONE)[:100], total=101, limit=100, offset=0)),
        page(newest(HUNDRED_AND_ONE)[:100], total=101, limit=101, offset=0), accepted=allows("limit_over_max", "clamp"),
        meets=modelled("O9")),
    row("O9", "limit=101 refused", Modelled, ("list_limit_max_100", *LISTINGS), (LIMIT_101, REFUSAL),
        page(newest(HUNDRED_AND_ONE), total=101, limit=101, offset=0), accepted=allows("limit_over_max", "reject"),
        meets=modelled("O9")),
    row("O9", "list-limit-abc: served as a sane page", BadListFixture, ("list_rejects_bad_paging",),
        (LIMIT_ABC, page([doc(1)], total=1, limit=20, offset=0)), page([{"junk": True}] * 3), accepted=_not_rejecting),
    row("O9", "list-limit-abc: refused with a 4xx", BadListFixture, ("list_rejects_bad_paging",), (LIMIT_ABC, REFUSAL),
        SERVER_ERROR),
    # O14: an expired memory
    row("O14", "an expired memory is no longer served", Expired, ("domain_update_every_class",),
        (Expired(), reply(404, {"error": "memory_not_found", "message": "gone"})), reply(404, {"error": "gone"})),
    row("O14", "an expired memory is still served", Expired, ("domain_update_every_class",),
        (Expired(), reply(200, doc(1, expires_at="2001-01-01T00:00:00Z"))), SERVER_ERROR),
    # O17: another tool's memory through a per-tool key
    row("O17", "another tool's memory answers 403", ForeignMemory, FULL_TOOL_KEYS,
        (ForeignMemory(), reply(403, {"error": "forbidden", "message": "another tool"})), reply(200, doc(1)),
        accepted=allows("tool_key_status", "403")),
    row("O17", "another tool's memory answers 404", ForeignMemory, FULL_TOOL_KEYS,
        (ForeignMemory(), reply(404, {"error": "memory_not_found", "message": "no such memory"})), reply(200, doc(1)),
        accepted=allows("tool_key_status", "404")),
    # O26: created_at on import (the listing checks' seeding)
    row("O26", "import keeps created_at", CreatedAtKept, ("listing_dataset",), (CreatedAtKept(), 101), 40),
    row("O26", "import stamps created_at", CreatedAtKept, ("listing_dataset",), (CreatedAtKept(), 0), 40),
    # O30: empty and repeated list parameters (list_empty_and_repeated_parameters; the model)
    *(row("O30", name, Modelled, ("list_empty_and_repeated_parameters", *LISTINGS), (request, answer), wrong,
          accepted=_served_unless_rejecting(name),
          meets=modelled("O30"))
      for name, request, answer, wrong in (
          ("empty type: refused with a 4xx", EMPTY_TYPE, REFUSAL, page(with_tags("all")[:5], total=5, limit=100, offset=0)),
          ("empty type: served as absent", EMPTY_TYPE, page(with_tags("all"), total=12, limit=100, offset=0),
           page(with_tags("all")[:5], total=5, limit=100, offset=0)),
          ("empty type: served as a value matching nothing", EMPTY_TYPE, page([], total=0, limit=100, offset=0),
           page(with_tags("all")[:5], total=5, limit=100, offset=0)),
          ("repeated tags: all values (AND)", REPEATED_TAGS, page(with_tags("a", "b"), total=2, limit=100, offset=0),
           page(with_tags("all"), total=12, limit=100, offset=0)),
          ("repeated tags: last value", REPEATED_TAGS, page(with_tags("b"), total=4, limit=100, offset=0),
           page(with_tags("all"), total=12, limit=100, offset=0)),
          ("repeated tags: first value", REPEATED_TAGS, page(with_tags("a"), total=6, limit=100, offset=0),
           page(with_tags("all"), total=12, limit=100, offset=0)),
          ("empty limit: served as 10", EMPTY_LIMIT, page(with_tags("all")[:10], total=12, limit=10, offset=0), SERVER_ERROR))),
    # O36, O37, O52, O53: open classes of the domain table, written alone (the domain sweeps)
    *(row(point, name, OpenClass, WRITES, (OpenClass(key), answer), reply(302), meets=lambda r, k=key: r.key == k)  # type: ignore[misc]
      for point, key, name, answer in (
          ("O36", "memory.source.timestamp:absent", "source.timestamp left out: stamped by the server", reply(201, doc(1))),
          ("O36", "memory.source.timestamp:absent", "source.timestamp left out: refused", REFUSAL),
          ("O37", "memory.metadata:null", "null on an optional field: read as absent", reply(201, doc(1))),
          ("O52", "memory.source.timestamp:utc_offset", "UTC written +00:00: read as UTC", reply(201, doc(1))),
          ("O52", "memory.source.timestamp:utc_offset", "UTC written +00:00: refused (Z only)", REFUSAL),
          ("O53", "memory.expires_at:no_zone", "a timestamp in another form: stored as the same instant", reply(201, doc(1))),
          ("O53", "memory.created_at:date_only", "a timestamp in another form: refused", REFUSAL))),
]

