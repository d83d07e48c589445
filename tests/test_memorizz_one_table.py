"""One source of readings for MemoRizz (issue 34 item 1, issue 35 item 2): every check that meets an open
point asks suites/memorizz/table.py, so no check blames an answer another accepts.

The walk (tests/table_walk.py): every row of the table (an errata point and one reading of it) has a request
meeting the point, an answer fitting the reading and an answer no reading allows; every check the row names is asked through its own
code (the digest rule, the clone's record and namespace judges, the automations judge, the batch judge and the
record sweep's middle record, the domain sweeps' open classes, the export selection against the model, the
preview) and must accept the first, record the row's reading, and refuse the second. Then each row broken on
purpose, both ways round: the walk must notice, which it can only do if the checks read the table.
"""

from __future__ import annotations

import copy
from typing import Any

import pytest
from memconform.core.check_context import NoTarget
from memconform.core.profile import Profile
from memconform.core.readings import Reading
from memconform.core.runner import Context
from memconform.core.suite import get_suite
from memconform.kit import batch_failures, domain
from memconform.suites.memorizz import format as memorizz
from memconform.suites.memorizz import reading_kinds, readings
from memconform.suites.memorizz.checks import (
    consumer,
    document,
    domain_archive,
    domain_imports,
    domain_params,
)
from memconform.suites.memorizz.checks.batch_failures import middle_record
from memconform.suites.memorizz.table import TABLE
from memconform.targets.base import Reply
from table_walk import Judge, Verdict, Walk, always, never, recorded, unless_failed, walk, with_prediction


class ExportTarget(NoTarget):
    """A store whose export answers one reply (M61)."""

    kind = "python"

    def __init__(self, reply: Reply) -> None:
        self.reply = reply

    def call(self, request: Any, body: Any = None, **fields: Any) -> Reply:
        return self.reply


def memorizz_ctx(target: Any = None, **options: str) -> Context:
    return Context(suite=get_suite("memorizz"), target=target or NoTarget(),
                   profile=Profile.named("ci", options={f"memorizz.{k}": v for k, v in options.items()}))


# ---- each check that can meet a reading, asked through its own code ------------------------------------
# A judge answers the readings the check recorded for the point (accepted when its code yielded no failure
# and the set is not empty), or False (refused); it is handed a fresh context under the default options.


def by_the_digest_check(ctx: Context, row: Reading, request: Any, answer: Any) -> Verdict:
    doc = copy.deepcopy(readings.DIGEST_ARCHIVE)
    doc["integrity"]["digest"] = answer
    return unless_failed(ctx, row.point, document.integrity_digest(doc, ctx))


def by_the_document_rule(ctx: Context, row: Reading, request: reading_kinds.RuleProblem, answer: Any) -> Verdict:
    """A rule check of the document scan (natural_id_matches, manifest_field_types, embeddings_follow_includes)
    meeting one problem that holds under the readings `answer` (the scan's result given to the run as found)."""
    key = row.checks[0]
    problem = memorizz.Problem(key, "a problem under a reading", "x", "y", "$", tuple(answer))
    ctx.once("memorizz-scan", lambda: {key: [problem]})
    return unless_failed(ctx, row.point, document.rule_failures(readings.DIGEST_ARCHIVE, ctx, key))


def store_of(natural: str) -> str:
    return next(s for s, n in memorizz.NATURAL_IDS_IMPLIED.items() if n == natural and s not in memorizz.NATURAL_IDS_NAMED)


def by_the_clone_check(ctx: Context, row: Reading, request: Any, answer: Any) -> Verdict:
    if isinstance(request, reading_kinds.NaturalId):
        failures = consumer._natural_id_failures(ctx, store_of(request.natural), request.natural, {request.natural: request.sent},
                                                 {request.natural: answer}, request.new)
    else:
        failures = consumer._namespace_failures(ctx, "knowledge_base", {"memory_id": request.sent}, {"memory_id": answer}, "new-id",
                                                ctx.option("clone_namespaces"))
    return unless_failed(ctx, row.point, failures)


