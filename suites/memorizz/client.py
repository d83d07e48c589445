"""Talking to a MemoRizz target: its operations, a seeded memory graph unique to the run, and cleanup.

Operations a target offers (suites/memorizz/errata.md, "Target operations"):
    export            {"memory_id"?, "agent_id"?, "types"?: [store keys], "include_embeddings"?: bool} -> archive
    import_archive    {"archive": {...}, "mode": "preview"|"restore"|"clone", "conflict"?: "error"|"skip"|"replace"}
                      -> report {"ok", "dry_run", "planned", "imported", "skipped", "conflicts": [{"memory_type",
                      "id"}], "id_map": {old: new}, "errors": [...]}; refused: rejected (the body may be a report)
    arm_failure       {"after": N}   optional test hook: the next committing import fails after N records
    delete_namespace  {"memory_id"}  optional: removes what a run wrote (the spec names no delete)
    delete_namespaces {"memory_ids": [...]} -> {"deleted": {memory_id: n}}  optional: the same for many at once
A target is seeded only through import_archive; every namespace and prose string is unique to the run.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Inconclusive, TargetError, Unsupported
from memconform.suites.memorizz import format as memorizz


def export(ctx: CheckContext, **selection: Any) -> dict[str, Any]:
    reply = ctx.target.call("export", selection)
    ctx.note(f"export {json.dumps(selection)[:200]} -> {reply.status} {len(reply.raw)} bytes")
    archive: dict[str, Any] = reply.accepted_json(dict, "export")
    return archive


def import_archive(ctx: CheckContext, archive: dict[str, Any], mode: str, conflict: str = "error") -> tuple[bool, Any]:
    """(accepted, report or error body) of one import. Accepted means the reply was ok and did not say ok: false."""
    reply = ctx.target.call("import_archive", {"archive": archive, "mode": mode, "conflict": conflict})
    body = reply.body if reply.body is not None else reply.raw[:300].decode("utf-8", "replace")
    ctx.note(f"import_archive mode={mode} conflict={conflict} -> {reply.status}: {json.dumps(body, default=str)[:300]}")
    accepted = reply.ok and not (isinstance(body, dict) and body.get("ok") is False)
    return accepted, body


def report_of(accepted: bool, body: Any, what: str) -> dict[str, Any]:
    if not accepted:
        raise TargetError(f"{what} was refused: {json.dumps(body, default=str)[:300]}")
    if not isinstance(body, dict):
        raise TargetError(f"{what} answered {type(body).__name__}, not an import report object")
    return body


def by_content(archive: dict[str, Any], avoid_ids: set[str] | frozenset[str] = frozenset()) -> dict[str, tuple[str, dict[str, Any]]]:
    """Records keyed by their prose (unique per run), with their store. Where two records share a prose
    (an original and its clone in one namespace, reading M9:namespaces-kept), the one whose id is not
    in `avoid_ids` wins."""
    out: dict[str, tuple[str, dict[str, Any]]] = {}
    for store, record in memorizz.records_of(archive):
        data = record.get("data")
        text = data.get("content") if isinstance(data, dict) else None
        rid = record.get("id")  # an array or object id is in no avoid_ids (and no set member)
        if isinstance(text, str) and (text not in out or not (scalar(rid) and rid in avoid_ids)):
            out[text] = (store, record)
    return out


def ids_in(archive: dict[str, Any]) -> set[tuple[str, object]]:
    """(store, id) of every record, the id as the archive holds it (absent: None); a record whose id is an
    array or object is left out (no (store, id) pair names it)."""
    return {(store, r.get("id")) for store, r in memorizz.records_of(archive) if scalar(r.get("id"))}


def scalar(value: object) -> bool:
    """A JSON scalar (hashable, so usable as a set member or key); an array or object is not."""
    return value is None or isinstance(value, str | int | float)


def object_at(value: dict[str, Any], key: str) -> dict[str, Any]:
    """value[key] when it is an object, else {}: a malformed member reads as empty (the document checks judge it)."""
    member = value.get(key)
    return member if isinstance(member, dict) else {}


def list_at(value: dict[str, Any], key: str) -> list[Any]:
    """value[key] when it is an array, else []."""
    member = value.get(key)
    return member if isinstance(member, list) else []


@dataclass
class MemorizzRun:
    """What the MemoRizz checks share during one run (ctx.state(MemorizzRun))."""

    namespaces: list[str] = field(default_factory=list)  # this run's namespaces, removed at the end
    models: list[Any] = field(default_factory=list)  # the state machine's models, one per example


def forget_namespaces_at_end(ctx: CheckContext, *namespaces: str) -> None:
    """Ask the target to remove the run's namespaces after the suite (only where it offers a delete)."""
    pending = ctx.state(MemorizzRun).namespaces
    if not pending:
        ctx.cleanup("memorizz run data (the namespaces this run imported)", lambda: _delete_all(ctx, pending))
    pending.extend(ns for ns in namespaces if ns not in pending)


