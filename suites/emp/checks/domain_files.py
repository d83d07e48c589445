"""The file-level classes of the domain table (suites/emp/domain.json): the forms a line of memory.jsonl
takes besides an entry (a blank line, a line of spaces, CRLF ends, a last line without its newline, a
byte order mark), each read and appended to; and the lock file another app holds (fresh with a token,
empty, or a live PID: waited for; stale with a PID or empty: errata E2). Every view is judged by the
model (suites/emp/model.py)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator
from dataclasses import replace
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.core.readings import Asked
from memconform.core.results import Failure
from memconform.kit import domain, domain_plan
from memconform.suites.emp import format as emp
from memconform.suites.emp import model, readings, table
from memconform.suites.emp.checks.common import (
    call,
    entry,
    new_file,
    new_folder,
    read_bytes,
    written_id,
)
from memconform.suites.emp.checks.locking import append_past_stale_lock, hold_window, mended, wait_while_held
from memconform.suites.emp.deviations import APPEND_GLUED
from memconform.suites.emp.readings import same_number_or_value
from memconform.suites.emp.suite import SUITE

BOM = b"\xef\xbb\xbf"


def file_bytes(form: str, first: dict[str, Any], second: dict[str, Any]) -> bytes:
    """Two entries with the line form of a file.lines class between, around or at the end of them."""
    a, b = json.dumps(first).encode(), json.dumps(second).encode()
    return {"blank_line": a + b"\n\n" + b + b"\n", "whitespace_line": a + b"\n   \n" + b + b"\n",
            "crlf": a + b"\r\n" + b + b"\r\n", "no_final_newline": a + b"\n" + b,
            "bom": BOM + a + b"\n" + b + b"\n"}[form]


BETWEEN = {"blank_line": b"\n\n", "whitespace_line": b"\n   \n", "crlf": b"\r\n"}  # the forms a file can hold anywhere


def forms_bytes(forms: list[str], entries: list[dict[str, Any]]) -> bytes:
    """Entries with one form of BETWEEN after each but the last (ci: several forms in one file); one form: file_bytes."""
    if len(forms) == 1:
        return file_bytes(forms[0], entries[0], entries[1])
    lines = [json.dumps(e).encode() for e in entries]
    return b"".join(line + BETWEEN[form] for line, form in zip(lines, forms, strict=False)) + lines[-1] + b"\n"


def at_risk(form: str, first: dict[str, Any], second: dict[str, Any]) -> str | None:
    """The id an open form (errata E64) lets a reader leave out: the first line behind a BOM, the last line
    without its newline; None for the valid forms."""
    return {"bom": first["id"], "no_final_newline": second["id"]}.get(form)


def view_failures(label: str, shown: list[Any], lines: list[dict[str, Any]], optional: str | None) -> list[str]:
    """The model's view of the entries (the line form is no entry), the one an open form puts at risk
    allowed absent."""
    answers = model.view_answers(lines)
    if optional is not None:
        answers = {i: (*options, None) if i == optional else options for i, options in answers.items()}
    return model.view_problems(shown, answers, same=lambda x, y: same_number_or_value(dict(x), dict(y)))


def parsed_lines(raw: bytes) -> list[dict[str, Any]]:
    """The entries of a file as the harness reads it for this check: a BOM and CR ends set aside."""
    out = []
    for line in raw.removeprefix(BOM).split(b"\n"):
        try:
            value = json.loads(line.rstrip(b"\r").decode("utf-8"))
        except ValueError:
            continue
        if emp.readable(value):
            out.append(value)
    return out


def view_verdict(ctx: CheckContext, form: str, shown: list[Any], first: dict[str, Any], second: dict[str, Any],
                 optional: str | None, more: tuple[dict[str, Any], ...] = ()) -> Failure | None:
    """The view of a file of two entries (and `more`, several forms sharing the file) in a line form: the
    model's, or for an open form (`optional`: the id it puts at risk) one of the table's E64 readings (recorded)."""
    entries = [first, second, *more]
    form = form.replace("_", " ")
    if optional is not None:
        asked = Asked(readings.AT_RISK, readings.AtRisk((first, second), optional))
        if table.observe(ctx, "E64", asked, shown):
            return None
    problems = view_failures(form, shown, entries, optional)  # what differs from the model, said
    if not problems and optional is None:
        return None
    return Failure(f"a file with a {form}: the view is not the model's", problems[:4] or shown[:4],
                   "every entry of the file" + (" (the line at risk may be left out, E64)" if optional else ""), "$")


def read_and_append(ctx: CheckContext, row: list[domain.ValueClass]) -> Iterator[Failure]:
    """A file holding the row's line forms (one: between two entries, or around them), read, then appended to."""
    forms = [str(vc.value()) for vc in row]
    form = ", ".join(f.replace("_", " ") for f in forms)
    label = forms[0] if len(forms) == 1 else "-".join(forms)
    entries = [entry(ctx, f"{label}-1")] + [entry(ctx, f"{label}-{i + 2}", ts=emp_ts(i + 1)) for i in range(max(1, len(forms)))]
    new = entry(ctx, f"{label}-new", ts=emp_ts(len(entries)))
    path = os.path.join(new_folder(ctx), emp.FILE_NAME)
    before = forms_bytes(forms, entries)
    with open(path, "wb") as fh:
        fh.write(before)
    optional = at_risk(forms[0], entries[0], entries[1]) if len(forms) == 1 else None
    reply = call(ctx, "resolve", {"path": path})
    if not reply.ok:
        yield Failure(f"a file with a {form} was not read", reply.raw[:200], "its entries", "$")
    else:
        failure = view_verdict(ctx, form, reply.accepted_json(list, "resolve"), entries[0], entries[1], optional, tuple(entries[2:]))
        if failure is not None:
            yield failure
    reply = call(ctx, "append", {"path": path, "entry": new})
    after = read_bytes(path)
    if not reply.ok:
        yield Failure(f"an append to a file with a {form} was refused", reply.raw[:200], "appended", "$")
        return
    if not after.startswith(before):
        yield Failure(f"an append to a file with a {form} changed the lines already there",
                      after[: len(before) + 2][-80:].decode("utf-8", "replace"), "every earlier byte kept", "$")
    new_id = written_id(ctx, reply, new)

    def appended_problems(raw: bytes) -> list[str]:
        problems = view_failures(form, parsed_lines(raw), [*entries, dict(new, id=new_id)], None)
        return [p for p in problems if new_id not in p or "is shown as" not in p]  # the writer may stamp its own ts

    problems = appended_problems(after)
    if problems:
        failure = Failure(f"after an append to a file with a {form}, an entry is not on a line of its own",
                          problems[:4], "every entry readable, the new one on its own line", "$")
        fixed = mended(before, after)  # the glue writer_after_torn_line saw, when a new line started mends it all
        yield established.explained(ctx, failure, APPEND_GLUED) if fixed is not None and not appended_problems(fixed) else failure