def by_the_import_modes(ctx: Context, row: Reading, request: Any, answer: Any) -> Verdict:
    if isinstance(request, reading_kinds.PreviewUnderError):
        domain_params.observe_preview(ctx, answer)
        return recorded(ctx, row.point)
    # M9 in its namespace form: the row's example (a record's memory_id) stands for the namespace's answer
    clones = readings.NAMESPACE_EXAMPLES[row.name] if row.example and answer == row.example[1] else answer
    records = [("knowledge_base", f"r{i}", {"content": text}) for i, text in enumerate(readings.CLONED_NAMESPACE.contents)]
    after = {f"clone{i}": text for i, text in enumerate(clones)}
    return unless_failed(ctx, row.point, domain_params.clone_failures(ctx, "a clone", {}, records, after))


def by_the_automations_check(ctx: Context, row: Reading, request: Any, answer: Any) -> Verdict:
    return unless_failed(ctx, row.point, consumer.automations_failures(ctx, "agent", answer["automations_enabled"], answer["automations"]))


def by_the_batch_judge(ctx: Context, row: Reading, request: reading_kinds.MiddleRecord, answer: Any) -> Verdict:
    return unless_failed(ctx, row.point, batch_failures.judge(ctx, row.point, "a restore", request.expect, answer,
                                                         batch_failures.WHOLE, ask=middle_record(request.expect)))


def by_the_record_sweep(ctx: Context, row: Reading, request: Any, answer: Any) -> Verdict:
    if isinstance(request, reading_kinds.OpenClass):
        domain_imports.judged_open(ctx, value_class(request.key), answer)
        return recorded(ctx, row.point)
    # the middle record refused by the store: what the sweep reads of it (its records present, the report)
    sent = [{"id": f"r{i}", "data": {"content": f"c{i}"}} for i in range(len(answer.stored))]
    stored = {f"c{i}": {} for i, there in enumerate(answer.stored) if there}
    body = {"ok": False, "imported": len(stored)} if answer.progress else {"ok": False}
    if not domain_imports.refused_with_progress(ctx, body, sent, stored):
        return False
    return recorded(ctx, row.point)


def value_class(key: str) -> domain.ValueClass:
    field_id, class_id = key.rsplit(":", 1)
    found = domain.load("memorizz")
    assert found is not None
    return found.field(field_id).cls(class_id)


def by_the_envelope_sweep(ctx: Context, row: Reading, request: reading_kinds.OpenClass, answer: Any) -> Verdict:
    domain_imports.judged_open(ctx, value_class(request.key), answer)
    return recorded(ctx, row.point)


def by_the_archive_sweep(ctx: Context, row: Reading, request: reading_kinds.OpenClass, answer: Any) -> Verdict:
    domain_archive.judged_open(ctx, value_class(request.key), answer)
    return recorded(ctx, row.point)


def by_the_export_selection(ctx: Context, row: Reading, request: reading_kinds.ExportSelection, answer: Any) -> Verdict:
    refused, archive = answer
    reply = Reply(status="rejected", body={"error": "refused"}) if refused else Reply(status="ok", body=archive)
    ctx = memorizz_ctx(ExportTarget(reply))  # a context of its own, whose store answers the reply
    gen = domain_params.export_row_failures(ctx, request.state, dict(request.selection))
    failures = []
    try:
        while True:
            failures.append(next(gen))
    except StopIteration as done:
        assert done.value is True, "the export was judged"
    return unless_failed(ctx, row.point, failures)


JUDGES: dict[str, Judge] = {
    "integrity_digest": by_the_digest_check, "clone_rewrites_ids": by_the_clone_check,
    "domain_import_modes": by_the_import_modes, "imported_automations_disabled": by_the_automations_check,
    "import_batch_middle_item": by_the_batch_judge, "domain_records_every_class": by_the_record_sweep,
    "domain_envelope_every_class": by_the_envelope_sweep, "domain_archive_every_class": by_the_archive_sweep,
    "domain_records_and_manifest_every_class": by_the_archive_sweep, "domain_export_selection": by_the_export_selection,
    "natural_id_matches": by_the_document_rule, "manifest_field_types": by_the_document_rule,
    "embeddings_follow_includes": by_the_document_rule,
}
# M35, M60: the domain table's open classes, restored or refused; M62: a preview under conflict=error says ok,
# or ok: false. No third answer
EVERY_ANSWER_FITS = frozenset({"M35", "M60", "M62"})
HOW = Walk(judge_of=lambda row, check: JUDGES[check], context=memorizz_ctx, pins=readings.DEFAULT_PINS,
           every_answer_fits=EVERY_ANSWER_FITS, stray_answers=(None,))


