"""What every EMP check shares: fresh files, run-unique entries, calling the target, reading the answer.

Operations a target offers (suites/emp/errata.md, "Operation bodies"): append {"path","entry"} -> {"id"?},
delete {"path","id"}, update {"path","id","entry"} (optional), resolve {"path"} -> [entries],
query {"path", "start"?, "end"?, "tags"?, "type"?, "text"?} -> [entries].
Every file lives in a fresh temporary folder, removed at the end of the run (ctx.cleanup).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.readings import Asked
from memconform.core.results import ControlRefused, Failure, TargetError, Unsupported
from memconform.suites.emp import format as emp
from memconform.suites.emp import readings, table


@dataclass
class EmpRun:
    """What the EMP checks share during one run (ctx.state(EmpRun))."""

    models: list[Any] = field(default_factory=list)  # the state machine's models, one per example


SPEC = emp.SPEC
OTHER = "com.example.other"
BASE_TS = 1701234567890



def new_folder(ctx: CheckContext) -> str:
    folder = tempfile.mkdtemp(prefix="memconform-emp-")

    def remove() -> bool:
        shutil.rmtree(folder, ignore_errors=True)
        return not os.path.exists(folder)
    ctx.cleanup(f"folder {folder}", remove)
    return folder


def new_file(ctx: CheckContext, lines: Sequence[dict[str, Any] | str | bytes] = ()) -> str:
    """A memory.jsonl in a fresh folder; a line is an entry (dict), a text line (str) or raw bytes."""
    path = os.path.join(new_folder(ctx), emp.FILE_NAME)
    with open(path, "wb") as fh:
        for line in lines:
            if isinstance(line, dict):
                line = json.dumps(line)
            fh.write((line if isinstance(line, bytes) else line.encode("utf-8")) + b"\n")
    return path


def read_bytes(path: str) -> bytes:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except FileNotFoundError:
        return b""


def entry(ctx: CheckContext, label: str, ts: int = BASE_TS, **fields: Any) -> dict[str, Any]:
    e = {"v": emp.VERSION, "id": str(uuid.uuid4()), "ts": ts, "src": OTHER, "content": ctx.unique(label)}
    e.update(fields)
    return e


def call(ctx: CheckContext, op: str, body: dict[str, Any]) -> Any:
    reply = ctx.target.call(op, body)
    ctx.note(f"{op} {json.dumps({k: v for k, v in body.items() if k != 'path'})[:200]} -> {reply.status}")
    return reply


def append(ctx: CheckContext, path: str, e: dict[str, Any]) -> str:
    """Append through the target and return the id it wrote: the one it reports, else the one given
    (a writer may pick its own UUID for a new entry, errata E14)."""
    reply = call(ctx, "append", {"path": path, "entry": e})
    if not reply.ok:
        raise TargetError(f"append was refused: {reply.raw[:200]!r}")
    return written_id(ctx, reply, e)


def written_id(ctx: CheckContext, reply: Any, e: dict[str, Any]) -> str:
    body = reply.body if isinstance(reply.body, dict) else {}
    reported = body.get("id") if isinstance(body.get("id"), str) and body.get("id") else None  # none: the one given
    # either is a reading (E14); which the answer shows is recorded, and the id is judged where it is read
    table.observe(ctx, "E14", Asked(readings.APPEND_REPLY, e.get("id")), reported)
    return reported if reported is not None else str(e.get("id"))


def view(ctx: CheckContext, path: str, op: str = "resolve", **filters: Any) -> list[dict[str, Any]]:
    reply = call(ctx, op, {"path": path, **filters})
    body: list[dict[str, Any]] = reply.accepted_json(list, op)
    return body


def target_view(ctx: CheckContext, path: str) -> list[dict[str, Any]] | None:
    """The target's own resolved view, or None when it offers none (a writer-only app) or refuses
    this file (a reader's own rule, judged by the reader checks, not here)."""
    try:
        reply = call(ctx, "resolve", {"path": path})
    except Unsupported:
        return None
    if not reply.ok:
        ctx.note("the target refused to read the file back; the harness reads it instead")
        return None
    body: list[dict[str, Any]] = reply.accepted_json(list, "resolve")
    return body


def by_id(entries: list[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
    return {e.get("id"): e for e in entries if isinstance(e, dict)}


def offers_update(ctx: CheckContext) -> bool:
    """Does the target offer the optional update operation? Asked once per run, on a file of its own
    (a refusal still says yes: the checks then show what the update does)."""
    def ask() -> bool:
        first = entry(ctx, "update-probe")
        try:
            call(ctx, "update", {"path": new_file(ctx, [first]), "id": first["id"], "entry": {"content": ctx.unique("p")}})
        except Unsupported:
            return False
        return True
    offered: bool = ctx.once("emp.offers-update", ask)
    return offered


# ---- robustness to a bad line: the same operation on the same file without it is the control ----

def control_without_bad_lines(ctx: CheckContext, op: str, body: dict[str, Any]) -> Any:
    """The positive control of a check about bad lines: `op` on the same file without its bad lines.
    Refused: the control failed (the check is not assessed); an error escapes (the target errored)."""
    reply = call(ctx, op, body)
    if not reply.ok:
        raise ControlRefused(f"{op} of the same file without its bad lines was refused: {reply.raw[:200]!r}")
    return reply


def despite_bad_lines(ctx: CheckContext, op: str, body: dict[str, Any], bad: str) -> tuple[Any, Failure | None]:
    """`op` on a file holding `bad` (say "one line that is not valid UTF-8"), after its control passed:
    an error or a refusal is the rule broken ("Corruption affects only individual lines, not entire
    file"), a failure, not the target erroring. (reply, None) when it went through."""
    try:
        reply = call(ctx, op, body)
    except TargetError as exc:
        return None, Failure(f"{op} failed on a file with {bad}, though it works on the same file without it",
                             str(exc)[:300], "done, with only the bad line left out", detail=RESILIENT)
    if not reply.ok:
        return None, Failure(f"{op} was refused on a file with {bad}, though it works on the same file without it",
                             reply.raw[:300], "done, with only the bad line left out", detail=RESILIENT)
    return reply, None


RESILIENT = '"Resilient: Corruption affects only individual lines, not entire file"'


TOMBSTONE_FORMS = readings.TOMBSTONE_FORMS


def tombstone_form(ctx: CheckContext) -> str | None:
    """The tombstone form this reader honours (errata E1): the pinned one, else the first of both that works."""
    def learn() -> str | None:
        forms = TOMBSTONE_FORMS if ctx.option("tombstone") == "either" else (ctx.option("tombstone"),)
        for form in forms:
            kept, gone = entry(ctx, "kept"), entry(ctx, "gone")
            got = by_id(view(ctx, new_file(ctx, [kept, gone, emp.tombstone(gone["id"], gone["ts"] + 1000, OTHER, form)])))
            if kept["id"] not in got:
                raise ControlRefused(f"an entry nobody deleted is missing from the view (id {kept['id']})")
            if honoured(ctx, form, gone["id"] not in got):
                return form
        return None
    form: str | None = ctx.once("emp.tombstone-form", learn)
    return form


def honoured(ctx: CheckContext, form: str, gone: bool) -> bool:
    """Did the reader honour a tombstone of this form (the entry gone from its view)? Recorded (E1) when it did."""
    return bool(table.observe(ctx, "E1", Asked(readings.HONOURED, form), gone).matched)
