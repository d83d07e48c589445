"""One source of readings for MemoryAI (issue 34 item 1, issue 35 item 2): every check that meets an open
point asks suites/memoryai/table.py, so no check blames an answer another accepts.

The walk (tests/table_walk.py): every row of the table (an errata point and one reading of it) has a request
meeting the point, an answer fitting the reading and an answer no reading allows; every check the row names is asked through its own
code (the checksum rule, the stream parser, the multipart import, the oracle-judged exports and imports, the
batch judge, the domain sweeps' open classes) and must accept the first, record the row's reading, and refuse
the second. Then each row broken on purpose, both ways round (predicting every answer, predicting none): the
walk must notice, which it can only do if the checks read the table.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any

import pytest
from memconform.core.check_context import NoTarget
from memconform.core.profile import Profile
from memconform.core.readings import Reading
from memconform.core.runner import Context
from memconform.core.suite import get_suite
from memconform.kit import batch_failures, domain
from memconform.suites.memoryai import bundle_rules, client, reading_kinds, readings, stream
from memconform.suites.memoryai.checks import (
    consumer,
    document,
    domain_imports,
    domain_pairs,
    domain_records,
    profile,
)
from memconform.suites.memoryai.checks.batch_failures import middle_item
from memconform.suites.memoryai.domain_support import no_instant_observed
from memconform.suites.memoryai.table import TABLE
from memconform.targets.base import Reply
from table_walk import Judge, Verdict, Walk, always, never, recorded, unless_failed, walk, with_prediction


class FieldTarget(NoTarget):
    """A consumer whose /import/file takes the bundle under one multipart field name only (E4)."""

    kind = "http"

    def __init__(self, field: str) -> None:
        self.field = field

    def call(self, request: Any, body: Any = None, **fields: Any) -> Reply:
        if fields.get("params", {}).get("_field") == self.field:
            return Reply(status=200, body={"success": True, "report": {}}, raw=b'{"success": true, "report": {}}')
        return Reply(status=400, body={"error": "no bundle in the upload"}, raw=b'{"error": "no bundle in the upload"}')


def memoryai_ctx(target: Any = None, **options: str) -> Context:
    return Context(suite=get_suite("memoryai"), target=target or NoTarget(),
                   profile=Profile.named("ci", options={f"memoryai.{k}": v for k, v in options.items()}))


# ---- each check that can meet a reading, asked through its own code ------------------------------------
# A judge answers the readings the check recorded for the point (accepted when its code yielded no failure
# and the set is not empty), or False (refused); it is handed a fresh context under the default options.


def with_checksum(request: reading_kinds.ChecksumCase, claimed: Any) -> dict[str, Any]:
    doc = json.loads(json.dumps(request.doc))
    doc["manifest"]["checksum"] = claimed
    return doc


def by_the_document_checksum(ctx: Context, row: Reading, request: Any, answer: Any) -> Verdict:
    return unless_failed(ctx, row.point, bundle_rules.checksum_of(with_checksum(request, answer), ctx, bundle_rules.canonical))


def by_the_scoped_checksum(ctx: Context, row: Reading, request: Any, answer: Any) -> Verdict:
    return unless_failed(ctx, row.point, bundle_rules.checksum_of(with_checksum(request, answer), ctx))


def by_the_content_hash_check(ctx: Context, row: Reading, request: reading_kinds.ContentHash, answer: Any) -> Verdict:
    doc = {"chunks": [{"content": request.content, "memory_type": "fact", "content_hash": answer}]}
    return unless_failed(ctx, row.point, document.content_hash_matches(doc, ctx))


def by_the_stream_parser(ctx: Context, row: Reading, request: Any, answer: Any) -> Verdict:
    """deleted_not_exported and export_stream_equivalent read the stream through parse_stream."""
    envelope = {"format": "memoryai-bundle", "version": 1, "manifest": {"scope": "full"}}
    raw = b"\n".join(json.dumps(line).encode() for line in (envelope, answer))
    return unless_failed(ctx, row.point, stream.parse_stream(ctx, raw)[1])


def by_the_multipart_import(ctx: Context, row: Reading, request: Any, answer: Any) -> Verdict:
    """Every check importing through /import/file calls client.import_file: a consumer taking only `answer`
    (a context of its own, whose target is that consumer)."""
    ctx = memoryai_ctx(FieldTarget(answer))
    if not client.import_file(ctx, b"{}").ok:
        return False
    return recorded(ctx, row.point)


def by_the_reimport_check(ctx: Context, row: Reading, request: reading_kinds.Reimport, answer: Any) -> Verdict:
    return unless_failed(ctx, row.point, consumer.reimported_counters(ctx, request, answer))


def by_the_import_pairs(ctx: Context, row: Reading, request: Any, answer: Any) -> Verdict:
    if isinstance(request, reading_kinds.InvalidChunks):
        body = {"success": True, "report": {"chunks": answer.counters}} if answer.reported else {"success": True}
        reply = Reply(status=200 if answer.accepted else 422, body=body if answer.accepted else {"error": "invalid chunk"},
                      raw=json.dumps(body).encode())
        from memconform.suites.memoryai import model

        outcomes = model.import_answers(request.state, request.bundle)
        return unless_failed(ctx, row.point, domain_pairs.judged_import(ctx, "a bundle", "invalid_chunk", reply, answer.held,
                                                                    request.touched, outcomes, request))
    if isinstance(request, reading_kinds.ScopedExport):
        return unless_failed(ctx, row.point, domain_pairs.judged_export(ctx, "an export", request.scope, request.since,
                                                                    request.state, answer))
    return by_the_export_without_instant(ctx, row, request, answer)


def by_the_since_check(ctx: Context, row: Reading, request: reading_kinds.ScopedExport, answer: Any) -> Verdict:
    """export_scope_since judges only the chunk created at `since`; asked with its option pinned to the row's
    reading (under the default both are accepted, so the control is the other reading's answer)."""
    ctx = memoryai_ctx(since_boundary=row.name)
    at = frozenset(h for h, ch in request.state.chunks.items() if ch["created_at"] == request.since)
    case = dataclasses.replace(request, judged=at)
    return unless_failed(ctx, row.point, profile.boundary_failures(ctx, case, answer, request.since))


def by_the_export_without_instant(ctx: Context, row: Reading, request: Any, answer: str) -> Verdict:
    """domain_export_every_class and domain_export_parameters_pairwise both ask no_instant_observed."""
    reply, doc = {"served": (Reply(status=200, body={"format": "memoryai-bundle"}, raw=b"{}"), {"format": "memoryai-bundle"}),
                  "refused": (Reply(status=422, body={"error": "since needed"}, raw=b'{"error": "since needed"}'), None)}.get(
        answer, (Reply(status=200, body=[], raw=b"[]"), None))
    if not no_instant_observed(ctx, {"scope": "since"}, reply, doc):
        return False
    return recorded(ctx, row.point)


def by_the_batch_judge(ctx: Context, row: Reading, request: reading_kinds.MiddleItem, answer: Any) -> Verdict:
    return unless_failed(ctx, row.point, batch_failures.judge(ctx, row.point, "a bundle", request.expect, answer,
                                                         batch_failures.EITHER, ask=middle_item(request.expect)))


def value_class(key: str) -> domain.ValueClass:
    field_id, class_id = key.rsplit(":", 1)
    found = domain.load("memoryai")
    assert found is not None
    return found.field(field_id).cls(class_id)


def by_the_envelope_sweep(ctx: Context, row: Reading, request: reading_kinds.OpenClass, answer: Any) -> Verdict:
    domain_imports.observed(ctx, value_class(request.key), answer)
    return recorded(ctx, row.point)


def by_the_record_sweep(ctx: Context, row: Reading, request: reading_kinds.OpenClass, answer: Any) -> Verdict:
    domain_records.observed(ctx, value_class(request.key), answer)
    return recorded(ctx, row.point)


def by_the_export_sweep(ctx: Context, row: Reading, request: Any, answer: Any) -> Verdict:
    if isinstance(request, reading_kinds.OpenClass):
        return by_the_envelope_sweep(ctx, row, request, answer)
    return by_the_export_without_instant(ctx, row, request, answer)


JUDGES: dict[str, Judge] = {
    "checksum_present_and_valid": by_the_document_checksum, "checksum_valid_scoped": by_the_scoped_checksum,
    "content_hash_matches": by_the_content_hash_check,
    "deleted_not_exported": by_the_stream_parser, "export_stream_equivalent": by_the_stream_parser,
    "import_file_multipart": by_the_multipart_import, "rejects_newer_version": by_the_multipart_import,
    "reimport_inserts_nothing": by_the_reimport_check,
    "domain_import_requests_pairwise": by_the_import_pairs,
    "export_scope_since": by_the_since_check, "domain_export_parameters_pairwise": by_the_import_pairs,
    "import_batch_middle_item": by_the_batch_judge,
    "domain_import_every_class": by_the_envelope_sweep, "domain_export_every_class": by_the_export_sweep,
    "domain_import_every_record_class": by_the_record_sweep,
}
# a check meeting several points through different code: the judge that goes with the point
BY_POINT = {("domain_import_requests_pairwise", "E4"): by_the_multipart_import,
            ("domain_import_requests_pairwise", "E9"): by_the_import_pairs}


def judge_of(row: Reading, check: str) -> Judge:
    if (check, row.point) in BY_POINT:
        return BY_POINT[(check, row.point)]
    assert check not in {named for named, _ in BY_POINT}, f"{check} meets {row.point}: name its judge in BY_POINT"
    return JUDGES[check]


# open classes (E42 a bundle's, E61 an export's): accepted or refused, no third answer
EVERY_ANSWER_FITS = frozenset({"E42", "E61"})
HOW = Walk(judge_of=judge_of, context=memoryai_ctx, pins=readings.DEFAULT_PINS, every_answer_fits=EVERY_ANSWER_FITS,
           stray_answers=(None,))
ROWS = list(TABLE)


def test_every_point_of_the_table_is_an_errata_entry() -> None:
    from pathlib import Path

    import memconform.suites.memoryai as memoryai_suite

    errata = (Path(memoryai_suite.__file__).parent / "errata.md").read_text()
    assert all(f"## {point} " in errata or f"## {point}." in errata for point in TABLE.points()), TABLE.points()


def test_every_check_a_row_names_is_a_registered_check_with_a_judge() -> None:
    registered = {check_id.split(".", 1)[1] for check_id in get_suite("memoryai").registered()}
    named = {check for row in ROWS for check in row.checks}
    assert named <= registered, sorted(named - registered)
    assert named <= set(JUDGES), sorted(named - set(JUDGES))


def test_no_check_observes_a_point_outside_the_table() -> None:
    """The checks ask the table: no `ctx.observe("E…")` with predictions of its own is left in the suite."""
    import re
    from pathlib import Path

    import memconform.suites.memoryai as memoryai_suite

    root = Path(memoryai_suite.__file__).parent
    own = [f"{p.relative_to(root)}:{m.group(0)}" for p in root.rglob("*.py") if "reference" not in p.parts
           for m in re.finditer(r"ctx\.observe\(\s*[\"']E\d+", p.read_text("utf-8"))]
    assert own == []


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.point}:{r.name}" for r in ROWS])
def test_every_check_that_can_meet_a_reading_accepts_its_answer_and_refuses_the_control(row: Reading) -> None:
    assert walk(row, TABLE, HOW) == []