def _delete_all(ctx: CheckContext, namespaces: list[str]) -> bool:
    """Every namespace of the run removed: in one call where the target offers delete_namespaces and its
    answer names each namespace, else (or for those it did not name) one delete_namespace each."""
    removed = _deleted_at_once(ctx, namespaces)
    left = [ns for ns in namespaces if ns not in removed]
    try:
        for ns in left:
            if not ctx.target.call("delete_namespace", {"memory_id": ns}).ok:
                return False
    except Unsupported:
        return False  # listed as "could not remove": the target offers no delete (the spec names none)
    return True


def _deleted_at_once(ctx: CheckContext, namespaces: list[str]) -> set[str]:
    """The namespaces one delete_namespaces call says it removed (its `deleted` object names each one);
    nothing when the target does not offer it, refuses it or answers anything else."""
    if len(namespaces) < 2:
        return set()
    try:
        reply = ctx.target.call("delete_namespaces", {"memory_ids": list(namespaces)})
        body = reply.json() if reply.ok else None
    except (Unsupported, TargetError):
        return set()
    deleted = body.get("deleted") if isinstance(body, dict) else None
    return {ns for ns in namespaces if isinstance(deleted, dict) and isinstance(deleted.get(ns), int)}


class Seed:
    """Two agents (the owner and its delegate, each with a private namespace) and records in all 13 stores."""

    def __init__(self, ctx: CheckContext, label: str = "seed") -> None:
        u = ctx.unique
        self.ns, self.ns_delegate = u(f"{label}-ns"), u(f"{label}-private-ns")
        self.owner, self.delegate = u(f"{label}-agent"), u(f"{label}-delegate")
        self.msg1, self.msg2, self.gone = u("msg"), u("msg"), u("deleted-msg")
        self.summary = u("summary")
        ns = self.ns
        self.archive = memorizz.empty_archive(source_provider="memconform-seed")
        self.archive["manifest"]["includes"]["embeddings"] = True  # it carries one, for the import to discard
        self.texts: dict[str, str] = {}

        def add(store: str, rid: str, natural: bool = True, **data: Any) -> None:
            key = memorizz.NATURAL_IDS_IMPLIED.get(store)
            record = {**({key: rid} if key and natural else {}), **data}
            if "content" not in record:
                record["content"] = u(f"{store}-prose")
            self.texts[rid] = record["content"]
            self.archive["stores"][store].append({"id": rid, "data": record})

        add("agents", self.owner, memory_ids=[ns], delegates=[self.delegate], instruction="Coordinate the launch.",
            automations_enabled=True, automations=[{"name": u("nightly-digest"), "enabled": True}],
            llm_config={"model": "local", "api_key": "sk-memconformsecret0001"})
        add("agents", self.delegate, memory_ids=[self.ns_delegate], delegates=[], instruction="Check facts.",
            automations_enabled=True, automations=[{"name": u("fact-check"), "enabled": True}],
            webhook={"url": "http://127.0.0.1:9/hook", "github_token": "ghp-memconform01"})
        add("conversation_memory", self.msg1, memory_id=ns, role="user", importance=1.0, score=1e-7)
        add("conversation_memory", self.msg2, memory_id=ns, role="assistant", embedding=[0.25, -0.5, 1.0])
        add("summaries", self.summary, memory_id=ns, source_message_ids=[self.msg1, self.msg2, self.gone])
        # prose that names an id: a clone must rewrite the link fields, never the words
        add("knowledge_base", u("kb"), memory_id=ns, user_id=None, content=f"{u('kb-prose')} see {self.msg1}",
            supersedes=[])
        add("personas", u("persona"), memory_id=ns, name="Hafenführerin ☂ 𝄞", role="guide")
        self.tool = u("tool")
        self.credential_records = [(self.tool, "toolbox")]
        add("toolbox", self.tool, memory_id=ns, name="lookup", password="hunter2-memconform",
            parameters={"type": "object", "properties": {"api_key": {"type": "string"}}})
        add("entity_memory", u("entity"), memory_id=ns, name="Mira", attributes=[{"owner": "release"}])
        add("workflow_memory", u("workflow"), memory_id=ns, name="launch steps")
        add("skillbox", u("skill"), memory_id=ns, name="summarise")
        add("tool_log", u("toollog"), memory_id=ns, tool_name="lookup", result={"ok": True, "ratio": 0.5},
            vector=[0.5, 0.5])
        add("short_term_memory", u("working"), memory_id=ns)
        add("semantic_cache", u("cache"), memory_id=ns, query="when is launch", response="after 19:00 UTC")
        add("shared_memory", u("shared"), memory_id=ns)
        add("knowledge_base", u("kb-private"), memory_id=self.ns_delegate, user_id=None)
        memorizz.seal(self.archive)

    @property
    def namespaces(self) -> tuple[str, str]:
        return self.ns, self.ns_delegate

    def sealed_copy(self) -> dict[str, Any]:
        return copy.deepcopy(self.archive)


