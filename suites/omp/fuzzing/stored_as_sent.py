"""A schema failure of a fuzzed answer that is memconform's own input stored as sent (core/established.py).

The fuzz phases list and export the key late in a run, when it holds memories other checks sent with a value
§2.1 forbids (11 metadata keys, content over the limit, `tags: null`), stored by a server that does not refuse
them: that deviation is named by the check that sent it (`deviations.SentItems`). A schema failure at
`memories[i].FIELD` of such a memory, FIELD holding exactly what memconform sent, is explained by it, but only
when the same answer without those memories matches its schema: otherwise the first remaining failure is
reported, unexplained (a fault of the server's own that the stored input would have hidden).
"""

from __future__ import annotations

import json
from typing import Any

from memconform.core import established
from memconform.core.check_context import CheckContext
from memconform.suites.omp import deviations

MAX_SET_ASIDE = 50  # memories of one answer set aside at most; a longer chain is reported as it is


def memory_at(body: Any, path: Any) -> tuple[int, str, dict[str, Any]] | None:
    """(index, field, memory) when a schema error's instance path points into `memories[i].FIELD`."""
    steps = list(path or ())
    if len(steps) < 3 or steps[0] != "memories" or not isinstance(steps[1], int) or not isinstance(steps[2], str):
        return None
    memories = body.get("memories") if isinstance(body, dict) else None
    if not isinstance(memories, list) or not 0 <= steps[1] < len(memories) or not isinstance(memories[steps[1]], dict):
        return None
    return steps[1], steps[2], memories[steps[1]]


def cause_of(ctx: CheckContext, found: Any, body: Any) -> tuple[str, int] | None:
    """(the deviation's key, the memory's index) when `found` is at a field memconform sent, stored as sent
    by a deviation another check established."""
    at = memory_at(body, getattr(found, "instance_path", None))
    if at is None:
        return None
    index, name, mem = at
    key = deviations.stored_as_sent(ctx, f"$.memories[{index}].{name}", mem)
    return (key, index) if key is not None and established.explaining(ctx, key) else None


def explained(ctx: CheckContext, found: Any, content: bytes, revalidate: Any) -> tuple[Any, str, str]:
    """(the schemathesis failure to report for this answer, the deviation that explains it or "", a note for the
    detail). `revalidate(content)` runs the same check on the answer with another body: None when it passes,
    else its first failure."""
    try:
        body = json.loads(content)
    except ValueError:
        return found, "", ""
    first = cause_of(ctx, found, body)
    if first is None:
        return found, "", ""
    cause, aside = first, 0
    while aside < MAX_SET_ASIDE:
        # every memory that is memconform's input stored as sent is set aside; a fault of the server's own
        # (ids, timestamps, envelope) shows on the memories it made too
        body = {**body, "memories": [m for i, m in enumerate(body["memories"]) if i != cause[1]]}
        aside += 1
        current = revalidate(json.dumps(body).encode())
        if current is None:
            return found, first[0], ""
        next_cause = cause_of(ctx, current, body)
        if next_cause is None:  # what is left is the server's own: reported as the answer's failure, unexplained
            named = established.explaining(ctx, first[0])
            return current, "", (f"{aside} memories memconform sent with a value §2.1 forbids, stored as sent (named by "
                                 f"{named.check_id if named else first[0]}), set aside: the path is in the answer without them")
        cause = next_cause
    return found, "", ""
