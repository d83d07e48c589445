"""Level 2 Consumer checks: §3.1 version gate, §3.8 idempotency and merges, §3.7 DNA, §3.5 mismatch, §3.6."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, Unsupported
from memconform.kit import domain_plan
from memconform.suites.memoryai import answers, client, model, reading_kinds, readings
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.suite import SUITE


@SUITE.check(section="§3.1", keyword="MUST", level="2",
              sentence="A consumer MUST reject a Bundle whose `version` is greater than the maximum it supports.")
def rejects_newer_version(ctx: CheckContext) -> Iterator[Failure]:
    """On /import and on /import/file: each first accepts the same bundle at version 1 (the positive control)."""
    for op in ("import_bundle", "import_file"):
        try:
            answers.control(client.import_bundle(ctx, client.bundle(ctx, [client.chunk(ctx, f"version-control-{op}")]), op), f"{op} of a version 1 bundle")
        except Unsupported:
            if op == "import_bundle":
                raise
            ctx.note("import_file is not offered: the version gate is tried on import only")
            continue
        # the next version (an off-by-one gate lets it in) and a far one
        for version in (memoryai.MAX_VERSION + 1, memoryai.MAX_VERSION + 998):
            probe = client.chunk(ctx, f"future-{version}-{op}")
            reply = client.import_bundle(ctx, client.bundle(ctx, [probe], version=version), op)
            yield from answers.expect_rejected(reply, f"a bundle of version {version} ({op})")
            rows = client.by_hash(client.export(ctx, "full"))
            yield from client.mistyped_hashes([probe["content"]], rows)
            if probe["content_hash"] in rows:
                yield Failure(f"content of a rejected bundle of version {version} was stored ({op})", probe["content"],
                              "nothing imported", "$.chunks")


@SUITE.check(section="§3.8", keyword="MUST", level="2",
              sentence="Skip chunks whose `content_hash` already exists in the target tenant (no duplicate insert; the existing row is preserved).")
def reimport_inserts_nothing(ctx: CheckContext) -> Iterator[Failure]:
    chunks = [client.chunk(ctx, f"idem{i}") for i in range(3)]
    name = ctx.unique("idem-entity")
    doc = client.bundle(ctx, chunks, entities=[{"name": name, "frequency": 2, "first_seen": client.now_iso(-900),
                                           "last_seen": client.now_iso(-800), "is_dna": False}])
    yield from answers.expect_accepted(client.import_bundle(ctx, doc), "first import")
    second = client.import_bundle(ctx, doc)
    yield from answers.expect_accepted(second, "second import of the same bundle")
    if not second.ok:
        return
    report = answers.report_or_none(second)
    if report is not None and answers.counter(report, "chunks", "inserted") not in (0, None):
        yield Failure("re-import inserted chunks again", answers.counter(report, "chunks", "inserted"), 0, "$.report.chunks.inserted")
    if report is not None and answers.counter(report, "chunks", "skipped_duplicate") not in (len(chunks), None):
        yield Failure("re-import did not count every chunk as skipped_duplicate", answers.counter(report, "chunks", "skipped_duplicate"),
                      len(chunks), "$.report.chunks.skipped_duplicate")
    exported = client.export(ctx, "full")
    rows = client.by_hash(exported)
    yield from client.mistyped_hashes([ch["content"] for ch in chunks], rows)
    for ch in chunks:
        n = len(rows.get(ch["content_hash"], []))
        if n != 1:
            yield Failure("after two imports a chunk is not present exactly once", n, 1, "$.chunks", ch["content"])
    entity = client.entities_by_name(exported).get(name)
    if entity is not None:  # errata E6: the same bundle again either adds its counters again or leaves them
        yield from reimported_counters(ctx, reading_kinds.Reimport(doc, name), entity.get("frequency"))


def reimported_counters(ctx: CheckContext, case: reading_kinds.Reimport, frequency: Any) -> Iterator[Failure]:
    """E6 from the table: the entity's frequency after the second import, under each reading (2 + 2, or 2)."""
    wanted = ctx.option("reimport_counters")
    if readings.observe(ctx, "E6", case, frequency).failure:
        allowed = {reading: case.frequency(reading) for reading in ("accumulate", "stable")}
        yield Failure("re-importing the same bundle left an entity frequency no reading explains", frequency,
                      {"either": " or ".join(f"{v} ({k})" for k, v in allowed.items()), **allowed}[wanted],
                      "$.entities[?].frequency", readings=() if wanted == "either" else (wanted,))


