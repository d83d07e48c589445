"""A writer asked to append, update and delete with every class of every field of the domain table
(suites/emp/domain.json): a valid value is written as given (an update as the model's update), an invalid
one refused or written valid, an open one any of those (the answer seen is recorded, errata E36); a
delete leaves every line no reader uses where it was."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.readings import Asked
from memconform.core.results import ControlRefused, Failure, HarnessError, SkipCheck, Unsupported
from memconform.kit import domain, domain_plan
from memconform.suites.emp import format as emp
from memconform.suites.emp import model, readings, table
from memconform.suites.emp.checks.common import by_id, call, entry, new_file, read_bytes, target_view
from memconform.suites.emp.checks.domain_common import class_lines, judge_packed
from memconform.suites.emp.checks.writing import dropped
from memconform.suites.emp.deviations import FOREIGN_LINES_DROPPED, UPDATE_AS_NEW_ID
from memconform.suites.emp.readings import as_given, new_problems, what_was_done
from memconform.suites.emp.suite import SUITE

AS_GIVEN, REFUSED, REPAIRED = readings.AS_GIVEN, readings.REFUSED, readings.REPAIRED
TAG_ALPHABET = re.compile(r"^[a-z0-9:_\-]+$")


def strict_tag_alphabet(line: dict[str, Any]) -> bool:
    """Tags are "lowercase strings": one that is not lowercase ASCII letters, digits, ':', '_' or '-' (an
    emoji has no case) may be refused by a writer that checks "schema before writing" (errata E65)."""
    tags = line.get("tags")
    return isinstance(tags, list) and any(isinstance(t, str) and not TAG_ALPHABET.match(t) for t in tags)


def verdict_class(vc: domain.ValueClass, line: dict[str, Any], writing: bool = True) -> str:
    """'valid' (the table says valid and memconform's validator finds nothing wrong), 'invalid' (the table
    says invalid and the validator finds a problem under every reading), else 'open': the table leaves it
    open, the problem holds only under some reading, or the two disagree (a `src` that is a string but no
    reverse domain name, a `meta` of null), so no single answer is demanded (E36)."""
    hard, any_problem = bool(emp.hard_errors(line)), bool(list(emp.field_errors(line)))
    if vc.expect == "valid" and not any_problem and not (writing and strict_tag_alphabet(line)):
        return "valid"
    if vc.expect == "invalid" and hard:
        return "invalid"
    return "open"


def append_one(ctx: CheckContext, path: str, line: dict[str, Any]) -> tuple[Any, list[Any]]:
    """Append `line` through the target; the reply and the lines it added to the file."""
    before = read_bytes(path)
    reply = call(ctx, "append", {"path": path, "entry": line})
    return reply, [e for _, _, e in emp.iter_text(read_bytes(path)[len(before):])]


def shown(new: list[Any], reply: Any) -> str:
    return json.dumps(new[0], ensure_ascii=False)[:200] if new else f"{reply.status}: {reply.raw[:160]!r}"


def open_class_failure(ctx: CheckContext, reply: Any, new: list[Any], sent: dict[str, Any], key: str) -> Failure | None:
    """An open class written (an append, or the model's line of an update): judged by the table's E36 readings
    (recorded), the failure worded by what was written."""
    if not table.observe(ctx, "E36", Asked(readings.OPEN_CLASS, sent), readings.Written(bool(reply.ok), tuple(new))).failure:
        return None
    if not new:
        return Failure(f"an entry of class {key} was acknowledged but nothing was written", shown(new, reply),
                       "refused, or written valid", key)
    return Failure(f"an entry of class {key} was written changed and invalid", shown(new, reply), "refused, or written valid", key)


def judge_append(kind: str, done: str, reply: Any, new: list[Any], sent: dict[str, Any], key: str) -> Failure | None:
    """A valid or an invalid class appended (an open one: open_class_failure)."""
    if kind == "valid" and done != AS_GIVEN:
        return Failure(f"a valid entry ({key}) was {done}", shown(new, reply), AS_GIVEN, key)
    if done == REPAIRED and not new:
        return Failure(f"an entry of class {key} was acknowledged but nothing was written", shown(new, reply),
                       "refused, or written valid", key)
    if done == REPAIRED and (new_problems({} if kind == "invalid" else sent, new)):
        return Failure(f"an entry of class {key} was written changed and invalid", shown(new, reply),
                       "refused, or written valid", key)
    if kind == "invalid" and done == AS_GIVEN and new_problems({}, new):
        return Failure(f"an invalid entry ({key}) was written as given", shown(new, reply), "refused, or written valid", key)
    return None


@SUITE.check(sweep=True, level="writer", section="Write Operations", keyword="MUST", sentence="Append: Add new entry to end of file")
def writer_appends_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """An append of an entry with one field at each class of the table: valid ones appended as given,
    invalid ones ("Validate entries: Check schema before writing") refused or written valid, open ones
    either (what was seen is recorded, E36). The positive control: the usual valid entry appended first."""
    path = new_file(ctx)
    if not call(ctx, "append", {"path": path, "entry": entry(ctx, "control")}).ok:
        raise ControlRefused("a valid entry was refused")
    rows = domain_plan.rows_for(class_lines(ctx), ctx.profile.name, group=lambda item: "valid" if packable(*item) else None,
                                slot=field_name)
    yield from domain_plan.judge_rows(rows, lambda row: appended(ctx, path, row))


def field_name(item: tuple[domain.ValueClass, dict[str, Any]]) -> str:
    return item[0].field.split(".", 1)[1]


def packable(vc: domain.ValueClass, line: dict[str, Any]) -> bool:
    """A valid class whose entry is valid: under ci it shares an entry with classes of other fields."""
    return verdict_class(vc, line) == "valid"


def together(ctx: CheckContext, row: list[tuple[domain.ValueClass, dict[str, Any]]]) -> dict[str, Any]:
    """One entry holding each class's field as its own entry has it (left out where it leaves it out)."""
    line = entry(ctx, "dr-row")
    for item in row:
        name = field_name(item)
        if name in item[1]:
            line[name] = item[1][name]
        else:
            line.pop(name, None)
    return line


def appended(ctx: CheckContext, path: str, row: list[tuple[domain.ValueClass, dict[str, Any]]]) -> list[Failure]:
    """An append of the row's entry (the class's own entry for a row of one, else one entry holding every
    class's field) judged: a row whose entry is not valid as a whole is appended class by class."""
    line = row[0][1] if len(row) == 1 else together(ctx, row)
    kind = verdict_class(row[0][0], line)
    if len(row) > 1 and kind != "valid":
        return [f for item in row for f in appended(ctx, path, [item])]
    reply, new = append_one(ctx, path, line)
    keys = [vc.key for vc, _ in row]
    ctx.state(domain.DomainLedger).judge(keys)
    problem = judge_appended(ctx, kind, reply, new, line, keys[0] if len(row) == 1 else f"{len(row)} classes in one entry "
                             f"({', '.join(keys[:4])} ...)")
    return [problem] if problem else []


def judge_appended(ctx: CheckContext, kind: str, reply: Any, new: list[Any], line: dict[str, Any], key: str) -> Failure | None:
    """An append of `line` of a class of this kind, answered `reply`, that added `new` to the file: the version
    written recorded (E65), an open class judged by the table (E36), a valid or invalid one by its rule."""
    done = what_was_done(bool(reply.ok), new, line)
    if done == AS_GIVEN and isinstance(line.get("v"), str):
        table.observe(ctx, "E65", Asked(readings.VERSION, line["v"]), new[0].get("v"))
    if kind == "open":
        return open_class_failure(ctx, reply, new, line, key)
    return judge_append(kind, done, reply, new, line, key)


def update_one(ctx: CheckContext, path: str, entry_id: str, fields: dict[str, Any]) -> tuple[Any, list[Any]]:
    """Update `entry_id` with `fields` through the target; the reply and the lines it added to the file."""
    before = read_bytes(path)
    reply = call(ctx, "update", {"path": path, "id": entry_id, "entry": fields})
    after = read_bytes(path)
    return reply, [e for _, _, e in emp.iter_text(after[len(before):] if after.startswith(before) else after)]


def explained_if_new_id(ctx: CheckContext, failure: Failure, new: list[Any], want: dict[str, Any]) -> Failure:
    """A failure of an update that appended one valid line under another id, holding the update's content:
    the writer's one fault here is the one writer_update_same_id established (a new id for an update)."""
    if failure.title.startswith("an acknowledged update") and len(new) == 1 \
            and isinstance(new[0], dict) and new[0].get("id") != want["id"] and new[0].get("content") == want.get("content"):
        return established.explained(ctx, failure, UPDATE_AS_NEW_ID)
    return failure


def judge_update(kind: str, reply: Any, new: list[Any], want: dict[str, Any], old_ts: Any, key: str) -> Iterator[Failure]:
    """`want`: the model's line for the update (the entry before it with the fields changed)."""
    if kind == "valid" and not reply.ok:
        yield Failure(f"an update to a valid value ({key}) was refused", shown(new, reply), "the update appended", key)
        return
    if kind == "invalid" and new_problems({}, new):
        yield Failure(f"an update to an invalid value ({key}) was written invalid", shown(new, reply),
                      "refused, or written valid", key)
    if not reply.ok:
        return
    mine = [e for e in new if isinstance(e, dict) and e.get("id") == want["id"]]
    if len(mine) != 1:
        yield Failure(f"an acknowledged update ({key}) did not append exactly one line of the id", shown(new, reply),
                      "one line with the same id", key)
    elif not (emp.is_ts(mine[0].get("ts")) and mine[0]["ts"] > old_ts):
        yield Failure(f"the update's ts ({key}) is not newer than the entry it updates", mine[0].get("ts"), f"> {old_ts}", key)
    elif kind == "valid" and not as_given(want, mine[0]):
        yield Failure(f"an update to a valid value ({key}) was not written as the entry with that field changed",
                      shown(mine, reply), json.dumps(want, ensure_ascii=False)[:200], key)


@SUITE.check(sweep=True, level="writer", section="Write Operations", keyword="MUST",
              sentence="Update: Append new entry with same id (newer ts takes precedence)")
def writer_updates_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """An update of one entry changing one field to each class of the table (every field but the id,
    which names the entry): a valid value is appended as one line of the same id, a newer ts and the other
    fields kept (the model's update); an invalid one refused or written valid; an open one either (E36)."""
    first = entry(ctx, "to-update")
    path = new_file(ctx, [first])
    try:
        control = call(ctx, "update", {"path": path, "id": first["id"], "entry": {"content": ctx.unique("control")}})
    except Unsupported as exc:
        raise SkipCheck(f"the target offers no update operation: {exc.reason}", not_applicable=True) from None
    if not control.ok:
        raise ControlRefused(f"an update to a valid content was refused: {control.raw[:200]!r}")
    items = [item for item in class_lines(ctx) if field_name(item) != "id"]  # the id names the entry updated: its
    # classes are judged by the append and the delete
    # an absent class shares an update too: its field is left out of it, and the line written must keep it
    rows = domain_plan.rows_for(items, ctx.profile.name, slot=field_name, group=lambda item: "valid" if packable(*item) else None)
    yield from domain_plan.judge_rows(rows, lambda row: list(updated(ctx, path, first["id"], row)))


def updated(ctx: CheckContext, path: str, entry_id: str, row: list[tuple[domain.ValueClass, dict[str, Any]]]) -> Iterator[Failure]:
    """An update of the entry setting each class's field at once (a row of one: the class's own field, or
    nothing for an absent class) judged against the model's update; a row whose update is not valid as a
    whole is sent class by class."""
    state = model.File(tuple(e for _, _, e in emp.iter_lines(path)))
    fields = {field_name(item): item[1][field_name(item)] for item in row if field_name(item) in item[1]}
    current = model.view_answers(state.lines).get(entry_id, (None,))[0]
    if current is None:
        raise HarnessError(f"the entry {entry_id} left the view of the file the check updates")
    want = dict(state.update(entry_id, fields, current["ts"] + 1, base=current).lines[-1])
    kind = verdict_class(row[0][0], want)
    if len(row) > 1 and kind != "valid":
        for item in row:
            yield from updated(ctx, path, entry_id, [item])
        return
    reply, new = update_one(ctx, path, entry_id, fields)
    keys = [vc.key for vc, _ in row]
    yield from judge_updated(ctx, kind, reply, new, want, current["ts"], keys[0] if len(row) == 1 else
                             f"{len(row)} classes in one update ({', '.join(keys[:4])} ...)")
    ctx.state(domain.DomainLedger).judge(keys)


def judge_updated(ctx: CheckContext, kind: str, reply: Any, new: list[Any], want: dict[str, Any], old_ts: Any,
                  key: str) -> Iterator[Failure]:
    """An update whose model line is `want`, answered `reply`, that added `new`: an open class judged first by
    the table (E36, the same readings as an append), then as every update (one line of the id, a newer ts)."""
    if kind == "open":
        failure = open_class_failure(ctx, reply, new, want, key)
        if failure is not None:
            yield explained_if_new_id(ctx, failure, new, want)
            return
    for failure in judge_update(kind, reply, new, want, old_ts, key):
        yield explained_if_new_id(ctx, failure, new, want)


@SUITE.check(sweep=True, level="writer", section="Write Operations", keyword="MUST",
              sentence="Delete: Append tombstone entry or rewrite file without deleted entry")
def writer_deletes_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """A file holding a line of every class (as other apps may write them); each line a reader uses is
    deleted by its id: a valid one must be deleted (the model: absent from the view, whatever the form), an
    open or invalid one may be refused; every line no reader uses must survive the deletes of the others
    ("Resilient: Corruption affects only individual lines, not entire file"), and the control entry stays.
    Under ci the classes of different fields (the id's apart) share a line, deleted once and judged by one
    view of the file; a shared line refused or left in the view is written again in halves, each deleted and
    judged, until every failure names its class (harness/kit/domain_plan.py)."""
    lines = class_lines(ctx)
    keep = entry(ctx, "kept")
    readable = [item for item in lines if emp.readable(item[1])]
    rows = domain_plan.rows_for(readable, ctx.profile.name, slot=field_name,
                                group=lambda item: None if field_name(item) == "id" else "line")
    sent = [(row, line_of(ctx, row)) for row in rows]
    unread = [json.dumps(line, ensure_ascii=False).encode("utf-8") for _, line in lines if not emp.readable(line)]
    path = new_file(ctx, [keep, *interleaved([json.dumps(line, ensure_ascii=False) for _, line in sent], unread)])
    replies = [(row, line, call(ctx, "delete", {"path": path, "id": line["id"]})) for row, line in sent]
    after_deletes = read_bytes(path).split(b"\n")  # before any read: what only the deletes did
    seen = view_by_id(ctx, path)
    split = False
    for row, line, reply in replies:
        found = deleted_failures(ctx, row, reply, line["id"], seen)
        if found is not None and (len(row) == 1 or not found):
            yield from found
            continue
        split = True  # a shared line refused or left in the view: its classes judged apart
        yield from judge_packed(halves(row), lambda part: delete_again(ctx, path, part), found or [])
    state = model.File(tuple(e for _, _, e in emp.iter_lines(path)))
    seen = view_by_id(ctx, path) if split else seen
    file_lines = read_bytes(path).split(b"\n")

    def gone(raw: bytes, failure: Failure) -> Failure:
        """Another app's line the deletes left no trace of (the file read before any read call, and now): the
        delete's rewrite without other apps' lines that writer_delete_keeps_foreign established."""
        both = dropped(raw, after_deletes) and dropped(raw, file_lines)
        return established.explained(ctx, failure, FOREIGN_LINES_DROPPED) if both else failure

    if keep["id"] not in seen or model.view_answers(state.lines).get(keep["id"], (None,)) == (None,):
        yield gone(json.dumps(keep).encode(), Failure("an entry nobody deleted left the view", sorted(map(str, seen))[:6], keep,
                                                      f"id {keep['id']}"))
    ledger = ctx.state(domain.DomainLedger)
    for vc, line in lines:
        raw = json.dumps(line, ensure_ascii=False).encode("utf-8")
        if not emp.readable(line) and raw not in file_lines:
            yield gone(raw, Failure(f"a line no reader uses ({vc.key}) was dropped or changed by deletes of other entries",
                                    raw[:200], "the line kept byte for byte", vc.key))
        if not emp.readable(line):
            ledger.judge([vc.key])


def line_of(ctx: CheckContext, row: list[tuple[domain.ValueClass, dict[str, Any]]]) -> dict[str, Any]:
    """The line a row's delete removes: the class's own line for a row of one, else one line holding each class's field."""
    return row[0][1] if len(row) == 1 else together(ctx, row)


def interleaved(first: list[str], second: list[bytes]) -> list[str | bytes]:
    """The two lists' lines taken in turn, the longer one's rest at the end."""
    out: list[str | bytes] = []
    for i in range(max(len(first), len(second))):
        out.extend(first[i:i + 1])
        out.extend(second[i:i + 1])
    return out


def view_by_id(ctx: CheckContext, path: str) -> dict[Any, dict[str, Any]]:
    """The target's view of the file (the harness's resolution where it offers none), by id."""
    view = target_view(ctx, path)
    return by_id(view if view is not None else emp.resolve(emp.iter_lines(path)))


def deleted_failures(ctx: CheckContext, row: list[tuple[domain.ValueClass, dict[str, Any]]], reply: Any, entry_id: str,
                     seen: dict[Any, dict[str, Any]]) -> list[Failure] | None:
    """A delete of the row's line judged by its answer and the view after it: a valid class's delete refused,
    or any acknowledged one left in the view, fails; None when a shared line holding a class that may be
    refused was refused (its classes are then judged apart)."""
    kinds = [verdict_class(vc, line, writing=False) for vc, line in row]  # another app's line: E65 is the writer's
    key = row[0][0].key if len(row) == 1 else f"{len(row)} classes on one line ({', '.join(vc.key for vc, _ in row[:4])} ...)"
    if not reply.ok and len(row) > 1 and set(kinds) != {"valid"}:
        return None
    ctx.state(domain.DomainLedger).judge([vc.key for vc, _ in row])
    if not reply.ok:
        return [Failure(f"a delete of a valid entry ({key}) was refused", reply.raw[:200], "deleted", key)] if "valid" in kinds else []
    if entry_id in seen:
        return [Failure(f"an acknowledged delete ({key}) left the entry in the view", seen[entry_id], "absent", key)]
    return []


def halves(row: list[Any]) -> list[list[Any]]:
    return [row[:len(row) // 2], row[len(row) // 2:]]


def delete_again(ctx: CheckContext, path: str, row: list[tuple[domain.ValueClass, dict[str, Any]]]) -> list[Failure] | None:
    """Part of a shared line judged apart: its line written to the file afresh (as another app would), deleted, judged."""
    line = line_of(ctx, row)  # a part of a shared line never holds the id's classes: a new line's id is its own
    with open(path, "ab") as fh:
        fh.write(json.dumps(line, ensure_ascii=False).encode("utf-8") + b"\n")
    reply = call(ctx, "delete", {"path": path, "id": line["id"]})
    return deleted_failures(ctx, row, reply, line["id"], view_by_id(ctx, path))
