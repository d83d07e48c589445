"""Reader checks: the resolved view of a file the harness wrote, and the query filters."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.readings import Asked
from memconform.core.results import ControlRefused, Failure, HarnessError, Inconclusive
from memconform.kit import domain
from memconform.suites.emp import format as emp
from memconform.suites.emp import model, readings, table
from memconform.suites.emp.checks.common import (
    BASE_TS,
    OTHER,
    TOMBSTONE_FORMS,
    by_id,
    call,
    control_without_bad_lines,
    despite_bad_lines,
    entry,
    new_file,
    tombstone_form,
    view,
)
from memconform.suites.emp.deviations import NEWEST_NOT_RESOLVED
from memconform.suites.emp.suite import SUITE


@SUITE.check(level="reader", section="Write Operations", keyword="MUST",
              sentence="Update: Append new entry with same id (newer ts takes precedence)")
def reader_newest_ts_wins(ctx: CheckContext) -> Iterator[Failure]:
    new = entry(ctx, "newer", ts=1701234569000)
    old = dict(new, ts=1701234568000, content=ctx.unique("older"))
    want = the_one_answer([new, old], new["id"])
    got = [e for e in view(ctx, new_file(ctx, [new, old])) if isinstance(e, dict) and e.get("id") == new["id"]]
    contents = [e.get("content") for e in got]
    if len(got) != 1:
        if old["content"] in contents:
            established.establish(ctx, NEWEST_NOT_RESOLVED, "the reader returns lines a newer line of the same id supersedes")
        yield Failure(f"one id with two lines resolved to {len(got)} entries", contents, "exactly one, the newer ts",
                      f"id {new['id']}")
    elif contents[0] == old["content"]:
        established.establish(ctx, NEWEST_NOT_RESOLVED, "the reader returns lines a newer line of the same id supersedes")
        yield Failure("an older line written later won over the newer ts", got[0], want, f"id {new['id']}")
    elif contents[0] != (want or {}).get("content"):
        yield Failure("the entry shows content neither line has", got[0], want, f"id {new['id']}")


def the_one_answer(lines: list[dict[str, Any]], entry_id: str, form: str = "either") -> dict[str, Any] | None:
    """The model's only acceptable entry for `entry_id` in a file of `lines` (None: the id absent); the
    harness wrote these files so that no reading leaves a choice."""
    options = model.view_answers(lines, model.Readings(tombstone=form))[entry_id]
    if len(options) != 1:
        raise HarnessError(f"the file leaves {len(options)} answers for id {entry_id}; the check wants one")
    return options[0]


@SUITE.check(level="reader", section="Write Operations", keyword="MUST",
              sentence="Delete: Append tombstone entry or rewrite file without deleted entry")
def reader_tombstone_deletes(ctx: CheckContext) -> Iterator[Failure]:
    """A tombstone line (either form of errata E1 by default) removes its id from the view."""
    if tombstone_form(ctx) is None:
        forms = TOMBSTONE_FORMS if ctx.option("tombstone") == "either" else (ctx.option("tombstone"),)
        yield Failure("an entry deleted by a tombstone line is still in the view", "still there",
                      f"absent under tombstone form {' or '.join(forms)}", readings=forms)


@SUITE.check(level="reader", section="Write Operations", keyword="MUST",
              sentence="Delete: Append tombstone entry or rewrite file without deleted entry")
def reader_deleted_stays_deleted(ctx: CheckContext) -> Iterator[Failure]:
    """An older update of a deleted id, appended after the tombstone (say, synced late), does not revive it."""
    form = tombstone_form(ctx)
    if form is None:
        raise Inconclusive("the reader honours no tombstone form the harness knows (emp.reader_tombstone_deletes)")
    gone = entry(ctx, "deleted")
    tomb = emp.tombstone(gone["id"], gone["ts"] + 2000, OTHER, form)
    late = dict(gone, ts=gone["ts"] + 1000, content=ctx.unique("stale-update"))
    got = by_id(view(ctx, new_file(ctx, [gone, tomb, late])))
    if the_one_answer([gone, tomb, late], gone["id"], form) is None and gone["id"] in got:
        yield Failure("an update older than the tombstone, written after it, brought the deleted entry back",
                      got[gone["id"]], "absent (the tombstone has the newest ts)", f"id {gone['id']}")


TOMBSTONE_ORDERED = "E4: a tombstone is ordered by its ts like any other line"


@SUITE.check(level="reader", section="Write Operations", keyword="MUST",
              sentence="Update: Append new entry with same id (newer ts takes precedence)")
def reader_newer_after_tombstone(ctx: CheckContext) -> Iterator[Failure]:
    """A line of a deleted id with a ts newer than its tombstone (the entry written again after the
    delete) is the id's newest line, so it is in the view (errata E4: the two ways to delete agree;
    after a rewrite that newer line would be the only one left)."""
    form = tombstone_form(ctx)
    if form is None:
        raise Inconclusive("the reader honours no tombstone form the harness knows (emp.reader_tombstone_deletes)")
    gone = entry(ctx, "deleted-then-rewritten")
    again = dict(gone, ts=gone["ts"] + 2000, content=ctx.unique("written-again"))
    lines = [gone, emp.tombstone(gone["id"], gone["ts"] + 1000, OTHER, form), again]
    want = the_one_answer(lines, gone["id"], form)
    got = by_id(view(ctx, new_file(ctx, lines)))
    if got.get(gone["id"], {}).get("content") != (want or {}).get("content"):
        yield Failure("a line newer than the tombstone did not take precedence: the id stays deleted",
                      got.get(gone["id"]), want, f"id {gone['id']}", readings=(TOMBSTONE_ORDERED,))


@SUITE.check(level="reader", section="Write Operations", keyword="MUST",
              sentence="Update: Append new entry with same id (newer ts takes precedence)")
def reader_equal_ts_tie(ctx: CheckContext) -> Iterator[Failure]:
    """Two lines of one id with equal ts: exactly one wins, with one line's content (errata E3);
    under emp.ts_tie=later-line, the later line."""
    first = entry(ctx, "tie-first")
    second = dict(first, content=ctx.unique("tie-second"), src="com.example.second")
    got = [e for e in view(ctx, new_file(ctx, [first, second])) if isinstance(e, dict) and e.get("id") == first["id"]]
    yield from tie_verdict(ctx, first, second, [e.get("content") for e in got])


def tie_verdict(ctx: CheckContext, first: dict[str, Any], second: dict[str, Any], contents: list[Any]) -> Iterator[Failure]:
    """The contents the view shows for one id written twice with equal ts: exactly one, one of the two lines'
    (the model), and which line won judged by the table's E3 readings (recorded)."""
    either = [e["content"] for e in model.view_answers([first, second])[first["id"]] if e is not None]
    if len(contents) != 1:
        failure = Failure(f"one id with two equal-ts lines resolved to {len(contents)} entries", contents, "exactly one",
                          f"id {first['id']}")
        # both lines, as written: what a reader resolving no id returns (reader_newest_ts_wins named it)
        every_line = sorted(map(str, contents)) == sorted([first["content"], second["content"]])
        yield established.explained(ctx, failure, NEWEST_NOT_RESOLVED) if every_line else failure
    elif contents[0] not in either:
        yield Failure("on equal ts the view shows content neither line has", contents[0], either, f"id {first['id']}")
    else:
        pinned = ctx.option("ts_tie") == "later-line"
        seen = table.observe(ctx, "E3", Asked(readings.TIE, (first["content"], second["content"])), tuple(contents),
                             shown=contents[0], title="on equal ts the earlier line won", path=f"id {first['id']}",
                             pinned=("later-line",) if pinned else ())
        if seen.failure:
            yield seen.failure


