"""Generated requests whose answer fits a reading the errata accept: the fuzzer blames only what a
sentence forbids, and records the reading it saw.

- a bad or empty query parameter of `GET /v1/memories` served as a sane page (errata O9, O30; O9 not
  under `omp.bad_params=reject`);
- an empty `conflict=` on import read as absent (errata O30);
- a method the route does not have answered 405 or 501: RFC 9110 §15.6.2 names 501 as the answer of
  a server that does not recognise the method (errata O32);
- valid data holding an empty text (content, a tag, namespace, q, transcript, a tool) refused with 422:
  the spec gives those a maximum only, and refusing "" is the other plausible reading (errata O34);
- valid data holding null for a field §2.1 marks optional without `| null` (namespace, metadata, a source's
  session_id or user_id, embedding; a search filter) refused with 422: memconform's description reads that
  null as absent, refusing it is the other plausible reading (errata O37, not under `omp.null_optional=absent`);
- valid data holding a `limit` or `offset` written as a float with no fraction (`70.0`: JSON Schema's integer 70)
  refused with 422: refusing a number written as a float is the other plausible reading (errata O35);
- a search body bad only where errata O9 and O35 leave the answer open (any integer `limit`, also written
  `5.0` or `"5"`; an unknown `mode` or `type`; `tags` as one string) served as a sane page (O9, not under
  `omp.bad_params=reject`).
"""

from __future__ import annotations

import json
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.suites.omp import format as omp
from memconform.suites.omp.checks.bad_input import sane_page, served_sanely_to
from memconform.targets.base import Reply

LIST = ("GET", "/v1/memories")
IMPORT = ("POST", "/v1/import")
SEARCH = ("POST", "/v1/memories/search")
SEARCH_FIELDS = frozenset(("q", "type", "tags", "namespace", "limit", "mode"))
PAGING = ("limit", "offset")


def _query(case: Any) -> dict[str, Any]:
    return dict(case.query or {})


def _negative_only_in_query(case: Any) -> bool:
    from schemathesis.generation.meta import ParameterLocation

    meta = getattr(case, "meta", None)
    if meta is None:
        return False
    negative = {loc for loc in meta.components if meta.is_negative_at(loc)}
    return negative == {ParameterLocation.QUERY}


def _reply(response: Any) -> Reply:
    try:
        body = json.loads(response.content or b"null")
    except ValueError:
        body = None
    return Reply(status=response.status_code, body=body, raw=response.content or b"")


def _empty_values(case: Any) -> bool:
    return any(v in ("", [""]) for v in _query(case).values())


def _empty_text_fields(case: Any) -> set[str]:
    """The fields carrying "" where the spec sets only a maximum (a text field, a tag, a query parameter)."""
    body: dict[str, Any] = case.body if isinstance(getattr(case, "body", None), dict) else {}
    source: dict[str, Any] = body["source"] if isinstance(body.get("source"), dict) else {}
    found = {k for k in ("content", "namespace", "q", "transcript", "source_tool") if body.get(k) == ""}
    if source.get("tool") == "":
        found |= {"source.tool", "tool"}
    if isinstance(body.get("tags"), list) and "" in body["tags"]:
        found.add("tags")
    return found | {k for k, v in _query(case).items() if v == ""}


NULLABLE = ("expires_at",)  # the one field §2.1 types `| null`


def _null_fields(case: Any) -> set[str]:
    """The body fields (and source fields) sent as null where the spec's type has no null."""
    body: dict[str, Any] = case.body if isinstance(getattr(case, "body", None), dict) else {}
    source: dict[str, Any] = body["source"] if isinstance(body.get("source"), dict) else {}
    found = {k for k, v in body.items() if v is None and k not in NULLABLE}
    return found | {f"source.{k}" for k, v in source.items() if v is None} | {k for k, v in source.items() if v is None}


def _integral_float_fields(case: Any) -> set[str]:
    """The paging fields written as a float with no fraction (`70.0`), in the body or the query."""
    body: dict[str, Any] = case.body if isinstance(getattr(case, "body", None), dict) else {}
    query = _query(case)
    return {k for k in PAGING for v in (body.get(k), query.get(k)) if _integral_float(v)}


def _integral_float(value: Any) -> bool:
    if isinstance(value, float):
        return value.is_integer()
    if isinstance(value, str) and value.count(".") == 1:
        whole, fraction = value.split(".")
        return whole.lstrip("-").isdigit() and whole.isascii() and set(fraction) <= {"0"}
    return False


def _integer_like(value: Any) -> bool:
    """A search `limit` O9 and O35 leave open: any integer (0, negative, over 100), also as `5.0` or `"5"`."""
    if isinstance(value, bool):
        return False
    if isinstance(value, int):
        return True
    if isinstance(value, str):
        return value.isascii() and value.lstrip("-").isdigit() and len(value) <= 10
    return _integral_float(value)


