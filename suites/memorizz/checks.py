"""MemoRizz Memory Archive v1 suite: the SuiteSpec, Archive (document) checks, Producer and Consumer checks.

Operations a target offers (errata/memorizz.md, "Target operations"):
    export          {"memory_id"?, "agent_id"?, "types"?: [store keys], "include_embeddings"?: bool} -> archive
    import_archive  {"archive": {...}, "mode": "preview"|"restore"|"clone", "conflict"?: "error"|"skip"|"replace"}
                    -> report {"ok", "dry_run", "planned", "imported", "skipped", "conflicts": [{"memory_type",
                    "id"}], "id_map": {old: new}, "errors": [...]}; refused: rejected (the body may be a report)
    arm_failure     {"after": N}   optional test hook: the next committing import fails after N records
A target is seeded only through import_archive; every namespace and prose string is unique to the run.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from functools import partial
from typing import Any

from memconform.core.model import Failure, SkipCheck, TargetError, Unsupported
from memconform.core.registry import check
from memconform.core.suite import Level, SuiteSpec, register_suite
from memconform.formats import memorizz as mz

SPEC = mz.SPEC


# ---- the document an archive check looks at ---------------------------------------------------

def limits(ctx: Any) -> tuple[int, int]:
    return mz.SIZES[ctx.option("max_bytes")], int(ctx.option("max_records"))


def archive_state(doc: Any, ctx: Any) -> mz.Archive:
    """The archive with its limits applied and (for a parsed document) its canonical bytes, once per run."""

    def make() -> mz.Archive:
        arc = doc if isinstance(doc, mz.Archive) else mz.Archive(value=doc)
        max_bytes, max_records = limits(ctx)
        if arc.unread:
            arc = mz.load_file(arc.path, max_bytes, max_records)  # type: ignore[arg-type]
        if not arc.refused and arc.file_bytes is not None and arc.file_bytes > max_bytes:
            arc.refused = f"file is {arc.file_bytes} bytes, over the limit of {max_bytes}"
        total = mz.record_total(arc.value)
        if not arc.refused and total > max_records:
            arc.refused = f"{total} records, over the limit of {max_records}"
        if not arc.refused and arc.file_bytes is None:
            canonical(arc, ctx)  # a parsed document is measured by its canonical bytes
            if arc.canonical is not None and len(arc.canonical) > max_bytes:
                arc.refused = f"{len(arc.canonical)} canonical bytes, over the limit of {max_bytes}"
        return arc

    state: mz.Archive = ctx.once("memorizz-archive", make)
    return state


def canonical(arc: mz.Archive, ctx: Any) -> bytes | None:
    if arc.canonical is None and not arc.canonical_error:
        if not isinstance(arc.value, dict):
            arc.canonical_error = "the archive is not an object"
            return None
        try:
            arc.canonical = mz.canonical_bytes(arc.value, ctx.option("key_order"), arc.exact)
        except (ValueError, RecursionError) as exc:
            arc.canonical_error = str(exc)
    return arc.canonical


def _rule(doc: Any, ctx: Any, name: str) -> Iterator[Failure]:
    arc = archive_state(doc, ctx)
    if arc.refused:
        raise SkipCheck(f"the archive is refused before this rule applies: {arc.refused}")
    natural = mz.NATURAL_IDS_IMPLIED if ctx.option("natural_ids") == "implied" else mz.NATURAL_IDS_NAMED
    problems: dict[str, list[mz.Problem]] = ctx.once("memorizz-scan", lambda: mz.scan(arc.value, natural))
    for p in problems.get(name, []):
        yield Failure(p.title, p.received, p.expected, p.path)


# ---- talking to a target ----------------------------------------------------------------------

def export(ctx: Any, **selection: Any) -> dict[str, Any]:
    reply = ctx.target.call("export", selection)
    ctx.note(f"export {json.dumps(selection)[:200]} -> {reply.status} {len(reply.raw)} bytes")
    archive: dict[str, Any] = reply.accepted_json(dict, "export")
    return archive


def import_archive(ctx: Any, archive: dict[str, Any], mode: str, conflict: str = "error") -> tuple[bool, Any]:
    """(accepted, report or error body) of one import."""
    reply = ctx.target.call("import_archive", {"archive": archive, "mode": mode, "conflict": conflict})
    body = reply.body if reply.body is not None else reply.raw[:300].decode("utf-8", "replace")
    ctx.note(f"import_archive mode={mode} conflict={conflict} -> {reply.status}: {json.dumps(body, default=str)[:300]}")
    return reply.ok, body


def report_of(ctx: Any, accepted: bool, body: Any, what: str) -> dict[str, Any]:
    if not accepted:
        raise TargetError(f"{what} was refused: {json.dumps(body, default=str)[:300]}")
    if not isinstance(body, dict):
        raise TargetError(f"{what} answered {type(body).__name__}, not an import report object")
    return body


def restore(ctx: Any, archive: dict[str, Any]) -> dict[str, Any]:
    accepted, body = import_archive(ctx, archive, "restore")
    report = report_of(ctx, accepted, body, "restoring a fresh, valid archive")
    if report.get("ok") is False:
        raise TargetError(f"restoring a fresh, valid archive failed: {json.dumps(report, default=str)[:300]}")
    return report


def by_content(archive: dict[str, Any]) -> dict[str, tuple[str, dict[str, Any]]]:
    """Records keyed by their prose (unique per run), with their store."""
    out = {}
    for store, record in mz.records_of(archive):
        data = record.get("data")
        text = data.get("content") if isinstance(data, dict) else None
        if isinstance(text, str):
            out[text] = (store, record)
    return out


def ids_in(archive: dict[str, Any]) -> set[tuple[str, str]]:
    return {(store, r.get("id")) for store, r in mz.records_of(archive)}


# ---- a seeded memory graph with content unique to the run --------------------------------------

class Seed:
    """Two agents (the owner and its delegate, each with a private namespace) and records in all 13 stores."""

    def __init__(self, ctx: Any, label: str = "seed") -> None:
        u = ctx.unique
        self.ns, self.ns_delegate = u(f"{label}-ns"), u(f"{label}-private-ns")
        self.owner, self.delegate = u(f"{label}-agent"), u(f"{label}-delegate")
        self.msg1, self.msg2, self.gone = u("msg"), u("msg"), u("deleted-msg")
        self.summary = u("summary")
        ns = self.ns
        self.archive = mz.empty_archive(source_provider="memconform-seed")
        self.archive["manifest"]["includes"]["embeddings"] = True  # it carries one, for the import to discard
        self.texts: dict[str, str] = {}

        def add(store: str, rid: str, natural: bool = True, **data: Any) -> None:
            key = mz.NATURAL_IDS_IMPLIED.get(store)
            record = {**({key: rid} if key and natural else {}), **data}
            if "content" not in record:
                record["content"] = u(f"{store}-prose")
            self.texts[rid] = record["content"]
            self.archive["stores"][store].append({"id": rid, "data": record})

        add("agents", self.owner, memory_ids=[ns], delegates=[self.delegate], instruction="Coordinate the launch.",
            automations_enabled=True, llm_config={"model": "local", "api_key": "sk-memconformsecret0001"})
        add("agents", self.delegate, memory_ids=[self.ns_delegate], delegates=[], instruction="Check facts.",
            automations_enabled=True)
        add("conversation_memory", self.msg1, memory_id=ns, role="user", importance=1.0, score=1e-7)
        add("conversation_memory", self.msg2, memory_id=ns, role="assistant", embedding=[0.25, -0.5, 1.0])
        add("summaries", self.summary, memory_id=ns, source_message_ids=[self.msg1, self.msg2, self.gone])
        # prose that names an id: a clone must rewrite the link fields, never the words
        add("knowledge_base", u("kb"), memory_id=ns, user_id=None, content=f"{u('kb-prose')} see {self.msg1}",
            supersedes=[])
        add("personas", u("persona"), memory_id=ns, name="Hafenführerin ☂ 𝄞", role="guide")
        add("toolbox", u("tool"), memory_id=ns, name="lookup", password="hunter2-memconform",
            parameters={"type": "object", "properties": {"api_key": {"type": "string"}}})
        add("entity_memory", u("entity"), memory_id=ns, name="Mira", attributes=[{"owner": "release"}])
        add("workflow_memory", u("workflow"), memory_id=ns, name="launch steps")
        add("skillbox", u("skill"), memory_id=ns, name="summarise")
        add("tool_log", u("toollog"), memory_id=ns, tool_name="lookup", result={"ok": True, "ratio": 0.5})
        add("short_term_memory", u("working"), memory_id=ns)
        add("semantic_cache", u("cache"), memory_id=ns, query="when is launch", response="after 19:00 UTC")
        add("shared_memory", u("shared"), memory_id=ns)
        add("knowledge_base", u("kb-private"), memory_id=self.ns_delegate, user_id=None)
        mz.seal(self.archive)

    def sealed_copy(self) -> dict[str, Any]:
        return copy.deepcopy(self.archive)


def seeded(ctx: Any) -> Seed:
    """One graph restored into the target, shared by the checks that only read it."""

    def make() -> Seed:
        seed = Seed(ctx)
        restore(ctx, seed.sealed_copy())
        return seed

    value: Seed = ctx.once("memorizz-seed", make)
    return value


def exported_graph(ctx: Any) -> dict[str, Any]:
    """The archive checks' document from a target: the seeded owner agent with its delegate."""
    try:
        seed = seeded(ctx)
    except Unsupported:
        return export(ctx)  # a producer that cannot import: its whole export
    return export(ctx, agent_id=seed.owner)


