"""Open Memory Protocol v0.1 suite: the SuiteSpec and the OMP-Core checks of §2, §3.3 and §4.

Bad input (bad_input.py), concurrent writers (concurrency.py), OMP-Search/Full (levels.py) and the
0.2 AI endpoints and §7 (security.py) register from their own modules, imported at the end. Every
memory the suite writes carries `ctx.unique(...)` content and the run tag, so the suite works on a
non-empty instance; readings of ambiguous text are in errata/omp.md (O1..).
"""

from __future__ import annotations

from collections.abc import Iterator
from functools import partial
from typing import Any

from memconform.core.model import Failure, HarnessError, TargetError
from memconform.core.registry import check
from memconform.core.suite import Level, SuiteSpec, register_suite
from memconform.formats import omp
from memconform.targets.http import HttpTarget

from . import client as c
from . import rules


def declared_level(body: Any) -> str | None:
    """The level /v1/health names in the first of compliance / compliance_level / level (errata O4)."""
    if not isinstance(body, dict):
        return None
    for name in omp.HEALTH_LEVEL_FIELDS:
        value = body.get(name)
        if isinstance(value, str):
            for title, key in omp.LEVEL_NAMES.items():
                if value.strip().lower() in (title.lower(), key):
                    return key
    return None


def claimed_levels(ctx: Any) -> set[str] | None:
    """Levels are cumulative: OMP-Full implies OMP-Search implies OMP-Core. The AI and §7 checks always apply."""
    if not isinstance(ctx.target, HttpTarget):
        return None  # every check then says it needs an http:// target
    answer = c.health(ctx)
    level = declared_level(answer.body)
    if level is None and ctx.option("assume_level") != "none":
        level = ctx.option("assume_level")
        ctx.cache["omp_level_note"] = f"health names no level; option assume_level={level} applies"
    elif level is None:
        ctx.cache["omp_level_note"] = "health names no level: only the OMP-Core checks run (option omp.assume_level)"
    else:
        ctx.cache["omp_level_note"] = f"health declares {level!r}"
    upto = omp.LEVEL_ORDER.index(level) + 1 if level else 1
    return {*omp.LEVEL_ORDER[:upto], "ai", "security"}


def preflight(ctx: Any) -> None:
    """A missing or refused global key would turn every check into noise: say so once, up front."""
    if not isinstance(ctx.target, HttpTarget):
        return  # every check says it needs an http:// target
    if not ctx.target.api_key:
        raise HarnessError("OMP needs the target's global API key (§3.2): pass --api-key or set MEMCONFORM_API_KEY")
    answer = c.send(ctx, "GET", "/memories", params={"limit": "1"}, record=False, quiet=True)
    if answer.status == 401:
        raise HarnessError(f"the target refuses the given API key: GET /v1/memories?limit=1 answered 401 "
                           f"{answer.raw[:120]!r}; pass the right one with --api-key")


SUITE = register_suite(SuiteSpec(
    name=omp.SUITE,
    spec_title=omp.SPEC,
    version=omp.VERSION,
    levels=[
        Level("core", "OMP-Core"),
        Level("search", "OMP-Search", requires=("core",)),
        Level("full", "OMP-Full", requires=("search",)),
        Level("ai", "0.2 extract/compress (no AI key configured)"),
        Level("security", "§7 Security considerations"),
    ],
    claimed_levels=claimed_levels,
    run_notes=c.run_notes,
    preflight=preflight,
))

omp_check = partial(check, suite=omp.SUITE, spec=omp.SPEC)


# ---- a sample of memories as the target returns them, for the §2.1 rules ------------------------

def _sample(ctx: Any) -> list[tuple[str, dict[str, Any]]]:
    """One rich memory as create, get, list, search and export return it."""
    key = c.word()
    request = c.memory(ctx, "sample", content=f"{ctx.unique('sample')} {key} — ✓ 記憶", type="procedural",
                       tags=["sample"], namespace=f"project:{ctx.run_id}", expires_at=c.now_iso(86400 * 365),
                       metadata={"memconform_run": ctx.run_id, "n": 1, "nested": {"a": [1, None]}})
    request["source"]["session_id"] = "memconform-session"
    made = c.created(ctx, request)
    out = [("$(create)", made)]
    got = c.ok_json(c.get(ctx, made["id"]), dict, "getting the sample memory")
    out.append(("$(get)", got))
    out += [("$(list).memories[?]", m) for m in c.listed(ctx, {"tags": c.run_tag(ctx) + ",sample"}) if m.get("id") == made["id"]]
    out += [("$(search).memories[?]", m) for m in c.found(ctx, {"q": key, "mode": "keyword"}) if m.get("id") == made["id"]]
    out += [("$(export).memories[?]", m) for m in c.exported(ctx) if m.get("id") == made["id"]]
    ctx.cache["omp_sample_request"] = request
    return out


def sample(ctx: Any) -> list[tuple[str, dict[str, Any]]]:
    return ctx.once("omp_sample", lambda: _sample(ctx))


def _each(ctx: Any, rule: Any) -> Iterator[Failure]:
    for where, mem in sample(ctx):
        yield from rule(mem, where)


@omp_check(section="§2.1", keyword="MUST", level="core",
           sentence='id: string // Unique ID, format: "mem_" + 16 char alphanumeric')
def memory_id_format(ctx: Any) -> Iterator[Failure]:
    yield from _each(ctx, rules.id_failures)


