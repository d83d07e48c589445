"""Fuzz failures judged by how schemathesis generated the request (invalid data not refused, valid data
refused, a request without the key accepted), saved with what was judged as data, and judged again on
replay without schemathesis.

The run's verdict rests on the generation: "this request breaks `maxLength` at `content`", "this
request is schema-valid", "this probe carries no key". None of it is in the request's bytes, so the
check step of the saved file says it (comparator `omp.fuzz_judged`): the judgement, the statuses that
pass it (schemathesis's, as the run used them), and the request as OMP's table of readings reads it
(readings.Asked). Replay sends the same request and judges the new answer by the same statuses and,
where the run accepted readings, by the same table: an answer a reading accepts is not a reproduction.
What schemathesis excuses from the request alone (a negation that serializes back into valid data)
was already excused when the file was saved, and the request replayed is the same.
"""

from __future__ import annotations

import json
from typing import Any

from memconform.core.results import HarnessError
from memconform.core.sequence import comparator
from memconform.suites.omp import readings, table
from memconform.targets.base import Reply

COMPARATOR = "omp.fuzz_judged"
# schemathesis check -> the judgement saved for it
JUDGED = {"negative_data_rejection": "negative", "positive_data_acceptance": "positive", "ignored_auth": "auth"}
# what schemathesis's ignored_auth takes as enforcement: 401, 403 or a redirect (schemathesis's transport module)
AUTH_REFUSALS = [401, 403, "3xx"]
_SCENARIOS = {"no_auth": "sent without credentials", "invalid_auth": "sent with another key (not the target's)",
              "generated_auth": "sent with another key (not the target's)"}


def asked_data(case: Any) -> dict[str, Any] | None:
    """The request as the table reads it (readings.Asked), as JSON; None when part of it is not JSON."""
    from memconform.suites.omp.fuzzing.accepted import asked

    request = asked(case)
    body = None if type(request.body).__name__ == "NotSet" else request.body  # a GET's: no body
    data = {"method": request.method, "path": request.path, "query": dict(request.query), "body": body,
            "negative": sorted(request.negative), "described": request.described, "size": request.size}
    try:
        json.dumps(data, allow_nan=False)
    except (TypeError, ValueError):
        return None
    return data


def asked_from(data: Any) -> readings.Asked:
    """The saved request as the table reads it; a member of the wrong type is one usage error."""
    if not isinstance(data, dict):
        raise HarnessError("the saved fuzz judgement holds no request (asked)")
    method, path, query, negative, described, size = (data.get(k) for k in
                                                      ("method", "path", "query", "negative", "described", "size"))
    if not (isinstance(method, str) and isinstance(path, str) and isinstance(query, dict) and isinstance(described, str)
            and isinstance(negative, list) and all(isinstance(n, str) for n in negative)
            and isinstance(size, int) and not isinstance(size, bool)):
        raise HarnessError("the saved fuzz judgement's request (asked) is not method, path, query, negative, "
                           "described, size of their types")
    return readings.Asked(method, path, query, data.get("body"), frozenset(negative), described, size)


def violation(case: Any, message: str) -> str:
    """What makes the generated request invalid, in schemathesis's words ("in body - content: String
    larger than maxLength"), else the parts it made invalid."""
    _, found, rest = message.partition("Invalid component:")
    if found and rest.strip():
        return " ".join(rest.split())[:500]
    meta = getattr(case, "meta", None)
    where = sorted(str(getattr(loc, "value", loc)) for loc in getattr(meta, "components", {}) or {}
                   if meta is not None and meta.is_negative_at(loc))
    return f"the schema in its {', '.join(where) or 'data'} (schemathesis negative data)"


def expected_of(kind: str, case: Any, found: Any, accept_readings: bool, keyed_status: int) -> dict[str, Any] | None:
    """The check step's `expected` for one failure of a judged check; None when the request is not JSON."""
    asked = asked_data(case)
    if asked is None:
        return None
    expected: dict[str, Any] = {"judged": kind, "asked": asked, "accept_readings": accept_readings}
    if kind == "negative":
        where = violation(case, str(getattr(found, "message", "") or ""))
        expected["statuses"] = _statuses(getattr(found, "expected_statuses", None))
        expected["why"] = f"the request breaks the schema ({where}), so a 4xx refusal is expected"
    elif kind == "positive":
        expected["statuses"] = _statuses(getattr(found, "allowed_statuses", None))
        expected["why"] = "a schema-valid request, so a refusal is blamed unless a reading of the errata accepts it"
    else:
        scenario = str(getattr(getattr(found, "scenario", ""), "value", getattr(found, "scenario", "")))
        sent = _SCENARIOS.get(scenario, "sent without the target's key")
        expected["statuses"] = list(AUTH_REFUSALS)
        expected["why"] = (f"{sent}; with the key the same request was answered {keyed_status}, so a 401 (or 403) "
                           "refusal is expected")
        expected["accept_readings"] = False  # the run judged auth probes without readings
    return expected


def _statuses(found: Any) -> list[int | str]:
    out: list[int | str] = []
    for status in found or ():
        text = str(status)
        out.append(int(text) if text.isdigit() else text)
    return out


def allows(statuses: Any, status: int) -> bool:
    """Is `status` one of the saved statuses (a number, or a class such as "5xx")?"""
    if not isinstance(statuses, list) or not statuses:
        raise HarnessError("the saved fuzz judgement names no statuses that pass it")
    for allowed in statuses:
        if isinstance(allowed, int) and not isinstance(allowed, bool) and allowed == status:
            return True
        if isinstance(allowed, str) and len(allowed) == 3 and allowed[0].isdigit() and allowed[1:] == "xx" \
                and status // 100 == int(allowed[0]):
            return True
    return False


@comparator(COMPARATOR)
def judged_reply_differs(ctx: Any, reply: Reply | None, expected: Any) -> str | None:
    """The saved request's new answer judged as the run judged it: None when it passes now (a status the
    judgement allows, or, where the run accepted readings, an answer a reading of the table accepts)."""
    if reply is None:
        return "no reply to judge (the request was not sent)"
    if not isinstance(expected, dict) or expected.get("judged") not in ("negative", "positive", "auth"):
        raise HarnessError("the saved fuzz judgement is not one of negative, positive, auth")
    kind, why = expected["judged"], str(expected.get("why", ""))
    asked = asked_from(expected.get("asked"))
    if allows(expected.get("statuses"), reply.status):
        return None
    if expected.get("accept_readings") is True:
        fitting = table.TABLE.observe(ctx, asked, reply, readings.pins(ctx))
        if fitting:
            return None  # a reading of the errata accepts the answer, as the run would have
    body = reply.raw[:300].decode("utf-8", "replace")
    if kind == "negative":
        return f"answered {reply.status} {body!r}: invalid data accepted ({why}); no reading of the errata accepts it"
    if kind == "positive":
        return f"answered {reply.status} {body!r}: schema-valid data refused, by no reading of the errata ({why})"
    accepted = "accepted" if 200 <= reply.status < 300 else "not refused with 401 or 403"
    return f"answered {reply.status} {body!r}: {accepted} ({why})"
