"""EMP's one table of readings: every open point a check observes, one row per reading (suites/emp/readings.py
says what the requests and answers are). The checks ask it through `observe`; tests/test_emp_one_table.py walks
every row and asks each check the row names, through that check's own judgement, for the row's example answer
(accepted, the reading recorded) and its control (refused).

`checks` names registered checks, and three shared names standing for every check that uses them
(STANDS_FOR): `written_id` (an append's reply read, E14), `tombstone_form` (the tombstone form a reader
honours, E1) and `model` (suites/emp/model.py's view of a file, E1 and E3)."""

from __future__ import annotations

from typing import Any

from memconform.core.readings import Asked, Observation, Reading, ReadingTable, at
from memconform.suites.emp import readings

STANDS_FOR = {
    "written_id": "every check that appends through the target and reads the id it wrote (suites/emp/checks/common.py "
                  "written_id: the writer, lock, crash, concurrency, file and model-based checks)",
    "tombstone_form": "every reader check that deletes by a tombstone (suites/emp/checks/common.py tombstone_form: "
                      "reader_tombstone_deletes, reader_deleted_stays_deleted, reader_newer_after_tombstone, query_*, "
                      "query_every_parameter_pair)",
    "model": "every check that judges a reader's view by the model (suites/emp/model.py view_answers: the reader "
             "checks, the query sweeps, the writer checks reading a file back)",
}


def entry(n: int, **fields: Any) -> dict[str, Any]:
    """An example entry: id n, ts n seconds, content 'entry n'."""
    return {"v": "1.0", "id": f"00000000-0000-4000-8000-{n:012d}", "ts": 1000 * n, "src": "com.example.app",
            "content": f"entry {n}", **fields}


A = entry(1, tags=["x", "y"], type="note", emb=[1.0, 0.0])
B = entry(2, tags=["x"], type="fact", emb=[0.0, 1.0])
C = entry(3, tags=["z"])
LINES = (A, B, C)
SENT_OPEN = entry(9, tags=["Mixed"])  # an upper-case tag: an open class (E36)
UPPER = entry(8, id="0A0B0C0D-0000-4000-8000-00000000000E")
LOCKS = ("writer_waits_for_lock", "writer_lock_every_content")
STALE_CHECKS = ("writer_stale_lock", "writer_after_killed_writer", "writer_lock_every_content")
WRITES = ("writer_appends_every_class", "writer_updates_every_class")


def queried(query: dict[str, Any], name: str = "") -> readings.Queried:
    return readings.Queried(LINES, query, name)


def answered(*entries: dict[str, Any]) -> readings.Answered:
    return readings.Answered(True, entries)


def odd(point: str, name: str, query: dict[str, Any], param: str, example: readings.Answered, wrong: readings.Answered) -> Reading:
    return Reading(point, name, meets=readings.odd_met(point, name), predicts=readings.odd_reading(name), checks=("query_every_parameter_pair",),
                   example=(Asked(readings.ODD_VALUE, queried(query, param)), example), wrong=wrong)


def delete_form(kind: str) -> Reading:
    name = f"appends {kind}"
    return Reading("E1", name, meets=at(readings.DELETED), predicts=lambda q, a: a.appended and kind in a.kinds,
                   checks=("writer_delete_keeps_foreign",), example=(Asked(readings.DELETED), readings.Deletion(True, frozenset({kind}))),
                   wrong=readings.Deletion(True, frozenset({"a line of no known form"})))


