"""Every class of an EdgeRecord's and an EntityRecord's fields (suites/memoryai/domain.json) through an
import, each on a bundle of its own (errata E61).

An edge class rides on a bundle of two fresh chunks (ids 1 and 2) and one edge between them; an entity
class on a bundle of one fresh chunk and one entity named with a marker unique to the run. One full
export then judges them all: an allowed class is stored and exported as written (an edge between the
two chunks' hashes with its edge_type, weight and count; an entity by its name with its frequency,
times and is_dna); a forbidden one (an edge to a chunk the bundle lacks, an entity without a name) is
never exported, the bundle refused or the record skipped; an open one either way, the answer recorded
(E61). Never a server error, and the fresh chunks of an ingested bundle are stored.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from functools import partial
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure
from memconform.kit import domain, domain_plan
from memconform.kit.shared_rules import now_iso
from memconform.suites.memoryai import answers, client, reading_kinds, readings
from memconform.suites.memoryai.domain_support import (
    call_or_failure,
    ledger,
    marked,
    placeholder,
    server_error,
    table,
)
from memconform.suites.memoryai.suite import SUITE
from memconform.targets.base import Reply

EDGE_FIELDS = ("edge.chunk_a", "edge.chunk_b", "edge.edge_type", "edge.weight", "edge.co_activation_count")
ENTITY_FIELDS = ("entity.name", "entity.frequency", "entity.first_seen", "entity.last_seen", "entity.is_dna")
INGEST = "if it can ingest any spec-conformant Bundle"


@dataclass(frozen=True)
class RecordCase:
    cls: domain.ValueClass
    value: Any  # as sent (domain.ABSENT: left out)
    hashes: tuple[str, ...]  # the fresh chunks of its bundle
    record: dict[str, Any]
    accepted: bool = False


def observed(ctx: CheckContext, vc: domain.ValueClass, accepted: bool) -> None:
    """An open class: the answer the target gave is the reading recorded (errata E61, the table's rows)."""
    readings.observe(ctx, "E61", reading_kinds.OpenClass("E61", vc.key), accepted)


def edge_parts(ctx: CheckContext, vc: domain.ValueClass, value: Any, first_id: int = 1) -> RecordParts:
    """Two fresh chunks (bundle ids first_id and the next) and one edge between them with the class's value."""
    chunks = [marked(ctx, "dom-edge")[1] for _ in range(2)]
    chunks[0]["id"], chunks[1]["id"] = first_id, first_id + 1
    edge: dict[str, Any] = {"chunk_a": first_id, "chunk_b": first_id + 1, "edge_type": "related", "weight": 0.5,
                            "co_activation_count": 1, "created_at": now_iso(-100), "updated_at": now_iso(-100)}
    key = vc.field.split(".", 1)[1]
    own = first_id if key == "chunk_a" else first_id + 1
    sent = placeholder(value, {"id": own, "id_text": str(own)})
    if sent is domain.ABSENT:
        edge.pop(key)
    else:
        edge[key] = sent
    return RecordParts(chunks, [edge], [], RecordCase(vc, sent, tuple(ch["content_hash"] for ch in chunks), edge))


def edge_bundle(ctx: CheckContext, vc: domain.ValueClass, value: Any) -> tuple[dict[str, Any], RecordCase]:
    parts = edge_parts(ctx, vc, value)
    return client.bundle(ctx, parts.chunks, edges=parts.edges), parts.case


def entity_parts(ctx: CheckContext, vc: domain.ValueClass, value: Any, first_id: int = 1) -> RecordParts:
    """One fresh chunk (bundle id first_id) and one entity named with a marker, with the class's value."""
    marker, chunk = marked(ctx, "dom-entity")
    chunk["id"] = first_id
    entity: dict[str, Any] = {"name": f"{marker} entity", "frequency": 2, "first_seen": now_iso(-900),
                              "last_seen": now_iso(-100), "is_dna": False}
    key = vc.field.split(".", 1)[1]
    sent = f"{marker} {value}" if key == "name" and isinstance(value, str) and value else value
    if sent is domain.ABSENT:
        entity.pop(key)
    else:
        entity[key] = sent
    return RecordParts([chunk], [], [entity], RecordCase(vc, sent, (chunk["content_hash"],), entity))


def entity_bundle(ctx: CheckContext, vc: domain.ValueClass, value: Any) -> tuple[dict[str, Any], RecordCase]:
    parts = entity_parts(ctx, vc, value)
    return client.bundle(ctx, parts.chunks, entities=parts.entities), parts.case


@dataclass(frozen=True)
class RecordParts:
    """What a class's record brings to a bundle: its fresh chunks, its edge or its entity, and its case."""

    chunks: list[dict[str, Any]]
    edges: list[dict[str, Any]]
    entities: list[dict[str, Any]]
    case: RecordCase


@dataclass(frozen=True)
class Drawn:
    """A class's value, to be sent on a bundle of its own or (ci) with others of its kind."""

    vc: domain.ValueClass
    value: Any
    edge: bool

    def parts(self, ctx: CheckContext, first_id: int) -> RecordParts:
        return (edge_parts if self.edge else entity_parts)(ctx, self.vc, self.value, first_id)


def together(ctx: CheckContext, row: list[Drawn]) -> tuple[dict[str, Any], list[RecordCase]]:
    """One bundle of every item's chunks and record, bundle ids numbered apart."""
    chunks: list[dict[str, Any]] = []
    edges: list[dict[str, Any]] = []
    entities: list[dict[str, Any]] = []
    cases = []
    for d in row:
        parts = d.parts(ctx, len(chunks) + 1)
        chunks += parts.chunks
        edges += parts.edges
        entities += parts.entities
        cases.append(parts.case)
    return client.bundle(ctx, chunks, edges=edges, entities=entities), cases


@SUITE.check(sweep=True, section="§5 Level 2", keyword="MUST", level="2", sentence=INGEST)
def domain_import_every_record_class(ctx: CheckContext) -> Iterator[Failure]:
    """Each class of an edge's and an entity's fields through an import (see the module). Under ci the
    classes of one kind (edge or entity) and one expectation share a bundle (harness/kit/domain_plan.py);
    one refused, or answered with a server error or a count that does not fit, is sent again in halves
    down to each class on a bundle of its own, so every answer judged or recorded is the class's own."""
    cases: list[RecordCase] = []
    drawn = [Drawn(vc, value, fields is EDGE_FIELDS)
             for fields in (EDGE_FIELDS, ENTITY_FIELDS) for vc in (k for f in fields for k in table().field(f).classes)
             for value in vc.values()]

    def attempt(row: list[Drawn]) -> list[Failure] | None:
        if len(row) > 1:
            return imported_together(ctx, row, cases)
        [d] = row
        bundle, case = (edge_bundle if d.edge else entity_bundle)(ctx, d.vc, d.value)
        label = f"a bundle with {d.vc.key} = {case.value!r:.40}"
        answer = call_or_failure(ctx, label, partial(client.import_bundle, ctx, bundle))
        ledger(ctx).judge([d.vc.key])
        if isinstance(answer, Failure):
            return [answer]
        cases.append(RecordCase(case.cls, case.value, case.hashes, case.record, answer.ok))
        return list(answer_failures(ctx, case, answer, label))

    # a class the spec forbids or is silent on may refuse its bundle: each expectation has bundles of its own
    rows = domain_plan.rows_for(drawn, ctx.profile.name, group=lambda d: (d.edge, d.vc.expect))
    yield from domain_plan.judge_rows(rows, attempt)
    exported = client.export(ctx, "full")
    for case in cases:
        yield from exported_failures(case, exported)


def imported_together(ctx: CheckContext, row: list[Drawn], cases: list[RecordCase]) -> list[Failure] | None:
    """A row of one kind and one expectation on one bundle: ingested with no server error, its forbidden
    records counted as none upserted where a report is answered, each case then judged on the full export
    as its own bundle's would be ([]; an open class recorded as accepted); anything else None."""
    bundle, packed = together(ctx, row)
    answer = call_or_failure(ctx, f"a bundle of {len(row)} records", partial(client.import_bundle, ctx, bundle))
    if isinstance(answer, Failure) or server_error(answer) or not answer.ok:
        return None
    if row[0].vc.expect == "invalid" and list(counted_failures(packed[0], answer, "")):
        return None
    for case in packed:
        if case.cls.expect == "open":
            observed(ctx, case.cls, True)
        cases.append(RecordCase(case.cls, case.value, case.hashes, case.record, True))
    ledger(ctx).judge(d.vc.key for d in row)
    return []


def answer_failures(ctx: CheckContext, case: RecordCase, reply: Reply, label: str) -> Iterator[Failure]:
    if server_error(reply):
        yield Failure(f"{label}: a server error", reply.http_status, "ingested, or refused with a 4xx", "$")
    elif case.cls.expect == "valid" and not reply.ok:
        yield Failure(f"{label} was refused", f"{reply.status} {reply.raw[:160]!r}", "ingested", "$")
    elif case.cls.expect == "open":
        observed(ctx, case.cls, reply.ok)
    elif case.cls.expect == "invalid" and not reply.ok and not answers.is_bundle_rejection(reply):
        yield Failure(f"{label}: the refusal is not a bundle rejection", f"{reply.http_status} {reply.raw[:160]!r}",
                      "a 4xx with a JSON body, or the record skipped", "$")
    elif case.cls.expect == "invalid" and reply.ok:
        yield from counted_failures(case, reply, label)


def counted_failures(case: RecordCase, reply: Reply, label: str) -> Iterator[Failure]:
    """An ingested bundle's forbidden record was skipped: an ImportReport (where answered, E8) does not
    count it as upserted (§4 `memory_edges: {upserted, skipped}`, `entities: {upserted}`)."""
    report = answers.report_or_none(reply)
    section = "memory_edges" if case.cls.field.startswith("edge.") else "entities"
    upserted = answers.counter(report, section, "upserted") if report is not None else None
    if isinstance(upserted, int) and upserted != 0:
        yield Failure(f"{label}: the report counts a record it could not store as upserted", upserted, 0,
                      f"$.report.{section}.upserted")


def exported_failures(case: RecordCase, exported: dict[str, Any]) -> Iterator[Failure]:
    label = f"{case.cls.key} = {case.value!r:.40}"
    held = client.by_hash(exported)
    stored = [h for h in case.hashes if h in held]
    if case.accepted and len(stored) != len(case.hashes):
        yield Failure(f"{label}: the chunks of an ingested bundle are not in the full export", stored, list(case.hashes), "$.chunks")
    if not case.accepted and stored:
        yield Failure(f"{label}: chunks of a refused bundle are in the full export", stored, [], "$.chunks")
    if case.cls.field.startswith("edge."):
        yield from edge_failures(case, label, exported)
    else:
        yield from entity_failures(case, label, exported)


def edge_failures(case: RecordCase, label: str, exported: dict[str, Any]) -> Iterator[Failure]:
    a, b = case.hashes
    edges = {k: e for k, e in client.edges_by_hash(exported).items() if a in k[:2] or b in k[:2]}
    dangling = [k for k in edges if k[0] not in (a, b) or k[1] not in (a, b)]
    if dangling:
        yield Failure(f"{label}: an edge to a chunk the bundle lacks was exported", [edges[k] for k in dangling][:2],
                      "the edge skipped (§3.3: an edge joins two chunks)", "$.memory_edges")
    if not (case.accepted and case.cls.expect == "valid"):
        return
    edge = edges.get((a, b, case.record.get("edge_type")))
    if edge is None:
        yield Failure(f"{label}: the edge of an ingested bundle is not in the full export", sorted(map(str, edges.values()))[:2],
                      case.record, "$.memory_edges")
        return
    for key in ("weight", "co_activation_count"):
        if key in case.record and not same_number(f"edge.{key}", edge.get(key, "<absent>"), case.record[key]):
            yield Failure(f"{label}: the edge's {key} changed between import and export", edge.get(key, "<absent>"),
                          case.record[key], f"$.memory_edges[?].{key}")


def entity_failures(case: RecordCase, label: str, exported: dict[str, Any]) -> Iterator[Failure]:
    nameless = [e for e in client.array_at(exported, "entities") if isinstance(e, dict) and not isinstance(e.get("name"), str)]
    if nameless:
        yield Failure(f"{label}: an entity without a name was exported", nameless[:2], "every entity named (§3.4 REQUIRED)",
                      "$.entities")
    if not (case.accepted and case.cls.expect == "valid"):
        return
    entity = client.entities_by_name(exported).get(case.record.get("name"))  # type: ignore[arg-type]
    if entity is None:
        yield Failure(f"{label}: the entity of an ingested bundle is not in the full export", "absent", case.record.get("name"),
                      "$.entities")
        return
    for key, sent in case.record.items():
        got = entity.get(key, "<absent>")
        same = same_number("entity.frequency", got, sent) if key == "frequency" else \
            (client.instant(got) == client.instant(sent) if key in ("first_seen", "last_seen") and client.instant(sent) else got == sent)
        if not same:
            yield Failure(f"{label}: the entity's {key} changed between import and export", got, sent, f"$.entities[?].{key}")


def same_number(field_id: str, got: Any, sent: Any) -> bool:
    """As the table types the field: `weight` (<float>) as doubles, so a store of IEEE-754 doubles may
    give 2^53 back for 2^53 + 1; the <int> counts exactly."""
    comparison = table().field(field_id).number_comparison
    assert comparison is not None, f"{field_id} is not a number field"
    return domain.same_number(got, sent, comparison)
