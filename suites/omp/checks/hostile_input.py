"""The hostile-JSON battery (memconform.hostile) against OMP's JSON-accepting endpoints.

POST /memories and POST /import store what they accept: each input there is a memory (or an
export file of one memory) whose content holds the input's own marker, and after the battery an
export must hold the control's marker and no must-reject input's marker. POST /memories/search
stores nothing: its inputs are judged on crashes and hangs alone. Over HTTP the battery also sends a
valid body under wrong content types (recorded; refusing them is not required).
Reading: §4 names the answer to a body that fails validation (422 validation_error); a body that is
not JSON at all is taken to deserve the same refusal, any 4xx counting as one (SHOULD).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.core.model import Failure, TargetError
from memconform.hostile import BadInput
from memconform.hostile_check import Surface, run_battery
from memconform.suites.omp import client as c
from memconform.suites.omp import format as omp
from memconform.suites.omp.suite import SUITE
from memconform.targets.base import Request, Route

SENTENCE = "Request body failed schema validation"


def _send(ctx: CheckContext, path: str, item: BadInput) -> Any:
    target = c.http(ctx)
    prefix = "" if target.base_url.endswith(omp.BASE) else omp.BASE
    headers = {"Content-Type": item.content_type if item.content_type is not None else "application/json"}
    reply = target.call(Request(f"POST {path}", raw=item.data, headers=headers,
                                route=Route("POST", prefix + path, statuses="returned")))
    mem_id = reply.body.get("id") if reply.ok and isinstance(reply.body, dict) else None
    if isinstance(mem_id, str) and path == "/memories":
        # what a bad input created must not stay to trouble later checks (isolation)
        ctx.cleanup(f"delete hostile memory {mem_id}", lambda: c.delete(ctx, mem_id, record=False, quiet=True))
    return reply


def _stored(ctx: CheckContext) -> bytes:
    reply = c.export(ctx, record=False, quiet=True)
    if not reply.ok:
        raise TargetError(f"GET /export answered {reply.status}: {reply.raw[:200]!r}")
    return bytes(reply.raw)


def _battery(ctx: CheckContext, path: str, make: Any, stores: bool) -> Iterator[Failure]:
    yield from run_battery(ctx, Surface(f"POST {path}", make, lambda item: _send(ctx, path, item),
                                        (lambda: _stored(ctx)) if stores else None, http=True))


@SUITE.check(section="§4", keyword="SHOULD", level="core", sentence=SENTENCE)
def hostile_json_create_refused(ctx: CheckContext) -> Iterator[Failure]:
    yield from _battery(ctx, "/memories", lambda marker: c.memory(ctx, "hostile", content=f"{marker} memconform probe ✓"), True)


@SUITE.check(section="§4", keyword="SHOULD", level="full", sentence=SENTENCE)
def hostile_json_import_refused(ctx: CheckContext) -> Iterator[Failure]:
    def make(marker: str) -> dict[str, Any]:
        return c.export_file([c.full_memory(ctx, "hostile", content=f"{marker} memconform probe ✓")])

    yield from _battery(ctx, "/import", make, True)


@SUITE.check(section="§4", keyword="SHOULD", level="search", sentence=SENTENCE)
def hostile_json_search_refused(ctx: CheckContext) -> Iterator[Failure]:
    yield from _battery(ctx, "/memories/search", lambda marker: {"q": f"{marker} probe", "limit": 5}, False)
