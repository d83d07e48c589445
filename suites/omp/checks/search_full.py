"""OMP-Search (semantic search) and OMP-Full (namespacing, per-tool keys, multi-user) checks (§5)."""

from __future__ import annotations

from collections.abc import Iterator

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.suites.omp import ask, client, controls, rules
from memconform.suites.omp.dataset import dataset, filter_failures, filter_test, ids, matching, model
from memconform.suites.omp.model import Model, Readings, Request
from memconform.suites.omp.searching import overlap_pair, search_body, tool_status_failures
from memconform.suites.omp.suite import SUITE
from memconform.targets.base import Reply

# ---- OMP-Search ----------------------------------------------------------------------------------

@SUITE.check(section="§5", keyword="MUST", level="search",
           sentence='OMP-Search OMP-Core + semantic search with embeddings')
def semantic_search(ctx: CheckContext) -> Iterator[Failure]:
    """At OMP-Search the model allows only a semantic page saying `mode_used: semantic` that finds the
    memory sharing two of three query words and ranks it above the one sharing none (errata O13)."""
    near, far, query, tag = overlap_pair(ctx)
    model = Model.seeded([near, far], Readings.from_options(ctx.option, "search"))
    body = {"q": query, "mode": "semantic", "tags": [client.run_tag(ctx), tag]}
    failure = ask.judged(model, Request("search", body=body), client.search(ctx, body), f"search {body} (a target declaring OMP-Search)")
    if failure is not None:
        yield failure


# ---- OMP-Full: namespacing ----------------------------------------------------------------------

@SUITE.check(section="§5", keyword="MUST", level="full",
           sentence='`namespace` string Filter by namespace')
def list_filter_namespace(ctx: CheckContext) -> Iterator[Failure]:
    ds = dataset(ctx)
    params = {"namespace": ds["namespace"]}
    yield from filter_failures(ctx, params, filter_test(params), matching(ctx, ds, params), "namespace")


@SUITE.check(section="§5", keyword="MUST", level="full",
           sentence='OMP-Full OMP-Search + namespacing, per-tool API keys, multi-user support')
def search_filter_namespace(ctx: CheckContext) -> Iterator[Failure]:
    ds = dataset(ctx)
    query = {"q": ds["word"], "mode": "keyword", "namespace": ds["namespace"], "limit": 100}
    wanted = set.union(*model(ctx, ds).search_sets(Request("search", body=query)).values())  # one word: every reading agrees
    hits = set(ids(search_body(ctx, query)["memories"]))
    if hits != wanted:
        yield Failure("search with a namespace did not return exactly that namespace's matches",
                      f"{len(hits)} ({len(hits - wanted)} outside it)", f"{len(wanted)}", "$.memories")


# ---- OMP-Full: per-tool keys ----------------------------------------------------------------------

def tool_pair(ctx: CheckContext) -> tuple[str, str, str]:
    """A tool with its key, and another tool (a second keyed tool, or one no key is bound to)."""
    keys = client.credentials(ctx).tool_keys
    tools = sorted(keys)
    return tools[0], keys[tools[0]], tools[1] if len(tools) > 1 else f"mc-unkeyed-{ctx.run_id}"


@SUITE.check(section="§3.2", keyword="MAY", level="full",
           sentence='Implementations MAY support per-tool API keys that restrict read/write access by source.tool.')
def tool_key_own_tool(ctx: CheckContext) -> Iterator[Failure]:
    tool, key, _ = tool_pair(ctx)
    answer = client.create(ctx, client.memory(ctx, "own-tool", tool=tool), key)
    if answer.status != 201 or not isinstance(answer.body, dict) or "id" not in answer.body:
        yield Failure("a tool's key may not create a memory of its own tool", f"{answer.status} {answer.raw[:160]!r}", 201, "$")
        return
    mem_id = answer.body["id"]
    for what, reply, status in (("get", client.get(ctx, mem_id, key), 200),
                                ("update", client.update(ctx, mem_id, {"tags": [client.run_tag(ctx), "own-tool-2"]}, key), 200),
                                ("delete", client.delete(ctx, mem_id, key), 204)):
        if reply.status != status:
            yield Failure(f"a tool's key may not {what} its own tool's memory", reply.status, status, "$")


@SUITE.check(section="§3.2", keyword="MAY", level="full",
           sentence='Implementations MAY support per-tool API keys that restrict read/write access by source.tool.')
