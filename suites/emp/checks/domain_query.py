"""The read operations' parameters drawn from the domain table (suites/emp/domain.json): start, end, tags,
type, text and near, each alone and pairwise with every other and with every write history of the file
(appended, updated, deleted by a tombstone, deleted by a rewrite), planned by the covering-array
generator (`ci` each valid class once, `default` every pair); then each class the spec is silent on
alone. Every answer is judged by the model (suites/emp/model.py): the entries the query must, may and
must not return, from the resolved view (errata E9). An answer holding lines a newer line of their id
supersedes, and wrong besides, is two failures, each named by its cause: the superseded lines (explained by
emp.reader_newest_ts_wins when that check established it) and the rest of the answer judged without them; a
value naming a tag, a type or a bound answered as if it were not given says so, with its sentence (E61)."""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.readings import Asked
from memconform.core.results import Failure
from memconform.kit import domain
from memconform.suites.emp import model, readings, table
from memconform.suites.emp.checks.common import OTHER, call, entry, new_file, tombstone_form
from memconform.suites.emp.deviations import NEWEST_NOT_RESOLVED
from memconform.suites.emp.readings import problems_under, tag_readings
from memconform.suites.emp.suite import SUITE

COMBO = "query_parameters"
NEWEST_SENTENCE = "Update: Append new entry with same id (newer ts takes precedence)"
# the access pattern a value naming a bound, a tag or a type is asked under: a reader answering as if it were
# not given returns what the sentence excludes (errata E61: only null, [] and "" name nothing)
FILTER_SENTENCES = {"start": "Filter by Time: Read entries where ts >= startTime && ts <= endTime",
                    "end": "Filter by Time: Read entries where ts >= startTime && ts <= endTime",
                    "tags": "Filter by Tags: Read entries where tags includes specified tag(s)",
                    "type": "Filter by Type: Read entries where type matches specified type"}
T0 = 1701234560000  # entry i has ts T0 + 1000 i: the table's bounds name these
SIZE = 14
TYPES = ("preference", "fact", "event", "conversation", "note", "com.example.custom", None)
TAGS = ("ui", "theme", "person:john")
CONTENTS = ("User likes Coffee in the morning", "Meeting at the CAFÉ on Friday", "Prefers dark mode",
            "coffeehouse notes, café", "rocket 🚀 launch at noon")
VECTORS = ([1.0, 0.0, 0.0], [0.0, 1.0, 0.0], None)


def data_set(ctx: CheckContext) -> list[dict[str, Any]]:
    """Fourteen entries whose ts, type, tags, content and vector vary independently, so that every class
    of every parameter both matches some entries and misses others."""
    out = []
    for i in range(SIZE):
        e = entry(ctx, f"q{i}", ts=T0 + 1000 * i, content=CONTENTS[i % len(CONTENTS)])
        if TYPES[i % len(TYPES)] is not None:
            e["type"] = TYPES[i % len(TYPES)]
        tags = [t for bit, t in enumerate(TAGS) if i & (1 << bit)] + (["calendar"] if i >= 8 else [])
        if i:
            e["tags"] = tags
        vector = VECTORS[i % 3]
        if vector is not None:
            e["emb"] = list(vector)
        out.append(e)
    return out


def witness(ctx: CheckContext, query: dict[str, Any]) -> dict[str, Any] | None:
    """An entry every filter of the query keeps (its content holds the text in the other case), or None
    when no entry can match (start after end)."""
    start, end = query.get("start"), query.get("end")
    numbers = [v for v in (start, end) if isinstance(v, (int, float))]
    candidates = [T0 + 5000, *numbers, *[math.ceil(v) for v in numbers], *[math.floor(v) for v in numbers]]
    fits = [t for t in candidates if (not isinstance(start, (int, float)) or t >= start) and (not isinstance(end, (int, float)) or t <= end)]
    if not fits:
        return None
    e = entry(ctx, "witness", ts=int(fits[0]), content=f"witness {str(query.get('text') or '').swapcase()} here")
    if isinstance(query.get("tags"), list):
        e["tags"] = list(query["tags"]) + ["extra"]
    if isinstance(query.get("type"), str):
        e["type"] = query["type"]
    if isinstance(query.get("near"), list) and query["near"]:
        e["emb"] = list(query["near"])
    return e