def small_archive(ctx: CheckContext, label: str) -> tuple[dict[str, Any], str]:
    """A sealed archive of three records (an agent, its persona, a knowledge-base note) in a fresh
    namespace: what the rejection checks break one rule of. (archive, namespace)"""
    u = ctx.unique
    ns, agent, persona = u(f"{label}-ns"), u(f"{label}-agent"), u(f"{label}-persona")
    archive = memorizz.empty_archive(source_provider="memconform-probe")
    stores = archive["stores"]
    stores["agents"].append({"id": agent, "data": {"agent_id": agent, "memory_ids": [ns], "delegates": [],
                                                   "content": u("agent-prose")}})
    stores["personas"].append({"id": persona, "data": {"persona_id": persona, "memory_id": ns,
                                                       "content": u("persona-prose")}})
    kb = u(f"{label}-kb")
    stores["knowledge_base"].append({"id": kb, "data": {"id": kb, "memory_id": ns, "content": u("kb-prose")}})
    return memorizz.seal(archive), ns


def restore(ctx: CheckContext, archive: dict[str, Any], what: str) -> dict[str, Any]:
    accepted, body = import_archive(ctx, archive, "restore")
    return report_of(accepted, body, what)


def seeded(ctx: CheckContext) -> Seed:
    """One graph restored into the target, shared by the checks that only read it. A refused seed makes
    those checks inconclusive (memorizz.accepts_valid_archive is the one that fails for it)."""

    def make() -> Seed:
        seed = Seed(ctx)
        forget_namespaces_at_end(ctx, *seed.namespaces)
        try:
            restore(ctx, seed.sealed_copy(), "restoring the seed archive (valid, all 13 stores)")
        except TargetError as exc:
            raise Inconclusive(f"the target would not import the seed archive: {exc}") from None
        return seed

    value: Seed = ctx.once("memorizz-seed", make)
    return value


def named_selection(ctx: CheckContext) -> dict[str, str]:
    """The selection the user named for a producer's export (options export_memory_id, export_agent_id)."""
    out = {}
    if ctx.option("export_memory_id"):
        out["memory_id"] = ctx.option("export_memory_id")
    if ctx.option("export_agent_id"):
        out["agent_id"] = ctx.option("export_agent_id")
    return out


def exported_graph(ctx: CheckContext) -> dict[str, Any]:
    """The archive checks' document from a target: the user's named selection, else the seeded owner
    agent with its delegate, else (a producer that cannot import) its whole export."""
    named = named_selection(ctx)
    if named:
        return export(ctx, **named)
    try:
        seed = seeded(ctx)
    except Unsupported:
        ctx.note("the target cannot import: its whole export is examined (name a selection with "
                 "--option memorizz.export_memory_id=... or export_agent_id=...)")
        return export(ctx)
    return export(ctx, agent_id=seed.owner)


def listed_conflicts(body: dict[str, Any]) -> set[tuple[Any, Any]]:
    """errata "Target operations": a conflict names its store as memory_type (or store, type) and its id."""
    out = set()
    for c in body.get("conflicts") or []:
        if isinstance(c, dict):
            out.add((c.get("memory_type", c.get("store", c.get("type"))), c.get("id")))
    return out
