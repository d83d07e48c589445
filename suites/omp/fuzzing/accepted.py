"""Generated requests whose answer fits a reading the errata accept: the fuzzer blames only what a
sentence forbids, and records the reading it saw. The readings are the rows of OMP's one table
(suites/omp/readings.py), which the model and the example checks read too:

- a bad or empty query parameter of `GET /v1/memories` served as a sane page (errata O9, O30; O9 not
  under `omp.bad_params=reject`);
- an empty `conflict=` on import read as absent (errata O30);
- a method the route does not have answered 405 or 501 (errata O32);
- valid data holding an empty text refused with 422 naming it (errata O34), or a search `q` holding no
  word character refused with the §4 envelope (O34: as open as the empty q);
- valid data holding null for a field §2.1 marks optional without `| null` refused with 422 naming it
  (errata O37, not under `omp.null_optional=absent`);
- a `limit` or `offset` written as a float with no fraction (`70.0`) refused with 422 naming it (O35);
- a semantic or hybrid search refused with the §4 envelope where health declares no OMP-Search (O13);
- a search body bad only where errata O9 and O35 leave the answer open served as a sane page (O9).
"""

from __future__ import annotations

import json
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.suites.omp import readings, table
from memconform.suites.omp.rules import sane_page
from memconform.targets.base import Reply

LIST = readings.LIST


def asked(case: Any) -> readings.Asked:
    """A schemathesis case as the table reads it."""
    body = getattr(case, "body", None)
    try:
        size = len(json.dumps(body)) if body is not None else 0
    except (TypeError, ValueError):
        size = 0
    return readings.Asked(str(case.method).upper(), case.operation.path, dict(case.query or {}), body,
                       _negative(case), str(case.operation.method).upper(), size)


def _negative(case: Any) -> frozenset[str]:
    """Where schemathesis made the case invalid on purpose ("query", "body", ...)."""
    meta = getattr(case, "meta", None)
    if meta is None:
        return frozenset()
    return frozenset(str(getattr(loc, "value", loc)) for loc in meta.components if meta.is_negative_at(loc))


def _reply(response: Any) -> Reply:
    try:
        body = json.loads(response.content or b"null")
    except ValueError:
        body = None
    return Reply(status=response.status_code, body=body, raw=response.content or b"")


def accepted_readings(ctx: CheckContext, case: Any, response: Any) -> list[tuple[str, str]]:
    """The (errata point, reading) pairs of the table the answer to this generated request fits."""
    return [(row.point, row.name) for row in table.TABLE.fitting(asked(case), _reply(response), readings.pins(ctx))]


def accepted_reading(ctx: CheckContext, case: Any, response: Any) -> tuple[str, str] | None:
    """The first (errata point, reading) the answer fits, or None."""
    found = accepted_readings(ctx, case, response)
    return found[0] if found else None


def why_no_reading(case: Any, response: Any) -> str:
    """For a list request bad only in its query and answered 2xx: why the answer is not the sane page
    O9/O30 accept (empty when that reading is not in question)."""
    request = asked(case)
    if request.route != LIST or not 200 <= response.status_code < 300 or not readings.only_in_query(request):
        return ""
    if sane_page(_reply(response)):
        return ""  # the reading applies (or is pinned away): nothing to explain
    body = _reply(response).body
    memories = body.get("memories") if isinstance(body, dict) else None
    if not isinstance(memories, list):
        return "not the sane page errata O9/O30 accept: the answer holds no list of memories"
    if len(memories) > 100:
        return f"not the sane page errata O9/O30 accept: {len(memories)} memories served, more than the maximum 100"
    return "not the sane page errata O9/O30 accept: a memory served is not a §2.1 Memory (id, content or type)"


def excused(ctx: CheckContext, exchange: Any) -> bool:
    """Does the exchange's answer fit an accepted reading? Then it is recorded, and nobody blamed."""
    found = accepted_readings(ctx, exchange.case, exchange.response)
    for point, reading in found:
        ctx.observe(point, {reading: True})
    return bool(found)
