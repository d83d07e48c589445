"""Sends the hostile-JSON battery (hostile.py) to a target's JSON-accepting operations, as a check.

Per surface: a positive control first (a valid document, delivered the same way, must be accepted,
else ControlRefused), then every battery input (a deterministic sample under the `ci` profile),
each answered one of: rejected, accepted, crashed (5xx, a crash exit, an exception), hung (the
call's deadline passed), stored anyway (a must-reject input whose unique marker appears in a later
export, whatever the answer was), not sent (after HUNG_LIMIT hangs the rest are not sent, so the
run stays bounded). The check fails on crashed, hung and stored anyway; every count, and each
answer that was not a rejection, goes to the transcript.
"""

from __future__ import annotations

import dataclasses
import json
import re
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any

from ..core.results import ControlRefused, Failure, Inconclusive, SkipCheck, TargetError, Unsupported
from .hostile import BadInput, battery, one_of_each, sample

CI_SAMPLE = 48
HUNG_LIMIT = 2
ANSWERS = ("rejected", "accepted", "crashed", "hung", "stored anyway", "not sent")
EXPECTED = "a clear rejection (4xx, exit 3, Rejected) and nothing stored"
_TIMEOUT = re.compile(r"within|deadline|timed? ?out|no reply|not called", re.IGNORECASE)


@dataclass
class Surface:
    """One JSON-accepting operation. `send` delivers an input's bytes (and, over HTTP, its content
    type) and returns the Reply; `stored` returns the bytes of a later export (None: storage cannot
    be observed on this target); `make(marker)` builds a valid document holding the marker."""

    op: str
    make: Callable[[str], Any]
    send: Callable[[BadInput], Any]
    stored: Callable[[], bytes] | None = None
    http: bool = False
    bytes_native: bool = False  # the operation takes raw bytes anyway (a file upload), in process too


def answer(surface: Surface, item: BadInput) -> tuple[str, str]:
    try:
        reply = surface.send(item)
    except Unsupported as exc:
        return "rejected", f"refused as not offered: {exc.reason}"
    except SkipCheck:
        raise
    except TargetError as exc:
        return ("hung" if _TIMEOUT.search(str(exc)) else "crashed"), str(exc)[:300]
    status = getattr(reply, "http_status", None)
    brief = f"{reply.status} {bytes(reply.raw[:160]).decode('utf-8', 'replace')!r}"
    if isinstance(status, int) and status >= 500:
        return "crashed", brief
    return ("accepted" if reply.ok else "rejected"), brief


def run_battery(ctx: Any, surface: Surface, i_json: bool = False, crashes_blamed: bool = True,
                each_kind_once: bool = False) -> Iterator[Failure]:
    """`i_json`: the run pins I-JSON (RFC 7493): duplicate names and escaped lone surrogates must be
    refused too; else RFC 8259 lets a target accept them, and what it did is only noted.
    `each_kind_once`: under ci one input of every kind (hostile.one_of_each) rather than CI_SAMPLE, for a
    suite whose target may start a process per call.
    `crashes_blamed=False`: the spec names no answer to bad input (only that nothing bad is stored), so
    a crash that stored nothing is noted, not failed; hangs and inputs stored anyway still fail."""
    control_marker = ctx.unique("hostile-control")
    control = BadInput("control", "control", json.dumps(surface.make(control_marker), ensure_ascii=False).encode(),
                       control_marker, must_reject=False)
    try:
        reply = surface.send(control)  # Unsupported escapes: the operation is not offered, not applicable
    except TargetError as exc:
        if getattr(ctx.target, "kind", "") == "python" and not surface.bytes_native:
            # an in-process object handed parsed values has no JSON reader of its own to try: nothing to observe
            raise SkipCheck(f"{surface.op}: the in-process implementation does not take a request as raw bytes ({exc}); "
                            "the battery applies to targets that read JSON themselves (http, cmd, dir, or a python: "
                            "object whose methods parse bytes)", not_applicable=True) from None
        raise ControlRefused(f"{surface.op}: a valid document, sent the way the battery sends its inputs, errored: {exc}") from None
    if not reply.ok:
        raise ControlRefused(f"{surface.op}: a valid document, sent the way the battery sends its inputs, was refused: "
                             f"{reply.status} {bytes(reply.raw[:200])!r}")
    exported_before = _export_answers(surface)  # so an export broken by the battery is told from one never working
    inputs = battery(surface.make, ctx.unique("hb"), http=surface.http, seed=ctx.profile.seed)
    if i_json:
        inputs = [dataclasses.replace(i, must_reject=True) if i.i_json_only else i for i in inputs]
    total = len(inputs)
    if ctx.profile.name == "ci":
        inputs = one_of_each(inputs) if each_kind_once else sample(inputs, CI_SAMPLE, seed=ctx.profile.seed)
    started = time.monotonic()
    answers: list[tuple[BadInput, str, str]] = []
    hung = 0
    for item in inputs:
        if hung >= HUNG_LIMIT:
            answers.append((item, "not sent", f"the target hung {hung} times"))
            continue
        verdict, detail = answer(surface, item)
        hung += verdict == "hung"
        answers.append((item, verdict, detail))
    answers, broken = _stored(ctx, surface, control_marker, answers)
    if broken and exported_before:
        # what the target accepted broke its own export: every memory of the user is now unexportable
        yield Failure(f"{surface.op}: the export fails after the battery, though it answered before it", broken,
                      "the export still answers after bad inputs were refused or stored", path=f"{surface.op} then the export")
    counts = {a: sum(1 for _, v, _ in answers if v == a) for a in ANSWERS}
    ctx.note(f"hostile battery on {surface.op}: {len(answers)} bad inputs"
             + (f" (a sample of the {total}; all of them under the default and thorough profiles)" if len(answers) < total else "")
             + f" in {time.monotonic() - started:.1f}s: " + ", ".join(f"{n} {a}" for a, n in counts.items() if n))
    for item, verdict, detail in answers:
        if verdict != "rejected":
            allowed = "" if item.must_reject else " (RFC 8259 allows it; I-JSON would refuse it)" if item.i_json_only \
                else " (may be accepted)"
            ctx.note(f"  {verdict}: {item.name}{allowed} -> {detail[:160]}")
    crashed = sum(1 for _, verdict, _ in answers if verdict == "crashed")
    if crashed and not crashes_blamed:
        ctx.note(f"hostile battery on {surface.op}: {crashed} inputs answered with a crash that stored nothing; the "
                 "spec names no answer to bad input, so this is advice, not a failure")
    groups: dict[tuple[str, str], list[tuple[BadInput, str]]] = {}
    for item, verdict, detail in answers:
        if verdict in ("hung", "stored anyway") or verdict == "crashed" and crashes_blamed:
            groups.setdefault((verdict, item.category), []).append((item, detail))
    for (verdict, category), items in groups.items():
        names = [i.name.partition(": ")[2] for i, _ in items]
        yield Failure(
            f"{surface.op}: {verdict} on {len(items)} {category} input{'s' if len(items) != 1 else ''}",
            f"{'; '.join(names[:6])}{' ...' if len(names) > 6 else ''} -> {items[0][1][:200]}",
            EXPECTED, path=f"{surface.op} request body",
        )