def _departs_only_where_open(body: Any) -> bool:
    """Does a search body depart from the description, and only where errata O9/O35 leave the answer open
    (any integer `limit`, also `5.0` or `"5"`; an unknown `mode` or `type`; `tags` as one string)? False
    when it departs nowhere, or anywhere else too (a `q` that is not a string, an unknown field, a `limit`
    of 5.5 or "abc"...)."""
    if not isinstance(body, dict) or not isinstance(body.get("q"), str) or not set(body) <= SEARCH_FIELDS:
        return False
    tags, namespace, limit, mode, kind = (body.get(k) for k in ("tags", "namespace", "limit", "mode", "type"))
    if not (tags is None or isinstance(tags, str) or (isinstance(tags, list) and all(isinstance(t, str) for t in tags))):
        return False
    if not ((namespace is None or isinstance(namespace, str)) and (limit is None or _integer_like(limit))
            and ("mode" not in body or isinstance(mode, str)) and (kind is None or isinstance(kind, str))):
        return False
    return (isinstance(tags, str) or (limit is not None and not (type(limit) is int and 1 <= limit <= omp.MAX_LIMIT))
            or ("mode" in body and mode not in omp.SEARCH_MODES) or (kind is not None and kind not in omp.TYPES))


def _fields_named(body: Any) -> set[str]:
    """The fields a 422's details name, in the shapes servers use: `{"field": f}`, `{"fields": [...]}`,
    a validator's `{"fieldErrors": {f: [...]}}`, or a list of issues with a `path`, `loc` or `field`."""
    details = body.get("details") if isinstance(body, dict) else None
    named: set[str] = set()
    if isinstance(details, dict):
        if isinstance(details.get("field"), str) and details["field"]:
            named.add(details["field"])
        if isinstance(details.get("fields"), list):
            named |= {f for f in details["fields"] if isinstance(f, str) and f}
        if isinstance(details.get("fieldErrors"), dict):
            named |= {f for f in details["fieldErrors"] if isinstance(f, str) and f}
        issues = details.get("issues") or details.get("errors")
    else:
        issues = details
    for issue in issues if isinstance(issues, list) else ():
        where = issue.get("path") or issue.get("loc") or issue.get("field") if isinstance(issue, dict) else None
        if isinstance(where, list):
            where = ".".join(str(part) for part in where if not isinstance(part, int) and part != "body")
        if isinstance(where, str) and where:
            named.add(where)
    return named


def _covers(named: str, field: str) -> bool:
    """`named` is the field, an item of it (`tags[0]`), a part of it, or the object holding it (`source` for
    `source.tool`)."""
    return (named == field or named.startswith((field + "[", field + ".")) or field.startswith(named + "."))


def _names_only(body: Any, named: set[str], fields: set[str]) -> bool:
    """A 422 (its body, the fields it names) that names only fields in `fields`: it refuses those, not the
    rest of the request. A 422 that names no field counts when its message names one of them."""
    if named:
        return all(any(_covers(n, f) for f in fields) for n in named)
    message = str(body.get("message", "")) if isinstance(body, dict) else ""
    return any(f in message for f in fields)


def _refusal_readings(ctx: CheckContext, case: Any, response: Any) -> list[tuple[str, str]]:
    """Valid data refused with a 422 naming only its empty texts (O34) and its nulls on optional fields
    (O37, not under `omp.null_optional=absent`): each reading whose fields the 422 names."""
    empty = _empty_text_fields(case)
    null = _null_fields(case) if ctx.option("null_optional") != "absent" else set()
    floats = _integral_float_fields(case)
    if response.status_code != 422 or not empty | null | floats:
        return []
    body = _reply(response).body
    named = _fields_named(body)
    if not _names_only(body, named, empty | null | floats):
        return []

    def names(fields: set[str]) -> bool:
        return not named or any(_covers(n, f) for n in named for f in fields)
    found = [("O34", "empty text refused")] if empty and names(empty) else []
    found += [("O37", "null on an optional field: refused")] if null and names(null) else []
    return found + ([("O35", "an integral float limit or offset refused")] if floats and names(floats) else [])


def accepted_readings(ctx: CheckContext, case: Any, response: Any) -> list[tuple[str, str]]:
    """The (errata point, reading) pairs the answer to this generated request fits; empty when none."""
    route = (str(case.method).upper(), case.operation.path)
    described = str(case.operation.method).upper()
    if route[0] != described:
        if response.status_code in (405, 501):
            return [("O32", f"an unsupported method answered {response.status_code}")]
        return []
    refusals = _refusal_readings(ctx, case, response)
    if refusals:
        return refusals
    if not 200 <= response.status_code < 300:
        return []
    if route == IMPORT and _query(case).get("conflict") == "" and _negative_only_in_query(case):
        return [("O30", "an empty conflict= read as absent")]
    if route == LIST and _negative_only_in_query(case) and sane_page(_reply(response)):
        if _empty_values(case):
            return [("O30", "an empty query parameter served as a sane page")]
        if ctx.option("bad_params") != "reject":
            return [("O9", "a bad query parameter served as a sane page")]
    if route == SEARCH and ctx.option("bad_params") != "reject" and _departs_only_where_open(case.body) \
            and served_sanely_to(_reply(response), case.body):
        return [("O9", "a bad search parameter served as a sane page")]
    return []


def accepted_reading(ctx: CheckContext, case: Any, response: Any) -> tuple[str, str] | None:
    """The first (errata point, reading) the answer fits, or None."""
    found = accepted_readings(ctx, case, response)
    return found[0] if found else None


def why_no_reading(case: Any, response: Any) -> str:
    """For a list request bad only in its query and answered 2xx: why the answer is not the sane page
    O9/O30 accept (empty when that reading is not in question)."""
    route = (str(case.method).upper(), case.operation.path)
    if route != LIST or not 200 <= response.status_code < 300 or not _negative_only_in_query(case):
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