def _reference() -> Any:
    """`reference:memorizz`: the embedded implementation."""
    from memconform.reference.memorizz import ReferenceArchiveStore

    return ReferenceArchiveStore()


def _mutants() -> Any:
    from memconform.mutants import memorizz as mutants

    return mutants


SUITE = register_suite(SuiteSpec(
    name=mz.SUITE, spec_title=SPEC, version="1",
    levels=[Level("archive", "Archive"), Level("producer", "Producer", ("archive",)), Level("consumer", "Consumer")],
    document_source=exported_graph, detect=mz.detect, stream=mz.open_file,
    reference=_reference, mutants=_mutants,
))

doc_check = partial(check, suite=mz.SUITE, spec=SPEC, kind="document", level="archive")
producer_check = partial(check, suite=mz.SUITE, spec=SPEC, level="producer")
consumer_check = partial(check, suite=mz.SUITE, spec=SPEC, level="consumer")


# ---- Archive: the document -----------------------------------------------------------------------

@doc_check(section="Envelope", keyword="MUST", sentence="An archive has exactly six top-level fields.")
def envelope_fields(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "envelope_fields")


@doc_check(section="Envelope", keyword="MUST", sentence="`format` String Always `memorizz.memory`")
def format_literal(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "format_literal")


@doc_check(section="Envelope", keyword="MUST",
           sentence="`version` Integer Always `1`; unsupported versions are rejected")