@SUITE.check(section="§3.8", keyword="MUST", level="2",
              sentence="Skip chunks whose `content_hash` already exists in the target tenant (no duplicate insert; the existing row is preserved).")
def existing_row_preserved(ctx: CheckContext) -> Iterator[Failure]:
    original = client.chunk(ctx, "keep", tags=["original"], importance=0.25)
    yield from answers.expect_accepted(client.import_bundle(ctx, client.bundle(ctx, [original])), "first import")
    rival = dict(original, tags=["rival"], importance=0.75, metadata={"rival": True}, zone="important")
    yield from answers.expect_accepted(client.import_bundle(ctx, client.bundle(ctx, [rival])), "import of a rival row")
    exported = client.by_hash(client.export(ctx, "full"))
    yield from client.mistyped_hashes([original["content"]], exported)
    rows = exported.get(original["content_hash"], [])
    if len(rows) != 1:
        yield Failure("the chunk is not present exactly once", len(rows), 1, "$.chunks")
        return
    for name in ("tags", "importance", "zone"):
        if rows[0].get(name) != original[name]:
            yield Failure(f"the existing row's {name} was overwritten by a duplicate", rows[0].get(name), original[name], f"$.chunks[?].{name}")


def _edge(a: int, b: int, weight: float, count: int, ts: str, edge_type: str = "co_recall") -> dict[str, Any]:
    return {"chunk_a": a, "chunk_b": b, "edge_type": edge_type, "weight": weight, "co_activation_count": count,
            "created_at": ts, "updated_at": ts}


@SUITE.check(section="§3.8", keyword="MUST", level="2",
              sentence="UPSERT memory_edges on `(source, target, edge_type)` — accumulate `co_activation_count`, take MAX of `weight`, refresh `updated_at`.")
def edges_upserted(ctx: CheckContext) -> Iterator[Failure]:
    """Two pairs merged in opposite orders (smaller weight first, then larger first), so keep-first and
    last-wins both fail; a second edge type on one pair must stay a separate edge."""
    a, b, d = client.chunk(ctx, "edge-a"), client.chunk(ctx, "edge-b"), client.chunk(ctx, "edge-d")
    older, newer = client.now_iso(-5000), client.now_iso(-4000)
    first = [_edge(1, 2, 0.25, 2, older), _edge(1, 3, 0.75, 2, newer), _edge(1, 2, 0.5, 1, older, "contradicts")]
    second = [_edge(1, 2, 0.75, 3, newer), _edge(1, 3, 0.25, 3, older)]
    started = client.now_iso(-1)
    yield from answers.expect_accepted(client.import_bundle(ctx, client.bundle(ctx, [a, b, d], edges=first)), "first import")
    yield from answers.expect_accepted(client.import_bundle(ctx, client.bundle(ctx, [dict(a), dict(b), dict(d)], edges=second)), "second import")
    doc = client.export(ctx, "full")
    yield from client.mistyped_hashes([a["content"], b["content"], d["content"]], client.by_hash(doc))
    edges = client.edges_by_hash(doc)
    for end, label, second_ts in ((b, "smaller weight first", newer), (d, "larger weight first", older)):
        key = (a["content_hash"], end["content_hash"], "co_recall")
        edge = edges.get(key)
        if edge is None:
            yield Failure(f"the imported edge ({label}) is not in the export", "absent", key, "$.memory_edges")
            continue
        if edge.get("co_activation_count") != 5:
            yield Failure(f"co_activation_count was not accumulated ({label})", edge.get("co_activation_count"), 5, "$.memory_edges[?].co_activation_count")
        if edge.get("weight") != 0.75:
            yield Failure(f"weight is not the MAX of the two imports ({label})", edge.get("weight"), 0.75, "$.memory_edges[?].weight")
        updated = client.instant(edge.get("updated_at"))
        if updated is None or updated < min(client.own_instant(second_ts), client.own_instant(started)):
            yield Failure(f"updated_at was not refreshed by the second import ({label})", edge.get("updated_at"),
                          f">= {second_ts} (the incoming edge's) or the import time", "$.memory_edges[?].updated_at")
    other = edges.get((a["content_hash"], b["content_hash"], "contradicts"))
    if other is None or other.get("weight") != 0.5 or other.get("co_activation_count") != 1:
        yield Failure("an edge of another edge_type on the same pair was merged or lost", other, "weight 0.5, count 1, kept apart",
                      "$.memory_edges")