@omp_check(section="§2.1", keyword="MUST", level="core",
           sentence="content: string // The memory text. Plain natural language. Max 10,000 chars. type: MemoryType (see §2.2)")
def memory_content_and_type(ctx: Any) -> Iterator[Failure]:
    yield from _each(ctx, rules.content_type_failures)


@omp_check(section="§2.1", keyword="MUST", level="core",
           sentence="tags: string[] // Max 20 tags, 50 chars each. namespace?: string // Max 100 chars. "
                    "metadata?: Record<string, unknown> // Max 10 keys, values must be JSON-serialisable")
def memory_tags_namespace_metadata(ctx: Any) -> Iterator[Failure]:
    yield from _each(ctx, rules.organisation_failures)


@omp_check(section="§2.1", keyword="MUST", level="core",
           sentence="created_at: string // ISO 8601 UTC timestamp; updated_at: string // ISO 8601 UTC timestamp; "
                    "expires_at: string | null // ISO 8601 UTC or null (never expires)")
def memory_timestamps_utc(ctx: Any) -> Iterator[Failure]:
    yield from _each(ctx, rules.timestamp_failures)


@omp_check(section="§2.3", keyword="MUST", level="core",
           sentence="MemorySource { tool: string // Identifier of the tool that created this memory; "
                    "timestamp: string // ISO 8601 UTC — when this memory was observed }")
def memory_source_object(ctx: Any) -> Iterator[Failure]:
    yield from _each(ctx, rules.source_failures)


def _same_instant(a: Any, b: Any) -> bool:
    return a == b or (rules.instant(a) is not None and rules.instant(a) == rules.instant(b))


def echo_failures(request: dict[str, Any], mem: dict[str, Any], where: str) -> Iterator[Failure]:
    for name in ("content", "type", "namespace", "metadata"):
        if name in request and mem.get(name) != request[name]:
            yield Failure(f"{name} is not what was written", mem.get(name, "<absent>"), request[name], f"{where}.{name}")
    if "tags" in request and sorted(mem.get("tags") or []) != sorted(request["tags"]):
        yield Failure("tags are not what was written", mem.get("tags"), request["tags"], f"{where}.tags")
    if "expires_at" in request and not _same_instant(mem.get("expires_at"), request["expires_at"]):
        yield Failure("expires_at is not what was written", mem.get("expires_at", "<absent>"), request["expires_at"], f"{where}.expires_at")
    source: dict[str, Any] = mem["source"] if isinstance(mem.get("source"), dict) else {}
    for name, value in request.get("source", {}).items():
        same = _same_instant(source.get(name), value) if name == "timestamp" else source.get(name) == value
        if not same:
            yield Failure(f"source.{name} is not what was written", source.get(name, "<absent>"), value, f"{where}.source.{name}")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="POST /v1/memories: Create a new memory. Response 201 Created: the memory as written, with its id")
def create_returns_201(ctx: Any) -> Iterator[Failure]:
    request = c.memory(ctx, "create", tags=["create"])
    answer = c.create(ctx, request)
    if answer.status != 201:
        yield Failure("create did not answer 201 Created", answer.status, 201, "$")
    if not answer.ok or not isinstance(answer.body, dict):
        yield Failure("create answered no memory object", answer.raw[:200], "the created Memory", "$")
        return
    yield from echo_failures(request, answer.body, "$(create)")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="Every read returns the memory as it was written: GET /v1/memories/:id, list, search and export (§2.1)")
def memory_reads_as_written(ctx: Any) -> Iterator[Failure]:
    points = sample(ctx)
    request = ctx.cache["omp_sample_request"]
    seen = {where.split(".")[0] for where, _ in points}
    for where in ("$(get)", "$(list)", "$(search)", "$(export)"):
        if where not in seen:
            yield Failure(f"the memory just written is missing from {where[2:-1]}", "absent", request["content"], where)
    for where, mem in points:
        yield from echo_failures(request, mem, where)


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence='GET /v1/memories/:id: Response 404 Not Found: { "error": "memory_not_found" }')
def get_unknown_id_404(ctx: Any) -> Iterator[Failure]:
    yield from rules.error_failures(c.get(ctx, c.new_id()), 404, "memory_not_found")


# ---- list ---------------------------------------------------------------------------------------

DATASET = 101  # one more than the maximum page


def _dataset(ctx: Any) -> dict[str, Any]:
    """101 memories in one import, with known types, tools, tags, namespaces and distinct created_at."""
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
    ds["memories"] = memories
    report = c.ok_json(c.import_(ctx, c.export_file(memories)), dict, "importing the 101-memory data set")
    if report.get("imported") != DATASET:
        raise TargetError(f"importing 101 new memories imported {report.get('imported')!r}: {report!r:.300}")
    return ds


def dataset(ctx: Any) -> dict[str, Any]:
    return ctx.once("omp_dataset", lambda: _dataset(ctx))


def count(ds: dict[str, Any], test: Any) -> int:
    return sum(1 for m in ds["memories"] if test(m))


def page(ctx: Any, params: dict[str, str]) -> dict[str, Any]:
    body: dict[str, Any] = c.ok_json(c.list_(ctx, params), dict, f"listing {params}")
    if not isinstance(body.get("memories"), list):
        raise TargetError(f"a list answer has no memories array: {body!r:.200}")
    return body


