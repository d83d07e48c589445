"""A reader fed a line of every class of every field of the domain table (suites/emp/domain.json): each
line `memconform validate` accepts under every reading is one a reader must return."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Asked
from memconform.core.results import Failure
from memconform.kit import domain
from memconform.suites.emp import format as emp
from memconform.suites.emp import readings, table
from memconform.suites.emp.checks.common import by_id, new_file, view
from memconform.suites.emp.checks.domain_common import class_lines
from memconform.suites.emp.readings import same_number_or_value
from memconform.suites.emp.suite import SUITE


def uuid_shaped(value: Any) -> bool:
    return isinstance(value, str) and bool(emp.UUID_RE.match(value))


def differing(line: dict[str, Any], seen: dict[str, Any]) -> list[str]:
    """The fields of `line` the entry seen does not hold as written (an id in another case is the same UUID, E66)."""
    return [name for name in line if not (same_number_or_value(line[name], seen.get(name))
                                          or name == "id" and same_uuid(line[name], seen.get(name)))]


def same_uuid(sent: Any, got: Any) -> bool:
    """Two spellings of one UUID: RFC 4122 compares the hex digits case-insensitively (errata E66)."""
    return isinstance(sent, str) and isinstance(got, str) and bool(emp.UUID_RE.match(sent)) and sent.lower() == got.lower()


@SUITE.check(sweep=True, level="reader", section="Access Patterns", keyword="MUST", sentence="Read All: Load entire file and parse each line")
def reader_returns_every_valid_class(ctx: CheckContext) -> Iterator[Failure]:
    """One file with a line of each class (written as UTF-8, not escaped), one resolved view: every line
    memconform's validator finds no problem with, under any reading, is in the view with its fields as
    written; lines it refuses are only sent (a reader may drop them)."""
    lines = class_lines(ctx)
    path = new_file(ctx, [json.dumps(line, ensure_ascii=False) for _, line in lines])
    got = by_id(view(ctx, path))
    folded = {k.lower(): e for k, e in got.items() if isinstance(k, str) and emp.UUID_RE.match(k)}
    # lines whose ids are one UUID in two cases: a reader comparing ids case-insensitively (E66) holds them as one
    # entry, whichever line wins (their ts tie)
    twins: dict[str, list[dict[str, Any]]] = {}
    for _, line in lines:
        if uuid_shaped(line.get("id")) and not list(emp.field_errors(line)):
            twins.setdefault(line["id"].lower(), []).append(line)
    ledger = ctx.state(domain.DomainLedger)
    missing, changed = [], []
    for vc, line in lines:
        if list(emp.field_errors(line)):
            ledger.sent([vc.key])
            continue
        seen, exact = got.get(line["id"]), True
        if seen is None and uuid_shaped(line["id"]):
            seen, exact = folded.get(line["id"].lower()), False  # RFC 4122 compares UUIDs case-insensitively (errata E66)
        if seen is None:
            missing.append(f"{vc.key} ({json.dumps(line, ensure_ascii=False)[:90]})")
            ledger.judge([vc.key])
            continue
        group = twins.get(line["id"].lower(), [line]) if uuid_shaped(line["id"]) else [line]
        fits = [other for other in group if not differing(other, seen)]
        if not fits:
            changed += [f"{vc.key}: {name}" for name in differing(line, seen)]
        elif len(group) > 1 or line["id"] != line["id"].lower():
            as_written = exact and line in fits and seen.get("id") == line["id"]
            uuid_case_seen(ctx, line["id"], as_written)
        ledger.judge([vc.key])
    if missing:
        yield Failure("valid lines (memconform validate accepts them) are missing from the reader's view", missing[:6],
                      "every valid line returned", "$", f"{len(missing)} of {len(lines)} lines")
    if changed:
        yield Failure("valid lines were returned with fields other than written", changed[:6], "the fields as written", "$",
                      f"{len(changed)} fields")


def uuid_case_seen(ctx: CheckContext, written: str, as_written: bool) -> None:
    """Record how a reader returned an upper-case UUID id it found (E66): as written, or in another case."""
    table.observe(ctx, "E66", Asked(readings.UPPER_UUID, written), as_written)