@SUITE.check(section="§3.8", keyword="MUST", level="2",
              sentence="UPSERT entities on `(tenant_id, entity_name)` — accumulate `frequency`, take latest `last_seen`, OR `is_dna`.")
def entities_upserted(ctx: CheckContext) -> Iterator[Failure]:
    """Two entities merged in opposite orders: the first gets the later last_seen and is_dna true second,
    the other first, so keep-first and last-wins both fail."""
    early, late = client.now_iso(-7200), client.now_iso(-60)
    small = {"frequency": 2, "first_seen": early, "last_seen": early, "is_dna": False}
    large = {"frequency": 3, "first_seen": early, "last_seen": late, "is_dna": True}
    names = {ctx.unique("entity-up"): (small, large), ctx.unique("entity-down"): (large, small)}
    for n in (0, 1):
        ents = [dict(pair[n], name=name) for name, pair in names.items()]
        yield from answers.expect_accepted(client.import_bundle(ctx, client.bundle(ctx, [client.chunk(ctx, f"ent{n}")], entities=ents)), f"import {n + 1}")
    exported = client.export(ctx, "full")
    if not isinstance(exported.get("entities", []), list):
        yield Failure("the export's entities is not an array", exported["entities"], "an array of entities", "$.entities")
        return
    found = client.array_at(exported, "entities")
    for name in names:
        matches = [e for e in found if isinstance(e, dict) and e.get("name") == name]
        if len(matches) != 1:
            yield Failure("the entity is not present exactly once after two imports", len(matches), 1, "$.entities", name)
            continue
        entity = matches[0]
        if entity.get("frequency") != 5:
            yield Failure("frequency was not accumulated", entity.get("frequency"), 5, "$.entities[?].frequency", name)
        if client.instant(entity.get("last_seen")) != client.instant(late):
            yield Failure("last_seen is not the latest of the two", entity.get("last_seen"), late, "$.entities[?].last_seen", name)
        if entity.get("is_dna") is not True:
            yield Failure("is_dna is not the OR of the two imports", entity.get("is_dna"), True, "$.entities[?].is_dna", name)


@SUITE.check(section="§3.8", keyword="MUST", level="2",
              sentence="The Consumer MUST NOT modify the source tenant's `tenant_id`.")
def tenant_id_not_adopted(ctx: CheckContext) -> Iterator[Failure]:
    import json

    foreign = str(uuid.uuid4())
    yield from answers.expect_accepted(client.import_bundle(ctx, client.bundle(ctx, [client.chunk(ctx, "tenant")], tenant_id=foreign)), "import")
    exported = client.export(ctx, "full")
    manifest = exported.get("manifest")
    if isinstance(manifest, dict) and manifest.get("tenant_id") == foreign:
        yield Failure("the consumer adopted the bundle's tenant_id", foreign, "the consumer's own tenant_id", "$.manifest.tenant_id")
    if foreign in json.dumps(exported.get("chunks", []), ensure_ascii=False):
        yield Failure("the bundle's tenant_id leaked into stored records", foreign, "absent", "$.chunks")