def version_one(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "version_one")


@doc_check(section="Taxonomy", keyword="MUST", sentence="`taxonomy` Object Exact canonical store-to-category mapping below")
def taxonomy_canonical(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "taxonomy_canonical")


@doc_check(section="Envelope", keyword="MUST",
           sentence="`stores` Object All 13 store keys, each containing an array of records")
def stores_complete(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "stores_complete")


@doc_check(section="Records and relationships", keyword="MUST",
           sentence="Every entry in a store is an object with exactly id and data")
def record_shape(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "record_shape")


@doc_check(section="Records and relationships", keyword="MUST",
           sentence="id is a nonempty string, unique within its store, with at most 512 characters.")
def record_id_form(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "record_id_form")


@doc_check(section="Records and relationships", keyword="MUST",
           sentence="id is a nonempty string, unique within its store, with at most 512 characters.")
def record_id_unique(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "record_id_unique")


@doc_check(section="Records and relationships", keyword="MUST",
           sentence="When present, data.id and data._id must match the enclosing id.")
def data_id_matches(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "data_id_matches")


@doc_check(section="Records and relationships", keyword="MUST",
           sentence="Natural identity fields such as agent_id for agents, persona_id for personas, and summary_id "
                    "for summaries must also agree with it.")
def natural_id_matches(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "natural_id_matches")


@doc_check(section="Manifest", keyword="MUST",
           sentence="The required fields are created_at, memorizz_version, source_provider, scope, counts, "
                    "record_count, includes, and warnings.")
def manifest_required(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "manifest_required")


@doc_check(section="Manifest", keyword="MUST", sentence="`counts` Record count for every store, including zeros")
def manifest_counts(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "manifest_counts")


@doc_check(section="Manifest", keyword="MUST", sentence="`record_count` Sum of the per-store counts")
def manifest_record_count(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "manifest_record_count")


@doc_check(section="Manifest", keyword="MUST",
           sentence="`scope` ... `includes` Whether delegates, history, captured context and embeddings were "
                    "requested ... `warnings` Export omissions and limitations")
