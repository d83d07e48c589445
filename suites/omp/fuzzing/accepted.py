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
  null as absent, refusing it is the other plausible reading (errata O37, not under `omp.null_optional=absent`).
"""

from __future__ import annotations

import json
from typing import Any

from memconform.core.check_context import CheckContext
from memconform.suites.omp.checks.bad_input import sane_page
from memconform.targets.base import Reply

LIST = ("GET", "/v1/memories")
IMPORT = ("POST", "/v1/import")


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


def _names_a_field(response: Any, fields: set[str]) -> bool:
    """A 422 whose details.field or message names one of the fields: it refuses that field, not the rest."""
    if not fields or response.status_code != 422:
        return False
    body = _reply(response).body
    details = body.get("details") if isinstance(body, dict) else None
    named = str(details.get("field", "")) if isinstance(details, dict) else ""
    message = str(body.get("message", "")) if isinstance(body, dict) else ""
    return any(f == named or named.startswith(f + "[") or f in message for f in fields)


def _refuses_empty_text(case: Any, response: Any) -> bool:
    """A 422 that names one of the request's empty fields: the refusal is of the empty text, not of the
    rest of the valid request."""
    return _names_a_field(response, _empty_text_fields(case))


def accepted_reading(ctx: CheckContext, case: Any, response: Any) -> tuple[str, str] | None:
    """(errata point, reading) when the answer to this generated request fits an accepted reading."""
    route = (str(case.method).upper(), case.operation.path)
    described = str(case.operation.method).upper()
    if route[0] != described:
        if response.status_code in (405, 501):
            return "O32", f"an unsupported method answered {response.status_code}"
        return None
    if _refuses_empty_text(case, response):
        return "O34", "empty text refused"
    if ctx.option("null_optional") != "absent" and _names_a_field(response, _null_fields(case)):
        return "O37", "null on an optional field: refused"
    if not 200 <= response.status_code < 300:
        return None
    if route == IMPORT and _query(case).get("conflict") == "" and _negative_only_in_query(case):
        return "O30", "an empty conflict= read as absent"
    if route == LIST and _negative_only_in_query(case) and sane_page(_reply(response)):
        if _empty_values(case):
            return "O30", "an empty query parameter served as a sane page"
        if ctx.option("bad_params") != "reject":
            return "O9", "a bad query parameter served as a sane page"
    return None


def excused(ctx: CheckContext, exchange: Any) -> bool:
    """Does the exchange's answer fit an accepted reading? Then it is recorded, and nobody blamed."""
    found = accepted_reading(ctx, exchange.case, exchange.response)
    if found is None:
        return False
    ctx.observe(found[0], {found[1]: True})
    return True