def _dna_chunks(ctx: CheckContext) -> list[dict[str, Any]]:
    dna = [client.chunk(ctx, f"dna-{t}", t, decay_score=0.06) for t in sorted(memoryai.DNA_TYPES)]
    if ctx.option("dna_rule") == "union":
        dna += [client.chunk(ctx, "dna-critical", "fact", zone="critical", decay_score=0.06),
                client.chunk(ctx, "dna-important", "goal", zone="important", decay_score=0.06),
                client.chunk(ctx, "dna-pinned", "episodic", is_pinned=True, decay_score=0.06)]
    return dna


def _why(ch: dict[str, Any]) -> str:
    return f"memory_type={ch['memory_type']} zone={ch['zone']} is_pinned={ch['is_pinned']}"


@SUITE.check(section="§3.7", keyword="MUST", level="2", sentence="conforming implementations MUST NOT auto-decay or auto-delete.")
def dna_never_decayed(ctx: CheckContext) -> Iterator[Failure]:
    """Protection is measured against the consumer's own decay_score before decay (an implementation may
    reset it on import), and the decay hook must visibly decay a plain chunk (the positive control)."""
    dna = _dna_chunks(ctx)
    plains = [client.chunk(ctx, f"plain-{i}", t, decay_score=s) for i, (t, s) in enumerate((("fact", 0.06), ("episodic", 0.9)))]
    client.seed(ctx, client.bundle(ctx, dna + plains), "DNA protection")
    before = client.by_hash(client.export(ctx, "full"))
    client.hook(ctx, "decay", {"rounds": 3}, "DNA protection")
    after = client.by_hash(client.export(ctx, "full"))
    yield from client.mistyped_hashes([ch["content"] for ch in dna + plains], before, after)

    def score(rows: Any) -> float | None:
        value = rows[0].get("decay_score") if rows else None
        return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None

    decayed_plain = [p for p in plains if not after.get(p["content_hash"]) or
                     (score(after.get(p["content_hash"])) or 0) < (score(before.get(p["content_hash"])) or 0)]
    if not decayed_plain:
        raise Inconclusive("the decay hook decayed no plain chunk either, so protection of DNA chunks cannot be observed")
    for ch in dna:
        rows, was = after.get(ch["content_hash"]), score(before.get(ch["content_hash"]))
        readings = ("union",) if ch["memory_type"] not in memoryai.DNA_TYPES else ()
        if not rows:
            yield Failure("a DNA chunk was deleted by decay", "absent", ch["content"], "$.chunks", _why(ch), readings=readings)
        elif was is not None and ((now := score(rows)) is None or now < was):
            yield Failure("a DNA chunk's decay_score was lowered", now, f">= {was} (its score before decay)",
                          "$.chunks[?].decay_score", _why(ch), readings=readings)


@SUITE.check(section="§3.7", keyword="MUST", level="2",
              sentence="Conforming implementations MUST recognize at least these `memory_type` values")
def core_memory_types_recognized(ctx: CheckContext) -> Iterator[Failure]:
    chunks = [client.chunk(ctx, f"type-{t}", t) for t in memoryai.CORE_TYPES]
    reply = client.import_bundle(ctx, client.bundle(ctx, chunks))
    yield from answers.expect_accepted(reply, "import of one chunk of each core memory_type")
    rows = client.by_hash(client.export(ctx, "full"))
    yield from client.mistyped_hashes([ch["content"] for ch in chunks], rows)
    for ch in chunks:
        got = rows.get(ch["content_hash"])
        if not got:
            yield Failure("a chunk of a core memory_type was not imported", "absent", ch["memory_type"], "$.chunks")
        elif got[0].get("memory_type") != ch["memory_type"]:
            yield Failure("a core memory_type was changed on import", got[0].get("memory_type"), ch["memory_type"], "$.chunks[?].memory_type")


@SUITE.check(section="§3.5", keyword="SHOULD", level="2",
              sentence="When the consumer's local `embedding_model` differs from the manifest's, the consumer SHOULD drop embeddings (use `null`) and re-embed lazily on next recall.")