def ids(memories: list[Any]) -> list[Any]:
    return [m.get("id") for m in memories if isinstance(m, dict)]


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence='GET /v1/memories: Response 200 OK: { "memories": [...], "total": 142, "limit": 20, "offset": 0 }')
def list_response_shape(ctx: Any) -> Iterator[Failure]:
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


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="limit integer: Max results (default 20, max 100)")
def list_default_limit_20(ctx: Any) -> Iterator[Failure]:
    body = page(ctx, {"tags": dataset(ctx)["tag"]})
    if len(body["memories"]) != omp.DEFAULT_LIMIT:
        yield Failure("without limit the page does not hold 20 memories (101 match)", len(body["memories"]), 20, "$.memories")
    if body.get("limit") != omp.DEFAULT_LIMIT:
        yield Failure("without limit the answer does not say limit 20", body.get("limit", "<absent>"), 20, "$.limit")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="limit integer: Max results (default 20, max 100)")
def list_limit_max_100(ctx: Any) -> Iterator[Failure]:
    tag = dataset(ctx)["tag"]
    body = page(ctx, {"tags": tag, "limit": "100"})
    if len(body["memories"]) != omp.MAX_LIMIT:
        yield Failure("limit=100 over 101 matches does not give 100 memories", len(body["memories"]), 100, "$.memories")
    answer = c.list_(ctx, {"tags": tag, "limit": "101"})
    if ctx.option("limit_over_max") == "reject":
        yield from rules.validation_failures(answer)
    elif answer.status >= 300 or not isinstance(answer.body, dict):
        yield Failure("limit=101 was not served as 100 (option limit_over_max=clamp)", answer.status, 200, "$")
    else:
        served = answer.body.get("memories") or []
        if len(served) > omp.MAX_LIMIT or answer.body.get("limit") != omp.MAX_LIMIT:
            yield Failure("limit=101 was not clamped to 100", f"{len(served)} memories, limit {answer.body.get('limit')}", "100, limit 100", "$.limit")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="offset integer: Pagination offset")
def list_offset_pages(ctx: Any) -> Iterator[Failure]:
    tag = dataset(ctx)["tag"]
    base = {"tags": tag, "sort": "created_at_asc"}
    whole = ids(page(ctx, {**base, "limit": "20"})["memories"])
    first = page(ctx, {**base, "limit": "10", "offset": "0"})
    second = page(ctx, {**base, "limit": "10", "offset": "10"})
    if ids(first["memories"]) + ids(second["memories"]) != whole:
        yield Failure("offset 0 and offset 10 (limit 10) are not the first 20 in order", ids(second["memories"])[:3], whole[10:13], "$.memories")
    if second.get("offset") != 10:
        yield Failure("offset is not echoed (errata O3)", second.get("offset", "<absent>"), 10, "$.offset")
    beyond = page(ctx, {**base, "offset": "500"})
    if beyond["memories"]:
        yield Failure("an offset past the last match still returns memories", len(beyond["memories"]), 0, "$.memories")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence='GET /v1/memories: "total": the number of memories matching the filters, whatever limit and offset (errata O3)')
def list_total_counts_matches(ctx: Any) -> Iterator[Failure]:
    ds = dataset(ctx)
    for params, wanted in (({"tags": ds["tag"], "limit": "5", "offset": "3"}, DATASET),
                           ({"tags": ds["b"], "limit": "2"}, count(ds, lambda m: ds["b"] in m["tags"]))):
        body = page(ctx, params)
        if body.get("total") != wanted:
            yield Failure(f"total is not the number of matches for {params}", body.get("total", "<absent>"), wanted, "$.total")


def filter_failures(ctx: Any, params: dict[str, str], test: Any, wanted: list[dict[str, Any]], what: str) -> Iterator[Failure]:
    body = page(ctx, {**params, "limit": "100"})
    wrong = [m.get("content", "")[:60] for m in body["memories"] if not test(m)]
    if wrong:
        yield Failure(f"the {what} filter returned memories that do not match", wrong[:3], f"only memories with {params}", "$.memories")
    missing = sorted(set(ids(wanted)) - set(ids(body["memories"])))
    if missing:
        yield Failure(f"the {what} filter left out matching memories", f"{len(missing)} missing, e.g. {missing[0]}", f"all {len(wanted)}", "$.memories")


@omp_check(section="§3.3", keyword="MUST", level="core", sentence="type string: Filter by memory type")
def list_filter_type(ctx: Any) -> Iterator[Failure]:
    ds = dataset(ctx)
    wanted = [m for m in ds["memories"] if m["type"] == "procedural"]
    yield from filter_failures(ctx, {"tags": ds["tag"], "type": "procedural"}, lambda m: m.get("type") == "procedural", wanted, "type")


@omp_check(section="§3.3", keyword="MUST", level="core", sentence="tool string: Filter by source tool")
def list_filter_tool(ctx: Any) -> Iterator[Failure]:
    ds = dataset(ctx)
    wanted = [m for m in ds["memories"] if m["source"]["tool"] == ds["tool"]]
    yield from filter_failures(ctx, {"tool": ds["tool"]}, lambda m: (m.get("source") or {}).get("tool") == ds["tool"], wanted, "tool")


@omp_check(section="§3.3", keyword="MUST", level="core", sentence="tags string: Comma-separated tags (AND logic)")
def list_filter_tags_and(ctx: Any) -> Iterator[Failure]:
    ds = dataset(ctx)
    both = [m for m in ds["memories"] if ds["a"] in m["tags"] and ds["b"] in m["tags"]]
    yield from filter_failures(ctx, {"tags": f"{ds['a']},{ds['b']}"},
                               lambda m: {ds["a"], ds["b"]} <= set(m.get("tags") or []), both, "tags (AND)")


