"""One source of readings for EMP (issue 34 item 1, issue 35 item 2): every open point a check observes is a row
of suites/emp/table.py, and every check meeting it asks that table.

The walk: every row (an errata point and one reading of it) has a request meeting the point, an answer fitting
the reading and, unless every answer fits some reading of the point (EVERY_ANSWER_FITS), an answer no reading
allows; every check the row names is asked through its own judgement (the function the check calls on what the
target did) and must accept the first, recording the reading, and refuse the second. The self-test breaks each
row both ways (a prediction that never holds, one that always holds) and each check both ways (blaming
everything, accepting everything) and asserts the walk notices every time.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from memconform.core.check_context import NoTarget
from memconform.core.profile import Profile
from memconform.core.readings import Asked, Reading
from memconform.core.runner import Context
from memconform.core.suite import get_suite
from memconform.suites.emp import format as emp
from memconform.suites.emp import model, readings, table
from memconform.suites.emp.checks import (
    common,
    domain_files,
    domain_query,
    domain_reader,
    domain_writer,
    locking,
    reader,
    writer,
)
from memconform.suites.emp.options import OPTIONS
from memconform.targets.base import Reply
from table_walk import Judge, Verdict, Walk, broken_checks, broken_tables, recorded, unless_failed, walk

# points whose every answer fits one reading by construction: the wrong answers are failed by the check's other
# comparisons (tests/test_emp_readings.py EVERY_ANSWER_FITS says which); their rows are told apart instead
EVERY_ANSWER_FITS = {"E13", "E14", "E65", "E66"}


def emp_ctx(**options: str) -> Context:
    return Context(suite=get_suite("emp"), target=NoTarget(), profile=Profile.named("ci", options={
        f"emp.{k}": v for k, v in options.items()}))


def answered_by(ok: bool, body: Any = None) -> Reply:
    return Reply(status=200 if ok else 422, body=body, raw=json.dumps(body).encode() if body is not None else b"refused")


# ---- each check, asked through its own judgement ----------------------------------------------------

def by_the_append_reply(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    common.written_id(ctx, answered_by(True, {"id": answer} if answer else {}), {"id": request.given})
    return recorded(ctx, row.point)


def by_the_tombstone_probe(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    return common.honoured(ctx, request.given, answer) and recorded(ctx, row.point)


def by_the_delete_check(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    if row.point == "E13":
        writer.delete_form_seen(ctx, readings.Deletion(False), answer)
    else:
        writer.delete_form_seen(ctx, answer, None)
    return recorded(ctx, row.point)


def by_the_stale_lock_append(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    return unless_failed(ctx, row.point, locking.stale_verdict(ctx, answer, "the answer", b"refused"))


def by_the_held_lock(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    return unless_failed(ctx, row.point, locking.held_verdict(ctx, "append", answer, "the status"))


def by_the_tie_check(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    first = table.entry(1, content=request.given[0])
    return unless_failed(ctx, row.point, reader.tie_verdict(ctx, first, dict(first, content=request.given[1]), list(answer)))


def by_the_newer_major_check(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    answered, shown = answer
    return unless_failed(ctx, row.point, reader.newer_major_verdict(ctx, answered, table.entry(2, v="2.0") if shown else None))


def by_the_append_sweep(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    if row.point == "E65":
        sent = table.entry(5, v=request.given)
        failure = domain_writer.judge_appended(ctx, "valid", answered_by(True), [dict(sent, v=answer)], sent, "line.v")
    else:
        failure = domain_writer.judge_appended(ctx, "open", answered_by(answer.acknowledged), list(answer.new), request.given,
                                               "line.tags:upper")
    return unless_failed(ctx, row.point, failure)


def by_the_update_sweep(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    return unless_failed(ctx, row.point, domain_writer.judge_updated(ctx, "open", answered_by(answer.acknowledged),
                                                                     list(answer.new), request.given, 0, "line.tags:upper"))


def by_the_line_forms(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    first, second = request.given.lines
    return unless_failed(ctx, row.point, domain_files.view_verdict(ctx, "bom", list(answer), first, second, request.given.optional))


def by_the_class_reader(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    domain_reader.uuid_case_seen(ctx, request.given, answer)
    return recorded(ctx, row.point)


def by_the_model(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    """The model's view of the file the situation writes (under the run's pins) allows the answer: a tombstone of
    the form tried deletes its entry (E1); one of two equal-ts lines wins, whole (E3)."""
    pins = model.Readings.pinned(ctx.option)
    if request.situation == readings.HONOURED:
        kept, gone = table.entry(1), table.entry(2)
        lines = [kept, gone, emp.tombstone(gone["id"], gone["ts"] + 1000, "com.example.app", request.given)]
        return (model.view_answers(lines, pins).get(gone["id"], (None,)) == (None,)) is answer
    first = table.entry(1, content=request.given[0])
    options = model.view_answers([first, dict(first, content=request.given[1])], pins)[first["id"]]
    return any(e is not None and (e["content"],) == tuple(answer) for e in options)


def by_the_query_sweep(ctx: Context, row: Reading, request: Asked, answer: Any) -> Verdict:
    asked: readings.Queried = request.given
    reply = answered_by(answer.ok, list(answer.entries) if answer.ok else None)
    if request.situation == readings.ODD_VALUE:
        point = "E60" if asked.name == "near" else "E61"
        failures = domain_query.judge_odd(ctx, "query", asked.lines, asked.query, asked.name, point, asked.form, reply)
    else:
        failures = domain_query.judge_valid(ctx, "query", asked.lines, asked.query, asked.form, reply)
    return unless_failed(ctx, row.point, list(failures))


JUDGES: dict[str, Judge] = {
    "written_id": by_the_append_reply, "tombstone_form": by_the_tombstone_probe,
    "writer_delete_keeps_foreign": by_the_delete_check,
    **dict.fromkeys(table.STALE_CHECKS, by_the_stale_lock_append),
    "writer_waits_for_lock": by_the_held_lock,
    "reader_equal_ts_tie": by_the_tie_check, "reader_newer_major_refused": by_the_newer_major_check,
    "writer_appends_every_class": by_the_append_sweep, "writer_updates_every_class": by_the_update_sweep,
    "file_every_line_form": by_the_line_forms, "reader_returns_every_valid_class": by_the_class_reader,
    "query_every_parameter_pair": by_the_query_sweep, "model": by_the_model,
}


def judge_of(row: Reading, check: str) -> Judge:
    """writer_lock_every_content meets E6 through the held lock and E2 through the stale one."""
    if check == "writer_lock_every_content" and row.point == "E6":
        return by_the_held_lock
    return JUDGES[check]


def defaults(name: str) -> str:
    return OPTIONS[name].default


HOW = Walk(judge_of=judge_of, context=emp_ctx, pins=defaults, every_answer_fits=frozenset(EVERY_ANSWER_FITS))


ROWS = list(table.TABLE)


def test_every_point_of_the_table_is_an_errata_entry_and_every_check_a_registered_one_or_a_named_helper() -> None:
    import memconform.suites.emp as emp_suite

    errata = (Path(emp_suite.__file__).parent / "errata.md").read_text()
    assert all(f"## {point} " in errata for point in table.TABLE.points()), table.TABLE.points()
    registered = {check_id.split(".", 1)[1] for check_id in get_suite("emp").registered()}
    named = {check for row in ROWS for check in row.checks}
    assert named <= registered | set(table.STANDS_FOR), sorted(named - registered - set(table.STANDS_FOR))
    assert named <= set(JUDGES) | {"writer_lock_every_content"}, sorted(named - set(JUDGES))


def test_every_point_a_check_observes_is_in_the_table() -> None:
    """No check keeps a prediction of its own: every point named beside an observation in suites/emp is a row.
    (The file checks' notes of a problem under an unpinned option, checks/file.py, name an option, not a point.)"""
    import re

    import memconform.suites.emp as emp_suite

    folder = Path(emp_suite.__file__).parent
    found: set[str] = set()
    for path in folder.rglob("*.py"):
        if {"mutants", "reference"} & set(path.parts):
            continue
        text = path.read_text("utf-8")
        assert not re.findall(r'ctx\.observe\("E\d+"', text), f"{path.name} observes a point without the table"
        found |= {point for line in text.splitlines() if re.search(r"table\.observe\(ctx|judge_odd\(", line)
                  for point in re.findall(r'"(E\d+)"', line)}
    assert found == set(table.TABLE.points()), sorted(found ^ set(table.TABLE.points()))


@pytest.mark.parametrize("row", ROWS, ids=[f"{row.point}:{row.name}" for row in ROWS])
def test_every_check_that_can_meet_a_reading_accepts_its_answer_and_refuses_the_control(row: Reading) -> None:
    assert walk(row, table.TABLE, HOW) == []


def test_e66_upper_case_uuid_ids_are_a_recorded_reading_of_the_table_and_the_errata() -> None:
    import memconform.suites.emp as emp_suite

    assert {row.name for row in table.TABLE.of("E66")} == {readings.UUID_AS_WRITTEN, readings.UUID_FOLDED}
    errata = (Path(emp_suite.__file__).parent / "errata.md").read_text()
    assert "## E66 Upper-case UUID ids" in errata and "case-insensitively" in errata


def test_a_reading_pinned_away_is_blamed_again() -> None:
    """The pins narrow what the checks accept through the same rows: the earlier of two equal-ts lines under
    ts_tie=later-line, a refusal on a stale lock under stale_lock_takeover=required, one tombstone form under
    tombstone=the other."""
    earlier = table.TABLE.named("E3", "the earlier line wins")
    first = table.entry(1, content="first")
    failures = list(reader.tie_verdict(emp_ctx(ts_tie="later-line"), first, dict(first, content="second"), ["first"]))
    assert [f.readings for f in failures] == [("later-line",)], failures
    assert earlier.fits(*earlier.example, defaults)  # type: ignore[misc]
    assert not by_the_model(emp_ctx(ts_tie="later-line"), earlier, *earlier.example)  # type: ignore[misc]
    assert by_the_model(emp_ctx(), earlier, *earlier.example)  # type: ignore[misc]
    assert locking.stale_verdict(emp_ctx(stale_lock_takeover="required"), readings.Stale(False), "refused", b"busy")
    assert not locking.stale_verdict(emp_ctx(), readings.Stale(False), "refused", b"busy")
    ctx = emp_ctx(tombstone="type-tombstone")  # the form honoured is recorded, but not accepted
    observation = table.observe(ctx, "E1", Asked(readings.HONOURED, "deleted-flag"), True)
    assert observation.matched == ("deleted-flag",) and observation.failure is not None


# ---- the self-test: a broken row or a broken check is noticed, both ways round ----------------------------

@pytest.mark.parametrize("row", ROWS, ids=[f"{row.point}:{row.name}" for row in ROWS])
def test_a_row_broken_either_way_is_noticed(row: Reading, monkeypatch: pytest.MonkeyPatch) -> None:
    """The row's prediction made never to hold, then always to hold, in the table the checks ask: the walk fails."""
    for broken, mutated, rows in broken_tables(row, ROWS):
        monkeypatch.setattr(table, "TABLE", rows)
        assert walk(mutated, rows, HOW), f"{broken}: {row.point} {row.name!r} not noticed"


@pytest.mark.parametrize("row", ROWS, ids=[f"{row.point}:{row.name}" for row in ROWS])
def test_a_check_broken_either_way_is_noticed(row: Reading) -> None:
    """Each check the row names made to blame everything (false blame), then to accept everything (a miss, where
    the row has a control: EVERY_ANSWER_FITS points have none to miss): the walk fails."""
    for broken, judges in broken_checks(row, HOW):
        assert walk(row, table.TABLE, HOW, judges), f"{broken}: not noticed"