def embedding_mismatch_dropped(ctx: CheckContext) -> Iterator[Failure]:
    _, dim = client.target_model(ctx)
    dim = dim or 4
    ch = client.chunk(ctx, "foreign-model", embedding=memoryai.encode_embedding(client.vector(dim, 7)), embedding_model="x-memconform-foreign-model")
    reply = client.import_bundle(ctx, client.bundle(ctx, [ch], model="x-memconform-foreign-model", dim=dim))
    yield from answers.expect_accepted(reply, "import")
    if not reply.ok:
        return
    report = answers.report_or_none(reply)
    if report is not None and report.get("embedding_model_match") is not False:
        yield Failure("the report does not say the embedding model differs", report.get("embedding_model_match"), False,
                      "$.report.embedding_model_match")
    exported = client.by_hash(client.export(ctx, "full"))
    yield from client.mistyped_hashes([ch["content"]], exported)
    rows = exported.get(ch["content_hash"], [])
    if not rows:
        yield Failure("the chunk with a foreign embedding was not imported", "absent", ch["content"], "$.chunks")
    elif ctx.option("embedding_mismatch") == "drop" and rows[0].get("embedding") == ch["embedding"]:
        yield Failure("an embedding from a different model was kept", "the foreign vector", "null (or a re-embedding)", "$.chunks[?].embedding")


@SUITE.check(section="§3.6", keyword="SHOULD", level="2",
              sentence="A consumer SHOULD verify the checksum on import and warn (not reject) on mismatch.")
def checksum_mismatch_warned(ctx: CheckContext) -> Iterator[Failure]:
    answers.control(client.import_bundle(ctx, client.bundle(ctx, [client.chunk(ctx, "good-checksum")])), "import of the same bundle with its checksum right")
    doc = client.bundle(ctx, [client.chunk(ctx, "bad-checksum")])
    doc["manifest"]["checksum"] = "0" * 64
    reply = client.import_bundle(ctx, doc)
    if not reply.ok:
        yield Failure("a bundle with a wrong checksum was rejected (the spec says warn, not reject)", reply.status, "accepted with a warning")
        return
    report = answers.report_or_none(reply)
    warnings = report.get("warnings") if report is not None else None
    if not isinstance(warnings, list) or not any("checksum" in str(w).lower() for w in warnings):
        yield Failure("no warning names the checksum mismatch", warnings, "a warning mentioning the checksum", "$.report.warnings",
                      readings=("E8",) if report is None else ())


@SUITE.check(section="§4", keyword="SHOULD", level="2",
              sentence='"chunks": { "inserted": N, "skipped_duplicate": N, "skipped_invalid": N },')
def invalid_chunks_skipped(ctx: CheckContext) -> Iterator[Failure]:
    """Errata E9: invalid chunks are skipped and counted; valid chunks of the same bundle are imported."""
    good = [client.chunk(ctx, f"good{i}") for i in range(2)]
    answers.control(client.import_bundle(ctx, client.bundle(ctx, [client.chunk(ctx, "good-control")])), "the same bundle without its invalid chunks")
    bad_type = client.chunk(ctx, "bad-type")
    bad_type["memory_type"] = 42
    no_content = client.chunk(ctx, "no-content")
    no_content.pop("content")
    bundle = client.bundle(ctx, good + [bad_type, no_content])
    # the oracle under this check's reading (E9 skip): the one outcome, its chunks and its counters
    (skipped,) = model.import_answers(model.State(), bundle, model.Readings(invalid_chunks="skip"))
    reply = client.import_bundle(ctx, bundle)
    if not reply.ok:
        yield Failure("one invalid chunk made the whole import fail", reply.status, "valid chunks imported, invalid skipped")
    else:
        report = answers.report_or_none(reply)
        want = skipped.counters["skipped_invalid"]
        if report is not None and answers.counter(report, "chunks", "skipped_invalid") != want:
            yield Failure("invalid chunks not counted as skipped_invalid", answers.counter(report, "chunks", "skipped_invalid"), want,
                          "$.report.chunks.skipped_invalid")
    exported = client.by_hash(client.export(ctx, "full"))
    yield from client.mistyped_hashes([ch["content"] for ch in good], exported)
    for ch in good:
        if ch["content_hash"] in skipped.state.chunks and ch["content_hash"] not in exported:
            yield Failure("a valid chunk was lost because another chunk was invalid", "absent", ch["content"], "$.chunks")