def near_misses(ctx: CheckContext, query: dict[str, Any], match: dict[str, Any]) -> list[dict[str, Any]]:
    """Copies of the witness that each break one filter of the query (a query applying only some of its
    filters returns them)."""
    out = []
    for name, broken in (("start", {"ts": match["ts"] - 1}), ("end", {"ts": match["ts"] + 1}),
                         ("tags", {"tags": (match.get("tags") or [])[1:]}), ("type", {"type": "x-other-type"}),
                         ("text", {"content": "witness without it"}), ("near", {"emb": None})):
        if given(query, name):
            miss = {**match, **broken, "id": entry(ctx, "miss")["id"]}
            out.append({k: v for k, v in miss.items() if v is not None})
    return out


def given(query: dict[str, Any], name: str) -> bool:
    """Does the query filter by this parameter (a value of its type, not empty)?"""
    value = query.get(name)
    kinds: dict[str, type | tuple[type, ...]] = {"start": (int, float), "end": (int, float), "tags": list, "type": str,
                                                  "text": str, "near": list}
    return isinstance(value, kinds[name]) and not isinstance(value, bool) and value not in ([], "")


def with_history(entries: list[dict[str, Any]], extra: list[dict[str, Any]], history: str, form: str | None) -> model.File:
    """The data set and the row's witness and near misses (`extra`: witness, second witness, misses)
    after a write history (the table's history.writes): every fourth entry of the data set from the
    second, and the second witness, updated (a newer line changing content, tags and type; the witness's
    newer line breaks a filter, and the last near miss's newer line is the witness's fields), or deleted
    by a tombstone of the form the reader honours, or by a rewrite without it."""
    file = model.File()
    for e in [*entries, *extra]:
        file = file.append(e)
    touched = [e for i, e in enumerate(entries) if i % 4 == 1] + extra[1:2]
    for i, e in enumerate(touched):
        ts = e["ts"] + 500 if e in entries else e["ts"] + 1
        if history == "updated":
            tags = ["calendar"] if "ui" in e.get("tags", []) else ["ui", "theme"]
            file = file.update(e["id"], {"content": CONTENTS[(i + 2) % len(CONTENTS)], "tags": tags,
                                         "type": TYPES[(i + 3) % len(TYPES)] or "note"}, ts, base=e)
        elif history == "deleted_tombstone" and form is not None:
            file = file.delete_forms(e["id"], ts, OTHER, model.Readings(tombstone=form))[0]
        elif history == "deleted_rewrite":
            file = file.delete_forms(e["id"], ts, OTHER)[-1]
    if history == "updated" and len(extra) > 2:
        last, match = extra[-1], extra[0]
        fields: dict[str, Any] = {k: match[k] for k in ("content", "tags", "type", "emb") if k in match}
        file = file.update(last["id"], fields, max(last["ts"], match["ts"]) + 1, base=last)
    return file


def row_lines(ctx: CheckContext, entries: list[dict[str, Any]], query: dict[str, Any], history: str,
              form: str | None) -> tuple[Any, ...]:
    """The file a row's query reads: the data set, two witnesses and the near misses, after the history."""
    match = witness(ctx, query)
    extra = [] if match is None else [match, dict(match, id=entry(ctx, "witness2")["id"]), *near_misses(ctx, query, match)]
    return with_history(entries, extra, history, form).lines


def request(row: dict[str, domain.ValueClass]) -> tuple[dict[str, Any], str]:
    """The query parameters of a row (absent ones left out) and its write history."""
    query: dict[str, Any] = {}
    for param, vc in row.items():
        if param.startswith("query.") and vc.value() is not domain.ABSENT:
            query[param.split(".", 1)[1]] = vc.value()
    history = row.get("history.writes")
    return query, str(history.value()) if history is not None else "appended"


def superseded_flags(lines: tuple[Any, ...], answer: list[Any]) -> list[bool]:
    """For each entry of the answer: does a newer line of the same id (a greater ts in the file) supersede it?"""
    newest: dict[Any, float] = {}
    for line in lines:
        if isinstance(line, dict) and is_number(line.get("ts")):
            newest[line.get("id")] = max(newest.get(line.get("id"), -math.inf), float(line["ts"]))
    return [isinstance(e, dict) and is_number(e.get("ts")) and float(e["ts"]) < newest.get(e.get("id"), -math.inf)
            for e in answer]