def tool_key_forbidden_other_write(ctx: CheckContext) -> Iterator[Failure]:
    tool, key, other = tool_pair(ctx)
    marker = ctx.unique("foreign-write")
    controls.control(client.create(ctx, client.memory(ctx, "own-w", tool=tool), key), "the same create for the key's own tool")
    yield from tool_status_failures(ctx, client.create(ctx, client.memory(ctx, "foreign", content=f"{marker} x", tool=other), key), creating=True)
    theirs = client.created(ctx, client.memory(ctx, "theirs-w", tool=other))
    yield from tool_status_failures(ctx, client.update(ctx, theirs["id"], {"content": f"{marker} overwritten"}, key))
    yield from tool_status_failures(ctx, client.delete(ctx, theirs["id"], key))
    after = client.get(ctx, theirs["id"])
    if after.status != 200 or (isinstance(after.body, dict) and after.body.get("content") != theirs["content"]):
        yield Failure("another tool's key changed or deleted the memory", after.brief(), "unchanged", "$")
    if client.with_marker(client.exported(ctx), marker):
        yield Failure("a forbidden write stored content", marker, "nothing stored", "$.memories")


@SUITE.check(section="§3.2", keyword="MAY", level="full",
           sentence='Implementations MAY support per-tool API keys that restrict read/write access by source.tool.')
def tool_key_forbidden_other_read(ctx: CheckContext) -> Iterator[Failure]:
    tool, key, other = tool_pair(ctx)
    word = client.word()
    theirs = client.created(ctx, client.memory(ctx, "theirs-r", tool=other, content=f"{ctx.unique('theirs')} {word}"))
    mine = client.created(ctx, client.memory(ctx, "mine-r", tool=tool, content=f"{ctx.unique('mine')} {word}"))
    controls.control(client.get(ctx, mine["id"], key), "getting the key's own tool's memory")
    yield from tool_status_failures(ctx, client.get(ctx, theirs["id"], key))
    views = {
        "list": client.listed(ctx, {"tags": client.run_tag(ctx), "limit": "100"}, key),
        "search": client.found(ctx, {"q": word, "mode": "keyword"}, key),
        "export": client.exported(ctx, key),
    }
    for view, memories in views.items():
        seen = ids(memories)
        if theirs["id"] in seen:
            yield Failure(f"a tool's key sees another tool's memory in {view}", theirs["id"], "absent", "$.memories")
        if view != "list" and mine["id"] not in seen:
            yield Failure(f"a tool's key does not see its own memory in {view}", seen[:3], mine["id"], "$.memories")
        strangers = sorted({str((m.get("source") or {}).get("tool")) for m in memories} - {tool})
        if strangers:
            yield Failure(f"{view} with a tool's key shows memories of other tools", strangers[:3], [tool], "$.memories[*].source.tool")


# ---- OMP-Full: multi-user -------------------------------------------------------------------------

def cross_user_failures(ctx: CheckContext, answer: Reply, wanted: str) -> Iterator[Failure]:
    if wanted == "either" and answer.status == 403:
        wanted = "403"
    if wanted in ("either", "404"):
        yield from rules.error_failures(ctx, answer, 404, "memory_not_found")
    else:
        yield from rules.error_failures(ctx, answer, 403, "forbidden")


@SUITE.check(section="§5", keyword="MUST", level="full",
           sentence='OMP-Full OMP-Search + namespacing, per-tool API keys, multi-user support')
def users_isolated(ctx: CheckContext) -> Iterator[Failure]:
    other_key = client.credentials(ctx, need_other_user=True).other_user_key
    word = client.word()
    mine = client.created(ctx, client.memory(ctx, "user-a", content=f"{ctx.unique('ua')} {word}"))
    theirs = client.created(ctx, client.memory(ctx, "user-b", content=f"{ctx.unique('ub')} {word}"), other_key)
    controls.control(client.get(ctx, theirs["id"], other_key), "the second user getting their own memory")
    wanted = ctx.option("cross_user_status")
    for answer in (client.get(ctx, mine["id"], other_key), client.update(ctx, mine["id"], {"tags": ["stolen"]}, other_key),
                   client.delete(ctx, mine["id"], other_key), client.get(ctx, theirs["id"])):
        yield from cross_user_failures(ctx, answer, wanted)
    for who, key, foreign in (("the second user", other_key, mine["id"]), ("the first user", client.GLOBAL, theirs["id"])):
        for view, memories in (("list", client.listed(ctx, {"tags": client.run_tag(ctx), "limit": "100"}, key)),
                               ("search", client.found(ctx, {"q": word, "mode": "keyword"}, key)), ("export", client.exported(ctx, key))):
            if foreign in ids(memories):
                yield Failure(f"{who} sees the other user's memory in {view}", foreign, "absent", "$.memories")
    after = client.get(ctx, mine["id"])
    if after.status != 200 or not isinstance(after.body, dict):
        yield Failure("the second user deleted the first user's memory", after.brief(), "still there", "$")
    elif after.body.get("tags") != mine.get("tags"):
        yield Failure("the second user changed the first user's memory", after.body.get("tags"), mine.get("tags"), "$.tags")
