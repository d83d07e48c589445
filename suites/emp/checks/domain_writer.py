"""A writer asked to append an entry of every class of every field of the domain table
(suites/emp/domain.json): a valid entry is appended as given, an invalid one is refused or written valid,
and an open one may be either (the answer seen is recorded, errata E36)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from memconform import domain
from memconform.core.check_context import CheckContext
from memconform.core.model import ControlRefused, Failure
from memconform.suites.emp import format as emp
from memconform.suites.emp.checks.common import call, entry, new_file, read_bytes
from memconform.suites.emp.checks.domain_reader import class_lines, same_number_or_value
from memconform.suites.emp.suite import SUITE

AS_GIVEN = "appended as given"
REFUSED = "refused"
REPAIRED = "written valid, changed"


def verdict_class(vc: domain.ValueClass, line: dict[str, Any]) -> str:
    """'valid' (the table says valid and memconform's validator finds nothing wrong), 'invalid' (the table
    says invalid and the validator finds a problem under every reading), else 'open': the table leaves it
    open, the problem holds only under some reading, or the two disagree (a `src` that is a string but no
    reverse domain name, a `meta` of null), so no single answer is demanded (E36)."""
    hard, any_problem = bool(emp.hard_errors(line)), bool(list(emp.field_errors(line)))
    if vc.expect == "valid" and not any_problem:
        return "valid"
    if vc.expect == "invalid" and hard:
        return "invalid"
    return "open"


def as_given(sent: dict[str, Any], written: dict[str, Any]) -> bool:
    """The written line holds the fields sent, as sent (numbers as doubles), and no other; the id and the ts
    may be the writer's own (E14: it picks the id; an app stamps the time it writes)."""
    own = {"id", "ts"}
    fields = set(sent) - own
    same = all(k in written and same_number_or_value(sent[k], written[k]) for k in fields)
    return same and set(written) - own == fields and own <= set(written)


def what_was_done(reply: Any, new: list[Any], sent: dict[str, Any]) -> str:
    if not reply.ok and not new:
        return REFUSED
    if len(new) == 1 and isinstance(new[0], dict) and as_given(sent, new[0]):
        return AS_GIVEN
    return REPAIRED


def append_one(ctx: CheckContext, path: str, line: dict[str, Any]) -> tuple[Any, list[Any]]:
    """Append `line` through the target; the reply and the lines it added to the file."""
    before = read_bytes(path)
    reply = call(ctx, "append", {"path": path, "entry": line})
    return reply, [e for _, _, e in emp.iter_text(read_bytes(path)[len(before):])]


def shown(new: list[Any], reply: Any) -> str:
    return json.dumps(new[0], ensure_ascii=False)[:200] if new else f"{reply.status}: {reply.raw[:160]!r}"


def new_problems(sent: dict[str, Any], new: list[Any]) -> bool:
    """A written line breaks a rule (under every reading) the entry as sent did not break."""
    allowed = set(emp.hard_errors(sent))
    return any(not isinstance(e, dict) or set(emp.hard_errors(e)) - allowed for e in new)


def judge_append(kind: str, done: str, reply: Any, new: list[Any], sent: dict[str, Any], key: str) -> Failure | None:
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


@SUITE.check(level="writer", section="Write Operations", keyword="MUST", sentence="Append: Add new entry to end of file")
def writer_appends_every_class(ctx: CheckContext) -> Iterator[Failure]:
    """An append of an entry with one field at each class of the table: valid ones appended as given,
    invalid ones ("Validate entries: Check schema before writing") refused or written valid, open ones
    either (what was seen is recorded, E36). The positive control: the usual valid entry appended first."""
    path = new_file(ctx)
    if not call(ctx, "append", {"path": path, "entry": entry(ctx, "control")}).ok:
        raise ControlRefused("a valid entry was refused")
    ledger = ctx.state(domain.DomainLedger)
    for vc, line in class_lines(ctx):
        kind = verdict_class(vc, line)
        reply, new = append_one(ctx, path, line)
        done = what_was_done(reply, new, line)
        if kind == "open":
            ctx.observe("E36", {f"an open class {AS_GIVEN}": done == AS_GIVEN, f"an open class {REFUSED}": done == REFUSED,
                                f"an open class {REPAIRED}": done == REPAIRED})
        problem = judge_append(kind, done, reply, new, line, vc.key)
        if problem:
            yield problem
        ledger.judge([vc.key])