def test_a_reading_pinned_away_is_blamed_again() -> None:
    """An option pinning one reading: the other reading's answer fails the check that judges it."""
    ascii_row = TABLE.named("E1", "ascii-escapes")
    request, answer = ascii_row.example  # type: ignore[misc]
    ctx = memoryai_ctx(checksum_unicode="literal")
    failures = list(bundle_rules.checksum_of(with_checksum(request, answer), ctx))
    assert len(failures) == 1 and "utf8-literal" in failures[0].detail
    bundle = TABLE.named("E4", "bundle")
    assert not client.import_file(memoryai_ctx(FieldTarget("bundle"), multipart_field="file"), b"{}").ok
    assert by_the_multipart_import(memoryai_ctx(), bundle, *bundle.example)  # type: ignore[misc]


# ---- the self-test: each row broken both ways round, the walk notices ---------------------------------

@pytest.mark.parametrize("prediction", [always, never], ids=["predicts-every-answer", "predicts-none"])
def test_every_row_broken_either_way_is_caught_by_the_walk(monkeypatch: pytest.MonkeyPatch, prediction: Any) -> None:
    missed = []
    for row in ROWS:
        bad, broken_table = with_prediction(row, ROWS, prediction)
        monkeypatch.setattr(readings, "TABLE", broken_table)
        if not walk(bad, broken_table, HOW):
            missed.append(f"{row.point}:{row.name}")
    assert missed == [], f"{len(missed)} of {len(ROWS)} rows broken ({prediction.__name__}) and the walk did not notice"


# Rows whose control a check refuses before it asks the table, so a table row predicting every answer cannot
# change its verdict: E3, a stream line naming no kind (the parser has no section to put it in); E4, a consumer
# taking another field name (the check sends only the names of the table's readings).
REFUSED_BEFORE_THE_TABLE = {"E3", "E4"}


@pytest.mark.parametrize("prediction", [always, never], ids=["predicts-every-answer", "predicts-none"])
def test_the_checks_read_the_table(monkeypatch: pytest.MonkeyPatch, prediction: Any) -> None:
    """Broken in the table the checks ask only (the walk's own row and table left sound): a check must change
    its answer, so each check reads the table at run time and holds no copy of its own."""
    missed = []
    for row in ROWS:
        monkeypatch.setattr(readings, "TABLE", with_prediction(row, ROWS, prediction)[1])
        if walk(row, TABLE, HOW):
            continue
        if not (prediction is always and row.point in REFUSED_BEFORE_THE_TABLE):
            missed.append(f"{row.point}:{row.name}")
    assert missed == [], f"{len(missed)} of {len(ROWS)} rows: the checks did not notice their table broken ({prediction.__name__})"