def _export_answers(surface: Surface) -> bool:
    if surface.stored is None:
        return False
    try:
        surface.stored()
    except (TargetError, SkipCheck):
        return False
    return True


def _stored(ctx: Any, surface: Surface, control_marker: str,
            answers: list[tuple[BadInput, str, str]]) -> tuple[list[tuple[BadInput, str, str]], str]:
    """Mark must-reject inputs whose marker a later export holds as stored anyway; and why the export
    after the battery failed ("" when it answered)."""
    if surface.stored is None:
        ctx.note(f"hostile battery on {surface.op}: what it stores is not observed (the operation stores nothing, or the target has no export)")
        accepted = [item for item, verdict, _ in answers if item.must_reject and verdict == "accepted"]
        if accepted and not any(verdict in ("crashed", "hung") for _, verdict, _ in answers):
            # a target answering 2xx to bytes that are not JSON, where nothing shows what it did with them:
            # no evidence it read them at all (a junk server answers every request so), so never a pass
            raise Inconclusive(f"{surface.op}: {len(accepted)} must-reject inputs were accepted and what the operation "
                               "did with them cannot be seen")
        return answers, ""
    try:
        exported = surface.stored()
    except (TargetError, SkipCheck) as exc:
        ctx.note(f"hostile battery on {surface.op}: the export after the battery failed ({exc}); storage not observed")
        return answers, str(exc)
    if control_marker.encode() not in exported:
        ctx.note(f"hostile battery on {surface.op}: the accepted control is not in the export; storage not observed")
        accepted = [item for item, verdict, _ in answers if item.must_reject and verdict == "accepted"]
        if accepted and not any(verdict in ("crashed", "hung") for _, verdict, _ in answers):
            # accepted, and where they went cannot be seen: "nothing stored" is not shown (never a pass)
            raise Inconclusive(f"{surface.op}: {len(accepted)} must-reject inputs were accepted and the accepted control "
                               "is not in the export, so whether they were stored cannot be seen")
        return answers, ""
    out = []
    for item, verdict, detail in answers:
        if item.must_reject and verdict != "not sent" and item.category != "empty" and item.marker.encode() in exported:
            out.append((item, "stored anyway", f"{verdict}, and its marker {item.marker} is in the export"))
        else:
            out.append((item, verdict, detail))
    return out, ""


def require_surfaces(surfaces: list[Surface]) -> list[Surface]:
    if not surfaces:
        raise Inconclusive("the target offers no JSON-accepting operation to send the battery to")
    return surfaces


def send_bytes(ctx: Any, op: str, item: BadInput, **fields: Any) -> Any:
    """An input's bytes as the operation's body (over HTTP under its content type, if it names one)."""
    from ..targets.base import Request

    headers = {"Content-Type": item.content_type} if item.content_type is not None else None
    return ctx.target.call(Request(op, raw=item.data, headers=headers, **fields))


def speaks_http(ctx: Any) -> bool:
    return getattr(ctx.target, "kind", "") == "http"