ROWS = list(TABLE)


def test_every_point_of_the_table_is_an_errata_entry() -> None:
    from pathlib import Path

    import memconform.suites.memorizz as memorizz_suite

    errata = (Path(memorizz_suite.__file__).parent / "errata.md").read_text()
    assert all(f"## {point}. " in errata or f"## {point} " in errata for point in TABLE.points()), TABLE.points()


def test_every_check_a_row_names_is_a_registered_check_with_a_judge() -> None:
    registered = {check_id.split(".", 1)[1] for check_id in get_suite("memorizz").registered()}
    named = {check for row in ROWS for check in row.checks}
    assert named <= registered, sorted(named - registered)
    assert named <= set(JUDGES), sorted(named - set(JUDGES))


def test_no_check_observes_a_point_outside_the_table() -> None:
    """The checks ask the table: no `ctx.observe("M…")` with predictions of its own is left in the suite."""
    import re
    from pathlib import Path

    import memconform.suites.memorizz as memorizz_suite

    root = Path(memorizz_suite.__file__).parent
    own = [f"{p.relative_to(root)}:{m.group(0)}" for p in root.rglob("*.py")
           for m in re.finditer(r"ctx\.observe\(\s*[\"']M\d+", p.read_text("utf-8"))]
    assert own == []


@pytest.mark.parametrize("row", ROWS, ids=[f"{r.point}:{r.name}" for r in ROWS])
def test_every_check_that_can_meet_a_reading_accepts_its_answer_and_refuses_the_control(row: Reading) -> None:
    assert walk(row, TABLE, HOW) == []


def test_a_reading_pinned_away_is_blamed_again() -> None:
    """An option pinning one reading: the other reading's answer fails each check that meets the point,
    domain_import_modes as clone_rewrites_ids (M9), and the digest under the other key order (M2)."""
    kept = TABLE.named("M9", "namespaces kept")
    ctx = memorizz_ctx(clone_namespaces="rewrite")
    assert list(consumer._namespace_failures(ctx, "knowledge_base", {"memory_id": "ns-a"}, {"memory_id": "ns-a"}, "n", "rewrite"))
    records = [("knowledge_base", f"r{i}", {"content": t}) for i, t in enumerate(readings.CLONED_NAMESPACE.contents)]
    beside = {f"clone{i}": t for i, t in enumerate(readings.NAMESPACE_EXAMPLES[kept.name])}
    failures = list(domain_params.clone_failures(ctx, "a clone", {}, records, beside))
    assert len(failures) == 1 and "M9:namespaces-rewritten" in failures[0].readings
    assert not list(domain_params.clone_failures(memorizz_ctx(), "a clone", {}, records, beside))
    utf16 = TABLE.named("M2", "keys sorted by UTF-16 code units")
    doc = copy.deepcopy(readings.DIGEST_ARCHIVE)
    doc["integrity"]["digest"] = utf16.example[1]  # type: ignore[index]
    pinned = memorizz_ctx(key_order="codepoint")
    assert list(document.integrity_digest(doc, pinned))
    includes = TABLE.named("M5", "not memorizz-includes-keys")
    assert includes.accepted(readings.DEFAULT_PINS) and not includes.accepted({"includes_keys": "memorizz"})


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
# change its verdict: a document rule's problem that holds under every reading (no reading named) is a failure.
REFUSED_BEFORE_THE_TABLE = {("M4", "not implied"), ("M5", "not memorizz-includes-keys"), ("M8", "not with-vector")}


@pytest.mark.parametrize("prediction", [always, never], ids=["predicts-every-answer", "predicts-none"])
def test_the_checks_read_the_table(monkeypatch: pytest.MonkeyPatch, prediction: Any) -> None:
    """Broken in the table the checks ask only (the walk's own row and table left sound): a check must change
    its answer, so each check reads the table at run time and holds no copy of its own."""
    missed = []
    for row in ROWS:
        monkeypatch.setattr(readings, "TABLE", with_prediction(row, ROWS, prediction)[1])
        if walk(row, TABLE, HOW):
            continue
        if not (prediction is always and (row.point, row.name) in REFUSED_BEFORE_THE_TABLE):
            missed.append(f"{row.point}:{row.name}")
    assert missed == [], f"{len(missed)} of {len(ROWS)} rows: the checks did not notice their table broken ({prediction.__name__})"
