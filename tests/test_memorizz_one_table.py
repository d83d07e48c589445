"""One source of readings for MemoRizz (issue 34 item 1, issue 35 item 2): every check that meets an open
point asks suites/memorizz/table.py, so no check blames an answer another accepts.

The walk: every row of the table (an errata point and one reading of it) has a request meeting the point, an
answer fitting the reading and an answer no reading allows; every check the row names is asked through its own
code (the digest rule, the clone's record and namespace judges, the automations judge, the batch judge and the
record sweep's middle record, the domain sweeps' open classes, the export selection against the model, the
preview) and must accept the first, record the row's reading, and refuse the second. Then each row broken on
purpose, both ways round: the walk must notice, which it can only do if the checks read the table.
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from memconform.core.check_context import NoTarget
from memconform.core.profile import Profile
from memconform.core.readings import Reading, ReadingTable
from memconform.core.results import Failure
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
# and the set is not empty), or False (refused).

Verdict = bool | set[str]


def recorded(ctx: Context, point: str, failures: Iterator[Failure] | list[Failure] | None = None) -> Verdict:
    if failures is not None and list(failures):
        return False
    return set(ctx.readings.get(point, {}).get("seen", []))


def by_the_digest_check(row: Reading, request: Any, answer: Any) -> Verdict:
    ctx = memorizz_ctx()
    doc = copy.deepcopy(readings.DIGEST_ARCHIVE)
    doc["integrity"]["digest"] = answer
    return recorded(ctx, row.point, document.integrity_digest(doc, ctx))


def by_the_document_rule(row: Reading, request: reading_kinds.RuleProblem, answer: Any) -> Verdict:
    """A rule check of the document scan (natural_id_matches, manifest_field_types, embeddings_follow_includes)
    meeting one problem that holds under the readings `answer` (the scan's result given to the run as found)."""
    ctx = memorizz_ctx()
    key = row.checks[0]
    problem = memorizz.Problem(key, "a problem under a reading", "x", "y", "$", tuple(answer))
    ctx.once("memorizz-scan", lambda: {key: [problem]})
    return recorded(ctx, row.point, document.rule_failures(readings.DIGEST_ARCHIVE, ctx, key))


def store_of(natural: str) -> str:
    return next(s for s, n in memorizz.NATURAL_IDS_IMPLIED.items() if n == natural and s not in memorizz.NATURAL_IDS_NAMED)


def by_the_clone_check(row: Reading, request: Any, answer: Any) -> Verdict:
    ctx = memorizz_ctx()
    if isinstance(request, reading_kinds.NaturalId):
        failures = consumer._natural_id_failures(ctx, store_of(request.natural), request.natural, {request.natural: request.sent},
                                                 {request.natural: answer}, request.new)
    else:
        failures = consumer._namespace_failures(ctx, "knowledge_base", {"memory_id": request.sent}, {"memory_id": answer}, "new-id",
                                                ctx.option("clone_namespaces"))
    return recorded(ctx, row.point, failures)


def by_the_import_modes(row: Reading, request: Any, answer: Any) -> Verdict:
    ctx = memorizz_ctx()
    if isinstance(request, reading_kinds.PreviewUnderError):
        domain_params.observe_preview(ctx, answer)
        return recorded(ctx, row.point)
    # M9 in its namespace form: the row's example (a record's memory_id) stands for the namespace's answer
    clones = readings.NAMESPACE_EXAMPLES[row.name] if row.example and answer == row.example[1] else answer
    records = [("knowledge_base", f"r{i}", {"content": text}) for i, text in enumerate(readings.CLONED_NAMESPACE.contents)]
    after = {f"clone{i}": text for i, text in enumerate(clones)}
    return recorded(ctx, row.point, domain_params.clone_failures(ctx, "a clone", {}, records, after))


def by_the_automations_check(row: Reading, request: Any, answer: Any) -> Verdict:
    ctx = memorizz_ctx()
    return recorded(ctx, row.point, consumer.automations_failures(ctx, "agent", answer["automations_enabled"], answer["automations"]))


def by_the_batch_judge(row: Reading, request: reading_kinds.MiddleRecord, answer: Any) -> Verdict:
    ctx = memorizz_ctx()
    return recorded(ctx, row.point, batch_failures.judge(ctx, row.point, "a restore", request.expect, answer,
                                                         batch_failures.WHOLE, ask=middle_record(request.expect)))


def by_the_record_sweep(row: Reading, request: Any, answer: Any) -> Verdict:
    ctx = memorizz_ctx()
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


def by_the_envelope_sweep(row: Reading, request: reading_kinds.OpenClass, answer: Any) -> Verdict:
    ctx = memorizz_ctx()
    domain_imports.judged_open(ctx, value_class(request.key), answer)
    return recorded(ctx, row.point)


def by_the_archive_sweep(row: Reading, request: reading_kinds.OpenClass, answer: Any) -> Verdict:
    ctx = memorizz_ctx()
    domain_archive.judged_open(ctx, value_class(request.key), answer)
    return recorded(ctx, row.point)


def by_the_export_selection(row: Reading, request: reading_kinds.ExportSelection, answer: Any) -> Verdict:
    refused, archive = answer
    reply = Reply(status="rejected", body={"error": "refused"}) if refused else Reply(status="ok", body=archive)
    ctx = memorizz_ctx(ExportTarget(reply))
    gen = domain_params.export_row_failures(ctx, request.state, dict(request.selection))
    failures = []
    try:
        while True:
            failures.append(next(gen))
    except StopIteration as done:
        assert done.value is True, "the export was judged"
    return recorded(ctx, row.point, failures)


JUDGES: dict[str, tuple[Callable[[Reading, Any, Any], Verdict], ...]] = {
    "integrity_digest": (by_the_digest_check,), "clone_rewrites_ids": (by_the_clone_check,),
    "domain_import_modes": (by_the_import_modes,), "imported_automations_disabled": (by_the_automations_check,),
    "import_batch_middle_item": (by_the_batch_judge,), "domain_records_every_class": (by_the_record_sweep,),
    "domain_envelope_every_class": (by_the_envelope_sweep,), "domain_archive_every_class": (by_the_archive_sweep,),
    "domain_records_and_manifest_every_class": (by_the_archive_sweep,), "domain_export_selection": (by_the_export_selection,),
    "natural_id_matches": (by_the_document_rule,), "manifest_field_types": (by_the_document_rule,),
    "embeddings_follow_includes": (by_the_document_rule,),
}


def walk(row: Reading) -> None:
    """The row's example accepted and its reading recorded by every check it names; its control refused."""
    assert row.example is not None and row.checks, "a row needs an example, a control and its checks"
    request, answer = row.example
    assert row.fits(request, answer, readings.DEFAULT_PINS), "the example fits its own reading"
    assert not row.fits(request, row.wrong, readings.DEFAULT_PINS), "the control fits no reading"
    for check in row.checks:
        for judge in JUDGES[check]:
            got = judge(row, request, answer)
            assert got, f"{check} ({judge.__name__}) blames what {row.point} accepts ({row.name})"
            assert isinstance(got, set) and row.name in got, f"{check} recorded {got}, not {row.name!r}"
            assert not judge(row, request, row.control(check)), f"{check} ({judge.__name__}) accepts the control of {row.point} ({row.name})"


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
    walk(row)


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

def broken(row: Reading, prediction: bool) -> Reading:
    return dataclasses.replace(row, predicts=lambda request, answer: prediction)


@pytest.mark.parametrize("prediction", [True, False], ids=["predicts-every-answer", "predicts-none"])
def test_every_row_broken_either_way_is_caught_by_the_walk(monkeypatch: pytest.MonkeyPatch, prediction: bool) -> None:
    missed = []
    for row in ROWS:
        bad = broken(row, prediction)
        monkeypatch.setattr(readings, "TABLE", ReadingTable(bad if r is row else r for r in ROWS))
        try:
            walk(bad)
        except AssertionError:
            continue
        missed.append(f"{row.point}:{row.name}")
    assert missed == [], f"{len(missed)} of {len(ROWS)} rows broken ({prediction}) and the walk did not notice"


# Rows whose control a check refuses before it asks the table, so a table row predicting every answer cannot
# change its verdict: a document rule's problem that holds under every reading (no reading named) is a failure.
REFUSED_BEFORE_THE_TABLE = {("M4", "not implied"), ("M5", "not memorizz-includes-keys"), ("M8", "not with-vector")}


@pytest.mark.parametrize("prediction", [True, False], ids=["predicts-every-answer", "predicts-none"])
def test_the_checks_read_the_table(monkeypatch: pytest.MonkeyPatch, prediction: bool) -> None:
    """Broken in the table only (the walk's own row left sound): a check must change its answer, so each
    check reads the table at run time and holds no copy of its own."""
    missed = []
    for row in ROWS:
        monkeypatch.setattr(readings, "TABLE", ReadingTable(broken(row, prediction) if r is row else r for r in ROWS))
        try:
            walk(row)
        except AssertionError:
            continue
        if not (prediction and (row.point, row.name) in REFUSED_BEFORE_THE_TABLE):
            missed.append(f"{row.point}:{row.name}")
    assert missed == [], f"{len(missed)} of {len(ROWS)} rows: the checks did not notice their table broken ({prediction})"