def _conformant_bundles(ctx: CheckContext) -> Iterator[tuple[str, dict[str, Any]]]:
    """The valid fixtures, made unique to the run, sealed in turn under each reading of §3.6 (errata E1)."""
    import copy

    from memconform.kit.fixtures_loader import iter_cases

    readings = list(memoryai.CHECKSUM_READINGS.values())
    for n, (_, case) in enumerate(sorted(iter_cases("memoryai"), key=lambda pc: pc[1]["id"])):
        if case["verdict"] != "valid" or case.get("warnings"):
            continue
        doc = copy.deepcopy(case["document"])
        prefix = ctx.unique(case["id"])
        for ch in doc.get("chunks") or []:
            ch["content"] = f"{prefix} {ch.get('content', '')}"
            if "content_hash" in ch:  # an optional field: a fixture without it stays without it
                ch["content_hash"] = memoryai.content_hash(ch["content"])
        for ent in doc.get("entities") or []:
            ent["name"] = f"{prefix} {ent.get('name', '')}"
        doc.setdefault("manifest", {}).pop("checksum", None)
        memoryai.seal(doc, *readings[n % len(readings)])
        yield case["id"], doc


@SUITE.check(section="§5 Level 2", keyword="MUST", level="2",
              sentence="if it can ingest any spec-conformant Bundle")
def ingests_conformant_bundles(ctx: CheckContext) -> Iterator[Failure]:
    """Every valid fixture (vendor types, every DNA kind, astral text, values at their limits, all sections),
    with checksums written under every reading of §3.6, is accepted and its chunks are stored. Under ci the
    fixtures are imported in turn and the full export read once (harness/kit/domain_plan.py); one refused, or
    with a chunk not stored as sent, and the fixtures are sent again (made unique afresh) in halves down to
    each alone, imported and read back as every other profile does it."""
    case_ids = [case_id for case_id, _ in _conformant_bundles(ctx)]

    def attempt(row: list[str]) -> list[Failure] | None:
        fresh = dict(_conformant_bundles(ctx))  # unique to this attempt: a fixture sent again is not a duplicate
        if len(row) == 1:
            return list(conformant_bundle_failures(ctx, row[0], fresh[row[0]]))
        for case_id in row:
            if not client.import_bundle(ctx, fresh[case_id]).ok:
                return None
        rows = client.by_hash(client.export(ctx, "full"))
        if any(stored_failures(fresh[case_id], rows) for case_id in row):
            return None
        return []

    yield from domain_plan.judge_rows(domain_plan.rows_for(case_ids, ctx.profile.name, group=lambda _: "fixtures"), attempt)


def conformant_bundle_failures(ctx: CheckContext, case_id: str, doc: dict[str, Any]) -> Iterator[Failure]:
    reply = client.import_bundle(ctx, doc)
    if not reply.ok:
        yield Failure(f"a conformant bundle was refused ({case_id})", f"{reply.status} {reply.http_status or ''} {reply.raw[:200]!r}", "accepted")
        return
    yield from stored_failures(doc, client.by_hash(client.export(ctx, "full")), case_id)


def stored_failures(doc: dict[str, Any], rows: dict[str, list[dict[str, Any]]], case_id: str = "") -> list[Failure]:
    """Every chunk of an ingested bundle in the full export, its content_hash a string."""
    found = list(client.mistyped_hashes([ch["content"] for ch in doc.get("chunks") or []], rows))
    lost = [ch["content"] for ch in doc.get("chunks") or [] if memoryai.content_hash(ch["content"]) not in rows]
    if lost:
        found.append(Failure(f"chunks of a conformant bundle were not stored ({case_id})", lost[:3], "every chunk", "$.chunks"))
    return found