def emp_ts(step: int) -> int:
    return 1701234567890 + 1000 * step


@SUITE.check(sweep=True, level="reader", section="Storage Format: JSONL", keyword="MUST",
              sentence="Resilient: Corruption affects only individual lines, not entire file")
def file_every_line_form(ctx: CheckContext) -> Iterator[Failure]:
    """Each line form of the table's file.lines between, around or after two entries: the reader's view is
    the model's (a BOM or a last line without newline may cost that one line, E64, recorded), and an
    append keeps every byte there and puts the new entry on a line of its own."""
    table = domain.required("emp")
    # under ci the forms a file may hold anywhere share one file (harness/kit/domain_plan.py: split on a failure);
    # the two open ones (E64) stay alone, so the line each puts at risk is told apart
    rows = domain_plan.rows_for(table.field("file.lines").classes, ctx.profile.name,
                                group=lambda vc: "between" if vc.value() in BETWEEN else None)
    yield from domain_plan.judge_rows(rows, lambda row: judged_forms(ctx, row))


def judged_forms(ctx: CheckContext, row: list[domain.ValueClass]) -> list[Failure]:
    found = list(read_and_append(ctx, row))
    domain.ledger(ctx).judge([vc.key for vc in row])
    return found


# a live process that is not this one (an in-process target writes this one's PID into its own lock)
LOCK_CONTENT = {"fresh_token": None, "fresh_empty": "", "fresh_pid": f"{os.getppid()}\n", "stale_pid": "999999\n",
                "stale_empty": ""}


@SUITE.check(sweep=True, level="writer", section="Concurrency Control", keyword="SHOULD",
              sentence="If lock file exists, wait with exponential backoff")
def writer_lock_every_content(ctx: CheckContext) -> Iterator[Failure]:
    """Each lock of the table's file.lock another app left: a fresh one, whatever it holds (a token,
    nothing, a live process's PID), is waited for as emp.writer_waits_for_lock waits (errata E6), in front
    of a file and in front of a missing one (the writer's initialise); a stale
    one, with a PID or empty, is taken over, waited on or given up on (E2, recorded), and a refusal
    changes nothing."""
    table = domain.required("emp")
    hold = hold_window(ctx)
    for vc in table.field("file.lock").classes:
        content = LOCK_CONTENT[str(vc.value())]
        if vc.id.startswith("fresh"):
            failures = wait_while_held(ctx, "append", hold, content)
            # the same lock in front of a writer's first write, which creates the file (its initialise)
            for failure in wait_while_held(ctx, "append", hold, content, missing=True):
                yield replace(failure, title=f"{vc.key}, no memory.jsonl yet: {failure.title}")
        else:
            failures = append_past_stale_lock(ctx, new_file(ctx), entry(ctx, "after-stale"), [], content or "")
        for failure in failures:
            yield replace(failure, title=f"{vc.key}: {failure.title}")
        domain.ledger(ctx).judge([vc.key])