TABLE = ReadingTable([
    # E1: the tombstone form a reader honours (the one tried), and the form a writer deletes by
    *(Reading("E1", form, meets=at(readings.HONOURED, form), predicts=lambda q, gone: gone is True, accepted=readings.form_allowed(form),
              checks=("tombstone_form", "model"), example=(Asked(readings.HONOURED, form), True), wrong=False)
      for form in readings.TOMBSTONE_FORMS),
    delete_form(readings.TYPE_TOMBSTONE_LINE), delete_form(readings.DELETED_FLAG_LINE),
    Reading("E1", "rewrites the file", meets=at(readings.DELETED), predicts=lambda q, a: not a.appended,
            checks=("writer_delete_keeps_foreign",), example=(Asked(readings.DELETED), readings.Deletion(False)),
            wrong=readings.Deletion(True, frozenset({"a line of no known form"}))),
    # E13: a rewrite keeps or drops a line that is not JSON (every answer fits one: the byte comparison judges the rest)
    Reading("E13", "a rewrite keeps a corrupt line", meets=at(readings.REWRITTEN), predicts=lambda q, kept: kept is True,
            checks=("writer_delete_keeps_foreign",), example=(Asked(readings.REWRITTEN), True)),
    Reading("E13", "a rewrite drops a corrupt line", meets=at(readings.REWRITTEN), predicts=lambda q, kept: kept is False,
            checks=("writer_delete_keeps_foreign",), example=(Asked(readings.REWRITTEN), False)),
    # E2: an append past a stale lock
    Reading("E2", readings.TAKES_OVER, meets=at(readings.STALE), predicts=lambda q, a: a.acknowledged is True, checks=STALE_CHECKS,
            example=(Asked(readings.STALE), readings.Stale(True, True)), wrong=readings.Stale(False, True)),
    Reading("E2", readings.GIVES_UP, meets=at(readings.STALE), predicts=lambda q, a: a.acknowledged is False and not a.changed,
            accepted=readings.takeover_optional, checks=STALE_CHECKS, example=(Asked(readings.STALE), readings.Stale(False)),
            wrong=readings.Stale(False, True)),
    Reading("E2", readings.WAITS, meets=at(readings.STALE), predicts=lambda q, a: a.acknowledged is None, accepted=readings.takeover_optional,
            checks=STALE_CHECKS, example=(Asked(readings.STALE), readings.Stale(None)), wrong=readings.Stale(False, True)),
    # E6: a write while another app holds a fresh lock
    Reading("E6", readings.WAITS_HELD, meets=at(readings.HELD), predicts=lambda q, a: not a.returned, checks=LOCKS,
            example=(Asked(readings.HELD), readings.Held(False, True)), wrong=readings.Held(True, True)),
    Reading("E6", readings.GIVES_UP_HELD, meets=at(readings.HELD), predicts=lambda q, a: a.returned and not a.acknowledged and a.unchanged,
            checks=LOCKS, example=(Asked(readings.HELD), readings.Held(True, False)), wrong=readings.Held(True, False, unchanged=False)),
    # E3: equal ts (given: the two lines' contents; answer: the contents the view shows for the id)
    Reading("E3", "the later line wins", meets=at(readings.TIE), predicts=lambda q, shown: tuple(shown) == (q.given[1],),
            checks=("reader_equal_ts_tie", "model"), example=(Asked(readings.TIE, ("first", "second")), ("second",)),
            wrong=("first", "second")),
    Reading("E3", "the earlier line wins", meets=at(readings.TIE), predicts=lambda q, shown: tuple(shown) == (q.given[0],),
            accepted=lambda option: option("ts_tie") != "later-line", checks=("reader_equal_ts_tie", "model"),
            example=(Asked(readings.TIE, ("first", "second")), ("first",)), wrong=("neither",)),
    # E8: a newer major (answer: (answered, the newer line shown))
    Reading("E8", "refuses the file", meets=at(readings.NEWER_MAJOR), predicts=lambda q, a: not a[0],
            checks=("reader_newer_major_refused",), example=(Asked(readings.NEWER_MAJOR), (False, False)), wrong=(True, True)),
    Reading("E8", "leaves the line out", meets=at(readings.NEWER_MAJOR), predicts=lambda q, a: a[0] and not a[1],
            checks=("reader_newer_major_refused",), example=(Asked(readings.NEWER_MAJOR), (True, False)), wrong=(True, True)),
    # E14: who picks the id (given: the id handed; answer: the id the reply reports, None for none)
    Reading("E14", "the writer keeps the id it is given", meets=at(readings.APPEND_REPLY),
            predicts=lambda q, reported: reported is None or reported == q.given, checks=("written_id",),
            example=(Asked(readings.APPEND_REPLY, A["id"]), A["id"])),
    Reading("E14", "the writer picks its own id and reports it", meets=at(readings.APPEND_REPLY),
            predicts=lambda q, reported: isinstance(reported, str) and reported != q.given, checks=("written_id",),
            example=(Asked(readings.APPEND_REPLY, A["id"]), B["id"])),
    # E36: an open value class appended or updated (given: the line the writer is asked for)
    Reading("E36", f"an open class {readings.AS_GIVEN}", meets=at(readings.OPEN_CLASS), predicts=readings.open_class_done(readings.AS_GIVEN), checks=WRITES,
            example=(Asked(readings.OPEN_CLASS, SENT_OPEN), readings.Written(True, (dict(SENT_OPEN),))), wrong=readings.Written(True, ())),
    Reading("E36", f"an open class {readings.REFUSED}", meets=at(readings.OPEN_CLASS), predicts=readings.open_class_done(readings.REFUSED), checks=WRITES,
            example=(Asked(readings.OPEN_CLASS, SENT_OPEN), readings.Written(False, ())), wrong=readings.Written(True, ())),
    Reading("E36", f"an open class {readings.REPAIRED}", meets=at(readings.OPEN_CLASS), predicts=readings.open_class_done(readings.REPAIRED), checks=WRITES,
            example=(Asked(readings.OPEN_CLASS, SENT_OPEN), readings.Written(True, (dict(SENT_OPEN, tags=["mixed"]),))),
            wrong=readings.Written(True, (dict(SENT_OPEN, content=5),))),
    # E65: the version a writer writes for an entry handed with another minor (given: the version sent; every
    # answer fits one: another major is not "as given", E36 and the valid classes judge it)
    Reading("E65", readings.OWN_VERSION, meets=at(readings.VERSION), predicts=lambda q, written: written != q.given,
            checks=("writer_appends_every_class",), example=(Asked(readings.VERSION, "1.1"), "1.0")),
    Reading("E65", readings.KEEPS_VERSION, meets=at(readings.VERSION), predicts=lambda q, written: written == q.given,
            checks=("writer_appends_every_class",), example=(Asked(readings.VERSION, "1.1"), "1.1")),
    # E64: the line a BOM or a missing last newline puts at risk (answer: the view)
    Reading("E64", readings.LINE_READ, meets=at(readings.AT_RISK), predicts=lambda q, shown: readings.view_fits(q.given.lines, shown),
            checks=("file_every_line_form",), example=(Asked(readings.AT_RISK, readings.AtRisk((A, B), B["id"])), [A, B]), wrong=[]),
    Reading("E64", readings.LINE_LEFT_OUT, meets=at(readings.AT_RISK),
            predicts=lambda q, shown: readings.view_fits(q.given.lines, shown, absent=q.given.optional),
            checks=("file_every_line_form",), example=(Asked(readings.AT_RISK, readings.AtRisk((A, B), B["id"])), [A]), wrong=[B]),
    # E66: an upper-case UUID id (answer: returned exactly as written; every answer found fits one, E66's errata)
    Reading("E66", readings.UUID_AS_WRITTEN, meets=at(readings.UPPER_UUID), predicts=lambda q, as_written: as_written is True,
            checks=("reader_returns_every_valid_class",), example=(Asked(readings.UPPER_UUID, UPPER["id"]), True)),
    Reading("E66", readings.UUID_FOLDED, meets=at(readings.UPPER_UUID), predicts=lambda q, as_written: as_written is False,
            checks=("reader_returns_every_valid_class",), example=(Asked(readings.UPPER_UUID, UPPER["id"]), False)),
    # E60: a query carrying near (valid): refused, similar vectors returned, or near ignored
    Reading("E60", readings.SEMANTIC_REFUSED, meets=at(readings.NEAR_ASKED), predicts=lambda q, a: not a.ok,
            checks=("query_every_parameter_pair",), example=(Asked(readings.NEAR_ASKED, queried({"near": [1.0, 0.0]})), readings.Answered(False)),
            wrong=answered(C)),
    *(Reading("E60", near, meets=at(readings.NEAR_ASKED), predicts=lambda q, a, n=near: any(p == n for _, p in readings.fitting(q.given, a)),  # type: ignore[misc]
              checks=("query_every_parameter_pair",), example=(Asked(readings.NEAR_ASKED, queried({"near": [1.0, 0.0]})), shown),
              wrong=answered(C))
      for near, shown in ((readings.SIMILAR, answered(A)),)),
    Reading("E60", readings.NEAR_IGNORED, meets=lambda q: at(readings.NEAR_ASKED)(q) or readings.odd_met("E60", readings.NEAR_IGNORED)(q),
            predicts=lambda q, a: (readings.odd_reading(readings.NEAR_IGNORED)(q, a) if q.situation == readings.ODD_VALUE
                                   else any(p == readings.NEAR_IGNORED for _, p in readings.fitting(q.given, a))),
            checks=("query_every_parameter_pair",), example=(Asked(readings.NEAR_ASKED, queried({"near": [1.0, 0.0]})), answered(A, B, C)),
            wrong=answered(C), more=((Asked(readings.ODD_VALUE, queried({"near": []}, "near")), answered(A, B, C), answered(C)),)),
    # E62: several tags (valid)
    *(Reading("E62", tags, meets=at(readings.TAGS_ASKED), predicts=lambda q, a, t=tags: any(p == t for p, _ in readings.fitting(q.given, a)),  # type: ignore[misc]
              checks=("query_every_parameter_pair",), example=(Asked(readings.TAGS_ASKED, queried({"tags": ["x", "y"]})), shown),
              wrong=answered(A, B, C))
      for tags, shown in ((readings.EVERY_TAG, answered(A)), (readings.ANY_TAG, answered(A, B)))),
    # E61 (and E60 for near): values the spec is silent on, each reading as the model reads it
    odd("E61", "refused", {"tags": []}, "tags", readings.Answered(False), answered(C)),
    odd("E61", "read as absent", {"tags": []}, "tags", answered(A, B, C), answered(C)),
    odd("E61", "matching nothing", {"tags": []}, "tags", answered(), answered(C)),
    odd("E61", "compared as the number", {"start": "1500"}, "start", answered(B, C), answered(A)),
    odd("E61", "read as one tag", {"tags": "x"}, "tags", answered(A, B), answered(C)),
    odd("E61", "exact", {"tags": ["X"]}, "tags", answered(), answered(C)),
    odd("E61", "case-insensitive", {"tags": ["X"]}, "tags", answered(A, B), answered(C)),
    odd("E60", "refused", {"near": []}, "near", readings.Answered(False), answered(C)),
    odd("E60", "read as absent", {"near": []}, "near", answered(A, B, C), answered(C)),
    odd("E60", "matching nothing", {"near": []}, "near", answered(), answered(C)),
])


def observe(ctx: Any, point: str, request: Asked, answer: Any, **how: Any) -> Observation:
    """What the target did at an open point, judged and recorded by the table's rows (core ReadingTable.judge)."""
    return TABLE.judge(ctx, point, request, answer, ctx.option, **how)
