"""The hostile-JSON battery (memconform.kit.hostile) against OMP's JSON-accepting endpoints.

POST /memories and POST /import store what they accept: each input there is a memory (or an
export file of one memory) whose content holds the input's own marker, and after the battery an
export must hold the control's marker and no must-reject input's marker. POST /memories/search
stores nothing: its inputs are judged on crashes and hangs alone. Over HTTP the battery also sends a
valid body under wrong content types (recorded; refusing them is not required).
Reading: §4 names the answer to a body that fails validation (422 validation_error); a body that is
not JSON at all is taken to deserve the same refusal, any 4xx counting as one (SHOULD). What RFC 8259
allows (duplicate names, an escaped lone surrogate) may be stored: a note, not a warning, unless
`--option omp.hostile_json=i-json` pins I-JSON's refusal (errata O33).
The §5 levels: create, keyword search and import are all OMP-Core. What a stored input does afterwards
is judged by a MUST (`omp.hostile_json_leaves_export_working`: the export and the list still answer);
these checks register last, so a target they break cannot poison the verdict of another check.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.results import Failure, Inconclusive, TargetError
from memconform.kit.hostile import BadInput
from memconform.kit.hostile_check import Surface, run_battery
from memconform.suites.omp import client
from memconform.suites.omp import format as omp
from memconform.suites.omp.suite import SUITE
from memconform.targets.base import Request, Route

SENTENCE = "Request body failed schema validation"


def _send(ctx: CheckContext, path: str, item: BadInput) -> Any:
    target = client.http(ctx)
    prefix = "" if target.base_url.endswith(omp.BASE) else omp.BASE
    headers = {"Content-Type": item.content_type if item.content_type is not None else "application/json"}
    reply = target.call(Request(f"POST {path}", raw=item.data, headers=headers,
                                route=Route("POST", prefix + path, statuses="returned")))
    mem_id = reply.body.get("id") if reply.ok and isinstance(reply.body, dict) else None
    if isinstance(mem_id, str) and path == "/memories":
        # what a bad input created must not stay to trouble later checks (isolation)
        ctx.cleanup(f"delete hostile memory {mem_id}", lambda: client.delete(ctx, mem_id, record=False, quiet=True))
    return reply


def _stored(ctx: CheckContext) -> bytes:
    reply = client.export(ctx, record=False, quiet=True)
    if not reply.ok:
        raise TargetError(f"GET /export answered {reply.status}: {reply.raw[:200]!r}")
    return bytes(reply.raw)


@dataclass
class HostileRun:
    """The batteries this run sent (the aftermath check judges only after one)."""

    surfaces: list[str] = field(default_factory=list)


def _battery(ctx: CheckContext, path: str, make: Any, stores: bool) -> Iterator[Failure]:
    ctx.once(BEFORE, lambda: reading_problems(ctx))  # how export and list answered before any hostile input
    ctx.state(HostileRun).surfaces.append(f"POST {path}")
    yield from run_battery(ctx, Surface(f"POST {path}", make, lambda item: _send(ctx, path, item),
                                        (lambda: _stored(ctx)) if stores else None, http=True),
                           i_json=ctx.option("hostile_json") == "i-json")


BEFORE = "omp.hostile.before"


def reading_problems(ctx: CheckContext) -> list[str]:
    """What keeps the user's memories from being read back whole: the export and the list."""
    problems = []
    for what, read in (("GET /v1/export", lambda: client.export(ctx, record=False, quiet=True)),
                       ("GET /v1/memories", lambda: client.list_(ctx, {"limit": "100"}, record=False, quiet=True))):
        try:
            answer = read()
        except TargetError as exc:  # a connection the server drops is no answer either
            problems.append(f"{what} fails: {exc}")
            continue
        if not (answer.ok and isinstance(answer.body, dict) and isinstance(answer.body.get("memories"), list)):
            problems.append(f"{what} answers {answer.brief()}")
    return problems


@SUITE.check(section="§4", keyword="SHOULD", level="core", sentence=SENTENCE)
def hostile_json_create_refused(ctx: CheckContext) -> Iterator[Failure]:
    yield from _battery(ctx, "/memories", lambda marker: client.memory(ctx, "hostile", content=f"{marker} memconform probe ✓"), True)


@SUITE.check(section="§4", keyword="SHOULD", level="core", sentence=SENTENCE)
def hostile_json_import_refused(ctx: CheckContext) -> Iterator[Failure]:
    def make(marker: str) -> dict[str, Any]:
        return client.export_file([client.full_memory(ctx, "hostile", content=f"{marker} memconform probe ✓")])

    yield from _battery(ctx, "/import", make, True)


@SUITE.check(section="§4", keyword="SHOULD", level="core", sentence=SENTENCE)
def hostile_json_search_refused(ctx: CheckContext) -> Iterator[Failure]:
    yield from _battery(ctx, "/memories/search", lambda marker: {"q": f"{marker} probe", "limit": 5}, False)


@SUITE.check(section="§8", keyword="MUST", level="core",
             sentence="Supports export and import via GET /v1/export and POST /v1/import")
def hostile_json_leaves_export_working(ctx: CheckContext) -> Iterator[Failure]:
    """What the battery stored must not stop the export or the list (they answered before it). The
    hostile checks run last: a failure here explains any cleanup the run's footer says was left."""
    sent = ctx.state(HostileRun).surfaces
    if not sent:
        raise Inconclusive("no hostile-JSON battery ran in this run: nothing could have broken the export")
    before = ctx.once(BEFORE, lambda: reading_problems(ctx))
    if before:
        raise Inconclusive(f"the export or the list did not answer before the hostile battery either: {before[0]}")
    after = reading_problems(ctx)
    for problem in after:
        yield Failure(f"after the hostile-JSON battery {problem}", problem, "200 with a memories array, as before the battery",
                      "$", "an input the target accepted left it unable to give the user's memories back; the hostile "
                      "checks run last, so no other check's verdict rests on it, but the run's cleanup may fail for it")
    if not after and ctx.run_id not in client.export(ctx, record=False, quiet=True).raw.decode("utf-8", "replace"):
        # an answer of the right shape that holds nothing this run wrote is no evidence it is the user's export
        raise Inconclusive("the export answers, but holds none of the memories this run wrote: no evidence it is "
                           "the user's export")