def without_superseded(lines: tuple[Any, ...], answer: list[Any]) -> list[Any] | None:
    """The answer without the lines a newer line of the same id supersedes, or None when it held none: what a
    reader whose one fault is not resolving ids would have answered."""
    flags = superseded_flags(lines, answer)
    return [e for e, gone in zip(answer, flags, strict=True) if not gone] if any(flags) else None


def superseded_failure(ctx: CheckContext, label: str, lines: tuple[Any, ...], answer: list[Any]) -> Failure:
    """The superseded lines of an answer as a failure of their own, named by their cause (the reader does not
    resolve an id to its newest line), explained by the check that established it when one did: an answer
    that is also wrong for another reason says that reason in a failure of its own, never mixed with this."""
    gone = [e for e, flag in zip(answer, superseded_flags(lines, answer), strict=True) if flag]
    failure = Failure(f"{label}: the answer holds {len(gone)} line(s) a newer line of the same id supersedes",
                      [f"id {e.get('id')!r} at ts {e.get('ts')!r}" for e in gone[:4]],
                      f"only each id's newest line (\"{NEWEST_SENTENCE}\")", "$", f"{len(gone)} superseded lines")
    return established.explained(ctx, failure, NEWEST_NOT_RESOLVED)


def fits_without_superseded(lines: tuple[Any, ...], query: dict[str, Any], form: str | None, answer: list[Any]) -> bool:
    """Would the answer be one the model allows once superseded lines are taken out of it?"""
    kept = without_superseded(lines, answer)
    without = {k: v for k, v in query.items() if k != "near"}
    return kept is not None and any(not problems_under(lines, q, pins, kept) for pins in tag_readings(query, form).values()
                                    for q in ([query, without] if "near" in query else [query]))


def is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def judge_valid(ctx: CheckContext, label: str, lines: tuple[Any, ...], query: dict[str, Any], form: str | None,
                reply: Any) -> Iterator[Failure]:
    """A query of valid parameters: answered, with the entries the model allows under some reading of
    its open points (E62 several tags; E60 near: also refused, or near ignored). The readings the answer
    fits are recorded."""
    asked = readings.Queried(lines, query, form=form)
    if "near" in query and not reply.ok:
        table.observe(ctx, "E60", Asked(readings.NEAR_ASKED, asked), readings.Answered(False))
        return
    if not reply.ok:
        yield Failure(f"{label}: a query of valid parameters was refused", reply.raw[:200], "the matching entries", "$")
        return
    answer = reply.accepted_json(list, "query")
    fits = readings.fitting(asked, readings.Answered(True, tuple(answer)))
    if not fits:
        names = {f"{tags}, {near}" for tags in tag_readings(query, form) for near in readings.near_readings(query)}
        reasons = problems_under(lines, query, tag_readings(query, form)[readings.EVERY_TAG], answer)
        expected = "the model's entries (suites/emp/model.py) under any reading of " + "; ".join(sorted(names))
        failure = Failure(f"{label}: the answer is not what the query must return", reasons[:4], expected, "$",
                          f"{len(reasons)} problems")
        kept = without_superseded(lines, answer)
        if kept is None:
            yield failure
        elif fits_without_superseded(lines, query, form, answer):
            yield established.explained(ctx, failure, NEWEST_NOT_RESOLVED)
        else:  # superseded lines beside a fault of its own: each named by its cause
            yield superseded_failure(ctx, label, lines, answer)
            rest = problems_under(lines, query, tag_readings(query, form)[readings.EVERY_TAG], kept)
            yield Failure(failure.title, rest[:4], expected, "$",
                          f"{len(rest)} problems, the answer's superseded lines set aside (a failure of their own)")
        return
    # the readings an answer fits are recorded when it tells them apart (an answer every reading gives, say an
    # empty one, says nothing about which the target took)
    shown = readings.Answered(True, tuple(answer))
    if "near" in query:
        table.observe(ctx, "E60", Asked(readings.NEAR_ASKED, asked), shown, telling=True)
    if len(query.get("tags") or []) > 1:
        table.observe(ctx, "E62", Asked(readings.TAGS_ASKED, asked), shown, telling=True)


