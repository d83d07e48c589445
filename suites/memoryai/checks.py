"""MemoryAI Protocol v1 suite: registers the SuiteSpec and every check (document checks live beside)."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from functools import partial
from typing import Any

from memconform.core.model import Failure, SkipCheck, TargetError
from memconform.core.registry import check
from memconform.core.suite import Level, SuiteSpec, register_suite
from memconform.formats import memoryai as mai

from . import client as c
from . import document_checks  # noqa: F401  (registers the Level 1 document checks)
from .document_checks import SPEC


def _reference() -> Any:
    """`reference:memoryai`: the embedded implementation."""
    from memconform.reference.memoryai import ReferenceBrain

    return ReferenceBrain()


def _mutants() -> Any:
    from memconform.mutants import memoryai as mutants

    return mutants


def _serve(**where: Any) -> None:
    """`memconform serve memoryai`: the reference over HTTP (host=, port=, db=)."""
    from memconform.reference.memoryai_http import serve_reference

    serve_reference(**where)


SUITE = register_suite(SuiteSpec(
    name=mai.SUITE,
    spec_title=SPEC,
    version="1",
    levels=[
        Level("1", "Level 1 Producer"),
        Level("2", "Level 2 Consumer"),
        Level("3", "Level 3 Bidirectional", requires=("1", "2")),
        Level("http", "HTTP profile (RECOMMENDED)"),
    ],
    document_source=c.seed_and_export,
    detect=mai.detect,
    routes=mai.ROUTES,
    reference=_reference, mutants=_mutants, serve=_serve,
))

target_check = partial(check, suite=mai.SUITE, spec=SPEC)


# ---- Level 1 Producer, on the live target ---------------------------------------------------

@target_check(section="§6", keyword="MUST", level="1",
              sentence="Producers MUST NOT export memory data the user has marked deleted.")
def deleted_not_exported(ctx: Any) -> Iterator[Failure]:
    doomed, kept = c.chunk(ctx, "doomed"), c.chunk(ctx, "kept")
    yield from c.expect_accepted(c.import_bundle(ctx, c.bundle(ctx, [doomed, kept])), "import of the records to delete")
    reply = ctx.target.call("delete_chunk", {"content_hash": doomed["content_hash"]})
    if not reply.ok:
        raise TargetError(f"delete_chunk refused: {reply.raw[:200]!r}")
    exported = c.by_hash(c.export(ctx, "full"))
    if doomed["content_hash"] in exported:
        yield Failure("a chunk marked deleted is still exported", exported[doomed["content_hash"]][0].get("content"), "absent", "$.chunks")
    if kept["content_hash"] not in exported:
        yield Failure("deleting one chunk also removed another from the export", "absent", kept["content"], "$.chunks")


# ---- Level 2 Consumer -------------------------------------------------------------------------

@target_check(section="§3.1", keyword="MUST", level="2",
              sentence="A consumer MUST reject a Bundle whose `version` is greater than the maximum it supports.")
def rejects_newer_version(ctx: Any) -> Iterator[Failure]:
    probe = c.chunk(ctx, "future")
    doc = c.bundle(ctx, [probe], version=mai.MAX_VERSION + 998)
    reply = c.import_bundle(ctx, doc)
    if reply.ok:
        yield Failure("a bundle of version 999 was accepted", f"{reply.status} {reply.raw[:200]!r}", "rejected")
    if probe["content_hash"] in c.by_hash(c.export(ctx, "full")):
        yield Failure("content of a rejected bundle was stored", probe["content"], "nothing imported", "$.chunks")


@target_check(section="§3.8", keyword="MUST", level="2",
              sentence="Skip chunks whose `content_hash` already exists in the target tenant (no duplicate insert).")
def reimport_inserts_nothing(ctx: Any) -> Iterator[Failure]:
    chunks = [c.chunk(ctx, f"idem{i}") for i in range(3)]
    doc = c.bundle(ctx, chunks)
    first = c.import_bundle(ctx, doc)
    yield from c.expect_accepted(first, "first import")
    second = c.import_bundle(ctx, doc)
    yield from c.expect_accepted(second, "second import")
    if not second.ok:
        return
    report = c.report_of(second)
    if c.counter(report, "chunks", "inserted") != 0:
        yield Failure("re-import inserted chunks again", c.counter(report, "chunks", "inserted"), 0, "$.report.chunks.inserted")
    if c.counter(report, "chunks", "skipped_duplicate") != len(chunks):
        yield Failure("re-import did not count every chunk as skipped_duplicate", c.counter(report, "chunks", "skipped_duplicate"), len(chunks), "$.report.chunks.skipped_duplicate")
    exported = c.by_hash(c.export(ctx, "full"))
    for ch in chunks:
        n = len(exported.get(ch["content_hash"], []))
        if n != 1:
            yield Failure("after two imports a chunk is not present exactly once", n, 1, "$.chunks", ch["content"])


@target_check(section="§3.8", keyword="MUST", level="2",
              sentence="Skip chunks whose content_hash already exists (the existing row is preserved).")
def existing_row_preserved(ctx: Any) -> Iterator[Failure]:
    original = c.chunk(ctx, "keep", tags=["original"], importance=0.25)
    yield from c.expect_accepted(c.import_bundle(ctx, c.bundle(ctx, [original])), "first import")
    rival = dict(original, tags=["rival"], importance=0.75, metadata={"rival": True})
    yield from c.expect_accepted(c.import_bundle(ctx, c.bundle(ctx, [rival])), "import of a rival row")
    rows = c.by_hash(c.export(ctx, "full")).get(original["content_hash"], [])
    if len(rows) != 1:
        yield Failure("the chunk is not present exactly once", len(rows), 1, "$.chunks")
        return
    row = rows[0]
    for name in ("tags", "importance"):
        if row.get(name) != original[name]:
            yield Failure(f"the existing row's {name} was overwritten by a duplicate", row.get(name), original[name], f"$.chunks[?].{name}")


def _edge(a: int, b: int, weight: float, count: int, ts: str) -> dict[str, Any]:
    return {"chunk_a": a, "chunk_b": b, "edge_type": "co_recall", "weight": weight, "co_activation_count": count,
            "created_at": ts, "updated_at": ts}


@target_check(section="§3.8", keyword="MUST", level="2",
              sentence="UPSERT memory_edges on (source, target, edge_type) — accumulate co_activation_count, take MAX of weight, refresh updated_at.")
def edges_upserted(ctx: Any) -> Iterator[Failure]:
    a, b = c.chunk(ctx, "edge-a"), c.chunk(ctx, "edge-b")
    first = c.bundle(ctx, [a, b], edges=[_edge(1, 2, 0.75, 2, c.now_iso(-500))])
    yield from c.expect_accepted(c.import_bundle(ctx, first), "first import")
    second = c.bundle(ctx, [dict(a), dict(b)], edges=[_edge(1, 2, 0.25, 3, c.now_iso(-400))])
    yield from c.expect_accepted(c.import_bundle(ctx, second), "second import")
    edges = c.edges_by_hash(c.export(ctx, "full"))
    key = (a["content_hash"], b["content_hash"], "co_recall")
    edge = edges.get(key)
    if edge is None:
        yield Failure("the imported edge is not in the export", "absent", key, "$.memory_edges")
        return
    expected_count = 5 if ctx.option("reimport_counters") == "accumulate" else 2
    if edge.get("co_activation_count") != expected_count:
        yield Failure("co_activation_count was not accumulated (errata E6)", edge.get("co_activation_count"), expected_count, "$.memory_edges[?].co_activation_count")
    if edge.get("weight") != 0.75:
        yield Failure("weight is not the MAX of the two imports", edge.get("weight"), 0.75, "$.memory_edges[?].weight")
    dupes = [k for k in edges if k == key]
    if len(dupes) != 1:
        yield Failure("the edge appears more than once", len(dupes), 1, "$.memory_edges")


@target_check(section="§3.8", keyword="MUST", level="2",
              sentence="UPSERT entities on (tenant_id, entity_name) — accumulate frequency, take latest last_seen, OR is_dna.")
def entities_upserted(ctx: Any) -> Iterator[Failure]:
    name = ctx.unique("entity")
    early, late = c.now_iso(-7200), c.now_iso(-60)
    e1 = {"name": name, "frequency": 2, "first_seen": early, "last_seen": late, "is_dna": True}
    e2 = {"name": name, "frequency": 3, "first_seen": early, "last_seen": early, "is_dna": False}
    yield from c.expect_accepted(c.import_bundle(ctx, c.bundle(ctx, [c.chunk(ctx, "ent1")], entities=[e1])), "first import")
    yield from c.expect_accepted(c.import_bundle(ctx, c.bundle(ctx, [c.chunk(ctx, "ent2")], entities=[e2])), "second import")
    matches = [e for e in c.export(ctx, "full").get("entities", []) if isinstance(e, dict) and e.get("name") == name]
    if len(matches) != 1:
        yield Failure("the entity is not present exactly once after two imports", len(matches), 1, "$.entities")
        return
    entity = matches[0]
    expected_freq = 5 if ctx.option("reimport_counters") == "accumulate" else 2
    if entity.get("frequency") != expected_freq:
        yield Failure("frequency was not accumulated", entity.get("frequency"), expected_freq, "$.entities[?].frequency")
    if entity.get("last_seen") != late:
        yield Failure("last_seen is not the latest of the two", entity.get("last_seen"), late, "$.entities[?].last_seen")
    if entity.get("is_dna") is not True:
        yield Failure("is_dna is not the OR of the two imports", entity.get("is_dna"), True, "$.entities[?].is_dna")


@target_check(section="§3.8", keyword="MUST", level="2",
              sentence="The Consumer MUST NOT modify the source tenant's `tenant_id`; the Bundle's manifest `tenant_id` is informational only.")
def tenant_id_not_adopted(ctx: Any) -> Iterator[Failure]:
    foreign = str(uuid.uuid4())
    yield from c.expect_accepted(c.import_bundle(ctx, c.bundle(ctx, [c.chunk(ctx, "tenant")], tenant_id=foreign)), "import")
    exported = c.export(ctx, "full")
    if exported.get("manifest", {}).get("tenant_id") == foreign:
        yield Failure("the consumer adopted the bundle's tenant_id", foreign, "the consumer's own tenant_id", "$.manifest.tenant_id")
    if foreign in json.dumps(exported.get("chunks", []), ensure_ascii=False):
        yield Failure("the bundle's tenant_id leaked into stored records", foreign, "absent", "$.chunks")


@target_check(section="§3.7", keyword="MUST", level="2",
              sentence="DNA chunks (memory_type in the DNA set, or zone critical/important, or is_pinned) MUST NOT be auto-decayed or auto-deleted.")
def dna_never_decayed(ctx: Any) -> Iterator[Failure]:
    rule = ctx.option("dna_rule")
    dna = [c.chunk(ctx, f"dna-{t}", t, decay_score=0.06) for t in sorted(mai.DNA_TYPES)]
    if rule == "union":
        dna += [c.chunk(ctx, "dna-critical", "fact", zone="critical", decay_score=0.06),
                c.chunk(ctx, "dna-important", "fact", zone="important", decay_score=0.06),
                c.chunk(ctx, "dna-pinned", "episodic", is_pinned=True, decay_score=0.06)]
    plain = c.chunk(ctx, "plain", "fact", decay_score=0.06)
    yield from c.expect_accepted(c.import_bundle(ctx, c.bundle(ctx, dna + [plain])), "import")
    reply = ctx.target.call("decay", {"rounds": 3})
    if not reply.ok:
        raise TargetError(f"decay refused: {reply.raw[:200]!r}")
    ctx.note(f"decay -> {reply.raw[:200]!r}")
    exported = c.by_hash(c.export(ctx, "full"))
    for ch in dna:
        rows = exported.get(ch["content_hash"])
        if not rows:
            yield Failure("a DNA chunk was deleted by decay", "absent", ch["content"], "$.chunks", f"memory_type={ch['memory_type']} zone={ch['zone']} is_pinned={ch['is_pinned']}")
        elif isinstance(rows[0].get("decay_score"), int | float) and rows[0]["decay_score"] < ch["decay_score"]:
            yield Failure("a DNA chunk's decay_score was lowered", rows[0]["decay_score"], f">= {ch['decay_score']}", "$.chunks[?].decay_score", f"memory_type={ch['memory_type']} zone={ch['zone']} is_pinned={ch['is_pinned']}")


@target_check(section="§3.5", keyword="SHOULD", level="2",
              sentence="When the consumer's local embedding_model differs from the manifest's, the consumer SHOULD drop embeddings (use null).")
def embedding_mismatch_dropped(ctx: Any) -> Iterator[Failure]:
    _, dim = c.target_model(ctx)
    dim = dim or 4
    ch = c.chunk(ctx, "foreign-model", embedding=mai.encode_embedding(c.vector(dim, 7)), embedding_model="x-memconform-foreign-model")
    reply = c.import_bundle(ctx, c.bundle(ctx, [ch], model="x-memconform-foreign-model", dim=dim))
    yield from c.expect_accepted(reply, "import")
    if not reply.ok:
        return
    if c.report_of(reply).get("embedding_model_match") is not False:
        yield Failure("the report does not say the embedding model differs", c.report_of(reply).get("embedding_model_match"), False, "$.report.embedding_model_match")
    rows = c.by_hash(c.export(ctx, "full")).get(ch["content_hash"], [])
    if not rows:
        yield Failure("the chunk with a foreign embedding was not imported", "absent", ch["content"], "$.chunks")
    elif ctx.option("embedding_mismatch") == "drop" and rows[0].get("embedding") == ch["embedding"]:
        yield Failure("an embedding from a different model was kept", "the foreign vector", "null (or a re-embedding)", "$.chunks[?].embedding")


@target_check(section="§3.6", keyword="SHOULD", level="2",
              sentence="A consumer SHOULD verify the checksum on import and warn (not reject) on mismatch.")
def checksum_mismatch_warned(ctx: Any) -> Iterator[Failure]:
    ch = c.chunk(ctx, "bad-checksum")
    doc = c.bundle(ctx, [ch])
    doc["manifest"]["checksum"] = "0" * 64
    reply = c.import_bundle(ctx, doc)
    if not reply.ok:
        yield Failure("a bundle with a wrong checksum was rejected (the spec says warn, not reject)", reply.status, "accepted with a warning")
        return
    warnings = c.report_of(reply).get("warnings")
    if not isinstance(warnings, list) or not any("checksum" in str(w).lower() for w in warnings):
        yield Failure("no warning names the checksum mismatch", warnings, "a warning mentioning the checksum", "$.report.warnings")


@target_check(section="§5 Level 2", keyword="SHOULD", level="2",
              sentence="Consumers ingest any spec-conformant bundle; invalid chunks are skipped and counted as skipped_invalid while nothing valid is lost (errata E9).")
def invalid_chunks_skipped(ctx: Any) -> Iterator[Failure]:
    good = [c.chunk(ctx, f"good{i}") for i in range(2)]
    bad_type = c.chunk(ctx, "bad-type")
    bad_type["memory_type"] = 42
    no_content = c.chunk(ctx, "no-content")
    no_content.pop("content")
    reply = c.import_bundle(ctx, c.bundle(ctx, good + [bad_type, no_content]))
    if not reply.ok:
        yield Failure("one invalid chunk made the whole import fail", reply.status, "valid chunks imported, invalid skipped")
    else:
        report = c.report_of(reply)
        if c.counter(report, "chunks", "skipped_invalid") != 2:
            yield Failure("invalid chunks not counted as skipped_invalid", c.counter(report, "chunks", "skipped_invalid"), 2, "$.report.chunks.skipped_invalid")
    exported = c.by_hash(c.export(ctx, "full"))
    for ch in good:
        if ch["content_hash"] not in exported:
            yield Failure("a valid chunk was lost because another chunk was invalid", "absent", ch["content"], "$.chunks")


def _shape_failures(body: Any) -> Iterator[Failure]:
    if not isinstance(body, dict) or not isinstance(body.get("success"), bool) or not isinstance(body.get("report"), dict):
        yield Failure("the import answer is not {success: bool, report: {...}}", body, "ImportReport", "$")
        return
    report = body["report"]
    for name, kind in (("bundle_format", str), ("bundle_version", int), ("embedding_model_match", bool), ("warnings", list)):
        if not isinstance(report.get(name), kind):
            yield Failure(f"report.{name} is missing or not a {kind.__name__}", report.get(name, "<absent>"), kind.__name__, f"$.report.{name}")
    for section, names in c.REPORT_COUNTERS.items():
        for name in names:
            value = c.counter(report, section, name)
            if not isinstance(value, int) or isinstance(value, bool) or value < 0:
                yield Failure(f"report.{section}.{name} is missing or not a count", value, "integer >= 0", f"$.report.{section}.{name}")


@target_check(section="§4", keyword="MUST", level="2",
              sentence="ImportReport shape: {success, report: {bundle_format, bundle_version, embedding_model_match, chunks, memory_edges, entities, l2_sessions, mood_states, agents, warnings}} (errata E8).")
def import_report_shape(ctx: Any) -> Iterator[Failure]:
    reply = c.import_bundle(ctx, c.bundle(ctx, [c.chunk(ctx, "shape")]))
    yield from c.expect_accepted(reply, "import")
    yield from _shape_failures(reply.json())
    body = reply.json()
    if isinstance(body, dict) and body.get("success") is not True:
        yield Failure("success is not true for an accepted import", body.get("success"), True, "$.success")


# ---- Level 3 Bidirectional ----------------------------------------------------------------------

@target_check(section="§5 Level 3", keyword="MUST", level="3",
              sentence="Round-trip a Bundle (export → import → re-export) producing an equivalent Bundle (same chunks set by content_hash, same entities by name).")
def roundtrip_equivalent(ctx: Any) -> Iterator[Failure]:
    from hypothesis import given, seed
    from memconform.formats.memoryai import strategies

    model, dim = c.target_model(ctx)
    found: list[Failure] = []
    failing: dict[str, Any] = {}
    seen: dict[str, list[Failure]] = {}

    @seed(ctx.profile.seed)
    @ctx.profile.hypothesis_settings()
    @given(strategies.bundles(dim=dim, model=model, unique_prefix=ctx.unique("rt")))
    def prop(doc: dict[str, Any]) -> None:
        prefix = doc["chunks"][0]["content"].split("#", 1)[0]
        if prefix in seen:  # hypothesis replays a failing example: the target already holds it, so
            problems = seen[prefix]  # give the verdict of the first run instead of importing again
        else:
            problems = seen[prefix] = list(roundtrip_once(ctx, doc))
        if problems:
            found[:] = problems
            failing["bundle"] = doc
            raise AssertionError(problems[0].title)

    try:
        prop()
    except AssertionError:
        path = _save_example(ctx, failing.get("bundle"))
        for f in found:
            if path:
                f.detail = (f.detail + f"; failing bundle saved; replay with: memconform replay {path} --suite memoryai").strip("; ")
        yield from found


def roundtrip_once(ctx: Any, doc: dict[str, Any]) -> Iterator[Failure]:
    """One bundle through import → export → import → re-export; also what `memconform replay` runs."""
    from memconform.formats.memoryai.equivalence import roundtrip_differences

    reply = c.import_bundle(ctx, doc)
    if not reply.ok:
        yield Failure("a conformant bundle was refused", reply.raw[:300], "accepted")
        return
    first = c.export(ctx, "full")
    c.import_bundle(ctx, first)
    yield from roundtrip_differences(doc, first, c.export(ctx, "full"))


SUITE.replay = roundtrip_once  # `memconform replay`: a saved fuzz example once more


def _save_example(ctx: Any, doc: Any) -> str | None:
    if doc is None or ctx.report_dir is None:
        return None
    folder = ctx.report_dir / "examples"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"memoryai-roundtrip-{ctx.run_id}.json"
    path.write_text(json.dumps(doc, ensure_ascii=False, indent=1), encoding="utf-8")
    return str(path)


# ---- HTTP profile (RECOMMENDED) -------------------------------------------------------------------

@target_check(section="§4", keyword="SHOULD", level="http",
              sentence="POST /v1/brain/export with scope dna_only returns a Bundle of DNA chunks only.")
def export_scope_dna_only(ctx: Any) -> Iterator[Failure]:
    dna, plain = c.chunk(ctx, "scope-dna", "decision"), c.chunk(ctx, "scope-plain", "fact")
    yield from c.expect_accepted(c.import_bundle(ctx, c.bundle(ctx, [dna, plain])), "import")
    doc = c.export(ctx, "dna_only")
    rows = c.by_hash(doc)
    if doc.get("manifest", {}).get("scope") != "dna_only":
        yield Failure("manifest.scope does not say dna_only", doc.get("manifest", {}).get("scope"), "dna_only", "$.manifest.scope")
    if dna["content_hash"] not in rows:
        yield Failure("a DNA chunk is missing from the dna_only export", "absent", dna["content"], "$.chunks")
    leaked = [r[0].get("content") for r in rows.values() if not mai.is_dna(r[0], ctx.option("dna_rule"))]
    if leaked:
        yield Failure("the dna_only export contains non-DNA chunks", leaked[:3], "only DNA chunks", "$.chunks")


@target_check(section="§4", keyword="SHOULD", level="http",
              sentence="POST /v1/brain/export with scope since returns the chunks created since the given time (errata E10).")
def export_scope_since(ctx: Any) -> Iterator[Failure]:
    old = c.chunk(ctx, "since-old", created_at="2001-01-01T00:00:00Z")
    new = c.chunk(ctx, "since-new", created_at=c.now_iso(-10))
    yield from c.expect_accepted(c.import_bundle(ctx, c.bundle(ctx, [old, new])), "import")
    since = c.now_iso(-600)
    rows = c.by_hash(c.export(ctx, "since", since))
    if new["content_hash"] not in rows:
        yield Failure("a chunk created after `since` is missing", "absent", new["content"], "$.chunks")
    if old["content_hash"] in rows:
        yield Failure("a chunk created before `since` was exported", old["created_at"], f">= {since}", "$.chunks")


def parse_stream(raw: bytes) -> tuple[dict[str, Any], list[Failure]]:
    """Reassemble a bundle from the NDJSON stream (errata E3: envelope line, then {section, record} lines)."""
    failures: list[Failure] = []
    lines = raw.split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    doc: dict[str, Any] = {}
    for n, line in enumerate(lines, 1):
        try:
            item = json.loads(line)
        except ValueError:
            failures.append(Failure("a stream line is not JSON", line[:200].decode("utf-8", "replace"), "one JSON object per line", f"line {n}"))
            continue
        if n == 1:
            if not isinstance(item, dict) or item.get("format") != mai.FORMAT:
                failures.append(Failure("the first stream line is not the bundle envelope", item, "{format, version, manifest, ...}", "line 1"))
                continue
            doc = {k: v for k, v in item.items() if k not in mai.RECORD_SECTIONS}
            for s in mai.RECORD_SECTIONS:
                doc[s] = list(item.get(s, []))
        elif isinstance(item, dict) and item.get("section") in mai.RECORD_SECTIONS and "record" in item:
            doc.setdefault(item["section"], []).append(item["record"])
        else:
            failures.append(Failure("a stream line is not {section, record}", item, "{section: <record section>, record: {...}}", f"line {n}"))
    return doc, failures


@target_check(section="§4", keyword="SHOULD", level="http",
              sentence="POST /v1/brain/export/stream returns the same export as an NDJSON stream.")
def export_stream_equivalent(ctx: Any) -> Iterator[Failure]:
    ch = c.chunk(ctx, "stream")
    yield from c.expect_accepted(c.import_bundle(ctx, c.bundle(ctx, [ch])), "import")
    reply = ctx.target.call("export_stream", {"scope": "full"})
    if not reply.ok:
        yield Failure("the stream export was refused", reply.status, "an NDJSON stream")
        return
    streamed, failures = parse_stream(reply.raw)
    yield from failures
    if failures:
        return
    full = c.export(ctx, "full")
    if set(c.by_hash(streamed)) != set(c.by_hash(full)):
        missing = set(c.by_hash(full)) - set(c.by_hash(streamed))
        yield Failure("the stream does not carry the same chunks as the export", f"{len(missing)} missing", "the same content_hash set", "$.chunks")
    if set(c.entities_by_name(streamed)) != set(c.entities_by_name(full)):
        yield Failure("the stream does not carry the same entities as the export", sorted(c.entities_by_name(streamed))[:5], sorted(c.entities_by_name(full))[:5], "$.entities")


@target_check(section="§4", keyword="SHOULD", level="http",
              sentence="POST /v1/brain/import/file accepts a bundle as a multipart upload and returns an ImportReport (errata E4).")
def import_file_multipart(ctx: Any) -> Iterator[Failure]:
    ch = c.chunk(ctx, "multipart")
    raw = json.dumps(c.bundle(ctx, [ch]), ensure_ascii=False).encode("utf-8")
    reply = ctx.target.call("import_file", raw=raw, filename="bundle.json", params={"_field": ctx.option("multipart_field")})
    if not reply.ok:
        yield Failure("the multipart import was refused", f"{reply.status} {reply.raw[:200]!r}", "an ImportReport")
        return
    yield from _shape_failures(reply.json())
    if ch["content_hash"] not in c.by_hash(c.export(ctx, "full")):
        yield Failure("the chunk uploaded as a file is not in the export", "absent", ch["content"], "$.chunks")


@target_check(section="§4", keyword="SHOULD", level="http",
              sentence="GET /v1/spec returns this protocol document (errata E5).")
def spec_endpoint(ctx: Any) -> Iterator[Failure]:
    reply = ctx.target.call("spec")
    text = reply.raw.decode("utf-8", "replace")
    if not reply.ok or not text.strip():
        yield Failure("GET /v1/spec answered no document", f"{reply.status} {text[:100]!r}", "the protocol document")
    elif "memoryai" not in text.lower():
        yield Failure("the /v1/spec document does not name the MemoryAI Protocol", text[:200], "a document naming MemoryAI Protocol v1")


@target_check(section="§3.1", keyword="SHOULD", level="http",
              sentence="A rejected bundle is answered with a 4xx status and an ImportReport with success false (errata E7).")
def rejection_status(ctx: Any) -> Iterator[Failure]:
    if ctx.target.kind != "http":
        raise SkipCheck("status codes exist only on HTTP targets", not_applicable=True)
    reply = c.import_bundle(ctx, c.bundle(ctx, [c.chunk(ctx, "reject-status")], version=mai.MAX_VERSION + 998))
    wanted = ctx.option("rejection_status")
    status = reply.http_status or 0
    if not (400 <= status < 500) or (wanted != "any-4xx" and str(status) != wanted):
        yield Failure("a rejected bundle was not answered with the expected status", status, wanted)
    body = reply.body
    if not isinstance(body, dict) or body.get("success") is not False:
        yield Failure("a rejected bundle's answer does not say success: false", body, {"success": False})