def _order_failures(memories: list[dict[str, Any]], field: str, descending: bool, sort: str) -> Iterator[Failure]:
    read = [rules.instant(m.get(field)) for m in memories]
    stamps = [t for t in read if t is not None]
    if len(stamps) != len(read):
        yield Failure(f"sort={sort}: a memory has no readable {field}", [m.get(field) for m in memories][:3], "ISO 8601 UTC", f"$.memories[*].{field}")
        return
    pairs = list(zip(stamps, stamps[1:], strict=False))
    bad = [i for i, (a, b) in enumerate(pairs) if (a < b if descending else a > b)]
    if bad:
        i = bad[0]
        yield Failure(f"sort={sort}: memories are out of order", [memories[i].get(field), memories[i + 1].get(field)],
                      f"{field} {'descending' if descending else 'ascending'}", f"$.memories[{i}]")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="sort string: `created_at_desc` (default), `created_at_asc`, `updated_at_desc`")
def list_sort_orders(ctx: Any) -> Iterator[Failure]:
    tag = dataset(ctx)["tag"]
    asc = page(ctx, {"tags": tag, "sort": "created_at_asc", "limit": "100"})["memories"]
    yield from _order_failures(asc, "created_at", False, "created_at_asc")
    desc = page(ctx, {"tags": tag, "sort": "created_at_desc", "limit": "100"})["memories"]
    yield from _order_failures(desc, "created_at", True, "created_at_desc")
    default = page(ctx, {"tags": tag, "limit": "100"})["memories"]
    yield from _order_failures(default, "created_at", True, "(default: created_at_desc)")
    if asc and desc and rules.instant(asc[0].get("created_at")) == rules.instant(desc[0].get("created_at")):
        ctx.note("every memory of the data set reports the same created_at: ascending and descending cannot be told apart")
    if not asc:
        return
    oldest = asc[0]
    c.ok_json(c.update(ctx, oldest["id"], {"metadata": {"memconform_run": ctx.run_id, "touched": True}}), dict, "updating the oldest memory")
    recent = page(ctx, {"tags": tag, "sort": "updated_at_desc", "limit": "100"})["memories"]
    yield from _order_failures(recent, "updated_at", True, "updated_at_desc")
    if not recent or recent[0].get("id") != oldest["id"]:
        yield Failure("sort=updated_at_desc: the memory updated last is not first", ids(recent)[:1], oldest["id"], "$.memories[0].id")


# ---- update and delete --------------------------------------------------------------------------

def _created_rich(ctx: Any, label: str) -> tuple[dict[str, Any], dict[str, Any]]:
    request = c.memory(ctx, label, tags=[label], namespace=f"project:{ctx.run_id}", type="episodic",
                       metadata={"memconform_run": ctx.run_id, "k": "v"})
    return request, c.created(ctx, request)


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="PUT /v1/memories/:id: Update an existing memory. All fields are optional — only provided fields are updated. "
                    "Response 200 OK: Updated Memory object")
def update_partial(ctx: Any) -> Iterator[Failure]:
    _, before = _created_rich(ctx, "update")
    new_tags = [c.run_tag(ctx), "updated"]
    answer = c.update(ctx, before["id"], {"tags": new_tags})
    if answer.status != 200 or not isinstance(answer.body, dict):
        yield Failure("a partial update did not answer 200 with the memory", answer.status, 200, "$")
        return
    after = c.ok_json(c.get(ctx, before["id"]), dict, "getting the updated memory")
    for where, mem in (("$(put)", answer.body), ("$(get)", after)):
        if sorted(mem.get("tags") or []) != sorted(new_tags):
            yield Failure("the given field was not updated", mem.get("tags"), new_tags, f"{where}.tags")
        for name in ("id", "content", "type", "source", "namespace", "metadata", "expires_at", "created_at"):
            if mem.get(name) != before.get(name):
                yield Failure(f"{name} changed although the update did not give it", mem.get(name, "<absent>"), before.get(name), f"{where}.{name}")
    yield from updated_at_failures(before.get("updated_at"), after.get("updated_at"))


def updated_at_failures(old: Any, new: Any) -> Iterator[Failure]:
    """updated_at moves: strictly later, unless both carry whole seconds and the same second (errata O6)."""
    t_old, t_new = rules.instant(old), rules.instant(new)
    whole_seconds = "." not in str(old) and "." not in str(new)  # equal stamps within one second are fair
    if t_old is None or t_new is None:
        yield Failure("updated_at is not readable before or after the update", [old, new], "ISO 8601 UTC", "$.updated_at")
    elif t_new < t_old or (t_new == t_old and not whole_seconds):
        yield Failure("updated_at did not move forward on update", new, f"later than {old}", "$.updated_at")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="PUT /v1/memories/:id: Request body: Partial Memory object (excluding id, created_at)")