def manifest_field_types(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "manifest_field_types")


@doc_check(section="Manifest", keyword="SHOULD", sentence="`created_at` Export timestamp in UTC")
def created_at_utc(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "created_at_utc")


@doc_check(section="Records and relationships", keyword="SHOULD",
           sentence="A link does not imply that its target is included: deleted or unselected targets are "
                    "reported as external references.")
def external_references_reported(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "external_references_reported")


@doc_check(section="What is portable", keyword="MUST",
           sentence="Embeddings are excluded by default and discarded on standard import")
def embeddings_follow_includes(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "embeddings_follow_includes")


@doc_check(section="Envelope", keyword="MUST",
           sentence='`integrity` Object `algorithm: "sha256"` and a 64-character lowercase hexadecimal `digest`')
def integrity_form(doc: Any, ctx: Any) -> Iterator[Failure]:
    yield from _rule(doc, ctx, "integrity_form")


@doc_check(section="Integrity and validation", keyword="MUST",
           sentence="The checksum covers canonical UTF-8 JSON of every field except integrity ... no NaN or Infinity.")
def numbers_finite(doc: Any, ctx: Any) -> Iterator[Failure]:
    arc = archive_state(doc, ctx)
    if arc.refused:
        raise SkipCheck(f"the archive is refused before this rule applies: {arc.refused}")
    canonical(arc, ctx)
    if arc.canonical_error:
        yield Failure("the archive has no canonical JSON form", arc.canonical_error, "finite numbers only")


@doc_check(section="Integrity and validation", keyword="MUST",
           sentence="Validation rejects ... checksum mismatches. The checksum covers canonical UTF-8 JSON of every "
                    "field except integrity: object keys sorted, compact separators, literal Unicode, and no NaN or "
                    "Infinity.")
def integrity_digest(doc: Any, ctx: Any) -> Iterator[Failure]:
    arc = archive_state(doc, ctx)
    if arc.refused:
        raise SkipCheck(f"the archive is refused before this rule applies: {arc.refused}")
    integ = arc.value.get("integrity") if isinstance(arc.value, dict) else None
    claimed = integ.get("digest") if isinstance(integ, dict) else None
    if not isinstance(claimed, str):
        raise SkipCheck("no integrity digest to compare (integrity_form reports it)")
    data = canonical(arc, ctx)
    if data is None:
        raise SkipCheck(f"no canonical form to hash (numbers_finite reports it): {arc.canonical_error}")
    actual = hashlib.sha256(data).hexdigest()
    if actual != claimed:
        yield Failure("integrity.digest is not the sha256 of the canonical JSON", claimed, actual, "$.integrity.digest")


@doc_check(section="Integrity and validation", keyword="MUST",
           sentence="The default archive limits are 50 MiB and 100,000 records.")
def within_limits(doc: Any, ctx: Any) -> Iterator[Failure]:
    arc = archive_state(doc, ctx)
    if arc.refused:
        max_bytes, max_records = limits(ctx)
        yield Failure(f"the archive is over a limit: {arc.refused}", arc.refused,
                      f"at most {max_bytes} bytes and {max_records} records")


# ---- Producer ------------------------------------------------------------------------------------

@producer_check(section="Envelope", keyword="MUST",
                sentence="Version 1 requires all 13 store keys and their taxonomy mappings, even when an export "
                         "selects only one type. Unselected or empty stores contain [].")
def selected_export_only_selected(ctx: Any) -> Iterator[Failure]:
    seed = seeded(ctx)
    archive = export(ctx, memory_id=seed.ns, types=["summaries"])
    problems = mz.scan(archive, mz.NATURAL_IDS_NAMED)
    for rule in ("stores_complete", "taxonomy_canonical", "manifest_counts"):
        for p in problems.get(rule, []):
            yield Failure(f"a one-type export: {p.title}", p.received, p.expected, p.path)
    stores = archive.get("stores") if isinstance(archive.get("stores"), dict) else {}
    for store, records in stores.items():
        if store != "summaries" and records:
            yield Failure(f"an export of summaries only holds {store} records", len(records), [], f"$.stores.{store}")
    if not any(r.get("id") == seed.summary for r in stores.get("summaries") or [] if isinstance(r, dict)):
        yield Failure("the selected summary is not in the export", None, seed.summary, "$.stores.summaries")