@SUITE.check(level="reader", section="Storage Format: JSONL", keyword="MUST",
              sentence="Resilient: Corruption affects only individual lines, not entire file")
def reader_corrupt_line_isolated(ctx: CheckContext) -> Iterator[Failure]:
    """Lines that are torn, not JSON, or not valid UTF-8 cost only themselves. The same file without
    them must be read first (the control): then an error or a refusal on the corrupt file is the rule
    broken, not the target erroring."""
    a, b, c = entry(ctx, "before"), entry(ctx, "after"), entry(ctx, "after-bad-bytes")
    bad_bytes = b'{"v":"1.0","id":"' + str(c["id"]).encode() + b'x","ts":1,"src":"com.a.b","content":"\xff\xfe"}'
    control_without_bad_lines(ctx, "resolve", {"path": new_file(ctx, [a, b, c])})
    path = new_file(ctx, [a, '{"v":"1.0","id":', "not json at all", bad_bytes, b, c, '{"v":"1.0","id":"trunc'])
    reply, failure = despite_bad_lines(ctx, "resolve", {"path": path}, "torn, non-JSON and non-UTF-8 lines")
    if failure is not None:
        yield failure
        return
    got = by_id(reply.accepted_json(list, "resolve"))
    for e in (a, b, c):
        if e["id"] not in got:
            yield Failure("a good line was lost next to corrupt ones", None, e, f"id {e['id']}")


