"""Every class of every field of the domain table (suites/memoryai/domain.json) through its path: the
bundle import for the envelope fields (format, version, generator, exported_at, the manifest's tenant
fields, embedding model and dimension, counts, checksum, the record arrays) and every ChunkRecord field,
the export request for `scope` and `since` (edges and entities: domain_records.py; the request pairs:
domain_pairs.py).

Envelope classes: each on a bundle of one chunk of its own. Chunk classes: the allowed ones together in
one bundle, each read back unchanged from an export; every other one as the middle chunk of an otherwise
valid bundle of three. What the spec allows is then checked (errata E42): allowed classes ingested and
read back as written (numbers equal as numbers), forbidden envelope classes refused, a forbidden chunk
value never exported as such (the chunk skipped, the bundle refused, or the value repaired), classes the
spec leaves open either way with the answer seen recorded; never a server error; and a chunk imported
before all of it neither lost nor changed.

Every chunk carries a marker tag unique to the run (found again by it, whatever its content class), and
each content class is prefixed with a marker so that no two runs write the same content (chunks are
deduplicated by content hash). The embedding classes are vectors of the target's own dimension: little
endian as §3.5 says, the same floats big endian (a consumer cannot tell them from other floats: open),
and one float short. The user's fields (errata E11) are read back as written; the consumer's own state
(id, tier, decay_score, times) only as a value §3.2 allows (E60).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.kit import domain, domain_plan
from memconform.suites.memoryai import answers, client, reading_kinds, readings
from memconform.suites.memoryai import format as memoryai
from memconform.suites.memoryai.domain_support import (
    ChunkCase,
    ChunkClass,
    bundle_of,
    by_marker,
    call_or_failure,
    chunk_case,
    chunk_classes,
    keeper,
    kept_failures,
    ledger,
    located,
    marked,
    no_instant_observed,
    placeholder,
    read_back_failures,
    server_error,
    table,
    valid_now,
)
from memconform.suites.memoryai.suite import SUITE
from memconform.targets.base import Reply

ENVELOPE_FIELDS = ("bundle.format", "bundle.version", "manifest.embedding_dim", "bundle.generator", "bundle.exported_at",
                   "manifest.tenant_id", "manifest.tenant_name", "manifest.tenant_plan", "manifest.embedding_model",
                   "manifest.counts", "manifest.checksum", "bundle.l2_sessions", "bundle.mood_states", "bundle.agents")
# fields applied after the bundle is sealed (sealing would overwrite them)
AFTER_SEAL = frozenset({"manifest.counts", "manifest.checksum"})
EXPORT_FIELDS = readings.EXPORT_FIELDS
INGEST = "if it can ingest any spec-conformant Bundle"
SCOPE_LINE = '"scope": "full" | "dna_only" | "since",'


def expectation(vc: domain.ValueClass) -> str:
    """A class as a consumer meets it on import (the table's CONSUMER_OPEN: errata E42)."""
    return readings.import_expectation(vc)


def observed(ctx: CheckContext, vc: domain.ValueClass, accepted: bool) -> None:
    """An open class: the answer the target gave is the reading recorded (errata E42, the table's rows)."""
    readings.observe(ctx, "E42", reading_kinds.OpenClass("E42", vc.key), accepted)


# ---- values of the classes -----------------------------------------------------------------------


# ---- judging a chunk read back -------------------------------------------------------------------


# ---- the import check ----------------------------------------------------------------------------

@SUITE.check(sweep=True, section="§5 Level 2", keyword="MUST", level="2", sentence=INGEST)
def domain_import_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """Each class of the bundle envelope and of a chunk's fields through an import (see the module). Under
    ci the middle chunks of one expectation share a bundle (harness/kit/domain_plan.py): one refused,
    answered with a server error, or counting some but not all of its forbidden chunks as skipped is sent
    again in halves, fresh chunks each time, down to each class in a bundle of its own."""
    model, dim = client.target_model(ctx)
    kept_marker, kept = keeper(ctx)
    # marker -> (its case, "stored" | "absent" | "either" | "valid-if-stored" | "repaired": ingested uncounted)
    expected: dict[str, tuple[ChunkCase | None, str]] = {}
    yield from envelope_failures(ctx, expected)
    drawn = chunk_classes()
    plain = [chunk_case(ctx, d, dim) for d in drawn if expectation(d.cls) == "valid"]
    reply = client.import_bundle(ctx, bundle_of(ctx, [case.chunk for case in plain], plain))
    if server_error(reply) or not reply.ok:
        yield Failure(f"a bundle of {len(plain)} chunks of allowed classes was refused", reply.status, "ingested", "$",
                      ", ".join(sorted({case.cls.key for case in plain}))[:200])
    expected.update({case.marker: (case, "stored" if reply.ok else "absent") for case in plain})

    def attempt(row: list[ChunkClass]) -> list[Failure] | None:
        if len(row) > 1:
            return middle_chunks_together(ctx, [chunk_case(ctx, d, dim) for d in row], expected)
        return list(middle_chunk_failures(ctx, chunk_case(ctx, row[0], dim), expected))

    others = [d for d in drawn if expectation(d.cls) != "valid"]
    # one chunk id class a bundle: the ids the table draws are not numbered apart as the others' are
    rows = domain_plan.rows_for(others, ctx.profile.name, group=lambda d: expectation(d.cls),
                                slot=lambda d: "id" if d.cls.field == "chunk.id" else None)
    yield from domain_plan.judge_rows(rows, attempt)
    exported = client.export(ctx, "full")
    yield from export_failures(exported, expected, dim)
    yield from kept_failures(exported, kept_marker, kept)
    ledger(ctx).judge(d.cls.key for d in drawn)


# envelope fields whose allowed values can share a bundle (ci): one value a field, none that changes what the
# bundle's chunks are checked against (the model and dimension), what counts them, or what seals them
MERGED_ENVELOPE = frozenset({"bundle.generator", "bundle.exported_at", "manifest.tenant_id", "manifest.tenant_name",
                             "manifest.tenant_plan", "bundle.l2_sessions", "bundle.mood_states", "bundle.agents"})


@dataclass(frozen=True)
class EnvelopeValue:
    field_id: str
    cls: domain.ValueClass
    value: Any


def envelope_failures(ctx: CheckContext, expected: dict[str, tuple[ChunkCase | None, str]]) -> Iterator[Failure]:
    """Each value on a bundle of one chunk of its own; under ci the allowed values of MERGED_ENVELOPE share
    bundles, one chunk each (harness/kit/domain_plan.py; a bundle refused or answered with a server error
    is sent again in halves, down to each value alone)."""
    values = [EnvelopeValue(field_id, vc, value) for field_id in ENVELOPE_FIELDS
              for vc in table().field(field_id).classes for value in vc.values()]

    def attempt(row: list[EnvelopeValue]) -> list[Failure] | None:
        return envelope_alone(ctx, row[0], expected) if len(row) == 1 else envelope_merged(ctx, row, expected)

    rows = domain_plan.rows_for(values, ctx.profile.name, slot=lambda v: v.field_id,
                                group=lambda v: "allowed" if v.field_id in MERGED_ENVELOPE and expectation(v.cls) == "valid" else None)
    yield from domain_plan.judge_rows(rows, attempt)


def envelope_alone(ctx: CheckContext, item: EnvelopeValue, expected: dict[str, tuple[ChunkCase | None, str]]) -> list[Failure]:
    vc, value = item.cls, item.value
    marker, chunk = marked(ctx, "dom-env")
    bundle = envelope_bundle(ctx, item.field_id, value, chunk)
    label = f"a bundle with {vc.key} = {value!r:.40}"
    answer = call_or_failure(ctx, label, partial(client.import_bundle, ctx, bundle))
    ledger(ctx).judge([vc.key])
    if isinstance(answer, Failure):
        expected[marker] = (None, "either")
        return [answer]
    reply, expect, found = answer, expectation(vc), []
    if server_error(reply):
        found.append(Failure(f"{label}: a server error", reply.http_status, "ingested, or refused with a 4xx", "$"))
    elif expect == "valid" and not reply.ok:
        found.append(Failure(f"{label} was refused", f"{reply.status} {reply.raw[:160]!r}", "ingested", "$"))
    elif expect == "invalid":
        found += answers.expect_rejected(reply, label)
    elif expect == "open":
        observed(ctx, vc, reply.ok)
    expected[marker] = (None, "stored" if expect == "valid" and reply.ok else "either" if reply.ok else "absent")
    return found


def envelope_merged(ctx: CheckContext, row: list[EnvelopeValue], expected: dict[str, tuple[ChunkCase | None, str]]) -> list[Failure] | None:
    """Allowed values of different fields on one sealed bundle of a chunk each: ingested with no server error,
    every chunk then expected stored ([]); anything else None."""
    marked_chunks = [marked(ctx, "dom-env") for _ in row]
    bundle = client.bundle(ctx, [chunk for _, chunk in marked_chunks])
    for item in row:
        where, key = item.field_id.split(".", 1)
        owner = bundle["manifest"] if where == "manifest" else bundle
        if item.value is domain.ABSENT:
            owner.pop(key, None)
        else:
            owner[key] = item.value
    memoryai.seal(bundle)
    answer = call_or_failure(ctx, f"a bundle of {len(row)} allowed envelope values", partial(client.import_bundle, ctx, bundle))
    if isinstance(answer, Failure) or server_error(answer) or not answer.ok:
        return None
    for marker, _ in marked_chunks:
        expected[marker] = (None, "stored")
    ledger(ctx).judge(item.cls.key for item in row)
    return []


def envelope_bundle(ctx: CheckContext, field_id: str, value: Any, chunk: dict[str, Any]) -> dict[str, Any]:
    """A sealed bundle of one chunk with one envelope field of a class; counts and checksum placed after
    sealing (which writes them), the counts then sealed by the checksum."""
    bundle = client.bundle(ctx, [chunk])
    where, key = field_id.split(".", 1)
    owner = bundle["manifest"] if where == "manifest" else bundle
    sealed = bundle["manifest"]["checksum"]
    sent = placeholder(value, {"model": client.target_model(ctx)[0], "checksum": sealed, "CHECKSUM": sealed.upper()})
    if sent is domain.ABSENT:
        owner.pop(key, None)
    else:
        owner[key] = sent
    if field_id == "manifest.counts":
        bundle["manifest"].pop("checksum", None)
        bundle["manifest"]["checksum"] = memoryai.checksum(bundle)
    elif field_id not in AFTER_SEAL:
        memoryai.seal(bundle)
    return bundle


def middle_chunk_failures(ctx: CheckContext, case: ChunkCase, expected: dict[str, tuple[ChunkCase | None, str]]) -> Iterator[Failure]:
    goods = [marked(ctx, "dom-beside") for _ in range(2)]
    label = f"a bundle with {case.cls.key} = {case.value!r:.40} in its middle chunk"
    answer = call_or_failure(ctx, label, lambda: client.import_bundle(ctx, bundle_of(ctx, [goods[0][1], case.chunk, goods[1][1]], [case])))
    if isinstance(answer, Failure):
        yield answer
        expected.update({goods[0][0]: (None, "either"), goods[1][0]: (None, "either"), case.marker: (case, "valid-if-stored")})
        return
    reply = answer
    if server_error(reply):
        yield Failure(f"{label}: a server error", reply.http_status, "ingested, or refused with a 4xx", "$",
                      reply.raw[:160].decode("utf-8", "replace"))
    if expectation(case.cls) == "open":
        observed(ctx, case.cls, reply.ok)
    # refused: nothing of it stored; ingested: the two beside it stored, the middle one skipped or sound
    for marker, _ in goods:
        expected[marker] = (None, "stored" if reply.ok else "absent")
    expected[case.marker] = (case, "absent" if not reply.ok else "valid-if-stored" if counted_or_unreported(case, reply)
                             else "repaired")


def counted_or_unreported(case: ChunkCase, reply: Reply) -> bool:
    """§4's ImportReport counts a skipped chunk under skipped_invalid: a forbidden chunk ingested with none
    counted must have been repaired (so it is in the export). True where no report is answered (E8)."""
    report = answers.report_or_none(reply)
    if expectation(case.cls) != "invalid" or report is None:
        return True
    skipped = answers.counter(report, "chunks", "skipped_invalid")
    return isinstance(skipped, int) and skipped >= 1


GOOD_IDS = (900001, 900002)  # the chunks beside a packed row's: apart from every id a row's chunks carry


def middle_chunks_together(ctx: CheckContext, cases: list[ChunkCase], expected: dict[str, tuple[ChunkCase | None, str]]) -> list[Failure] | None:
    """A row of chunk classes of one expectation between two valid chunks, one bundle: ingested with no server
    error and its forbidden chunks all counted as skipped_invalid or none of them (where a report is
    answered), each case then expected as its own bundle would leave it ([]; an open class recorded as
    accepted); anything else None (the row is sent again in halves)."""
    goods = [marked(ctx, "dom-beside") for _ in range(2)]
    for (_, chunk), good_id in zip(goods, GOOD_IDS, strict=True):
        chunk["id"] = good_id
    answer = call_or_failure(ctx, f"a bundle of {len(cases)} middle chunks",
                             lambda: client.import_bundle(ctx, bundle_of(ctx, [goods[0][1], *(c.chunk for c in cases), goods[1][1]], cases)))
    if isinstance(answer, Failure) or server_error(answer) or not answer.ok:
        return None
    forbidden = sum(1 for case in cases if expectation(case.cls) == "invalid")
    report = answers.report_or_none(answer)
    skipped = answers.counter(report, "chunks", "skipped_invalid") if report is not None else None
    if forbidden and report is not None and not (isinstance(skipped, int) and (skipped == 0 or skipped >= forbidden)):
        return None
    for marker, _ in goods:
        expected[marker] = (None, "stored")
    for case in cases:
        if expectation(case.cls) == "open":
            observed(ctx, case.cls, True)
        uncounted = forbidden and expectation(case.cls) == "invalid" and report is not None and skipped == 0
        expected[case.marker] = (case, "repaired" if uncounted else "valid-if-stored")
    return []


def export_failures(exported: dict[str, Any], expected: dict[str, tuple[ChunkCase | None, str]], dim: int) -> Iterator[Failure]:
    found = by_marker(exported)
    missing = [m for m, (case, want) in expected.items() if want == "stored" and case is None and m not in found]
    extra = [m for m, (_, want) in expected.items() if want == "absent" and m in found]
    if missing:
        yield Failure("chunks of ingested bundles are not in the full export", missing[:4], "every chunk ingested",
                      "$.chunks", f"{len(missing)} in all")
    if extra:
        yield Failure("chunks of refused bundles are in the full export", extra[:4], "not stored", "$.chunks",
                      f"{len(extra)} in all")
    for marker, (case, want) in expected.items():
        if case is None:
            continue
        got = located(found, marker, case)
        if want == "stored":
            yield from read_back_failures(case, got, dim)
        elif want == "repaired" and got is None:
            yield Failure(f"{case.cls.key} = {case.value!r:.40}: a forbidden chunk was dropped without being counted as "
                          "skipped_invalid", "absent, skipped_invalid 0", "the chunk counted as skipped_invalid, or repaired "
                          "and stored", "$.report.chunks.skipped_invalid")
        elif want in ("valid-if-stored", "repaired") and got is not None:
            field = case.cls.field.split(".", 1)[1]
            if expectation(case.cls) == "invalid" and not valid_now(field, got.get(field), dim):
                yield Failure(f"{case.cls.key} = {case.value!r:.40}: a forbidden value was stored and exported as such",
                              got.get(field, "<absent>"), "the chunk skipped, or the value repaired", f"$.chunks[?].{field}")


# ---- the export request --------------------------------------------------------------------------

@SUITE.check(sweep=True, section="§3.1", keyword="SHOULD", level="http", sentence=SCOPE_LINE)
def domain_export_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """Each class of `scope` and of `since` (with scope since) in an export request: allowed ones answered
    with a bundle declaring them (since: the same instant), the others refused with a 4xx or answered
    with a bundle whose scope is a listed one and whose since is a date-time or null; never a 5xx."""
    for field_id in EXPORT_FIELDS:
        for vc in table().field(field_id).classes:
            for value in vc.values():
                body = request_of(ctx, field_id, value)
                label = f"an export request with {field_id.split('.', 1)[1]} = {value!r:.40}"
                answer = call_or_failure(ctx, label, partial(ctx.target.call, "export", body))
                ledger(ctx).judge([vc.key])
                if isinstance(answer, Failure):
                    yield answer
                    continue
                yield from export_answer_failures(ctx, vc, value, answer, body)


def request_of(ctx: CheckContext, field_id: str, value: Any) -> dict[str, Any]:
    body = client.export_body(ctx, "since", client.now_iso(-60)) if field_id == "manifest.since" else client.export_body(ctx)
    key = field_id.split(".", 1)[1]
    if value is domain.ABSENT:
        body.pop(key, None)
    else:
        body[key] = value
    return body


def export_answer_failures(ctx: CheckContext, vc: domain.ValueClass, value: Any, reply: Reply,
                           body: dict[str, Any]) -> Iterator[Failure]:
    label = f"an export request with {vc.field.split('.', 1)[1]} = {value!r:.40}"
    if server_error(reply):
        yield Failure(f"{label}: a server error", reply.http_status, "a bundle, or a 4xx", "$")
        return
    doc = reply.body if reply.ok and isinstance(reply.body, dict) else None
    if no_instant_observed(ctx, body, reply, doc) and doc is None:
        return
    if vc.expect == "valid" and doc is None:
        yield Failure(f"{label} was not answered with a bundle", f"{reply.status} {reply.raw[:160]!r}", "a bundle", "$")
        return
    if vc.expect != "valid":
        observed(ctx, vc, doc is not None)
    if doc is None:
        return
    manifest: dict[str, Any] = doc["manifest"] if isinstance(doc.get("manifest"), dict) else {}
    scope, since = manifest.get("scope", "<absent>"), manifest.get("since")
    if scope not in memoryai.SCOPES:
        yield Failure(f"{label}: the bundle's manifest.scope is not a listed scope", scope, list(memoryai.SCOPES), "$.manifest.scope")
    if vc.field == "manifest.scope" and vc.expect == "valid" and scope != value:
        yield Failure(f"{label}: the bundle declares another scope", scope, value, "$.manifest.scope")
    if since is not None and client.instant(since) is None:
        yield Failure(f"{label}: the bundle's manifest.since is not an ISO-8601 date-time", since, "a date-time or null",
                      "$.manifest.since")
    if vc.field == "manifest.since" and vc.expect == "valid" and isinstance(value, str) and \
            (since is None or client.instant(since) != client.instant(value)):
        yield Failure(f"{label}: the bundle does not declare the instant asked for", since, value, "$.manifest.since")