@producer_check(section="Records and relationships", keyword="SHOULD",
                sentence="A link does not imply that its target is included: deleted or unselected targets are "
                         "reported as external references.")
def unselected_links_reported(ctx: Any) -> Iterator[Failure]:
    seed = seeded(ctx)
    archive = export(ctx, memory_id=seed.ns, types=["summaries"])
    reported = archive.get("manifest", {}).get("external_references") or []
    for ref in (seed.msg1, seed.msg2, seed.gone):
        if ref not in reported:
            yield Failure("a summary's source message outside the export is not an external reference", reported,
                          ref, "$.manifest.external_references")


@producer_check(section="What is portable", keyword="MUST",
                sentence="Credentials and executable runtime objects are omitted.")
def credentials_never_exported(ctx: Any) -> Iterator[Failure]:
    seed = seeded(ctx)
    archive = export(ctx, agent_id=seed.owner)
    if not by_content(archive):
        raise TargetError("the export of the seeded agent holds none of its records")
    for path in mz.credential_paths(archive.get("stores")):
        yield Failure("a credential field is in the export", path, "omitted", "$.stores" + path[1:])


# ---- Consumer ------------------------------------------------------------------------------------

def _fresh_namespace_empty(ctx: Any, seed: Seed) -> Iterator[Failure]:
    after = export(ctx, memory_id=seed.ns)
    leaked = sorted(set(by_content(after)) & set(seed.texts.values()))
    if leaked:
        yield Failure("records were written by an import that must not write", len(leaked), 0,
                      f"$ (namespace {seed.ns})")


@consumer_check(section="What is portable", keyword="MUST",
                sentence="Imports preview conflicts before writing")
def preview_writes_nothing(ctx: Any) -> Iterator[Failure]:
    seed = Seed(ctx, "preview")
    accepted, body = import_archive(ctx, seed.sealed_copy(), "preview")
    report = report_of(ctx, accepted, body, "previewing a fresh, valid archive")
    if report.get("imported") not in (0, None):
        yield Failure("a preview reports imported records", report.get("imported"), 0, "$.imported")
    yield from _fresh_namespace_empty(ctx, seed)


@consumer_check(section="What is portable", keyword="MUST",
                sentence="Imports preview conflicts before writing")
def preview_reports_conflicts(ctx: Any) -> Iterator[Failure]:
    seed = seeded(ctx)
    accepted, body = import_archive(ctx, seed.sealed_copy(), "preview")
    if not isinstance(body, dict):
        raise TargetError(f"the preview answered {type(body).__name__}, not a report")
    listed = {(c.get("memory_type"), c.get("id")) for c in body.get("conflicts") or [] if isinstance(c, dict)}
    missing = sorted(ids_in(seed.archive) - listed)
    if missing:
        yield Failure("a preview of records already present does not list them as conflicts", len(missing), 0,
                      f"$.conflicts (e.g. {missing[0]})")


@consumer_check(section="Integrity and validation", keyword="MUST",
                sentence="Imports preview conflicts before writing ... Restoring with preserved IDs keeps those "
                         "identities.")
def restore_refuses_conflicts(ctx: Any) -> Iterator[Failure]:
    seed = seeded(ctx)
    changed = seed.sealed_copy()
    for _, record in mz.records_of(changed):
        record["data"]["content"] = record["data"]["content"] + " (changed)"
    mz.seal(changed)
    accepted, body = import_archive(ctx, changed, "restore", "error")
    if accepted and isinstance(body, dict) and body.get("ok") is not False:
        yield Failure("a restore over existing records with conflict=error was accepted", body.get("imported"),
                      "refused before writing", "$")
    after = by_content(export(ctx, agent_id=seed.owner))
    overwritten = [t for t in after if t.endswith(" (changed)")]
    if overwritten:
        yield Failure("a refused restore overwrote existing records", len(overwritten), 0, "$")


@consumer_check(section="Records and relationships", keyword="MUST",
                sentence="Restoring with preserved IDs keeps those identities.")