def update_keeps_id_and_created_at(ctx: Any) -> Iterator[Failure]:
    _, before = _created_rich(ctx, "immutable")
    other = c.new_id()
    answer = c.update(ctx, before["id"], {"id": other, "created_at": "2001-01-01T00:00:00Z", "tags": [c.run_tag(ctx), "immutable2"]})
    if not answer.ok:
        yield from rules.validation_failures(answer)  # refusing the fields is a careful reading too
    after = c.get(ctx, before["id"])
    if after.status != 200 or not isinstance(after.body, dict):
        yield Failure("the memory is gone from its id after an update that named another id", after.status, 200, "$")
        return
    if after.body.get("created_at") != before.get("created_at"):
        yield Failure("created_at was changed by an update", after.body.get("created_at"), before.get("created_at"), "$.created_at")
    if c.get(ctx, other, quiet=True).status != 404:
        yield Failure("an update moved the memory to the id given in the body", other, "404 for that id", "$.id")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="PUT /v1/memories/:id: an update that fails schema validation is 422 validation_error and changes nothing (§4, errata O8)")
def update_invalid_changes_nothing(ctx: Any) -> Iterator[Failure]:
    _, before = _created_rich(ctx, "update-bad")
    for patch in ({"content": "x" * (omp.MAX_CONTENT + 1)}, {"tags": "not-a-list"}, {"type": "opinion"}):
        yield from rules.validation_failures(c.update(ctx, before["id"], patch))
    after = c.ok_json(c.get(ctx, before["id"]), dict, "getting the memory")
    changed = {k: after.get(k) for k in before if after.get(k) != before[k]}
    if changed:
        yield Failure("a refused update changed the memory", changed, "unchanged", "$")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence='DELETE /v1/memories/:id: Response 204 No Content; Response 404 Not Found: { "error": "memory_not_found" }')
def delete_then_gone(ctx: Any) -> Iterator[Failure]:
    made = c.created(ctx, c.memory(ctx, "delete"))
    answer = c.delete(ctx, made["id"])
    if answer.status != 204:
        yield Failure("delete did not answer 204 No Content", answer.status, 204, "$")
    if answer.raw.strip():
        yield Failure("204 No Content came with a body", answer.raw[:100], "no body", "$")
    yield from rules.error_failures(c.get(ctx, made["id"]), 404, "memory_not_found")
    yield from rules.error_failures(c.delete(ctx, made["id"]), 404, "memory_not_found")
    if made["id"] in ids(c.exported(ctx)):
        yield Failure("a deleted memory is still exported", made["id"], "absent", "$.memories")


# ---- search -------------------------------------------------------------------------------------

def search_body(ctx: Any, query: dict[str, Any]) -> dict[str, Any]:
    body: dict[str, Any] = c.ok_json(c.search(ctx, query), dict, f"searching {query}")
    if not isinstance(body.get("memories"), list):
        raise TargetError(f"a search answer has no memories array: {body!r:.200}")
    return body


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="keyword — full-text keyword search (MUST be supported by all implementations); "
                    'Response 200 OK: { "memories": [...], "total": 3, "mode_used": "keyword" }')
def search_keyword(ctx: Any) -> Iterator[Failure]:
    key = c.word()
    made = c.created(ctx, c.memory(ctx, "search", content=f"{ctx.unique('search')} likes {key} a lot"))
    answer = c.search(ctx, {"q": key, "mode": "keyword"})
    if answer.status != 200 or not isinstance(answer.body, dict):
        yield Failure("keyword search did not answer 200 with an object", answer.status, 200, "$")
        return
    body = answer.body
    if not isinstance(body.get("memories"), list):
        yield Failure("memories is not an array", body.get("memories", "<absent>"), "Memory[]", "$.memories")
    elif made["id"] not in ids(body["memories"]):
        yield Failure("keyword search does not find a memory holding the word", ids(body["memories"])[:3], made["id"], "$.memories")
    if not rules.is_int(body.get("total")):
        yield Failure("total is missing or not an integer", body.get("total", "<absent>"), "integer", "$.total")
    if body.get("mode_used") != "keyword":
        yield Failure("mode_used does not say keyword", body.get("mode_used", "<absent>"), "keyword", "$.mode_used")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="keyword — full-text keyword search: case-insensitive (errata O2)")
def search_keyword_case_insensitive(ctx: Any) -> Iterator[Failure]:
    key = c.word()
    made = c.created(ctx, c.memory(ctx, "case", content=f"{ctx.unique('case')} prefers {key.capitalize()} mode"))
    hits = ids(search_body(ctx, {"q": key.upper(), "mode": "keyword"})["memories"])
    if made["id"] not in hits:
        yield Failure("keyword search is case-sensitive", f"q={key.upper()!r} found {len(hits)}", made["content"], "$.memories")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="keyword — full-text keyword search: every word of q occurs in the content (errata O2, option keyword_match)")
def search_keyword_all_words(ctx: Any) -> Iterator[Failure]:
    w1, w2 = c.word(), c.word()
    both = c.created(ctx, c.memory(ctx, "kw-both", content=f"{ctx.unique('kw')} {w2} then {w1} {w2}"))
    one = c.created(ctx, c.memory(ctx, "kw-one", content=f"{ctx.unique('kw')} only {w1}"))
    apart = c.created(ctx, c.memory(ctx, "kw-apart", content=f"{ctx.unique('kw')} {w2} far from {w1}"))
    hits = ids(search_body(ctx, {"q": f"{w1} {w2}", "mode": "keyword"})["memories"])
    if both["id"] not in hits:
        yield Failure("a memory holding every word of q (as a phrase too) is not found", hits[:3], both["id"], "$.memories")
    if one["id"] in hits:
        yield Failure("a memory holding only one word of q was found (words are ORed)", one["content"], "not found", "$.memories")
    all_words = ctx.option("keyword_match") == "all-words"
    if all_words and apart["id"] not in hits:
        yield Failure("a memory holding every word of q, apart, is not found (keyword_match=all-words)", hits[:3], apart["id"], "$.memories")
    if not all_words and apart["id"] in hits:
        yield Failure("a memory not holding q as a substring was found (keyword_match=substring)", apart["content"], "not found", "$.memories")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence='POST /v1/memories/search: Request body { "q", "type", "tags", "namespace", "limit", "mode" }: '
                    "type and tags (AND, errata O2) filter the matches")
