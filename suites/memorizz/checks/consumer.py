"""Consumer level: preview, restore, clone, and what a standard import drops or disables."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, NeedsHook, TargetError, Unsupported
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz import model, reading_kinds, readings
from memconform.suites.memorizz.client import (
    Seed,
    by_content,
    export,
    forget_namespaces_at_end,
    import_archive,
    listed_conflicts,
    object_at,
    report_of,
    scalar,
    seeded,
)
from memconform.suites.memorizz.suite import SUITE


def imports_visible(ctx: CheckContext) -> Seed:
    """The seed, shown to come back in an export of its namespace: only then does an empty export mean
    "nothing was written" (a target whose export never shows imports would pass every such check)."""
    seed = seeded(ctx)
    if not ctx.once("memorizz-seed-visible", lambda: bool(by_content(export(ctx, memory_id=seed.ns)))):
        raise Inconclusive("the restored seed is not in an export of its namespace: absence shows nothing")
    return seed


def _namespace_untouched(ctx: CheckContext, seed: Seed) -> Iterator[Failure]:
    after = by_content(export(ctx, memory_id=seed.ns))
    leaked = sorted(set(after) & set(seed.texts.values()))
    if leaked:
        yield Failure("records were written by an import that must not write", len(leaked), 0,
                      f"$ (namespace {seed.ns})")


@SUITE.check(level="consumer", section="What is portable", keyword="MUST", sentence="Imports preview conflicts before writing")
def preview_writes_nothing(ctx: CheckContext) -> Iterator[Failure]:
    imports_visible(ctx)
    seed = Seed(ctx, "preview")
    forget_namespaces_at_end(ctx, *seed.namespaces)
    accepted, body = import_archive(ctx, seed.sealed_copy(), "preview")
    report = report_of(accepted, body, "previewing a fresh, valid archive")
    allowed = model.answers({}, preview_of(seed.archive))  # the destination holds none of it
    imported = report.get("imported")
    if not allowed.fitting(accepted, imported if isinstance(imported, int) else None):
        yield Failure("a preview reports imported records", imported, allowed.expected(), "$.imported")
    yield from _namespace_untouched(ctx, seed)


def preview_of(archive: dict[str, Any]) -> model.ImportRequest:
    return model.ImportRequest(tuple((store, r["id"], r["data"]) for store, r in memorizz.records_of(archive)), "preview")


@SUITE.check(level="consumer", section="What is portable", keyword="MUST", sentence="Imports preview conflicts before writing")
def preview_reports_conflicts(ctx: CheckContext) -> Iterator[Failure]:
    seed = seeded(ctx)
    _accepted, body = import_archive(ctx, seed.sealed_copy(), "preview")
    if not isinstance(body, dict):
        raise TargetError(f"the preview answered {type(body).__name__}, not a report")
    held = {(store, r["id"]): r["data"] for store, r in memorizz.records_of(seed.archive)}  # the seed was restored
    wanted = set().union(*(o.conflicts for o in model.answers(held, preview_of(seed.archive)).outcomes))
    missing = sorted(wanted - listed_conflicts(body))
    if missing:
        yield Failure("a preview of records already present does not list them as conflicts", len(missing), 0,
                      f"$.conflicts (e.g. {missing[0]})")


@SUITE.check(level="consumer", section="Integrity and validation", keyword="MUST",
                sentence="Imports preview conflicts before writing")
def restore_refuses_conflicts(ctx: CheckContext) -> Iterator[Failure]:
    """Every record of the seed again, changed, so each conflicts; and in every store a new record first,
    so an importer that writes records until it meets the first conflict (whatever order it walks the
    stores in) has written one: "preview conflicts before writing" means a refused restore writes nothing.
    (The agents are left out: the new records are found in the owner agent's namespace, which the
    seed's cleanup removes with whatever was written.)"""
    seed = imports_visible(ctx)  # the positive control: the same archive, without conflicts, was restored
    changed = seed.sealed_copy()
    changed["stores"]["agents"] = []
    fresh: list[str] = []
    for store, records in changed["stores"].items():
        for record in records:
            record["data"]["content"] = record["data"]["content"] + " (changed)"
        if records and store != "agents":
            rid = ctx.unique(f"fresh-{store}")
            data = {k: v for k, v in records[0]["data"].items() if k not in memorizz.REFERENCE_FIELDS or k == "memory_id"}
            data.update({"content": ctx.unique("fresh-prose"), **({k: rid} if (k := memorizz.NATURAL_IDS_IMPLIED.get(store)) else {})})
            records.insert(0, {"id": rid, "data": data})
            fresh.append(data["content"])
    memorizz.seal(changed)
    accepted, body = import_archive(ctx, changed, "restore", "error")
    held = {(store, r["id"]): r["data"] for store, r in memorizz.records_of(seed.archive) if store != "agents"}
    allowed = model.answers(held, model.ImportRequest(tuple((st, r["id"], r["data"]) for st, r in memorizz.records_of(changed)),
                                                        "restore", "error"))
    if not allowed.fitting(accepted):
        yield Failure("a restore over existing records with conflict=error was accepted",
                      body.get("imported") if isinstance(body, dict) else body, allowed.expected(), "$")
    after = by_content(export(ctx, agent_id=seed.owner))
    overwritten = [t for t in after if t.endswith(" (changed)")]
    if overwritten:
        yield Failure("a restore refused for conflicts overwrote existing records", len(overwritten), 0, "$")
    written = [t for t in fresh if t in after]
    if not accepted and written:
        yield Failure("a restore refused for conflicts wrote the records it met before the first conflict",
                      f"{len(written)} of the archive's {len(fresh)} new records", "none written", "$")


@SUITE.check(level="consumer", section="Records and relationships", keyword="MUST",
                sentence="Restoring with preserved IDs keeps those identities.")
def restore_keeps_ids(ctx: CheckContext) -> Iterator[Failure]:
    seed = seeded(ctx)
    after = by_content(export(ctx, agent_id=seed.owner))
    held = {(store, r["id"]): r["data"] for store, r in memorizz.records_of(seed.archive)}
    wanted = model.export_records(held, agent_id=seed.owner)  # the oracle's selection: the owner, its delegate, their namespaces
    for (store, rid), sent in wanted.items():
        record: dict[str, Any] = {"id": rid, "data": sent}
        text = record["data"]["content"]
        got = after.get(text)
        if got is None:
            yield Failure("a restored record is missing from the export", None, record["id"], f"$.stores.{store}")
            continue
        if got[1].get("id") != record["id"]:
            yield Failure("a restored record has a new id", got[1].get("id"), record["id"], f"$.stores.{store}")
        data = got[1].get("data") or {}
        # scope and links stay explicit fields (tool schemas: tool_schemas_remain_data)
        for key in ("memory_id", "memory_ids", "delegates", "source_message_ids", memorizz.NATURAL_IDS_IMPLIED.get(store)):
            if key and key in record["data"] and data.get(key) != record["data"][key]:
                yield Failure(f"a restored record changed its {key}", data.get(key), record["data"][key],
                              f"$.stores.{store}[id={record['id']}].data.{key}")


@SUITE.check(level="consumer", section="What is portable", keyword="MUST",
                sentence="Tool schemas and import references remain data")
def tool_schemas_remain_data(ctx: CheckContext) -> Iterator[Failure]:
    """A restored tool keeps its parameter schema as it was, a property named `api_key` included: a
    schema describes an interface, it holds no secret (errata M10), so credential stripping must not
    reach into it."""
    seed = seeded(ctx)
    after = by_content(export(ctx, agent_id=seed.owner))
    schemas = [(store, r) for store, r in memorizz.records_of(seed.archive) if "parameters" in r["data"]]
    for store, record in schemas:
        got = after.get(record["data"]["content"])
        if got is None:
            raise TargetError(f"the restored {store} record {record['id']} is not in the export")
        data = got[1].get("data") or {}
        if data.get("parameters") != record["data"]["parameters"]:
            yield Failure("a restored tool's parameter schema changed", data.get("parameters", "<absent>"),
                          record["data"]["parameters"], f"$.stores.{store}[id={record['id']}].data.parameters")


def cloned(ctx: CheckContext) -> tuple[Seed, dict[str, Any], dict[str, Any]]:
    """(the seed, the clone report's id_map, the export of the cloned owner agent), once per run. The new
    ids are the ones the target returned (its id_map), never guessed."""

    def make() -> tuple[Seed, dict[str, Any], dict[str, Any]]:
        seed = seeded(ctx)
        accepted, body = import_archive(ctx, seed.sealed_copy(), "clone")
        report = report_of(accepted, body, "cloning an archive with new ids")
        id_map = report.get("id_map")
        if not isinstance(id_map, dict) or not isinstance(id_map.get(seed.owner), str):
            raise TargetError("the clone report has no id_map naming the new id of the owner agent")
        forget_namespaces_at_end(ctx, *(v for k, v in id_map.items() if k in seed.namespaces and isinstance(v, str)))
        return seed, id_map, export(ctx, agent_id=id_map[seed.owner])

    value: tuple[Seed, dict[str, Any], dict[str, Any]] = ctx.once("memorizz-clone", make)
    return value


def _natural_id_failures(ctx: CheckContext, store: str, natural: str, data: dict[str, Any], got: dict[str, Any],
                         new: str) -> Iterator[Failure]:
    """A cloned record's natural id (errata M4): bound to its new id where the spec names it; elsewhere
    rebound too, or kept as data (the reading a clone that treats it as a value takes)."""
    path = f"$.stores.{store}[id={new}].data.{natural}"
    if store in memorizz.NATURAL_IDS_NAMED:
        if got.get(natural) != new:
            yield Failure(f"a cloned record's {natural} is not its new id", got.get(natural), new, path)
        return
    implied = ctx.option("natural_ids") == "implied"
    seen = readings.observe(ctx, "M4", reading_kinds.NaturalId(natural, data[natural], new), got.get(natural),
                            title=f"a cloned record's {natural} is neither its new id nor kept as it was", path=path,
                            pinned=("M4:implied",) if implied else ())
    if seen.failure:
        yield seen.failure


def _namespace_failures(ctx: CheckContext, store: str, data: dict[str, Any], got: dict[str, Any], new: str,
                        namespaces: str) -> Iterator[Failure]:
    """A cloned record's namespace (errata M9): kept, or rewritten to a new one; never lost."""
    now, was = got.get("memory_id"), data["memory_id"]
    seen = readings.observe(ctx, "M9", reading_kinds.ClonedRecord(was), now,
                            title="a cloned record's namespace is neither kept nor a new namespace",
                            path=f"$.stores.{store}[id={new}].data.memory_id", pinned=readings.namespace_pin(namespaces))
    if seen.failure:
        yield seen.failure


def _clone_records(seed: Seed, archive: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    return by_content(archive, avoid_ids=frozenset(seed.texts))


@SUITE.check(level="consumer", section="Records and relationships", keyword="MUST",
                sentence="Cloning with new IDs rewrites documented identity and reference fields")
def clone_rewrites_ids(ctx: CheckContext) -> Iterator[Failure]:
    seed, id_map, archive = cloned(ctx)
    after = _clone_records(seed, archive)
    new_ids = {rid: after[text][1].get("id") for rid, text in seed.texts.items() if text in after}
    namespaces = ctx.option("clone_namespaces")
    for store, record in memorizz.records_of(seed.archive):
        rid, data = record["id"], record["data"]
        new = new_ids.get(rid)
        if new is None:
            yield Failure("a cloned record is missing from the export of the cloned agent", None, rid,
                          f"$.stores.{store}")
            continue
        if new == rid:
            yield Failure("a cloned record kept its id", new, "a new id", f"$.stores.{store}")
        got = after[data["content"]][1].get("data") or {}
        natural = memorizz.NATURAL_IDS_IMPLIED.get(store)
        if natural is not None and natural in data:
            yield from _natural_id_failures(ctx, store, natural, data, got, new)
        if "memory_id" in data:
            yield from _namespace_failures(ctx, store, data, got, new, namespaces)
        for key in ("delegates", "source_message_ids"):
            if key in data:
                want = [new_ids.get(x, id_map.get(x, x)) for x in data[key]]
                if got.get(key) != want or (data[key] and got.get(key) == data[key]):
                    yield Failure(f"a cloned record's {key} does not point at the cloned records", got.get(key),
                                  want, f"$.stores.{store}[id={new}].data.{key}")


@SUITE.check(level="consumer", section="Records and relationships", keyword="MUST",
                sentence="Cloning with new IDs rewrites documented identity and reference fields, while preserving "
                         "memory prose")
def clone_keeps_prose(ctx: CheckContext) -> Iterator[Failure]:
    seed, _id_map, archive = cloned(ctx)
    after = _clone_records(seed, archive)
    for rid, text in seed.texts.items():
        if text not in after or after[text][1].get("id") == rid:
            yield Failure("a record's prose changed in the clone (or the clone is missing)", None, text,
                          f"$ (record {rid})")


@SUITE.check(level="consumer", section="Records and relationships", keyword="MUST",
                sentence="Cloning with new IDs rewrites documented identity and reference fields, while preserving "
                         "memory prose and keeping delegate-private namespaces separate.")
def clone_keeps_namespaces_separate(ctx: CheckContext) -> Iterator[Failure]:
    seed, _id_map, archive = cloned(ctx)
    after = _clone_records(seed, archive)
    spaces: dict[str, set[Any]] = {seed.ns: set(), seed.ns_delegate: set()}
    for _, record in memorizz.records_of(seed.archive):
        old_ns, text = record["data"].get("memory_id"), record["data"]["content"]
        if old_ns in spaces and text in after:
            store, got = after[text]
            new_ns = got["data"].get("memory_id")  # by_content holds only records whose data is an object
            if not scalar(new_ns):  # an array or object names no namespace: left out, and said
                yield Failure("a cloned record's memory_id is not a string", new_ns, "a namespace id",
                              f"$.stores.{store}[id={got.get('id')}].data.memory_id")
                continue
            spaces[old_ns].add(new_ns)
    owner, private = spaces[seed.ns], spaces[seed.ns_delegate]
    if not owner or not private:
        raise Inconclusive("the export of the cloned agent lacks the records of one of its two namespaces")
    if owner & private or len(owner) != 1 or len(private) != 1:
        yield Failure("the delegate's private namespace and the owner's namespace were merged or split in the clone",
                      {"owner": sorted(map(str, owner)), "delegate": sorted(map(str, private))},
                      "one namespace each, distinct", "$")


@SUITE.check(level="consumer", section="What is portable", keyword="MUST",
                sentence="Embeddings are excluded by default and discarded on standard import")
def import_discards_embeddings(ctx: CheckContext) -> Iterator[Failure]:
    seed = seeded(ctx)
    try:
        archive = export(ctx, agent_id=seed.owner, include_embeddings=True)
    except TargetError as exc:
        raise Inconclusive(f"the target cannot export embeddings on request ({exc}), so what an import kept is "
                           "not visible") from None
    manifest = object_at(archive, "manifest")
    includes = object_at(manifest, "includes")
    if includes.get("embeddings") is not True:
        raise Inconclusive("the target cannot export embeddings on request, so what an import kept is not visible")
    # errata M8: `vector` is an embedding only under the pinned memorizz reading
    for path in memorizz.embedding_paths(archive.get("stores"), with_vector=ctx.option("embedding_fields") == "with-vector"):
        yield Failure("an embedding survived a standard import", path, "discarded", "$.stores" + path[1:])


# errata M10: the two spellings of "automations start disabled", judged on the agent as exported
def automations_failures(ctx: CheckContext, rid: str, flag: Any, states: list[Any]) -> Iterator[Failure]:
    """M10 from the table: the agent's automations_enabled flag ("<absent>") and its list's `enabled` states."""
    pinned = ctx.option("automations_field")
    where = "automations_enabled" if pinned != "automations-list" else "automations"
    observed = readings.observe(ctx, "M10", reading_kinds.ImportedAgent(), {"automations_enabled": flag, "automations": states},
                                pinned=() if pinned == "either" else (pinned,),
                                title="an imported agent's automations are not disabled",
                                path=f"$.stores.agents[id={rid}].data.{where}")
    if observed.failure:
        yield observed.failure


@SUITE.check(level="consumer", section="What is portable", keyword="MUST", sentence="imported agent automations start disabled")
def imported_automations_disabled(ctx: CheckContext) -> Iterator[Failure]:
    seed = seeded(ctx)
    archive = export(ctx, agent_id=seed.owner)
    stores = archive.get("stores", {})
    problems: list[Failure] = []  # stores, the agents store or an agent id of the wrong type: said, and those agents left out
    if not isinstance(stores, dict):
        problems.append(Failure("the export's stores is not an object", type(stores).__name__, "object", "$.stores"))
    elif not isinstance(stores.get("agents", []), list):
        problems.append(Failure("the export's agents store is not an array", type(stores["agents"]).__name__, "array",
                                "$.stores.agents"))
    agents = [r for store, r in memorizz.records_of(archive) if store == "agents"]
    problems += [Failure("an exported agent's id is not a string", r.get("id"), "a string id", "$.stores.agents[].id")
                 for r in agents if not scalar(r.get("id"))]
    yield from problems
    found = {r.get("id"): r.get("data") for r in agents if scalar(r.get("id"))}
    # errata M10: the page names no field. The seed says "enabled" both ways: memorizz's
    # `automations_enabled: true` and a list `automations: [{"enabled": true}]`; a target that disabled
    # either has shown it starts imported automations disabled (the reading it took is recorded)
    seen = 0
    for rid in (seed.owner, seed.delegate):
        if rid not in found:
            if problems:
                return
            raise TargetError(f"the restored agent {rid} is not in the export")
        data = found[rid]
        if not isinstance(data, dict):
            problems.append(Failure("an exported agent's data is not an object", type(data).__name__, "object",
                                    f"$.stores.agents[id={rid}].data"))
            yield problems[-1]
            continue
        flag = data.get("automations_enabled", "<absent>")
        listed = data.get("automations")
        states = [a.get("enabled") for a in listed if isinstance(a, dict) and "enabled" in a] if isinstance(listed, list) else []
        if flag == "<absent>" and not states:
            continue
        seen += 1
        yield from automations_failures(ctx, rid, flag, states)
    if not seen and not problems:
        raise Inconclusive("the exported agents carry neither automations_enabled nor automations (both were imported "
                           "enabled): nothing shows whether imported automations start disabled")


@SUITE.check(level="consumer", section="What is portable", keyword="MUST",
                sentence="restore is not atomic across stores: a provider failure can leave a partial import, with "
                         "committed progress reported.")
def failed_import_reports_progress(ctx: CheckContext) -> Iterator[Failure]:
    seed = Seed(ctx, "partial")
    forget_namespaces_at_end(ctx, *seed.namespaces)
    try:
        ctx.target.call("arm_failure", {"after": 3})
    except Unsupported:
        raise NeedsHook("progress reported by a failed import", "arm_failure",
                        "a provider failure cannot be caused otherwise") from None
    try:
        _accepted, body = import_archive(ctx, seed.sealed_copy(), "restore")
    finally:  # an import refused before committing leaves the hook armed: never let it reach another check
        ctx.target.call("arm_failure", {"after": None})
    if not isinstance(body, dict):
        raise TargetError(f"the failed import answered {type(body).__name__}, not a report")
    present = set(by_content(export(ctx, memory_id=seed.ns))) | set(by_content(export(ctx, memory_id=seed.ns_delegate)))
    committed = sum(1 for t in seed.texts.values() if t in present)
    request = model.ImportRequest(tuple((st, r["id"], r["data"]) for st, r in memorizz.records_of(seed.archive)), "restore",
                                   "error", fail_after=3)
    allowed = model.answers({}, request)  # the seed's namespaces are new: nothing of them is held before
    if not allowed.fitting(body.get("ok") is not False):
        yield Failure("an import that failed part way reports success", body.get("ok"), False, "$.ok", allowed.expected())
    elif not allowed.fitting(False, committed):
        yield Failure("a failed import left a number of records the spec does not allow", committed,
                      [o.imported for o in allowed.outcomes], "$", allowed.expected())
    if body.get("imported") != committed:
        yield Failure("the report's imported count is not the progress committed", body.get("imported"), committed,
                      "$.imported")
    if not body.get("errors"):
        yield Failure("the failed import reports no error", json.dumps(body.get("errors")), "the provider failure",
                      "$.errors")