def restore_keeps_ids(ctx: Any) -> Iterator[Failure]:
    seed = seeded(ctx)
    after = by_content(export(ctx, agent_id=seed.owner))
    for store, record in mz.records_of(seed.archive):
        text = record["data"]["content"]
        got = after.get(text)
        if got is None:
            yield Failure("a restored record is missing from the export", None, record["id"], f"$.stores.{store}")
            continue
        if got[1].get("id") != record["id"]:
            yield Failure("a restored record has a new id", got[1].get("id"), record["id"], f"$.stores.{store}")
        data = got[1].get("data") or {}
        for key in ("memory_id", "memory_ids", "delegates", "source_message_ids", mz.NATURAL_IDS_IMPLIED.get(store)):
            if key and key in record["data"] and data.get(key) != record["data"][key]:
                yield Failure(f"a restored record changed its {key}", data.get(key), record["data"][key],
                              f"$.stores.{store}[id={record['id']}].data.{key}")


def cloned(ctx: Any) -> tuple[Seed, dict[str, Any], dict[str, Any]]:
    """(the seed, the clone report's id_map, the export of the cloned owner agent), once per run."""

    def make() -> tuple[Seed, dict[str, Any], dict[str, Any]]:
        seed = seeded(ctx)
        accepted, body = import_archive(ctx, seed.sealed_copy(), "clone")
        report = report_of(ctx, accepted, body, "cloning an archive with new ids")
        id_map = report.get("id_map")
        if not isinstance(id_map, dict) or seed.owner not in id_map:
            raise TargetError("the clone report has no id_map naming the new id of the owner agent")
        return seed, id_map, export(ctx, agent_id=id_map[seed.owner])

    value: tuple[Seed, dict[str, Any], dict[str, Any]] = ctx.once("memorizz-clone", make)
    return value


@consumer_check(section="Records and relationships", keyword="MUST",
                sentence="Cloning with new IDs rewrites documented identity and reference fields")
def clone_rewrites_ids(ctx: Any) -> Iterator[Failure]:
    seed, id_map, archive = cloned(ctx)
    after = by_content(archive)
    new_ids = {rid: after[text][1].get("id") for rid, text in seed.texts.items() if text in after}
    for store, record in mz.records_of(seed.archive):
        rid, data = record["id"], record["data"]
        new = new_ids.get(rid)
        if new is None:
            yield Failure("a cloned record is missing from the export of the cloned agent", None, rid,
                          f"$.stores.{store}")
            continue
        if new == rid:
            yield Failure("a cloned record kept its id", new, "a new id", f"$.stores.{store}")
        got = after[data["content"]][1].get("data") or {}
        natural = mz.NATURAL_IDS_IMPLIED.get(store)
        if natural in data and got.get(natural) != new:
            yield Failure(f"a cloned record's {natural} is not its new id", got.get(natural), new,
                          f"$.stores.{store}[id={new}].data.{natural}")
        if "memory_id" in data and got.get("memory_id") in (data["memory_id"], None):
            yield Failure("a cloned record kept its namespace", got.get("memory_id"), "a new namespace",
                          f"$.stores.{store}[id={new}].data.memory_id")
        for key in ("delegates", "source_message_ids"):
            if key in data:
                want = [new_ids.get(x, id_map.get(x, x)) for x in data[key]]
                if got.get(key) != want or (data[key] and got.get(key) == data[key]):
                    yield Failure(f"a cloned record's {key} does not point at the cloned records", got.get(key),
                                  want, f"$.stores.{store}[id={new}].data.{key}")


@consumer_check(section="Records and relationships", keyword="MUST",
                sentence="Cloning with new IDs rewrites documented identity and reference fields, while preserving "
                         "memory prose")
def clone_keeps_prose(ctx: Any) -> Iterator[Failure]:
    seed, _id_map, archive = cloned(ctx)
    after = by_content(archive)
    for rid, text in seed.texts.items():
        if text not in after:
            yield Failure("a record's prose changed in the clone (or the record is missing)", None, text,
                          f"$ (record {rid})")


@consumer_check(section="Records and relationships", keyword="MUST",
                sentence="Cloning with new IDs ... keeping delegate-private namespaces separate")
def clone_keeps_namespaces_separate(ctx: Any) -> Iterator[Failure]:
    seed, _id_map, archive = cloned(ctx)
    after = by_content(archive)
    spaces: dict[str, set[Any]] = {seed.ns: set(), seed.ns_delegate: set()}
    for _, record in mz.records_of(seed.archive):
        old_ns, text = record["data"].get("memory_id"), record["data"]["content"]
        if old_ns in spaces and text in after:
            spaces[old_ns].add((after[text][1].get("data") or {}).get("memory_id"))
    owner, private = spaces[seed.ns], spaces[seed.ns_delegate]
    if not owner or not private:
        raise TargetError("the export of the cloned agent lacks the records of one of its two namespaces")
    if owner & private or len(owner) != 1 or len(private) != 1:
        yield Failure("the delegate's private namespace and the owner's namespace were merged or split in the clone",
                      {"owner": sorted(map(str, owner)), "delegate": sorted(map(str, private))},
                      "one new namespace each, distinct", "$")