def search_filters(ctx: Any) -> Iterator[Failure]:
    key, x, y = c.word(), f"x-{ctx.run_id}", f"y-{ctx.run_id}"
    a = c.created(ctx, c.memory(ctx, "sf-a", content=f"{ctx.unique('sf')} {key}", tags=[x, y], type="procedural"))
    b = c.created(ctx, c.memory(ctx, "sf-b", content=f"{ctx.unique('sf')} {key}", tags=[x], type="procedural"))
    d = c.created(ctx, c.memory(ctx, "sf-d", content=f"{ctx.unique('sf')} {key}", tags=[x, y], type="episodic"))
    for query, wanted in (({"tags": [x, y]}, {a["id"], d["id"]}), ({"type": "procedural"}, {a["id"], b["id"]})):
        hits = set(ids(search_body(ctx, {"q": key, "mode": "keyword", **query})["memories"]))
        if hits != wanted:
            yield Failure(f"search with {query} did not return exactly the matching memories", sorted(hits), sorted(wanted), "$.memories")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence='POST /v1/memories/search: "limit" (default 20, max 100, like list) and "total": matches before the limit (errata O2)')
def search_limit_and_total(ctx: Any) -> Iterator[Failure]:
    ds = dataset(ctx)
    for query, size in (({}, omp.DEFAULT_LIMIT), ({"limit": 5}, 5)):
        body = search_body(ctx, {"q": ds["word"], "mode": "keyword", **query})
        if len(body["memories"]) != size:
            yield Failure(f"search {query or '(no limit)'} over 101 matches did not return {size}", len(body["memories"]), size, "$.memories")
        if body.get("total") != DATASET:
            yield Failure("search total is not the number of matches before the limit", body.get("total", "<absent>"), DATASET, "$.total")


def overlap_pair(ctx: Any) -> tuple[dict[str, Any], dict[str, Any], str, str]:
    """A memory sharing two of three query words and one sharing none: only similarity finds the first."""
    w = [c.word() for _ in range(6)]
    tag = f"sem-{c.word()}"
    near = c.created(ctx, c.memory(ctx, "sem-near", content=f"{ctx.unique('sem')} {w[0]} {w[1]} {w[2]}", tags=[tag]))
    far = c.created(ctx, c.memory(ctx, "sem-far", content=f"{ctx.unique('sem')} {w[3]} {w[4]}", tags=[tag]))
    return near, far, f"{w[0]} {w[1]} {w[5]}", tag


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="semantic — vector similarity search (OPTIONAL); hybrid (OPTIONAL); "
                    '"mode_used" says the mode that really ran')
def search_mode_used_honest(ctx: Any) -> Iterator[Failure]:
    near, far, query, tag = overlap_pair(ctx)
    for mode in ("semantic", "hybrid"):
        answer = c.search(ctx, {"q": query, "mode": mode, "tags": [c.run_tag(ctx), tag]})
        if not answer.ok:
            yield from rules.error_failures(answer, None, None)  # an optional mode may be refused, with the envelope
            continue
        body = answer.body if isinstance(answer.body, dict) else {}
        used = body.get("mode_used")
        if used not in omp.SEARCH_MODES:
            yield Failure(f"mode={mode}: mode_used is not a mode", used, list(omp.SEARCH_MODES), "$.mode_used")
        elif used in ("semantic", "hybrid") and near["id"] not in ids(body.get("memories") or []):
            yield Failure(f"mode_used says {used} but the memory sharing two of three words was not found",
                          ids(body.get("memories") or []), near["id"], "$.memories", "a keyword search presented as semantic?")
        elif used == "keyword" and near["id"] in ids(body.get("memories") or []) and ctx.option("keyword_match") == "all-words":
            yield Failure(f"mode={mode}: mode_used says keyword but a memory lacking a word of q was returned",
                          near["content"], "keyword results only", "$.mode_used")


# ---- export, import, health ---------------------------------------------------------------------

@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence='GET /v1/export: Response 200 OK: { "omp_version": "0.1", "exported_at": "...", "server": "...", "memories": [...] }')
def export_envelope(ctx: Any) -> Iterator[Failure]:
    made = c.created(ctx, c.memory(ctx, "export"))
    answer = c.export(ctx, record=False)
    body = answer.body
    if answer.status != 200 or not isinstance(body, dict):
        yield Failure("export did not answer 200 with an object", answer.status, 200, "$")
        return
    if body.get("omp_version") != omp.VERSION:
        yield Failure("omp_version is not \"0.1\"", body.get("omp_version", "<absent>"), omp.VERSION, "$.omp_version")
    if rules.instant(body.get("exported_at")) is None:
        yield Failure("exported_at is not an ISO 8601 UTC timestamp", body.get("exported_at", "<absent>"), "ISO 8601 UTC", "$.exported_at")
    if not isinstance(body.get("server"), str):
        yield Failure("server is missing or not a string", body.get("server", "<absent>"), "a string", "$.server")
    if not isinstance(body.get("memories"), list):
        yield Failure("memories is not an array", body.get("memories", "<absent>"), "Memory[]", "$.memories")
    elif made["id"] not in ids(body["memories"]):
        yield Failure("export does not hold a memory just created", "absent", made["id"], "$.memories")