@SUITE.check(level="reader", section="Required Fields", keyword="MUST", sentence="No length limit (but keep reasonable for mobile)")
def reader_long_content(ctx: CheckContext) -> Iterator[Failure]:
    """A 1 MiB content of multi-byte and astral characters is read back whole (no line-buffer limit)."""
    big = ("\u00e9\U0001F600abc" * 200_000)[: 1 << 20]
    e = entry(ctx, "long", content=big)
    got = by_id(view(ctx, new_file(ctx, [entry(ctx, "short"), e]))).get(e["id"])
    if got is None or got.get("content") != big:
        received = None if got is None else f"{len(got.get('content') or '')} characters"
        yield Failure("an entry with long content was not read back whole", received, f"{len(big)} characters",
                      f"id {e['id']}")


@SUITE.check(level="reader", section="Backward Compatibility", keyword="MUST",
              sentence="Ignore unknown fields in newer versions")
def reader_unknown_ignored(ctx: CheckContext) -> Iterator[Failure]:
    lines = [entry(ctx, "minor", v="1.7", novel={"x": 1}), entry(ctx, "custom", type="x-custom-type", meta={"z": [1]})]
    got = by_id(view(ctx, new_file(ctx, lines)))
    for e in lines:
        if e["id"] not in got or got[e["id"]].get("content") != e["content"]:
            yield Failure("an entry with unknown fields, type or newer minor was not read", got.get(e["id"]), e, f"id {e['id']}")


@SUITE.check(level="reader", section="Versioning", keyword="MUST",
              sentence="MAJOR: Breaking changes (incompatible format)")
def reader_newer_major_refused(ctx: CheckContext) -> Iterator[Failure]:
    """A line of a newer major is refused or left out (errata E8); the same file with that line at
    1.0 must first be read in full (the positive control)."""
    ok, future = entry(ctx, "v1"), entry(ctx, "v2", v="2.0")
    control = by_id(view(ctx, new_file(ctx, [ok, dict(future, v="1.0")])))
    if ok["id"] not in control or future["id"] not in control:
        raise ControlRefused("the same file with every line at v 1.0 was not read in full")
    reply = call(ctx, "resolve", {"path": new_file(ctx, [ok, future])})
    got = by_id(reply.accepted_json(list, "resolve")) if reply.ok else {}
    failure = newer_major_verdict(ctx, bool(reply.ok), got.get(future["id"]))
    if failure is not None:
        yield failure


def newer_major_verdict(ctx: CheckContext, answered: bool, shown: Any) -> Failure | None:
    """A file holding a newer-major line: refused, or read with that line left out (the table's E8 readings)."""
    return table.observe(ctx, "E8", Asked(readings.NEWER_MAJOR), (answered, shown is not None), shown=shown,
                         title="an entry of an unknown major version was read as if it were 1.x").failure


def _query(ctx: CheckContext, filters: dict[str, Any], want: list[dict[str, Any]], other: list[dict[str, Any]],
           superseded: tuple[dict[str, Any], dict[str, Any]] | None = None) -> Iterator[Failure]:
    """Query the resolved view: `want` match, `other` do not. `superseded` is (an older version that
    matches, its newer version that does not): the id must be absent. When the reader honours a
    tombstone form, an entry that matches but was deleted by a tombstone that does not is absent too
    (filtering raw lines before resolving returns both)."""
    lines: list[dict[str, Any]] = [*want, *other]
    if superseded is not None:
        lines += list(superseded)
    deleted = None
    form = tombstone_form(ctx)
    if form is None:
        ctx.note("the reader honours no tombstone form the harness knows: no deleted entry in this query")
    else:
        deleted = dict(want[0], id=entry(ctx, "x")["id"], content=want[0]["content"] + ctx.unique("deleted"))
        tomb = emp.tombstone(deleted["id"], max(e["ts"] for e in lines) + 1000, OTHER, form)
        lines += [deleted, tomb]
    got = by_id(view(ctx, new_file(ctx, lines), "query", **filters))
    # what the query must return is the model's answer (E9: from the resolved view), not restated here
    answers = model.query_answers(lines, filters, model.Readings(tombstone=form or "either"))
    sent = {e["id"]: e for e in lines}
    for i, options in answers.items():
        if None not in options and i not in got:
            yield Failure("query left out a matching entry", sorted(got, key=str), sent[i], f"id {i}",
                          detail=f"query {filters}")
        elif options == (None,) and i in got:
            yield _wrongly_returned(ctx, got[i], filters, superseded, deleted)