@consumer_check(section="What is portable", keyword="MUST",
                sentence="Embeddings are excluded by default and discarded on standard import")
def import_discards_embeddings(ctx: Any) -> Iterator[Failure]:
    seed = seeded(ctx)
    archive = export(ctx, agent_id=seed.owner, include_embeddings=True)
    manifest = archive.get("manifest") if isinstance(archive.get("manifest"), dict) else {}
    includes = manifest.get("includes") if isinstance(manifest.get("includes"), dict) else {}
    if includes.get("embeddings") is not True:
        raise SkipCheck("the target cannot export embeddings on request, so what an import kept is not visible")
    for path in mz.embedding_paths(archive.get("stores")):
        yield Failure("an embedding survived a standard import", path, "discarded", "$.stores" + path[1:])


@consumer_check(section="What is portable", keyword="MUST", sentence="imported agent automations start disabled")
def imported_automations_disabled(ctx: Any) -> Iterator[Failure]:
    seed = seeded(ctx)
    agents = export(ctx, agent_id=seed.owner).get("stores", {}).get("agents") or []
    found = {r.get("id"): r.get("data") or {} for r in agents if isinstance(r, dict)}
    for rid in (seed.owner, seed.delegate):
        if rid not in found:
            raise TargetError(f"the restored agent {rid} is not in the export")
        if found[rid].get("automations_enabled") is not False:
            yield Failure("an imported agent's automations are not disabled",
                          found[rid].get("automations_enabled", "<absent>"), False,
                          f"$.stores.agents[id={rid}].data.automations_enabled")


@consumer_check(section="What is portable", keyword="MUST",
                sentence="restore is not atomic across stores: a provider failure can leave a partial import, with "
                         "committed progress reported.")
def failed_import_reports_progress(ctx: Any) -> Iterator[Failure]:
    seed = Seed(ctx, "partial")
    after_n = 3
    ctx.target.call("arm_failure", {"after": after_n})
    accepted, body = import_archive(ctx, seed.sealed_copy(), "restore")
    if not isinstance(body, dict):
        raise TargetError(f"the failed import answered {type(body).__name__}, not a report")
    present = set(by_content(export(ctx, memory_id=seed.ns))) | set(by_content(export(ctx, memory_id=seed.ns_delegate)))
    committed = sum(1 for t in seed.texts.values() if t in present)
    if body.get("ok") is not False:
        yield Failure("an import that failed part way reports success", body.get("ok"), False, "$.ok")
    if body.get("imported") != committed:
        yield Failure("the report's imported count is not the progress committed", body.get("imported"), committed,
                      "$.imported")
    if not body.get("errors"):
        yield Failure("the failed import reports no error", body.get("errors"), "the provider failure", "$.errors")


_BREAKS = {
    "checksum mismatch": lambda a: a["integrity"].__setitem__("digest", "0" * 64),
    "version 2": lambda a: (a.__setitem__("version", 2), mz.seal(a)),
    "unknown envelope field": lambda a: (a.__setitem__("comment", "x"), mz.seal(a)),
    "duplicate record id": lambda a: (a["stores"]["knowledge_base"].append(
        copy.deepcopy(a["stores"]["knowledge_base"][0])), mz.seal(a)),
}


@consumer_check(section="Integrity and validation", keyword="MUST",
                sentence="Validation rejects unsupported versions, unknown envelope fields, incorrect taxonomy, missing "
                         "store keys, duplicate or inconsistent IDs, incorrect counts, and checksum mismatches.")
def rejects_invalid_archive(ctx: Any) -> Iterator[Failure]:
    for label, breaker in _BREAKS.items():
        seed = Seed(ctx, "invalid")
        bad = seed.sealed_copy()
        breaker(bad)
        accepted, body = import_archive(ctx, bad, "restore")
        if accepted and not (isinstance(body, dict) and body.get("ok") is False):
            yield Failure(f"an archive with a {label} was accepted", body if not isinstance(body, dict)
                          else body.get("imported"), "rejected", "$")
        yield from _fresh_namespace_empty(ctx, seed)