def judge_odd(ctx: CheckContext, label: str, lines: tuple[Any, ...], query: dict[str, Any], name: str, point: str,
              form: str | None, reply: Any) -> Iterator[Failure]:
    """A value the spec is silent on: the answer must fit one reading (E61, E60 for near): refused, or
    the entries the model returns for the query that reading reads it as."""
    answer = reply.accepted_json(list, "query") if reply.ok else None
    seen = table.observe(ctx, point, Asked(readings.ODD_VALUE, readings.Queried(lines, query, name, form)),
                         readings.Answered(bool(reply.ok), tuple(answer or ())), shown=answer if reply.ok else reply.raw[:200],
                         title=f"{label}: the answer fits no reading of a value the spec is silent on")
    if not seen.failure:
        return
    kept = without_superseded(lines, answer) if answer is not None else None
    if answer is None or kept is None:
        yield ignored_named(seen.failure, lines, query, name, form, answer)
        return
    mended = any(read_as != model.REFUSED and not problems_under(lines, read_as, model.Readings(tombstone=form or "either",
                                                                                                case=pinned.case), kept)
                 for read_as, pinned in model.odd_value_readings(query, name).values())
    if mended:
        yield established.explained(ctx, seen.failure, NEWEST_NOT_RESOLVED)
        return
    # superseded lines beside a fault of its own: each named by its cause
    yield superseded_failure(ctx, label, lines, answer)
    rest = Failure(seen.failure.title, kept, seen.failure.expected, seen.failure.path,
                   f"the answer's {len(answer) - len(kept)} superseded line(s) set aside (a failure of their own)")
    yield ignored_named(rest, lines, query, name, form, kept)


def ignored_named(failure: Failure, lines: tuple[Any, ...], query: dict[str, Any], name: str, form: str | None,
                  answer: list[Any] | None) -> Failure:
    """A value naming a bound, a tag or a type answered as if it were not given: no reading (E61 reads as absent
    only null, an empty list or an empty string, which name nothing); the failure says so, with the sentence the
    answer breaks. Any other failure is returned as it is."""
    sentence = FILTER_SENTENCES.get(name)
    value = query.get(name)
    if sentence is None or answer is None or value is None or value == [] or value == "":
        return failure
    without = {k: v for k, v in query.items() if k != name}
    if problems_under(lines, without, model.Readings(tombstone=form or "either"), answer):
        return failure
    failure.title += f" (answered as if {name} were not given)"
    why = (f"{json.dumps(value, ensure_ascii=False)[:60]} names a {'bound' if name in ('start', 'end') else name.rstrip('s')}, and "
           f"the answer holds entries outside it: a filter ignored is no reading (errata E61), \"{sentence}\"")
    failure.detail = why + (f"; {failure.detail}" if failure.detail else "")
    return failure


@SUITE.check(sweep=True, level="reader", section="Read Operations", keyword="MUST",
              sentence="Filter by Tags: Read entries where tags includes specified tag(s)")
def query_every_parameter_pair(ctx: CheckContext) -> Iterator[Failure]:
    """query: the valid classes of start, end, tags, type, text and near and the write history of the
    file in a covering array (ci: each class once; default: every pair), each answer compared with the
    model's; then each other class alone on the updated data set: a value matching nothing must return
    nothing, a value the spec is silent on must fit one reading (recorded)."""
    table = domain.required("emp")
    ledger = domain.ledger(ctx)
    form = tombstone_form(ctx)
    entries = data_set(ctx)
    for row in domain.plan(table, COMBO, ctx.profile.name):
        query, history = request(row)
        if history == "deleted_tombstone" and form is None:
            ctx.note("the reader honours no tombstone form the harness knows: that history is a rewrite here")
            history = "deleted_rewrite"
        lines = row_lines(ctx, entries, query, history, form)
        reply = call(ctx, "query", {"path": new_file(ctx, list(lines)), **query})
        yield from judge_valid(ctx, f"query {query} after {history}", lines, query, form, reply)
        ledger.judge_row(COMBO, row)
    for param in table.combination(COMBO)["parameters"]:
        for vc in (v for v in table.field(param).classes if v.expect != "valid" or not v.combine):
            query, history = request({param: vc})
            lines = row_lines(ctx, entries, query if vc.expect == "valid" else {}, "updated", form)
            reply = call(ctx, "query", {"path": new_file(ctx, list(lines)), **query})
            label = f"query {query} ({vc.key})"
            if vc.expect == "valid":
                yield from judge_valid(ctx, label, lines, query, form, reply)
            else:
                name = param.split(".", 1)[1]
                yield from judge_odd(ctx, label, lines, query, name, "E60" if name == "near" else "E61", form, reply)
            ledger.judge([vc.key])