def _wrongly_returned(ctx: CheckContext, shown: dict[str, Any], filters: dict[str, Any],
                      superseded: tuple[dict[str, Any], dict[str, Any]] | None, deleted: dict[str, Any] | None) -> Failure:
    """The failure for an id the query must not return, named by why it must not."""
    i = shown.get("id")
    if superseded is not None and i == superseded[0]["id"] and shown.get("content") == superseded[0]["content"]:
        new = superseded[1]
        return established.explained(ctx, Failure(
            "query returned a superseded version: it filtered lines before resolving", shown,
            f"absent: the newest line of the id ({new['content']!r}, ts {new['ts']}) does not match",
            f"id {i}", detail=f"query {filters}"), NEWEST_NOT_RESOLVED)
    if deleted is not None and i == deleted["id"]:
        return Failure("query returned a deleted entry: it filtered lines before resolving", shown,
                       "absent: its tombstone is the newest line of the id", f"id {i}", detail=f"query {filters}")
    return Failure("query returned an entry that does not match", shown, "absent", f"id {i}", detail=f"query {filters}")


def versions(ctx: CheckContext, label: str, old: dict[str, Any], new: dict[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """An entry's older version (fields `old`, matching a query) and a newer one (fields `new`, not matching)."""
    first = entry(ctx, label + "-old", **old)
    return first, dict(first, content=ctx.unique(label + "-new"), **new)


@SUITE.check(level="reader", section="Read Operations", keyword="MUST",
              sentence="Filter by Time: Read entries where ts >= startTime && ts <= endTime")
def query_time(ctx: CheckContext) -> Iterator[Failure]:
    """Both bounds are inclusive: entries exactly at start and end are in, one millisecond outside is out;
    an entry whose newest version lies outside is out though an older one lies inside."""
    yield from _query(ctx, {"start": 2000, "end": 3000},
                      [entry(ctx, "at-start", ts=2000), entry(ctx, "at-end", ts=3000)],
                      [entry(ctx, "before", ts=1999), entry(ctx, "after", ts=3001)],
                      versions(ctx, "moved", {"ts": 2500}, {"ts": 3500}))


@SUITE.check(level="reader", section="Read Operations", keyword="MUST",
              sentence="Filter by Tags: Read entries where tags includes specified tag(s)")
def query_tags(ctx: CheckContext) -> Iterator[Failure]:
    yield from _query(ctx, {"tags": ["calendar"]}, [entry(ctx, "in", tags=["ui", "calendar"])],
                      [entry(ctx, "out", tags=["ui", "calendars"]), entry(ctx, "untagged")],
                      versions(ctx, "retagged", {"tags": ["calendar"]}, {"tags": ["ui"], "ts": BASE_TS + 1000}))


@SUITE.check(level="reader", section="Read Operations", keyword="MUST",
              sentence="Filter by Type: Read entries where type matches specified type")
def query_type(ctx: CheckContext) -> Iterator[Failure]:
    yield from _query(ctx, {"type": "event"}, [entry(ctx, "in", type="event")],
                      [entry(ctx, "out", type="fact"), entry(ctx, "untyped")],
                      versions(ctx, "retyped", {"type": "event"}, {"type": "fact", "ts": BASE_TS + 1000}))


def case_pairs() -> list[tuple[str, str]]:
    """(a word as the content holds it, the same word as a query asks for it) for each word of the domain
    table's valid content strings (suites/emp/domain.json) that has a non-ASCII cased letter: as written
    against upper case, and upper against lower. Only words whose case mapping is one-to-one (CAFÉ/café,
    not GRÖSSE/Größe), so any case-insensitive comparison finds them and one folding ASCII only does not."""
    table = domain.load("emp")
    if table is None:
        raise HarnessError("suites/emp/domain.json is missing (scripts/make_domain_tables.py writes it)")
    words: dict[str, str] = {}
    for vc in table.field("entry.content").classes:
        if vc.gen != "string" or vc.expect != "valid":
            continue
        for value in vc.values():
            for word in str(value).split():
                cased = any(not ch.isascii() and ch.upper() != ch.lower() for ch in word)
                if cased and word.upper().lower() == word.lower() and len(word.upper()) == len(word):
                    words.setdefault(word.casefold(), word)
    return [pair for word in words.values() for pair in ((word, word.upper()), (word.upper(), word.lower()))]


@SUITE.check(level="reader", section="Read Operations", keyword="MUST",
              sentence="Search by Content: Read entries where content contains keyword (case-insensitive)")
def query_content(ctx: CheckContext) -> Iterator[Failure]:
    word = ctx.unique("kw").lower()
    want = [entry(ctx, "in", content=f"Note about {word.upper()} here"), entry(ctx, "in-lower", content=f"x{word}y")]
    yield from _query(ctx, {"text": word}, want, [entry(ctx, "out")],
                      versions(ctx, "reworded", {"content": f"once about {word}"}, {"ts": BASE_TS + 1000}))
    for written, asked in case_pairs():  # non-ASCII letters of the domain table's strings, in the other case
        yield from _query(ctx, {"text": asked}, [entry(ctx, "in-case-pair", content=f"about {written} here")],
                          [entry(ctx, "out-case-pair")])
