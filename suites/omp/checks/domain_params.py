"""Request parameters drawn from the domain table (suites/omp/domain.json): every optional list and search
parameter alone and in pairwise combination with every other, mode and sort (a covering array: `ci`
each class once, `default` every pair); the other classes (unknown, empty, repeated, malformed, out of
range) each alone; every conflict strategy, known or not, on an id that exists; ids of every shape."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import quote

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, TargetError
from memconform.kit import domain
from memconform.suites.omp import client, controls, domain_data, root_causes, rules
from memconform.suites.omp import format as omp
from memconform.suites.omp.deviations import CONFLICT_FROM_BODY
from memconform.suites.omp.model import Filters, Model, Readings, Request
from memconform.suites.omp.suite import SUITE
from memconform.targets.base import Reply

DATASET = 48  # type (i mod 3) and tool, sub tag, namespace, astral tag (bits 0-3 of i): every combination of them holds
# one memory (48 = 16 x 3), and every combination of all but one at least two


# ---- the data set the parameters are judged on -------------------------------------------------

def _names(ctx: CheckContext) -> dict[str, str]:
    run = ctx.run_id
    word, word2 = client.word(), client.word()
    return {"tag": f"dt-{run}", "sub": f"dsub-{run}", "tag_prefix": f"dt-{run}"[:-3], "astral_tag": f"🚀-{run}",
            "tool": f"dtool-{run}", "other_tool": f"dtool2-{run}", "none": f"nobody-{run}", "namespace": f"project:d-{run}",
            "namespace_prefix": f"project:d-{run}"[:-3], "word": word, "word2": word2, "WORD": word.upper()}


def _dataset(ctx: CheckContext) -> dict[str, Any]:
    """48 memories in one import: known types, tools, tags and namespaces; read back from the export so
    that ids and timestamps are the target's own."""
    names = _names(ctx)
    memories = []
    for i in range(DATASET):
        tags = [names["tag"]] + ([names["sub"]] if (i // 2) % 2 == 0 else []) + ([names["astral_tag"]] if (i // 8) % 2 == 0 else [])
        mem = client.full_memory(ctx, f"dp{i}", type=omp.TYPES[i % 3], tool=names["tool"] if i % 2 == 0 else names["other_tool"],
                            created_at=f"2026-02-{1 + i // 2:02d}T{i % 24:02d}:{i % 2 * 30:02d}:00Z")
        mem["content"] += f" {names['word']} {names['word2']}"
        mem["tags"] = tags
        if (i // 4) % 2 == 0:
            mem["namespace"] = names["namespace"]
        memories.append(mem)
    answer = client.import_(ctx, client.export_file(memories))
    controls.need(answer.ok and isinstance(answer.body, dict) and answer.body.get("imported") == DATASET,
            f"the {DATASET}-memory data set could not be seeded by one import: {answer.brief()}")
    _touch_in_reverse(ctx, names["word"])
    stored = client.with_marker(client.exported(ctx), names["word"])
    if len(stored) != DATASET:
        raise TargetError(f"import reported {DATASET} memories imported, yet {len(stored)} are in the export")
    return {"names": names, "memories": stored}


def _touch_in_reverse(ctx: CheckContext, word: str) -> None:
    """Update every third memory, the oldest last: updated_at then orders them unlike created_at."""
    mine = sorted(client.with_marker(client.exported(ctx), word), key=lambda mem: str(mem.get("created_at")), reverse=True)
    for mem in mine[::3]:
        client.update(ctx, str(mem.get("id")), {"content": f"{mem.get('content')} (updated)"}, quiet=True).accepted_json(
            dict, "updating a memory of the data set")


def dataset(ctx: CheckContext) -> dict[str, Any]:
    return ctx.once("omp_domain_dataset", lambda: _dataset(ctx))


def raw_query(pairs: list[tuple[str, str]]) -> str:
    return "&".join(f"{quote(k, safe='')}={quote(v, safe='')}" for k, v in pairs)


def query_pairs(row: dict[str, domain.ValueClass], names: dict[str, str]) -> list[tuple[str, str]]:
    pairs: list[tuple[str, str]] = []
    for param, vc in row.items():
        value = vc.value()
        if value is domain.ABSENT:
            continue
        name = param.split(".", 1)[1]
        for one in (value if isinstance(value, list) else [value]):
            pairs.append((name, domain.fill(one, names)))
    return pairs


# ---- the list model ----------------------------------------------------------------------------

def matches(memories: list[dict[str, Any]], filters: dict[str, str]) -> list[dict[str, Any]]:
    """The memories the model's filters keep (suites/omp/model/: tags AND, comma-separated)."""
    fit = Filters(type=filters.get("type"), tool=filters.get("tool"), namespace=filters.get("namespace"),
                    tags=tuple(filters["tags"].split(",")) if "tags" in filters else ())
    return [mem for mem in memories if fit.fit(mem)]


def is_scoped(filters: dict[str, str], names: dict[str, str]) -> bool:
    """A filter only this data set can match: the page is then exactly predictable."""
    return any(filters.get(k, "").split(",")[0] in (names["tag"], names["sub"], names["tag_prefix"], names["astral_tag"], names["tool"],
                                                     names["other_tool"], names["none"], names["namespace"], names["namespace_prefix"])
               for k in ("tags", "tool", "namespace"))


def page_failures(label: str, answer: Reply, pairs: list[tuple[str, str]], ds: dict[str, Any],
                  readings: Readings | None = None) -> Iterator[Failure]:
    """A valid combination: the model's answer set (suites/omp/model/), exactly when a run-unique filter
    scopes the page; otherwise what the data set decides (every served memory fits the filters, at most
    limit, in order, the data set's memories as stored)."""
    filters = {k: v for k, v in pairs if k in ("type", "tool", "tags", "namespace")}
    model = Model.seeded(ds["memories"], readings, complete=is_scoped(filters, ds["names"]))
    reason = model.accepts(Request.list(pairs), answer)
    if reason is not None:
        yield Failure(f"{label}: {reason.title}", reason.received, reason.expected, "$.memories")


def root_caused(ctx: CheckContext, failure: Failure, pairs: list[tuple[str, str]], answer: Reply, ds: dict[str, Any]) -> Failure:
    """The failure, explained by a deviation another check established when the target's answers show it
    alone produced it: `sort` ignored (the page right in the default order, or its order failure a page in the
    default order), or tags applied after paging."""
    def judge(as_served: list[tuple[str, str]], same: Reply) -> Iterator[Failure]:
        return page_failures("", same, as_served, ds, Readings.from_options(ctx.option))

    failure = root_causes.explained_if_sort_ignored(ctx, failure, pairs, answer, judge)
    failure = root_causes.explained_if_order_from_sort_ignored(ctx, failure, pairs, answer)
    params = dict(pairs)
    if failure.explained_by or len(params) != len(pairs):
        return failure
    return root_causes.explained_if_tags_late(ctx, failure, params, answer)


def open_answer_failures(ctx: CheckContext, label: str, answer: Reply) -> Iterator[Failure]:
    """A value the spec is silent on: a 4xx with the envelope, or a page; never a 5xx."""
    if answer.ok:
        return
    for failure in rules.error_failures(ctx, answer, None, None):
        yield Failure(f"{label}: {failure.title}", failure.received, failure.expected, failure.path, failure.detail)


def served_ids(answer: Reply) -> set[Any] | None:
    body = answer.body if answer.ok and isinstance(answer.body, dict) else None
    if body is None or not isinstance(body.get("memories"), list):
        return None
    return {mem.get("id") for mem in body["memories"] if isinstance(mem, dict)}


def filter_readings(vc: domain.ValueClass, base: dict[str, str], ds: dict[str, Any]) -> dict[str, set[Any]]:
    """The pages a sane reading of one odd filter value serves on top of the scoped base (errata O9, O30):
    as absent, as a value matching nothing, and for a repeated one its first, last, any or every value."""
    names, mems = ds["names"], ds["memories"]
    name = vc.field.split(".", 1)[1]
    raw = vc.value()
    values = [domain.fill(v, names) for v in (raw if isinstance(raw, list) else [raw])]
    one = [{m["id"] for m in matches(mems, {**base, name: v})} for v in values]
    out = {"as absent": {m["id"] for m in matches(mems, base)}, "matching nothing": set()}
    if len(one) > 1:
        out |= {"first value": one[0], "last value": one[-1], "any value": set().union(*one), "every value": set.intersection(*one)}
    return out


def odd_page_failures(label: str, vc: domain.ValueClass, base: dict[str, str], served: set[Any], ds: dict[str, Any]) -> Iterator[Failure]:
    name = vc.field.split(".", 1)[1]
    if name in ("limit", "offset", "sort"):  # any sane page of the scoped memories
        scope = {m["id"] for m in matches(ds["memories"], base)}
        if not served <= scope:
            yield Failure(f"{label}: memories outside the filters", f"{len(served - scope)} others", "a page of the matching memories", "$.memories")
        if len(served) > omp.MAX_LIMIT:
            yield Failure(f"{label}: more than 100 memories served", len(served), "<= 100", "$.memories")
        return
    readings = filter_readings(vc, base, ds)
    if not any(served == want for want in readings.values()):
        yield Failure(f"{label}: the page fits none of the readings", f"{len(served)} memories",
                      {r: len(w) for r, w in readings.items()}, "$.memories")


def scoped_base(name: str, names: dict[str, str]) -> dict[str, str]:
    """The filters an odd class of `name` is asked on: the data set's tag, and the run's own tool (its own
    namespace when `tool` is the parameter under test), a filter a server applies in its query. A value that
    makes a server walk every memory of the key (a negative or huge `limit`) then reaches only this data
    set, never what another check or run stored (a `tags: null` memory an earlier import left made such a
    walk answer 500 on a server that serves the same request on a fresh store)."""
    own = {"tool": names["tool"]} if name != "tool" else {"namespace": names["namespace"]}
    return own if name == "tags" else {"tags": names["tag"], **own}


@SUITE.check(sweep=True, section="§3.3", keyword="MUST", level="core", sentence="List memories with optional filters.")
def domain_list_parameters(ctx: CheckContext) -> Iterator[Failure]:
    """GET /v1/memories: the valid classes of every parameter in a covering array (ci: each class once;
    default: every pair), each judged against the page the model computes; then each odd class alone
    (unknown, empty, repeated, malformed, out of range) on a base the run's own tag and tool scope
    (`scoped_base`): refused with the envelope or a page one reading serves, never a 5xx."""
    ds = dataset(ctx)
    table = domain_data.table()
    combo = "list_parameters"
    for row in domain.plan(table, combo, ctx.profile.name):
        pairs = query_pairs(row, ds["names"])
        answer = client.send(ctx, "GET", f"/memories?{raw_query(pairs)}", quiet=True)
        for failure in page_failures(f"GET /v1/memories?{raw_query(pairs)}", answer, pairs, ds, Readings.from_options(ctx.option)):
            yield root_caused(ctx, failure, pairs, answer, ds)
        domain_data.ledger(ctx).judge_row(combo, row)
    for param in table.combination(combo)["parameters"]:
        for vc in (v for v in table.field(param).classes if v.expect != "valid" or not v.combine):
            name = param.split(".", 1)[1]
            base = scoped_base(name, ds["names"])
            pairs = [*base.items(), *query_pairs({param: vc}, ds["names"]), *([("limit", "100")] if name != "limit" else [])]
            label = f"GET /v1/memories?{raw_query(pairs)} ({vc.key})"
            answer = client.send(ctx, "GET", f"/memories?{raw_query(pairs)}", quiet=True)
            if vc.expect == "valid":  # a value that matches nothing: the model's (empty) page
                for failure in page_failures(label, answer, pairs, ds, Readings.from_options(ctx.option)):
                    yield root_caused(ctx, failure, pairs, answer, ds)
                domain_data.ledger(ctx).judge([vc.key])
                continue
            yield from open_answer_failures(ctx, label, answer)
            served = served_ids(answer)
            if answer.ok and served is None:
                yield Failure(f"{label}: no memories array", answer.raw[:160], "a list page or a 4xx", "$.memories")
            elif served is not None:
                yield from odd_page_failures(label, vc, base, served, ds)
            domain_data.ledger(ctx).judge([vc.key])


def search_failures(label: str, answer: Reply, body: dict[str, Any], ds: dict[str, Any],
                    readings: Readings | None = None) -> Iterator[Failure]:
    """The model's answer set: a keyword search over the run's word holds exactly the data set's matches;
    another mode, answered, is held to its filters and limit (its ranking and reach are open)."""
    mode = body.get("mode", "keyword")
    if mode != "keyword" and not answer.ok:
        return  # an optional mode may be refused (its envelope is judged by open_answer_failures)
    if answer.status != 200 or not isinstance(answer.body, dict) or not isinstance(answer.body.get("memories"), list):
        yield Failure(f"{label}: not a 200 search page", answer.brief(), "200 with memories, total, mode_used", "$")
        return
    used = answer.body.get("mode_used")
    model = Model.seeded(ds["memories"], readings, complete=used == "keyword")
    reason = model.accepts(Request("search", body=body), answer)
    if reason is not None:
        yield Failure(f"{label}: {reason.title}", reason.received, reason.expected, "$.memories")


@SUITE.check(sweep=True, section="§3.3", keyword="MUST", level="core", sentence="Semantic or keyword search across memories.")
def domain_search_parameters(ctx: CheckContext) -> Iterator[Failure]:
    """POST /v1/memories/search: the valid classes of q, type, tags, namespace, limit and mode in a
    covering array, judged against the matching memories (keyword: exactly; another mode answered: the
    filters and limit; refused: the envelope); then each odd class alone; never a 5xx."""
    ds = dataset(ctx)
    table = domain_data.table()
    combo = "search_parameters"
    for row in domain.plan(table, combo, ctx.profile.name):
        body = _search_body(row, ds["names"])
        answer = client.search(ctx, body, quiet=True)
        label = f"search {body}"
        yield from open_answer_failures(ctx, label, answer)
        yield from search_failures(label, answer, body, ds, Readings.from_options(ctx.option))
        domain_data.ledger(ctx).judge_row(combo, row)
    base = {"search.q": table.field("search.q").cls("run_word")}
    for param in table.combination(combo)["parameters"]:
        for vc in (v for v in table.field(param).classes if v.expect != "valid"):
            body = _search_body({**base, param: vc}, ds["names"])
            answer = client.search(ctx, body, quiet=True)
            label = f"search {body} ({vc.key})"
            expect = domain_data.expectation(ctx, vc)
            if answer.status < 500:
                domain_data.observe_open(ctx, vc, answer.ok, 400 <= answer.status < 500, answer.brief())
            if expect == "invalid":
                for failure in rules.validation_failures(ctx, answer):
                    yield Failure(f"{label}: {failure.title}", failure.received, failure.expected, failure.path)
            elif expect == "valid" and not answer.ok:
                yield Failure(f"{label}: an allowed value was refused", answer.brief(), "200 and a search page", "$")
            else:
                yield from open_answer_failures(ctx, label, answer)
            domain_data.ledger(ctx).judge([vc.key])


def _search_body(row: dict[str, domain.ValueClass], names: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = {}
    for param, vc in row.items():
        value = vc.value()
        if value is not domain.ABSENT:
            body[param.split(".", 1)[1]] = domain.fill(value, names)
    if "q" in body and isinstance(body["q"], str) and names["word"] in body["q"] and body["q"] != names["word"]:
        body["q"] = f"{names['word']} {names['word2']}" if " " in body["q"] else body["q"]
    return body


# ---- conflict strategies on an id that exists --------------------------------------------------

def _import_raw(ctx: CheckContext, memories: list[dict[str, Any]], values: list[str] | None) -> Reply:
    """POST /v1/import with the strategy as the class gives it: absent, one value, or the parameter repeated."""
    doc = client.export_file(memories)
    if values is None:
        return client.import_(ctx, doc)
    if len(values) == 1:
        if ctx.option("conflict_in") == "both":
            doc["conflict"] = values[0]
        return client.import_(ctx, doc, values[0])
    return client.send(ctx, "POST", f"/import?{raw_query([('conflict', v) for v in values])}", body=doc, record=False)


def conflict_readings(values: list[str] | None) -> list[str]:
    """The strategies a sane server may apply for a class: absent is skip; an empty or case-variant value
    is read as absent or as that strategy; a repeated parameter as its first or last value."""
    if values is None:
        return ["skip"]
    if len(values) > 1:
        return [v for v in (values[0], values[-1]) if v in omp.CONFLICTS]
    value = values[0]
    if value in omp.CONFLICTS:
        return [value]
    if value == "":
        return ["skip"]
    if value.lower() in omp.CONFLICTS:
        return [value.lower()]
    return []


def strategy_seen(before: dict[str, Any], after: dict[str, Any] | None, rival: dict[str, Any], found: dict[str, int]) -> str | None:
    """Which strategy the stored state shows: the existing memory kept (skip, duplicate) or replaced (overwrite)."""
    if after is None:
        return None
    if after.get("content") == rival["content"]:
        return "overwrite"
    if after.get("content") == before.get("content"):
        return "duplicate" if found["rival"] == 1 else "skip" if found["rival"] == 0 else None
    return None


@SUITE.check(section="§3.3", keyword="MUST", level="core", sentence="conflict strategies (query param):")
def domain_conflict_on_existing_id(ctx: CheckContext) -> Iterator[Failure]:
    """Every class of `conflict` on a batch [new, an existing id with other content, new]: a known strategy
    applied; an unknown one 422 with nothing imported and the existing memory as it was; an empty,
    case-variant or repeated value refused, or applied as one sane reading; never a 5xx, never the
    existing memory lost."""
    for vc in domain_data.table().field("import.conflict").classes:
        existing = client.created(ctx, client.memory(ctx, f"dcf-{vc.id}"))
        before = client.get(ctx, existing["id"], quiet=True).accepted_json(dict, "reading the existing memory")
        rival = dict(client.full_memory(ctx, f"dcf-rival-{vc.id}"), id=existing["id"])
        news = [client.full_memory(ctx, f"dcf-new{i}-{vc.id}") for i in range(2)]
        value = vc.value()
        values = None if value is domain.ABSENT else value if isinstance(value, list) else [value]
        answer = _import_raw(ctx, [news[0], rival, news[1]], values)
        got = client.get(ctx, existing["id"], quiet=True)
        after = got.body if got.ok and isinstance(got.body, dict) else None
        contents = [str(m.get("content")) for m in client.exported(ctx)]
        found = {"rival": sum(rival["content"] in t for t in contents), "news": sum(any(n["content"] in t for t in contents) for n in news)}
        label = f"import with {vc.key} = {value!r} on an existing id"
        if after is None:
            yield Failure(f"{label}: the existing memory was lost", got.brief(), "the memory, kept or overwritten", "$")
        if answer.status >= 500:
            yield Failure(f"{label}: a server error", answer.status, "200, or a 4xx with nothing imported", "$",
                          answer.raw[:160].decode("utf-8", "replace"))
        elif not answer.ok:
            yield from _refused(ctx, label, vc, answer, before, after, found)
        else:
            seen = strategy_seen(before, after, rival, found)
            allowed = conflict_readings(values)
            if seen not in allowed:
                failure = Failure(f"{label}: the stored state fits none of the strategies this value may mean", seen or "another state",
                                  allowed or "a 4xx (not a strategy)", "$.memories")
                # a known strategy sent only in the query, to a server seen reading it from the body only
                read_elsewhere = vc.expect == "valid" and ctx.option("conflict_in") == "query"
                yield established.explained(ctx, failure, CONFLICT_FROM_BODY) if read_elsewhere else failure
            if found["news"] != 2:
                yield Failure(f"{label}: the new memories beside it were not both imported", found["news"], 2, "$.memories")
        domain_data.ledger(ctx).judge([vc.key])


def _refused(ctx: CheckContext, label: str, vc: domain.ValueClass, answer: Reply, before: dict[str, Any],
             after: dict[str, Any] | None, found: dict[str, int]) -> Iterator[Failure]:
    if vc.expect == "valid":
        yield Failure(f"{label}: a known strategy was refused", answer.brief(), "200", "$")
    failures = rules.validation_failures(ctx, answer) if vc.expect == "invalid" else rules.error_failures(ctx, answer, None, None)
    for failure in failures:
        yield Failure(f"{label}: {failure.title}", failure.received, failure.expected, failure.path)
    if found["news"] or found["rival"]:
        yield Failure(f"{label}: a refused import stored memories", found, "nothing imported", "$.memories")
    if after is not None and after.get("content") != before.get("content"):
        yield Failure(f"{label}: a refused import changed the existing memory", str(after.get("content"))[:80],
                      str(before.get("content"))[:80], "$.content")


@SUITE.check(section="§3.3", keyword="MUST", level="core", sentence='Response 404 Not Found: { "error": "memory_not_found" }')
def domain_memory_ids(ctx: CheckContext) -> Iterator[Failure]:
    """GET, PUT and DELETE of ids of every class: a well-formed id never stored is 404 memory_not_found;
    a malformed one 404 or another 4xx with the envelope; never a 5xx."""
    for vc in domain_data.table().field("memory_path.id").classes:
        mem_id = domain_data.fresh_id(vc, vc.value())  # "never stored": the class's shape, letters of this run
        for method, body in (("GET", None), ("PUT", {"content": "never applied"}), ("DELETE", None)):
            answer = client.send(ctx, method, f"/memories/{mem_id}", body=body, quiet=True)
            label = f"{method} /v1/memories/{mem_id} ({vc.key})"
            failures = rules.error_failures(ctx, answer, 404, "memory_not_found") if vc.expect == "valid" else rules.error_failures(ctx, answer, None, None)
            for failure in failures:
                yield Failure(f"{label}: {failure.title}", failure.received, failure.expected, failure.path)
        domain_data.ledger(ctx).judge([vc.key])