def import_report_failures(answer: c.Answer) -> Iterator[Failure]:
    body = answer.body
    if answer.status != 200 or not isinstance(body, dict):
        yield Failure("import did not answer 200 with a report", f"{answer.status} {answer.raw[:160]!r}", 200, "$")
        return
    for name in ("imported", "skipped"):
        if not rules.is_int(body.get(name)):
            yield Failure(f"{name} is missing or not an integer", body.get(name, "<absent>"), "integer", f"$.{name}")
    if not isinstance(body.get("errors"), list):
        yield Failure("errors is missing or not an array", body.get("errors", "<absent>"), "[]", "$.errors")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence='POST /v1/import: Response 200 OK: { "imported": 142, "skipped": 3, "errors": [] }')
def import_report_shape(ctx: Any) -> Iterator[Failure]:
    memories = [c.full_memory(ctx, f"imp{i}") for i in range(2)]
    answer = c.import_(ctx, c.export_file(memories))
    yield from import_report_failures(answer)
    if isinstance(answer.body, dict) and (answer.body.get("imported"), answer.body.get("skipped"), answer.body.get("errors")) != (2, 0, []):
        yield Failure("two new memories did not report imported 2, skipped 0, no errors",
                      {k: answer.body.get(k) for k in ("imported", "skipped", "errors")}, {"imported": 2, "skipped": 0, "errors": []}, "$")
    everything = c.exported(ctx)
    stored = [m for mem in memories for m in c.with_marker(everything, mem["content"])]
    if len(stored) != 2:
        yield Failure("the imported memories are not in the export exactly once each", len(stored), 2, "$.memories")


def conflict_case(ctx: Any, label: str) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """An existing memory, a rival with its id and other content, and a new memory, for one import."""
    existing = c.created(ctx, c.memory(ctx, f"{label}-existing"))
    rival = dict(c.full_memory(ctx, f"{label}-rival"), id=existing["id"])
    return existing, rival, c.full_memory(ctx, f"{label}-new")


def by_content(ctx: Any, *contents: str) -> dict[str, list[dict[str, Any]]]:
    everything = c.exported(ctx)
    return {text: c.with_marker(everything, text) for text in contents}


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="conflict strategies (query param): skip — skip memories whose ID already exists (default)")
def import_skip_default(ctx: Any) -> Iterator[Failure]:
    existing, rival, new = conflict_case(ctx, "skip")
    answer = c.import_(ctx, c.export_file([rival, new]))
    yield from import_report_failures(answer)
    if isinstance(answer.body, dict) and answer.body.get("skipped") != 1:
        yield Failure("the memory whose id exists was not counted as skipped", answer.body.get("skipped"), 1, "$.skipped")
    found = by_content(ctx, existing["content"], rival["content"], new["content"])
    if len(found[existing["content"]]) != 1:
        yield Failure("without a conflict parameter the existing memory was not kept", len(found[existing["content"]]), 1, "$.memories")
    if found[rival["content"]]:
        yield Failure("without a conflict parameter a memory with an existing id was imported", rival["content"], "skipped", "$.memories")
    if len(found[new["content"]]) != 1:
        yield Failure("a new memory next to a skipped one was not imported", len(found[new["content"]]), 1, "$.memories")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="conflict strategies (query param): overwrite — overwrite existing memories")
def import_overwrite(ctx: Any) -> Iterator[Failure]:
    existing, rival, new = conflict_case(ctx, "overwrite")
    yield from import_report_failures(c.import_(ctx, c.export_file([rival, new]), "overwrite"))
    got = c.ok_json(c.get(ctx, existing["id"]), dict, "getting the overwritten memory")
    if got.get("content") != rival["content"]:
        yield Failure("conflict=overwrite did not replace the existing memory", got.get("content"), rival["content"], "$.content")
    found = by_content(ctx, existing["content"], new["content"])
    if found[existing["content"]]:
        yield Failure("conflict=overwrite kept the old content as well", len(found[existing["content"]]), 0, "$.memories")
    if len(found[new["content"]]) != 1:
        yield Failure("conflict=overwrite did not import the new memory once", len(found[new["content"]]), 1, "$.memories")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="conflict strategies (query param): duplicate — always create new IDs")
def import_duplicate(ctx: Any) -> Iterator[Failure]:
    existing, rival, new = conflict_case(ctx, "duplicate")
    yield from import_report_failures(c.import_(ctx, c.export_file([rival, new]), "duplicate"))
    found = by_content(ctx, existing["content"], rival["content"], new["content"])
    if len(found[existing["content"]]) != 1:
        yield Failure("conflict=duplicate did not keep the existing memory", len(found[existing["content"]]), 1, "$.memories")
    for mem in (rival, new):
        copies = found[mem["content"]]
        if len(copies) != 1:
            yield Failure("conflict=duplicate did not import the memory once", len(copies), 1, "$.memories")
        elif copies[0].get("id") == mem["id"]:
            yield Failure("conflict=duplicate kept the file's id instead of a new one", copies[0].get("id"), "a new id", "$.memories[?].id")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence="conflict strategies: skip, overwrite, duplicate — an unknown strategy is 422 validation_error and imports nothing (errata O7)")
def import_unknown_conflict_rejected(ctx: Any) -> Iterator[Failure]:
    new = c.full_memory(ctx, "bad-conflict")
    yield from rules.validation_failures(c.import_(ctx, c.export_file([new]), "replace-all"))
    if c.with_marker(c.exported(ctx), new["content"]):
        yield Failure("an import with an unknown conflict strategy stored memories", new["content"], "nothing imported", "$.memories")


@omp_check(section="§3.3", keyword="MUST", level="core",
           sentence='GET /v1/health: Server health check. No authentication required. { "status": "ok", "version": "0.1", "memories_count": 142 }')
def health_without_key(ctx: Any) -> Iterator[Failure]:
    answer = c.health(ctx, key=None)
    body = answer.body
    if answer.status != 200 or not isinstance(body, dict):
        yield Failure("health without a key did not answer 200 with an object", f"{answer.status} {answer.raw[:120]!r}", 200, "$")
        return
    if body.get("status") != "ok":
        yield Failure("status is not \"ok\"", body.get("status", "<absent>"), "ok", "$.status")
    if not isinstance(body.get("version"), str):
        yield Failure("version is missing or not a string", body.get("version", "<absent>"), "0.1", "$.version")
    if not rules.is_int(body.get("memories_count")) or body["memories_count"] < 0:
        yield Failure("memories_count is missing or not a count", body.get("memories_count", "<absent>"), "integer >= 0", "$.memories_count")


@omp_check(section="§5", keyword="MUST", level="core",
           sentence="Implementations declare their compliance level in /v1/health (errata O4: compliance, compliance_level or level)")
def health_declares_level(ctx: Any) -> Iterator[Failure]:
    if "omp_level_note" in ctx.cache:
        ctx.note(ctx.cache["omp_level_note"])
    body = c.health(ctx).body
    if declared_level(body) is None:
        named = {k: body.get(k) for k in omp.HEALTH_LEVEL_FIELDS if isinstance(body, dict) and k in body}
        yield Failure("health names no compliance level", named or "<absent>", list(omp.LEVEL_NAMES), "$.compliance")


# ---- §3.2 authentication --------------------------------------------------------------------------

def protected_calls(ctx: Any, key: str | None) -> Iterator[tuple[c.Answer, str]]:
    """Every endpoint but health with the given (missing or wrong) key; each write carries a marker."""
    from .security import ai_reason

    made = c.created(ctx, c.memory(ctx, "auth"))
    marker = ctx.unique("unauth")
    body = c.memory(ctx, "unauth", content=f"{marker} must not be stored")
    yield c.create(ctx, body, key), marker
    yield c.list_(ctx, {"limit": "1"}, key), marker
    yield c.get(ctx, made["id"], key), marker
    yield c.update(ctx, made["id"], {"content": f"{marker} overwritten"}, key), marker
    yield c.delete(ctx, made["id"], key), marker
    yield c.search(ctx, {"q": "memconform", "mode": "keyword"}, key), marker
    yield c.export(ctx, key), marker
    yield c.import_(ctx, c.export_file([c.full_memory(ctx, "unauth-import", content=f"{marker} imported")]), key=key), marker
    if ai_reason(ctx) is None:  # only where calling them cannot reach a real AI provider
        yield c.extract(ctx, {"transcript": f"{marker} Alice: I use TypeScript.", "source_tool": c.OWN_TOOL}, key), marker
        yield c.compress(ctx, {"transcript": f"{marker} Alice: I use TypeScript.", "source_tool": c.OWN_TOOL}, key), marker
    after = c.get(ctx, made["id"])
    if after.status != 200 or (isinstance(after.body, dict) and after.body.get("content") != made["content"]):
        raise _Tampered(after)


class _Tampered(Exception):
    def __init__(self, answer: c.Answer) -> None:
        super().__init__(answer.brief())
        self.answer = answer


def auth_failures(ctx: Any, key: str | None) -> Iterator[Failure]:
    markers: list[str] = []
    try:
        for answer, marker in protected_calls(ctx, key):
            markers.append(marker)
            yield from rules.error_failures(answer, 401, "unauthorized")
    except _Tampered as exc:
        yield Failure("a request without a valid key changed or deleted a memory", exc.answer.brief(), "the memory unchanged", "$")
    if markers and c.with_marker(c.exported(ctx), markers[0]):
        yield Failure("a request without a valid key stored memories", marker, "nothing stored", "$.memories")


@omp_check(section="§3.2", keyword="MUST", level="core",
           sentence="OMP uses Bearer token authentication. Authorization: Bearer <api-key> — "
                    "unauthorized 401: Missing or invalid API key (a missing key, on every endpoint but health)")
def auth_missing_key_401(ctx: Any) -> Iterator[Failure]:
    yield from auth_failures(ctx, None)


@omp_check(section="§3.2", keyword="MUST", level="core",
           sentence="unauthorized 401: Missing or invalid API key (a wrong key, on every endpoint but health)")
def auth_wrong_key_401(ctx: Any) -> Iterator[Failure]:
    yield from auth_failures(ctx, "memconform-wrong-key-" + c.word() + c.word())


# the other check families register from their own modules, in run order
from . import bad_input, concurrency, levels, security  # noqa: E402,F401,I001
from . import fuzz_checks  # noqa: E402,F401,I001  (the schemathesis checks)
